// SPDX-License-Identifier: Apache-2.0
// Data movement operators: Transpose, Concat, Split, Slice, Gather(Elements, ND), Scatter(Elements,
// ND), Pad, Expand, Tile, Cast and CastLike, Squeeze and Unsqueeze (views), DepthToSpace,
// SpaceToDepth, Trilu, CumSum, OneHot, EyeLike, Range, ConstantOfShape and Size; calls of the
// portable kernels of relaxvm/kernels/data.hpp. Where the output's shape depends on an input's
// values (Slice's starts, Expand's shape, Tile's repeats, Pad's pads, Range's bounds, OneHot's
// depth, ConstantOfShape's shape, Split's sizes, Squeeze's and Unsqueeze's axes), constants and
// folded Shape arithmetic are read at import; values known only at run time go through the op's
// shape kernel (onnx/runtime_shape.hpp).
#ifndef RELAXVM_ONNX_CONVERT_DATA_HPP
#define RELAXVM_ONNX_CONVERT_DATA_HPP

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../kernels/data.hpp"
#include "convert_base.hpp"
#include "runtime_shape.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

namespace kd = kernels::detail;

/// An int list attribute, or null when the node has none.
inline const std::vector<std::int64_t>* attr_ints(const node_ctx& c, std::string_view name) {
  const attribute_info* a = c.node.attribute(name);
  if (a == nullptr || (a->type != attribute_type::ints && !(a->type == attribute_type::undefined && !a->ints.empty()))) return nullptr;
  return &a->ints;
}
inline std::string_view attr_string(const node_ctx& c, std::string_view name, std::string_view dflt) {
  const attribute_info* a = c.node.attribute(name);
  return a != nullptr && a->type == attribute_type::s ? a->s : dflt;
}

inline std::vector<ir::sym> syms_of(const std::vector<std::int64_t>& v) {
  std::vector<ir::sym> s;
  s.reserve(v.size());
  for (std::int64_t x : v) s.push_back(ir::sym(x));
  return s;
}
inline ir::operand int_list(const std::vector<std::int64_t>& v) {
  const std::vector<ir::sym> s = syms_of(v);
  return ir::shape_arg(std::span<const ir::sym>(s));
}
/// An int list that may hold negative values (Slice's starts, Pad's pads), which a shape cannot:
/// an int64 constant tensor.
inline result<ir::operand> int_tensor(node_ctx& c, const std::vector<std::int64_t>& v) {
  RELAXVM_TRY_ASSIGN(tensor t, tensor::try_empty(relaxvm::shape{static_cast<std::int64_t>(v.size())}, relaxvm::dtype::int64()));
  for (std::size_t k = 0; k < v.size(); ++k) static_cast<std::int64_t*>(t.raw_data())[k] = v[k];
  entry e = entry::of(std::move(t));
  RELAXVM_TRY_ASSIGN(ir::var tv, c.st.operand_of(e));
  return ir::operand(tv);
}
inline bool is_const(const ir::sym& d, std::int64_t v) { return d.is_const() && d.ref().value == v; }

/// The one value of a constant numeric input (OneHot's depth, Range's bounds) as a double.
inline result<double> number_value(node_ctx& c, std::size_t i, std::string_view what) {
  RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
  if (!e->is_constant())
    return c.unsupported(what, " computed at run time: the output's shape depends on it, so it must be an initializer or a Constant");
  if (!kd::in_set(e->dt, kd::numbers)) return c.unsupported(what, " of ", e->dt);
  RELAXVM_TRY_ASSIGN(tensor t, e->value());
  if (t.numel() != 1) return c.fail(what, " must hold one value, but holds ", t.numel());
  return kd::scalar_as<double>(t);
}

/// The int list of constant input `i` (int_values), or of attribute `name` before opset
/// `input_from`; `present` says whether either is there.
inline result<std::vector<std::int64_t>> ints_of(node_ctx& c, std::int64_t input_from, std::size_t i, std::string_view name,
                                                 std::string_view what, bool& present) {
  present = false;
  if (c.st.opset() < input_from) {
    const std::vector<std::int64_t>* a = attr_ints(c, name);
    if (a == nullptr) return std::vector<std::int64_t>{};
    present = true;
    return *a;
  }
  if (!c.has_input(i)) return std::vector<std::int64_t>{};
  RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
  present = true;
  if (!e->is_constant())
    return c.unsupported(what, " computed at run time: the output's shape depends on them, so they must be an initializer or a Constant");
  return c.st.int_values(*e, c.node.op_type, what);
}

/// The int list of input `i` as symbolic expressions: a constant's values, or symbolic values
/// the importer folded (Expand's shape from Shape(x), ...).
inline result<std::vector<ir::sym>> sym_ints_of(node_ctx& c, std::size_t i, std::string_view what) {
  RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
  if (e->what == entry::kind::symbolic) return e->values;
  bool present = false;
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> v, ints_of(c, 0, i, "", what, present));
  for (std::int64_t x : v)
    if (x < 0) return c.fail(what, " has a negative value ", x);
  return syms_of(v);
}

/// A one-element constant of `dt` holding `v` (Pad's value before opset 11).
inline result<entry> scalar_of(relaxvm::dtype dt, double v) {
  RELAXVM_TRY_ASSIGN(tensor t, tensor::try_empty(relaxvm::shape{}, dt));
  kd::visit(dt, [&]<class T>() { static_cast<T*>(t.raw_data())[0] = kd::convert<T>(v); });
  return entry::of(std::move(t));
}

// ---- permutations ----------------------------------------------------------------------------

