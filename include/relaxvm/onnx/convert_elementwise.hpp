// SPDX-License-Identifier: Apache-2.0
// Elementwise operators: unary maps (with their attributes), binary ops with NumPy broadcasting,
// the variadic Sum/Mean/Max/Min, comparisons and logic, Where, Clip and PRelu; all calls of the
// portable kernels (relaxvm/kernels/elementwise.hpp).
#ifndef RELAXVM_ONNX_CONVERT_ELEMENTWISE_HPP
#define RELAXVM_ONNX_CONVERT_ELEMENTWISE_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

namespace ks = kernels::detail;

// A unary kernel "onnx.<op_type>" over `Set`, with the float attributes named in Attrs (default
// values after each name's '=': "alpha=0.01").
template <std::uint32_t Set, bool ToBool = false>
status unary(node_ctx& c, std::span<const std::pair<std::string_view, double>> attrs = {}) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, Set));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  std::vector<ir::operand> args{xv};
  for (const auto& [name, dflt] : attrs) args.push_back(ir::prim_float(c.attr_float(name, static_cast<float>(dflt))));
  relaxvm::detail::text kernel;
  kernel << "onnx." << c.node.op_type;
  RELAXVM_TRY_ASSIGN(entry y, c.st.call(kernel.view(), args, x->dims, ToBool ? relaxvm::dtype::bool_() : x->dt));
  return c.output(0, std::move(y));
}

template <std::uint32_t Set>
status convert_unary(node_ctx& c) {
  return unary<Set>(c);
}
inline status convert_float_unary(node_ctx& c) { return unary<ks::floats>(c); }
inline status convert_is_nan(node_ctx& c) { return unary<ks::floats, true>(c); }

inline status convert_leaky_relu(node_ctx& c) {
  const std::pair<std::string_view, double> a[] = {{"alpha", 0.01}};
  return unary<ks::floats>(c, a);
}
inline status convert_elu(node_ctx& c) {
  const std::pair<std::string_view, double> a[] = {{"alpha", 1.0}};
  return unary<ks::floats>(c, a);
}
inline status convert_thresholded_relu(node_ctx& c) {
  const std::pair<std::string_view, double> a[] = {{"alpha", 1.0}};
  return unary<ks::floats>(c, a);
}
inline status convert_selu(node_ctx& c) {
  // ONNX's defaults, as float32 values.
  const std::pair<std::string_view, double> a[] = {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}};
  return unary<ks::floats>(c, a);
}
inline status convert_hard_sigmoid(node_ctx& c) {
  const std::pair<std::string_view, double> a[] = {{"alpha", 0.2}, {"beta", 0.5}};
  return unary<ks::floats>(c, a);
}
inline status convert_shrink(node_ctx& c) {
  const std::pair<std::string_view, double> a[] = {{"bias", 0.0}, {"lambd", 0.5}};
  return unary<ks::numbers>(c, a);
}
inline status convert_is_inf(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::prim(c.attr_int("detect_negative", 1)), ir::prim(c.attr_int("detect_positive", 1))};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.IsInf", args, x->dims, relaxvm::dtype::bool_()));
  return c.output(0, std::move(y));
}

/// kernel(a, b, [extra...]) with NumPy broadcasting; the result has a's dtype, or bool.
inline result<entry> broadcast_call(node_ctx& c, std::string_view kernel, entry& a, entry& b, bool to_bool,
                                    std::span<const ir::operand> extra = {}) {
  if (a.dt != b.dt) return c.fail("inputs have different dtypes (", a.dt, " and ", b.dt, ")");
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, broadcast(c, a.dims, b.dims));
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(a));
  RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(b));
  std::vector<ir::operand> args{av, bv};
  args.insert(args.end(), extra.begin(), extra.end());
  return c.st.call(kernel, args, std::move(dims), to_bool ? relaxvm::dtype::bool_() : a.dt);
}

template <std::uint32_t Set, bool ToBool = false>
status convert_binary(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_type(c, *a, 0, Set));
  relaxvm::detail::text kernel;
  kernel << "onnx." << c.node.op_type;
  RELAXVM_TRY_ASSIGN(entry y, broadcast_call(c, kernel.view(), *a, *b, ToBool));
  return c.output(0, std::move(y));
}

inline status convert_pow(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_type(c, *a, 0, ks::numbers));
  RELAXVM_TRY(require_type(c, *b, 1, ks::numbers));
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, broadcast(c, a->dims, b->dims));
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(*a));
  RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(*b));
  const ir::operand args[] = {av, bv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Pow", args, std::move(dims), a->dt));
  return c.output(0, std::move(y));
}

