// SPDX-License-Identifier: Apache-2.0
// Pooling (ONNX's MaxPool with its optional Indices, AveragePool, LpPool, and their Global forms)
// over NC(D)HW tensors: 1 to 3 spatial dims, strides, dilations, pads, auto_pad, ceil_mode. Each
// output element reduces the taps of its window that fall inside the input; padding takes no
// part, except in AveragePool's divisor with count_include_pad. Large poolings share their
// planes out among the kernels' threads (kernels/threads.hpp).
#ifndef RELAXVM_KERNELS_POOL_HPP
#define RELAXVM_KERNELS_POOL_HPP

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"
#include "conv.hpp"  // valid_taps
#include "threads.hpp"
#include "window.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {

/// A pooling kernel's checks: x [N, C, spatial...] of a type in `set`, the window resolved from
/// kernel_shape and the attributes, `out` [N, C, out...] of x's dtype.
inline status pool_setup(std::string_view fn, const tensor& x, std::uint32_t set, std::int64_t auto_pad, std::int64_t ceil_mode,
                         const shape& kernel_shape, const shape& strides, const shape& pads, const shape& dilations, const tensor& out,
                         std::size_t out_index, window& win) {
  RELAXVM_TRY(check_in(fn, x, 0, set));
  if (x.ndim() < 3 || x.ndim() > 2 + max_spatial)
    return value_error(fn, ": the input has ", x.ndim(), " dimensions; it must have 3 to ", 2 + max_spatial, " (N, C and 1 to 3 spatial)");
  const std::span<const std::int64_t> xd = x.shape().dims();
  if (kernel_shape.dims().size() != xd.size() - 2)
    return value_error(fn, ": kernel_shape has ", kernel_shape.dims().size(), " values for ", xd.size() - 2, " spatial dimensions");
  RELAXVM_TRY(resolve_window(fn, xd.subspan(2), kernel_shape.dims(), auto_pad, ceil_mode, strides, pads, dilations, win));
  RELAXVM_TRY(check_out(fn, out, out_index, window_out_dims(xd[0], xd[1], win).span(), x.dtype()));
  return check_alias(fn, x, 0, out, false);
}

/// Calls f(plane, out_offset, taps, padded_count) for every output element of planes [pl0, pl1):
/// `taps` visits (input offset in the plane) for each tap of the window inside the input, and
/// `padded_count` counts the taps inside the padded input.
template <class F>
void pool_planes(const window& w, std::int64_t pl0, std::int64_t pl1, F& f) {
  const std::int64_t D = w.in[0], H = w.in[1], W = w.in[2];
  const std::int64_t OD = w.out[0], OH = w.out[1], OW = w.out[2];
  // Columns [lo, hi) have every tap inside the input (and so inside the padded input): no divisions.
  std::int64_t lo = 0, hi = 0;
  interior(w, 2, lo, hi);
  for (std::int64_t pl = pl0; pl < pl1; ++pl) {
    std::int64_t o = pl * OD * OH * OW;
    for (std::int64_t od = 0; od < OD; ++od) {
      std::int64_t kd0, kd1, pd0, pd1;
      valid_taps(od, w.s[0], w.pb[0], w.d[0], w.k[0], D, kd0, kd1);
      valid_taps(od, w.s[0], 0, w.d[0], w.k[0], D + w.pb[0] + w.pe[0], pd0, pd1);
      for (std::int64_t oh = 0; oh < OH; ++oh) {
        std::int64_t kh0, kh1, ph0, ph1;
        valid_taps(oh, w.s[1], w.pb[1], w.d[1], w.k[1], H, kh0, kh1);
        valid_taps(oh, w.s[1], 0, w.d[1], w.k[1], H + w.pb[1] + w.pe[1], ph0, ph1);
        for (std::int64_t ow = 0; ow < OW; ++ow, ++o) {
          std::int64_t kw0 = 0, kw1 = w.k[2], pw0 = 0, pw1 = w.k[2];
          if (ow < lo || ow >= hi) {
            valid_taps(ow, w.s[2], w.pb[2], w.d[2], w.k[2], W, kw0, kw1);
            valid_taps(ow, w.s[2], 0, w.d[2], w.k[2], W + w.pb[2] + w.pe[2], pw0, pw1);
          }
          const std::int64_t padded = (pd1 - pd0) * (ph1 - ph0) * (pw1 - pw0);
          const auto taps = [&](auto&& visit_tap) {
            for (std::int64_t kd = kd0; kd < kd1; ++kd) {
              const std::int64_t id = od * w.s[0] - w.pb[0] + kd * w.d[0];
              for (std::int64_t kh = kh0; kh < kh1; ++kh) {
                const std::int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.d[1];
                const std::int64_t row = (id * H + ih) * W;
                for (std::int64_t kw = kw0; kw < kw1; ++kw) visit_tap(row + ow * w.s[2] - w.pb[2] + kw * w.d[2], id, ih);
              }
            }
          };
          f(pl, o, taps, padded);
        }
      }
    }
  }
}

