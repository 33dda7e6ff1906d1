// SPDX-License-Identifier: Apache-2.0
// What convolution and pooling share: a sliding window over up to 3 spatial dims (its kernel,
// strides, dilations and pads, ONNX's auto_pad, pooling's ceil_mode) resolved into the output's
// spatial dims, with every attribute checked. Fewer than 3 spatial dims are padded in front with
// dims of 1 (a kernel of 1, stride 1, no pads), so one 3-d loop nest serves 1-d, 2-d and 3-d.
#ifndef RELAXVM_KERNELS_WINDOW_HPP
#define RELAXVM_KERNELS_WINDOW_HPP

#include <cstdint>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

/// ONNX's auto_pad, as the int64 attribute the kernels take.
enum auto_pad_mode : std::int64_t { notset = 0, same_upper = 1, same_lower = 2, valid = 3 };

namespace detail {

/// The most spatial dims a window kernel takes (ONNX's tests: 1, 2 and 3).
inline constexpr int max_spatial = 3;

/// A window's geometry over 3 spatial dims (the leading ones 1 when there are fewer).
struct window {
  int nd = 0;  // the real number of spatial dims
  std::int64_t in[max_spatial] = {1, 1, 1}, k[max_spatial] = {1, 1, 1}, s[max_spatial] = {1, 1, 1};
  std::int64_t d[max_spatial] = {1, 1, 1}, pb[max_spatial] = {}, pe[max_spatial] = {}, out[max_spatial] = {1, 1, 1};

