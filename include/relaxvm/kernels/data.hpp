// SPDX-License-Identifier: Apache-2.0
// Data movement kernels with ONNX's semantics: Transpose, Concat, Split, Slice, Gather,
// GatherElements, GatherND, ScatterElements, ScatterND, Pad, Expand, Tile, Cast, DepthToSpace,
// SpaceToDepth, Trilu, CumSum, OneHot, EyeLike, Range, ConstantOfShape and Size. Elements are
// moved by their size (1, 2, 4 or 8 bytes), so every dtype the checks accept takes the same code;
// only the ops that compute (Cast, CumSum, the scatter reductions, Range) visit the element type.
// No output may overlap an input (Scatter's output may be exactly its data: in place).
#ifndef RELAXVM_KERNELS_DATA_HPP
#define RELAXVM_KERNELS_DATA_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

/// ScatterElements' and ScatterND's reduction attribute, as the importer passes it.
enum class scatter_reduction : std::int64_t { none = 0, add = 1, mul = 2, max = 3, min = 4 };
/// Pad's mode attribute.
enum class pad_mode : std::int64_t { constant = 0, reflect = 1, edge = 2 };

namespace detail {

/// Calls f.template operator()<U>() with the unsigned integer type of `bytes` (1, 2, 4 or 8).
template <class F>
decltype(auto) visit_bytes(std::int64_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f.template operator()<std::uint8_t>();
    case 2: return f.template operator()<std::uint16_t>();
    case 4: return f.template operator()<std::uint32_t>();
    default: return f.template operator()<std::uint64_t>();
  }
}

/// The row-major element strides of `d`.
inline dims compact_strides(std::span<const std::int64_t> d) {
  dims s;
  s.rank = static_cast<int>(d.size());
  std::int64_t stride = 1;
  for (int k = s.rank - 1; k >= 0; --k) {
    s[k] = stride;
    stride *= d[static_cast<std::size_t>(k)];
  }
  return s;
}

inline std::int64_t product(std::span<const std::int64_t> d, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t k = from; k < to; ++k) p *= d[k];
  return p;
}

/// `axis` in [-rank, rank), made non-negative; false when outside.
inline bool normalize_axis(std::int64_t& axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

inline error bad_axis(std::string_view fn, std::int64_t axis, std::int64_t rank) {
  return value_error(fn, ": axis ", axis, " is outside [", -rank, ", ", rank, ")");
}

/// out[i] = in[base + offset of i under `strides`] over the dims of `shape` (out compact),
/// elements of `bytes` bytes. Dims of 1 are dropped and dims that are contiguous in both merged;
/// then rows contiguous in the input are copied whole, a transpose (some other dim contiguous in
/// the input) goes by 16 x 16 tiles so that reads and writes both stay in cache, and anything
/// else element by element.
inline void strided_copy(const void* in, void* out, std::int64_t bytes, const dims& shape_in, const dims& strides_in, std::int64_t base = 0) {
  if (shape_in.count() == 0) return;
  dims shape, st;
  for (int k = 0; k < shape_in.rank; ++k) {
    if (shape_in[k] == 1) continue;
    if (shape.rank > 0 && st[shape.rank - 1] == strides_in[k] * shape_in[k]) {
      shape[shape.rank - 1] *= shape_in[k];
      st[shape.rank - 1] = strides_in[k];
    } else {
      shape.push(shape_in[k]);
      st.push(strides_in[k]);
    }
  }
  visit_bytes(bytes, [&]<class U>() {
    const U* src = static_cast<const U*>(in) + base;
    U* dst = static_cast<U*>(out);
    if (shape.rank == 0) {
      dst[0] = src[0];
      return;
    }
    const int last = shape.rank - 1;
    const dims ds = compact_strides(shape.span());
    int tile = -1;  // a dim before the last that is contiguous in the input
    if (st[last] != 1)
      for (int k = 0; k < last; ++k)
        if (st[k] == 1) tile = k;
    // The dims walked by the outer loop: all but the last (and the tiled one).
    std::int64_t idx[max_rank] = {};
    for (;;) {
      std::int64_t so = 0, doff = 0;
      for (int k = 0; k < last; ++k) {
        so += idx[k] * st[k];
        doff += idx[k] * ds[k];
      }
      const std::int64_t n = shape[last], s = st[last];
      if (s == 1) {
        std::memcpy(dst + doff, src + so, static_cast<std::size_t>(n) * sizeof(U));
      } else if (tile >= 0) {
        constexpr std::int64_t T = 16;
        const std::int64_t m = shape[tile], dm = ds[tile];
        for (std::int64_t j0 = 0; j0 < m; j0 += T)
          for (std::int64_t i0 = 0; i0 < n; i0 += T) {
            const std::int64_t j1 = j0 + T < m ? j0 + T : m, i1 = i0 + T < n ? i0 + T : n;
            for (std::int64_t j = j0; j < j1; ++j) {
              const U* r = src + so + j;
              U* w = dst + doff + j * dm;
              for (std::int64_t i = i0; i < i1; ++i) w[i] = r[i * s];
            }
          }
      } else {
        U* w = dst + doff;
        const U* r = src + so;
        for (std::int64_t i = 0; i < n; ++i) w[i] = r[i * s];
      }
      int k = last - 1;
      for (; k >= 0; --k) {
        if (k == tile) continue;
        if (++idx[k] < shape[k]) break;
        idx[k] = 0;
      }
      if (k < 0) return;
    }
  });
}

/// The read-only view of a one-element tensor's value as T (integers and floats of any width).
template <class T>
T scalar_as(const tensor& t) {
  return visit(t.dtype(), [&]<class S>() { return static_cast<T>(static_cast<const S*>(t.raw_data())[0]); });
}

/// A one-element argument of an integer type (CumSum's axis, Trilu's k).
inline status check_int_scalar(std::string_view fn, const tensor& t, std::size_t i) {
  RELAXVM_TRY(check_in(fn, t, i, signed_ints));
  if (t.numel() != 1) return value_error(fn, ": argument ", i, " must hold one value, but holds ", t.numel());
  return {};
}

/// An int list argument (Slice's starts, Pad's pads): a 1-D int32 or int64 tensor of at most
/// `cap` values, read into `out` (`n` of them). Lists whose values may be negative are tensors,
/// not shapes.
inline status read_ints(std::string_view fn, const tensor& t, std::size_t i, std::int64_t* out, std::int64_t cap, std::int64_t& n) {
  RELAXVM_TRY(check_in(fn, t, i, signed_ints));
  if ((t.dtype().bits != 32 && t.dtype().bits != 64) || t.ndim() != 1)
    return value_error(fn, ": argument ", i, " must be a 1-d int32 or int64 list, but is ", t.dtype(), " of shape ", dims_text{t.shape().dims()});
  n = t.numel();
  if (n > cap) return value_error(fn, ": argument ", i, " has ", n, " values; at most ", cap, " fit");
  for (std::int64_t k = 0; k < n; ++k)
    out[k] = t.dtype().bits == 64 ? static_cast<const std::int64_t*>(t.raw_data())[k] : static_cast<const std::int32_t*>(t.raw_data())[k];
  return {};
}

/// An index read from an int32 or int64 tensor, negative ones counted from the end of `n`; false
/// when outside [-n, n).
inline bool read_index(const void* p, bool wide, std::int64_t k, std::int64_t n, std::int64_t& out) {
  std::int64_t v = wide ? static_cast<const std::int64_t*>(p)[k] : static_cast<const std::int32_t*>(p)[k];
  if (v < -n || v >= n) {
    out = v;
    return false;
  }
  out = v < 0 ? v + n : v;
  return true;
}

inline error bad_index(std::string_view fn, std::int64_t v, std::int64_t n) {
  return value_error(fn, ": index ", v, " is outside [", -n, ", ", n, ")");
}

/// ONNX's Slice on one dimension of size d: the first element and the count, with negative
/// starts and ends counted from the end and both clamped (to [0, d] going forwards, to [0, d-1]
/// and [-1, d-1] going backwards).
constexpr void slice_range(std::int64_t d, std::int64_t start, std::int64_t end, std::int64_t step, std::int64_t& first,
                           std::int64_t& count) {
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = start < 0 ? 0 : (start > d ? d : start);
    end = end < 0 ? 0 : (end > d ? d : end);
    count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = start < 0 ? 0 : (start > d - 1 ? d - 1 : start);
    end = end < -1 ? -1 : (end > d - 1 ? d - 1 : end);
    count = start > end ? (start - end - 1) / (-step) + 1 : 0;  // step > INT64_MIN (checked)
  }
  first = start;
}

