// SPDX-License-Identifier: Apache-2.0
// Selections whose output's size depends on the data: NonZero (the indices of the non-zero
// elements) and Compress (the slices a boolean condition keeps). Each has a shape function the
// importer calls first when the program runs (its result binds the output's dims,
// onnx::detail::import_state::run_time_dims), then a destination-passing kernel that fills the
// output it was given, checking that the data still gives that size. Plain loops, no heap.
#ifndef RELAXVM_KERNELS_SELECT_HPP
#define RELAXVM_KERNELS_SELECT_HPP

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {

/// Calls f(i) for each non-zero element i of x (any element type; NaN is not zero; a bool is
/// read as its byte, so any byte but 0 is true).
template <class F>
void for_each_nonzero(const tensor& x, F&& f) {
  visit(x.dtype(), [&]<class T>() {
    using E = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
    const E* p = static_cast<const E*>(x.raw_data());
    for (std::int64_t i = 0; i < x.numel(); ++i)
      if (p[i] != E(0)) f(i);
  });
}

inline std::int64_t count_nonzero(const tensor& x) {
  std::int64_t n = 0;
  for_each_nonzero(x, [&](std::int64_t) { ++n; });
  return n;
}

/// NonZero's output dims: [rank, the number of non-zero elements].
inline result<shape> nonzero_shape(const tensor& x) {
  RELAXVM_TRY(check_in("onnx.NonZero.shape", x, 0, any_type));
  const std::int64_t d[2] = {x.ndim(), count_nonzero(x)};
  return shape::try_make(d);
}

/// Compress's condition: 1-d bool, no longer than what it selects from (`limit`).
inline status check_condition(std::string_view fn, const tensor& cond, std::int64_t limit) {
  RELAXVM_TRY(check_in(fn, cond, 1, bools));
  if (cond.ndim() != 1) return value_error(fn, ": the condition must be 1-d, but has shape ", dims_text{cond.shape().dims()});
  if (cond.shape()[0] > limit)
    return value_error(fn, ": the condition has ", cond.shape()[0], " elements, more than the ", limit, " it selects from");
  return {};
}

/// Compress's output dims: x's with the axis (or, with axis -1, x flattened) cut to the count of
/// true conditions.
inline result<shape> compress_shape(const tensor& x, const tensor& cond, std::int64_t axis) {
  constexpr std::string_view fn = "onnx.Compress.shape";
  RELAXVM_TRY(check_in(fn, x, 0, any_type));
  if (axis < -1 || axis >= x.ndim()) return value_error(fn, ": axis ", axis, " is outside [0, ", x.ndim(), ") (or -1: flattened)");
  RELAXVM_TRY(check_condition(fn, cond, axis < 0 ? x.numel() : x.shape()[static_cast<int>(axis)]));
  const std::int64_t kept = count_nonzero(cond);
  if (axis < 0) return shape::try_make(std::span<const std::int64_t>(&kept, 1));
  dims d(x.shape().dims());
  d[static_cast<int>(axis)] = kept;
  return shape::try_make(d.span());
}

}  // namespace detail

/// NonZero(x, out): out (int64, [rank, n]) holds the indices of x's n non-zero elements, one
/// column each, in row-major order.
inline status NonZero_out(const tensor& x, const tensor& out) {
  constexpr std::string_view fn = "onnx.NonZero";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  const std::int64_t n = detail::count_nonzero(x), rank = x.ndim();
  const std::int64_t want[2] = {rank, n};
  RELAXVM_TRY(detail::check_out(fn, out, 1, want, dtype::int64()));
  std::int64_t* o = static_cast<std::int64_t*>(out.raw_data());
  std::int64_t col = 0;
  detail::for_each_nonzero(x, [&](std::int64_t i) {
    for (std::int64_t k = rank - 1, rest = i; k >= 0; --k) {  // i's index, from the last dim
      const std::int64_t d = x.shape()[static_cast<int>(k)];
      o[k * n + col] = rest % d;
      rest /= d;
    }
    ++col;
  });
  return {};
}

/// Compress(x, condition, axis, out): the slices of x along `axis` whose condition is true (axis
/// -1: the elements of x flattened); conditions past the condition's end are false.
inline status Compress_out(const tensor& x, const tensor& cond, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "onnx.Compress";
  RELAXVM_TRY_ASSIGN(shape want, detail::compress_shape(x, cond, axis));
  RELAXVM_TRY(detail::check_out(fn, out, 3, want.dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  const auto* c = static_cast<const std::uint8_t*>(cond.raw_data());  // a bool as its byte
  const std::int64_t bytes = x.dtype().bytes();
  std::int64_t outer = 1, len = x.numel(), inner = 1;
  if (axis >= 0) {
    len = x.shape()[static_cast<int>(axis)];
    for (std::int64_t k = 0; k < axis; ++k) outer *= x.shape()[static_cast<int>(k)];
    for (std::int64_t k = axis + 1; k < x.ndim(); ++k) inner *= x.shape()[static_cast<int>(k)];
  }
  const auto* in = static_cast<const char*>(x.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  const std::int64_t slice = inner * bytes;
  if (slice == 0 || out.numel() == 0) return {};  // nothing to copy (and memcpy takes no null pointer)
  for (std::int64_t i = 0; i < outer; ++i)
    for (std::int64_t j = 0; j < len && j < cond.numel(); ++j)
      if (c[j] != 0) {
        std::memcpy(o, in + (i * len + j) * slice, static_cast<std::size_t>(slice));
        o += slice;
      }
  return {};
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_SELECT_HPP
