// SPDX-License-Identifier: Apache-2.0
// Shape kernels: an output's shape worked out at run time, when the values that set it (Reshape's
// shape, Slice's starts, Expand's shape, Reduce's axes, Tile's repeats, Pad's pads, TopK's k,
// Split's sizes, Range's bounds, OneHot's depth, ConstantOfShape's input) are data the importer
// cannot read. Each is "onnx.<Op>.shape": it takes the input's shape and those values, checks
// them (an error names the op: a Reshape to the wrong size, a negative dim, an axis out of range)
// and writes the result's dims (Split: the parts' sizes) into a 1-d int64 tensor, which the
// program makes a shape (vm.builtin.tensor_to_shape) and matches to fresh symbolic dims before
// the op's own kernel runs. Plain loops, no heap, no exceptions.
#ifndef RELAXVM_KERNELS_SHAPE_HPP
#define RELAXVM_KERNELS_SHAPE_HPP

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>

#include "../base/checked_math.hpp"
#include "../base/config.hpp"  // RELAXVM_ABI
#include "data.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {

/// Writes `d` into `out`, a 1-d int64 tensor of exactly its length.
inline status write_dims(std::string_view fn, const dims& d, const tensor& out, std::size_t i) {
  const std::int64_t want[] = {d.rank};
  RELAXVM_TRY(check_out(fn, out, i, want, dtype::int64()));
  auto* p = static_cast<std::int64_t*>(out.raw_data());
  for (int k = 0; k < d.rank; ++k) p[k] = d[k];
  return {};
}

/// The rank of a shape argument, checked against max_rank.
inline status check_rank(std::string_view fn, const shape& s) {
  if (s.size() > max_rank) return value_error(fn, ": the input has ", s.size(), " dims; the kernels take at most ", max_rank);
  return {};
}

/// The one value of a numeric tensor (TopK's k, Range's bounds, OneHot's depth) as T, or an error.
inline status one_value(std::string_view fn, const tensor& t, std::size_t i, std::string_view what) {
  RELAXVM_TRY(check_in(fn, t, i, numbers));
  if (t.numel() != 1) return value_error(fn, ": ", what, " must hold one value, but holds ", t.numel());
  return {};
}

}  // namespace detail

/// Reshape.shape(x_shape, shape, allowzero, out): ONNX's Reshape target with its 0s (copy the
/// input's dim, unless allowzero) and its one -1 (what is left) resolved; its element count must
/// be the input's.
inline status Reshape_shape(const shape& x, const tensor& target, std::int64_t allowzero, const tensor& out) {
  constexpr std::string_view fn = "onnx.Reshape.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  std::int64_t t[max_rank];
  std::int64_t n = 0;
  RELAXVM_TRY(detail::read_ints(fn, target, 1, t, max_rank, n));
  std::int64_t numel = 1;
  for (std::int64_t d : x.dims()) numel *= d;  // the input exists: its count fits
  detail::dims d;
  int infer = -1;
  std::int64_t known = 1;
  bool zero = false;
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t v = t[k];
    if (v == -1) {
      if (infer >= 0) return detail::value_error(fn, ": the shape ", detail::dims_text{std::span<const std::int64_t>(t, static_cast<std::size_t>(n))}, " has more than one -1");
      infer = static_cast<int>(k);
      d.push(1);
      continue;
    }
    if (v < -1) return detail::value_error(fn, ": the shape has ", v, " at ", k);
    if (v == 0 && allowzero == 0) {
      if (k >= static_cast<std::int64_t>(x.size()))
        return detail::value_error(fn, ": the shape copies dim ", k, " (a 0) of an input of rank ", x.size());
      v = x[k];
    }
    zero = zero || v == 0;
    if (!relaxvm::detail::checked_mul(known, v, known)) return detail::value_error(fn, ": the shape's element count overflows int64");
    d.push(v);
  }
  if (infer >= 0) {
    if (zero) {
      if (numel != 0) return detail::value_error(fn, ": the shape has a 0 and a -1, but the input has ", numel, " elements");
      return detail::value_error(fn, ": the -1 of the shape is ambiguous next to a dim of 0");
    }
    if (numel % known != 0)
      return detail::value_error(fn, ": an input of ", numel, " elements does not reshape into ", detail::dims_text{d.span()}, " with a -1 at ", infer);
    d[infer] = numel / known;
  } else if (known != numel) {
    return detail::value_error(fn, ": the shape ", detail::dims_text{d.span()}, " holds ", known, " elements, but the input ",
                               detail::dims_text{x.dims()}, " holds ", numel);
  }
  return detail::write_dims(fn, d, out, 3);
}