/// pool_planes over every plane; where the pooling is large enough, the planes are shared out
/// among the kernels' threads (kernels/threads.hpp): f must only write its output element.
template <class F>
void pool_each(const window& w, std::int64_t planes, F&& f) {
  const double work = static_cast<double>(planes) * static_cast<double>(w.out_size()) * static_cast<double>(w.k[0] * w.k[1] * w.k[2]);
  const int width = kernel_width(work);
  if (width <= 1 || planes < 2) return pool_planes(w, 0, planes, f);
  const std::int64_t parts = planes < 4 * width ? planes : 4 * width;
  auto part = [&](std::int64_t i) {
    std::int64_t pl0 = 0, pl1 = 0;
    part_range(planes, parts, i, pl0, pl1);
    pool_planes(w, pl0, pl1, f);
  };
  run_parts(parts, part);
}

}  // namespace detail

/// MaxPool(x; auto_pad, ceil_mode, storage_order, kernel_shape, strides, pads, dilations; out,
/// indices): indices (int64, out's shape, or undefined when not asked for) are offsets into the
/// flattened input, the spatial part column-major when storage_order is 1. Ties keep the first tap.
inline status MaxPool_out(const tensor& x, std::int64_t auto_pad, std::int64_t ceil_mode, std::int64_t storage_order,
                          const shape& kernel_shape, const shape& strides, const shape& pads, const shape& dilations, const tensor& out,
                          const tensor& indices) {
  constexpr std::string_view fn = "onnx.MaxPool";
  detail::window w;
  RELAXVM_TRY(detail::pool_setup(fn, x, detail::numbers, auto_pad, ceil_mode, kernel_shape, strides, pads, dilations, out, 8, w));
  if (storage_order != 0 && storage_order != 1) return detail::value_error(fn, ": storage_order is ", storage_order, "; it must be 0 or 1");
  std::int64_t* idx = nullptr;
  if (indices.defined()) {
    RELAXVM_TRY(detail::check_out(fn, indices, 9, out.shape().dims(), dtype::int64()));
    RELAXVM_TRY(detail::check_alias(fn, x, 0, indices, false));
    RELAXVM_TRY(detail::check_alias(fn, out, 8, indices, false));
    idx = static_cast<std::int64_t*>(indices.raw_data());
  }
  const std::int64_t plane = w.in_size(), D = w.in[0], H = w.in[1];
  const std::int64_t planes = x.shape().dims()[0] * x.shape().dims()[1];
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
      if (idx == nullptr) {  // the values alone: no tap's place to keep
        detail::pool_each(w, planes, [&](std::int64_t pl, std::int64_t oi, auto&& taps, std::int64_t) {
          const T* p = in + pl * plane;
          T best = lowest;
          bool first = true;
          taps([&](std::int64_t i, std::int64_t, std::int64_t) {
            if (first || p[i] > best) best = p[i];
            first = false;
          });
          o[oi] = best;
        });
        return;
      }
      detail::pool_each(w, planes, [&](std::int64_t pl, std::int64_t oi, auto&& taps, std::int64_t) {
        const T* p = in + pl * plane;
        T best = lowest;
        std::int64_t at = -1, at_d = 0, at_h = 0;
        taps([&](std::int64_t i, std::int64_t id, std::int64_t ih) {
          if (at < 0 || p[i] > best) {
            best = p[i];
            at = i, at_d = id, at_h = ih;
          }
        });
        o[oi] = best;
        if (idx != nullptr) {
          std::int64_t k = at < 0 ? 0 : at;
          if (storage_order == 1 && at >= 0) {
            const std::int64_t iw = at - (at_d * H + at_h) * w.in[2];
            k = at_d + at_h * D + iw * D * H;
          }
          idx[oi] = pl * plane + k;
        }
      });
    }
  });
  return {};
}

