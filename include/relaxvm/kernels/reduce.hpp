// SPDX-License-Identifier: Apache-2.0
// Reductions with ONNX's semantics: the Reduce* family over a set of axes (keepdims,
// noop_with_empty_axes), ArgMax/ArgMin along one axis, Softmax/LogSoftmax/Hardmax along one axis
// (the importer flattens for the opsets before 13) and TopK. Plain loops, no heap: the input is
// seen as kept and reduced dims, adjacent dims of one kind merged, so most reductions are one or
// two loops deep.
#ifndef RELAXVM_KERNELS_REDUCE_HPP
#define RELAXVM_KERNELS_REDUCE_HPP

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {

/// An input split into the dims an op keeps (outer, in order) and those it reduces (inner), each
/// with its element strides in the input; adjacent dims of one kind are merged.
struct reduce_plan {
  dims kept, kept_strides;    // row-major over the output
  dims red, red_strides;      // the reduced sub-space of one output element
  dims out;                   // the output's dims (keepdims: 1 at each reduced axis)
  std::int64_t n = 1;         // elements reduced into each output
  std::int64_t outer = 1;     // output elements
};

/// The plan for reducing `x` over `axes` (each in [-rank, rank), no repeats; none = all unless
/// `noop_empty`, then none at all).
inline status plan_reduce(std::string_view fn, const tensor& x, std::span<const std::int64_t> axes, bool keepdims, bool noop_empty,
                          reduce_plan& p) {
  const int r = static_cast<int>(x.ndim());
  bool reduced[max_rank] = {};
  if (axes.size() > static_cast<std::size_t>(max_rank)) return value_error(fn, ": ", axes.size(), " axes for an input of rank ", r);
  for (std::int64_t a : axes) {
    if (a < -r || a >= r) return value_error(fn, ": axis ", a, " is outside [", -r, ", ", r - 1, "]");
    const int k = static_cast<int>(a < 0 ? a + r : a);
    if (reduced[k]) return value_error(fn, ": axis ", a, " is repeated");
    reduced[k] = true;
  }
  if (axes.empty() && !noop_empty)
    for (int k = 0; k < r; ++k) reduced[k] = true;
  const std::span<const std::int64_t> d = x.shape().dims();
  std::int64_t stride[max_rank] = {};
  std::int64_t s64 = 1;
  for (int k = r - 1; k >= 0; --k) {
    stride[k] = s64;
    s64 *= d[static_cast<std::size_t>(k)];
  }
  p = reduce_plan{};
  int last_kind = -1;  // 0 kept, 1 reduced
  for (int k = 0; k < r; ++k) {
    const std::int64_t dk = d[static_cast<std::size_t>(k)];
    if (reduced[k]) {
      if (keepdims) p.out.push(1);
      p.n *= dk;
    } else {
      p.out.push(dk);
      p.outer *= dk;
    }
    if (dk == 1) continue;  // a dim of 1 changes no offset
    dims& ds = reduced[k] ? p.red : p.kept;
    dims& ss = reduced[k] ? p.red_strides : p.kept_strides;
    const int kind = reduced[k] ? 1 : 0;
    if (kind == last_kind) {  // merge with the previous dim of this kind, which is just outside it
      ds[ds.rank - 1] *= dk;
      ss[ss.rank - 1] = stride[k];
    } else {
      ds.push(dk);
      ss.push(stride[k]);
    }
    last_kind = kind;
  }
  return {};
}

/// Calls f(offset) for every element of `shape` under `strides` (an odometer; the innermost dim
/// as a plain loop).
template <class F>
void for_each_offset(const dims& shape, const dims& strides, std::int64_t base, F&& f) {
  if (shape.rank == 0) {
    f(base);
    return;
  }
  for (int k = 0; k < shape.rank; ++k)
    if (shape[k] == 0) return;
  const int last = shape.rank - 1;
  std::int64_t idx[max_rank] = {};
  std::int64_t off = base;
  for (;;) {
    const std::int64_t s = strides[last];
    for (std::int64_t i = 0; i < shape[last]; ++i) f(off + i * s);
    int k = last - 1;
    for (; k >= 0; --k) {
      off += strides[k];
      if (++idx[k] < shape[k]) break;
      off -= idx[k] * strides[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

/// Calls f(out_index, in_base) for each output element of the plan.
template <class F>
void for_each_kept(const reduce_plan& p, F&& f) {
  std::int64_t o = 0;
  for_each_offset(p.kept, p.kept_strides, 0, [&](std::int64_t base) { f(o++, base); });
}

enum class reduce_kind { sum, mean, max, min, prod, l1, l2, log_sum, log_sum_exp, sum_square };

// The accumulator: double for floats (and the ops that leave the integers: L2, the logs), a
// wrapping 64-bit integer for integer sums and products, the type itself for max and min.
template <class T>
T reduce_one(reduce_kind kind, const T* x, const reduce_plan& p, std::int64_t base) {
  constexpr bool is_f = std::is_floating_point_v<T>;
  switch (kind) {
    case reduce_kind::max:
    case reduce_kind::min: {
      const bool mx = kind == reduce_kind::max;
      T acc = mx ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      if constexpr (is_f) acc = mx ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
      bool nan = false;
      for_each_offset(p.red, p.red_strides, base, [&](std::int64_t i) {
        const T v = x[i];
        if constexpr (is_f) nan = nan || v != v;
        if (mx ? v > acc : v < acc) acc = v;
      });
      if constexpr (is_f) {
        if (nan) return std::numeric_limits<T>::quiet_NaN();
      }
      return acc;
    }
    case reduce_kind::log_sum_exp: {
      double m = -std::numeric_limits<double>::infinity();
      for_each_offset(p.red, p.red_strides, base, [&](std::int64_t i) { m = std::fmax(m, static_cast<double>(x[i])); });
      if (std::isinf(m)) return static_cast<T>(m);
      double s = 0;
      for_each_offset(p.red, p.red_strides, base, [&](std::int64_t i) { s += std::exp(static_cast<double>(x[i]) - m); });
      return static_cast<T>(m + std::log(s));
    }
    default: break;
  }
  {
    if (is_f || kind == reduce_kind::l2 || kind == reduce_kind::log_sum || kind == reduce_kind::mean) {
      double acc = kind == reduce_kind::prod ? 1.0 : 0.0;
      for_each_offset(p.red, p.red_strides, base, [&](std::int64_t i) {
        const double v = static_cast<double>(x[i]);
        switch (kind) {
          case reduce_kind::prod: acc *= v; break;
          case reduce_kind::l1: acc += std::fabs(v); break;
          case reduce_kind::l2:
          case reduce_kind::sum_square: acc += v * v; break;
          default: acc += v; break;
        }
      });
      if (kind == reduce_kind::mean) acc = p.n == 0 ? std::numeric_limits<double>::quiet_NaN() : acc / static_cast<double>(p.n);
      if (kind == reduce_kind::l2) acc = std::sqrt(acc);
      if (kind == reduce_kind::log_sum) acc = std::log(acc);
      if constexpr (!is_f) {
        if (!(acc == acc) || std::isinf(acc)) return T(0);  // an integer mean of nothing, or a log of 0
        if (kind == reduce_kind::mean) {  // NumPy's float mean cast back: toward zero
          std::int64_t sum = 0;
          for_each_offset(p.red, p.red_strides, base, [&](std::int64_t i) {
            sum = static_cast<std::int64_t>(static_cast<std::uint64_t>(sum) + static_cast<std::uint64_t>(x[i]));
          });
          return static_cast<T>(sum / p.n);
        }
      }
      return static_cast<T>(acc);
    }
  }
  // Integer sums and products wrap, as the type's own arithmetic would.
  std::uint64_t acc = kind == reduce_kind::prod ? 1 : 0;
  for_each_offset(p.red, p.red_strides, base, [&](std::int64_t i) {
    const T v = x[i];
    std::uint64_t u = static_cast<std::uint64_t>(v);
    if constexpr (std::is_signed_v<T>) {
      if (kind == reduce_kind::l1 && v < 0) u = static_cast<std::uint64_t>(0) - u;
    }
    switch (kind) {
      case reduce_kind::prod: acc *= u; break;
      case reduce_kind::sum_square: acc += u * u; break;
      default: acc += u; break;
    }
  });
  return static_cast<T>(acc);
}

inline status reduce_out(std::string_view fn, reduce_kind kind, const tensor& x, const shape& axes, std::int64_t keepdims,
                         std::int64_t noop_with_empty_axes, const tensor& out) {
  RELAXVM_TRY(check_in(fn, x, 0, numbers));
  reduce_plan p;
  RELAXVM_TRY(plan_reduce(fn, x, axes.dims(), keepdims != 0, noop_with_empty_axes != 0, p));
  RELAXVM_TRY(check_out(fn, out, 4, p.out.span(), x.dtype()));
  RELAXVM_TRY(check_alias(fn, x, 0, out, false));
  visit(x.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* in = static_cast<const T*>(x.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      for_each_kept(p, [&](std::int64_t i, std::int64_t base) { o[i] = reduce_one(kind, in, p, base); });
    }
  });
  return {};
}

/// out = f(x) along `axis`, x seen as (outer, n, inner); f(in, out, n, stride) does one line.
template <class F>
status along_axis(std::string_view fn, const tensor& x, std::int64_t axis, std::uint32_t set, const tensor& out, std::size_t out_arg,
                  std::span<const std::int64_t> out_dims, dtype out_type, F&& f) {
  RELAXVM_TRY(check_in(fn, x, 0, set));
  const std::int64_t r = x.ndim();
  if (axis < -r || axis >= r || r == 0) return value_error(fn, ": axis ", axis, " is outside [", -r, ", ", r - 1, "]");
  if (axis < 0) axis += r;
  RELAXVM_TRY(check_out(fn, out, out_arg, out_dims, out_type));
  RELAXVM_TRY(check_alias(fn, x, 0, out, false));
  const std::span<const std::int64_t> d = x.shape().dims();
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < axis; ++k) outer *= d[static_cast<std::size_t>(k)];
  for (std::int64_t k = axis + 1; k < r; ++k) inner *= d[static_cast<std::size_t>(k)];
  const std::int64_t n = d[static_cast<std::size_t>(axis)];
  f(outer, n, inner);
  return {};
}

}  // namespace detail

#define RELAXVM_REDUCE(NAME, KIND) \
  inline status NAME##_out(const tensor& x, const shape& axes, std::int64_t keepdims, std::int64_t noop_with_empty_axes, const tensor& out) { \
    return detail::reduce_out("onnx." #NAME, detail::reduce_kind::KIND, x, axes, keepdims, noop_with_empty_axes, out); \
  }
RELAXVM_REDUCE(ReduceSum, sum)
RELAXVM_REDUCE(ReduceMean, mean)
RELAXVM_REDUCE(ReduceMax, max)
RELAXVM_REDUCE(ReduceMin, min)
RELAXVM_REDUCE(ReduceProd, prod)
RELAXVM_REDUCE(ReduceL1, l1)
RELAXVM_REDUCE(ReduceL2, l2)
RELAXVM_REDUCE(ReduceLogSum, log_sum)
RELAXVM_REDUCE(ReduceLogSumExp, log_sum_exp)
RELAXVM_REDUCE(ReduceSumSquare, sum_square)
#undef RELAXVM_REDUCE

namespace detail {
/// The dims of x without `axis` (or with 1 there: keepdims), or false when the axis is bad.
inline bool dims_without(const tensor& x, std::int64_t axis, bool keep, dims& out) {
  const std::int64_t r = x.ndim();
  if (axis < -r || axis >= r) return false;
  if (axis < 0) axis += r;
  out = dims{};
  for (std::int64_t k = 0; k < r; ++k) {
    if (k != axis) out.push(x.shape()[k]);
    else if (keep) out.push(1);
  }
  return true;
}

inline status arg_out(std::string_view fn, bool is_max, const tensor& x, std::int64_t axis, std::int64_t keepdims,
                      std::int64_t select_last_index, const tensor& out) {
  RELAXVM_TRY(check_in(fn, x, 0, numbers));
  dims od;
  if (!dims_without(x, axis, keepdims != 0, od)) return value_error(fn, ": axis ", axis, " is outside [", -x.ndim(), ", ", x.ndim() - 1, "]");
  if (x.numel() == 0 && od.count() != 0) return value_error(fn, ": the axis is empty; there is no ", is_max ? "maximum" : "minimum");
  const bool last = select_last_index != 0;
  return along_axis(fn, x, axis, numbers, out, 4, od.span(), dtype::int64(), [&](std::int64_t outer, std::int64_t n, std::int64_t inner) {
    visit(x.dtype(), [&]<class T>() {
      const T* in = static_cast<const T*>(x.raw_data());
      auto* o = static_cast<std::int64_t*>(out.raw_data());
      for (std::int64_t a = 0; a < outer; ++a)
        for (std::int64_t b = 0; b < inner; ++b) {
          const T* line = in + a * n * inner + b;
          std::int64_t best = 0;
          for (std::int64_t i = 1; i < n; ++i) {
            const T v = line[i * inner], w = line[best * inner];
            const bool better = is_max ? (last ? v >= w : v > w) : (last ? v <= w : v < w);
            if (better) best = i;
          }
          o[a * inner + b] = best;
        }
    });
  });
}
}  // namespace detail

/// ArgMax(x, axis, keepdims, select_last_index) into int64.
inline status ArgMax_out(const tensor& x, std::int64_t axis, std::int64_t keepdims, std::int64_t select_last_index, const tensor& out) {
  return detail::arg_out("onnx.ArgMax", true, x, axis, keepdims, select_last_index, out);
}
inline status ArgMin_out(const tensor& x, std::int64_t axis, std::int64_t keepdims, std::int64_t select_last_index, const tensor& out) {
  return detail::arg_out("onnx.ArgMin", false, x, axis, keepdims, select_last_index, out);
}

namespace detail {
enum class softmax_kind { softmax, log_softmax, hardmax };

template <class T>
void softmax_line(softmax_kind kind, const T* x, T* y, std::int64_t n, std::int64_t s) {
  if (n == 0) return;
  T m = x[0];
  std::int64_t arg = 0;
  for (std::int64_t i = 1; i < n; ++i)
    if (x[i * s] > m) m = x[i * s], arg = i;
  if (kind == softmax_kind::hardmax) {
    for (std::int64_t i = 0; i < n; ++i) y[i * s] = i == arg ? T(1) : T(0);
    return;
  }
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const T e = std::exp(x[i * s] - m);
    if (kind == softmax_kind::softmax) y[i * s] = e;
    sum += static_cast<double>(e);
  }
  if (kind == softmax_kind::softmax) {
    const T inv = static_cast<T>(1.0 / sum);
    for (std::int64_t i = 0; i < n; ++i) y[i * s] *= inv;
  } else {
    const T ls = static_cast<T>(std::log(sum));
    for (std::int64_t i = 0; i < n; ++i) y[i * s] = x[i * s] - m - ls;
  }
}

inline status softmax_out(std::string_view fn, softmax_kind kind, const tensor& x, std::int64_t axis, const tensor& out) {
  if (!x.defined()) return value_error(fn, ": argument 0 is an undefined tensor");
  return along_axis(fn, x, axis, floats, out, 2, x.shape().dims(), x.dtype(), [&](std::int64_t outer, std::int64_t n, std::int64_t inner) {
    visit(x.dtype(), [&]<class T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* in = static_cast<const T*>(x.raw_data());
        T* o = static_cast<T*>(out.raw_data());
        for (std::int64_t a = 0; a < outer; ++a)
          for (std::int64_t b = 0; b < inner; ++b) softmax_line(kind, in + a * n * inner + b, o + a * n * inner + b, n, inner);
      }
    });
  });
}
}  // namespace detail

