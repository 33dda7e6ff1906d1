// SPDX-License-Identifier: Apache-2.0
// Matrix products with ONNX's semantics: MatMul (NumPy's: batch dims broadcast, a 1-d operand a
// row or column vector whose dim is dropped) and Gemm (Y = alpha * A' B' + beta * C, C broadcast
// to (M, N)). Both are the packed product of gemm.hpp (panels of B on the stack, a register tile
// of vector accumulators), or dot products for a row or a few against a transposed B (nn.Linear's
// weight at batch 1); nothing is allocated on the heap.
#ifndef RELAXVM_KERNELS_LINALG_HPP
#define RELAXVM_KERNELS_LINALG_HPP

#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"
#include "gemm.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {

// Integer and bool-free products of the other types: the same blocks (the types are few and the
// sizes the tests use small).
template <class T>
inline constexpr bool gemm_type_v = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

inline constexpr std::uint32_t matmul_types = floats | ints;

// The packed product's element type for T: integers multiply and add in their unsigned twin, so
// that sums wrap as ONNX's (and NumPy's) integers do instead of overflowing (undefined in C++);
// the bits are the same. MatMul and Gemm take the 32- and 64-bit integers ONNX defines them for:
// narrower ones would be promoted to int in the scalar paths, where a uint16 product overflows.
template <class T>
struct gemm_type {
  using type = T;
};
template <std::integral T>
struct gemm_type<T> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using gemm_t = typename gemm_type<T>::type;

inline status check_product_type(std::string_view fn, const tensor& t, std::size_t i) {
  RELAXVM_TRY(check_in(fn, t, i, matmul_types));
  if ((t.dtype().is_int() || t.dtype().is_uint()) && t.dtype().bits < 32) return bad_type(fn, i, t.dtype());
  return {};
}

/// C (m x n) += alpha * A B in gemm_t<T>: the same memory, read as the unsigned twin for integers.
/// Alone: on the calling thread (a part of a call the kernels' threads already share), else cut
/// for them where it is large enough (gemm.hpp).
template <class T>
void product_acc(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, mat<T> a, mat<T> b, T* c, std::int64_t ldc, bool alone = false) {
  using U = gemm_t<T>;
  const mat<U> au{reinterpret_cast<const U*>(a.p), a.rs, a.cs}, bu{reinterpret_cast<const U*>(b.p), b.rs, b.cs};
  if (alone) gemm_acc_alone<U>(m, n, k, static_cast<U>(alpha), au, bu, reinterpret_cast<U*>(c), ldc);
  else gemm_acc<U>(m, n, k, static_cast<U>(alpha), au, bu, reinterpret_cast<U*>(c), ldc);
}

}  // namespace detail

