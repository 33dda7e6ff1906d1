// SPDX-License-Identifier: Apache-2.0
// Convolution (ONNX's Conv) and its transpose (ConvTranspose) over NC(D)HW tensors of float32 or
// float64: groups, strides, dilations, asymmetric pads, auto_pad, 1 to 3 spatial dims, an optional
// bias.
//
// Conv allocates nothing. A group of 4 or more output channels runs as a matrix product
// (gemm.hpp): weights [Mg, Cg * taps] times the im2col matrix [Cg * taps, positions], whose panels
// are packed on the stack straight from the input (zeros in the padding); a 1x1 convolution at
// stride 1 without pads reads the input as that matrix. Groups of fewer channels (depthwise ones)
// run direct tiles: OB output channels by NV vectors of output columns, summed over the input
// channels and the taps, each input vector loaded feeding OB multiply-adds. Tiles whose columns
// reach past the input's edges copy each row's stretch into a zero-padded stack buffer
// (max_segment elements) first; interior tiles read the input directly, with unit-stride vector
// loads at stride 1. The kernels are in conv_body.inc, compiled once per instruction set
// (isa.hpp); detail::conv_run runs the copy for the CPU, cut into parts for the kernels' threads
// where they are on (threads.hpp).
#ifndef RELAXVM_KERNELS_CONV_HPP
#define RELAXVM_KERNELS_CONV_HPP

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"
#include "gemm.hpp"
#include "isa.hpp"
#include "simd.hpp"
#include "threads.hpp"
#include "window.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {

template <class T>
struct conv_problem {
  const T* x;
  const T* w;
  const T* b;  // or null
  T* y;
  std::int64_t C, M, Cg, Mg, kk;  // channels in and out, per group, and taps per channel
  window win;
};

// The taps [lo, hi) of a kernel dim whose input index o * s - p + k * d lies in [0, n).
inline void valid_taps(std::int64_t o, std::int64_t s, std::int64_t p, std::int64_t d, std::int64_t k, std::int64_t n,
                       std::int64_t& lo, std::int64_t& hi) {
  const std::int64_t start = o * s - p;
  lo = start >= 0 ? 0 : (-start + d - 1) / d;
  const std::int64_t last = n - 1 - start;  // the largest k * d allowed
  hi = last < 0 ? 0 : last / d + 1;
  if (hi > k) hi = k;
  if (lo > hi) lo = hi;
}

/// The longest stretch of an input row an edge tile copies (with zeros for the padding).
inline constexpr int max_segment = 256;

/// Output channels per group from which a convolution runs as a product.
inline constexpr std::int64_t conv_product_min_channels = 4;

}  // namespace detail

}  // namespace relaxvm::RELAXVM_ABI::kernels