/// Slice.shape(x_shape, starts, ends, axes, steps, out): the counts ONNX's Slice takes along
/// each axis (onnx.Slice checks the same lists again when it runs).
inline status Slice_shape(const shape& x, const tensor& starts, const tensor& ends, const tensor& axes, const tensor& steps,
                          const tensor& out) {
  constexpr std::string_view fn = "onnx.Slice.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  detail::dims first, d, step;
  RELAXVM_TRY(detail::slice_plan(fn, x.dims(), starts, ends, axes, steps, first, d, step));
  return detail::write_dims(fn, d, out, 5);
}

/// Expand.shape(x_shape, shape, out): the input's shape and `shape` broadcast (NumPy's rules).
inline status Expand_shape(const shape& x, const tensor& target, const tensor& out) {
  constexpr std::string_view fn = "onnx.Expand.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  std::int64_t t[max_rank];
  std::int64_t n = 0;
  RELAXVM_TRY(detail::read_ints(fn, target, 1, t, max_rank, n));
  const std::span<const std::int64_t> ts(t, static_cast<std::size_t>(n));
  for (std::int64_t v : ts)
    if (v < 0) return detail::value_error(fn, ": the shape ", detail::dims_text{ts}, " has a negative dim");
  detail::dims d;
  if (!detail::broadcast_dims(x.dims(), ts, d))
    return detail::value_error(fn, ": the input's shape ", detail::dims_text{x.dims()}, " does not broadcast with ", detail::dims_text{ts});
  return detail::write_dims(fn, d, out, 2);
}

/// Reduce.shape(x_shape, axes, keepdims, noop_with_empty_axes, out): the dims a Reduce* keeps
/// (1 for each reduced one with keepdims); no axes reduce all, or none with noop_with_empty_axes.
inline status Reduce_shape(const shape& x, const tensor& axes, std::int64_t keepdims, std::int64_t noop, const tensor& out) {
  constexpr std::string_view fn = "onnx.Reduce.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  const auto rank = static_cast<std::int64_t>(x.size());
  std::int64_t ax[max_rank];
  std::int64_t n = 0;
  RELAXVM_TRY(detail::read_ints(fn, axes, 1, ax, max_rank, n));
  bool reduced[max_rank] = {};
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t a = ax[i];
    if (!detail::normalize_axis(a, rank)) return detail::bad_axis(fn, a, rank);
    if (reduced[a]) return detail::value_error(fn, ": axis ", ax[i], " is repeated");
    reduced[a] = true;
  }
  if (n == 0 && noop == 0)
    for (std::int64_t k = 0; k < rank; ++k) reduced[k] = true;
  detail::dims d;
  for (std::int64_t k = 0; k < rank; ++k) {
    if (!reduced[k]) d.push(x[k]);
    else if (keepdims != 0) d.push(1);
  }
  return detail::write_dims(fn, d, out, 4);
}

/// Squeeze.shape(x_shape, axes, out): the input's dims without the listed axes, each of size 1.
inline status Squeeze_shape(const shape& x, const tensor& axes, const tensor& out) {
  constexpr std::string_view fn = "onnx.Squeeze.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  const auto rank = static_cast<std::int64_t>(x.size());
  std::int64_t ax[max_rank];
  std::int64_t n = 0;
  RELAXVM_TRY(detail::read_ints(fn, axes, 1, ax, max_rank, n));
  bool drop[max_rank] = {};
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t a = ax[i];
    if (!detail::normalize_axis(a, rank)) return detail::bad_axis(fn, a, rank);
    if (drop[a]) return detail::value_error(fn, ": axis ", ax[i], " is repeated");
    if (x[a] != 1) return detail::value_error(fn, ": axis ", ax[i], " has size ", x[a], ", not 1");
    drop[a] = true;
  }
  detail::dims d;
  for (std::int64_t k = 0; k < rank; ++k)
    if (!drop[k]) d.push(x[k]);
  return detail::write_dims(fn, d, out, 2);
}

