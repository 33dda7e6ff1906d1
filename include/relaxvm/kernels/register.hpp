// SPDX-License-Identifier: Apache-2.0
// The portable kernels registered as packed functions under "onnx.<OpType>", the names the ONNX
// importer calls. Each takes its inputs, its attributes and its preallocated outputs, in that order
// (relaxvm/kernels/*.hpp documents each signature).
#ifndef RELAXVM_KERNELS_REGISTER_HPP
#define RELAXVM_KERNELS_REGISTER_HPP

#include <span>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../runtime/registry.hpp"
#include "elementwise.hpp"
#include "reduce.hpp"
#include "normalization.hpp"
#include "linalg.hpp"
#include "conv.hpp"
#include "pool.hpp"
#include "data.hpp"
#include "shape.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {
// An optional tensor argument: an undefined tensor when the program passed none.
inline result<tensor> optional_tensor(std::string_view fn, const value& v, std::size_t i) {
  if (v.kind() == value_kind::null) return tensor();
  if (v.kind() != value_kind::tensor) return type_error(fn, ": argument ", i, " must be a tensor or absent, but got ", v.describe());
  return v.as<tensor>();
}
}  // namespace detail

/// Registers every portable kernel in `reg`.
inline void register_all(basic_registry& reg) {
  // Unary maps.
  reg.def("onnx.Sqrt", &Sqrt_out).def("onnx.Exp", &Exp_out).def("onnx.Log", &Log_out).def("onnx.Erf", &Erf_out);
  reg.def("onnx.Tanh", &Tanh_out).def("onnx.Sigmoid", &Sigmoid_out).def("onnx.Softplus", &Softplus_out);
  reg.def("onnx.Softsign", &Softsign_out).def("onnx.Reciprocal", &Reciprocal_out).def("onnx.Floor", &Floor_out);
  reg.def("onnx.Ceil", &Ceil_out).def("onnx.Round", &Round_out).def("onnx.Sin", &Sin_out).def("onnx.Cos", &Cos_out);
  reg.def("onnx.Tan", &Tan_out).def("onnx.Asin", &Asin_out).def("onnx.Acos", &Acos_out).def("onnx.Atan", &Atan_out);
  reg.def("onnx.Sinh", &Sinh_out).def("onnx.Cosh", &Cosh_out).def("onnx.Asinh", &Asinh_out).def("onnx.Acosh", &Acosh_out);
  reg.def("onnx.Atanh", &Atanh_out).def("onnx.HardSwish", &HardSwish_out).def("onnx.Abs", &Abs_out).def("onnx.Neg", &Neg_out);
  reg.def("onnx.Sign", &Sign_out).def("onnx.Relu", &Relu_out).def("onnx.Not", &Not_out).def("onnx.IsNaN", &IsNaN_out);
  reg.def("onnx.IsInf", &IsInf_out).def("onnx.LeakyRelu", &LeakyRelu_out).def("onnx.Elu", &Elu_out).def("onnx.Celu", &Celu_out);
  reg.def("onnx.ThresholdedRelu", &ThresholdedRelu_out).def("onnx.Selu", &Selu_out).def("onnx.HardSigmoid", &HardSigmoid_out);
  reg.def("onnx.Shrink", &Shrink_out);
  // Binary ops, comparisons, logic.
  reg.def("onnx.Add", &Add_out).def("onnx.Sub", &Sub_out).def("onnx.Mul", &Mul_out).def("onnx.Div", &Div_out);
  reg.def("onnx.Pow", &Pow_out).def("onnx.Max", &Max_out).def("onnx.Min", &Min_out).def("onnx.Mod", &Mod_out);
  reg.def("onnx.PRelu", &PRelu_out).def("onnx.Equal", &Equal_out).def("onnx.Less", &Less_out);
  reg.def("onnx.LessOrEqual", &LessOrEqual_out).def("onnx.Greater", &Greater_out).def("onnx.GreaterOrEqual", &GreaterOrEqual_out);
  reg.def("onnx.And", &And_out).def("onnx.Or", &Or_out).def("onnx.Xor", &Xor_out).def("onnx.BitShift", &BitShift_out);
  reg.def("onnx.Where", &Where_out);
  // Clip(x, min | none, max | none, out).
  reg.def("onnx.Clip", [](const tensor& x, const value& lo, const value& hi, const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor l, detail::optional_tensor("onnx.Clip", lo, 1));
    RELAXVM_TRY_ASSIGN(tensor h, detail::optional_tensor("onnx.Clip", hi, 2));
    return Clip_out(x, l, h, out);
  });
  // Reductions, softmax family, TopK, normalizations, matrix products.
  reg.def("onnx.ReduceSum", &ReduceSum_out).def("onnx.ReduceMean", &ReduceMean_out).def("onnx.ReduceMax", &ReduceMax_out);
  reg.def("onnx.ReduceMin", &ReduceMin_out).def("onnx.ReduceProd", &ReduceProd_out).def("onnx.ReduceL1", &ReduceL1_out);
  reg.def("onnx.ReduceL2", &ReduceL2_out).def("onnx.ReduceLogSum", &ReduceLogSum_out).def("onnx.ReduceLogSumExp", &ReduceLogSumExp_out);
  reg.def("onnx.ReduceSumSquare", &ReduceSumSquare_out).def("onnx.ArgMax", &ArgMax_out).def("onnx.ArgMin", &ArgMin_out);
  reg.def("onnx.Softmax", &Softmax_out).def("onnx.LogSoftmax", &LogSoftmax_out).def("onnx.Hardmax", &Hardmax_out);
  reg.def("onnx.TopK", &TopK_out).def("onnx.BatchNormalization", &BatchNormalization_out);
  reg.def("onnx.InstanceNormalization", &InstanceNormalization_out).def("onnx.LRN", &LRN_out);
  reg.def("onnx.MeanVarianceNormalization", &MeanVarianceNormalization_out).def("onnx.MatMul", &MatMul_out);
  // LayerNormalization(x, scale, bias | none, axis, epsilon, y, mean, inv_std_dev).
  reg.def("onnx.LayerNormalization", [](const tensor& x, const tensor& scale, const value& bias, std::int64_t axis, double epsilon,
                                        const tensor& y, const tensor& mean, const tensor& inv_std_dev) -> status {
    RELAXVM_TRY_ASSIGN(tensor b, detail::optional_tensor("onnx.LayerNormalization", bias, 2));
    return LayerNormalization_out(x, scale, b, axis, epsilon, y, mean, inv_std_dev);
  });
  // Gemm(a, b, c | none, alpha, beta, trans_a, trans_b, out).
  reg.def("onnx.Gemm", [](const tensor& a, const tensor& b, const value& c, double alpha, double beta, std::int64_t trans_a,
                          std::int64_t trans_b, const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor ct, detail::optional_tensor("onnx.Gemm", c, 2));
    return Gemm_out(a, b, ct, alpha, beta, trans_a, trans_b, out);
  });
  // Einsum(a, b | none, a_labels, b_labels, out_labels, out).
  reg.def("onnx.Einsum", [](const tensor& a, const value& b, const shape& la, const shape& lb, const shape& lo, const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor bt, detail::optional_tensor("onnx.Einsum", b, 1));
    return Einsum_out(a, bt, la, lb, lo, out);
  });
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
  // Concat(inputs..., axis, out) and Split(x, axis, outputs...): any number of tensors.
  struct variadic {
    static result<tensor> arg(std::string_view fn, const value& v, std::size_t i) {
      if (v.kind() != value_kind::tensor) return detail::type_error(fn, ": argument ", i, " must be a tensor, but got ", v.describe());
      return v.as<tensor>();
    }
    // The tensors of `a` (argument `from` first): in `small` up to 16 of them, else in `many`.
    static result<std::span<const tensor>> collect(std::string_view fn, std::span<const value> a, std::size_t from, tensor (&small)[16],
                                                   std::vector<tensor>& many) {
      if (a.size() > 16) many.resize(a.size());
      tensor* t = a.size() > 16 ? many.data() : small;
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
    std::vector<tensor> many;
    RELAXVM_TRY_ASSIGN(std::span<const tensor> in, variadic::collect("onnx.Concat", a.first(a.size() - 2), 0, small, many));
    return Concat_out(in, axis, out);
  });
  reg.def_packed("onnx.Split", [](std::span<const value> a) -> status {
    if (a.size() < 3) return detail::value_error("onnx.Split: needs the input, the axis and outputs, but got ", a.size(), " arguments");
    RELAXVM_TRY_ASSIGN(tensor x, variadic::arg("onnx.Split", a[0], 0));
    RELAXVM_TRY_ASSIGN(std::int64_t axis, a[1].try_as<std::int64_t>());
    tensor small[16];
    std::vector<tensor> many;
    RELAXVM_TRY_ASSIGN(std::span<const tensor> outs, variadic::collect("onnx.Split", a.subspan(2), 2, small, many));
    return Split_out(x, axis, outs);
  });
  register_shape_kernels(reg);
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_HPP
