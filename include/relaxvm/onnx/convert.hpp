// SPDX-License-Identifier: Apache-2.0
// The ONNX operators the importer converts: each a function from a node to kernel calls (or
// views, or folded constants), with the output's dtype and symbolic shape computed here, under
// the semantics of the model's opset for the default domain. The table at the end lists them.
#ifndef RELAXVM_ONNX_CONVERT_HPP
#define RELAXVM_ONNX_CONVERT_HPP

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "import.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

/// Where a node is, for messages: "node 3 (Gemm 'fc1')".
inline relaxvm::detail::text node_text(const node_info& n, std::size_t index) {
  relaxvm::detail::text t;
  t << "node " << index << " (" << n.op_type;
  if (!n.name.empty()) t << " '" << n.name << "'";
  t << ")";
  return t;
}

/// A node being converted: its inputs and attributes, and where errors point.
struct node_ctx {
  import_state& st;
  const node_info& node;
  std::size_t index;

  std::size_t inputs() const { return node.inputs.size(); }
  bool has_input(std::size_t i) const { return i < node.inputs.size() && !node.inputs[i].empty(); }
  result<entry*> input(std::size_t i) {
    if (!has_input(i)) return fail("input ", i, " is missing");
    entry* e = st.find(node.inputs[i]);
    if (e == nullptr) return fail("input ", i, " ('", node.inputs[i], "') is not defined before the node");
    return e;
  }
  std::int64_t attr_int(std::string_view n, std::int64_t dflt) const {
    const attribute_info* a = node.attribute(n);
    return a != nullptr && a->type == attribute_type::i ? a->i : dflt;
  }
  float attr_float(std::string_view n, float dflt) const {
    const attribute_info* a = node.attribute(n);
    return a != nullptr && a->type == attribute_type::f ? a->f : dflt;
  }
  status output(std::size_t i, entry e) {
    if (i >= node.outputs.size() || node.outputs[i].empty()) return {};  // an output nobody asked for
    st.bind(node.outputs[i], std::move(e));
    return {};
  }
  template <class... Parts>
  error fail(const Parts&... parts) const {
    return value_error("onnx: ", node_text(node, index).view(), ": ", parts...);
  }
  template <class... Parts>
  error unsupported(const Parts&... parts) const {
    return value_error("onnx: ", node_text(node, index).view(), " is not supported: ", parts...);
  }
};

// ---- shape arithmetic ------------------------------------------------------------------------

/// Whether two dims are the same: equal constants, or the same symbolic expression.
inline bool same_dim(const ir::sym& a, const ir::sym& b) { return a.ref().node == b.ref().node && a.ref().value == b.ref().value; }

/// NumPy's broadcast of two shapes, or an error when two known dims differ and neither is 1.
inline result<std::vector<ir::sym>> broadcast(node_ctx& c, const std::vector<ir::sym>& a, const std::vector<ir::sym>& b) {
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  std::vector<ir::sym> out(n, ir::sym(1));
  for (std::size_t k = 0; k < n; ++k) {
    const bool in_a = k < a.size(), in_b = k < b.size();
    const ir::sym da = in_a ? a[a.size() - 1 - k] : ir::sym(1);
    const ir::sym db = in_b ? b[b.size() - 1 - k] : ir::sym(1);
    ir::sym& o = out[n - 1 - k];
    if (da.is_const() && da.ref().value == 1) o = db;
    else if (db.is_const() && db.ref().value == 1) o = da;
    else if (same_dim(da, db)) o = da;
    else if (da.is_const() && db.is_const())
      return c.fail("the shapes of inputs 0 and 1 do not broadcast (", da.ref().value, " against ", db.ref().value, ")");
    else o = da.is_const() ? da : db;  // a symbolic dim against a known one: the kernel checks at run time
  }
  return out;
}