/// Unsqueeze.shape(x_shape, axes, out): the input's dims with a 1 inserted at each listed axis
/// (of the result's rank).
inline status Unsqueeze_shape(const shape& x, const tensor& axes, const tensor& out) {
  constexpr std::string_view fn = "onnx.Unsqueeze.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  std::int64_t ax[max_rank];
  std::int64_t n = 0;
  RELAXVM_TRY(detail::read_ints(fn, axes, 1, ax, max_rank, n));
  const auto rank = static_cast<std::int64_t>(x.size()) + n;
  if (rank > max_rank) return detail::value_error(fn, ": the result would have ", rank, " dims; the kernels take at most ", max_rank);
  bool added[max_rank] = {};
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t a = ax[i];
    if (!detail::normalize_axis(a, rank)) return detail::bad_axis(fn, a, rank);
    if (added[a]) return detail::value_error(fn, ": axis ", ax[i], " is repeated");
    added[a] = true;
  }
  detail::dims d;
  std::size_t from = 0;
  for (std::int64_t k = 0; k < rank; ++k) d.push(added[k] ? 1 : x[from++]);
  return detail::write_dims(fn, d, out, 2);
}

/// Tile.shape(x_shape, repeats, out): each dim times its repeat count (not negative).
inline status Tile_shape(const shape& x, const tensor& repeats, const tensor& out) {
  constexpr std::string_view fn = "onnx.Tile.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  std::int64_t r[max_rank];
  std::int64_t n = 0;
  RELAXVM_TRY(detail::read_ints(fn, repeats, 1, r, max_rank, n));
  const std::span<const std::int64_t> rs(r, static_cast<std::size_t>(n));
  if (static_cast<std::int64_t>(rs.size()) != x.size()) return detail::value_error(fn, ": repeats has ", rs.size(), " entries for an input of rank ", x.size());
  detail::dims d;
  for (std::size_t k = 0; k < rs.size(); ++k) {
    if (rs[k] < 0) return detail::value_error(fn, ": repeats ", detail::dims_text{rs}, " has a negative count");
    std::int64_t v = 0;
    if (!relaxvm::detail::checked_mul(x[k], rs[k], v)) return detail::value_error(fn, ": dim ", k, " times ", rs[k], " overflows int64");
    d.push(v);
  }
  return detail::write_dims(fn, d, out, 2);
}

/// Pad.shape(x_shape, pads, out): each dim with its begin and end pads (negative ones crop, not
/// below 0).
inline status Pad_shape(const shape& x, const tensor& pads, const tensor& out) {
  constexpr std::string_view fn = "onnx.Pad.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  std::int64_t pv[2 * max_rank];
  std::int64_t np = 0;
  RELAXVM_TRY(detail::read_ints(fn, pads, 1, pv, 2 * max_rank, np));
  const std::span<const std::int64_t> p(pv, static_cast<std::size_t>(np));
  const std::size_t rank = x.size();
  if (p.size() != 2 * rank) return detail::value_error(fn, ": pads has ", p.size(), " entries for an input of rank ", rank, " (2 per axis)");
  detail::dims d;
  for (std::size_t k = 0; k < rank; ++k) {
    std::int64_t v = 0;
    if (!relaxvm::detail::checked_add(x[k], p[k], v) || !relaxvm::detail::checked_add(v, p[k + rank], v))
      return detail::value_error(fn, ": pads ", detail::dims_text{p}, " overflow axis ", k);
    if (v < 0) return detail::value_error(fn, ": pads ", detail::dims_text{p}, " crop axis ", k, " below 0");
    d.push(v);
  }
  return detail::write_dims(fn, d, out, 2);
}

/// TopK.shape(x_shape, k, axis, out): the input's dims with k (one integer in [0, the axis' dim])
/// along the axis.
inline status TopK_shape(const shape& x, const tensor& k, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "onnx.TopK.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  RELAXVM_TRY(detail::check_int_scalar(fn, k, 1));
  const auto rank = static_cast<std::int64_t>(x.size());
  if (!detail::normalize_axis(axis, rank)) return detail::bad_axis(fn, axis, rank);
  const auto kv = detail::scalar_as<std::int64_t>(k);
  if (kv < 0 || kv > x[axis]) return detail::value_error(fn, ": k (", kv, ") must be in [0, ", x[axis], "]");
  detail::dims d(x.dims());
  d[static_cast<int>(axis)] = kv;
  return detail::write_dims(fn, d, out, 3);
}

/// ConstantOfShape.shape(shape, out): the given dims, none negative.
inline status ConstantOfShape_shape(const tensor& target, const tensor& out) {
  constexpr std::string_view fn = "onnx.ConstantOfShape.shape";
  std::int64_t t[max_rank];
  std::int64_t n = 0;
  RELAXVM_TRY(detail::read_ints(fn, target, 0, t, max_rank, n));
  detail::dims d;
  for (std::int64_t k = 0; k < n; ++k) {
    if (t[k] < 0) return detail::value_error(fn, ": the shape has a negative dim ", t[k], " at ", k);
    d.push(t[k]);
  }
  return detail::write_dims(fn, d, out, 1);
}