inline status convert_transpose(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  const std::size_t r = x->dims.size();
  std::vector<std::int64_t> perm;
  if (const std::vector<std::int64_t>* p = attr_ints(c, "perm")) perm = *p;
  else
    for (std::size_t k = 0; k < r; ++k) perm.push_back(static_cast<std::int64_t>(r - 1 - k));
  if (perm.size() != r) return c.fail("perm has ", perm.size(), " entries for an input of rank ", r);
  std::vector<bool> seen(r);
  std::vector<ir::sym> dims;
  for (std::int64_t a : perm) {
    if (a < 0 || a >= static_cast<std::int64_t>(r) || seen[static_cast<std::size_t>(a)]) return c.fail("perm is not a permutation of ", r, " axes");
    seen[static_cast<std::size_t>(a)] = true;
    dims.push_back(x->dims[static_cast<std::size_t>(a)]);
  }
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, int_list(perm)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Transpose", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

// DepthToSpace and SpaceToDepth: NCHW with a blocksize.
inline status convert_depth_space(node_ctx& c) {
  const bool to_space = c.node.op_type == "DepthToSpace";
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  if (x->dims.size() != 4) return c.fail("the input must have 4 dims (N, C, H, W), but has ", x->dims.size());
  const std::int64_t b = c.attr_int("blocksize", 0);
  if (b <= 0) return c.fail("blocksize must be positive, but is ", b);
  const std::vector<ir::sym>& d = x->dims;
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  std::vector<ir::operand> args{xv, ir::prim(b)};
  std::vector<ir::sym> dims;
  if (to_space) {
    const std::string_view mode = attr_string(c, "mode", "DCR");
    if (mode != "DCR" && mode != "CRD") return c.fail("mode must be DCR or CRD, not ", mode);
    if (d[1].is_const() && d[1].ref().value % (b * b) != 0) return c.fail("blocksize ", b, " squared does not divide the ", d[1].ref().value, " channels");
    args.push_back(ir::prim(mode == "CRD" ? 1 : 0));
    dims = {d[0], ir::floordiv(d[1], ir::sym(b * b)), d[2] * ir::sym(b), d[3] * ir::sym(b)};
  } else {
    for (std::size_t k = 2; k < 4; ++k)
      if (d[k].is_const() && d[k].ref().value % b != 0) return c.fail("blocksize ", b, " does not divide spatial dim ", d[k].ref().value);
    dims = {d[0], d[1] * ir::sym(b * b), ir::floordiv(d[2], ir::sym(b)), ir::floordiv(d[3], ir::sym(b))};
  }
  RELAXVM_TRY_ASSIGN(entry y, c.st.call(to_space ? "onnx.DepthToSpace" : "onnx.SpaceToDepth", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

// ---- joining and cutting ---------------------------------------------------------------------

inline status convert_concat(node_ctx& c) {
  if (c.inputs() == 0) return c.fail("needs at least one input");
  RELAXVM_TRY_ASSIGN(entry* first, c.input(0));
  RELAXVM_TRY(require_type(c, *first, 0, kd::any_type));
  const attribute_info* ax = c.node.attribute("axis");
  if (ax == nullptr && c.st.opset() >= 4) return c.fail("Concat needs its axis attribute");
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, ax == nullptr ? 1 : ax->i, first->dims.size()));
  const auto a = static_cast<std::size_t>(axis);
  std::vector<ir::sym> dims = first->dims;
  std::vector<ir::operand> args;
  for (std::size_t i = 0; i < c.inputs(); ++i) {
    RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
    if (e->dt != first->dt) return c.fail("input ", i, " is ", e->dt, " but input 0 is ", first->dt);
    if (e->dims.size() != dims.size()) return c.fail("input ", i, " has rank ", e->dims.size(), " but input 0 has rank ", dims.size());
    for (std::size_t k = 0; k < dims.size(); ++k) {
      if (k == a || same_dim(e->dims[k], dims[k])) continue;
      if (e->dims[k].is_const() && dims[k].is_const()) return c.fail("input ", i, " differs from input 0 in dim ", k);
      if (!dims[k].is_const()) dims[k] = e->dims[k];  // known beats symbolic; the kernel checks
    }
    if (i > 0) dims[a] = dims[a] + e->dims[a];
    RELAXVM_TRY_ASSIGN(ir::var v, c.st.operand_of(*e));
    args.push_back(v);
  }
  args.push_back(ir::prim(axis));
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Concat", args, std::move(dims), first->dt));
  return c.output(0, std::move(y));
}

inline status convert_split(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", 0), x->dims.size()));
  const auto a = static_cast<std::size_t>(axis);
  const std::size_t n = c.node.outputs.size();
  if (n == 0) return c.fail("Split needs at least one output");
  bool present = false;
  const ir::sym d = x->dims[a];
  std::vector<ir::sym> sizes;
  std::vector<std::int64_t> split;
  const bool runtime = c.st.opset() >= 13 && at_run_time(c, 1);
  if (!runtime) {
    RELAXVM_TRY_ASSIGN(split, ints_of(c, 13, 1, "split", "the split sizes", present));
  }
  if (runtime) {  // its shape kernel checks the sizes
    RELAXVM_TRY_ASSIGN(const runtime_list l, runtime_ints(c, 1, "the split sizes"));
    if (l.n != n) return c.fail("split has ", l.n, " sizes for ", n, " outputs");
    const ir::operand args[] = {ir::shape_arg(std::span<const ir::sym>(x->dims)), l.v, ir::prim(axis)};
    RELAXVM_TRY_ASSIGN(sizes, runtime_dims(c, "onnx.Split.shape", args, n));
  } else if (present) {
    if (split.size() != n) return c.fail("split has ", split.size(), " sizes for ", n, " outputs");
    std::int64_t total = 0;
    for (std::int64_t s : split) {
      if (s < 0) return c.fail("split has a negative size ", s);
      total += s;
      sizes.push_back(ir::sym(s));
    }
    if (d.is_const() && d.ref().value != total) return c.fail("the split sizes add up to ", total, ", not ", d.ref().value);
  } else if (const attribute_info* no = c.node.attribute("num_outputs"); no != nullptr && c.st.opset() >= 18) {
    // Opset 18: num_outputs parts of ceil(d / n), the last one smaller.
    if (no->i != static_cast<std::int64_t>(n)) return c.fail("num_outputs is ", no->i, " but the node has ", n, " outputs");
    if (!d.is_const()) return c.unsupported("num_outputs over a dimension known only at run time");
    const std::int64_t dv = d.ref().value, part = (dv + static_cast<std::int64_t>(n) - 1) / static_cast<std::int64_t>(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t from = part * static_cast<std::int64_t>(i);
      sizes.push_back(ir::sym(from >= dv ? 0 : (dv - from < part ? dv - from : part)));
    }
  } else {
    if (d.is_const() && d.ref().value % static_cast<std::int64_t>(n) != 0)
      return c.fail("dim ", d.ref().value, " does not split into ", n, " equal parts");
    for (std::size_t i = 0; i < n; ++i) sizes.push_back(ir::floordiv(d, ir::sym(static_cast<std::int64_t>(n))));
  }
  std::vector<ir::struct_info> fields;
  std::vector<std::vector<ir::sym>> out_dims;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<ir::sym> od = x->dims;
    od[a] = sizes[i];
    fields.push_back(tensor_struct(od, x->dt));
    out_dims.push_back(std::move(od));
  }
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::prim(axis)};
  const ir::var t = c.st.fn().call_dps("onnx.Split", args, ir::tuple_info(std::move(fields)));
  if (!t.valid()) return c.st.builder_error();
  for (std::size_t i = 0; i < n; ++i) {
    entry e;
    e.dt = x->dt;
    e.dims = std::move(out_dims[i]);
    e.v = c.st.fn().get_item(t, static_cast<std::int64_t>(i));
    if (!e.v.valid()) return c.st.builder_error();
    RELAXVM_TRY(c.output(i, std::move(e)));
  }
  return {};
}