#define RELAXVM_KERNEL_TARGET
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_portable {
#include "conv_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_portable
#undef RELAXVM_KERNEL_TARGET
#if RELAXVM_KERNEL_DISPATCH
#define RELAXVM_KERNEL_TARGET RELAXVM_DETAIL_TARGET_AVX2
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx2 {
#include "conv_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx2
#undef RELAXVM_KERNEL_TARGET
#define RELAXVM_KERNEL_TARGET RELAXVM_DETAIL_TARGET_AVX512
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx512 {
#include "conv_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx512
#undef RELAXVM_KERNEL_TARGET
#endif

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {

/// Conv of N batches in G groups, with the kernels of the instruction set in use; where it is
/// large enough, on the kernels' threads (kernels/threads.hpp): many (batch, group) pairs are
/// shared out whole, else each pair's block is cut (output channels or positions for the
/// product, output rows for the direct tiles). Each output is summed as on one thread.
template <class T>
void conv_run(const conv_problem<T>& a, std::int64_t N, std::int64_t G) {
  const std::int64_t pairs = N * G;
  const double work = static_cast<double>(pairs) * static_cast<double>(a.Mg) * static_cast<double>(a.win.out_size()) *
                      static_cast<double>(a.Cg) * static_cast<double>(a.kk);
  const int width = kernel_width(work);
  if (width <= 1) {
    RELAXVM_DETAIL_ISA_CALL(conv_run<T>, (a, N, G));
    return;
  }
  const kernel_isa isa = kernel_isa_in_use();  // one copy for every part
  const out_block whole = isa_portable::conv_pair_block(a);
  if (pairs >= 2 * width) {
    const std::int64_t parts = pairs < 4 * width ? pairs : 4 * width;
    auto part = [&](std::int64_t i) {
      std::int64_t p0 = 0, p1 = 0;
      part_range(pairs, parts, i, p0, p1);
      for (std::int64_t p = p0; p < p1; ++p) RELAXVM_DETAIL_ISA_CALL_WITH(isa, conv_pair<T>, (a, p / G, p % G, whole));
    };
    return run_parts(parts, part);
  }
  std::int64_t ru = 1, cu = 1;
  RELAXVM_DETAIL_ISA_CALL_WITH(isa, conv_units<T>, (a, ru, cu));
  const block_split split = block_split::make(whole, ru, cu, width);
  auto part = [&](std::int64_t i) {
    const std::int64_t p = i / split.parts;
    RELAXVM_DETAIL_ISA_CALL_WITH(isa, conv_pair<T>, (a, p / G, p % G, split.block(i % split.parts)));
  };
  run_parts(pairs * split.parts, part);
}

/// The checks Conv and ConvTranspose share: x [N, C, spatial...] and w of x's float type and
/// rank, a bias of `bias_len` of that type or undefined; spatial dims 1 to 3; group at least 1.
inline status conv_inputs(std::string_view fn, const tensor& x, const tensor& w, const tensor& b, std::int64_t group) {
  RELAXVM_TRY(check_in(fn, x, 0, floats));
  RELAXVM_TRY(check_in(fn, w, 1, floats));
  RELAXVM_TRY(same_type(fn, x, 0, w, 1));
  if (x.ndim() < 3 || x.ndim() > 2 + max_spatial)
    return value_error(fn, ": the input has ", x.ndim(), " dimensions; it must have 3 to ", 2 + max_spatial, " (N, C and 1 to 3 spatial)");
  if (w.ndim() != x.ndim()) return value_error(fn, ": the weights have ", w.ndim(), " dimensions but the input ", x.ndim());
  if (group < 1) return value_error(fn, ": group is ", group, "; it must be at least 1");
  if (b.defined()) {
    RELAXVM_TRY(check_in(fn, b, 2, floats));
    RELAXVM_TRY(same_type(fn, x, 0, b, 2));
    if (b.ndim() != 1) return value_error(fn, ": the bias (argument 2) must have one dimension, but has ", b.ndim());
  }
  return {};
}

inline status conv_alias(std::string_view fn, const tensor& x, const tensor& w, const tensor& b, const tensor& out) {
  RELAXVM_TRY(check_alias(fn, x, 0, out, false));
  RELAXVM_TRY(check_alias(fn, w, 1, out, false));
  if (b.defined()) {
    RELAXVM_TRY(check_alias(fn, b, 2, out, false));
  }
  return {};
}

}  // namespace detail

/// Conv(x [N, C, spatial...], w [M, C / group, kernel...], b [M] or undefined; auto_pad
/// (auto_pad_mode), group, strides, pads (begins then ends), dilations (empty lists: the defaults),
/// out [N, M, out...]).
inline status Conv_out(const tensor& x, const tensor& w, const tensor& b, std::int64_t auto_pad, std::int64_t group,
                       const shape& strides, const shape& pads, const shape& dilations, const tensor& out) {
  constexpr std::string_view fn = "onnx.Conv";
  RELAXVM_TRY(detail::conv_inputs(fn, x, w, b, group));
  const std::span<const std::int64_t> xd = x.shape().dims(), wd = w.shape().dims();
  const std::int64_t N = xd[0], C = xd[1], M = wd[0];
  if (wd[1] * group != C)
    return detail::value_error(fn, ": the input has ", C, " channels but the weights take ", wd[1], " per group of ", group);
  if (M % group != 0) return detail::value_error(fn, ": ", M, " output channels do not split into ", group, " groups");
  if (b.defined() && b.numel() != M) return detail::value_error(fn, ": the bias has ", b.numel(), " values for ", M, " output channels");
  detail::window win;
  RELAXVM_TRY(detail::resolve_window(fn, xd.subspan(2), wd.subspan(2), auto_pad, 0, strides, pads, dilations, win));
  RELAXVM_TRY(detail::check_out(fn, out, 8, detail::window_out_dims(N, M, win).span(), x.dtype()));
  RELAXVM_TRY(detail::conv_alias(fn, x, w, b, out));
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const detail::conv_problem<T> a{static_cast<const T*>(x.raw_data()), static_cast<const T*>(w.raw_data()),
                                      b.defined() ? static_cast<const T*>(b.raw_data()) : nullptr, static_cast<T*>(out.raw_data()),
                                      C, M, C / group, M / group, win.k[0] * win.k[1] * win.k[2], win};
      detail::conv_run(a, N, group);
    }
  });
  return {};
}