/// AveragePool(x; auto_pad, ceil_mode, count_include_pad, kernel_shape, strides, pads, dilations;
/// out): the mean of the taps inside the input, divided by the taps inside the padded input when
/// count_include_pad is 1.
inline status AveragePool_out(const tensor& x, std::int64_t auto_pad, std::int64_t ceil_mode, std::int64_t count_include_pad,
                              const shape& kernel_shape, const shape& strides, const shape& pads, const shape& dilations,
                              const tensor& out) {
  constexpr std::string_view fn = "onnx.AveragePool";
  detail::window w;
  RELAXVM_TRY(detail::pool_setup(fn, x, detail::floats, auto_pad, ceil_mode, kernel_shape, strides, pads, dilations, out, 8, w));
  const std::int64_t plane = w.in_size(), planes = x.shape().dims()[0] * x.shape().dims()[1];
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      detail::pool_each(w, planes, [&](std::int64_t pl, std::int64_t oi, auto&& taps, std::int64_t padded) {
        const T* p = in + pl * plane;
        T sum = 0;
        std::int64_t n = 0;
        taps([&](std::int64_t i, std::int64_t, std::int64_t) { sum += p[i], ++n; });
        o[oi] = sum / static_cast<T>(count_include_pad != 0 ? padded : n);
      });
    }
  });
  return {};
}

/// LpPool(x; auto_pad, ceil_mode, p, kernel_shape, strides, pads, dilations; out): the p-norm of
/// the taps inside the input.
inline status LpPool_out(const tensor& x, std::int64_t auto_pad, std::int64_t ceil_mode, double p, const shape& kernel_shape,
                         const shape& strides, const shape& pads, const shape& dilations, const tensor& out) {
  constexpr std::string_view fn = "onnx.LpPool";
  if (!(p > 0)) return detail::value_error(fn, ": p must be positive");
  detail::window w;
  RELAXVM_TRY(detail::pool_setup(fn, x, detail::floats, auto_pad, ceil_mode, kernel_shape, strides, pads, dilations, out, 8, w));
  const std::int64_t plane = w.in_size(), planes = x.shape().dims()[0] * x.shape().dims()[1];
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      detail::pool_each(w, planes, [&](std::int64_t pl, std::int64_t oi, auto&& taps, std::int64_t) {
        const T* px = in + pl * plane;
        double sum = 0;
        taps([&](std::int64_t i, std::int64_t, std::int64_t) { sum += std::pow(std::fabs(static_cast<double>(px[i])), p); });
        o[oi] = static_cast<T>(std::pow(sum, 1.0 / p));
      });
    }
  });
  return {};
}

namespace detail {

/// A global pool: x [N, C, spatial...] (at least one spatial dim) into out [N, C, 1, ...], each
/// (n, c) plane reduced by f(plane pointer, count).
template <class F>
status global_pool(std::string_view fn, const tensor& x, const tensor& out, std::uint32_t set, F&& f) {
  RELAXVM_TRY(check_in(fn, x, 0, set));
  if (x.ndim() < 3) return value_error(fn, ": the input has ", x.ndim(), " dimensions; it must have at least 3 (N, C, spatial...)");
  const std::span<const std::int64_t> xd = x.shape().dims();
  dims want;
  want.push(xd[0]);
  want.push(xd[1]);
  std::int64_t plane = 1;
  for (std::size_t k = 2; k < xd.size(); ++k) want.push(1), plane *= xd[k];
  RELAXVM_TRY(check_out(fn, out, 1, want.span(), x.dtype()));
  RELAXVM_TRY(check_alias(fn, x, 0, out, false));
  const std::int64_t planes = xd[0] * xd[1];
  visit(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      for (std::int64_t pl = 0; pl < planes; ++pl) o[pl] = f(in + pl * plane, plane);
    }
  });
  return {};
}

}  // namespace detail

inline status GlobalAveragePool_out(const tensor& x, const tensor& out) {
  return detail::global_pool("onnx.GlobalAveragePool", x, out, detail::floats, [](const auto* p, std::int64_t n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(p[i]);
    return static_cast<T>(sum / static_cast<double>(n));
  });
}

inline status GlobalMaxPool_out(const tensor& x, const tensor& out) {
  return detail::global_pool("onnx.GlobalMaxPool", x, out, detail::numbers, [](const auto* p, std::int64_t n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    T best = n > 0 ? p[0] : std::numeric_limits<T>::lowest();
    for (std::int64_t i = 1; i < n; ++i)
      if (p[i] > best) best = p[i];
    return best;
  });
}

inline status GlobalLpPool_out(const tensor& x, double p, const tensor& out) {
  if (!(p > 0)) return detail::value_error("onnx.GlobalLpPool: p must be positive");
  return detail::global_pool("onnx.GlobalLpPool", x, out, detail::floats, [p](const auto* px, std::int64_t n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(px)>>;
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += std::pow(std::fabs(static_cast<double>(px[i])), p);
    return static_cast<T>(std::pow(sum, 1.0 / p));
  });
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_POOL_HPP
