// SPDX-License-Identifier: Apache-2.0
// Convolution and pooling: their registration as packed functions (kernels/register.hpp declares it).
#ifndef RELAXVM_KERNELS_REGISTER_WINDOW_HPP
#define RELAXVM_KERNELS_REGISTER_WINDOW_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "register.hpp"
#include "conv.hpp"
#include "pool.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_window(basic_registry& reg) {
  // Convolution and pooling: an optional bias, MaxPool's optional Indices output.
  reg.def("onnx.Conv", [](const tensor& x, const tensor& w, const value& b, std::int64_t auto_pad, std::int64_t group, const shape& strides,
                          const shape& pads, const shape& dilations, const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor bias, detail::optional_tensor("onnx.Conv", b, 2));
    return Conv_out(x, w, bias, auto_pad, group, strides, pads, dilations, out);
  });
  reg.def("onnx.ConvTranspose", [](const tensor& x, const tensor& w, const value& b, std::int64_t auto_pad, std::int64_t group,
                                   const shape& strides, const shape& pads, const shape& dilations, const shape& output_padding,
                                   const shape& output_shape, const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor bias, detail::optional_tensor("onnx.ConvTranspose", b, 2));
    return ConvTranspose_out(x, w, bias, auto_pad, group, strides, pads, dilations, output_padding, output_shape, out);
  });
  reg.def("onnx.MaxPool", [](const tensor& x, std::int64_t auto_pad, std::int64_t ceil_mode, std::int64_t storage_order,
                             const shape& kernel_shape, const shape& strides, const shape& pads, const shape& dilations, const tensor& out,
                             std::span<const value> indices) -> status {
    if (indices.size() > 1) return detail::value_error("onnx.MaxPool: ", 9 + indices.size(), " arguments; it takes 9 or 10");
    tensor idx;
    if (indices.size() == 1) {
      RELAXVM_TRY_ASSIGN(idx, detail::optional_tensor("onnx.MaxPool", indices[0], 9));
    }
    return MaxPool_out(x, auto_pad, ceil_mode, storage_order, kernel_shape, strides, pads, dilations, out, idx);
  });
  reg.def("onnx.AveragePool", &AveragePool_out).def("onnx.LpPool", &LpPool_out);
  reg.def("onnx.GlobalAveragePool", &GlobalAveragePool_out).def("onnx.GlobalMaxPool", &GlobalMaxPool_out);
  reg.def("onnx.GlobalLpPool", &GlobalLpPool_out);
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_WINDOW_HPP
