// SPDX-License-Identifier: Apache-2.0
// The selections whose output's size depends on the data, NonZero and Compress: a shape function
// runs first when the program runs, its dims bound to fresh symbolic variables
// (import_state::run_time_dims), then the destination-passing kernel (relaxvm/kernels/select.hpp).
#ifndef RELAXVM_ONNX_CONVERT_SELECT_HPP
#define RELAXVM_ONNX_CONVERT_SELECT_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../kernels/select.hpp"
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

inline status convert_nonzero(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kernels::detail::any_type));
  if (x->dims.empty()) return c.unsupported("NonZero of a scalar");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::var shp = c.st.fn().call_packed("onnx.NonZero.shape", {xv}, ir::shape_info(2));
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, c.st.run_time_dims(shp, 2));
  const ir::operand args[] = {xv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.NonZero", args, std::move(dims), relaxvm::dtype::int64()));
  return c.output(0, std::move(y));
}

inline status convert_compress(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kernels::detail::any_type));
  RELAXVM_TRY_ASSIGN(entry* cond, c.input(1));
  if (!cond->dt.is_bool()) return c.fail("the condition (input 1) is ", cond->dt, "; it must be bool");
  if (cond->dims.size() != 1) return c.fail("the condition must be 1-d");
  std::int64_t axis = -1;
  const bool has_axis = c.node.attribute("axis") != nullptr;
  if (has_axis) {
    if (x->dims.empty()) return c.fail("an axis is given, but the input is a scalar");
    RELAXVM_TRY_ASSIGN(axis, normalize_axis(c, c.attr_int("axis", 0), x->dims.size()));
  }
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(ir::var cv, c.st.operand_of(*cond));
  const std::size_t rank = has_axis ? x->dims.size() : 1;
  const ir::var shp = c.st.fn().call_packed("onnx.Compress.shape", {xv, cv, ir::prim(axis)}, ir::shape_info(static_cast<std::int32_t>(rank)));
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, c.st.run_time_dims(shp, rank));
  // Only the selected axis changes: the others keep the input's (symbolic) dims.
  for (std::size_t k = 0; has_axis && k < rank; ++k)
    if (static_cast<std::int64_t>(k) != axis) dims[k] = x->dims[k];
  const ir::operand args[] = {xv, cv, ir::prim(axis)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Compress", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

inline constexpr op_converter select_converters[] = {
    {"NonZero", &convert_nonzero},
    {"Compress", &convert_compress},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_SELECT_HPP
