// SPDX-License-Identifier: Apache-2.0
// Convolution and pooling: Conv, ConvTranspose, MaxPool (with its Indices), AveragePool, LpPool
// and the Global pools, calls of the portable kernels (relaxvm/kernels/conv.hpp, pool.hpp). The
// output's spatial dims are ONNX's formulas in symbolic arithmetic, so a model with a symbolic
// batch or image size imports once; the kernels check the same formulas at run time.
#ifndef RELAXVM_ONNX_CONVERT_CONV_HPP
#define RELAXVM_ONNX_CONVERT_CONV_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../kernels/window.hpp"
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

/// A window's attributes as the kernels take them.
struct window_attrs {
  std::int64_t auto_pad = kernels::notset;
  std::int64_t ceil_mode = 0;
  std::vector<std::int64_t> strides, pads, dilations;  // empty: the defaults (1, 0, 1)
};

/// An int list attribute: absent is empty; present, it must have `n` values (or `n2` when given).
inline result<std::vector<std::int64_t>> ints_attr(node_ctx& c, std::string_view name, std::size_t n, std::size_t n2 = 0) {
  const attribute_info* a = c.node.attribute(name);
  if (a == nullptr) return std::vector<std::int64_t>{};
  if (a->ints.size() != n && (n2 == 0 || a->ints.size() != n2))
    return c.fail(name, " has ", a->ints.size(), " values for ", n, " spatial dimensions");
  return a->ints;
}

inline result<std::int64_t> auto_pad_attr(node_ctx& c) {
  const attribute_info* a = c.node.attribute("auto_pad");
  if (a == nullptr || a->s.empty() || a->s == "NOTSET") return std::int64_t{kernels::notset};
  if (a->s == "SAME_UPPER") return std::int64_t{kernels::same_upper};
  if (a->s == "SAME_LOWER") return std::int64_t{kernels::same_lower};
  if (a->s == "VALID") return std::int64_t{kernels::valid};
  return c.fail("auto_pad is '", a->s, "'; it must be NOTSET, SAME_UPPER, SAME_LOWER or VALID");
}

/// The spatial rank of x [N, C, spatial...], 1 to 3 (the kernels' range).
inline result<std::size_t> spatial_rank(node_ctx& c, const entry& x) {
  if (x.dims.size() < 3) return c.fail("the input has ", x.dims.size(), " dimensions; it needs N, C and at least one spatial one");
  if (x.dims.size() > 2 + static_cast<std::size_t>(kernels::detail::max_spatial))
    return c.unsupported(x.dims.size() - 2, " spatial dimensions (the kernels take 1 to ", kernels::detail::max_spatial, ")");
  return x.dims.size() - 2;
}

inline result<window_attrs> read_window(node_ctx& c, std::size_t nd, bool pooling) {
  window_attrs w;
  RELAXVM_TRY_ASSIGN(w.auto_pad, auto_pad_attr(c));
  RELAXVM_TRY_ASSIGN(w.strides, ints_attr(c, "strides", nd));
  RELAXVM_TRY_ASSIGN(w.pads, ints_attr(c, "pads", 2 * nd));
  RELAXVM_TRY_ASSIGN(w.dilations, ints_attr(c, "dilations", nd));
  if (pooling) w.ceil_mode = c.attr_int("ceil_mode", 0);
  for (std::int64_t v : w.strides)
    if (v < 1) return c.fail("strides has ", v, "; each must be at least 1");
  for (std::int64_t v : w.dilations)
    if (v < 1) return c.fail("dilations has ", v, "; each must be at least 1");
  for (std::int64_t v : w.pads)
    if (v < 0) return c.fail("pads has ", v, "; each must be at least 0");
  return w;
}

inline std::int64_t at_or(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t dflt) { return v.empty() ? dflt : v[i]; }

