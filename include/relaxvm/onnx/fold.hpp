// SPDX-License-Identifier: Apache-2.0
// Folding at import. Two kinds:
// - Shape arithmetic: Shape, Size, and Gather, Unsqueeze, Squeeze, Concat, Slice, Cast, Identity,
//   Add, Sub, Mul, Div, Neg, Min, Max over 0-d and 1-d integer values whose elements are known as
//   symbolic expressions (entry::kind::symbolic). torch writes a dynamic Reshape's target this
//   way (Shape -> Gather -> Unsqueeze -> Concat -> Reshape); folded, the target is a symbolic
//   shape, and the planner plans the reshaped tensor like any other.
// - Constant subgraphs: a node whose inputs are all constants (initializers, Constants, folded
//   values) runs once, at import, on the VM with the same kernels, and its outputs become
//   constants.
#ifndef RELAXVM_ONNX_FOLD_HPP
#define RELAXVM_ONNX_FOLD_HPP

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

namespace fold {

// A small integer value known at import as symbolic elements (symbolic, or an int constant of at
// most 64 elements and rank 0 or 1), or null.
struct sym_value {
  bool ok = false;
  bool scalar = false;
  std::vector<ir::sym> v;
};
inline sym_value as_sym(import_state& st, const entry* e) {
  sym_value out;
  if (e == nullptr) return out;
  if (e->what == entry::kind::symbolic) {
    out.ok = true;
    out.scalar = e->dims.empty();
    out.v = e->values;
    return out;
  }
  if (e->what != entry::kind::constant || e->dims.size() > 1) return out;
  if (e->dt != relaxvm::dtype::int64() && e->dt != relaxvm::dtype::int32()) return out;
  if (e->dims.size() == 1 && (!e->dims[0].is_const() || e->dims[0].ref().value > 64)) return out;
  result<std::vector<std::int64_t>> ints = st.int_values(*e, "", "");
  if (!ints.ok()) return out;
  out.ok = true;
  out.scalar = e->dims.empty();
  for (std::int64_t x : *ints) out.v.push_back(ir::sym(x));
  return out;
}

inline bool has_symbolic(import_state& st, const node_info& n) {
  for (std::string_view in : n.inputs) {
    const entry* e = st.find(in);
    if (e != nullptr && e->what == entry::kind::symbolic) return true;
  }
  return false;
}

// Python-style index normalization within [0, n].
inline std::int64_t clamp_index(std::int64_t i, std::int64_t n, bool inclusive_end) {
  if (i < 0) i += n;
  if (i < 0) i = inclusive_end ? -1 : 0;
  if (i > n) i = n;
  return i;
}

}  // namespace fold

/// The operators that always fold (their result is the shape of their input).
inline bool folds_always(std::string_view domain, std::string_view op) {
  return (domain.empty() || domain == "ai.onnx") && (op == "Shape" || op == "Size");
}
/// The operators fold_symbolic folds over symbolic values (elsewhere they need a converter).
inline bool may_fold(std::string_view domain, std::string_view op) {
  if (!domain.empty() && domain != "ai.onnx") return false;
  for (std::string_view f : {"Shape", "Size", "Identity", "Cast", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Neg",
                             "Add", "Sub", "Mul", "Div", "Min", "Max"})
    if (op == f) return true;
  return false;
}