template <class T>
T reduce(scatter_reduction r, T a, T b) {
  switch (r) {
    case scatter_reduction::add: return arith(a, b, std::plus<>());  // integers wrap
    case scatter_reduction::mul: return arith(a, b, std::multiplies<>());
    case scatter_reduction::max: return a > b ? a : b;
    case scatter_reduction::min: return a < b ? a : b;
    default: return b;
  }
}

inline bool valid_reduction(std::int64_t r) { return r >= 0 && r <= 4; }

}  // namespace detail

// ---- permutations ----------------------------------------------------------------------------

/// Transpose(x, perm): out's dim k is x's dim perm[k].
inline status Transpose_out(const tensor& x, const shape& perm, const tensor& out) {
  constexpr std::string_view fn = "onnx.Transpose";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  const std::span<const std::int64_t> xd = x.shape().dims();
  const std::span<const std::int64_t> p = perm.dims();
  if (p.size() != xd.size()) return detail::value_error(fn, ": perm has ", p.size(), " entries for an input of rank ", xd.size());
  const detail::dims xs = detail::compact_strides(xd);
  detail::dims od, st;
  bool seen[max_rank] = {};
  for (std::size_t k = 0; k < p.size(); ++k) {
    const std::int64_t a = p[k];
    if (a < 0 || a >= static_cast<std::int64_t>(xd.size()) || seen[a])
      return detail::value_error(fn, ": perm ", detail::dims_text{p}, " is not a permutation of the input's ", xd.size(), " axes");
    seen[a] = true;
    od.push(xd[static_cast<std::size_t>(a)]);
    st.push(xs[static_cast<int>(a)]);
  }
  RELAXVM_TRY(detail::check_out(fn, out, 2, od.span(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  detail::strided_copy(x.raw_data(), out.raw_data(), x.dtype().bytes(), od, st);
  return {};
}

/// DepthToSpace(x, blocksize, mode): x (N, C, H, W) to (N, C/(b*b), H*b, W*b); mode 0 is DCR
/// (depth, column, row: channels split as (b, b, C')), 1 is CRD (as (C', b, b)).
inline status DepthToSpace_out(const tensor& x, std::int64_t blocksize, std::int64_t mode, const tensor& out) {
  constexpr std::string_view fn = "onnx.DepthToSpace";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  const std::span<const std::int64_t> d = x.shape().dims();
  if (d.size() != 4) return detail::value_error(fn, ": the input must have 4 dims (N, C, H, W), but has ", d.size());
  const std::int64_t b = blocksize;
  if (b <= 0 || d[1] % (b * b) != 0) return detail::value_error(fn, ": blocksize ", b, " squared does not divide the ", d[1], " channels");
  if (mode != 0 && mode != 1) return detail::value_error(fn, ": mode must be 0 (DCR) or 1 (CRD), not ", mode);
  const std::int64_t n = d[0], c = d[1] / (b * b), h = d[2], w = d[3];
  const std::int64_t want[] = {n, c, h * b, w * b};
  RELAXVM_TRY(detail::check_out(fn, out, 3, want, x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  // x as 6 dims, read in the order of out's (n, c, h, b1, w, b2).
  detail::dims shape6, st;
  const std::int64_t hw = h * w;
  for (std::int64_t v : {n, c, h, b, w, b}) shape6.push(v);
  const std::int64_t sn = d[1] * hw;
  if (mode == 0) {  // x as (n, b1, b2, c, h, w)
    const std::int64_t s[] = {sn, hw, w, b * c * hw, 1, c * hw};
    for (std::int64_t v : s) st.push(v);
  } else {  // x as (n, c, b1, b2, h, w)
    const std::int64_t s[] = {sn, b * b * hw, w, b * hw, 1, hw};
    for (std::int64_t v : s) st.push(v);
  }
  detail::strided_copy(x.raw_data(), out.raw_data(), x.dtype().bytes(), shape6, st);
  return {};
}

/// SpaceToDepth(x, blocksize): x (N, C, H, W) to (N, C*b*b, H/b, W/b), channels as (b, b, C).
inline status SpaceToDepth_out(const tensor& x, std::int64_t blocksize, const tensor& out) {
  constexpr std::string_view fn = "onnx.SpaceToDepth";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  const std::span<const std::int64_t> d = x.shape().dims();
  if (d.size() != 4) return detail::value_error(fn, ": the input must have 4 dims (N, C, H, W), but has ", d.size());
  const std::int64_t b = blocksize;
  if (b <= 0 || d[2] % b != 0 || d[3] % b != 0)
    return detail::value_error(fn, ": blocksize ", b, " does not divide the spatial dims ", d[2], " and ", d[3]);
  const std::int64_t n = d[0], c = d[1], h = d[2] / b, w = d[3] / b;
  const std::int64_t want[] = {n, c * b * b, h, w};
  RELAXVM_TRY(detail::check_out(fn, out, 2, want, x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  // out as (n, b1, b2, c, h, w) reads x as (n, c, h, b1, w, b2).
  detail::dims shape6, st;
  for (std::int64_t v : {n, b, b, c, h, w}) shape6.push(v);
  const std::int64_t W = d[3];
  const std::int64_t s[] = {c * d[2] * W, W, 1, d[2] * W, b * W, b};
  for (std::int64_t v : s) st.push(v);
  detail::strided_copy(x.raw_data(), out.raw_data(), x.dtype().bytes(), shape6, st);
  return {};
}

// ---- joining and cutting ---------------------------------------------------------------------

/// Concat(inputs..., axis): the inputs joined along `axis`; all of one dtype and rank, equal in
/// the other dims.
inline status Concat_out(std::span<const tensor> in, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "onnx.Concat";
  if (in.empty()) return detail::value_error(fn, ": needs at least one input");
  for (std::size_t i = 0; i < in.size(); ++i) {
    RELAXVM_TRY(detail::check_in(fn, in[i], i, detail::any_type));
    RELAXVM_TRY(detail::same_type(fn, in[0], 0, in[i], i));
  }
  const std::span<const std::int64_t> d0 = in[0].shape().dims();
  const auto rank = static_cast<std::int64_t>(d0.size());
  if (!detail::normalize_axis(axis, rank)) return detail::bad_axis(fn, axis, rank);
  detail::dims od(d0);
  od[static_cast<int>(axis)] = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::span<const std::int64_t> di = in[i].shape().dims();
    bool ok = di.size() == d0.size();
    for (std::size_t k = 0; ok && k < di.size(); ++k) ok = k == static_cast<std::size_t>(axis) || di[k] == d0[k];
    if (!ok)
      return detail::value_error(fn, ": input ", i, " has shape ", detail::dims_text{di}, ", which does not join input 0's ",
                                 detail::dims_text{d0}, " along axis ", axis);
    od[static_cast<int>(axis)] += di[static_cast<std::size_t>(axis)];
  }
  RELAXVM_TRY(detail::check_out(fn, out, in.size() + 1, od.span(), in[0].dtype()));
  for (std::size_t i = 0; i < in.size(); ++i) RELAXVM_TRY(detail::check_alias(fn, in[i], i, out, false));
  const auto a = static_cast<std::size_t>(axis);
  const std::int64_t outer = detail::product(d0, 0, a), inner = detail::product(d0, a + 1, d0.size());
  const std::int64_t bytes = in[0].dtype().bytes();
  auto* dst = static_cast<char*>(out.raw_data());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const tensor& t : in) {
      const std::int64_t chunk = t.shape().dims()[a] * inner * bytes;
      if (chunk == 0) continue;
      std::memcpy(dst, static_cast<const char*>(t.raw_data()) + o * chunk, static_cast<std::size_t>(chunk));
      dst += chunk;
    }
  }
  return {};
}

/// Split(x, axis, outputs...): x cut along `axis` into the outputs, whose sizes along it (their
/// shapes) say where; they must add up to x's.
inline status Split_out(const tensor& x, std::int64_t axis, std::span<const tensor> outs) {
  constexpr std::string_view fn = "onnx.Split";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  if (outs.empty()) return detail::value_error(fn, ": needs at least one output");
  const std::span<const std::int64_t> d = x.shape().dims();
  const auto rank = static_cast<std::int64_t>(d.size());
  if (!detail::normalize_axis(axis, rank)) return detail::bad_axis(fn, axis, rank);
  const auto a = static_cast<std::size_t>(axis);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    RELAXVM_TRY(detail::check_in(fn, outs[i], i + 2, detail::any_type));
    detail::dims want(d);
    want[static_cast<int>(a)] = outs[i].ndim() == rank ? outs[i].shape().dims()[a] : 0;
    RELAXVM_TRY(detail::check_out(fn, outs[i], i + 2, want.span(), x.dtype()));
    RELAXVM_TRY(detail::check_alias(fn, x, 0, outs[i], false));
    for (std::size_t j = 0; j < i; ++j) RELAXVM_TRY(detail::check_alias(fn, outs[j], j + 2, outs[i], false));
    total += want[static_cast<int>(a)];
  }
  if (total != d[a]) return detail::value_error(fn, ": the outputs' sizes along axis ", axis, " add up to ", total, ", not ", d[a]);
  const std::int64_t outer = detail::product(d, 0, a), inner = detail::product(d, a + 1, d.size());
  const std::int64_t bytes = x.dtype().bytes();
  const auto* src = static_cast<const char*>(x.raw_data());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const tensor& t : outs) {
      const std::int64_t chunk = t.shape().dims()[a] * inner * bytes;
      if (chunk == 0) continue;
      std::memcpy(static_cast<char*>(t.raw_data()) + o * chunk, src, static_cast<std::size_t>(chunk));
      src += chunk;
    }
  }
  return {};
}

namespace detail {

/// ONNX's Slice lists (1-d int32 or int64 tensors of one length: starts, ends, axes, steps, as
/// arguments 1-4 of `fn`) resolved over dims `d`: per axis, the first index taken, the count
/// taken and the step (axes not listed: all of it, step 1). Axes may be negative, starts and ends
/// are clamped, a step is not 0. onnx.Slice and onnx.Slice.shape share it.
inline status slice_plan(std::string_view fn, std::span<const std::int64_t> d, const tensor& starts, const tensor& ends,
                         const tensor& axes, const tensor& steps, dims& first, dims& count, dims& step) {
  const auto rank = static_cast<std::int64_t>(d.size());
  std::int64_t st[max_rank], en[max_rank], ax[max_rank], sp[max_rank];
  std::int64_t n = 0, n_en = 0, n_ax = 0, n_sp = 0;
  RELAXVM_TRY(read_ints(fn, starts, 1, st, rank, n));
  RELAXVM_TRY(read_ints(fn, ends, 2, en, rank, n_en));
  RELAXVM_TRY(read_ints(fn, axes, 3, ax, rank, n_ax));
  RELAXVM_TRY(read_ints(fn, steps, 4, sp, rank, n_sp));
  if (n_en != n || n_ax != n || n_sp != n)
    return value_error(fn, ": starts, ends, axes and steps must have one length, but have ", n, ", ", n_en, ", ", n_ax, " and ", n_sp);
  first = dims();
  count = dims(d);
  step = dims();
  first.rank = step.rank = static_cast<int>(rank);
  for (int k = 0; k < step.rank; ++k) first[k] = 0, step[k] = 1;
  bool seen[max_rank] = {};
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t a = ax[i];
    if (!normalize_axis(a, rank)) return bad_axis(fn, a, rank);
    if (seen[a]) return value_error(fn, ": axis ", ax[i], " is given twice");
    seen[a] = true;
    const std::int64_t s = sp[i];
    if (s == 0 || s == std::numeric_limits<std::int64_t>::min()) return value_error(fn, ": a step is ", s);
    const int k = static_cast<int>(a);
    slice_range(d[static_cast<std::size_t>(a)], st[i], en[i], s, first[k], count[k]);
    step[k] = s;
  }
  return {};
}

}  // namespace detail

