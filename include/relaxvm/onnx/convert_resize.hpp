// SPDX-License-Identifier: Apache-2.0
// Resize (opsets 10, 11, 13 and 18's axes) and Upsample (7, 9): the output's dims come from
// constant scales (floor(in * scale), kept symbolic where the scale is a whole number), from sizes
// (constants or Shape arithmetic), or, given as data, from the values when the program runs
// (import_state::run_time_dims); then one call of the portable kernel (relaxvm/kernels/resize.hpp).
#ifndef RELAXVM_ONNX_CONVERT_RESIZE_HPP
#define RELAXVM_ONNX_CONVERT_RESIZE_HPP

#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../kernels/resize.hpp"
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

/// Resize's string attributes as the kernel's ints.
inline result<std::int64_t> resize_enum(node_ctx& c, std::string_view name, std::string_view dflt,
                                        std::initializer_list<std::pair<std::string_view, std::int64_t>> names) {
  const attribute_info* a = c.node.attribute(name);
  const std::string_view v = a != nullptr && !a->s.empty() ? a->s : dflt;
  for (const auto& [n, k] : names)
    if (n == v) return k;
  relaxvm::detail::text t;
  for (const auto& [n, k] : names) t << (t.empty() ? "" : ", ") << n;
  return c.unsupported(name, " '", v, "' (relaxvm takes ", t.view(), ")");
}

/// The float32 values of a constant 1-d input (Resize's scales).
inline result<std::vector<float>> float_values(node_ctx& c, entry& e, std::string_view what) {
  RELAXVM_TRY_ASSIGN(tensor t, e.value());
  if (t.dtype() != relaxvm::dtype::float32()) return c.fail(what, " must be float32, but is ", t.dtype());
  return std::vector<float>(t.data<const float>(), t.data<const float>() + t.numel());
}

/// An input that is given and not empty (Resize-11 passes an empty scales when sizes are given).
inline bool given(node_ctx& c, std::size_t i) {
  if (!c.has_input(i)) return false;
  entry* e = c.st.find(c.node.inputs[i]);
  return e == nullptr || !(e->dims.size() == 1 && e->dims[0].is_const() && e->dims[0].ref().value == 0);
}

/// Per-axis values of `axes` (opset 18) spread over all `rank` axes, the others `fill`.
template <class V>
inline result<std::vector<V>> spread_axes(node_ctx& c, const std::vector<V>& v, std::size_t rank, V fill,
                                         [[maybe_unused]] const std::vector<ir::sym>* fill_dims) {
  const attribute_info* a = c.node.attribute("axes");
  if (a == nullptr) {
    if (v.size() != rank) return c.fail("there are ", v.size(), " scales or sizes for an input of ", rank, " dims");
    return v;
  }
  if (a->ints.size() != v.size()) return c.fail("there are ", v.size(), " scales or sizes for ", a->ints.size(), " axes");
  std::vector<V> out(rank, fill);
  if constexpr (std::is_same_v<V, ir::sym>)
    for (std::size_t k = 0; k < rank; ++k) out[k] = (*fill_dims)[k];
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < v.size(); ++i) {
    RELAXVM_TRY_ASSIGN(const std::int64_t k, normalize_axis(c, a->ints[i], rank));
    if (seen[static_cast<std::size_t>(k)]) return c.fail("axis ", a->ints[i], " is repeated");
    seen[static_cast<std::size_t>(k)] = true;
    out[static_cast<std::size_t>(k)] = v[i];
  }
  return out;
}