/// MatMul(a, b, out): NumPy's matmul.
inline status MatMul_out(const tensor& a, const tensor& b, const tensor& out) {
  constexpr std::string_view fn = "onnx.MatMul";
  RELAXVM_TRY(detail::check_product_type(fn, a, 0));
  RELAXVM_TRY(detail::check_product_type(fn, b, 1));
  RELAXVM_TRY(detail::same_type(fn, a, 0, b, 1));
  const std::span<const std::int64_t> ad = a.shape().dims(), bd = b.shape().dims();
  if (ad.empty() || bd.empty()) return detail::value_error(fn, ": the operands must have at least one dimension");
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  const std::int64_t m = a_vec ? 1 : ad[ad.size() - 2], k = ad.back();
  const std::int64_t kb = b_vec ? bd[0] : bd[bd.size() - 2], n = b_vec ? 1 : bd.back();
  if (k != kb)
    return detail::value_error(fn, ": shapes ", detail::dims_text{ad}, " and ", detail::dims_text{bd}, " do not match (", k, " columns against ",
                               kb, " rows)");
  const std::span<const std::int64_t> ab = a_vec ? ad.first(0) : ad.first(ad.size() - 2);
  const std::span<const std::int64_t> bb = b_vec ? bd.first(0) : bd.first(bd.size() - 2);
  detail::dims batch;
  if (!detail::broadcast_dims(ab, bb, batch) || batch.rank + 2 > max_rank)
    return detail::value_error(fn, ": the batch dims of ", detail::dims_text{ad}, " and ", detail::dims_text{bd}, " do not broadcast");
  detail::dims od = batch;
  if (!a_vec) od.push(m);
  if (!b_vec) od.push(n);
  RELAXVM_TRY(detail::check_out(fn, out, 2, od.span(), a.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, a, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, b, 1, out, false));
  // Batch strides in matrices (0 where an operand broadcasts).
  const detail::dims strides[2] = {detail::broadcast_strides(ab, batch), detail::broadcast_strides(bb, batch)};
  detail::visit(a.dtype(), [&]<class T>() {
    if constexpr (detail::gemm_type_v<T>) {
      const T* pa = static_cast<const T*>(a.raw_data());
      const T* pb = static_cast<const T*>(b.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      const std::int64_t total = out.numel();
      for (std::int64_t i = 0; i < total; ++i) o[i] = T(0);
      const std::int64_t count = batch.count();
      if (count == 0 || m == 0 || n == 0 || k == 0) return;
      // Many small products (attention's heads) are shared out whole among the kernels' threads;
      // few large ones are each cut into blocks (gemm_acc).
      const double each = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
      const int width = detail::kernel_width(each * static_cast<double>(count));
      if (width > 1 && count > 1 && (each < detail::parallel_min_work || count >= 2 * width)) {
        const std::int64_t parts = count < 4 * width ? count : 4 * width;
        auto part = [&](std::int64_t i) {
          std::int64_t b0 = 0, b1 = 0;
          detail::part_range(count, parts, i, b0, b1);
          for (std::int64_t bi = b0; bi < b1; ++bi) {
            std::int64_t off[2];
            detail::index_offsets(batch, strides, bi, off);
            detail::product_acc<T>(m, n, k, T(1), detail::mat<T>{pa + off[0] * m * k, k, 1}, detail::mat<T>{pb + off[1] * k * n, n, 1},
                                   o + bi * m * n, n, true);
          }
        };
        return detail::run_parts(parts, part);
      }
      detail::for_each_index(batch, strides, [&](std::int64_t bi, const std::int64_t* off) {
        const detail::mat<T> am{pa + off[0] * m * k, k, 1};
        const detail::mat<T> bm{pb + off[1] * k * n, n, 1};
        detail::product_acc<T>(m, n, k, T(1), am, bm, o + bi * m * n, n);
      });
    }
  });
  return {};
}

/// Gemm(a, b, c | undefined, alpha, beta, trans_a, trans_b, out): out = alpha * A' B' + beta * C,
/// A' = trans_a ? a^T : a (M x K), B' likewise (K x N), C broadcast to (M, N).
inline status Gemm_out(const tensor& a, const tensor& b, const tensor& c, double alpha, double beta, std::int64_t trans_a,
                       std::int64_t trans_b, const tensor& out) {
  constexpr std::string_view fn = "onnx.Gemm";
  RELAXVM_TRY(detail::check_product_type(fn, a, 0));
  RELAXVM_TRY(detail::check_product_type(fn, b, 1));
  RELAXVM_TRY(detail::same_type(fn, a, 0, b, 1));
  if (a.ndim() != 2 || b.ndim() != 2)
    return detail::value_error(fn, ": A and B must be 2-d, but are ", detail::dims_text{a.shape().dims()}, " and ", detail::dims_text{b.shape().dims()});
  const std::int64_t m = trans_a ? a.shape()[1] : a.shape()[0], k = trans_a ? a.shape()[0] : a.shape()[1];
  const std::int64_t kb = trans_b ? b.shape()[1] : b.shape()[0], n = trans_b ? b.shape()[0] : b.shape()[1];
  if (k != kb) return detail::value_error(fn, ": A' is ", m, " x ", k, " but B' is ", kb, " x ", n);
  const std::int64_t od[2] = {m, n};
  detail::dims cs;  // C's strides over (M, N)
  if (c.defined()) {
    RELAXVM_TRY(detail::check_in(fn, c, 2, detail::matmul_types));
    RELAXVM_TRY(detail::same_type(fn, a, 0, c, 2));
    detail::dims bc;
    if (c.ndim() > 2 || !detail::broadcast_dims(c.shape().dims(), od, bc) || bc[0] != m || bc[1] != n)
      return detail::value_error(fn, ": C ", detail::dims_text{c.shape().dims()}, " does not broadcast to [", m, ", ", n, "]");
    cs = detail::broadcast_strides(c.shape().dims(), bc);
    RELAXVM_TRY(detail::check_alias(fn, c, 2, out, true));
  }
  RELAXVM_TRY(detail::check_out(fn, out, 7, od, a.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, a, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, b, 1, out, false));
  detail::visit(a.dtype(), [&]<class T>() {
    if constexpr (detail::gemm_type_v<T>) {
      T* o = static_cast<T*>(out.raw_data());
      if (c.defined() && beta != 0) {
        const T* pc = static_cast<const T*>(c.raw_data());
        const T bt = detail::convert<T>(beta);  // integers: truncated and saturated, as Cast would
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) o[i * n + j] = detail::arith(bt, pc[i * cs[0] + j * cs[1]], std::multiplies<>());
      } else {
        for (std::int64_t i = 0; i < m * n; ++i) o[i] = T(0);
      }
      if (m == 0 || n == 0 || k == 0) return;
      const T* pa = static_cast<const T*>(a.raw_data());
      const T* pb = static_cast<const T*>(b.raw_data());
      const std::int64_t lda = a.shape()[1], ldb = b.shape()[1];
      const detail::mat<T> am = trans_a ? detail::mat<T>{pa, 1, lda} : detail::mat<T>{pa, lda, 1};
      const detail::mat<T> bm = trans_b ? detail::mat<T>{pb, 1, ldb} : detail::mat<T>{pb, ldb, 1};
      detail::product_acc<T>(m, n, k, detail::convert<T>(alpha), am, bm, o, n);
    }
  });
  return {};
}