/// Slice(x, starts, ends, axes, steps): ONNX's Slice with its lists (1-d int32 or int64
/// tensors of one length) as given: axes may be negative, starts and ends are clamped, a step is
/// not 0.
inline status Slice_out(const tensor& x, const tensor& starts, const tensor& ends, const tensor& axes, const tensor& steps,
                        const tensor& out) {
  constexpr std::string_view fn = "onnx.Slice";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  const std::span<const std::int64_t> d = x.shape().dims();
  detail::dims first, count, step;
  RELAXVM_TRY(detail::slice_plan(fn, d, starts, ends, axes, steps, first, count, step));
  RELAXVM_TRY(detail::check_out(fn, out, 5, count.span(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  const detail::dims xs = detail::compact_strides(d);
  detail::dims strides;
  std::int64_t base = 0;
  for (int k = 0; k < xs.rank; ++k) {
    strides.push(xs[k] * step[k]);
    if (count[k] > 0) base += first[k] * xs[k];
  }
  detail::strided_copy(x.raw_data(), out.raw_data(), x.dtype().bytes(), count, strides, base);
  return {};
}

/// Pad(x, pads, mode, value): pads (a 1-d int32 or int64 tensor) holds the begin pads of every
/// axis, then the end pads (negative ones crop); mode constant fills with `value` (one element of
/// x's dtype, or undefined for 0), reflect mirrors without repeating the edge, edge repeats it.
inline status Pad_out(const tensor& x, const tensor& pads, std::int64_t mode, const tensor& value, const tensor& out) {
  constexpr std::string_view fn = "onnx.Pad";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  const std::span<const std::int64_t> d = x.shape().dims();
  std::int64_t pv[2 * max_rank];
  std::int64_t np = 0;
  RELAXVM_TRY(detail::read_ints(fn, pads, 1, pv, 2 * max_rank, np));
  const std::span<const std::int64_t> p(pv, static_cast<std::size_t>(np));
  const std::size_t rank = d.size();
  if (p.size() != 2 * rank) return detail::value_error(fn, ": pads has ", p.size(), " entries for an input of rank ", rank, " (2 per axis)");
  if (mode < 0 || mode > 2) return detail::value_error(fn, ": mode must be 0 (constant), 1 (reflect) or 2 (edge), not ", mode);
  if (value.defined()) {
    RELAXVM_TRY(detail::check_in(fn, value, 3, detail::any_type));
    RELAXVM_TRY(detail::same_type(fn, x, 0, value, 3));
    if (value.numel() != 1) return detail::value_error(fn, ": the constant value must be one element, but has ", value.numel());
  }
  detail::dims od;
  for (std::size_t k = 0; k < rank; ++k) {
    const std::int64_t v = d[k] + p[k] + p[k + rank];
    if (v < 0) return detail::value_error(fn, ": pads ", detail::dims_text{p}, " crop axis ", k, " below 0");
    od.push(v);
  }
  const auto m = static_cast<pad_mode>(mode);
  for (std::size_t k = 0; k < rank; ++k)
    if (m != pad_mode::constant && d[k] == 0 && od[static_cast<int>(k)] > 0)
      return detail::value_error(fn, ": ", m == pad_mode::edge ? "edge" : "reflect", " padding of an empty axis ", k);
  RELAXVM_TRY(detail::check_out(fn, out, 4, od.span(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  if (od.count() == 0) return {};
  // The source coordinate of out coordinate o along axis k, or -1 for the constant.
  const auto source = [&](std::size_t k, std::int64_t o) -> std::int64_t {
    const std::int64_t n = d[k];
    std::int64_t c = o - p[k];
    if (c >= 0 && c < n) return c;
    if (m == pad_mode::constant) return -1;
    if (m == pad_mode::edge) return c < 0 ? 0 : n - 1;
    if (n == 1) return 0;
    const std::int64_t period = 2 * (n - 1);
    c %= period;
    if (c < 0) c += period;
    return c < n ? c : period - c;
  };
  const detail::dims xs = detail::compact_strides(d);
  detail::visit_bytes(x.dtype().bytes(), [&]<class U>() {
    const U* src = static_cast<const U*>(x.raw_data());
    U* dst = static_cast<U*>(out.raw_data());
    U fill{};
    if (value.defined()) std::memcpy(&fill, value.raw_data(), sizeof(U));
    if (rank == 0) {
      dst[0] = src[0];
      return;
    }
    const std::size_t last = rank - 1;
    const std::int64_t row = od[static_cast<int>(last)];
    std::int64_t idx[max_rank] = {};
    for (;;) {
      // The source row for the outer coordinates, or none (constant).
      std::int64_t base = 0;
      bool constant_row = false;
      for (std::size_t k = 0; k < last; ++k) {
        const std::int64_t s = source(k, idx[k]);
        if (s < 0) constant_row = true;
        else base += s * xs[static_cast<int>(k)];
      }
      if (constant_row) {
        for (std::int64_t j = 0; j < row; ++j) dst[j] = fill;
      } else {
        // Out [lo, hi) is the input row (from lo - p[last]); the pads around it are worked out.
        const U* r = src + base;
        const std::int64_t pb = p[last], n = d[last];
        const std::int64_t lo = pb > 0 ? pb : 0, hi = pb + n < row ? pb + n : row;
        if (hi > lo) std::memcpy(dst + lo, r + (lo - pb), static_cast<std::size_t>(hi - lo) * sizeof(U));
        const auto pad = [&](std::int64_t j) {
          const std::int64_t s = source(last, j);
          dst[j] = s < 0 ? fill : r[s];
        };
        for (std::int64_t j = 0; j < (hi > lo ? lo : row); ++j) pad(j);
        for (std::int64_t j = hi > lo ? hi : row; j < row; ++j) pad(j);
      }
      dst += row;
      int k = static_cast<int>(last) - 1;
      for (; k >= 0; --k) {
        if (++idx[k] < od[k]) break;
        idx[k] = 0;
      }
      if (k < 0) return;
    }
  });
  return {};
}

/// Expand(x, out): x broadcast (NumPy's rules) to out's shape, which the importer computed
/// from the shape input.
inline status Expand_out(const tensor& x, const tensor& out) {
  constexpr std::string_view fn = "onnx.Expand";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  RELAXVM_TRY(detail::check_in(fn, out, 1, detail::any_type));
  detail::dims od;
  if (!detail::broadcast_dims(x.shape().dims(), out.shape().dims(), od))
    return detail::value_error(fn, ": shape ", detail::dims_text{x.shape().dims()}, " does not broadcast to ", detail::dims_text{out.shape().dims()});
  RELAXVM_TRY(detail::check_out(fn, out, 1, od.span(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  detail::strided_copy(x.raw_data(), out.raw_data(), x.dtype().bytes(), od, detail::broadcast_strides(x.shape().dims(), od));
  return {};
}

/// Tile(x, repeats): x repeated repeats[k] times along each axis k.
inline status Tile_out(const tensor& x, const shape& repeats, const tensor& out) {
  constexpr std::string_view fn = "onnx.Tile";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  const std::span<const std::int64_t> d = x.shape().dims();
  const std::span<const std::int64_t> r = repeats.dims();
  if (r.size() != d.size()) return detail::value_error(fn, ": repeats has ", r.size(), " entries for an input of rank ", d.size());
  detail::dims od;
  for (std::size_t k = 0; k < d.size(); ++k) {
    if (r[k] < 0) return detail::value_error(fn, ": repeats ", detail::dims_text{r}, " has a negative count");
    od.push(d[k] * r[k]);
  }
  RELAXVM_TRY(detail::check_out(fn, out, 2, od.span(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  if (od.count() == 0) return {};
  const detail::dims xs = detail::compact_strides(d);
  detail::visit_bytes(x.dtype().bytes(), [&]<class U>() {
    const U* src = static_cast<const U*>(x.raw_data());
    U* dst = static_cast<U*>(out.raw_data());
    if (d.empty()) {
      dst[0] = src[0];
      return;
    }
    const std::size_t last = d.size() - 1;
    const std::int64_t n = d[last], row = od[static_cast<int>(last)];
    std::int64_t idx[max_rank] = {};
    for (;;) {
      std::int64_t base = 0;
      for (std::size_t k = 0; k < last; ++k) base += (idx[k] % d[k]) * xs[static_cast<int>(k)];
      for (std::int64_t j = 0; j < row; j += n) std::memcpy(dst + j, src + base, static_cast<std::size_t>(n) * sizeof(U));
      dst += row;
      int k = static_cast<int>(last) - 1;
      for (; k >= 0; --k) {
        if (++idx[k] < od[k]) break;
        idx[k] = 0;
      }
      if (k < 0) return;
    }
  });
  return {};
}

/// Trilu(x, k, upper): the lower (upper = 0) or upper triangle of each matrix of x's last two
/// dims from diagonal k (one int64 element, or undefined for 0); the rest zero.
inline status Trilu_out(const tensor& x, const tensor& k, std::int64_t upper, const tensor& out) {
  constexpr std::string_view fn = "onnx.Trilu";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  if (x.ndim() < 2) return detail::value_error(fn, ": the input must have at least 2 dims, but has ", x.ndim());
  if (k.defined()) RELAXVM_TRY(detail::check_int_scalar(fn, k, 1));
  RELAXVM_TRY(detail::check_out(fn, out, 3, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, true));
  const std::int64_t diag = k.defined() ? detail::scalar_as<std::int64_t>(k) : 0;
  const std::span<const std::int64_t> d = x.shape().dims();
  const std::int64_t rows = d[d.size() - 2], cols = d[d.size() - 1];
  const std::int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  detail::visit_bytes(x.dtype().bytes(), [&]<class U>() {
    const U* src = static_cast<const U*>(x.raw_data());
    U* dst = static_cast<U*>(out.raw_data());
    for (std::int64_t m = 0; m < mats; ++m)
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
          const std::int64_t at = (m * rows + i) * cols + j;
          const bool keep = upper != 0 ? j - i >= diag : j - i <= diag;
          dst[at] = keep ? src[at] : U(0);
        }
  });
  return {};
}

// ---- gathering and scattering ----------------------------------------------------------------

/// Gather(data, indices, axis): out = data[..., indices, ...] along `axis` (indices int32 or
/// int64, negative ones from the end); out's shape is data's with that axis replaced by indices'.
inline status Gather_out(const tensor& data, const tensor& indices, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "onnx.Gather";
  RELAXVM_TRY(detail::check_in(fn, data, 0, detail::any_type));
  RELAXVM_TRY(detail::check_in(fn, indices, 1, detail::signed_ints));
  if (indices.dtype().bits != 32 && indices.dtype().bits != 64) return detail::bad_type(fn, 1, indices.dtype());
  const std::span<const std::int64_t> d = data.shape().dims();
  const auto rank = static_cast<std::int64_t>(d.size());
  if (!detail::normalize_axis(axis, rank)) return detail::bad_axis(fn, axis, rank);
  const auto a = static_cast<std::size_t>(axis);
  detail::dims od;
  for (std::size_t k = 0; k < a; ++k) od.push(d[k]);
  if (od.rank + indices.ndim() + (d.size() - a - 1) > static_cast<std::size_t>(max_rank))
    return detail::value_error(fn, ": the result would have more than ", max_rank, " dims");
  for (std::int64_t v : indices.shape().dims()) od.push(v);
  for (std::size_t k = a + 1; k < d.size(); ++k) od.push(d[k]);
  RELAXVM_TRY(detail::check_out(fn, out, 3, od.span(), data.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, data, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, indices, 1, out, false));
  const std::int64_t outer = detail::product(d, 0, a), n = d[a], inner = detail::product(d, a + 1, d.size());
  const std::int64_t count = indices.numel(), bytes = data.dtype().bytes();
  const bool wide = indices.dtype().bits == 64;
  for (std::int64_t i = 0; i < count; ++i) {  // every index checked before anything is written
    std::int64_t v;
    if (!detail::read_index(indices.raw_data(), wide, i, n, v)) return detail::bad_index(fn, v, n);
  }
  const auto* src = static_cast<const char*>(data.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  const std::int64_t row = inner * bytes;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < count; ++i) {
      std::int64_t v;
      detail::read_index(indices.raw_data(), wide, i, n, v);
      if (row > 0) std::memcpy(dst, src + (o * n + v) * row, static_cast<std::size_t>(row));
      dst += row;
    }
  return {};
}

namespace detail {
// GatherElements' and ScatterElements' checks: data and indices of one rank; indices int32/int64;
// the axis normalized.
inline status elements_checks(std::string_view fn, const tensor& data, const tensor& indices, std::int64_t& axis) {
  RELAXVM_TRY(check_in(fn, data, 0, any_type));
  RELAXVM_TRY(check_in(fn, indices, 1, signed_ints));
  if (indices.dtype().bits != 32 && indices.dtype().bits != 64) return bad_type(fn, 1, indices.dtype());
  if (indices.ndim() != data.ndim())
    return value_error(fn, ": indices have rank ", indices.ndim(), " but data has rank ", data.ndim(), "; they must match");
  if (!normalize_axis(axis, data.ndim())) return bad_axis(fn, axis, data.ndim());
  return {};
}
}  // namespace detail

/// GatherElements(data, indices, axis): out has indices' shape; out[i..] = data[i.. with the axis
/// coordinate replaced by indices[i..]].
inline status GatherElements_out(const tensor& data, const tensor& indices, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "onnx.GatherElements";
  RELAXVM_TRY(detail::elements_checks(fn, data, indices, axis));
  const std::span<const std::int64_t> d = data.shape().dims(), id = indices.shape().dims();
  for (std::size_t k = 0; k < d.size(); ++k)
    if (k != static_cast<std::size_t>(axis) && id[k] > d[k])
      return detail::value_error(fn, ": indices' shape ", detail::dims_text{id}, " exceeds data's ", detail::dims_text{d}, " along axis ", k);
  RELAXVM_TRY(detail::check_out(fn, out, 3, id, data.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, data, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, indices, 1, out, false));
  const detail::dims ids(id);
  detail::dims ds = detail::compact_strides(d);
  const std::int64_t along = ds[static_cast<int>(axis)], n = d[static_cast<std::size_t>(axis)];
  ds[static_cast<int>(axis)] = 0;
  const detail::dims strides[1] = {ds};
  const bool wide = indices.dtype().bits == 64;
  std::int64_t bad = 0;
  bool ok = true;
  detail::visit_bytes(data.dtype().bytes(), [&]<class U>() {
    const U* src = static_cast<const U*>(data.raw_data());
    U* dst = static_cast<U*>(out.raw_data());
    detail::for_each_index(ids, strides, [&](std::int64_t i, const std::int64_t* off) {
      std::int64_t v;
      if (!detail::read_index(indices.raw_data(), wide, i, n, v)) {
        if (ok) bad = v;
        ok = false;
        return;
      }
      dst[i] = src[off[0] + v * along];
    });
  });
  if (!ok) return detail::bad_index(fn, bad, n);
  return {};
}

/// ScatterElements(data, indices, updates, axis, reduction): out = data, then each update
/// written (or combined: scatter_reduction) at its position with the axis coordinate replaced
/// by its index. out may be exactly data (in place).
inline status ScatterElements_out(const tensor& data, const tensor& indices, const tensor& updates, std::int64_t axis,
                                  std::int64_t reduction, const tensor& out) {
  constexpr std::string_view fn = "onnx.ScatterElements";
  RELAXVM_TRY(detail::elements_checks(fn, data, indices, axis));
  RELAXVM_TRY(detail::check_in(fn, updates, 2, detail::any_type));
  RELAXVM_TRY(detail::same_type(fn, data, 0, updates, 2));
  if (!detail::valid_reduction(reduction)) return detail::value_error(fn, ": reduction ", reduction, " is not one of none, add, mul, max, min");
  if (reduction != 0 && data.dtype().is_bool()) return detail::value_error(fn, ": a reduction of bool data");
  const std::span<const std::int64_t> d = data.shape().dims(), id = indices.shape().dims(), ud = updates.shape().dims();
  if (!std::equal(id.begin(), id.end(), ud.begin(), ud.end()))
    return detail::value_error(fn, ": updates have shape ", detail::dims_text{ud}, " but indices ", detail::dims_text{id}, "; they must match");
  for (std::size_t k = 0; k < d.size(); ++k)
    if (k != static_cast<std::size_t>(axis) && id[k] > d[k])
      return detail::value_error(fn, ": indices' shape ", detail::dims_text{id}, " exceeds data's ", detail::dims_text{d}, " along axis ", k);
  RELAXVM_TRY(detail::check_out(fn, out, 5, d, data.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, data, 0, out, true));
  RELAXVM_TRY(detail::check_alias(fn, indices, 1, out, false));
  RELAXVM_TRY(detail::check_alias(fn, updates, 2, out, false));
  const std::int64_t n = d[static_cast<std::size_t>(axis)];
  const bool wide = indices.dtype().bits == 64;
  for (std::int64_t i = 0; i < indices.numel(); ++i) {
    std::int64_t v;
    if (!detail::read_index(indices.raw_data(), wide, i, n, v)) return detail::bad_index(fn, v, n);
  }
  if (out.raw_data() != data.raw_data() && data.nbytes() > 0) std::memcpy(out.raw_data(), data.raw_data(), static_cast<std::size_t>(data.nbytes()));
  const detail::dims ids(id);
  detail::dims ds = detail::compact_strides(d);
  const std::int64_t along = ds[static_cast<int>(axis)];
  ds[static_cast<int>(axis)] = 0;
  const detail::dims strides[1] = {ds};
  const auto r = static_cast<scatter_reduction>(reduction);
  detail::visit(data.dtype(), [&]<class T>() {
    const T* up = static_cast<const T*>(updates.raw_data());
    T* dst = static_cast<T*>(out.raw_data());
    detail::for_each_index(ids, strides, [&](std::int64_t i, const std::int64_t* off) {
      std::int64_t v;
      detail::read_index(indices.raw_data(), wide, i, n, v);
      T& o = dst[off[0] + v * along];
      if constexpr (std::is_same_v<T, bool>) o = up[i];
      else o = detail::reduce(r, o, up[i]);
    });
  });
  return {};
}

namespace detail {
// GatherND's and ScatterND's index tuples: indices (int64) of shape (..., m) address data's
// first m dims (after `batch` batch dims); each tuple's element offset, in units of the slice
// data[b.., i_1, ..., i_m, ...], is checked and made non-negative.
inline status nd_offsets_ok(std::string_view fn, const tensor& data, const tensor& indices, std::int64_t batch) {
  const std::span<const std::int64_t> d = data.shape().dims();
  const std::int64_t m = indices.ndim() == 0 ? 0 : indices.shape().dims().back();
  const auto ub = static_cast<std::size_t>(batch);
  const auto* p = static_cast<const std::int64_t*>(indices.raw_data());
  const std::int64_t tuples = m == 0 ? 0 : indices.numel() / m;
  for (std::int64_t t = 0; t < tuples; ++t)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t n = d[ub + static_cast<std::size_t>(j)], v = p[t * m + j];
      if (v < -n || v >= n) return bad_index(fn, v, n);
    }
  return {};
}
inline std::int64_t nd_offset(std::span<const std::int64_t> d, std::size_t from, const std::int64_t* tuple, std::int64_t m) {
  std::int64_t off = 0;
  for (std::int64_t j = 0; j < m; ++j) {
    const std::int64_t n = d[from + static_cast<std::size_t>(j)];
    const std::int64_t v = tuple[j] < 0 ? tuple[j] + n : tuple[j];
    off = off * n + v;
  }
  return off;
}
}  // namespace detail

/// GatherND(data, indices, batch_dims): for each index tuple (indices' last dim, m long), the
/// slice data[b.., i_1, ..., i_m]; the first batch_dims dims of data and indices are paired.
inline status GatherND_out(const tensor& data, const tensor& indices, std::int64_t batch_dims, const tensor& out) {
  constexpr std::string_view fn = "onnx.GatherND";
  RELAXVM_TRY(detail::check_in(fn, data, 0, detail::any_type));
  RELAXVM_TRY(detail::check_in(fn, indices, 1, detail::signed_ints));
  if (indices.dtype() != dtype::int64()) return detail::bad_type(fn, 1, indices.dtype());
  const std::span<const std::int64_t> d = data.shape().dims(), id = indices.shape().dims();
  const std::int64_t b = batch_dims, r = data.ndim(), q = indices.ndim();
  if (q < 1 || b < 0 || b >= q || b >= r) return detail::value_error(fn, ": batch_dims ", b, " must be below the ranks of data (", r, ") and indices (", q, ")");
  const std::int64_t m = id.back();
  if (m < 1 || b + m > r) return detail::value_error(fn, ": index tuples of ", m, " entries address data of rank ", r, " after ", b, " batch dims");
  const auto ub = static_cast<std::size_t>(b);
  for (std::size_t k = 0; k < ub; ++k)
    if (d[k] != id[k]) return detail::value_error(fn, ": the batch dims of data ", detail::dims_text{d}, " and indices ", detail::dims_text{id}, " differ");
  detail::dims od;
  for (std::size_t k = 0; k + 1 < id.size(); ++k) od.push(id[k]);
  if (od.rank + (r - b - m) > max_rank) return detail::value_error(fn, ": the result would have more than ", max_rank, " dims");
  for (std::size_t k = ub + static_cast<std::size_t>(m); k < d.size(); ++k) od.push(d[k]);
  RELAXVM_TRY(detail::check_out(fn, out, 3, od.span(), data.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, data, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, indices, 1, out, false));
  RELAXVM_TRY(detail::nd_offsets_ok(fn, data, indices, b));
  const std::int64_t batches = detail::product(d, 0, ub);
  const std::int64_t slice = detail::product(d, ub + static_cast<std::size_t>(m), d.size()) * data.dtype().bytes();
  const std::int64_t block = detail::product(d, ub, d.size()) * data.dtype().bytes();
  const std::int64_t per_batch = batches == 0 ? 0 : (indices.numel() / m) / batches;
  const auto* p = static_cast<const std::int64_t*>(indices.raw_data());
  const auto* src = static_cast<const char*>(data.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (std::int64_t bi = 0; bi < batches; ++bi)
    for (std::int64_t t = 0; t < per_batch; ++t) {
      const std::int64_t off = detail::nd_offset(d, ub, p + (bi * per_batch + t) * m, m);
      if (slice > 0) std::memcpy(dst, src + bi * block + off * slice, static_cast<std::size_t>(slice));
      dst += slice;
    }
  return {};
}

/// ScatterND(data, indices, updates, reduction): out = data, then each slice of updates written
/// (or combined) at data[i_1, ..., i_m]; updates' shape is indices.shape[:-1] + data.shape[m:].
/// out may be exactly data.
inline status ScatterND_out(const tensor& data, const tensor& indices, const tensor& updates, std::int64_t reduction, const tensor& out) {
  constexpr std::string_view fn = "onnx.ScatterND";
  RELAXVM_TRY(detail::check_in(fn, data, 0, detail::any_type));
  RELAXVM_TRY(detail::check_in(fn, indices, 1, detail::signed_ints));
  if (indices.dtype() != dtype::int64()) return detail::bad_type(fn, 1, indices.dtype());
  RELAXVM_TRY(detail::check_in(fn, updates, 2, detail::any_type));
  RELAXVM_TRY(detail::same_type(fn, data, 0, updates, 2));
  if (!detail::valid_reduction(reduction)) return detail::value_error(fn, ": reduction ", reduction, " is not one of none, add, mul, max, min");
  if (reduction != 0 && data.dtype().is_bool()) return detail::value_error(fn, ": a reduction of bool data");
  const std::span<const std::int64_t> d = data.shape().dims(), id = indices.shape().dims();
  if (id.empty()) return detail::value_error(fn, ": indices must have at least one dim");
  const std::int64_t m = id.back();
  if (m < 1 || m > data.ndim()) return detail::value_error(fn, ": index tuples of ", m, " entries address data of rank ", data.ndim());
  detail::dims ud;
  for (std::size_t k = 0; k + 1 < id.size(); ++k) ud.push(id[k]);
  for (std::size_t k = static_cast<std::size_t>(m); k < d.size(); ++k) ud.push(d[k]);
  const std::span<const std::int64_t> uh = updates.shape().dims();
  if (!std::equal(uh.begin(), uh.end(), ud.span().begin(), ud.span().end()))
    return detail::value_error(fn, ": updates have shape ", detail::dims_text{uh}, " but must have ", detail::dims_text{ud.span()});
  RELAXVM_TRY(detail::check_out(fn, out, 4, d, data.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, data, 0, out, true));
  RELAXVM_TRY(detail::check_alias(fn, indices, 1, out, false));
  RELAXVM_TRY(detail::check_alias(fn, updates, 2, out, false));
  RELAXVM_TRY(detail::nd_offsets_ok(fn, data, indices, 0));
  if (out.raw_data() != data.raw_data() && data.nbytes() > 0) std::memcpy(out.raw_data(), data.raw_data(), static_cast<std::size_t>(data.nbytes()));
  const std::int64_t slice = detail::product(d, static_cast<std::size_t>(m), d.size());
  const std::int64_t tuples = indices.numel() / m;
  const auto* p = static_cast<const std::int64_t*>(indices.raw_data());
  const auto r = static_cast<scatter_reduction>(reduction);
  detail::visit(data.dtype(), [&]<class T>() {
    const T* up = static_cast<const T*>(updates.raw_data());
    T* dst = static_cast<T*>(out.raw_data());
    for (std::int64_t t = 0; t < tuples; ++t) {
      T* o = dst + detail::nd_offset(d, 0, p + t * m, m) * slice;
      const T* u = up + t * slice;
      for (std::int64_t j = 0; j < slice; ++j) {
        if constexpr (std::is_same_v<T, bool>) o[j] = u[j];
        else o[j] = detail::reduce(r, o[j], u[j]);
      }
    }
  });
  return {};
}

// ---- element types ---------------------------------------------------------------------------

namespace detail {

// IEEE half precision (float16), which Cast reads and writes as its bits: no other kernel takes it.
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  std::uint32_t bits;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign != 0 ? -v : v;
  }
  if (exp == 31) bits = sign | 0x7F800000u | (mant << 13);  // inf, NaN
  else bits = sign | ((exp + 112u) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
/// Rounded to nearest, ties to even (as NumPy's astype(float16)).
inline std::uint16_t float_to_half(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  std::uint32_t a = bits & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return static_cast<std::uint16_t>(sign | (a > 0x7F800000u ? 0x7E00u : 0x7C00u));  // NaN, inf
  if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // 65520 and up round to inf
  if (a < 0x38800000u) {  // below 2^-14: a subnormal half (or the smallest normal, by rounding)
    float m;
    std::memcpy(&m, &a, sizeof m);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(m * 16777216.0f)));
  }
  a += 0xC8000FFFu + ((a >> 13) & 1u);  // rebias the exponent (127 - 15), round half to even
  return static_cast<std::uint16_t>(sign | (a >> 13));
}

// Cast's arguments: as check_in and check_out, with float16 allowed too.
inline bool is_half(dtype t) { return t == dtype::float16(); }
inline status check_cast_arg(std::string_view fn, const tensor& t, std::size_t i) {
  if (!t.defined() || !is_half(t.dtype())) return check_in(fn, t, i, any_type);
  if (t.device().device_type != kDLCPU) return value_error(fn, ": argument ", i, " is on ", t.device(), "; the kernels run on the host");
  if (!t.is_contiguous()) return value_error(fn, ": argument ", i, " is strided; the kernels take compact tensors");
  if (t.ndim() > max_rank) return value_error(fn, ": argument ", i, " has ", t.ndim(), " dimensions; the kernels take at most ", max_rank);
  if (reinterpret_cast<std::uintptr_t>(t.raw_data()) % 2 != 0) return value_error(fn, ": argument ", i, "'s data is not aligned for ", t.dtype());
  return {};
}

}  // namespace detail

/// Cast(x): x's values as out's dtype (every pair of integer, float32, float64, float16 and
/// bool); floats to integers truncate toward zero (NaN is 0, out of range saturates), integers
/// wrap, float16 rounds to nearest even.
inline status Cast_out(const tensor& x, const tensor& out) {
  constexpr std::string_view fn = "onnx.Cast";
  RELAXVM_TRY(detail::check_cast_arg(fn, x, 0));
  RELAXVM_TRY(detail::check_cast_arg(fn, out, 1));
  const std::span<const std::int64_t> xd = x.shape().dims(), od = out.shape().dims();
  if (!std::equal(xd.begin(), xd.end(), od.begin(), od.end()))
    return detail::value_error(fn, ": the output (argument 1) has shape ", detail::dims_text{od}, " but the result has shape ", detail::dims_text{xd});
  if (out.read_only()) return detail::value_error(fn, ": the output (argument 1) is read-only");
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, x.dtype() == out.dtype()));
  const std::int64_t n = x.numel();
  if (x.dtype() == out.dtype()) {
    if (n > 0 && x.raw_data() != out.raw_data()) std::memcpy(out.raw_data(), x.raw_data(), static_cast<std::size_t>(x.nbytes()));
    return {};
  }
  if (detail::is_half(x.dtype())) {
    const auto* src = static_cast<const std::uint16_t*>(x.raw_data());
    detail::visit(out.dtype(), [&]<class T>() {
      T* dst = static_cast<T*>(out.raw_data());
      for (std::int64_t i = 0; i < n; ++i) dst[i] = detail::convert<T>(detail::half_to_float(src[i]));
    });
    return {};
  }
  if (detail::is_half(out.dtype())) {
    auto* dst = static_cast<std::uint16_t*>(out.raw_data());
    detail::visit(x.dtype(), [&]<class S>() {
      const S* src = static_cast<const S*>(x.raw_data());
      for (std::int64_t i = 0; i < n; ++i) dst[i] = detail::float_to_half(static_cast<float>(src[i]));
    });
    return {};
  }
  detail::visit(x.dtype(), [&]<class S>() {
    const S* src = static_cast<const S*>(x.raw_data());
    detail::visit(out.dtype(), [&]<class T>() {
      T* dst = static_cast<T*>(out.raw_data());
      for (std::int64_t i = 0; i < n; ++i) dst[i] = detail::convert<T>(src[i]);
    });
  });
  return {};
}

// ---- computed along an axis ------------------------------------------------------------------

/// CumSum(x, axis, exclusive, reverse): running sums along `axis` (one int32 or int64 element,
/// read when it runs); exclusive leaves out each element itself, reverse sums from the end.
inline status CumSum_out(const tensor& x, const tensor& axis, std::int64_t exclusive, std::int64_t reverse, const tensor& out) {
  constexpr std::string_view fn = "onnx.CumSum";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::numbers));
  RELAXVM_TRY(detail::check_int_scalar(fn, axis, 1));
  RELAXVM_TRY(detail::check_out(fn, out, 4, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, true));
  std::int64_t a = detail::scalar_as<std::int64_t>(axis);
  const std::int64_t rank = x.ndim();
  if (!detail::normalize_axis(a, rank)) return detail::bad_axis(fn, a, rank);
  const std::span<const std::int64_t> d = x.shape().dims();
  const auto ua = static_cast<std::size_t>(a);
  const std::int64_t outer = detail::product(d, 0, ua), n = d[ua], inner = detail::product(d, ua + 1, d.size());
  detail::visit(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* src = static_cast<const T*>(x.raw_data());
      T* dst = static_cast<T*>(out.raw_data());
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
          T acc = T(0);
          for (std::int64_t s = 0; s < n; ++s) {
            const std::int64_t j = reverse != 0 ? n - 1 - s : s;
            const std::int64_t at = (o * n + j) * inner + i;
            const T v = src[at];  // read before writing: out may be x
            if (exclusive != 0) {
              dst[at] = acc;
              acc = detail::arith(acc, v, std::plus<>());  // integers wrap
            } else {
              acc = detail::arith(acc, v, std::plus<>());
              dst[at] = acc;
            }
          }
        }
    }
  });
  return {};
}

/// OneHot(indices, values, axis): out has indices' shape with a new axis `axis` of out's size
/// there (the depth); out[.., d, ..] = values[1] where the index (negative from the end, any
/// numeric type, truncated) is d, values[0] elsewhere.
inline status OneHot_out(const tensor& indices, const tensor& values, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "onnx.OneHot";
  RELAXVM_TRY(detail::check_in(fn, indices, 0, detail::numbers));
  RELAXVM_TRY(detail::check_in(fn, values, 1, detail::any_type));
  if (values.numel() != 2) return detail::value_error(fn, ": values must hold 2 elements (off, on), but holds ", values.numel());
  RELAXVM_TRY(detail::check_in(fn, out, 3, detail::any_type));
  const std::int64_t rank = indices.ndim() + 1;
  if (!detail::normalize_axis(axis, rank)) return detail::bad_axis(fn, axis, rank);
  if (out.ndim() != rank) return detail::value_error(fn, ": the output has rank ", out.ndim(), " but the result has rank ", rank);
  const std::int64_t depth = out.shape().dims()[static_cast<std::size_t>(axis)];
  const std::span<const std::int64_t> id = indices.shape().dims();
  detail::dims od;
  for (std::size_t k = 0; k <= id.size(); ++k) {
    if (k == static_cast<std::size_t>(axis)) od.push(depth);
    if (k < id.size()) od.push(id[k]);
  }
  RELAXVM_TRY(detail::check_out(fn, out, 3, od.span(), values.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, indices, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, values, 1, out, false));
  const auto ua = static_cast<std::size_t>(axis);
  const std::int64_t outer = detail::product(id, 0, ua), inner = detail::product(id, ua, id.size());
  detail::visit_bytes(values.dtype().bytes(), [&]<class U>() {
    const U off = static_cast<const U*>(values.raw_data())[0], on = static_cast<const U*>(values.raw_data())[1];
    U* dst = static_cast<U*>(out.raw_data());
    detail::visit(indices.dtype(), [&]<class I>() {
      const I* idx = static_cast<const I*>(indices.raw_data());
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t k = 0; k < depth; ++k)
          for (std::int64_t i = 0; i < inner; ++i) {
            auto v = detail::convert<std::int64_t>(idx[o * inner + i]);
            if (v < 0) v += depth;
            dst[(o * depth + k) * inner + i] = v == k ? on : off;
          }
    });
  });
  return {};
}

// ---- made from nothing -----------------------------------------------------------------------

/// EyeLike(x, k): out (x's 2-d shape, any dtype) is 1 on diagonal k, 0 elsewhere.
inline status EyeLike_out(const tensor& x, std::int64_t k, const tensor& out) {
  constexpr std::string_view fn = "onnx.EyeLike";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  if (x.ndim() != 2) return detail::value_error(fn, ": the input must have 2 dims, but has ", x.ndim());
  RELAXVM_TRY(detail::check_in(fn, out, 2, detail::any_type));
  RELAXVM_TRY(detail::check_out(fn, out, 2, x.shape().dims(), out.dtype()));
  const std::int64_t rows = x.shape().dims()[0], cols = x.shape().dims()[1];
  detail::visit(out.dtype(), [&]<class T>() {
    T* dst = static_cast<T*>(out.raw_data());
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) dst[i * cols + j] = j - i == k ? T(1) : T(0);
  });
  return {};
}

