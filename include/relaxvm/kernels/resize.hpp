// SPDX-License-Identifier: Apache-2.0
// Resize (and Upsample) with ONNX's semantics, as ONNX's reference computes them: each output
// coordinate maps to an input coordinate per axis (coordinate_transformation_mode), whose
// neighbours are weighted (nearest: one, linear: two, cubic: four, exclude_outside renormalizing)
// with the input's edge repeated; resizing is separable, so an output element is the sum over the
// neighbours of every axis of the product of their weights. The last axis's neighbours are worked
// out once per block of 64 output columns into a stack buffer and reused by every row (every
// channel), the other axes' once per row: no division per element. Plain loops, no heap.
#ifndef RELAXVM_KERNELS_RESIZE_HPP
#define RELAXVM_KERNELS_RESIZE_HPP

#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

/// Resize's mode, coordinate_transformation_mode and nearest_mode as the int64 attributes the
/// kernel takes. nearest_simple is Resize-10's and Upsample's rounding (no nearest_mode then):
/// floor when enlarging an axis, ceil when shrinking it, as onnxruntime does.
enum resize_mode : std::int64_t { resize_nearest = 0, resize_linear = 1, resize_cubic = 2 };
enum resize_coord : std::int64_t {
  coord_half_pixel = 0,
  coord_asymmetric = 1,
  coord_align_corners = 2,
  coord_pytorch_half_pixel = 3,
  coord_tf_half_pixel_for_nn = 4,
  coord_tf_crop_and_resize = 5,
};
enum resize_nearest_mode : std::int64_t {
  nearest_round_prefer_floor = 0,
  nearest_round_prefer_ceil = 1,
  nearest_floor = 2,
  nearest_ceil = 3,
  nearest_simple = 4,
};

