// SPDX-License-Identifier: Apache-2.0
// Normalizations at inference: BatchNormalization (its training outputs and modes refused),
// InstanceNormalization, LayerNormalization (with its optional Mean and InvStdDev outputs), LRN
// and MeanVarianceNormalization; all calls of the portable kernels
// (relaxvm/kernels/normalization.hpp).
#ifndef RELAXVM_ONNX_CONVERT_NORMALIZATION_HPP
#define RELAXVM_ONNX_CONVERT_NORMALIZATION_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

/// Inputs [from, to) as operands, each of x's dtype.
inline result<std::vector<ir::operand>> same_type_operands(node_ctx& c, const entry& x, std::size_t from, std::size_t to) {
  std::vector<ir::operand> out;
  for (std::size_t i = from; i < to; ++i) {
    RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
    if (e->dt != x.dt) return c.unsupported("input ", i, " is ", e->dt, " but input 0 is ", x.dt, " (mixed types have no kernel)");
    RELAXVM_TRY_ASSIGN(ir::var v, c.st.operand_of(*e));
    out.push_back(v);
  }
  return out;
}

inline bool wants_output(const node_ctx& c, std::size_t i) { return i < c.node.outputs.size() && !c.node.outputs[i].empty(); }

inline status convert_batch_norm(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  if (x->dims.size() < 2) return c.fail("the input must have at least 2 dims (N, C, ...)");
  const std::int64_t opset = c.st.opset();
  if (opset < 7 && c.attr_int("is_test", 0) == 0) return c.unsupported("BatchNormalization in training mode (is_test = 0)");
  if (opset < 9 && c.attr_int("spatial", 1) == 0) return c.unsupported("BatchNormalization with spatial = 0");
  if (opset >= 14 && c.attr_int("training_mode", 0) != 0) return c.unsupported("BatchNormalization in training mode");
  for (std::size_t i = 1; i < c.node.outputs.size(); ++i)
    if (wants_output(c, i)) return c.unsupported("BatchNormalization's training outputs (running and saved statistics)");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(std::vector<ir::operand> args, same_type_operands(c, *x, 1, 5));
  args.insert(args.begin(), xv);
  args.push_back(ir::prim_float(c.attr_float("epsilon", 1e-5f)));
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.BatchNormalization", args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

inline status convert_instance_norm(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  if (x->dims.size() < 2) return c.fail("the input must have at least 2 dims (N, C, ...)");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(std::vector<ir::operand> args, same_type_operands(c, *x, 1, 3));
  args.insert(args.begin(), xv);
  args.push_back(ir::prim_float(c.attr_float("epsilon", 1e-5f)));
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.InstanceNormalization", args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

inline status convert_layer_norm(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  if (x->dims.empty()) return c.fail("the input must have at least one dimension");
  if (c.attr_int("stash_type", 1) != 1) return c.unsupported("LayerNormalization with stash_type other than float");
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", -1), x->dims.size()));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(std::vector<ir::operand> args, same_type_operands(c, *x, 1, 2));
  args.insert(args.begin(), xv);
  if (c.has_input(2)) {
    RELAXVM_TRY_ASSIGN(std::vector<ir::operand> b, same_type_operands(c, *x, 2, 3));
    args.push_back(b[0]);
  } else {
    args.push_back(absent());
  }
  args.push_back(ir::prim(axis));
  args.push_back(ir::prim_float(c.attr_float("epsilon", 1e-5f)));
  std::vector<ir::sym> stat_dims = x->dims;
  for (std::size_t k = static_cast<std::size_t>(axis); k < stat_dims.size(); ++k) stat_dims[k] = ir::sym(1);
  const relaxvm::dtype f32 = relaxvm::dtype::float32();
  const ir::var t = c.st.fn().call_dps("onnx.LayerNormalization", args,
                                       ir::tuple_info({tensor_struct(x->dims, x->dt), tensor_struct(stat_dims, f32), tensor_struct(stat_dims, f32)}));
  if (!t.valid()) return c.st.builder_error();
  for (std::int64_t i = 0; i < 3; ++i) {
    if (!wants_output(c, static_cast<std::size_t>(i))) continue;
    entry e;
    e.dt = i == 0 ? x->dt : f32;
    e.dims = i == 0 ? x->dims : stat_dims;
    e.v = c.st.fn().get_item(t, i);
    if (!e.v.valid()) return c.st.builder_error();
    RELAXVM_TRY(c.output(static_cast<std::size_t>(i), std::move(e)));
  }
  return {};
}

inline status convert_lrn(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  if (x->dims.size() < 2) return c.fail("the input must have at least 2 dims (N, C, ...)");
  const std::int64_t size = c.attr_int("size", 0);
  if (size < 1) return c.fail("the size attribute must be given and at least 1");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::prim_float(c.attr_float("alpha", 1e-4f)), ir::prim_float(c.attr_float("beta", 0.75f)),
                              ir::prim_float(c.attr_float("bias", 1.0f)), ir::prim(size)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.LRN", args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

inline status convert_mvn(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  std::vector<std::int64_t> axes{0, 2, 3};
  if (const attribute_info* a = c.node.attribute("axes")) axes = a->ints;
  std::vector<ir::sym> axes_sym;
  for (std::int64_t a : axes) {
    RELAXVM_TRY_ASSIGN(const std::int64_t k, normalize_axis(c, a, x->dims.size()));
    axes_sym.push_back(ir::sym(k));
  }
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::shape_arg(std::span<const ir::sym>(axes_sym))};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.MeanVarianceNormalization", args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

inline constexpr op_converter normalization_converters[] = {
    {"BatchNormalization", &convert_batch_norm}, {"InstanceNormalization", &convert_instance_norm},
    {"LayerNormalization", &convert_layer_norm}, {"LRN", &convert_lrn},
    {"MeanVarianceNormalization", &convert_mvn},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_NORMALIZATION_HPP