/// Softmax(x, axis) along one axis (opset 13's; the importer flattens for the earlier opsets).
inline status Softmax_out(const tensor& x, std::int64_t axis, const tensor& out) {
  return detail::softmax_out("onnx.Softmax", detail::softmax_kind::softmax, x, axis, out);
}
inline status LogSoftmax_out(const tensor& x, std::int64_t axis, const tensor& out) {
  return detail::softmax_out("onnx.LogSoftmax", detail::softmax_kind::log_softmax, x, axis, out);
}
/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
inline status Hardmax_out(const tensor& x, std::int64_t axis, const tensor& out) {
  return detail::softmax_out("onnx.Hardmax", detail::softmax_kind::hardmax, x, axis, out);
}

/// TopK(x, k, axis, largest, sorted, values, indices): the k largest (smallest) along the axis,
/// in order (ties: the lower index first), their indices int64. k is the values' dim on the axis.
inline status TopK_out(const tensor& x, std::int64_t axis, std::int64_t largest, std::int64_t sorted, const tensor& values,
                       const tensor& indices) {
  constexpr std::string_view fn = "onnx.TopK";
  (void)sorted;  // always sorted: ONNX leaves the order open when sorted = 0
  RELAXVM_TRY(detail::check_in(fn, x, 0, detail::numbers));
  RELAXVM_TRY(detail::check_in(fn, values, 4, detail::numbers));
  const std::int64_t r = x.ndim();
  if (axis < -r || axis >= r) return detail::value_error(fn, ": axis ", axis, " is outside [", -r, ", ", r - 1, "]");
  if (axis < 0) axis += r;
  const std::int64_t k = values.ndim() == r ? values.shape()[axis] : -1;
  if (k < 0 || k > x.shape()[axis]) return detail::value_error(fn, ": k (", k, ") must be in [0, ", x.shape()[axis], "]");
  detail::dims od(x.shape().dims());
  od[static_cast<int>(axis)] = k;
  RELAXVM_TRY(detail::check_out(fn, values, 4, od.span(), x.dtype()));
  RELAXVM_TRY(detail::check_out(fn, indices, 5, od.span(), dtype::int64()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, values, false));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, indices, false));
  RELAXVM_TRY(detail::check_alias(fn, values, 4, indices, false));
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (std::int64_t d = axis + 1; d < r; ++d) inner *= x.shape()[d];
  const std::int64_t n = x.shape()[axis];
  const bool big = largest != 0;
  detail::visit(x.dtype(), [&]<class T>() {
    const T* in = static_cast<const T*>(x.raw_data());
    T* vo = static_cast<T*>(values.raw_data());
    auto* io = static_cast<std::int64_t*>(indices.raw_data());
    // Selection into the outputs' line: each new element is inserted into the sorted first k
    // (k * n comparisons at most; TopK's k is small in the models that use it).
    for (std::int64_t a = 0; a < outer; ++a)
      for (std::int64_t b = 0; b < inner; ++b) {
        const T* line = in + a * n * inner + b;
        T* vl = vo + a * k * inner + b;
        std::int64_t* il = io + a * k * inner + b;
        std::int64_t have = 0;
        for (std::int64_t i = 0; i < n && k > 0; ++i) {
          const T v = line[i * inner];
          auto before = [&](T p, T q) {  // p goes before q (the earlier index wins ties)
            if constexpr (std::is_floating_point_v<T>) {
              if (p != p) return q == q && big;  // NaN counts as the largest
              if (q != q) return !big;
            }
            return big ? p > q : p < q;
          };
          if (have == k && !before(v, vl[(k - 1) * inner])) continue;
          std::int64_t j = have < k ? have++ : k - 1;
          for (; j > 0 && before(v, vl[(j - 1) * inner]); --j) {
            vl[j * inner] = vl[(j - 1) * inner];
            il[j * inner] = il[(j - 1) * inner];
          }
          vl[j * inner] = v;
          il[j * inner] = i;
        }
      }
  });
  return {};
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REDUCE_HPP