/// The number of elements Range(start, limit, delta) makes, max(ceil((limit - start) / delta), 0);
/// -1 when delta is 0, -2 when the count passes 2^53 or is not a number (no tensor anyone can hold;
/// the distance of two int64 values may not even fit int64, so it is taken in uint64).
template <class T>
std::int64_t range_count(T start, T limit, T delta) {
  if (delta == T(0)) return -1;
  constexpr std::uint64_t too_long = std::uint64_t{1} << 53;
  if constexpr (std::is_floating_point_v<T>) {
    const double c = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    return !(c <= static_cast<double>(too_long)) ? -2 : (c > 0 ? static_cast<std::int64_t>(c) : 0);
  } else {
    const bool up = delta > T(0);
    if (up ? !(start < limit) : !(limit < start)) return 0;
    const auto u = [](T v) { return static_cast<std::uint64_t>(v); };  // two's complement for signed
    const std::uint64_t dist = up ? u(limit) - u(start) : u(start) - u(limit);
    const std::uint64_t step = up ? u(delta) : std::uint64_t{0} - u(delta);
    const std::uint64_t c = (dist - 1) / step + 1;
    return c > too_long ? -2 : static_cast<std::int64_t>(c);
  }
}

/// Range(start, limit, delta): out[i] = start + i * delta for i below range_count (one-element
/// tensors of out's dtype; delta not 0).
inline status Range_out(const tensor& start, const tensor& limit, const tensor& delta, const tensor& out) {
  constexpr std::string_view fn = "onnx.Range";
  const tensor* args[] = {&start, &limit, &delta};
  for (std::size_t i = 0; i < 3; ++i) {
    RELAXVM_TRY(detail::check_in(fn, *args[i], i, detail::numbers));
    RELAXVM_TRY(detail::same_type(fn, start, 0, *args[i], i));
    if (args[i]->numel() != 1) return detail::value_error(fn, ": argument ", i, " must hold one value, but holds ", args[i]->numel());
  }
  status st;
  detail::visit(start.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T s = *static_cast<const T*>(start.raw_data()), l = *static_cast<const T*>(limit.raw_data());
      const T dl = *static_cast<const T*>(delta.raw_data());
      const std::int64_t want[] = {range_count(s, l, dl)};
      if (want[0] < 0) {
        st = detail::value_error(fn, want[0] == -1 ? ": delta is 0" : ": the range is too long for a tensor");
        return;
      }
      st = detail::check_out(fn, out, 3, want, start.dtype());
      if (!st.ok()) return;
      T* dst = static_cast<T*>(out.raw_data());
      if constexpr (std::is_integral_v<T>) {
        // In uint64, where i * delta may pass T's range on the way (a range wider than T's
        // positive half) but the sum, start + i * delta, is in range: the wrap gives it exactly.
        const auto u = [](auto v) { return static_cast<std::uint64_t>(v); };
        for (std::int64_t i = 0; i < want[0]; ++i) dst[i] = static_cast<T>(u(s) + u(i) * u(dl));
      } else {
        for (std::int64_t i = 0; i < want[0]; ++i) dst[i] = static_cast<T>(s + static_cast<T>(i) * dl);
      }
    }
  });
  return st;
}