namespace detail {

/// ConvTranspose's geometry: the pads (from output_shape or auto_pad when given, else `pads`)
/// and the output's spatial dims, into `win` (in: x's, out: y's, as the convolution it inverts
/// would see them reversed).
inline status resolve_transpose(std::string_view fn, std::span<const std::int64_t> spatial, std::span<const std::int64_t> kernel,
                                std::int64_t auto_pad, const shape& strides, const shape& pads, const shape& dilations,
                                const shape& output_padding, const shape& output_shape, window& w) {
  const int n = static_cast<int>(spatial.size());
  RELAXVM_TRY(begin_window(fn, spatial, kernel, auto_pad, strides, dilations, w));
  const int o = max_spatial - n;
  std::int64_t op[max_spatial] = {};
  RELAXVM_TRY(read_list(fn, "output_padding", output_padding, n, 0, 0, op));
  std::span<const std::int64_t> os = output_shape.dims();
  if (os.size() == static_cast<std::size_t>(n + 2)) os = os.subspan(2);  // N and C given too
  if (!os.empty() && os.size() != static_cast<std::size_t>(n))
    return value_error(fn, ": output_shape has ", output_shape.dims().size(), " values for ", n, " spatial dimensions");
  const std::span<const std::int64_t> p = pads.dims();
  if (!p.empty() && p.size() != static_cast<std::size_t>(2 * n))
    return value_error(fn, ": pads has ", p.size(), " values for ", n, " spatial dimensions (it needs ", 2 * n, ")");
  for (int i = 0; i < n; ++i) {
    const int j = o + i;
    if (op[j] >= w.s[j] && op[j] >= w.d[j])
      return value_error(fn, ": output_padding ", op[j], " must be less than the stride or the dilation");
    std::int64_t full = 0;  // s * (in - 1) + output_padding + extent; an empty input may have any dims
    if (!relaxvm::detail::checked_mul(w.s[j], w.in[j] - 1, full) || !relaxvm::detail::checked_add(full, op[j] + w.extent(j), full))
      return value_error(fn, ": the output's spatial dimension ", i, " does not fit in int64");
    const bool same = auto_pad == same_upper || auto_pad == same_lower;
    if (!os.empty() || same) {
      w.out[j] = !os.empty() ? os[static_cast<std::size_t>(i)] : w.in[j] * w.s[j];
      if (w.out[j] < 0) return value_error(fn, ": output_shape has ", w.out[j]);
      std::int64_t total = full - w.out[j];
      if (total < 0) total = 0;  // a larger output than the transpose covers: zeros at the end
      w.pb[j] = auto_pad == same_upper ? total / 2 : total - total / 2;
      w.pe[j] = total - w.pb[j];
    } else {
      if (auto_pad == notset && !p.empty()) {
        w.pb[j] = p[static_cast<std::size_t>(i)];
        w.pe[j] = p[static_cast<std::size_t>(i + n)];
        if (w.pb[j] < 0 || w.pe[j] < 0) return value_error(fn, ": pads has a negative value");
        if (w.pb[j] > max_window_value || w.pe[j] > max_window_value) return value_error(fn, ": pads has a value over ", max_window_value);
      }
      w.out[j] = full - w.pb[j] - w.pe[j];
      if (w.out[j] < 0) return value_error(fn, ": the pads (", w.pb[j] + w.pe[j], ") exceed the output (", full, ") along spatial dimension ", i);
    }
  }
  return {};
}

// Each input element scatters into the outputs its taps reach; the innermost loop runs along an
// input row (unit stride in the input, the stride in the output).
template <class T>
void conv_transpose_run(const T* x, const T* wt, const T* b, T* y, std::int64_t N, std::int64_t C, std::int64_t G,
                        std::int64_t Mg, const window& w) {
  const std::int64_t Cg = C / G, M = Mg * G;
  const std::int64_t D = w.in[0], H = w.in[1], W = w.in[2], OD = w.out[0], OH = w.out[1], OW = w.out[2];
  const std::int64_t kk = w.k[0] * w.k[1] * w.k[2], plane = OD * OH * OW, iplane = D * H * W;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t m = 0; m < M; ++m) {
      T* ym = y + (n * M + m) * plane;
      const T bias = b != nullptr ? b[m] : T(0);
      for (std::int64_t i = 0; i < plane; ++i) ym[i] = bias;
    }
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t g = 0; g < G; ++g)
      for (std::int64_t ic = 0; ic < Cg; ++ic) {
        const T* xc = x + (n * C + g * Cg + ic) * iplane;
        for (std::int64_t oc = 0; oc < Mg; ++oc) {
          T* ym = y + (n * M + g * Mg + oc) * plane;
          const T* wk = wt + ((g * Cg + ic) * Mg + oc) * kk;
          for (std::int64_t kd = 0; kd < w.k[0]; ++kd)
            for (std::int64_t kh = 0; kh < w.k[1]; ++kh)
              for (std::int64_t kw = 0; kw < w.k[2]; ++kw) {
                const T wv = wk[(kd * w.k[1] + kh) * w.k[2] + kw];
                // Input columns iw with ow = iw * s - p + kw * d in [0, OW).
                const std::int64_t off = kw * w.d[2] - w.pb[2];
                std::int64_t iw0 = off >= 0 ? 0 : (-off + w.s[2] - 1) / w.s[2];
                const std::int64_t last = OW - 1 - off;
                std::int64_t iw1 = last < 0 ? 0 : last / w.s[2] + 1;
                if (iw1 > W) iw1 = W;
                if (iw0 > iw1) iw0 = iw1;
                for (std::int64_t id = 0; id < D; ++id) {
                  const std::int64_t od = id * w.s[0] - w.pb[0] + kd * w.d[0];
                  if (od < 0 || od >= OD) continue;
                  for (std::int64_t ih = 0; ih < H; ++ih) {
                    const std::int64_t oh = ih * w.s[1] - w.pb[1] + kh * w.d[1];
                    if (oh < 0 || oh >= OH) continue;
                    const T* xr = xc + (id * H + ih) * W;
                    const std::int64_t yr = (od * OH + oh) * OW + off;  // may be < 0: an index
                    for (std::int64_t iw = iw0; iw < iw1; ++iw) ym[yr + iw * w.s[2]] += wv * xr[iw];
                  }
                }
              }
        }
      }
}

}  // namespace detail

