// SPDX-License-Identifier: Apache-2.0
// Normalizations with ONNX's semantics, at inference: BatchNormalization (running statistics),
// InstanceNormalization, LayerNormalization (with its Mean and InvStdDev outputs), LRN and
// MeanVarianceNormalization. Statistics are accumulated in double; plain loops, no heap.
#ifndef RELAXVM_KERNELS_NORMALIZATION_HPP
#define RELAXVM_KERNELS_NORMALIZATION_HPP

#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"
#include "reduce.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {
/// A per-channel parameter: a 1-d tensor of x's type with `c` elements.
inline status check_channel(std::string_view fn, const tensor& x, const tensor& p, std::size_t i, std::int64_t c) {
  RELAXVM_TRY(check_in(fn, p, i, floats));
  RELAXVM_TRY(same_type(fn, x, 0, p, i));
  if (p.ndim() != 1 || p.shape()[0] != c)
    return value_error(fn, ": argument ", i, " has shape ", dims_text{p.shape().dims()}, " but must be [", c, "] (one per channel)");
  return {};
}
/// x of rank >= 2, seen as (N, C, spatial).
inline status check_nc(std::string_view fn, const tensor& x, std::int64_t& n, std::int64_t& c, std::int64_t& spatial) {
  RELAXVM_TRY(check_in(fn, x, 0, floats));
  if (x.ndim() < 2) return value_error(fn, ": the input must have at least 2 dims (N, C, ...), but has shape ", dims_text{x.shape().dims()});
  n = x.shape()[0];
  c = x.shape()[1];
  spatial = 1;
  for (std::int64_t k = 2; k < x.ndim(); ++k) spatial *= x.shape()[k];
  return {};
}
}  // namespace detail

/// BatchNormalization(x, scale, b, mean, var, epsilon, out) at inference: per channel (axis 1),
/// (x - mean) / sqrt(var + epsilon) * scale + b.
inline status BatchNormalization_out(const tensor& x, const tensor& scale, const tensor& b, const tensor& mean, const tensor& var,
                                     double epsilon, const tensor& out) {
  constexpr std::string_view fn = "onnx.BatchNormalization";
  std::int64_t n = 0, c = 0, spatial = 0;
  RELAXVM_TRY(detail::check_nc(fn, x, n, c, spatial));
  RELAXVM_TRY(detail::check_channel(fn, x, scale, 1, c));
  RELAXVM_TRY(detail::check_channel(fn, x, b, 2, c));
  RELAXVM_TRY(detail::check_channel(fn, x, mean, 3, c));
  RELAXVM_TRY(detail::check_channel(fn, x, var, 4, c));
  RELAXVM_TRY(detail::check_out(fn, out, 6, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, true));
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      const T *ps = static_cast<const T*>(scale.raw_data()), *pb = static_cast<const T*>(b.raw_data());
      const T *pm = static_cast<const T*>(mean.raw_data()), *pv = static_cast<const T*>(var.raw_data());
      for (std::int64_t ch = 0; ch < c; ++ch) {
        const double s = static_cast<double>(ps[ch]) / std::sqrt(static_cast<double>(pv[ch]) + epsilon);
        const T mul = static_cast<T>(s), add = static_cast<T>(static_cast<double>(pb[ch]) - static_cast<double>(pm[ch]) * s);
        for (std::int64_t i = 0; i < n; ++i) {
          const std::int64_t base = (i * c + ch) * spatial;
          for (std::int64_t j = 0; j < spatial; ++j) o[base + j] = in[base + j] * mul + add;
        }
      }
    }
  });
  return {};
}