/// The length of Slice's result along a dim of size d (kernels::detail::slice_range), symbolic
/// when d is.
inline ir::sym slice_count(const ir::sym& d, std::int64_t start, std::int64_t end, std::int64_t step) {
  if (d.is_const()) {
    std::int64_t first = 0, count = 0;
    kd::slice_range(d.ref().value, start, end, step, first, count);
    return ir::sym(count);
  }
  const ir::sym zero(0);
  // Bounds far outside any dim are clamped first, so the arithmetic stays in range.
  constexpr std::int64_t big = std::int64_t{1} << 62;
  start = start < -big ? -big : (start > big ? big : start);
  end = end < -big ? -big : (end > big ? big : end);
  if (step > 0) {
    const ir::sym s = start < 0 ? ir::max(ir::sym(start) + d, zero) : ir::min(ir::sym(start), d);
    const ir::sym e = end < 0 ? ir::max(ir::sym(end) + d, zero) : ir::min(ir::sym(end), d);
    return ir::max(ir::floordiv(e - s - ir::sym(1), ir::sym(step)) + ir::sym(1), zero);
  }
  const ir::sym last = d - ir::sym(1);
  const ir::sym s = start < 0 ? ir::min(ir::max(ir::sym(start) + d, zero), last) : ir::min(ir::sym(start), last);
  const ir::sym e = end < 0 ? ir::max(ir::sym(end) + d, ir::sym(-1)) : ir::min(ir::sym(end), last);
  return ir::max(ir::floordiv(s - e - ir::sym(1), ir::sym(-step)) + ir::sym(1), zero);
}

// Slice with lists known only at run time: its shape kernel works out the counts, and the kernel
// takes the lists as they are (absent axes and steps made here, as the starts' length says).
inline status convert_slice_at_run_time(node_ctx& c, entry& x) {
  RELAXVM_TRY_ASSIGN(entry* starts, c.input(1));
  if (starts->dims.size() != 1 || !starts->dims[0].is_const())
    return c.unsupported("starts computed at run time, of a length known only at run time");
  const std::int64_t n = starts->dims[0].ref().value;
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(x));
  std::vector<ir::operand> args{xv, ir::shape_arg(std::span<const ir::sym>(x.dims))};
  for (std::size_t i = 1; i <= 4; ++i) {
    if (c.has_input(i)) {
      RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
      if (e->dt != relaxvm::dtype::int64() && e->dt != relaxvm::dtype::int32())
        return c.fail("input ", i, " must be int64 or int32, but is ", e->dt);
      RELAXVM_TRY_ASSIGN(ir::var v, c.st.operand_of(*e));
      args.push_back(v);
    } else if (i == 2) {
      return c.fail("Slice needs starts and ends");
    } else {
      std::vector<std::int64_t> v;
      for (std::int64_t k = 0; k < n; ++k) v.push_back(i == 3 ? k : 1);
      RELAXVM_TRY_ASSIGN(ir::operand t, int_tensor(c, v));
      args.push_back(t);
    }
  }
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, runtime_dims(c, "onnx.Slice.shape", std::span<const ir::operand>(args).subspan(1), x.dims.size()));
  // With the axes known at import, the dims no list touches stay the input's.
  entry* axes = c.has_input(3) ? c.st.find(c.node.inputs[3]) : nullptr;
  if (axes == nullptr || axes->is_constant()) {
    std::vector<std::int64_t> touched;
    if (axes != nullptr) {
      RELAXVM_TRY_ASSIGN(touched, c.st.int_values(*axes, "Slice", "the axes"));
    }
    for (std::int64_t k = 0; axes == nullptr && k < n; ++k) touched.push_back(k);
    std::vector<bool> kept(dims.size(), true);
    for (std::int64_t a : touched) {
      RELAXVM_TRY_ASSIGN(const std::int64_t k, normalize_axis(c, a, dims.size()));
      kept[static_cast<std::size_t>(k)] = false;
    }
    for (std::size_t k = 0; k < dims.size(); ++k)
      if (kept[k]) dims[k] = x.dims[k];
  }
  args.erase(args.begin() + 1);  // the kernel takes x and the lists
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Slice", args, std::move(dims), x.dt));
  return c.output(0, std::move(y));
}

