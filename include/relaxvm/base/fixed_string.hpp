// SPDX-License-Identifier: Apache-2.0
// fixed_string: a string usable as a template argument (fn<"vm.add">, compile-time messages).
#ifndef RELAXVM_BASE_FIXED_STRING_HPP
#define RELAXVM_BASE_FIXED_STRING_HPP

#include <cstddef>
#include <string_view>

#include "config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI {

template <std::size_t N>
struct fixed_string {
  char chars[N + 1]{};

  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&s)[N + 1]) {  // NOLINT: implicit from a literal, like ctre
    for (std::size_t i = 0; i <= N; ++i) chars[i] = s[i];
  }
  constexpr std::string_view view() const { return std::string_view(chars, N); }
  static constexpr std::size_t size() { return N; }
  constexpr operator std::string_view() const { return view(); }  // NOLINT
};

template <std::size_t M>
fixed_string(const char (&)[M]) -> fixed_string<M - 1>;

}  // namespace relaxvm

#endif  // RELAXVM_BASE_FIXED_STRING_HPP
