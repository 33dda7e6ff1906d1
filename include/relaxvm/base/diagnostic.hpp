// SPDX-License-Identifier: Apache-2.0
// Compile-time diagnostics: how a failure found during constant evaluation (a program that does
// not verify, build() in bytecode/static_executable.hpp; a program that does not link, link() in
// vm/link.hpp; a typed call that does not match the program, static_vm::invoke<"name">; a buffer
// smaller than the program needs, static_vm::create and static_vm::arena) becomes the compiler's
// error message. One funnel for all:
//
// - a `diagnostic` holds the message (a literal type, so it can be a template argument);
// - report<D, Phase>() makes the compilation fail with the message in the diagnostic. Where the
//   compiler accepts computed static_assert messages (C++26, __cpp_static_assert >= 202306L), it
//   is the static_assert's message. Elsewhere (g++ 12, clang 16) the message is cut into 30-
//   character chunks that become the template arguments of a function the evaluation cannot call
//   (`relaxvm_program_failed_to_build`, `..._to_link`,
//   `relaxvm_typed_invoke_failed` or `relaxvm_buffer_too_small`), and the compiler prints them.
#ifndef RELAXVM_BASE_DIAGNOSTIC_HPP
#define RELAXVM_BASE_DIAGNOSTIC_HPP

#include <cstddef>
#include <string_view>
#include <utility>

#include "config.hpp"  // RELAXVM_ABI
#include "text_builder.hpp"

namespace relaxvm::RELAXVM_ABI::detail {

inline constexpr std::size_t max_diagnostic = 960;

/// A compile-time check's outcome: ok, or the failure's message (cut at max_diagnostic characters).
struct diagnostic {
  bool ok = true;
  std::size_t size = 0;
  char message[max_diagnostic]{};

  /// Marks this failed with message `t`.
  constexpr void fail(const text& t) {
    const std::string_view m = t.view();
    ok = false;
    size = m.size() < max_diagnostic ? m.size() : max_diagnostic;
    for (std::size_t i = 0; i < size; ++i) message[i] = m[i];
  }
  constexpr std::string_view view() const { return std::string_view(message, size); }
};

/// A failure message's start: "relaxvm: <what>", padded to its own 30-character chunk so that it
/// is easy to spot in the compiler's output.
constexpr text diagnostic_start(std::string_view what) {
  text t;
  t << "relaxvm: " << what << ' ';
  t.pad_to(30);
  return t;
}

/// 30 characters of a message. Clang prints a char-array template argument as a string only
/// when it is short and free of single quotes; GCC prints any length.
struct message_chunk {
  char text[31]{};
};

inline constexpr std::size_t chunk_chars = 30;

template <diagnostic D>
constexpr message_chunk chunk_of(std::size_t k) {
  message_chunk c{};
  for (std::size_t i = 0; i < chunk_chars; ++i) {
    const std::size_t at = k * chunk_chars + i;
    char ch = at < D.size ? D.message[at] : ' ';
    c.text[i] = ch == '\'' ? '`' : ch;
  }
  return c;
}

/// Deliberately not constexpr: reaching one during constant evaluation makes the compiler print
/// its template arguments, which are the message. The name says which step failed.
template <message_chunk... Message>
void relaxvm_program_failed_to_build() {}
template <message_chunk... Message>
void relaxvm_program_failed_to_link() {}
template <message_chunk... Message>
void relaxvm_typed_invoke_failed() {}
template <message_chunk... Message>
void relaxvm_buffer_too_small() {}

enum class diagnostic_phase { build, link, invoke, buffer };

template <diagnostic D, diagnostic_phase P, std::size_t... K>
constexpr void report_chunks(std::index_sequence<K...>) {
  if constexpr (P == diagnostic_phase::build) relaxvm_program_failed_to_build<chunk_of<D>(K)...>();
  else if constexpr (P == diagnostic_phase::link) relaxvm_program_failed_to_link<chunk_of<D>(K)...>();
  else if constexpr (P == diagnostic_phase::invoke) relaxvm_typed_invoke_failed<chunk_of<D>(K)...>();
  else relaxvm_buffer_too_small<chunk_of<D>(K)...>();
}

/// Fails the compilation with D's message (D must have failed). Called where a constant
/// expression is evaluated, so that the failure is reported while it is.
template <diagnostic D, diagnostic_phase P>
constexpr void report() {
#if defined(__cpp_static_assert) && __cpp_static_assert >= 202306L
  static_assert(D.ok, D.view());
#else
  report_chunks<D, P>(std::make_index_sequence<(D.size + chunk_chars - 1) / chunk_chars>());
#endif
}

}  // namespace relaxvm::detail

#endif  // RELAXVM_BASE_DIAGNOSTIC_HPP