inline status convert_slice(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  if (c.st.opset() >= 10 && (at_run_time(c, 1) || at_run_time(c, 2) || at_run_time(c, 3) || at_run_time(c, 4)))
    return convert_slice_at_run_time(c, *x);
  bool has_starts = false, has_ends = false, has_axes = false, has_steps = false;
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> starts, ints_of(c, 10, 1, "starts", "the starts", has_starts));
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> ends, ints_of(c, 10, 2, "ends", "the ends", has_ends));
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> axes, ints_of(c, 10, 3, "axes", "the axes", has_axes));
  std::vector<std::int64_t> steps;
  if (c.st.opset() >= 10) {
    RELAXVM_TRY_ASSIGN(steps, ints_of(c, 10, 4, "steps", "the steps", has_steps));
  }
  if (!has_starts || !has_ends) return c.fail("Slice needs starts and ends");
  if (ends.size() != starts.size()) return c.fail("starts and ends differ in length (", starts.size(), " and ", ends.size(), ")");
  const std::size_t r = x->dims.size();
  if (!has_axes)
    for (std::size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
  if (!has_steps) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) return c.fail("starts, ends, axes and steps differ in length");
  std::vector<ir::sym> dims = x->dims;
  std::vector<bool> seen(r);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    RELAXVM_TRY_ASSIGN(axes[i], normalize_axis(c, axes[i], r));
    const auto a = static_cast<std::size_t>(axes[i]);
    if (seen[a]) return c.fail("axis ", axes[i], " is sliced twice");
    seen[a] = true;
    if (steps[i] == 0) return c.fail("a step is 0");
    if (steps[i] == std::numeric_limits<std::int64_t>::min()) return c.unsupported("a step of INT64_MIN");
    dims[a] = slice_count(x->dims[a], starts[i], ends[i], steps[i]);
  }
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(ir::operand sv, int_tensor(c, starts));
  RELAXVM_TRY_ASSIGN(ir::operand ev, int_tensor(c, ends));
  RELAXVM_TRY_ASSIGN(ir::operand av, int_tensor(c, axes));
  RELAXVM_TRY_ASSIGN(ir::operand pv, int_tensor(c, steps));
  const ir::operand args[] = {xv, sv, ev, av, pv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Slice", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

inline status convert_pad(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  const std::size_t r = x->dims.size();
  const std::string_view mode = attr_string(c, "mode", "constant");
  std::int64_t m = 0;
  if (mode == "reflect") m = 1;
  else if (mode == "edge") m = 2;
  else if (mode != "constant") return c.unsupported("mode '", mode, "'");
  std::vector<std::int64_t> pads;
  std::vector<ir::operand> args;
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  args.push_back(xv);
  ir::operand value = absent();
  if (c.st.opset() < 11) {
    const std::vector<std::int64_t>* p = attr_ints(c, c.st.opset() < 2 ? "paddings" : "pads");
    if (p == nullptr) return c.fail("Pad needs its pads attribute");
    pads = *p;
    const float v = c.attr_float("value", 0.0f);
    if (v != 0.0f) {
      RELAXVM_TRY_ASSIGN(entry ve, scalar_of(x->dt, v));
      RELAXVM_TRY_ASSIGN(ir::var vv, c.st.operand_of(ve));
      value = vv;
    }
  } else {
    if (c.has_input(2)) {
      RELAXVM_TRY_ASSIGN(entry* ve, c.input(2));
      if (ve->dt != x->dt) return c.fail("the constant value is ", ve->dt, " but the input is ", x->dt);
      RELAXVM_TRY_ASSIGN(ir::var vv, c.st.operand_of(*ve));
      value = vv;
    }
    if (at_run_time(c, 1)) {  // its shape kernel adds the pads up
      if (c.st.opset() >= 18 && c.has_input(3)) return c.unsupported("pads computed at run time with axes");
      RELAXVM_TRY_ASSIGN(const runtime_list p, runtime_ints(c, 1, "the pads"));
      if (p.n != 2 * r) return c.fail("pads has ", p.n, " entries for an input of rank ", r, " (2 per axis)");
      const ir::operand sargs[] = {ir::shape_arg(std::span<const ir::sym>(x->dims)), p.v};
      RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, runtime_dims(c, "onnx.Pad.shape", sargs, r));
      const ir::operand pargs[] = {xv, p.v, ir::prim(m), value};
      RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Pad", pargs, std::move(dims), x->dt));
      return c.output(0, std::move(y));
    }
    bool present = false;
    RELAXVM_TRY_ASSIGN(pads, ints_of(c, 11, 1, "pads", "the pads", present));
    if (!present) return c.fail("Pad needs its pads input");
    bool has_axes = false;
    RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> axes, ints_of(c, 18, 3, "axes", "the axes", has_axes));
    if (has_axes) {  // pads for the listed axes only: spread over all of them
      if (pads.size() != 2 * axes.size()) return c.fail("pads has ", pads.size(), " entries for ", axes.size(), " axes");
      std::vector<std::int64_t> full(2 * r, 0);
      for (std::size_t i = 0; i < axes.size(); ++i) {
        RELAXVM_TRY_ASSIGN(const std::int64_t a, normalize_axis(c, axes[i], r));
        full[static_cast<std::size_t>(a)] = pads[i];
        full[static_cast<std::size_t>(a) + r] = pads[i + axes.size()];
      }
      pads = std::move(full);
    }
  }
  if (pads.size() != 2 * r) return c.fail("pads has ", pads.size(), " entries for an input of rank ", r, " (2 per axis)");
  std::vector<ir::sym> dims;
  for (std::size_t k = 0; k < r; ++k) {
    dims.push_back(x->dims[k] + ir::sym(pads[k] + pads[k + r]));
    if (dims.back().is_const() && dims.back().ref().value < 0) return c.fail("pads crop axis ", k, " below 0");
    if (m != 0 && is_const(x->dims[k], 0) && pads[k] + pads[k + r] > 0) return c.fail("pads an empty axis by ", mode);
  }
  RELAXVM_TRY_ASSIGN(ir::operand pv, int_tensor(c, pads));
  args.push_back(pv);
  args.push_back(ir::prim(m));
  args.push_back(value);
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Pad", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

