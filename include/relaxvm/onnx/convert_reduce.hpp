// SPDX-License-Identifier: Apache-2.0
// Reductions: the Reduce* family (axes as an attribute, or as an input from opset 18, ReduceSum's
// from 13), ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax (before opset 13 over the input flattened
// to 2-d at the axis: views around a kernel along axis 1) and TopK; all calls of the portable
// kernels (relaxvm/kernels/reduce.hpp). Axes and k known only at run time go through their shape
// kernels (onnx/runtime_shape.hpp).
#ifndef RELAXVM_ONNX_CONVERT_REDUCE_HPP
#define RELAXVM_ONNX_CONVERT_REDUCE_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"
#include "runtime_shape.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

/// The kernel of the node: "onnx.<op_type>".
inline relaxvm::detail::text kernel_name(const node_ctx& c) {
  relaxvm::detail::text k;
  k << "onnx." << c.node.op_type;
  return k;
}

/// Axes made non-negative, each once.
inline result<std::vector<std::int64_t>> normalize_axes(node_ctx& c, const std::vector<std::int64_t>& axes, std::size_t rank) {
  std::vector<std::int64_t> out;
  for (std::int64_t a : axes) {
    RELAXVM_TRY_ASSIGN(const std::int64_t k, normalize_axis(c, a, rank));
    for (std::int64_t o : out)
      if (o == k) return c.fail("axis ", a, " is repeated");
    out.push_back(k);
  }
  return out;
}

inline status convert_reduce(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kernels::detail::numbers));
  const std::string_view op = c.node.op_type;
  const bool axes_input = c.st.opset() >= (op == "ReduceSum" ? 13 : 18);
  const bool keep = c.attr_int("keepdims", 1) != 0;
  const bool noop = axes_input && c.attr_int("noop_with_empty_axes", 0) != 0;
  if (axes_input && at_run_time(c, 1)) {
    // Axes known only at run time: the reduce shape kernel checks them and works out the dims; the
    // kernel takes them as a shape. With keepdims the rank stays; without, n axes drop n dims (and
    // none drop all, unless noop_with_empty_axes).
    RELAXVM_TRY_ASSIGN(const runtime_list l, runtime_ints(c, 1, "the axes"));
    const std::size_t r = x->dims.size();
    if (l.n > r) return c.fail(l.n, " axes for an input of rank ", r);
    const std::size_t rank = keep ? r : (l.n > 0 ? r - l.n : (noop ? r : 0));
    const ir::operand sargs[] = {ir::shape_arg(std::span<const ir::sym>(x->dims)), l.v, ir::prim(keep ? 1 : 0), ir::prim(noop ? 1 : 0)};
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, runtime_dims(c, "onnx.Reduce.shape", sargs, rank));
    RELAXVM_TRY_ASSIGN(ir::var axes, runtime_shape_value(c, l));
    RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
    const ir::operand args[] = {xv, axes, ir::prim(keep ? 1 : 0), ir::prim(noop ? 1 : 0)};
    RELAXVM_TRY_ASSIGN(entry y, c.st.call(kernel_name(c).view(), args, std::move(dims), x->dt));
    return c.output(0, std::move(y));
  }
  std::vector<std::int64_t> axes;
  if (axes_input) {
    if (c.has_input(1)) {
      RELAXVM_TRY_ASSIGN(entry* a, c.input(1));
      RELAXVM_TRY_ASSIGN(axes, c.st.int_values(*a, op, "axes"));
    }
  } else if (const attribute_info* a = c.node.attribute("axes")) {
    axes = a->ints;
  }
  RELAXVM_TRY_ASSIGN(axes, normalize_axes(c, axes, x->dims.size()));
  std::vector<bool> reduced(x->dims.size(), axes.empty() && !noop);
  for (std::int64_t a : axes) reduced[static_cast<std::size_t>(a)] = true;
  std::vector<ir::sym> dims;
  for (std::size_t k = 0; k < x->dims.size(); ++k) {
    if (!reduced[k]) dims.push_back(x->dims[k]);
    else if (keep) dims.push_back(ir::sym(1));
  }
  std::vector<ir::sym> axes_sym;
  for (std::int64_t a : axes) axes_sym.push_back(ir::sym(a));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::shape_arg(std::span<const ir::sym>(axes_sym)), ir::prim(keep ? 1 : 0), ir::prim(noop ? 1 : 0)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call(kernel_name(c).view(), args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

inline status convert_arg(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kernels::detail::numbers));
  if (x->dims.empty()) return c.fail("the input must have at least one dimension");
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", 0), x->dims.size()));
  const bool keep = c.attr_int("keepdims", 1) != 0;
  const std::int64_t last = c.attr_int("select_last_index", 0);
  std::vector<ir::sym> dims;
  for (std::size_t k = 0; k < x->dims.size(); ++k) {
    if (static_cast<std::int64_t>(k) != axis) dims.push_back(x->dims[k]);
    else if (keep) dims.push_back(ir::sym(1));
  }
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::prim(axis), ir::prim(keep ? 1 : 0), ir::prim(last)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call(kernel_name(c).view(), args, std::move(dims), relaxvm::dtype::int64()));
  return c.output(0, std::move(y));
}

