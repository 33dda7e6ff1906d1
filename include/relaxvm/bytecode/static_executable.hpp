// SPDX-License-Identifier: Apache-2.0
// Compile-time programs: build() runs a builder lambda inside constant evaluation and returns a
// static_executable, a literal type whose pools are fixed-size arrays. A program that fails to
// build or verify fails to compile, and the diagnostic quotes the verifier's message.
#ifndef RELAXVM_BYTECODE_STATIC_EXECUTABLE_HPP
#define RELAXVM_BYTECODE_STATIC_EXECUTABLE_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/diagnostic.hpp"
#include "builder.hpp"
#include "layout.hpp"

namespace relaxvm::RELAXVM_ABI {

/// An executable in fixed-size arrays, made at compile time by build().
template <layout_sizes S>
struct static_executable {
  static_layout<S> layout;
  std::size_t num_warnings = 0;
  /// layout_digest() of the program build() verified: executable::from_static and link() verify
  /// again a copy whose pools no longer match it. Public, as the pools are; setting it to match
  /// pools you changed turns that verification off.
  std::uint32_t digest = 0;

  static constexpr layout_sizes sizes = S;
  constexpr exec_view view() const { return layout.view(); }
};

namespace detail {

/// What the first (measuring) run of a builder lambda learns: the pool sizes, or the failure.
struct build_summary {
  diagnostic result;
  layout_sizes sizes{};
  std::size_t num_warnings = 0;
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

template <class F>
constexpr build_summary summarize() {
  build_output out = run_builder<F>();
  build_summary s;
  s.sizes = sizes_of(out.layout);
  s.num_warnings = out.report.warnings.size() + static_cast<std::size_t>(out.report.warnings_dropped);
  if (!out.ok()) {
    // The rule's name first, so it is easy to spot in the diagnostic.
    text t = diagnostic_start(out.report.ok() ? std::string_view("builder_error") : to_string(out.report.rule));
    t << out.message;
    s.result.fail(t);
  }
  return s;
}

/// The first run's summary, as a variable of its own: its initializer is then a constant
/// evaluation of its own, with its own constexpr step budget (a constexpr local in build() would
/// be evaluated inside build()'s evaluation and share its budget).
template <class F>
inline constexpr build_summary summary_of = summarize<F>();

/// What link() asks of a static executable: the program build() verified (its digest matches),
/// or else one that verifies (a copy changed in a constant expression since is verified here,
/// at compile time, as from_static verifies one changed at run time).
template <layout_sizes S>
constexpr diagnostic check_built(const static_executable<S>& p) {
  diagnostic d;
  if (p.digest == layout_digest(p.view())) return d;
  const verify_report r = verify(p.view());
  if (!r.ok()) {
    text t = diagnostic_start(to_string(r.rule));
    t << "the program was changed after build() and does not verify: " << r.message;
    d.fail(t);
  }
  return d;
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
  if constexpr (!s.result.ok) {
    detail::relaxvm_program_failed_to_build(detail::spelled<s.result>());
    return static_executable<layout_sizes{}>{};
  } else {
    // The digest of what is stored (the second run, which is the program the first verified),
    // computed here: this evaluation has room for it, the first run's has less.
    static_executable<s.sizes> out{to_static_layout<s.sizes>(detail::rerun_builder<F, s.sizes>()), s.num_warnings};
    out.digest = layout_digest(out.view());
    return out;
  }
}

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_STATIC_EXECUTABLE_HPP
