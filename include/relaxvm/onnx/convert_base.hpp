// SPDX-License-Identifier: Apache-2.0
// What the converters share: the node being converted (its inputs, attributes, outputs, and the
// place errors point at), shape arithmetic (broadcasting, axes) and the table entry type. Each
// family of operators lives in its own file (convert_*.hpp) with its own table; convert.hpp joins
// the tables.
#ifndef RELAXVM_ONNX_CONVERT_BASE_HPP
#define RELAXVM_ONNX_CONVERT_BASE_HPP

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../kernels/base.hpp"
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
    return unsupported_error("onnx: ", node_text(node, index).view(), " is not supported: ", parts...);
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

/// The element types a kernel takes (kernels::detail::type_set), checked at import so that a
/// model the kernels cannot run is refused before it runs.
inline status require_type(node_ctx& c, const entry& e, std::size_t i, std::uint32_t set) {
  if (kernels::detail::in_set(e.dt, set)) return {};
  return c.unsupported("input ", i, " is ", e.dt, ", which its kernel does not take");
}
inline status require_float(node_ctx& c, const entry& e, std::size_t i) { return require_type(c, e, i, kernels::detail::floats); }

/// The product of dims [from, to).
inline ir::sym product(const std::vector<ir::sym>& dims, std::size_t from, std::size_t to) {
  ir::sym p(1);
  for (std::size_t k = from; k < to; ++k) p = p * dims[k];
  return p;
}

/// `axis` in [-rank, rank) (or [-rank, rank] when `inclusive`: Flatten's, Unsqueeze's), made
/// non-negative.
inline result<std::int64_t> normalize_axis(node_ctx& c, std::int64_t axis, std::size_t rank, bool inclusive = false) {
  const auto r = static_cast<std::int64_t>(rank);
  const std::int64_t hi = inclusive ? r : r - 1;
  if (axis < -r || axis > hi) return c.fail("axis ", axis, " is outside [", -r, ", ", hi, "]");
  return axis < 0 ? axis + r : axis;
}

/// A kernel's operands: tensors, absent optional inputs, attributes.
inline ir::operand absent() { return ir::operand(ir::leaf{}); }

using converter = status (*)(node_ctx&);
struct op_converter {
  std::string_view op_type;
  converter fn;
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_BASE_HPP