// Softmax, LogSoftmax, Hardmax.
inline status convert_softmax(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  const bool v13 = c.st.opset() >= 13;
  if (x->dims.empty()) return c.fail("the input must have at least one dimension");
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", v13 ? -1 : 1), x->dims.size()));
  const relaxvm::detail::text kernel = kernel_name(c);
  const bool last = axis == static_cast<std::int64_t>(x->dims.size()) - 1;
  if (v13 || last) {
    RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
    const ir::operand args[] = {xv, ir::prim(axis)};
    RELAXVM_TRY_ASSIGN(entry y, c.st.call(kernel.view(), args, x->dims, x->dt));
    return c.output(0, std::move(y));
  }
  // Before opset 13: over x flattened to 2-d at the axis.
  const auto at = static_cast<std::size_t>(axis);
  RELAXVM_TRY_ASSIGN(entry flat, c.st.view(*x, {product(x->dims, 0, at), product(x->dims, at, x->dims.size())}));
  RELAXVM_TRY_ASSIGN(ir::var fv, c.st.operand_of(flat));
  const ir::operand args[] = {fv, ir::prim(1)};
  RELAXVM_TRY_ASSIGN(entry y2, c.st.call(kernel.view(), args, flat.dims, x->dt));
  RELAXVM_TRY_ASSIGN(entry y, c.st.view(y2, x->dims));
  return c.output(0, std::move(y));
}

// The TopK kernel: values and indices of `dims`.
inline status topk_call(node_ctx& c, entry& x, std::int64_t axis, std::vector<ir::sym> dims) {
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(x));
  const ir::operand args[] = {xv, ir::prim(axis), ir::prim(c.attr_int("largest", 1)), ir::prim(c.attr_int("sorted", 1))};
  const ir::var t = c.st.fn().call_dps(
      "onnx.TopK", args, ir::tuple_info({tensor_struct(dims, x.dt), tensor_struct(dims, relaxvm::dtype::int64())}));
  if (!t.valid()) return c.st.builder_error();
  for (std::int64_t i = 0; i < 2; ++i) {
    entry e;
    e.dt = i == 0 ? x.dt : relaxvm::dtype::int64();
    e.dims = dims;
    e.v = c.st.fn().get_item(t, i);
    if (!e.v.valid()) return c.st.builder_error();
    RELAXVM_TRY(c.output(static_cast<std::size_t>(i), std::move(e)));
  }
  return {};
}

inline status convert_topk(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kernels::detail::numbers));
  if (x->dims.empty()) return c.fail("the input must have at least one dimension");
  std::int64_t k = 0;
  if (c.st.opset() < 10) {
    const attribute_info* a = c.node.attribute("k");
    if (a == nullptr) return c.fail("TopK before opset 10 needs its k attribute");
    k = a->i;
  } else if (at_run_time(c, 1)) {
    // k known only at run time: the TopK shape kernel checks it and sets the axis' dim.
    RELAXVM_TRY_ASSIGN(entry* ke, c.input(1));
    if (ke->dt != relaxvm::dtype::int64()) return c.fail("k is ", ke->dt, "; it must be int64");
    RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", -1), x->dims.size()));
    RELAXVM_TRY_ASSIGN(ir::var kv, c.st.operand_of(*ke));
    const ir::operand sargs[] = {ir::shape_arg(std::span<const ir::sym>(x->dims)), kv, ir::prim(axis)};
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> all, runtime_dims(c, "onnx.TopK.shape", sargs, x->dims.size()));
    std::vector<ir::sym> dims = x->dims;  // only the axis' dim is new
    dims[static_cast<std::size_t>(axis)] = all[static_cast<std::size_t>(axis)];
    return topk_call(c, *x, axis, std::move(dims));
  } else {
    RELAXVM_TRY_ASSIGN(entry* ke, c.input(1));
    RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> kv, c.st.int_values(*ke, "TopK", "k"));
    if (kv.size() != 1) return c.fail("k must hold one value, but holds ", kv.size());
    k = kv[0];
  }
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", -1), x->dims.size()));
  const ir::sym& n = x->dims[static_cast<std::size_t>(axis)];
  if (k < 0 || (n.is_const() && k > n.ref().value)) return c.fail("k (", k, ") must be in [0, the axis' dim]");
  std::vector<ir::sym> dims = x->dims;
  dims[static_cast<std::size_t>(axis)] = ir::sym(k);
  return topk_call(c, *x, axis, std::move(dims));
}

inline constexpr op_converter reduce_converters[] = {
    {"ReduceSum", &convert_reduce}, {"ReduceMean", &convert_reduce}, {"ReduceMax", &convert_reduce},
    {"ReduceMin", &convert_reduce}, {"ReduceProd", &convert_reduce}, {"ReduceL1", &convert_reduce},
    {"ReduceL2", &convert_reduce}, {"ReduceLogSum", &convert_reduce}, {"ReduceLogSumExp", &convert_reduce},
    {"ReduceSumSquare", &convert_reduce}, {"ArgMax", &convert_arg}, {"ArgMin", &convert_arg},
    {"Softmax", &convert_softmax}, {"LogSoftmax", &convert_softmax}, {"Hardmax", &convert_softmax},
    {"TopK", &convert_topk},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_REDUCE_HPP