inline status convert_expand(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  if (at_run_time(c, 1, true)) {  // its shape kernel broadcasts
    RELAXVM_TRY_ASSIGN(const runtime_list s, runtime_ints(c, 1, "the shape"));
    const ir::operand sargs[] = {ir::shape_arg(std::span<const ir::sym>(x->dims)), s.v};
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, runtime_dims(c, "onnx.Expand.shape", sargs, s.n > x->dims.size() ? s.n : x->dims.size()));
    RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
    const ir::operand args[] = {xv};
    RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Expand", args, std::move(dims), x->dt));
    return c.output(0, std::move(y));
  }
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> target, sym_ints_of(c, 1, "the shape"));
  // A dim of 1 on either side takes the other; two symbolic dims take the target's, and the
  // kernel checks that x broadcasts to it.
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, broadcast(c, x->dims, target));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Expand", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

inline status convert_tile(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  if (c.st.opset() < 6) return c.unsupported("Tile before opset 6 (tiles and axis inputs)");
  if (at_run_time(c, 1, true)) {  // its shape kernel checks the counts; the kernel takes them as a shape
    RELAXVM_TRY_ASSIGN(const runtime_list l, runtime_ints(c, 1, "the repeats"));
    if (l.n != x->dims.size()) return c.fail("repeats has ", l.n, " entries for an input of rank ", x->dims.size());
    const ir::operand sargs[] = {ir::shape_arg(std::span<const ir::sym>(x->dims)), l.v};
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, runtime_dims(c, "onnx.Tile.shape", sargs, l.n));
    RELAXVM_TRY_ASSIGN(ir::var reps, runtime_shape_value(c, l));
    RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
    const ir::operand args[] = {xv, reps};
    RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Tile", args, std::move(dims), x->dt));
    return c.output(0, std::move(y));
  }
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> repeats, sym_ints_of(c, 1, "the repeats"));
  if (repeats.size() != x->dims.size()) return c.fail("repeats has ", repeats.size(), " entries for an input of rank ", x->dims.size());
  std::vector<ir::sym> dims;
  for (std::size_t k = 0; k < repeats.size(); ++k) dims.push_back(x->dims[k] * repeats[k]);
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::shape_arg(std::span<const ir::sym>(repeats))};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Tile", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

// ---- views -----------------------------------------------------------------------------------

/// Squeeze's or Unsqueeze's dims from axes known only at run time (opset 13's input), by the
/// op's shape kernel: the result has `n` dims fewer or more.
inline result<entry> squeeze_at_run_time(node_ctx& c, entry& x, bool squeeze) {
  RELAXVM_TRY_ASSIGN(const runtime_list l, runtime_ints(c, 1, "the axes"));
  if (squeeze && l.n > x.dims.size()) return c.fail(l.n, " axes for an input of rank ", x.dims.size());
  const ir::operand args[] = {ir::shape_arg(std::span<const ir::sym>(x.dims)), l.v};
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, runtime_dims(c, squeeze ? "onnx.Squeeze.shape" : "onnx.Unsqueeze.shape", args,
                                                             squeeze ? x.dims.size() - l.n : x.dims.size() + l.n));
  return c.st.view(x, std::move(dims));
}

inline status convert_squeeze(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  if (c.st.opset() >= 13 && at_run_time(c, 1)) {
    RELAXVM_TRY_ASSIGN(entry y, squeeze_at_run_time(c, *x, true));
    return c.output(0, std::move(y));
  }
  bool present = false;
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> axes, ints_of(c, 13, 1, "axes", "the axes", present));
  const std::size_t r = x->dims.size();
  std::vector<bool> drop(r);
  if (!present) {  // every dim of 1
    for (std::size_t k = 0; k < r; ++k) {
      if (!x->dims[k].is_const()) return c.unsupported("Squeeze without axes of an input with dims known only at run time");
      drop[k] = x->dims[k].ref().value == 1;
    }
  }
  for (std::int64_t a : axes) {
    RELAXVM_TRY_ASSIGN(const std::int64_t k, normalize_axis(c, a, r));
    const ir::sym& d = x->dims[static_cast<std::size_t>(k)];
    if (d.is_const() && d.ref().value != 1) return c.fail("axis ", a, " has size ", d.ref().value, ", not 1");
    if (!d.is_const()) return c.unsupported("squeezing axis ", a, ", whose size is known only at run time");
    drop[static_cast<std::size_t>(k)] = true;
  }
  std::vector<ir::sym> dims;
  for (std::size_t k = 0; k < r; ++k)
    if (!drop[k]) dims.push_back(x->dims[k]);
  RELAXVM_TRY_ASSIGN(entry y, c.st.view(*x, std::move(dims)));
  return c.output(0, std::move(y));
}