/// The output's spatial dim i of a window of `k` taps over `in` (the kernel's formulas).
inline result<ir::sym> window_dim(node_ctx& c, const window_attrs& w, std::size_t nd, std::size_t i, const ir::sym& in, const ir::sym& k) {
  const std::int64_t s = at_or(w.strides, i, 1), d = at_or(w.dilations, i, 1);
  if (w.auto_pad == kernels::same_upper || w.auto_pad == kernels::same_lower) return ir::floordiv(in + ir::sym(s - 1), ir::sym(s));
  std::int64_t pb = 0, pe = 0;
  if (w.auto_pad == kernels::notset) pb = at_or(w.pads, i, 0), pe = at_or(w.pads, i + nd, 0);
  const ir::sym extent = (k - ir::sym(1)) * ir::sym(d) + ir::sym(1);
  const ir::sym span = in + ir::sym(pb + pe) - extent;
  if (span.is_const() && span.ref().value < 0)
    return c.fail("the window (", extent.ref().value, " wide) is larger than the padded input along spatial dimension ", i);
  if (w.ceil_mode == 0) return ir::floordiv(span, ir::sym(s)) + ir::sym(1);
  const ir::sym out = ir::floordiv(span + ir::sym(s - 1), ir::sym(s)) + ir::sym(1);
  // No window starts in the right padding.
  return out - ((out - ir::sym(1)) * ir::sym(s) >= in + ir::sym(pb));
}

inline ir::operand ints_operand(const std::vector<std::int64_t>& v) {
  std::vector<ir::sym> d;
  for (std::int64_t x : v) d.push_back(ir::sym(x));
  return ir::shape_arg(std::span<const ir::sym>(d));
}

inline result<ir::operand> optional_operand(node_ctx& c, std::size_t i) {
  if (!c.has_input(i)) return absent();
  RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
  RELAXVM_TRY_ASSIGN(ir::var v, c.st.operand_of(*e));
  return ir::operand(v);
}

/// Conv's and ConvTranspose's inputs: x, w of x's float type and rank, a bias of M values or none.
inline status conv_operands(node_ctx& c, entry*& x, entry*& w, std::size_t& nd) {
  RELAXVM_TRY_ASSIGN(x, c.input(0));
  RELAXVM_TRY_ASSIGN(w, c.input(1));
  RELAXVM_TRY(require_float(c, *x, 0));
  if (w->dt != x->dt) return c.fail("inputs 0 and 1 have different dtypes (", x->dt, " and ", w->dt, ")");
  RELAXVM_TRY_ASSIGN(nd, spatial_rank(c, *x));
  if (w->dims.size() != x->dims.size()) return c.fail("the weights have ", w->dims.size(), " dimensions but the input ", x->dims.size());
  if (c.has_input(2)) {
    RELAXVM_TRY_ASSIGN(entry* b, c.input(2));
    if (b->dt != x->dt) return c.fail("the bias is ", b->dt, " but the input ", x->dt);
    if (b->dims.size() != 1) return c.fail("the bias must have one dimension, but has ", b->dims.size());
  }
  // kernel_shape, when given, must be the weights' spatial dims.
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> ks, ints_attr(c, "kernel_shape", nd));
  for (std::size_t i = 0; i < ks.size(); ++i) {
    const ir::sym& k = w->dims[2 + i];
    if (k.is_const() && k.ref().value != ks[i]) return c.fail("kernel_shape has ", ks[i], " but the weights ", k.ref().value, " along spatial dimension ", i);
  }
  return {};
}

