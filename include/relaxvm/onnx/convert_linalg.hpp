// SPDX-License-Identifier: Apache-2.0
// Matrix products: MatMul (NumPy's rules: batch dims broadcast, 1-d operands) and Gemm (transposes,
// alpha, beta, C broadcast to (M, N)); calls of the portable kernels (relaxvm/kernels/linalg.hpp).
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
  RELAXVM_TRY(require_type(c, *a, 0, kernels::detail::floats | kernels::detail::ints));
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
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.MatMul", args, std::move(dims), a->dt));
  return c.output(0, std::move(y));
}

// Gemm: Y = alpha * A' B' + beta * C, C (optional from opset 11) broadcast to (M, N).
inline status convert_gemm(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_type(c, *a, 0, kernels::detail::floats | kernels::detail::ints));
  if (a->dt != b->dt) return c.fail("inputs 0 and 1 have different dtypes (", a->dt, " and ", b->dt, ")");
  if (a->dims.size() != 2 || b->dims.size() != 2) return c.fail("Gemm's A and B must be 2-d");
  const std::int64_t trans_a = c.attr_int("transA", 0), trans_b = c.attr_int("transB", 0);
  const ir::sym m = a->dims[trans_a ? 1 : 0], k = a->dims[trans_a ? 0 : 1];
  const ir::sym kb = b->dims[trans_b ? 1 : 0], n = b->dims[trans_b ? 0 : 1];
  if (k.is_const() && kb.is_const() && k.ref().value != kb.ref().value)
    return c.fail("the inner dimensions differ (", k.ref().value, " and ", kb.ref().value, ")");
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(*a));
  RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(*b));
  std::vector<ir::operand> args{av, bv};
  if (c.has_input(2)) {
    RELAXVM_TRY_ASSIGN(entry* bias, c.input(2));
    if (bias->dt != a->dt) return c.fail("C is ", bias->dt, " but A is ", a->dt);
    if (bias->dims.size() > 2) return c.fail("C must have at most 2 dims");
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> bc, broadcast(c, bias->dims, {m, n}));
    if (bc.size() != 2 || !same_dim(bc[0], m) || !same_dim(bc[1], n)) return c.fail("C does not broadcast to (M, N)");
    RELAXVM_TRY_ASSIGN(ir::var cv, c.st.operand_of(*bias));
    args.push_back(cv);
  } else {
    args.push_back(absent());
  }
  args.push_back(ir::prim_float(c.attr_float("alpha", 1.0f)));
  args.push_back(ir::prim_float(c.attr_float("beta", 1.0f)));
  args.push_back(ir::prim(trans_a != 0 ? 1 : 0));
  args.push_back(ir::prim(trans_b != 0 ? 1 : 0));
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Gemm", args, {m, n}, a->dt));
  return c.output(0, std::move(y));
}

inline constexpr op_converter linalg_converters[] = {
    {"MatMul", &convert_matmul}, {"Gemm", &convert_gemm},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_LINALG_HPP