inline status convert_unsqueeze(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  if (c.st.opset() >= 13 && at_run_time(c, 1)) {
    RELAXVM_TRY_ASSIGN(entry y, squeeze_at_run_time(c, *x, false));
    return c.output(0, std::move(y));
  }
  bool present = false;
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> axes, ints_of(c, 13, 1, "axes", "the axes", present));
  if (!present) return c.fail("Unsqueeze needs axes");
  const std::size_t r = x->dims.size() + axes.size();
  std::vector<bool> added(r);
  for (std::int64_t a : axes) {
    RELAXVM_TRY_ASSIGN(const std::int64_t k, normalize_axis(c, a, r));
    if (added[static_cast<std::size_t>(k)]) return c.fail("axis ", a, " is given twice");
    added[static_cast<std::size_t>(k)] = true;
  }
  std::vector<ir::sym> dims;
  std::size_t from = 0;
  for (std::size_t k = 0; k < r; ++k) dims.push_back(added[k] ? ir::sym(1) : x->dims[from++]);
  RELAXVM_TRY_ASSIGN(entry y, c.st.view(*x, std::move(dims)));
  return c.output(0, std::move(y));
}

// ---- gathering and scattering ----------------------------------------------------------------

inline status require_index_type(node_ctx& c, const entry& e, std::size_t i, bool int32_ok = true) {
  if (e.dt == relaxvm::dtype::int64() || (int32_ok && e.dt == relaxvm::dtype::int32())) return {};
  return c.unsupported("input ", i, " (the indices) is ", e.dt, "; the kernel takes int64", int32_ok ? " or int32" : "");
}

inline status convert_gather(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* data, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* idx, c.input(1));
  RELAXVM_TRY(require_type(c, *data, 0, kd::any_type));
  RELAXVM_TRY(require_index_type(c, *idx, 1));
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", 0), data->dims.size()));
  const auto a = static_cast<std::size_t>(axis);
  std::vector<ir::sym> dims(data->dims.begin(), data->dims.begin() + static_cast<std::ptrdiff_t>(a));
  dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
  dims.insert(dims.end(), data->dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, data->dims.end());
  RELAXVM_TRY_ASSIGN(ir::var dv, c.st.operand_of(*data));
  RELAXVM_TRY_ASSIGN(ir::var iv, c.st.operand_of(*idx));
  const ir::operand args[] = {dv, iv, ir::prim(axis)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Gather", args, std::move(dims), data->dt));
  return c.output(0, std::move(y));
}

inline status convert_gather_elements(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* data, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* idx, c.input(1));
  RELAXVM_TRY(require_type(c, *data, 0, kd::any_type));
  RELAXVM_TRY(require_index_type(c, *idx, 1));
  if (idx->dims.size() != data->dims.size()) return c.fail("indices have rank ", idx->dims.size(), " but data has rank ", data->dims.size());
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", 0), data->dims.size()));
  RELAXVM_TRY_ASSIGN(ir::var dv, c.st.operand_of(*data));
  RELAXVM_TRY_ASSIGN(ir::var iv, c.st.operand_of(*idx));
  const ir::operand args[] = {dv, iv, ir::prim(axis)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.GatherElements", args, idx->dims, data->dt));
  return c.output(0, std::move(y));
}

inline status convert_gather_nd(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* data, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* idx, c.input(1));
  RELAXVM_TRY(require_type(c, *data, 0, kd::any_type));
  RELAXVM_TRY(require_index_type(c, *idx, 1, false));
  const std::int64_t b = c.attr_int("batch_dims", 0);
  const auto r = static_cast<std::int64_t>(data->dims.size()), q = static_cast<std::int64_t>(idx->dims.size());
  if (q < 1 || b < 0 || b >= q || b >= r) return c.fail("batch_dims ", b, " must be below the ranks of data (", r, ") and indices (", q, ")");
  const ir::sym& last = idx->dims.back();
  if (!last.is_const()) return c.unsupported("index tuples whose length is known only at run time");
  const std::int64_t m = last.ref().value;
  if (m < 1 || b + m > r) return c.fail("index tuples of ", m, " entries address data of rank ", r, " after ", b, " batch dims");
  std::vector<ir::sym> dims(idx->dims.begin(), idx->dims.end() - 1);
  dims.insert(dims.end(), data->dims.begin() + b + m, data->dims.end());
  RELAXVM_TRY_ASSIGN(ir::var dv, c.st.operand_of(*data));
  RELAXVM_TRY_ASSIGN(ir::var iv, c.st.operand_of(*idx));
  const ir::operand args[] = {dv, iv, ir::prim(b)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.GatherND", args, std::move(dims), data->dt));
  return c.output(0, std::move(y));
}

inline result<std::int64_t> reduction_of(node_ctx& c) {
  const std::string_view r = attr_string(c, "reduction", "none");
  if (r == "none") return 0;
  if (r == "add") return 1;
  if (r == "mul") return 2;
  if (r == "max") return 3;
  if (r == "min") return 4;
  return c.unsupported("reduction '", r, "'");
}

// ScatterElements, and Scatter (its name before opset 11).
inline status convert_scatter_elements(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* data, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* idx, c.input(1));
  RELAXVM_TRY_ASSIGN(entry* up, c.input(2));
  RELAXVM_TRY(require_type(c, *data, 0, kd::any_type));
  RELAXVM_TRY(require_index_type(c, *idx, 1));
  if (up->dt != data->dt) return c.fail("updates are ", up->dt, " but data is ", data->dt);
  if (idx->dims.size() != data->dims.size()) return c.fail("indices have rank ", idx->dims.size(), " but data has rank ", data->dims.size());
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", 0), data->dims.size()));
  RELAXVM_TRY_ASSIGN(const std::int64_t red, reduction_of(c));
  if (red != 0 && data->dt.is_bool()) return c.unsupported("a reduction of bool data");
  RELAXVM_TRY_ASSIGN(ir::var dv, c.st.operand_of(*data));
  RELAXVM_TRY_ASSIGN(ir::var iv, c.st.operand_of(*idx));
  RELAXVM_TRY_ASSIGN(ir::var uv, c.st.operand_of(*up));
  const ir::operand args[] = {dv, iv, uv, ir::prim(axis), ir::prim(red)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.ScatterElements", args, data->dims, data->dt));
  return c.output(0, std::move(y));
}

