// SPDX-License-Identifier: Apache-2.0
// Compile-time diagnostics: how a failure found during constant evaluation (a program that does
// not verify, build() in bytecode/static_executable.hpp; a program that does not link, link() in
// vm/link.hpp; a typed call that does not match the program, static_vm::invoke<"name">; a buffer
// smaller than the program needs, static_vm::create and static_vm::arena) becomes the compiler's
// error message. One funnel for all:
//
// - a `diagnostic` holds the message (a literal type, so it can be a template argument);
// - the step that failed calls its stop function (`relaxvm_program_failed_to_build`, `..._to_link`,
//   `relaxvm_typed_invoke_failed` or `relaxvm_buffer_too_small`) with spelled<D>(), inside the
//   constant expression it evaluates; the stop function reaches a non-constexpr one, and the
//   compiler prints the call with the message in one piece (g++ once, in the call's argument;
//   clang in the string literal passed).
#ifndef RELAXVM_BASE_DIAGNOSTIC_HPP
#define RELAXVM_BASE_DIAGNOSTIC_HPP

#include <cstddef>
#include <source_location>
#include <string_view>

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

/// A failure message's start: "relaxvm: <what>", then the message.
constexpr text diagnostic_start(std::string_view what) {
  text t;
  t << "relaxvm: " << what << ": ";
  return t;
}

/// A message as a template argument of its exact length. Clang 16 prints a char array in a
/// diagnostic whole only when it is short (36 characters), or inside a string literal; the
/// function_name() of a function templated on the message is such a literal, spelled in full.
template <std::size_t N>
struct message_text {
  char text[N]{};
};

/// d's message (N - 1 characters) as a message_text. Quotes and backslashes would come out
/// escaped once or twice in a literal, and clang spells a string with a byte past ASCII as
/// numbers: each becomes ` or / or ?, so the message reads the same in every compiler's output.
template <std::size_t N>
constexpr message_text<N> message_of(const diagnostic& d) {
  message_text<N> m{};
  for (std::size_t i = 0; i + 1 < N; ++i) {
    const char c = d.message[i];
    m.text[i] = c == '\'' || c == '"' ? '`' : c == '\\' ? '/' : c < ' ' || c > '~' ? '?' : c;
  }
  return m;
}

template <auto Message>
constexpr const char* spelled_text() {
  return std::source_location::current().function_name();
}

/// D's message, spelled where the compiler prints it: as this call's template argument (g++
/// prints the call, with its arguments' values, once) and inside the string literal returned
/// (clang prints the literal whole where the pointer is passed on).
template <diagnostic D>
constexpr const char* spelled() {
  return spelled_text<message_of<D.size + 1>(D)>();
}

/// Deliberately not constexpr: reaching it stops the constant evaluation.
inline void relaxvm_compile_time_error() {}

/// The compile-time failures, one per step (the name says which), each called with spelled<D>()
/// where a constant expression is evaluated, so that the compilation fails while it is and the
/// compiler shows the call with the message: relaxvm_program_failed_to_build(spelled<d>()).
/// `stop` is always true (a function that can never be constant would be an error of its own).
constexpr int relaxvm_program_failed_to_build(const char*, bool stop = true) {
  if (stop) relaxvm_compile_time_error();
  return 0;
}
constexpr int relaxvm_program_failed_to_link(const char*, bool stop = true) {
  if (stop) relaxvm_compile_time_error();
  return 0;
}
constexpr int relaxvm_typed_invoke_failed(const char*, bool stop = true) {
  if (stop) relaxvm_compile_time_error();
  return 0;
}
constexpr int relaxvm_buffer_too_small(const char*, bool stop = true) {
  if (stop) relaxvm_compile_time_error();
  return 0;
}

}  // namespace relaxvm::detail

#endif  // RELAXVM_BASE_DIAGNOSTIC_HPP