/// Split.shape(x_shape, split, axis, out): the parts' sizes along the axis (not negative, adding
/// up to its dim).
inline status Split_shape(const shape& x, const tensor& split, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "onnx.Split.shape";
  RELAXVM_TRY(detail::check_rank(fn, x));
  const auto rank = static_cast<std::int64_t>(x.size());
  if (!detail::normalize_axis(axis, rank)) return detail::bad_axis(fn, axis, rank);
  RELAXVM_TRY(detail::check_in(fn, split, 1, detail::signed_ints));
  if ((split.dtype().bits != 32 && split.dtype().bits != 64) || split.ndim() != 1)
    return detail::value_error(fn, ": the split sizes must be a 1-d int32 or int64 list, but are ", split.dtype(), " of shape ",
                               detail::dims_text{split.shape().dims()});
  const std::int64_t want[] = {split.numel()};
  RELAXVM_TRY(detail::check_out(fn, out, 3, want, dtype::int64()));
  auto* p = static_cast<std::int64_t*>(out.raw_data());
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < split.numel(); ++i) {
    const std::int64_t s =
        split.dtype().bits == 64 ? static_cast<const std::int64_t*>(split.raw_data())[i] : static_cast<const std::int32_t*>(split.raw_data())[i];
    if (s < 0) return detail::value_error(fn, ": split has a negative size ", s);
    if (!relaxvm::detail::checked_add(total, s, total)) return detail::value_error(fn, ": the split sizes overflow int64");
    p[i] = s;
  }
  if (total != x[axis]) return detail::value_error(fn, ": the split sizes add up to ", total, ", not ", x[axis]);
  return {};
}

/// Range.shape(start, limit, delta, out): the one dim of Range's result, max(ceil((limit -
/// start) / delta), 0) (one-element tensors of one numeric type; delta not 0).
inline status Range_shape(const tensor& start, const tensor& limit, const tensor& delta, const tensor& out) {
  constexpr std::string_view fn = "onnx.Range.shape";
  const tensor* args[] = {&start, &limit, &delta};
  for (std::size_t i = 0; i < 3; ++i) {
    RELAXVM_TRY(detail::one_value(fn, *args[i], i, i == 0 ? "start" : (i == 1 ? "limit" : "delta")));
    RELAXVM_TRY(detail::same_type(fn, start, 0, *args[i], i));
  }
  std::int64_t count = -1;  // range_count's -1 (delta 0) and -2 (too long)
  detail::visit(start.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>)
      count = range_count(*static_cast<const T*>(start.raw_data()), *static_cast<const T*>(limit.raw_data()),
                          *static_cast<const T*>(delta.raw_data()));
  });
  if (count == -2) return detail::value_error(fn, ": the range is too long for a tensor");
  if (count < 0) return detail::value_error(fn, ": delta is 0");
  detail::dims d;
  d.push(count);
  return detail::write_dims(fn, d, out, 3);
}

/// OneHot.shape(indices_shape, depth, axis, out): the indices' dims with the depth (one positive
/// number, truncated) inserted at `axis` (of the result's rank).
inline status OneHot_shape(const shape& indices, const tensor& depth, std::int64_t axis, const tensor& out) {
  constexpr std::string_view fn = "onnx.OneHot.shape";
  RELAXVM_TRY(detail::check_rank(fn, indices));
  RELAXVM_TRY(detail::one_value(fn, depth, 1, "the depth"));
  const auto dv = detail::scalar_as<double>(depth);
  if (!(dv >= 1) || dv > 9.0e15) return detail::value_error(fn, ": the depth is not a positive count");
  const auto rank = static_cast<std::int64_t>(indices.size()) + 1;
  if (rank > max_rank) return detail::value_error(fn, ": the result would have ", rank, " dims; the kernels take at most ", max_rank);
  if (!detail::normalize_axis(axis, rank)) return detail::bad_axis(fn, axis, rank);
  detail::dims d;
  for (std::int64_t k = 0; k < rank; ++k) {
    if (k == axis) d.push(static_cast<std::int64_t>(dv));
    if (k < rank - 1) d.push(indices[k]);
  }
  return detail::write_dims(fn, d, out, 3);
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_SHAPE_HPP