inline status convert_scatter_nd(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* data, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* idx, c.input(1));
  RELAXVM_TRY_ASSIGN(entry* up, c.input(2));
  RELAXVM_TRY(require_type(c, *data, 0, kd::any_type));
  RELAXVM_TRY(require_index_type(c, *idx, 1, false));
  if (up->dt != data->dt) return c.fail("updates are ", up->dt, " but data is ", data->dt);
  RELAXVM_TRY_ASSIGN(const std::int64_t red, reduction_of(c));
  if (red != 0 && data->dt.is_bool()) return c.unsupported("a reduction of bool data");
  RELAXVM_TRY_ASSIGN(ir::var dv, c.st.operand_of(*data));
  RELAXVM_TRY_ASSIGN(ir::var iv, c.st.operand_of(*idx));
  RELAXVM_TRY_ASSIGN(ir::var uv, c.st.operand_of(*up));
  const ir::operand args[] = {dv, iv, uv, ir::prim(red)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.ScatterND", args, data->dims, data->dt));
  return c.output(0, std::move(y));
}

// ---- element types ---------------------------------------------------------------------------

// Cast (the 'to' attribute) and CastLike (input 1's dtype).
inline status convert_cast(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  relaxvm::dtype to;
  if (c.node.op_type == "CastLike") {
    RELAXVM_TRY_ASSIGN(entry* like, c.input(1));
    to = like->dt;
  } else {
    const attribute_info* a = c.node.attribute("to");
    if (a == nullptr || a->type != attribute_type::i) return c.unsupported("Cast's 'to' as a ", a == nullptr ? "missing attribute" : "string (opset 1)");
    result<relaxvm::dtype> t = to_dtype(static_cast<std::int32_t>(a->i));
    if (!t.ok()) return c.unsupported(t.error().message());
    to = *t;
  }
  if (!kd::in_set(x->dt, kd::any_type) && !kd::is_half(x->dt)) return c.unsupported("input 0 is ", x->dt, ", which its kernel does not take");
  if (!kd::in_set(to, kd::any_type) && !kd::is_half(to)) return c.unsupported("a cast to ", to, ", which its kernel does not make");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Cast", args, x->dims, to));
  return c.output(0, std::move(y));
}

// ---- computed along an axis ------------------------------------------------------------------

inline status convert_trilu(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  if (x->dims.size() < 2) return c.fail("the input must have at least 2 dims");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  std::vector<ir::operand> args{xv};
  if (c.has_input(1)) {
    RELAXVM_TRY_ASSIGN(entry* k, c.input(1));
    if (k->dt != relaxvm::dtype::int64()) return c.fail("k is ", k->dt, "; it must be int64");
    RELAXVM_TRY_ASSIGN(ir::var kv, c.st.operand_of(*k));
    args.push_back(kv);
  } else {
    args.push_back(absent());
  }
  args.push_back(ir::prim(c.attr_int("upper", 1)));
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Trilu", args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

inline status convert_cumsum(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* axis, c.input(1));
  RELAXVM_TRY(require_type(c, *x, 0, kd::numbers));
  if (axis->dt != relaxvm::dtype::int64() && axis->dt != relaxvm::dtype::int32()) return c.fail("the axis is ", axis->dt, "; it must be int32 or int64");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(*axis));
  const ir::operand args[] = {xv, av, ir::prim(c.attr_int("exclusive", 0)), ir::prim(c.attr_int("reverse", 0))};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.CumSum", args, x->dims, x->dt));
  return c.output(0, std::move(y));
}

inline status convert_one_hot(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* idx, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* values, c.input(2));
  RELAXVM_TRY(require_type(c, *idx, 0, kd::numbers));
  RELAXVM_TRY(require_type(c, *values, 2, kd::any_type));
  RELAXVM_TRY_ASSIGN(const std::int64_t axis, normalize_axis(c, c.attr_int("axis", -1), idx->dims.size() + 1));
  std::vector<ir::sym> dims;
  if (at_run_time(c, 1)) {  // its shape kernel reads and checks the depth
    RELAXVM_TRY_ASSIGN(entry* d, c.input(1));
    if (!kd::in_set(d->dt, kd::numbers)) return c.unsupported("the depth of ", d->dt);
    RELAXVM_TRY_ASSIGN(ir::var dv, c.st.operand_of(*d));
    const ir::operand sargs[] = {ir::shape_arg(std::span<const ir::sym>(idx->dims)), dv, ir::prim(axis)};
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> all, runtime_dims(c, "onnx.OneHot.shape", sargs, idx->dims.size() + 1));
    dims = idx->dims;  // only the depth is new
    dims.insert(dims.begin() + axis, all[static_cast<std::size_t>(axis)]);
  } else {
    RELAXVM_TRY_ASSIGN(const double depth_value, number_value(c, 1, "the depth"));
    if (!(depth_value >= 1) || depth_value > 9.0e15) return c.fail("the depth is not a positive count");
    dims = idx->dims;
    dims.insert(dims.begin() + axis, ir::sym(static_cast<std::int64_t>(depth_value)));
  }
  RELAXVM_TRY_ASSIGN(ir::var iv, c.st.operand_of(*idx));
  RELAXVM_TRY_ASSIGN(ir::var vv, c.st.operand_of(*values));
  const ir::operand args[] = {iv, vv, ir::prim(axis)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.OneHot", args, std::move(dims), values->dt));
  return c.output(0, std::move(y));
}

