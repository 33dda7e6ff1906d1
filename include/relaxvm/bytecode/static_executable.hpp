// SPDX-License-Identifier: Apache-2.0
// Compile-time programs: build() runs a builder lambda inside constant evaluation and returns a
// static_executable, a literal type whose pools are fixed-size arrays. A program that fails to
// build or verify fails to compile, and the diagnostic quotes the verifier's message.
#ifndef RELAXVM_BYTECODE_STATIC_EXECUTABLE_HPP
#define RELAXVM_BYTECODE_STATIC_EXECUTABLE_HPP

#include <cstddef>
#include <string_view>
#include <utility>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "builder.hpp"
#include "layout.hpp"

namespace relaxvm::RELAXVM_ABI {

/// An executable in fixed-size arrays, made at compile time by build().
template <layout_sizes S>
struct static_executable {
  static_layout<S> layout;
  std::size_t num_warnings = 0;

  static constexpr layout_sizes sizes = S;
  constexpr exec_view view() const { return layout.view(); }
};

namespace detail {

inline constexpr std::size_t max_build_message = 960;

/// What the first (measuring) run of a builder lambda learns: the pool sizes, or the failure.
struct build_summary {
  bool ok = false;
  layout_sizes sizes{};
  std::size_t num_warnings = 0;
  std::size_t message_size = 0;
  char message[max_build_message]{};
};

template <class F>
constexpr build_output run_builder() {
  exec_builder b;
  F{}(b);
  return b.finish();
}

/// Deliberately not constexpr: reached only when a builder lambda built something else the second
/// time (it cannot, being captureless and run the same way twice; this makes sure).
inline void relaxvm_program_differs_between_runs() {}

/// The second run: the program the first run verified (as summarized in S), formalized.
template <class F, layout_sizes S>
constexpr exec_layout rerun_builder() {
  exec_builder b;
  F{}(b);
  exec_layout l = b.formalized();
  if (!b.ok() || sizes_of(l) != S) relaxvm_program_differs_between_runs();
  return l;
}

/// Marks `s` failed with message `t` (cut at max_build_message characters).
constexpr void set_message(build_summary& s, const text& t) {
  const std::string_view m = t.view();
  s.ok = false;
  s.message_size = m.size() < max_build_message ? m.size() : max_build_message;
  for (std::size_t i = 0; i < s.message_size; ++i) s.message[i] = m[i];
}

template <class F>
constexpr build_summary summarize() {
  build_output out = run_builder<F>();
  build_summary s;
  s.ok = out.ok();
  s.sizes = sizes_of(out.layout);
  s.num_warnings = out.report.warnings.size() + static_cast<std::size_t>(out.report.warnings_dropped);
  if (!s.ok) {
    // The rule's name first, on a chunk of its own, so it is easy to spot in the diagnostic.
    text t;
    t << "relaxvm: " << (out.report.ok() ? std::string_view("builder_error") : to_string(out.report.rule)) << ' ';
    t.pad_to(30);
    t << out.message;
    set_message(s, t);
  }
  return s;
}

/// 30 characters of a message. Clang prints a char-array template argument as a string only
/// when it is short and free of single quotes; GCC prints any length.
struct message_chunk {
  char text[31]{};
};

inline constexpr std::size_t chunk_chars = 30;

template <build_summary S>
constexpr message_chunk chunk_of(std::size_t k) {
  message_chunk c{};
  for (std::size_t i = 0; i < chunk_chars; ++i) {
    const std::size_t at = k * chunk_chars + i;
    char ch = at < S.message_size ? S.message[at] : ' ';
    c.text[i] = ch == '\'' ? '`' : ch;
  }
  return c;
}

/// The first run's summary, as a variable of its own: its initializer is then a constant
/// evaluation of its own, with its own constexpr step budget (a constexpr local in build() would
/// be evaluated inside build()'s evaluation and share its budget).
template <class F>
inline constexpr build_summary summary_of = summarize<F>();

/// Deliberately not constexpr: reaching it during constant evaluation makes the compiler print
/// its template arguments, which are the message.
template <message_chunk... Message>
void relaxvm_program_failed_to_build() {}

template <build_summary S, std::size_t... K>
constexpr void report_build_failure(std::index_sequence<K...>) {
  relaxvm_program_failed_to_build<chunk_of<S>(K)...>();
}

}  // namespace detail

/// Runs `F` (a captureless lambda taking exec_builder&) at compile time and returns the verified
/// program as a static_executable:
///   constexpr auto prog = relaxvm::build([](relaxvm::exec_builder& b) { ... });
///
/// The lambda runs twice, in two constant evaluations (each within the compiler's constexpr
/// budget on its own): once to build, verify and measure the program, once more to fill arrays
/// of the measured sizes. bench/README.md ("Compile time") has the cost and the limits.
template <class F>
consteval auto build(F) {
  constexpr const detail::build_summary& s = detail::summary_of<F>;
  if constexpr (!s.ok) {
    detail::report_build_failure<s>(
        std::make_index_sequence<(s.message_size + detail::chunk_chars - 1) / detail::chunk_chars>());
    return static_executable<layout_sizes{}>{};
  } else {
    return static_executable<s.sizes>{to_static_layout<s.sizes>(detail::rerun_builder<F, s.sizes>()), s.num_warnings};
  }
}

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_STATIC_EXECUTABLE_HPP