namespace detail {

/// The attributes of one Resize.
struct resize_params {
  std::int64_t mode = resize_nearest, coord = coord_half_pixel, nearest = nearest_round_prefer_floor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

/// One axis: its input and output sizes, scale, and (tf_crop_and_resize) region.
struct resize_axis {
  std::int64_t in = 1, out = 1;
  double scale = 1, roi0 = 0, roi1 = 1;
};

/// An output coordinate's neighbours along one axis: input indices (clamped to the edge) and
/// their weights; `outside` when tf_crop_and_resize falls outside the input (extrapolation).
struct resize_taps {
  std::int64_t idx[4] = {};
  double w[4] = {};
  int n = 0;
  bool outside = false;
};

/// A scale in a message.
inline relaxvm::detail::text real_text(double v) {
  relaxvm::detail::text t;
  relaxvm::detail::append_double(t, v);
  return t;
}

/// The input coordinate of output coordinate `o`, as ONNX's reference computes it (the output
/// width it divides by is scale * in, not the rounded output size).
inline double resize_source(const resize_axis& a, std::int64_t coord, std::int64_t o, bool& outside) {
  const double x = static_cast<double>(o), in = static_cast<double>(a.in), out_w = a.scale * in;
  outside = false;
  switch (coord) {
    case coord_asymmetric: return x / a.scale;
    case coord_align_corners: return out_w == 1 ? 0.0 : x * (in - 1) / (out_w - 1);
    case coord_pytorch_half_pixel: return out_w == 1 ? -0.5 : (x + 0.5) / a.scale - 0.5;
    case coord_tf_half_pixel_for_nn: return (x + 0.5) / a.scale;
    case coord_tf_crop_and_resize: {
      double s = out_w == 1 ? (a.roi1 - a.roi0) * (in - 1) / 2 : x * (a.roi1 - a.roi0) * (in - 1) / (out_w - 1);
      s += a.roi0 * (in - 1);
      outside = !(s >= 0 && s <= in - 1);  // NaN too
      return s;
    }
    default: return (x + 0.5) / a.scale - 0.5;  // half_pixel
  }
}

inline void cubic_coeffs(double r, double a, double (&c)[4]) {
  const double s = 1 - r;
  c[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
  c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  c[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
  c[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

/// The neighbours of output coordinate `o` along axis `a`.
inline void resize_taps_of(const resize_axis& a, const resize_params& p, std::int64_t o, resize_taps& t) {
  double src = resize_source(a, p.coord, o, t.outside);
  if (t.outside) {  // extrapolated: the mode's count of neighbours, all of weight 0
    t.n = p.mode == resize_nearest ? 1 : p.mode == resize_linear ? 2 : 4;
    for (int k = 0; k < t.n; ++k) t.idx[k] = 0, t.w[k] = 0;
    return;
  }
  // Far outside the input every neighbour is the edge; bounded, the cast below is defined.
  const double lo = -4, hi = static_cast<double>(a.in) + 4;
  src = !(src >= lo) ? lo : src > hi ? hi : src;
  const double fl = std::floor(src);
  const double r = src - fl;
  const auto i0 = static_cast<std::int64_t>(fl);
  if (p.mode == resize_nearest) {
    bool up = r > 0.5;
    switch (p.nearest) {
      case nearest_round_prefer_ceil: up = r >= 0.5; break;
      case nearest_floor: up = false; break;
      case nearest_ceil: up = true; break;
      case nearest_simple: up = a.scale < 1; break;
      default: break;
    }
    t.n = 1;
    t.idx[0] = r == 0 || !up ? i0 : i0 + 1;
    t.w[0] = 1;
  } else if (p.mode == resize_linear) {
    t.n = 2;
    t.idx[0] = i0, t.idx[1] = i0 + 1;
    t.w[0] = 1 - r, t.w[1] = r;
  } else {
    t.n = 4;
    for (int k = 0; k < 4; ++k) t.idx[k] = i0 - 1 + k;
    cubic_coeffs(r, p.cubic_a, t.w);
  }
  if (p.exclude_outside && p.mode != resize_nearest) {
    double sum = 0;
    for (int k = 0; k < t.n; ++k) {
      if (t.idx[k] < 0 || t.idx[k] >= a.in) t.w[k] = 0;
      sum += t.w[k];
    }
    for (int k = 0; k < t.n && sum != 0; ++k) t.w[k] /= sum;
  }
  for (int k = 0; k < t.n; ++k) t.idx[k] = t.idx[k] < 0 ? 0 : t.idx[k] >= a.in ? a.in - 1 : t.idx[k];
}

/// The output columns whose last-axis neighbours are worked out at once (on the stack).
inline constexpr std::int64_t resize_block = 64;

/// The last axis's neighbours of a block of output columns, packed for the inner loop: column j's
/// taps are idx/w[j * n, j * n + n), n the same for every column (1, 2 or 4).
template <class T>
struct resize_columns {
  std::int64_t idx[resize_block * 4];
  T w[resize_block * 4];
  bool outside[resize_block];
  bool any_outside = false;
  int n = 1;
};

template <class T>
void resize_fill_columns(const resize_axis& a, const resize_params& p, std::int64_t x0, std::int64_t nx, resize_columns<T>& c) {
  c.any_outside = false;
  for (std::int64_t j = 0; j < nx; ++j) {
    resize_taps t;
    resize_taps_of(a, p, x0 + j, t);
    c.n = t.n;
    c.outside[j] = t.outside;
    c.any_outside = c.any_outside || t.outside;
    for (int k = 0; k < t.n; ++k) c.idx[j * t.n + k] = t.idx[k], c.w[j * t.n + k] = static_cast<T>(t.w[k]);
  }
  if (c.any_outside)  // extrapolated columns read element 0 with weight 0
    for (std::int64_t j = 0; j < nx; ++j)
      if (c.outside[j])
        for (int k = 0; k < c.n; ++k) c.idx[j * c.n + k] = 0, c.w[j * c.n + k] = 0;
}

/// o[j] += wt * (column j's taps of src), for N taps a column.
template <int N, class T>
void resize_accumulate(T* o, const T* src, const resize_columns<T>& c, std::int64_t nx, T wt) {
  for (std::int64_t j = 0; j < nx; ++j) {
    T acc = 0;
    for (int k = 0; k < N; ++k) acc += c.w[j * N + k] * src[c.idx[j * N + k]];
    o[j] += wt * acc;
  }
}

template <class T>
void resize_run(const T* in, T* out, const resize_axis* ax, int rank, const resize_params& p, T extrapolation) {
  const int last = rank - 1;
  std::int64_t in_stride[max_rank] = {}, rows = 1;
  std::int64_t s = 1;
  for (int k = rank - 1; k >= 0; --k) in_stride[k] = s, s *= ax[k].in;
  for (int k = 0; k < last; ++k) rows *= ax[k].out;
  const std::int64_t width = ax[last].out;
  if (rows == 0 || width == 0) return;
  resize_columns<T> col;
  for (std::int64_t x0 = 0; x0 < width; x0 += resize_block) {
    const std::int64_t nx = width - x0 < resize_block ? width - x0 : resize_block;
    resize_fill_columns(ax[last], p, x0, nx, col);
    std::int64_t pos[max_rank] = {};  // the row's output coordinates
    resize_taps rt[max_rank];         // the row axes' neighbours, those of weight 0 dropped
    int changed = 0;                  // the row axes from this one on moved since the last row
    for (std::int64_t row = 0; row < rows; ++row) {
      T* o = out + row * width + x0;
      for (int k = changed; k < last; ++k) {
        resize_taps_of(ax[k], p, pos[k], rt[k]);
        int m = 0;
        for (int t = 0; t < rt[k].n; ++t)
          if (rt[k].w[t] != 0) rt[k].idx[m] = rt[k].idx[t], rt[k].w[m++] = rt[k].w[t];
        rt[k].n = m;
      }
      bool outside = false, empty = false;
      for (int k = 0; k < last; ++k) outside = outside || rt[k].outside, empty = empty || rt[k].n == 0;
      if (outside) {
        for (std::int64_t j = 0; j < nx; ++j) o[j] = extrapolation;
      } else if (p.mode == resize_nearest) {
        std::int64_t off = 0;
        for (int k = 0; k < last; ++k) off += rt[k].idx[0] * in_stride[k];
        const T* src = in + off;
        for (std::int64_t j = 0; j < nx; ++j) o[j] = src[col.idx[j]];
      } else if constexpr (std::is_floating_point_v<T>) {
        for (std::int64_t j = 0; j < nx; ++j) o[j] = 0;
        // Every combination of the row axes' neighbours (an odometer), each an input row.
        int tap[max_rank] = {};
        while (!empty) {
          std::int64_t off = 0;
          double w = 1;
          for (int k = 0; k < last; ++k) off += rt[k].idx[tap[k]] * in_stride[k], w *= rt[k].w[tap[k]];
          const T* src = in + off;
          const T wt = static_cast<T>(w);
          if (col.n == 2) resize_accumulate<2>(o, src, col, nx, wt);
          else if (col.n == 4) resize_accumulate<4>(o, src, col, nx, wt);
          else resize_accumulate<1>(o, src, col, nx, wt);
          int k = last - 1;
          for (; k >= 0; --k) {
            if (++tap[k] < rt[k].n) break;
            tap[k] = 0;
          }
          if (k < 0) break;
        }
      }
      if (col.any_outside && !outside)
        for (std::int64_t j = 0; j < nx; ++j)
          if (col.outside[j]) o[j] = extrapolation;
      changed = last;
      for (int k = last - 1; k >= 0; --k) {
        changed = k;
        if (++pos[k] < ax[k].out) break;
        pos[k] = 0;
      }
    }
  }
}

}  // namespace detail

/// Resize(x, roi | undefined, scales | undefined, mode, coordinate_transformation_mode,
/// nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value, out). The scales (float32,
/// one per axis) set each output dim to floor(in * scale); without them each axis's scale is
/// out / in (ONNX's sizes). roi (2 * rank values: starts, then ends) is read by
/// tf_crop_and_resize only. Linear and cubic take float inputs; nearest any type.
inline status Resize_out(const tensor& x, const tensor& roi, const tensor& scales, std::int64_t mode, std::int64_t coord,
                         std::int64_t nearest, double cubic_a, std::int64_t exclude_outside, double extrapolation, const tensor& out) {
  constexpr std::string_view fn = "onnx.Resize";
  RELAXVM_TRY(detail::check_in(fn, x, 0, mode == resize_nearest ? detail::any_type : detail::floats));
  const int rank = static_cast<int>(x.ndim());
  if (rank < 1) return detail::value_error(fn, ": the input must have at least one dimension");
  if (mode < resize_nearest || mode > resize_cubic) return detail::value_error(fn, ": mode ", mode, " must be 0 (nearest), 1 (linear) or 2 (cubic)");
  if (coord < coord_half_pixel || coord > coord_tf_crop_and_resize)
    return detail::value_error(fn, ": coordinate_transformation_mode ", coord, " is not one of 0 to 5");
  if (nearest < nearest_round_prefer_floor || nearest > nearest_simple)
    return detail::value_error(fn, ": nearest_mode ", nearest, " is not one of 0 to 4");
  RELAXVM_TRY(detail::check_in(fn, out, 9, detail::any_type));
  if (out.ndim() != rank)
    return detail::value_error(fn, ": the output has ", out.ndim(), " dims but the input has ", rank);
  RELAXVM_TRY(detail::check_out(fn, out, 9, out.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  detail::resize_axis ax[max_rank];
  for (int k = 0; k < rank; ++k) ax[k].in = x.shape()[k], ax[k].out = out.shape()[k];
  if (scales.defined()) {
    RELAXVM_TRY(detail::check_in(fn, scales, 2, detail::floats));
    if (scales.dtype() != dtype::float32() || scales.ndim() != 1 || scales.shape()[0] != rank)
      return detail::value_error(fn, ": the scales must be float32 of shape [", rank, "] (one per axis), but are ", scales.dtype(), " ",
                                 detail::dims_text{scales.shape().dims()});
    for (int k = 0; k < rank; ++k) {
      const double sc = static_cast<double>(scales.data<const float>()[k]);
      if (!(sc > 0)) return detail::value_error(fn, ": scale ", detail::real_text(sc), " (axis ", k, ") must be positive");
      const double want = std::floor(sc * static_cast<double>(ax[k].in));
      if (want != static_cast<double>(ax[k].out))
        return detail::value_error(fn, ": the output's dim ", k, " is ", ax[k].out, " but floor(", ax[k].in, " * ", detail::real_text(sc), ") is ",
                                   detail::real_text(want));
      ax[k].scale = sc;
    }
  } else {
    for (int k = 0; k < rank; ++k) {
      if (ax[k].out > 0 && ax[k].in == 0) return detail::value_error(fn, ": axis ", k, " is empty and cannot be resized to ", ax[k].out);
      ax[k].scale = ax[k].in > 0 ? static_cast<double>(ax[k].out) / static_cast<double>(ax[k].in) : 1.0;
    }
  }
  if (coord == coord_tf_crop_and_resize) {
    if (!roi.defined()) return detail::value_error(fn, ": tf_crop_and_resize needs the roi (argument 1)");
    RELAXVM_TRY(detail::check_in(fn, roi, 1, detail::floats));
    if (roi.ndim() != 1 || roi.shape()[0] != 2 * rank)
      return detail::value_error(fn, ": the roi has shape ", detail::dims_text{roi.shape().dims()}, " but must be [", 2 * rank, "] (starts, then ends)");
    for (int k = 0; k < rank; ++k) {
      const bool f32 = roi.dtype() == dtype::float32();
      ax[k].roi0 = f32 ? static_cast<double>(roi.data<const float>()[k]) : roi.data<const double>()[k];
      ax[k].roi1 = f32 ? static_cast<double>(roi.data<const float>()[k + rank]) : roi.data<const double>()[k + rank];
    }
  }
  detail::resize_params p;
  p.mode = mode, p.coord = coord, p.nearest = nearest, p.cubic_a = cubic_a, p.exclude_outside = exclude_outside != 0;
  detail::visit(x.dtype(), [&]<class T>() {
    detail::resize_run<T>(static_cast<const T*>(x.raw_data()), static_cast<T*>(out.raw_data()), ax, rank, p, static_cast<T>(extrapolation));
  });
  return {};
}

namespace detail {
/// Resize's output dims for scales known only when the program runs: floor(in * scale) per axis
/// (what the importer's run-time shape path calls).
inline result<shape> resize_shape(const tensor& x, const tensor& scales) {
  constexpr std::string_view fn = "onnx.Resize.shape";
  RELAXVM_TRY(check_in(fn, scales, 1, floats));
  if (scales.dtype() != dtype::float32() || scales.ndim() != 1 || scales.shape()[0] != x.ndim())
    return value_error(fn, ": the scales must be float32 of shape [", x.ndim(), "] (one per axis), but are ", scales.dtype(), " ",
                       dims_text{scales.shape().dims()});
  dims d;
  for (int k = 0; k < static_cast<int>(x.ndim()); ++k) {
    const double sc = static_cast<double>(scales.data<const float>()[k]);
    const double v = std::floor(sc * static_cast<double>(x.shape()[k]));
    // A bound far above any memory: the allocation fails cleanly after, and the cast is defined.
    if (!(sc > 0) || v > 4.0e18) return value_error(fn, ": scale ", real_text(sc), " (axis ", k, ") must be positive and finite");
    d.push(static_cast<std::int64_t>(v));
  }
  return shape::try_make(d.span());
}
}  // namespace detail

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_RESIZE_HPP