// ---- made from nothing -----------------------------------------------------------------------

inline status convert_eye_like(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  if (x->dims.size() != 2) return c.fail("the input must have 2 dims, but has ", x->dims.size());
  relaxvm::dtype dt = x->dt;
  if (const attribute_info* a = c.node.attribute("dtype"); a != nullptr && a->type == attribute_type::i) {
    result<relaxvm::dtype> t = to_dtype(static_cast<std::int32_t>(a->i));
    if (!t.ok()) return c.unsupported(t.error().message());
    dt = *t;
  }
  if (!kd::in_set(dt, kd::any_type)) return c.unsupported("an output of ", dt);
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv, ir::prim(c.attr_int("k", 0))};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.EyeLike", args, x->dims, dt));
  return c.output(0, std::move(y));
}

inline status convert_range(node_ctx& c) {
  entry* in[3];
  for (std::size_t i = 0; i < 3; ++i) {
    RELAXVM_TRY_ASSIGN(in[i], c.input(i));
    if (in[i]->dt != in[0]->dt) return c.fail("input ", i, " is ", in[i]->dt, " but input 0 is ", in[0]->dt);
  }
  RELAXVM_TRY(require_type(c, *in[0], 0, kd::numbers));
  if (at_run_time(c, 0) || at_run_time(c, 1) || at_run_time(c, 2)) {  // its shape kernel counts
    std::vector<ir::operand> args;
    for (entry* e : in) {
      RELAXVM_TRY_ASSIGN(ir::var v, c.st.operand_of(*e));
      args.push_back(v);
    }
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, runtime_dims(c, "onnx.Range.shape", args, 1));
    RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Range", args, std::move(dims), in[0]->dt));
    return c.output(0, std::move(y));
  }
  tensor t[3];
  for (std::size_t i = 0; i < 3; ++i) {
    RELAXVM_TRY_ASSIGN(t[i], in[i]->value());
    if (t[i].numel() != 1) return c.fail("input ", i, " must hold one value, but holds ", t[i].numel());
  }
  std::int64_t count = -1;
  kd::visit(in[0]->dt, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T s = static_cast<const T*>(t[0].raw_data())[0], l = static_cast<const T*>(t[1].raw_data())[0];
      count = kernels::range_count(s, l, static_cast<const T*>(t[2].raw_data())[0]);
    }
  });
  if (count < 0) return c.fail(count == -1 ? "delta is 0" : "the range is too long for a tensor");
  std::vector<ir::operand> args;
  for (entry* e : in) {
    RELAXVM_TRY_ASSIGN(ir::var v, c.st.operand_of(*e));
    args.push_back(v);
  }
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Range", args, {ir::sym(count)}, in[0]->dt));
  return c.output(0, std::move(y));
}

inline status convert_constant_of_shape(node_ctx& c) {
  std::vector<ir::sym> shape;
  if (at_run_time(c, 0, true)) {  // its shape kernel checks the dims
    RELAXVM_TRY_ASSIGN(const runtime_list l, runtime_ints(c, 0, "the shape"));
    const ir::operand sargs[] = {l.v};
    RELAXVM_TRY_ASSIGN(shape, runtime_dims(c, "onnx.ConstantOfShape.shape", sargs, l.n));
  } else {
    RELAXVM_TRY_ASSIGN(shape, sym_ints_of(c, 0, "the shape"));
  }
  entry value;
  const attribute_info* a = c.node.attribute("value");
  if (a != nullptr && a->type == attribute_type::t && a->t) {
    value.what = entry::kind::constant;
    value.data = a->t.get();
    result<relaxvm::dtype> dt = to_dtype(a->t->data_type);
    if (!dt.ok()) return c.unsupported(dt.error().message());
    value.dt = *dt;
    for (std::int64_t d : a->t->dims) value.dims.push_back(ir::sym(d));
  } else {
    RELAXVM_TRY_ASSIGN(value, scalar_of(relaxvm::dtype::float32(), 0.0));
  }
  if (!kd::in_set(value.dt, kd::any_type)) return c.unsupported("a value of ", value.dt);
  RELAXVM_TRY_ASSIGN(ir::var vv, c.st.operand_of(value));
  const ir::operand args[] = {vv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.ConstantOfShape", args, std::move(shape), value.dt));
  return c.output(0, std::move(y));
}

inline status convert_size(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  RELAXVM_TRY(require_type(c, *x, 0, kd::any_type));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  const ir::operand args[] = {xv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Size", args, {}, relaxvm::dtype::int64()));
  return c.output(0, std::move(y));
}

inline constexpr op_converter data_converters[] = {
    {"Transpose", &convert_transpose}, {"DepthToSpace", &convert_depth_space}, {"SpaceToDepth", &convert_depth_space},
    {"Concat", &convert_concat}, {"Split", &convert_split}, {"Slice", &convert_slice}, {"Pad", &convert_pad},
    {"Expand", &convert_expand}, {"Tile", &convert_tile}, {"Squeeze", &convert_squeeze}, {"Unsqueeze", &convert_unsqueeze},
    {"Gather", &convert_gather}, {"GatherElements", &convert_gather_elements}, {"GatherND", &convert_gather_nd},
    {"ScatterElements", &convert_scatter_elements}, {"Scatter", &convert_scatter_elements}, {"ScatterND", &convert_scatter_nd},
    {"Cast", &convert_cast}, {"CastLike", &convert_cast}, {"Trilu", &convert_trilu}, {"CumSum", &convert_cumsum},
    {"OneHot", &convert_one_hot}, {"EyeLike", &convert_eye_like}, {"Range", &convert_range},
    {"ConstantOfShape", &convert_constant_of_shape}, {"Size", &convert_size},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_DATA_HPP
