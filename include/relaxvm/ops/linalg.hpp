// SPDX-License-Identifier: Apache-2.0
// matmul (NumPy semantics: batch dimensions broadcast; a 1-d operand is a row or column vector
// whose dimension is dropped from the result) and dense (x . W^T + b, the fully connected layer).
#ifndef RELAXVM_OPS_LINALG_HPP
#define RELAXVM_OPS_LINALG_HPP

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "common.hpp"

namespace relaxvm::RELAXVM_ABI::ops {

namespace detail {

/// out[M, N] = a[M, K] . b[K, N], all row-major (i-k-j order: unit-stride inner loop).
template <class T>
void gemm(const T* a, const T* b, T* out, std::int64_t m, std::int64_t k, std::int64_t n) {
  for (std::int64_t i = 0; i < m; ++i) {
    T* row = out + i * n;
    for (std::int64_t j = 0; j < n; ++j) row[j] = T(0);
    for (std::int64_t p = 0; p < k; ++p) {
      const T av = a[i * k + p];
      const T* brow = b + p * n;
      for (std::int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
    }
  }
}

struct matmul_plan {
  shape out;
  shape batch;  // the broadcast batch dimensions
  std::int64_t m = 1, k = 1, n = 1;
  const shape* a = nullptr;  // the operands' shapes, whose leading dims are the batch dims
  const shape* b = nullptr;
  bool a_vec = false, b_vec = false;
  /// a's (or b's) batch dim d of batch's rank, 1 where the operand has fewer dims.
  std::int64_t batch_dim(const shape& s, bool vec, std::size_t d) const {
    const std::int64_t own = vec ? 0 : s.size() - 2;
    const std::int64_t pad = batch.size() - own;
    const auto i = static_cast<std::int64_t>(d);
    return i < pad ? 1 : s[i - pad];
  }
};

inline result<matmul_plan> plan_matmul(std::string_view fn, const shape& a, const shape& b) {
  if (a.size() == 0 || b.size() == 0) return value_error(fn, ": matmul needs operands of at least 1 dimension");
  matmul_plan p;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  p.m = a_vec ? 1 : a[a.size() - 2];
  p.k = a[a.size() - 1];
  const std::int64_t kb = b_vec ? b[0] : b[b.size() - 2];
  p.n = b_vec ? 1 : b[b.size() - 1];
  if (p.k != kb)
    return value_error(fn, ": shapes ", dims_text{a.dims()}, " and ", dims_text{b.dims()}, " do not match (", p.k,
                       " columns against ", kb, " rows)");
  const shape ab(a_vec ? std::span<const std::int64_t>() : a.dims().first(static_cast<std::size_t>(a.size() - 2)));
  const shape bb(b_vec ? std::span<const std::int64_t>() : b.dims().first(static_cast<std::size_t>(b.size() - 2)));
  RELAXVM_TRY_ASSIGN(p.batch, broadcast(fn, ab, bb));
  dims_buffer out(static_cast<std::size_t>(p.batch.size()) + !a_vec + !b_vec);
  std::size_t k = 0;
  for (std::int64_t d : p.batch) out[k++] = d;
  if (!a_vec) out[k++] = p.m;
  if (!b_vec) out[k++] = p.n;
  p.out = shape(out.span());
  p.a = &a;
  p.b = &b;
  p.a_vec = a_vec;
  p.b_vec = b_vec;
  return p;
}

template <class T>
void run_matmul(const matmul_plan& p, const T* a, const T* b, T* out) {
  const std::int64_t batches = [&] {
    std::int64_t n = 1;
    for (std::int64_t d : p.batch) n *= d;
    return n;
  }();
  const std::size_t r = static_cast<std::size_t>(p.batch.size());
  for (std::int64_t bi = 0; bi < batches; ++bi) {
    // Decompose bi into the batch index, and map it into a's and b's (broadcast) batches.
    std::int64_t rest = bi, ia = 0, ib = 0, sa = 1, sb = 1;
    for (std::size_t d = r; d-- > 0;) {
      const std::int64_t idx = rest % p.batch[static_cast<std::int64_t>(d)];
      rest /= p.batch[static_cast<std::int64_t>(d)];
      const std::int64_t da = p.batch_dim(*p.a, p.a_vec, d), db = p.batch_dim(*p.b, p.b_vec, d);
      if (da != 1) ia += idx * sa;
      if (db != 1) ib += idx * sb;
      sa *= da;
      sb *= db;
    }
    gemm(a + ia * p.m * p.k, b + ib * p.k * p.n, out + bi * p.m * p.n, p.m, p.k, p.n);
  }
}

struct dense_plan {
  shape out;
  std::int64_t rows = 1, k = 1, m = 1;
};

inline result<dense_plan> plan_dense(std::string_view fn, const tensor& x, const tensor& w, const tensor* bias) {
  RELAXVM_TRY(check_input(fn, x, 0));
  RELAXVM_TRY(check_input(fn, w, 1));
  RELAXVM_TRY(same_dtype(fn, x, w, 1));
  if (x.ndim() < 1 || w.ndim() != 2)
    return value_error(fn, ": expects x of at least 1 dimension and a 2-d weight, but got ", dims_text{x.shape().dims()},
                       " and ", dims_text{w.shape().dims()});
  dense_plan p;
  p.k = x.shape()[x.ndim() - 1];
  p.m = w.shape()[0];
  if (w.shape()[1] != p.k)
    return value_error(fn, ": x has ", p.k, " features but the weight ", dims_text{w.shape().dims()}, " expects ",
                       w.shape()[1]);
  if (bias) {
    RELAXVM_TRY(check_input(fn, *bias, 2));
    RELAXVM_TRY(same_dtype(fn, x, *bias, 2));
    if (bias->ndim() != 1 || bias->shape()[0] != p.m)
      return value_error(fn, ": the bias has shape ", dims_text{bias->shape().dims()}, "; expected [", p.m, "]");
  }
  dims_buffer out(static_cast<std::size_t>(x.ndim()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = x.shape()[static_cast<std::int64_t>(i)];
  out[out.size() - 1] = p.m;
  for (std::size_t i = 0; i + 1 < out.size(); ++i) p.rows *= out[i];
  p.out = shape(out.span());
  return p;
}

template <class T>
void run_dense(const dense_plan& p, const T* x, const T* w, const T* bias, T* out) {
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const T* xr = x + r * p.k;
    T* orow = out + r * p.m;
    for (std::int64_t j = 0; j < p.m; ++j) {
      const T* wr = w + j * p.k;
      T acc = bias ? bias[j] : T(0);
      for (std::int64_t i = 0; i < p.k; ++i) acc += xr[i] * wr[i];
      orow[j] = acc;
    }
  }
}

template <class T>
const T* data_or_null(const tensor* t) {
  return t ? static_cast<const T*>(t->raw_data()) : nullptr;
}

}  // namespace detail

inline status matmul_out(const tensor& a, const tensor& b, const tensor& out) {
  constexpr std::string_view fn = "ops.matmul_out";
  RELAXVM_TRY(detail::check_input(fn, a, 0));
  RELAXVM_TRY(detail::check_input(fn, b, 1));
  RELAXVM_TRY(detail::same_dtype(fn, a, b, 1));
  RELAXVM_TRY_ASSIGN(detail::matmul_plan p, detail::plan_matmul(fn, a.shape(), b.shape()));
  RELAXVM_TRY(detail::check_output(fn, out, p.out, a.dtype(), 2));
  RELAXVM_TRY(detail::check_alias(fn, a, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, b, 1, out, false));
  if (out.numel() == 0) return {};  // (and the batch count, a product of out's dims, may not fit)
  detail::by_dtype(a.dtype(), [&]<class T>() {
    detail::run_matmul(p, static_cast<const T*>(a.raw_data()), static_cast<const T*>(b.raw_data()),
                       static_cast<T*>(out.raw_data()));
  });
  return {};
}

inline result<tensor> matmul(const tensor& a, const tensor& b) {
  constexpr std::string_view fn = "ops.matmul";
  RELAXVM_TRY(detail::check_input(fn, a, 0));
  RELAXVM_TRY(detail::check_input(fn, b, 1));
  RELAXVM_TRY_ASSIGN(detail::matmul_plan p, detail::plan_matmul(fn, a.shape(), b.shape()));
  RELAXVM_TRY_ASSIGN(tensor out, detail::make_output(p.out, a.dtype()));
  RELAXVM_TRY(matmul_out(a, b, out));
  return out;
}

/// dense(x, w, bias) = x . w^T + bias: x is [..., K], w is [M, K], bias is [M] (or null for none);
/// the result is [..., M].
inline status dense_out(const tensor& x, const tensor& w, const tensor* bias, const tensor& out) {
  constexpr std::string_view fn = "ops.dense_out";
  RELAXVM_TRY_ASSIGN(detail::dense_plan p, detail::plan_dense(fn, x, w, bias));
  RELAXVM_TRY(detail::check_output(fn, out, p.out, x.dtype(), bias ? 3 : 2));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, w, 1, out, false));
  if (bias) {
    RELAXVM_TRY(detail::check_alias(fn, *bias, 2, out, false));
  }
  if (out.numel() == 0) return {};  // (and the row count, a product of out's dims, may not fit)
  detail::by_dtype(x.dtype(), [&]<class T>() {
    detail::run_dense(p, static_cast<const T*>(x.raw_data()), static_cast<const T*>(w.raw_data()),
                      detail::data_or_null<T>(bias), static_cast<T*>(out.raw_data()));
  });
  return {};
}
inline status dense_out(const tensor& x, const tensor& w, const tensor& bias, const tensor& out) {
  return dense_out(x, w, &bias, out);
}
inline status dense_out(const tensor& x, const tensor& w, const tensor& out) { return dense_out(x, w, nullptr, out); }

inline result<tensor> dense(const tensor& x, const tensor& w, const tensor* bias = nullptr) {
  RELAXVM_TRY_ASSIGN(detail::dense_plan p, detail::plan_dense("ops.dense", x, w, bias));
  RELAXVM_TRY_ASSIGN(tensor out, detail::make_output(p.out, x.dtype()));
  RELAXVM_TRY(dense_out(x, w, bias, out));
  return out;
}

}  // namespace relaxvm::ops

#endif  // RELAXVM_OPS_LINALG_HPP
