// SPDX-License-Identifier: Apache-2.0
// Output shapes set by values known only at run time: a Reshape's shape, Slice's starts, Expand's
// shape, Reduce's axes, Tile's repeats, Pad's pads, TopK's k, Split's sizes, Range's bounds,
// OneHot's depth, ConstantOfShape's input, Squeeze's and Unsqueeze's axes, when they come from a
// graph input or from data a node computes. Constants and folded Shape arithmetic come first (the
// converters read them at import, exactly); this is the fallback. The rule, the same for every op:
// the op's shape kernel ("onnx.<Op>.shape", kernels/shape.hpp) takes the input's shape and the
// values, checks them and writes the output's dims into a 1-d int64 tensor; the program makes it a
// shape (vm.builtin.tensor_to_shape) and match_casts it to fresh symbolic variables, which the rest
// of the import uses as any symbolic dim. The output's rank must be known at import (from the
// values' static length). An output with such dims has no upper bound, so ir::planned_bytes is -1.
#ifndef RELAXVM_ONNX_RUNTIME_SHAPE_HPP
#define RELAXVM_ONNX_RUNTIME_SHAPE_HPP

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

/// Whether input `i` is given and its values are not known at import: not a constant, and (unless
/// the converter reads symbolic values itself, `symbolic_known`) not folded Shape arithmetic.
inline bool at_run_time(node_ctx& c, std::size_t i, bool symbolic_known = false) {
  if (!c.has_input(i)) return false;
  const entry* e = c.st.find(c.node.inputs[i]);
  if (e == nullptr || e->is_constant()) return false;
  return !(symbolic_known && e->what == entry::kind::symbolic);
}

/// An int list input read at run time (its variable) and its length, which must be known at
/// import: the output's rank depends on it.
struct runtime_list {
  ir::var v;
  std::size_t n = 0;
};
inline result<runtime_list> runtime_ints(node_ctx& c, std::size_t i, std::string_view what) {
  if (!c.st.runtime_shapes)
    return c.unsupported(what, " computed at run time (here the values must be known: a constant fold)");
  RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
  if (e->dt != relaxvm::dtype::int64() && e->dt != relaxvm::dtype::int32())
    return c.fail(what, " must be int64 or int32, but is ", e->dt);
  if (e->dims.size() != 1) return c.fail(what, " must be a 1-d list, but has rank ", e->dims.size());
  if (!e->dims[0].is_const())
    return c.unsupported(what, " computed at run time, of a length known only at run time (the output's rank depends on it)");
  RELAXVM_TRY_ASSIGN(ir::var v, c.st.operand_of(*e));
  return runtime_list{v, static_cast<std::size_t>(e->dims[0].ref().value)};
}

/// `rank` dims computed at run time by shape kernel `kernel` over `args`, as fresh symbolic
/// variables of the function.
inline result<std::vector<ir::sym>> runtime_dims(node_ctx& c, std::string_view kernel, std::span<const ir::operand> args,
                                                 std::size_t rank) {
  if (!c.st.runtime_shapes) return c.unsupported("an output shape computed at run time (here it must be known: a constant fold)");
  ir::block_builder& f = c.st.fn();
  const ir::var t = f.call_dps(kernel, args, tensor_struct({ir::sym(static_cast<std::int64_t>(rank))}, relaxvm::dtype::int64()));
  if (!t.valid()) return c.st.builder_error();
  const ir::var s = f.call_packed("vm.builtin.tensor_to_shape", {ir::operand(t)}, ir::shape_info(static_cast<std::int32_t>(rank)));
  return c.st.run_time_dims(s, rank);
}

/// A run-time int list as a shape value (a kernel's int list argument: Tile's repeats, Reduce's
/// axes); its shape kernel has checked the values before.
inline result<ir::var> runtime_shape_value(node_ctx& c, const runtime_list& l) {
  const ir::var s = c.st.fn().call_packed("vm.builtin.tensor_to_shape", {ir::operand(l.v)}, ir::shape_info(static_cast<std::int32_t>(l.n)));
  if (!s.valid()) return c.st.builder_error();
  return s;
}

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_RUNTIME_SHAPE_HPP