inline status convert_mod(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_type(c, *a, 0, ks::numbers));
  const std::int64_t fmod = c.attr_int("fmod", 0);
  if (fmod == 0 && a->dt.is_float()) return c.fail("Mod of floats needs fmod = 1");
  const ir::operand extra[] = {ir::prim(fmod)};
  RELAXVM_TRY_ASSIGN(entry y, broadcast_call(c, "onnx.Mod", *a, *b, false, extra));
  return c.output(0, std::move(y));
}

inline status convert_bit_shift(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_type(c, *a, 0, ks::unsigned_ints));
  const attribute_info* dir = c.node.attribute("direction");
  if (dir == nullptr || (dir->s != "LEFT" && dir->s != "RIGHT")) return c.fail("direction must be LEFT or RIGHT");
  const ir::operand extra[] = {ir::prim(dir->s == "LEFT" ? 1 : 0)};
  RELAXVM_TRY_ASSIGN(entry y, broadcast_call(c, "onnx.BitShift", *a, *b, false, extra));
  return c.output(0, std::move(y));
}

// Sum, Mean, Max, Min of one or more inputs: a chain of the binary kernel (Mean then divides).
inline status convert_variadic(node_ctx& c) {
  if (c.inputs() == 0) return c.fail("needs at least one input");
  const std::string_view op = c.node.op_type;
  const std::string_view kernel = op == "Max" ? "onnx.Max" : op == "Min" ? "onnx.Min" : "onnx.Add";
  RELAXVM_TRY_ASSIGN(entry* first, c.input(0));
  RELAXVM_TRY(require_type(c, *first, 0, op == "Mean" ? ks::floats : ks::numbers));
  entry acc = *first;
  for (std::size_t i = 1; i < c.inputs(); ++i) {
    RELAXVM_TRY_ASSIGN(entry* next, c.input(i));
    RELAXVM_TRY_ASSIGN(acc, broadcast_call(c, kernel, acc, *next, false));
  }
  if (op == "Mean" && c.inputs() > 1) {
    RELAXVM_TRY_ASSIGN(tensor n, tensor::try_empty(relaxvm::shape{}, acc.dt));
    if (acc.dt == relaxvm::dtype::float32()) n.data<float>()[0] = static_cast<float>(c.inputs());
    else n.data<double>()[0] = static_cast<double>(c.inputs());
    entry count = entry::of(std::move(n));
    RELAXVM_TRY_ASSIGN(acc, broadcast_call(c, "onnx.Div", acc, count, false));
  }
  return c.output(0, std::move(acc));
}

inline status convert_where(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* cond, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* x, c.input(1));
  RELAXVM_TRY_ASSIGN(entry* y, c.input(2));
  RELAXVM_TRY(require_type(c, *cond, 0, ks::bools));
  if (x->dt != y->dt) return c.fail("inputs 1 and 2 have different dtypes (", x->dt, " and ", y->dt, ")");
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> xy, broadcast(c, x->dims, y->dims));
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, broadcast(c, cond->dims, xy));
  RELAXVM_TRY_ASSIGN(ir::var cv, c.st.operand_of(*cond));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(ir::var yv, c.st.operand_of(*y));
  const ir::operand args[] = {cv, xv, yv};
  RELAXVM_TRY_ASSIGN(entry out, c.st.call("onnx.Where", args, std::move(dims), x->dt));
  return c.output(0, std::move(out));
}

// A one-element constant of `dt` holding `v` (Clip's bounds before opset 11).
inline result<entry> scalar_constant(relaxvm::dtype dt, double v) {
  RELAXVM_TRY_ASSIGN(tensor t, tensor::try_empty(relaxvm::shape{}, dt));
  if (dt == relaxvm::dtype::float32()) t.data<float>()[0] = static_cast<float>(v);
  else if (dt == relaxvm::dtype::float64()) t.data<double>()[0] = v;
  else return unsupported_error("onnx: a scalar constant of ", dt, " is not supported");
  return entry::of(std::move(t));
}

