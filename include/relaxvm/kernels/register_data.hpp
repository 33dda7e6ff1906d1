// SPDX-License-Identifier: Apache-2.0
// The data movement kernels (kernels/data.hpp), Resize, NonZero, Compress and the shape kernels (kernels/shape.hpp): their registration as packed functions (kernels/register.hpp declares it).
#ifndef RELAXVM_KERNELS_REGISTER_DATA_HPP
#define RELAXVM_KERNELS_REGISTER_DATA_HPP

#include <span>

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL, RELAXVM_HEAP
#if RELAXVM_HEAP
#include <vector>
#endif
#include "register.hpp"
#include "data.hpp"
#include "resize.hpp"
#include "select.hpp"
#include "shape.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_data(basic_registry& reg) {
  // Data movement (kernels/data.hpp).
  reg.def("onnx.Transpose", &Transpose_out).def("onnx.DepthToSpace", &DepthToSpace_out).def("onnx.SpaceToDepth", &SpaceToDepth_out);
  reg.def("onnx.Slice", &Slice_out).def("onnx.Expand", &Expand_out).def("onnx.Tile", &Tile_out).def("onnx.Gather", &Gather_out);
  reg.def("onnx.GatherElements", &GatherElements_out).def("onnx.GatherND", &GatherND_out).def("onnx.Cast", &Cast_out);
  reg.def("onnx.ScatterElements", &ScatterElements_out).def("onnx.ScatterND", &ScatterND_out).def("onnx.CumSum", &CumSum_out);
  reg.def("onnx.OneHot", &OneHot_out).def("onnx.EyeLike", &EyeLike_out).def("onnx.Range", &Range_out);
  reg.def("onnx.ConstantOfShape", &ConstantOfShape_out).def("onnx.Size", &Size_out);
  // Pad(x, pads, mode, value | none, out); Trilu(x, k | none, upper, out).
  reg.def("onnx.Pad", [](const tensor& x, const tensor& pads, std::int64_t mode, const value& v, const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor t, detail::optional_tensor("onnx.Pad", v, 3));
    return Pad_out(x, pads, mode, t, out);
  });
  reg.def("onnx.Trilu", [](const tensor& x, const value& k, std::int64_t upper, const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor t, detail::optional_tensor("onnx.Trilu", k, 1));
    return Trilu_out(x, t, upper, out);
  });
  // Resize(x, roi | none, scales | none, mode, coordinate_transformation_mode, nearest_mode,
  // cubic_coeff_a, exclude_outside, extrapolation_value, out); its output shape from run-time scales.
  reg.def("onnx.Resize", [](const tensor& x, const value& roi, const value& scales, std::int64_t mode, std::int64_t coord,
                            std::int64_t nearest, double cubic_a, std::int64_t exclude_outside, double extrapolation,
                            const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor r, detail::optional_tensor("onnx.Resize", roi, 1));
    RELAXVM_TRY_ASSIGN(tensor s, detail::optional_tensor("onnx.Resize", scales, 2));
    return Resize_out(x, r, s, mode, coord, nearest, cubic_a, exclude_outside, extrapolation, out);
  });
  reg.def("onnx.Resize.shape", [](const tensor& x, const tensor& scales) -> result<shape> { return detail::resize_shape(x, scales); });
  // Sizes known from the data: each op's shape function, then its kernel.
  reg.def("onnx.NonZero", &NonZero_out).def("onnx.Compress", &Compress_out);
  reg.def("onnx.NonZero.shape", [](const tensor& x) -> result<shape> { return detail::nonzero_shape(x); });
  reg.def("onnx.Compress.shape",
          [](const tensor& x, const tensor& c, std::int64_t axis) -> result<shape> { return detail::compress_shape(x, c, axis); });
  // Concat(inputs..., axis, out) and Split(x, axis, outputs...): any number of tensors.
  struct variadic {
#if RELAXVM_HEAP
    using many_tensors = std::vector<tensor>;
#else
    struct many_tensors {};
#endif
    static result<tensor> arg(std::string_view fn, const value& v, std::size_t i) {
      if (v.kind() != value_kind::tensor) return detail::type_error(fn, ": argument ", i, " must be a tensor, but got ", v.describe());
      return v.as<tensor>();
    }
    // The tensors of `a` (argument `from` first): in `small` up to 16 of them, else in `many`;
    // firmware mode (no heap) takes at most 16.
    static result<std::span<const tensor>> collect(std::string_view fn, std::span<const value> a, std::size_t from, tensor (&small)[16],
                                                   many_tensors& many) {
#if RELAXVM_HEAP
      if (a.size() > 16) many.resize(a.size());
      tensor* t = a.size() > 16 ? many.data() : small;
#else
      (void)many;
      if (a.size() > 16)
        return detail::value_error(fn, ": takes at most 16 tensors in firmware mode (RELAXVM_HEAP=0), but got ", a.size());
      tensor* t = small;
#endif
      for (std::size_t i = 0; i < a.size(); ++i) {
        RELAXVM_TRY_ASSIGN(t[i], arg(fn, a[i], from + i));
      }
      return std::span<const tensor>(t, a.size());
    }
  };
  reg.def_packed("onnx.Concat", [](std::span<const value> a) -> status {
    if (a.size() < 3) return detail::value_error("onnx.Concat: needs inputs, the axis and the output, but got ", a.size(), " arguments");
    RELAXVM_TRY_ASSIGN(std::int64_t axis, a[a.size() - 2].try_as<std::int64_t>());
    RELAXVM_TRY_ASSIGN(tensor out, variadic::arg("onnx.Concat", a[a.size() - 1], a.size() - 1));
    tensor small[16];
    variadic::many_tensors many;
    RELAXVM_TRY_ASSIGN(std::span<const tensor> in, variadic::collect("onnx.Concat", a.first(a.size() - 2), 0, small, many));
    return Concat_out(in, axis, out);
  });
  reg.def_packed("onnx.Split", [](std::span<const value> a) -> status {
    if (a.size() < 3) return detail::value_error("onnx.Split: needs the input, the axis and outputs, but got ", a.size(), " arguments");
    RELAXVM_TRY_ASSIGN(tensor x, variadic::arg("onnx.Split", a[0], 0));
    RELAXVM_TRY_ASSIGN(std::int64_t axis, a[1].try_as<std::int64_t>());
    tensor small[16];
    variadic::many_tensors many;
    RELAXVM_TRY_ASSIGN(std::span<const tensor> outs, variadic::collect("onnx.Split", a.subspan(2), 2, small, many));
    return Split_out(x, axis, outs);
  });
  register_shape_kernels(reg);  // onnx.<Op>.shape: output shapes computed from run-time values
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_DATA_HPP