/// ConvTranspose(x [N, C, spatial...], w [C, M / group, kernel...], b [M] or undefined; auto_pad,
/// group, strides, pads, dilations, output_padding, output_shape (empty lists: absent), out).
inline status ConvTranspose_out(const tensor& x, const tensor& w, const tensor& b, std::int64_t auto_pad, std::int64_t group,
                                const shape& strides, const shape& pads, const shape& dilations, const shape& output_padding,
                                const shape& output_shape, const tensor& out) {
  constexpr std::string_view fn = "onnx.ConvTranspose";
  RELAXVM_TRY(detail::conv_inputs(fn, x, w, b, group));
  const std::span<const std::int64_t> xd = x.shape().dims(), wd = w.shape().dims();
  const std::int64_t N = xd[0], C = xd[1];
  if (wd[0] != C) return detail::value_error(fn, ": the input has ", C, " channels but the weights ", wd[0]);
  if (C % group != 0) return detail::value_error(fn, ": ", C, " input channels do not split into ", group, " groups");
  const std::int64_t M = wd[1] * group;
  if (b.defined() && b.numel() != M) return detail::value_error(fn, ": the bias has ", b.numel(), " values for ", M, " output channels");
  detail::window win;
  RELAXVM_TRY(detail::resolve_transpose(fn, xd.subspan(2), wd.subspan(2), auto_pad, strides, pads, dilations, output_padding,
                                        output_shape, win));
  RELAXVM_TRY(detail::check_out(fn, out, 10, detail::window_out_dims(N, M, win).span(), x.dtype()));
  RELAXVM_TRY(detail::conv_alias(fn, x, w, b, out));
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>)
      detail::conv_transpose_run(static_cast<const T*>(x.raw_data()), static_cast<const T*>(w.raw_data()),
                                 b.defined() ? static_cast<const T*>(b.raw_data()) : nullptr, static_cast<T*>(out.raw_data()), N, C,
                                 group, wd[1], win);
  });
  return {};
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_CONV_HPP
