// SPDX-License-Identifier: Apache-2.0
// The losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (with its optional log_prob
// output), their reduction, weights and ignore_index; calls of the portable kernels
// (relaxvm/kernels/loss.hpp).
#ifndef RELAXVM_ONNX_CONVERT_LOSS_HPP
#define RELAXVM_ONNX_CONVERT_LOSS_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../kernels/loss.hpp"
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

inline status convert_loss(node_ctx& c) {
  const bool sce = c.node.op_type == "SoftmaxCrossEntropyLoss";
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  RELAXVM_TRY_ASSIGN(entry* t, c.input(1));
  if (t->dt != relaxvm::dtype::int64() && t->dt != relaxvm::dtype::int32())
    return c.fail("the target (input 1) is ", t->dt, "; it must be int32 or int64");
  if (x->dims.size() < 2) return c.fail("the input must have at least 2 dims (N, C, ...)");
  if (t->dims.size() + 1 != x->dims.size()) return c.fail("the target must have one dim fewer than the input (all but C)");
  for (std::size_t k = 0; k < t->dims.size(); ++k) {
    const ir::sym& xd = x->dims[k == 0 ? 0 : k + 1];
    if (xd.is_const() && t->dims[k].is_const() && xd.ref().value != t->dims[k].ref().value)
      return c.fail("the target's dim ", k, " is ", t->dims[k].ref().value, " but the input's is ", xd.ref().value);
  }
  std::int64_t reduction = kernels::reduce_mean;
  if (const attribute_info* a = c.node.attribute("reduction"); a != nullptr && !a->s.empty()) {
    if (a->s == "none") reduction = kernels::reduce_none;
    else if (a->s == "sum") reduction = kernels::reduce_sum;
    else if (a->s != "mean") return c.fail("reduction is '", a->s, "'; it must be none, sum or mean");
  }
  const attribute_info* ii = c.node.attribute("ignore_index");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(ir::var tv, c.st.operand_of(*t));
  ir::operand wv = absent();
  if (c.has_input(2)) {
    RELAXVM_TRY_ASSIGN(entry* w, c.input(2));
    if (w->dt != x->dt) return c.fail("the weights (input 2) are ", w->dt, " but the input is ", x->dt);
    if (w->dims.size() != 1) return c.fail("the weights must be 1-d (one per class)");
    RELAXVM_TRY_ASSIGN(wv, c.st.operand_of(*w));
  }
  const ir::operand args[] = {xv, tv, wv, ir::prim(reduction), ir::prim(ii != nullptr ? 1 : 0), ir::prim(ii != nullptr ? ii->i : 0)};
  std::vector<ir::sym> dims;
  if (reduction == kernels::reduce_none) dims = t->dims;
  if (!sce) {
    RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.NegativeLogLikelihoodLoss", args, std::move(dims), x->dt));
    return c.output(0, std::move(y));
  }
  // The kernel always writes log_prob (its working space): the second output when asked for.
  const ir::var r = c.st.fn().call_dps("onnx.SoftmaxCrossEntropyLoss", args,
                                       ir::tuple_info({tensor_struct(dims, x->dt), tensor_struct(x->dims, x->dt)}));
  if (!r.valid()) return c.st.builder_error();
  for (std::int64_t i = 0; i < 2; ++i) {
    entry e;
    e.dt = x->dt;
    e.dims = i == 0 ? dims : x->dims;
    e.v = c.st.fn().get_item(r, i);
    if (!e.v.valid()) return c.st.builder_error();
    RELAXVM_TRY(c.output(static_cast<std::size_t>(i), std::move(e)));
  }
  return {};
}

inline constexpr op_converter loss_converters[] = {
    {"NegativeLogLikelihoodLoss", &convert_loss},
    {"SoftmaxCrossEntropyLoss", &convert_loss},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_LOSS_HPP