inline status convert_clip(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, ks::numbers));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  std::vector<ir::operand> args{xv};
  if (c.st.opset() < 11) {  // bounds as attributes
    for (const std::string_view name : {"min", "max"}) {
      const attribute_info* a = c.node.attribute(name);
      if (a == nullptr) {
        args.push_back(absent());
        continue;
      }
      RELAXVM_TRY_ASSIGN(entry b, scalar_constant(x->dt, a->f));
      RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(b));
      args.push_back(bv);
    }
  } else {
    for (std::size_t i = 1; i <= 2; ++i) {
      if (!c.has_input(i)) {
        args.push_back(absent());
        continue;
      }
      RELAXVM_TRY_ASSIGN(entry* b, c.input(i));
      if (b->dt != x->dt) return c.fail("input ", i, " is ", b->dt, " but input 0 is ", x->dt);
      RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(*b));
      args.push_back(bv);
    }
  }
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Clip", args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

inline status convert_prelu(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* slope, c.input(1));
  RELAXVM_TRY(require_type(c, *x, 0, ks::floats | ks::signed_ints));
  entry s = *slope;
  // Opset 6 and a one-dim slope of x's channel count apply along axis 1 (per channel): as a view
  // of shape (C, 1, ..., 1) it broadcasts that way.
  if (c.st.opset() < 7 && s.dims.size() == 1 && x->dims.size() > 2) {
    std::vector<ir::sym> d{s.dims[0]};
    for (std::size_t k = 2; k < x->dims.size(); ++k) d.push_back(ir::sym(1));
    RELAXVM_TRY_ASSIGN(s, c.st.view(s, std::move(d)));
  }
  RELAXVM_TRY_ASSIGN(entry y, broadcast_call(c, "onnx.PRelu", *x, s, false));
  return c.output(0, std::move(y));
}

inline constexpr op_converter elementwise_converters[] = {
    {"Sqrt", &convert_float_unary}, {"Exp", &convert_float_unary}, {"Log", &convert_float_unary},
    {"Erf", &convert_float_unary}, {"Tanh", &convert_float_unary}, {"Sigmoid", &convert_float_unary},
    {"Softplus", &convert_float_unary}, {"Softsign", &convert_float_unary}, {"Reciprocal", &convert_float_unary},
    {"Floor", &convert_float_unary}, {"Ceil", &convert_float_unary}, {"Round", &convert_float_unary},
    {"Sin", &convert_float_unary}, {"Cos", &convert_float_unary}, {"Tan", &convert_float_unary},
    {"Asin", &convert_float_unary}, {"Acos", &convert_float_unary}, {"Atan", &convert_float_unary},
    {"Sinh", &convert_float_unary}, {"Cosh", &convert_float_unary}, {"Asinh", &convert_float_unary},
    {"Acosh", &convert_float_unary}, {"Atanh", &convert_float_unary}, {"HardSwish", &convert_float_unary},
    {"Abs", &convert_unary<ks::numbers>}, {"Neg", &convert_unary<ks::floats | ks::signed_ints>},
    {"Sign", &convert_unary<ks::numbers>}, {"Relu", &convert_unary<ks::floats | ks::signed_ints>},
    {"Not", &convert_unary<ks::bools>}, {"IsNaN", &convert_is_nan}, {"IsInf", &convert_is_inf},
    {"LeakyRelu", &convert_leaky_relu}, {"Elu", &convert_elu}, {"Celu", &convert_elu},
    {"ThresholdedRelu", &convert_thresholded_relu}, {"Selu", &convert_selu}, {"HardSigmoid", &convert_hard_sigmoid},
    {"Shrink", &convert_shrink},
    {"Add", &convert_binary<ks::numbers>}, {"Sub", &convert_binary<ks::numbers>},
    {"Mul", &convert_binary<ks::numbers>}, {"Div", &convert_binary<ks::numbers>},
    {"Pow", &convert_pow}, {"Mod", &convert_mod}, {"BitShift", &convert_bit_shift}, {"PRelu", &convert_prelu},
    {"Equal", &convert_binary<ks::any_type, true>}, {"Less", &convert_binary<ks::numbers, true>},
    {"LessOrEqual", &convert_binary<ks::numbers, true>}, {"Greater", &convert_binary<ks::numbers, true>},
    {"GreaterOrEqual", &convert_binary<ks::numbers, true>}, {"And", &convert_binary<ks::bools, true>},
    {"Or", &convert_binary<ks::bools, true>}, {"Xor", &convert_binary<ks::bools, true>},
    {"Sum", &convert_variadic}, {"Mean", &convert_variadic}, {"Max", &convert_variadic}, {"Min", &convert_variadic},
    {"Where", &convert_where}, {"Clip", &convert_clip},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_ELEMENTWISE_HPP