inline status require_float(node_ctx& c, const entry& e, std::size_t i) {
  if (e.dt == relaxvm::dtype::float32() || e.dt == relaxvm::dtype::float64()) return {};
  return c.unsupported("input ", i, " is ", e.dt, "; this kernel takes float32 and float64");
}

// ---- converters --------------------------------------------------------------------------------

inline status convert_identity(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  return c.output(0, *x);
}

// Unary elementwise ops with a float kernel of the same shape.
template <const char* Kernel>
status convert_unary(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_float(c, *x, 0));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call(Kernel, args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

// Binary elementwise ops with NumPy broadcasting.
template <const char* Kernel>
status convert_binary(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_float(c, *a, 0));
  if (a->dt != b->dt) return c.fail("inputs 0 and 1 have different dtypes (", a->dt, " and ", b->dt, ")");
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, broadcast(c, a->dims, b->dims));
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(*a));
  RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(*b));
  const ir::operand args[] = {av, bv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call(Kernel, args, std::move(dims), a->dt));
  return c.output(0, std::move(y));
}

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
inline result<std::int64_t> normalize_axis(node_ctx& c, std::int64_t axis, std::size_t rank, bool inclusive = false) {
  const auto r = static_cast<std::int64_t>(rank);
  const std::int64_t hi = inclusive ? r : r - 1;
  if (axis < -r || axis > hi) return c.fail("axis ", axis, " is outside [", -r, ", ", hi, "]");
  return axis < 0 ? axis + r : axis;
}

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

// The product of dims [from, to).
inline ir::sym product(const std::vector<ir::sym>& dims, std::size_t from, std::size_t to) {
  ir::sym p(1);
  for (std::size_t k = from; k < to; ++k) p = p * dims[k];
  return p;
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
  std::vector<std::int64_t> target;
  if (c.st.opset() < 5) {
    const attribute_info* a = c.node.attribute("shape");
    if (a == nullptr) return c.fail("Reshape before opset 5 needs its shape attribute");
    target = a->ints;
  } else {
    RELAXVM_TRY_ASSIGN(entry* s, c.input(1));
    RELAXVM_TRY_ASSIGN(target, c.st.int_values(*s, "Reshape", "the shape"));
  }
  const bool allow_zero = c.attr_int("allowzero", 0) != 0;
  std::vector<ir::sym> dims;
  std::int64_t infer = -1;
  ir::sym known(1);
  for (std::size_t k = 0; k < target.size(); ++k) {
    const std::int64_t t = target[k];
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

// The kernels' names (template arguments need objects with linkage).
inline constexpr char k_relu[] = "ops.relu_out";
inline constexpr char k_sigmoid[] = "ops.sigmoid_out";
inline constexpr char k_add[] = "ops.add_out";
inline constexpr char k_sub[] = "ops.subtract_out";
inline constexpr char k_mul[] = "ops.multiply_out";
inline constexpr char k_div[] = "ops.divide_out";
inline constexpr char k_max[] = "ops.maximum_out";

using converter = status (*)(node_ctx&);
struct op_converter {
  std::string_view op_type;
  converter fn;
};

/// Every operator of the default domain the importer converts.
inline constexpr op_converter converters[] = {
    {"Add", &convert_binary<k_add>},       {"Sub", &convert_binary<k_sub>},
    {"Mul", &convert_binary<k_mul>},       {"Div", &convert_binary<k_div>},
    {"Relu", &convert_unary<k_relu>},      {"Sigmoid", &convert_unary<k_sigmoid>},
    {"MatMul", &convert_matmul},           {"Gemm", &convert_gemm},
    {"Softmax", &convert_softmax},         {"Flatten", &convert_flatten},
    {"Reshape", &convert_reshape},         {"Identity", &convert_identity},
    {"Constant", &convert_constant},       {"Dropout", &convert_dropout},
};

inline converter find_converter(std::string_view domain, std::string_view op) {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  for (const op_converter& c : converters)
    if (c.op_type == op) return c.fn;
  return nullptr;
}

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_HPP