/// InstanceNormalization(x, scale, b, epsilon, out): each (n, c) normalized over its spatial dims.
inline status InstanceNormalization_out(const tensor& x, const tensor& scale, const tensor& b, double epsilon, const tensor& out) {
  constexpr std::string_view fn = "onnx.InstanceNormalization";
  std::int64_t n = 0, c = 0, spatial = 0;
  RELAXVM_TRY(detail::check_nc(fn, x, n, c, spatial));
  RELAXVM_TRY(detail::check_channel(fn, x, scale, 1, c));
  RELAXVM_TRY(detail::check_channel(fn, x, b, 2, c));
  RELAXVM_TRY(detail::check_out(fn, out, 4, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, true));
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      const T *ps = static_cast<const T*>(scale.raw_data()), *pb = static_cast<const T*>(b.raw_data());
      for (std::int64_t i = 0; i < n * c; ++i) {
        const T* xi = in + i * spatial;
        double sum = 0, sq = 0;
        for (std::int64_t j = 0; j < spatial; ++j) sum += static_cast<double>(xi[j]);
        const double mu = spatial > 0 ? sum / static_cast<double>(spatial) : 0.0;
        for (std::int64_t j = 0; j < spatial; ++j) sq += (static_cast<double>(xi[j]) - mu) * (static_cast<double>(xi[j]) - mu);
        const double var = spatial > 0 ? sq / static_cast<double>(spatial) : 0.0;
        const double s = static_cast<double>(ps[i % c]) / std::sqrt(var + epsilon);
        const T mul = static_cast<T>(s), add = static_cast<T>(static_cast<double>(pb[i % c]) - mu * s);
        for (std::int64_t j = 0; j < spatial; ++j) o[i * spatial + j] = xi[j] * mul + add;
      }
    }
  });
  return {};
}

namespace detail {
// A parameter of LayerNormalization: broadcast to the normalized dims (x's dims from the axis).
struct lane_param {
  dims shape, strides;
  bool plain = false;  // exactly the normalized dims: index j is offset j
};
inline status layer_param(std::string_view fn, const tensor& x, std::int64_t axis, const tensor& p, std::size_t i, lane_param& out) {
  RELAXVM_TRY(check_in(fn, p, i, floats));
  RELAXVM_TRY(same_type(fn, x, 0, p, i));
  const dims norm(x.shape().dims().subspan(static_cast<std::size_t>(axis)));
  dims b;
  bool ok = broadcast_dims(p.shape().dims(), norm.span(), b) && b.rank == norm.rank;
  for (int k = 0; ok && k < b.rank; ++k) ok = b[k] == norm[k];
  if (!ok)
    return value_error(fn, ": argument ", i, " has shape ", dims_text{p.shape().dims()}, ", which does not broadcast to the normalized dims ",
                       dims_text{norm.span()});
  out.shape = norm;
  out.strides = broadcast_strides(p.shape().dims(), norm);
  out.plain = p.numel() == norm.count();
  return {};
}
}  // namespace detail

/// LayerNormalization(x, scale, bias | undefined, axis, epsilon, y, mean, inv_std_dev): x
/// normalized over its dims from `axis` on; mean and inv_std_dev (float32 or float64) have x's
/// dims with 1 from the axis on.
inline status LayerNormalization_out(const tensor& x, const tensor& scale, const tensor& bias, std::int64_t axis, double epsilon,
                                     const tensor& y, const tensor& mean, const tensor& inv_std_dev) {
  constexpr std::string_view fn = "onnx.LayerNormalization";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::floats));
  const std::int64_t r = x.ndim();
  if (axis < -r || axis >= r) return detail::value_error(fn, ": axis ", axis, " is outside [", -r, ", ", r - 1, "]");
  if (axis < 0) axis += r;
  detail::lane_param sp, bp;
  RELAXVM_TRY(detail::layer_param(fn, x, axis, scale, 1, sp));
  if (bias.defined()) RELAXVM_TRY(detail::layer_param(fn, x, axis, bias, 2, bp));
  detail::dims sd(x.shape().dims());
  for (std::int64_t k = axis; k < r; ++k) sd[static_cast<int>(k)] = 1;
  RELAXVM_TRY(detail::check_out(fn, y, 5, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_in(fn, mean, 6, detail::floats));
  RELAXVM_TRY(detail::check_out(fn, mean, 6, sd.span(), mean.dtype()));
  RELAXVM_TRY(detail::check_out(fn, inv_std_dev, 7, sd.span(), mean.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, y, true));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, mean, false));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, inv_std_dev, false));
  RELAXVM_TRY(detail::check_alias(fn, y, 5, mean, false));
  RELAXVM_TRY(detail::check_alias(fn, y, 5, inv_std_dev, false));
  RELAXVM_TRY(detail::check_alias(fn, mean, 6, inv_std_dev, false));
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < axis; ++k) outer *= x.shape()[k];
  for (std::int64_t k = axis; k < r; ++k) inner *= x.shape()[k];
  // The offset of normalized element j in a broadcast parameter.
  auto offset = [](const detail::lane_param& p, std::int64_t j) {
    if (p.plain) return j;
    std::int64_t off = 0;
    for (int k = p.shape.rank - 1; k >= 0; --k) {
      off += (j % p.shape[k]) * p.strides[k];
      j /= p.shape[k];
    }
    return off;
  };
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(y.raw_data());
      const T* ps = static_cast<const T*>(scale.raw_data());
      const T* pb = bias.defined() ? static_cast<const T*>(bias.raw_data()) : nullptr;
      for (std::int64_t i = 0; i < outer; ++i) {
        const T* xi = in + i * inner;
        double sum = 0, sq = 0;
        for (std::int64_t j = 0; j < inner; ++j) sum += static_cast<double>(xi[j]);
        const double mu = inner > 0 ? sum / static_cast<double>(inner) : 0.0;
        for (std::int64_t j = 0; j < inner; ++j) sq += (static_cast<double>(xi[j]) - mu) * (static_cast<double>(xi[j]) - mu);
        const double inv = 1.0 / std::sqrt((inner > 0 ? sq / static_cast<double>(inner) : 0.0) + epsilon);
        for (std::int64_t j = 0; j < inner; ++j) {
          const double v = (static_cast<double>(xi[j]) - mu) * inv * static_cast<double>(ps[offset(sp, j)]);
          o[i * inner + j] = static_cast<T>(pb ? v + static_cast<double>(pb[offset(bp, j)]) : v);
        }
        detail::visit(mean.dtype(), [&]<class U>() {
          if constexpr (std::is_floating_point_v<U>) {
            static_cast<U*>(mean.raw_data())[i] = static_cast<U>(mu);
            static_cast<U*>(inv_std_dev.raw_data())[i] = static_cast<U>(inv);
          }
        });
      }
    }
  });
  return {};
}

