// SPDX-License-Identifier: Apache-2.0
// Operators that only name or reshape their input (views: no copy), constants, and Dropout at
// inference.
#ifndef RELAXVM_ONNX_CONVERT_SHAPE_HPP
#define RELAXVM_ONNX_CONVERT_SHAPE_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"
#include "runtime_shape.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

inline status convert_identity(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  return c.output(0, *x);
}

inline status convert_flatten(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", 1), x->dims.size(), true));
  const auto at = static_cast<std::size_t>(axis);
  RELAXVM_TRY_ASSIGN(entry y, c.st.view(*x, {product(x->dims, 0, at), product(x->dims, at, x->dims.size())}));
  return c.output(0, std::move(y));
}

inline status convert_reshape(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  std::vector<ir::sym> target;
  if (c.st.opset() < 5) {
    const attribute_info* a = c.node.attribute("shape");
    if (a == nullptr) return c.fail("Reshape before opset 5 needs its shape attribute");
    for (std::int64_t v : a->ints) target.push_back(ir::sym(v));
  } else if (at_run_time(c, 1, true)) {
    // The 0s and the -1 of a shape known only at run time are resolved by its shape kernel.
    RELAXVM_TRY_ASSIGN(const runtime_list s, runtime_ints(c, 1, "the shape"));
    const ir::operand args[] = {ir::shape_arg(std::span<const ir::sym>(x->dims)), s.v, ir::prim(c.attr_int("allowzero", 0) != 0 ? 1 : 0)};
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, runtime_dims(c, "onnx.Reshape.shape", args, s.n));
    RELAXVM_TRY_ASSIGN(entry y, c.st.view(*x, std::move(dims)));
    return c.output(0, std::move(y));
  } else {
    RELAXVM_TRY_ASSIGN(entry* s, c.input(1));
    RELAXVM_TRY_ASSIGN(target, c.st.sym_values(*s, "Reshape", "the shape"));
  }
  const bool allow_zero = c.attr_int("allowzero", 0) != 0;
  std::vector<ir::sym> dims;
  std::int64_t infer = -1;
  ir::sym known(1);
  for (std::size_t k = 0; k < target.size(); ++k) {
    if (!target[k].is_const()) {  // a symbolic dim (from Shape): used as it is
      dims.push_back(target[k]);
      known = known * dims.back();
      continue;
    }
    const std::int64_t t = target[k].ref().value;
    if (t == -1) {
      if (infer >= 0) return c.fail("the shape has more than one -1");
      infer = static_cast<std::int64_t>(k);
      dims.push_back(ir::sym(1));
      continue;
    }
    if (t < -1) return c.fail("the shape has ", t, " at ", k);
    if (t == 0 && !allow_zero) {
      if (k >= x->dims.size()) return c.fail("the shape copies dim ", k, " (0) of an input of rank ", x->dims.size());
      dims.push_back(x->dims[k]);
    } else {
      dims.push_back(ir::sym(t));
    }
    known = known * dims.back();
  }
  if (infer >= 0) dims[static_cast<std::size_t>(infer)] = ir::floordiv(product(x->dims, 0, x->dims.size()), known);
  RELAXVM_TRY_ASSIGN(entry y, c.st.view(*x, std::move(dims)));
  return c.output(0, std::move(y));
}

// Dropout at inference is the identity; in training mode (opset 12's third input) it is random.
inline status convert_dropout(node_ctx& c) {
  if (c.has_input(2)) {
    RELAXVM_TRY_ASSIGN(entry* training, c.input(2));
    if (training->what != entry::kind::constant) return c.unsupported("Dropout with a training_mode computed at run time");
    RELAXVM_TRY_ASSIGN(tensor t, make_tensor(*training->data));
    if (t.numel() != 1 || !t.dtype().is_bool()) return c.fail("training_mode must be one bool");
    if (t.data<const bool>()[0]) return c.unsupported("Dropout in training mode (random masks)");
  }
  if (c.node.outputs.size() > 1 && !c.node.outputs[1].empty()) return c.unsupported("Dropout's mask output");
  return convert_identity(c);
}

inline status convert_constant(node_ctx& c) {
  const attribute_info* v = c.node.attribute("value");
  if (v == nullptr || v->type != attribute_type::t || !v->t)
    return c.unsupported("only Constant's tensor form (the 'value' attribute) is supported yet");
  entry e;
  e.what = entry::kind::constant;
  e.data = v->t.get();
  RELAXVM_TRY_ASSIGN(e.dt, to_dtype(v->t->data_type));
  for (std::int64_t d : v->t->dims) e.dims.push_back(ir::sym(d));
  return c.output(0, std::move(e));
}

inline constexpr op_converter shape_converters[] = {
    {"Identity", &convert_identity}, {"Flatten", &convert_flatten}, {"Reshape", &convert_reshape},
    {"Constant", &convert_constant}, {"Dropout", &convert_dropout},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_SHAPE_HPP
