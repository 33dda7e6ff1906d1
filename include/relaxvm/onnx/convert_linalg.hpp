// SPDX-License-Identifier: Apache-2.0
// Matrix products and Softmax (over the xtensor kernels of relaxvm/ops until their portable and
// fast forms land).
#ifndef RELAXVM_ONNX_CONVERT_LINALG_HPP
#define RELAXVM_ONNX_CONVERT_LINALG_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

inline status convert_matmul(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_float(c, *a, 0));
  if (a->dt != b->dt) return c.fail("inputs 0 and 1 have different dtypes (", a->dt, " and ", b->dt, ")");
  if (a->dims.empty() || b->dims.empty()) return c.fail("MatMul's inputs must have at least one dimension");
  // NumPy's matmul: a 1-d operand is a row (a) or column (b) vector whose dim is dropped; the
  // batch dims broadcast.
  std::vector<ir::sym> ad = a->dims, bd = b->dims;
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), ir::sym(1));
  if (b_vec) bd.push_back(ir::sym(1));
  const ir::sym k_a = ad[ad.size() - 1], k_b = bd[bd.size() - 2];
  if (k_a.is_const() && k_b.is_const() && k_a.ref().value != k_b.ref().value)
    return c.fail("the inner dimensions differ (", k_a.ref().value, " and ", k_b.ref().value, ")");
  std::vector<ir::sym> batch_a(ad.begin(), ad.end() - 2), batch_b(bd.begin(), bd.end() - 2);
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, broadcast(c, batch_a, batch_b));
  if (!a_vec) dims.push_back(ad[ad.size() - 2]);
  if (!b_vec) dims.push_back(bd[bd.size() - 1]);
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(*a));
  RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(*b));
  const ir::operand args[] = {av, bv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("ops.matmul_out", args, std::move(dims), a->dt));
  return c.output(0, std::move(y));
}

// Gemm: Y = alpha * A' B' + beta * C. The form torch writes for nn.Linear (transB = 1, alpha =
// beta = 1, C of shape (N) or absent) is ops.dense_out.
inline status convert_gemm(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_float(c, *a, 0));
  const std::int64_t trans_a = c.attr_int("transA", 0), trans_b = c.attr_int("transB", 0);
  const float alpha = c.attr_float("alpha", 1.0f), beta = c.attr_float("beta", 1.0f);
  if (a->dims.size() != 2 || b->dims.size() != 2) return c.fail("Gemm's A and B must be 2-d");
  if (trans_a != 0 || trans_b != 1 || alpha != 1.0f || (beta != 1.0f && c.has_input(2)))
    return c.unsupported("only the nn.Linear form (transA = 0, transB = 1, alpha = beta = 1) has a kernel yet");
  std::vector<ir::operand> args;
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(*a));
  RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(*b));
  args.push_back(av);
  args.push_back(bv);
  if (c.has_input(2)) {
    RELAXVM_TRY_ASSIGN(entry* bias, c.input(2));
    if (bias->dims.size() != 1) return c.unsupported("only a bias C of shape (N) has a kernel yet");
    RELAXVM_TRY_ASSIGN(ir::var cv, c.st.operand_of(*bias));
    args.push_back(cv);
  }
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("ops.dense_out", args, {a->dims[0], b->dims[0]}, a->dt));
  return c.output(0, std::move(y));
}

/// `axis` in [-rank, rank) (or [-rank, rank] when `inclusive`: Flatten's, Unsqueeze's), made
/// non-negative.
inline status convert_softmax(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  const bool v13 = c.st.opset() >= 13;
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", v13 ? -1 : 1), x->dims.size()));
  // Before opset 13 the input is flattened to 2-d at `axis`; along the last axis that is the same.
  if (!v13 && axis != static_cast<std::int64_t>(x->dims.size()) - 1)
    return c.unsupported("Softmax before opset 13 over axis ", axis, " of ", x->dims.size(), " (it flattens the axes after it)");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::prim(axis)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("ops.softmax_out", args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

inline constexpr op_converter linalg_converters[] = {
    {"MatMul", &convert_matmul}, {"Gemm", &convert_gemm}, {"Softmax", &convert_softmax},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_LINALG_HPP