/// LRN(x, alpha, beta, bias, size, out): across channels (axis 1), x / (bias + alpha / size *
/// sum of the squares of the `size` channels around it)^beta.
inline status LRN_out(const tensor& x, double alpha, double beta, double bias, std::int64_t size, const tensor& out) {
  constexpr std::string_view fn = "onnx.LRN";
  std::int64_t n = 0, c = 0, spatial = 0;
  RELAXVM_TRY(detail::check_nc(fn, x, n, c, spatial));
  if (size < 1) return detail::value_error(fn, ": size must be at least 1, but is ", size);
  RELAXVM_TRY(detail::check_out(fn, out, 5, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  const std::int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // channels before and after
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t ch = 0; ch < c; ++ch)
          for (std::int64_t j = 0; j < spatial; ++j) {
            double sq = 0;
            const std::int64_t from = ch - lo < 0 ? 0 : ch - lo, to = ch + hi > c - 1 ? c - 1 : ch + hi;
            for (std::int64_t q = from; q <= to; ++q) {
              const double v = static_cast<double>(in[(i * c + q) * spatial + j]);
              sq += v * v;
            }
            const std::int64_t at = (i * c + ch) * spatial + j;
            o[at] = static_cast<T>(static_cast<double>(in[at]) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
          }
    }
  });
  return {};
}

/// MeanVarianceNormalization(x, axes, out): (x - mean) / (std + 1e-9) over `axes` (ONNX's
/// function body: the variance as E[x^2] - E[x]^2).
inline status MeanVarianceNormalization_out(const tensor& x, const shape& axes, const tensor& out) {
  constexpr std::string_view fn = "onnx.MeanVarianceNormalization";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::floats));
  detail::reduce_plan p;
  RELAXVM_TRY(detail::plan_reduce(fn, x, axes.dims(), true, false, p));
  RELAXVM_TRY(detail::check_out(fn, out, 2, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, true));
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      detail::for_each_kept(p, [&](std::int64_t, std::int64_t base) {
        double sum = 0, sq = 0;
        detail::for_each_offset(p.red, p.red_strides, base, [&](std::int64_t i) {
          const double v = static_cast<double>(in[i]);
          sum += v;
          sq += v * v;
        });
        const double mu = p.n > 0 ? sum / static_cast<double>(p.n) : 0.0;
        const double var = p.n > 0 ? sq / static_cast<double>(p.n) - mu * mu : 0.0;
        const double den = std::sqrt(var > 0 ? var : 0.0) + 1e-9;
        detail::for_each_offset(p.red, p.red_strides, base, [&](std::int64_t i) { o[i] = static_cast<T>((static_cast<double>(in[i]) - mu) / den); });
      });
    }
  });
  return {};
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_NORMALIZATION_HPP