inline status convert_resize(node_ctx& c) {
  const bool upsample = c.node.op_type == "Upsample";
  const std::int64_t opset = c.st.opset();
  RELAXVM_TRY_ASSIGN(entry* x, c.input(0));
  if (x->dims.empty()) return c.fail("the input must have at least one dimension");
  const std::size_t rank = x->dims.size();
  const bool v10 = upsample || opset < 11;  // (X, scales), asymmetric, Resize-10's rounding

  RELAXVM_TRY_ASSIGN(const std::int64_t mode, resize_enum(c, "mode", "nearest",
                                                          {{"nearest", kernels::resize_nearest}, {"linear", kernels::resize_linear},
                                                           {"bilinear", kernels::resize_linear}, {"cubic", kernels::resize_cubic}}));
  if (v10 && mode == kernels::resize_cubic) return c.fail("mode 'cubic' needs Resize from opset 11");
  std::int64_t coord = kernels::coord_asymmetric, nearest = kernels::nearest_simple;
  if (!v10) {
    RELAXVM_TRY_ASSIGN(coord, resize_enum(c, "coordinate_transformation_mode", "half_pixel",
                                          {{"half_pixel", kernels::coord_half_pixel}, {"asymmetric", kernels::coord_asymmetric},
                                           {"align_corners", kernels::coord_align_corners},
                                           {"pytorch_half_pixel", kernels::coord_pytorch_half_pixel},
                                           {"tf_half_pixel_for_nn", kernels::coord_tf_half_pixel_for_nn},
                                           {"tf_crop_and_resize", kernels::coord_tf_crop_and_resize}}));
    RELAXVM_TRY_ASSIGN(nearest, resize_enum(c, "nearest_mode", "round_prefer_floor",
                                            {{"round_prefer_floor", kernels::nearest_round_prefer_floor},
                                             {"round_prefer_ceil", kernels::nearest_round_prefer_ceil},
                                             {"floor", kernels::nearest_floor}, {"ceil", kernels::nearest_ceil}}));
  }
  if (c.attr_int("antialias", 0) != 0) return c.unsupported("Resize with antialias");
  if (const attribute_info* k = c.node.attribute("keep_aspect_ratio_policy"); k != nullptr && !k->s.empty() && k->s != "stretch")
    return c.unsupported("keep_aspect_ratio_policy '", k->s, "'");
  RELAXVM_TRY(require_type(c, *x, 0, mode == kernels::resize_nearest ? kernels::detail::any_type : kernels::detail::floats));
  const bool has_axes = c.node.attribute("axes") != nullptr;

  // Where the output's dims come from: scales (an attribute before Upsample-9) or sizes.
  const std::size_t scales_at = v10 ? 1 : 2;
  const bool scales_attr = upsample && opset < 9;
  const bool has_scales = scales_attr || given(c, scales_at), has_sizes = !v10 && given(c, 3);
  if (has_scales == has_sizes) return c.fail("exactly one of scales and sizes must be given");
  RELAXVM_TRY_ASSIGN(ir::var xv, c.st.operand_of(*x));
  std::vector<ir::sym> dims;
  ir::operand scales_arg = absent();
  if (has_sizes) {
    RELAXVM_TRY_ASSIGN(entry* s, c.input(3));
    if (s->dt != relaxvm::dtype::int64()) return c.fail("the sizes must be int64, but are ", s->dt);
    if (s->what != entry::kind::tensor) {
      RELAXVM_TRY_ASSIGN(std::vector<ir::sym> v, c.st.sym_values(*s, "Resize", "sizes"));
      RELAXVM_TRY_ASSIGN(dims, spread_axes<ir::sym>(c, v, rank, ir::sym(1), &x->dims));
    } else {
      if (has_axes) return c.unsupported("sizes computed at run time with axes");
      if (s->dims.size() != 1 || (s->dims[0].is_const() && s->dims[0].ref().value != static_cast<std::int64_t>(rank)))
        return c.fail("the sizes must hold one value per axis (", rank, ")");
      RELAXVM_TRY_ASSIGN(ir::var sv, c.st.operand_of(*s));
      const ir::var shp = c.st.fn().call_packed("vm.builtin.tensor_to_shape", {sv}, ir::shape_info(static_cast<std::int32_t>(rank)));
      RELAXVM_TRY_ASSIGN(dims, c.st.run_time_dims(shp, rank));
    }
  } else {
    entry* s = nullptr;
    if (!scales_attr) {
      RELAXVM_TRY_ASSIGN(s, c.input(scales_at));
      if (s->dt != relaxvm::dtype::float32()) return c.fail("the scales must be float32, but are ", s->dt);
    }
    if (scales_attr || s->is_constant()) {
      std::vector<float> v;
      if (scales_attr) {
        const attribute_info* a = c.node.attribute("scales");
        if (a == nullptr) return c.fail("Upsample before opset 9 needs its scales attribute");
        v = a->floats;
      } else {
        RELAXVM_TRY_ASSIGN(v, float_values(c, *s, "the scales"));
      }
      RELAXVM_TRY_ASSIGN(v, spread_axes<float>(c, v, rank, 1.0f, nullptr));
      bool all_known = true;
      for (std::size_t k = 0; k < rank; ++k) {
        const double sc = static_cast<double>(v[k]);
        if (!(sc > 0) || !std::isfinite(sc)) return c.fail("scale ", kernels::detail::real_text(sc).view(), " (axis ", k, ") must be positive and finite");
        const ir::sym& in = x->dims[k];
        if (in.is_const()) {
          const double o = std::floor(sc * static_cast<double>(in.ref().value));
          if (o > 4.0e18) return c.fail("scale ", kernels::detail::real_text(sc).view(), " (axis ", k, ") makes a dim too large");
          dims.push_back(ir::sym(static_cast<std::int64_t>(o)));
        } else if (sc == std::floor(sc) && sc <= 1.0e6) {
          dims.push_back(in * ir::sym(static_cast<std::int64_t>(sc)));  // a whole number: exact
        } else {
          all_known = false;
          break;
        }
      }
      // The kernel reads the scales (the coordinate mapping uses them, not out / in).
      const std::int64_t n = static_cast<std::int64_t>(rank);
      RELAXVM_TRY_ASSIGN(relaxvm::shape ss, relaxvm::shape::try_make(std::span<const std::int64_t>(&n, 1)));
      RELAXVM_TRY_ASSIGN(tensor st, tensor::try_empty(ss, relaxvm::dtype::float32()));
      for (std::size_t k = 0; k < rank; ++k) st.data<float>()[k] = v[k];
      entry se = entry::of(std::move(st));
      RELAXVM_TRY_ASSIGN(ir::var sv, c.st.operand_of(se));
      scales_arg = sv;
      if (!all_known) {
        const ir::var shp = c.st.fn().call_packed("onnx.Resize.shape", {xv, sv}, ir::shape_info(static_cast<std::int32_t>(rank)));
        RELAXVM_TRY_ASSIGN(dims, c.st.run_time_dims(shp, rank));
      }
    } else {
      if (has_axes) return c.unsupported("scales computed at run time with axes");
      RELAXVM_TRY_ASSIGN(ir::var sv, c.st.operand_of(*s));
      scales_arg = sv;
      const ir::var shp = c.st.fn().call_packed("onnx.Resize.shape", {xv, sv}, ir::shape_info(static_cast<std::int32_t>(rank)));
      RELAXVM_TRY_ASSIGN(dims, c.st.run_time_dims(shp, rank));
    }
  }
  ir::operand roi_arg = absent();
  if (coord == kernels::coord_tf_crop_and_resize) {
    if (has_axes) return c.unsupported("tf_crop_and_resize with axes");
    RELAXVM_TRY_ASSIGN(entry* r, c.input(1));
    RELAXVM_TRY(require_float(c, *r, 1));
    RELAXVM_TRY_ASSIGN(ir::var rv, c.st.operand_of(*r));
    roi_arg = rv;
  }
  const ir::operand args[] = {xv,
                              roi_arg,
                              scales_arg,
                              ir::prim(mode),
                              ir::prim(coord),
                              ir::prim(nearest),
                              ir::prim_float(c.attr_float("cubic_coeff_a", -0.75f)),
                              ir::prim(c.attr_int("exclude_outside", 0)),
                              ir::prim_float(c.attr_float("extrapolation_value", 0.0f))};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Resize", args, std::move(dims), x->dt));
  return c.output(0, std::move(y));
}

inline constexpr op_converter resize_converters[] = {
    {"Resize", &convert_resize},
    {"Upsample", &convert_resize},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_RESIZE_HPP