  std::int64_t in_size() const { return in[0] * in[1] * in[2]; }
  std::int64_t out_size() const { return out[0] * out[1] * out[2]; }
  /// The span of the window in the input: (k - 1) * d + 1.
  std::int64_t extent(int i) const { return (k[i] - 1) * d[i] + 1; }
};

/// The largest kernel dim, stride, dilation and pad a window takes (2^30): with the taps' product
/// checked too, every offset and count the kernels compute from them fits in int64.
inline constexpr std::int64_t max_window_value = std::int64_t{1} << 30;

/// An int list attribute of `n` values (`dflt` each when the list is empty), each at least `lo`
/// and at most max_window_value, written to out[3 - n ...] (the padded layout).
inline status read_list(std::string_view fn, std::string_view what, const shape& v, int n, std::int64_t dflt, std::int64_t lo,
                        std::int64_t* out) {
  const std::span<const std::int64_t> d = v.dims();
  if (!d.empty() && d.size() != static_cast<std::size_t>(n))
    return value_error(fn, ": ", what, " has ", d.size(), " values for ", n, " spatial dimensions");
  for (int i = 0; i < n; ++i) {
    const std::int64_t x = d.empty() ? dflt : d[static_cast<std::size_t>(i)];
    if (x < lo) return value_error(fn, ": ", what, " has ", x, "; each must be at least ", lo);
    if (x > max_window_value) return value_error(fn, ": ", what, " has ", x, "; each must be at most ", max_window_value);
    out[max_spatial - n + i] = x;
  }
  return {};
}

/// The part of a window every op checks the same way: the input and kernel dims (right-aligned
/// in max_spatial), auto_pad's value, the strides and the dilations.
inline status begin_window(std::string_view fn, std::span<const std::int64_t> spatial, std::span<const std::int64_t> kernel,
                           std::int64_t auto_pad, const shape& strides, const shape& dilations, window& w) {
  const int n = static_cast<int>(spatial.size());
  if (n < 1 || n > max_spatial) return value_error(fn, ": ", n, " spatial dimensions; the kernel takes 1 to ", max_spatial);
  if (kernel.size() != spatial.size()) return value_error(fn, ": the kernel has ", kernel.size(), " dimensions for ", n, " spatial ones");
  if (auto_pad < notset || auto_pad > valid) return value_error(fn, ": auto_pad is ", auto_pad, "; it must be 0 to 3");
  w = window{};
  w.nd = n;
  const int o = max_spatial - n;
  for (int i = 0; i < n; ++i) {
    w.in[o + i] = spatial[static_cast<std::size_t>(i)];
    w.k[o + i] = kernel[static_cast<std::size_t>(i)];
    if (w.k[o + i] < 1) return value_error(fn, ": the kernel's dimension ", i, " is ", w.k[o + i], "; it must be at least 1");
    if (w.k[o + i] > max_window_value)
      return value_error(fn, ": the kernel's dimension ", i, " is ", w.k[o + i], "; it must be at most ", max_window_value);
  }
  std::int64_t taps = 1;
  if (!relaxvm::detail::checked_mul(w.k[0], w.k[1], taps) || !relaxvm::detail::checked_mul(taps, w.k[2], taps))
    return value_error(fn, ": the kernel has more taps than int64 counts");
  RELAXVM_TRY(read_list(fn, "strides", strides, n, 1, 1, w.s));
  return read_list(fn, "dilations", dilations, n, 1, 1, w.d);
}

/// Resolves a window over `spatial` input dims with kernel dims `kernel`: checks the attributes and
/// computes the pads auto_pad asks for and the output dims (ONNX's formulas; ceil_mode rounds up).
inline status resolve_window(std::string_view fn, std::span<const std::int64_t> spatial, std::span<const std::int64_t> kernel,
                             std::int64_t auto_pad, std::int64_t ceil_mode, const shape& strides, const shape& pads,
                             const shape& dilations, window& w) {
  const int n = static_cast<int>(spatial.size());
  RELAXVM_TRY(begin_window(fn, spatial, kernel, auto_pad, strides, dilations, w));
  const int o = max_spatial - n;
  const std::span<const std::int64_t> p = pads.dims();
  if (!p.empty() && p.size() != static_cast<std::size_t>(2 * n))
    return value_error(fn, ": pads has ", p.size(), " values for ", n, " spatial dimensions (it needs ", 2 * n, ")");
  for (int i = 0; i < n; ++i) {
    const int j = o + i;
    const std::int64_t ek = w.extent(j);
    if (auto_pad == same_upper || auto_pad == same_lower) {
      w.out[j] = (w.in[j] + w.s[j] - 1) / w.s[j];
      std::int64_t total = (w.out[j] - 1) * w.s[j] + ek - w.in[j];
      if (total < 0) total = 0;
      w.pb[j] = auto_pad == same_upper ? total / 2 : total - total / 2;
      w.pe[j] = total - w.pb[j];
      continue;
    }
    if (auto_pad == notset && !p.empty()) {
      w.pb[j] = p[static_cast<std::size_t>(i)];
      w.pe[j] = p[static_cast<std::size_t>(i + n)];
      if (w.pb[j] < 0 || w.pe[j] < 0) return value_error(fn, ": pads has a negative value");
      if (w.pb[j] > max_window_value || w.pe[j] > max_window_value)
        return value_error(fn, ": pads has a value over ", max_window_value);
    }
    const std::int64_t span = w.in[j] + w.pb[j] + w.pe[j] - ek;
    if (span < 0)
      return value_error(fn, ": the window (", ek, " wide) is larger than the padded input (", w.in[j] + w.pb[j] + w.pe[j],
                         ") along spatial dimension ", i);
    w.out[j] = (ceil_mode != 0 ? (span + w.s[j] - 1) / w.s[j] : span / w.s[j]) + 1;
    // Rounding up never adds a window that starts in the right padding (ONNX's later text, torch).
    if (ceil_mode != 0 && (w.out[j] - 1) * w.s[j] >= w.in[j] + w.pb[j]) --w.out[j];
  }
  return {};
}

/// The output columns [lo, hi) of a dim whose whole window lies inside the input (no bounds checks).
inline void interior(const window& w, int j, std::int64_t& lo, std::int64_t& hi) {
  lo = (w.pb[j] + w.s[j] - 1) / w.s[j];
  const std::int64_t last = w.in[j] - 1 + w.pb[j] - (w.k[j] - 1) * w.d[j];  // the largest o * s allowed
  hi = last < 0 ? 0 : last / w.s[j] + 1;
  if (hi > w.out[j]) hi = w.out[j];
  if (lo > hi) lo = hi;
}

/// The output dims [N, C, out...].
inline dims window_out_dims(std::int64_t n, std::int64_t c, const window& w) {
  dims r;
  r.push(n);
  r.push(c);
  for (int i = max_spatial - w.nd; i < max_spatial; ++i) r.push(w.out[i]);
  return r;
}

}  // namespace detail
}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_WINDOW_HPP