/// Folds `c`'s node when it computes shape arithmetic; true when it did (its outputs bound).
inline result<bool> fold_symbolic(node_ctx& c) {
  using fold::sym_value;
  import_state& st = c.st;
  const node_info& n = c.node;
  const std::string_view op = n.op_type;
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  const relaxvm::dtype i64 = relaxvm::dtype::int64();

  if (op == "Shape") {
    RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
    const auto r = static_cast<std::int64_t>(x->dims.size());
    std::int64_t start = c.attr_int("start", 0), end = c.attr_int("end", r);
    start = fold::clamp_index(start, r, false);
    end = fold::clamp_index(end, r, false);
    std::vector<ir::sym> v;
    for (std::int64_t k = start; k < end; ++k) v.push_back(x->dims[static_cast<std::size_t>(k)]);
    RELAXVM_TRY(c.output(0, entry::of_values(std::move(v))));
    return true;
  }
  if (op == "Size") {
    RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
    RELAXVM_TRY(c.output(0, entry::of_values({product(x->dims, 0, x->dims.size())}, i64, true)));
    return true;
  }
  // The others fold only when some input is symbolic (all-constant nodes fold as constants).
  if (!fold::has_symbolic(st, n)) return false;
  std::vector<sym_value> in;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    in.push_back(n.inputs[i].empty() ? sym_value{} : fold::as_sym(st, st.find(n.inputs[i])));
    if (!n.inputs[i].empty() && !in.back().ok) return false;  // a tensor input: not shape arithmetic
  }
  if (in.empty() || !in[0].ok) return false;
  const entry* first = st.find(n.inputs[0]);
  const relaxvm::dtype dt = first != nullptr ? first->dt : i64;

  if (op == "Identity") {
    RELAXVM_TRY(c.output(0, *st.find(n.inputs[0])));
    return true;
  }
  if (op == "Cast") {
    const std::int64_t to = c.attr_int("to", 0);
    if (to != static_cast<std::int64_t>(data_type::int64) && to != static_cast<std::int64_t>(data_type::int32)) return false;
    RELAXVM_TRY(c.output(0, entry::of_values(in[0].v, to == 7 ? i64 : relaxvm::dtype::int32(), in[0].scalar)));
    return true;
  }
  if (op == "Gather") {
    if (in.size() < 2 || !in[1].ok || in[0].scalar || c.attr_int("axis", 0) != 0) return false;
    std::vector<ir::sym> v;
    const auto size = static_cast<std::int64_t>(in[0].v.size());
    for (const ir::sym& i : in[1].v) {
      if (!i.is_const()) return false;
      std::int64_t k = i.ref().value;
      if (k < 0) k += size;
      if (k < 0 || k >= size) return c.fail("index ", i.ref().value, " is outside the ", size, " values");
      v.push_back(in[0].v[static_cast<std::size_t>(k)]);
    }
    RELAXVM_TRY(c.output(0, entry::of_values(std::move(v), dt, in[1].scalar)));
    return true;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    // Only the 0-d <-> 1-d cases shape arithmetic uses.
    std::vector<std::int64_t> axes = n.attribute("axes") != nullptr ? n.attribute("axes")->ints : std::vector<std::int64_t>{};
    if (n.inputs.size() > 1 && in[1].ok)
      for (const ir::sym& a : in[1].v) axes.push_back(a.is_const() ? a.ref().value : 99);
    if (op == "Unsqueeze") {
      if (!in[0].scalar || axes.size() != 1 || (axes[0] != 0 && axes[0] != -1)) return false;
      RELAXVM_TRY(c.output(0, entry::of_values(in[0].v, dt, false)));
    } else {
      if (in[0].scalar || in[0].v.size() != 1 || axes.size() > 1 || (axes.size() == 1 && axes[0] != 0 && axes[0] != -1)) return false;
      RELAXVM_TRY(c.output(0, entry::of_values(in[0].v, dt, true)));
    }
    return true;
  }
  if (op == "Concat") {
    std::vector<ir::sym> v;
    for (const sym_value& x : in) {
      if (!x.ok || x.scalar) return false;
      v.insert(v.end(), x.v.begin(), x.v.end());
    }
    RELAXVM_TRY(c.output(0, entry::of_values(std::move(v), dt)));
    return true;
  }
  if (op == "Slice") {
    if (in[0].scalar) return false;
    const auto size = static_cast<std::int64_t>(in[0].v.size());
    std::int64_t start = 0, end = size, step = 1;
    const auto one = [](const sym_value& s, std::int64_t& out) {
      if (!s.ok || s.v.size() != 1 || !s.v[0].is_const()) return false;
      out = s.v[0].ref().value;
      return true;
    };
    if (st.opset() < 10) {
      const attribute_info* s = n.attribute("starts");
      const attribute_info* e = n.attribute("ends");
      if (s == nullptr || e == nullptr || s->ints.size() != 1 || e->ints.size() != 1) return false;
      start = s->ints[0];
      end = e->ints[0];
    } else {
      if (in.size() < 3 || !one(in[1], start) || !one(in[2], end)) return false;
      std::int64_t axis = 0;
      if (in.size() > 3 && in[3].ok && (!one(in[3], axis) || (axis != 0 && axis != -1))) return false;
      if (in.size() > 4 && in[4].ok && !one(in[4], step)) return false;
    }
    if (step == 0) return c.fail("a step of 0");
    std::vector<ir::sym> v;
    if (step > 0) {
      start = fold::clamp_index(start, size, false);
      end = fold::clamp_index(end, size, false);
      for (std::int64_t k = start; k < end; k += step) v.push_back(in[0].v[static_cast<std::size_t>(k)]);
    } else {
      start = start < 0 ? start + size : (start > size - 1 ? size - 1 : start);
      end = end < 0 ? (end + size < -1 ? -1 : end + size) : (end > size - 1 ? size - 1 : end);
      for (std::int64_t k = start; k > end && k >= 0; k += step) v.push_back(in[0].v[static_cast<std::size_t>(k)]);
    }
    RELAXVM_TRY(c.output(0, entry::of_values(std::move(v), dt)));
    return true;
  }
  if (op == "Neg") {
    std::vector<ir::sym> v;
    for (const ir::sym& x : in[0].v) v.push_back(ir::sym(0) - x);
    RELAXVM_TRY(c.output(0, entry::of_values(std::move(v), dt, in[0].scalar)));
    return true;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Min" || op == "Max") {
    if (in.size() != 2 || !in[1].ok) return false;
    const std::vector<ir::sym>&a = in[0].v, &b = in[1].v;
    if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return false;
    const std::size_t count = a.size() > b.size() ? a.size() : b.size();
    std::vector<ir::sym> v;
    for (std::size_t k = 0; k < count; ++k) {
      const ir::sym& x = a[a.size() == 1 ? 0 : k];
      const ir::sym& y = b[b.size() == 1 ? 0 : k];
      if (op == "Add") v.push_back(x + y);
      else if (op == "Sub") v.push_back(x - y);
      else if (op == "Mul") v.push_back(x * y);
      else if (op == "Min") v.push_back(ir::min(x, y));
      else if (op == "Max") v.push_back(ir::max(x, y));
      else {
        // ONNX's integer Div truncates; dimensions are not negative, where that is floordiv.
        if (y.is_const() && y.ref().value <= 0) return false;
        v.push_back(ir::floordiv(x, y));
      }
      if (v.back().is_invalid()) return false;
    }
    RELAXVM_TRY(c.output(0, entry::of_values(std::move(v), dt, in[0].scalar && in[1].scalar)));
    return true;
  }
  return false;
}

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_FOLD_HPP