/// ConstantOfShape(value): out (of the shape the importer read) filled with value's one element.
inline status ConstantOfShape_out(const tensor& value, const tensor& out) {
  constexpr std::string_view fn = "onnx.ConstantOfShape";
  RELAXVM_TRY(detail::check_in(fn, value, 0, detail::any_type));
  if (value.numel() != 1) return detail::value_error(fn, ": the value must be one element, but has ", value.numel());
  RELAXVM_TRY(detail::check_in(fn, out, 1, detail::any_type));
  RELAXVM_TRY(detail::check_out(fn, out, 1, out.shape().dims(), value.dtype()));
  detail::visit_bytes(value.dtype().bytes(), [&]<class U>() {
    U v;
    std::memcpy(&v, value.raw_data(), sizeof(U));
    U* dst = static_cast<U*>(out.raw_data());
    for (std::int64_t i = 0; i < out.numel(); ++i) dst[i] = v;
  });
  return {};
}

/// Size(x): x's element count, an int64 scalar.
inline status Size_out(const tensor& x, const tensor& out) {
  constexpr std::string_view fn = "onnx.Size";
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::any_type));
  RELAXVM_TRY(detail::check_out(fn, out, 1, {}, dtype::int64()));
  *static_cast<std::int64_t*>(out.raw_data()) = x.numel();
  return {};
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_DATA_HPP