inline status convert_conv(node_ctx& c) {
  entry* x = nullptr;
  entry* w = nullptr;
  std::size_t nd = 0;
  RELAXVM_TRY(conv_operands(c, x, w, nd));
  const std::int64_t group = c.attr_int("group", 1);
  if (group < 1) return c.fail("group is ", group, "; it must be at least 1");
  RELAXVM_TRY_ASSIGN(window_attrs win, read_window(c, nd, false));
  const ir::sym& ch = x->dims[1];
  const ir::sym& wch = w->dims[1];
  if (ch.is_const() && wch.is_const() && ch.ref().value != wch.ref().value * group)
    return c.fail("the input has ", ch.ref().value, " channels but the weights take ", wch.ref().value, " per group of ", group);
  std::vector<ir::sym> dims{x->dims[0], w->dims[0]};
  for (std::size_t i = 0; i < nd; ++i) {
    RELAXVM_TRY_ASSIGN(ir::sym d, window_dim(c, win, nd, i, x->dims[2 + i], w->dims[2 + i]));
    dims.push_back(d);
  }
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(ir::var wv, c.st.operand_of(*w));
  RELAXVM_TRY_ASSIGN(ir::operand bv, optional_operand(c, 2));
  const ir::operand args[] = {xv, wv, bv, ir::prim(win.auto_pad), ir::prim(group), ints_operand(win.strides), ints_operand(win.pads),
                              ints_operand(win.dilations)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Conv", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

inline status convert_conv_transpose(node_ctx& c) {
  entry* x = nullptr;
  entry* w = nullptr;
  std::size_t nd = 0;
  RELAXVM_TRY(conv_operands(c, x, w, nd));
  const std::int64_t group = c.attr_int("group", 1);
  if (group < 1) return c.fail("group is ", group, "; it must be at least 1");
  RELAXVM_TRY_ASSIGN(window_attrs win, read_window(c, nd, false));
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> out_pad, ints_attr(c, "output_padding", nd));
  RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> out_shape, ints_attr(c, "output_shape", nd, nd + 2));
  if (out_shape.size() == nd + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  std::vector<ir::sym> dims{x->dims[0], w->dims[1] * ir::sym(group)};
  const bool same = win.auto_pad == kernels::same_upper || win.auto_pad == kernels::same_lower;
  for (std::size_t i = 0; i < nd; ++i) {
    const std::int64_t s = at_or(win.strides, i, 1), d = at_or(win.dilations, i, 1);
    const ir::sym& in = x->dims[2 + i];
    if (!out_shape.empty()) {
      dims.push_back(ir::sym(out_shape[i]));
    } else if (same) {
      dims.push_back(in * ir::sym(s));
    } else {
      std::int64_t pads = 0;
      if (win.auto_pad == kernels::notset) pads = at_or(win.pads, i, 0) + at_or(win.pads, i + nd, 0);
      const ir::sym extent = (w->dims[2 + i] - ir::sym(1)) * ir::sym(d) + ir::sym(1);
      dims.push_back(ir::sym(s) * (in - ir::sym(1)) + ir::sym(at_or(out_pad, i, 0) - pads) + extent);
    }
  }
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  RELAXVM_TRY_ASSIGN(ir::var wv, c.st.operand_of(*w));
  RELAXVM_TRY_ASSIGN(ir::operand bv, optional_operand(c, 2));
  const ir::operand args[] = {xv, wv, bv, ir::prim(win.auto_pad), ir::prim(group), ints_operand(win.strides), ints_operand(win.pads),
                              ints_operand(win.dilations), ints_operand(out_pad), ints_operand(out_shape)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.ConvTranspose", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

/// A pool's input, its kernel_shape, window and output dims.
struct pool_parts {
  entry* x = nullptr;
  std::size_t nd = 0;
  std::vector<std::int64_t> kernel;
  window_attrs win;
  std::vector<ir::sym> dims;
};

inline result<pool_parts> pool_common(node_ctx& c, std::uint32_t types) {
  pool_parts p;
  RELAXVM_TRY_ASSIGN(p.x, c.input(0));
  RELAXVM_TRY(require_type(c, *p.x, 0, types));
  RELAXVM_TRY_ASSIGN(p.nd, spatial_rank(c, *p.x));
  RELAXVM_TRY_ASSIGN(p.kernel, ints_attr(c, "kernel_shape", p.nd));
  if (p.kernel.empty()) return c.fail("kernel_shape is required");
  for (std::int64_t k : p.kernel)
    if (k < 1) return c.fail("kernel_shape has ", k, "; each must be at least 1");
  RELAXVM_TRY_ASSIGN(p.win, read_window(c, p.nd, true));
  p.dims = {p.x->dims[0], p.x->dims[1]};
  for (std::size_t i = 0; i < p.nd; ++i) {
    RELAXVM_TRY_ASSIGN(ir::sym d, window_dim(c, p.win, p.nd, i, p.x->dims[2 + i], ir::sym(p.kernel[i])));
    p.dims.push_back(d);
  }
  return p;
}

inline status convert_max_pool(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(pool_parts p, pool_common(c, kernels::detail::numbers));
  const std::int64_t order = c.attr_int("storage_order", 0);
  if (order != 0 && order != 1) return c.fail("storage_order is ", order, "; it must be 0 or 1");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*p.x));
  const ir::operand args[] = {xv, ir::prim(p.win.auto_pad), ir::prim(p.win.ceil_mode), ir::prim(order), ints_operand(p.kernel),
                              ints_operand(p.win.strides), ints_operand(p.win.pads), ints_operand(p.win.dilations)};
  const bool with_indices = c.node.outputs.size() > 1 && !c.node.outputs[1].empty();
  if (!with_indices) {
    RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.MaxPool", args, std::move(p.dims), p.x->dt));
    return c.output(0, std::move(y));
  }
  // Two outputs: the kernel fills a tuple (values, indices).
  ir::block_builder& f = c.st.fn();
  const ir::var t = f.call_dps("onnx.MaxPool", args, ir::tuple_info({tensor_struct(p.dims, p.x->dt), tensor_struct(p.dims, relaxvm::dtype::int64())}));
  if (!t.valid()) return c.st.builder_error();
  for (std::size_t k = 0; k < 2; ++k) {
    entry e;
    e.dt = k == 0 ? p.x->dt : relaxvm::dtype::int64();
    e.dims = p.dims;
    e.v = f.get_item(t, static_cast<std::int64_t>(k));
    if (!e.v.valid()) return c.st.builder_error();
    RELAXVM_TRY(c.output(k, std::move(e)));
  }
  return {};
}

inline status convert_average_pool(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(pool_parts p, pool_common(c, kernels::detail::floats));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*p.x));
  const ir::operand args[] = {xv, ir::prim(p.win.auto_pad), ir::prim(p.win.ceil_mode), ir::prim(c.attr_int("count_include_pad", 0)),
                              ints_operand(p.kernel), ints_operand(p.win.strides), ints_operand(p.win.pads), ints_operand(p.win.dilations)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.AveragePool", args, std::move(p.dims), p.x->dt));
  return c.output(0, std::move(y));
}