/// Einsum(a, b | undefined, a_labels, b_labels, out_labels, out): the importer turns the equation
/// into label numbers (0 .. L-1, L <= max_rank), one per dim of each operand and of the output;
/// a label repeated within an operand takes its diagonal; labels not in the output are summed.
/// A plain loop over every combination of label values.
inline status Einsum_out(const tensor& a, const tensor& b, const shape& a_labels, const shape& b_labels, const shape& out_labels,
                         const tensor& out) {
  constexpr std::string_view fn = "onnx.Einsum";
  const int n_in = b.defined() ? 2 : 1;
  const tensor* in[2] = {&a, &b};
  const shape* lab[2] = {&a_labels, &b_labels};
  std::int64_t size[max_rank];
  for (std::int64_t& d : size) d = -1;
  int labels = 0;
  for (int t = 0; t < n_in; ++t) {
    RELAXVM_TRY(detail::check_in(fn, *in[t], static_cast<std::size_t>(t), detail::matmul_types));
    if (t == 1) RELAXVM_TRY(detail::same_type(fn, a, 0, b, 1));
    if (lab[t]->size() != in[t]->ndim())
      return detail::value_error(fn, ": operand ", t, " has ", in[t]->ndim(), " dims but ", lab[t]->size(), " labels");
    for (std::int64_t k = 0; k < lab[t]->size(); ++k) {
      const std::int64_t l = (*lab[t])[k], d = in[t]->shape()[k];
      if (l < 0 || l >= max_rank) return detail::value_error(fn, ": label ", l, " is outside [0, ", max_rank, ")");
      if (size[l] >= 0 && size[l] != d) return detail::value_error(fn, ": label ", l, " has dims ", size[l], " and ", d);
      size[l] = d;
      if (l + 1 > labels) labels = static_cast<int>(l + 1);
    }
  }
  detail::dims od;
  for (std::int64_t k = 0; k < out_labels.size(); ++k) {
    const std::int64_t l = out_labels[k];
    if (l < 0 || l >= labels || size[l] < 0) return detail::value_error(fn, ": output label ", l, " is in no operand");
    od.push(size[l]);
  }
  RELAXVM_TRY(detail::check_out(fn, out, 5, od.span(), a.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, a, 0, out, false));
  if (b.defined()) RELAXVM_TRY(detail::check_alias(fn, b, 1, out, false));
  // Each label's stride in each operand and in the output (summed where a label repeats).
  detail::dims shape_all, strides[3];
  for (int l = 0; l < labels; ++l) shape_all.push(size[l] < 0 ? 1 : size[l]);
  for (detail::dims& s : strides) s.rank = labels;
  const shape* all[3] = {&a_labels, &b_labels, &out_labels};
  for (int t = 0; t < 3; ++t) {
    if (t == 1 && n_in == 1) continue;
    const std::span<const std::int64_t> d = t == 2 ? od.span() : in[t]->shape().dims();
    std::int64_t st = 1;
    for (std::int64_t k = all[t]->size() - 1; k >= 0; --k) {
      strides[t][static_cast<int>((*all[t])[k])] += st;
      st *= d[static_cast<std::size_t>(k)];
    }
  }
  detail::visit(a.dtype(), [&]<class T>() {
    if constexpr (detail::gemm_type_v<T>) {
      const T* pa = static_cast<const T*>(a.raw_data());
      const T* pb = n_in == 2 ? static_cast<const T*>(b.raw_data()) : nullptr;
      T* o = static_cast<T*>(out.raw_data());
      for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = T(0);
      const detail::dims s3[3] = {strides[0], strides[1], strides[2]};
      detail::for_each_index(shape_all, s3, [&](std::int64_t, const std::int64_t* off) {
        const T term = pb ? detail::arith(pa[off[0]], pb[off[1]], std::multiplies<>()) : pa[off[0]];
        o[off[2]] = detail::arith(o[off[2]], term, std::plus<>());  // integers wrap
      });
    }
  });
  return {};
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_LINALG_HPP
