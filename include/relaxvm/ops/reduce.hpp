// SPDX-License-Identifier: Apache-2.0
// Reductions along one axis: softmax (numerically stable), sum and mean. The destination-passing
// forms of sum and mean keep the reduced axis (size 1) when the output has as many dimensions as
// the input, and drop it otherwise.
#ifndef RELAXVM_OPS_REDUCE_HPP
#define RELAXVM_OPS_REDUCE_HPP

#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "common.hpp"

namespace relaxvm::RELAXVM_ABI::ops {

namespace detail {

/// A tensor seen as [outer, axis, inner] around `axis`.
struct axis_split {
  std::int64_t outer = 1, len = 1, inner = 1;
};
inline axis_split split(const shape& s, std::int64_t axis) {
  axis_split p;
  for (std::int64_t i = 0; i < s.size(); ++i) {
    if (i < axis) p.outer *= s[i];
    else if (i == axis) p.len = s[i];
    else p.inner *= s[i];
  }
  return p;
}

inline shape reduced_shape(const shape& s, std::int64_t axis, bool keepdims) {
  dims_buffer dims(static_cast<std::size_t>(s.size() - (keepdims ? 0 : 1)));
  std::size_t k = 0;
  for (std::int64_t i = 0; i < s.size(); ++i) {
    if (i != axis) dims[k++] = s[i];
    else if (keepdims) dims[k++] = 1;
  }
  return shape(dims.span());
}

template <class T>
void run_softmax(const T* x, T* out, axis_split p) {
  for (std::int64_t o = 0; o < p.outer; ++o)
    for (std::int64_t i = 0; i < p.inner; ++i) {
      const std::int64_t base = o * p.len * p.inner + i;
      T mx = x[base];
      for (std::int64_t a = 1; a < p.len; ++a) mx = std::max(mx, x[base + a * p.inner]);
      T sum = 0;
      for (std::int64_t a = 0; a < p.len; ++a) {
        const T e = std::exp(x[base + a * p.inner] - mx);
        out[base + a * p.inner] = e;
        sum += e;
      }
      for (std::int64_t a = 0; a < p.len; ++a) out[base + a * p.inner] /= sum;
    }
}

template <class T>
void run_sum(const T* x, T* out, axis_split p, bool mean) {
  for (std::int64_t o = 0; o < p.outer; ++o)
    for (std::int64_t i = 0; i < p.inner; ++i) {
      T acc = 0;
      for (std::int64_t a = 0; a < p.len; ++a) acc += x[(o * p.len + a) * p.inner + i];
      out[o * p.inner + i] = mean ? (p.len > 0 ? acc / static_cast<T>(p.len) : std::nan("")) : acc;
    }
}

inline status reduce_out(std::string_view fn, const tensor& x, std::int64_t axis, const tensor& out, bool mean) {
  RELAXVM_TRY(check_input(fn, x, 0));
  RELAXVM_TRY_ASSIGN(std::int64_t ax, normalize_axis(fn, axis, x.ndim()));
  const bool keepdims = out.defined() && out.ndim() == x.ndim();
  RELAXVM_TRY(check_output(fn, out, reduced_shape(x.shape(), ax, keepdims), x.dtype(), 2));
  RELAXVM_TRY(check_alias(fn, x, 0, out, false));
  // An empty output needs nothing; otherwise outer x inner is its size, which fits.
  if (out.numel() == 0) return {};
  by_dtype(x.dtype(), [&]<class T>() {
    run_sum(static_cast<const T*>(x.raw_data()), static_cast<T*>(out.raw_data()), split(x.shape(), ax), mean);
  });
  return {};
}

inline result<tensor> reduce(std::string_view fn, std::string_view out_fn, const tensor& x, std::int64_t axis,
                             bool keepdims, bool mean) {
  RELAXVM_TRY(check_input(fn, x, 0));
  RELAXVM_TRY_ASSIGN(std::int64_t ax, normalize_axis(fn, axis, x.ndim()));
  RELAXVM_TRY_ASSIGN(tensor out, make_output(reduced_shape(x.shape(), ax, keepdims), x.dtype()));
  RELAXVM_TRY(reduce_out(out_fn, x, axis, out, mean));
  return out;
}

}  // namespace detail

/// softmax along `axis` (negative counts from the end).
inline status softmax_out(const tensor& x, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "ops.softmax_out";
  RELAXVM_TRY(detail::check_input(fn, x, 0));
  RELAXVM_TRY_ASSIGN(std::int64_t ax, detail::normalize_axis(fn, axis, x.ndim()));
  RELAXVM_TRY(detail::check_output(fn, out, x.shape(), x.dtype(), 2));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, true));
  if (x.numel() == 0) return {};  // nothing to compute (and an empty axis has no maximum)
  detail::by_dtype(x.dtype(), [&]<class T>() {
    detail::run_softmax(static_cast<const T*>(x.raw_data()), static_cast<T*>(out.raw_data()), detail::split(x.shape(), ax));
  });
  return {};
}
inline result<tensor> softmax(const tensor& x, std::int64_t axis = -1) {
  RELAXVM_TRY(detail::check_input("ops.softmax", x, 0));
  RELAXVM_TRY(detail::normalize_axis("ops.softmax", axis, x.ndim()));
  RELAXVM_TRY_ASSIGN(tensor out, detail::make_output(x.shape(), x.dtype()));
  RELAXVM_TRY(softmax_out(x, axis, out));
  return out;
}

inline status sum_out(const tensor& x, std::int64_t axis, const tensor& out) {
  return detail::reduce_out("ops.sum_out", x, axis, out, false);
}
inline status mean_out(const tensor& x, std::int64_t axis, const tensor& out) {
  return detail::reduce_out("ops.mean_out", x, axis, out, true);
}
inline result<tensor> sum(const tensor& x, std::int64_t axis, bool keepdims = false) {
  return detail::reduce("ops.sum", "ops.sum", x, axis, keepdims, false);
}
inline result<tensor> mean(const tensor& x, std::int64_t axis, bool keepdims = false) {
  return detail::reduce("ops.mean", "ops.mean", x, axis, keepdims, true);
}

}  // namespace relaxvm::ops

#endif  // RELAXVM_OPS_REDUCE_HPP