// LpPool's p: a float before opset 2, an int from then on.
inline double lp_attr(node_ctx& c) {
  const attribute_info* a = c.node.attribute("p");
  if (a == nullptr) return 2.0;
  return a->type == attribute_type::f ? static_cast<double>(a->f) : static_cast<double>(a->i);
}

inline status convert_lp_pool(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(pool_parts p, pool_common(c, kernels::detail::floats));
  const double pv = lp_attr(c);
  if (!(pv > 0)) return c.fail("p must be positive");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*p.x));
  const ir::operand args[] = {xv, ir::prim(p.win.auto_pad), ir::prim(p.win.ceil_mode), ir::prim_float(pv), ints_operand(p.kernel),
                              ints_operand(p.win.strides), ints_operand(p.win.pads), ints_operand(p.win.dilations)};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.LpPool", args, std::move(p.dims), p.x->dt));
  return c.output(0, std::move(y));
}

inline status convert_global_pool(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  const std::string_view op = c.node.op_type;
  RELAXVM_TRY(require_type(c, *x, 0, op == "GlobalMaxPool" ? kernels::detail::numbers : kernels::detail::floats));
  if (x->dims.size() < 3) return c.fail("the input has ", x->dims.size(), " dimensions; it needs N, C and at least one spatial one");
  std::vector<ir::sym> dims{x->dims[0], x->dims[1]};
  dims.resize(x->dims.size(), ir::sym(1));
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  std::vector<ir::operand> args{xv};
  if (op == "GlobalLpPool") {
    const double pv = lp_attr(c);
    if (!(pv > 0)) return c.fail("p must be positive");
    args.push_back(ir::prim_float(pv));
  }
  relaxvm::detail::text kernel;
  kernel << "onnx." << op;
  RELAXVM_TRY_ASSIGN(entry y, c.st.call(kernel.view(), args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

inline constexpr op_converter conv_converters[] = {
    {"Conv", &convert_conv}, {"ConvTranspose", &convert_conv_transpose}, {"MaxPool", &convert_max_pool},
    {"AveragePool", &convert_average_pool}, {"LpPool", &convert_lp_pool}, {"GlobalAveragePool", &convert_global_pool},
    {"GlobalMaxPool", &convert_global_pool}, {"GlobalLpPool", &convert_global_pool},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_CONV_HPP
