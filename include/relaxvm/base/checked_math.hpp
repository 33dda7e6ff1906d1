// SPDX-License-Identifier: Apache-2.0
// Overflow-checked int64 arithmetic, usable in constant expressions.
#ifndef RELAXVM_BASE_CHECKED_MATH_HPP
#define RELAXVM_BASE_CHECKED_MATH_HPP

#include <cstdint>
#include <span>
#include <type_traits>  // is_constant_evaluated

#include "config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI::detail {

/// Writes a+b to out and returns true, or returns false on overflow.
constexpr bool checked_add(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  return !__builtin_add_overflow(a, b, &out);
}
constexpr bool checked_sub(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  return !__builtin_sub_overflow(a, b, &out);
}
#if !RELAXVM_HEAP
// Firmware mode: one out-of-line copy (a 32-bit target's 64-bit overflow test is about 100 bytes
// wherever it is inlined).
// It tests the magnitudes' 32-bit halves (about half of __builtin_mul_overflow's code there);
// `out` is the wrapped product, as __builtin_mul_overflow writes it, overflow or not.
RELAXVM_NOINLINE inline bool checked_mul_out_of_line(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  out = static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  const bool negative = (a < 0) != (b < 0);
  const std::uint64_t ua = a < 0 ? 0 - static_cast<std::uint64_t>(a) : static_cast<std::uint64_t>(a);
  const std::uint64_t ub = b < 0 ? 0 - static_cast<std::uint64_t>(b) : static_cast<std::uint64_t>(b);
  const auto ah = static_cast<std::uint32_t>(ua >> 32), al = static_cast<std::uint32_t>(ua);
  const auto bh = static_cast<std::uint32_t>(ub >> 32), bl = static_cast<std::uint32_t>(ub);
  if (ah != 0 && bh != 0) return false;
  // One of the cross products is 0, so their sum does not wrap.
  const std::uint64_t cross = static_cast<std::uint64_t>(ah) * bl + static_cast<std::uint64_t>(bh) * al;
  if ((cross >> 32) != 0) return false;
  const std::uint64_t low = static_cast<std::uint64_t>(al) * bl;
  const std::uint64_t magnitude = low + (cross << 32);
  if (magnitude < low) return false;
  return magnitude <= (std::uint64_t{1} << 63) - (negative ? 0 : 1);
}
#endif
constexpr bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
#if !RELAXVM_HEAP
  if (!std::is_constant_evaluated()) return checked_mul_out_of_line(a, b, out);
#endif
  return !__builtin_mul_overflow(a, b, &out);
}
/// Writes the product of `dims` (a shape's element count) to out and returns true, or returns
/// false when a dimension is negative or the product overflows.
constexpr bool checked_numel(std::span<const std::int64_t> dims, std::int64_t& out) noexcept {
  out = 1;
  for (std::int64_t d : dims)
    if (d < 0 || !checked_mul(out, d, out)) return false;
  return true;
}

}  // namespace relaxvm::detail

#endif  // RELAXVM_BASE_CHECKED_MATH_HPP
