// SPDX-License-Identifier: Apache-2.0
// The portable kernels as constexpr function tables (runtime/table.hpp), one per family, under the
// "onnx.<OpType>" names the ONNX importer calls. The registration functions (register_<family>)
// add these tables to a registry; a firmware program, which has no registry (its names need the
// heap), links a static executable against them instead: kernels::entry<"onnx.Conv">() is one
// kernel's entry, and the compile-time linker keeps only the entries a program calls.
#ifndef RELAXVM_KERNELS_TABLE_HPP
#define RELAXVM_KERNELS_TABLE_HPP

#include <cstdint>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_HEAP
#if RELAXVM_HEAP
#include <vector>
#endif
#include "../runtime/table.hpp"
#include "base.hpp"
#include "conv.hpp"
#include "data.hpp"
#include "elementwise.hpp"
#include "linalg.hpp"
#include "loss.hpp"
#include "normalization.hpp"
#include "pool.hpp"
#include "reduce.hpp"
#include "resize.hpp"
#include "select.hpp"
#include "shape.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

namespace detail {
// An optional tensor argument: an undefined tensor when the program passed none.
inline result<tensor> optional_tensor(std::string_view fn, const value& v, std::size_t i) {
  if (v.kind() == value_kind::null) return tensor();
  if (v.kind() != value_kind::tensor) return type_error(fn, ": argument ", i, " must be a tensor or absent, but got ", v.describe());
  return v.as<tensor>();
}

// Concat's and Split's tensors: any number of them.
struct variadic_tensors {
#if RELAXVM_HEAP
  using many_tensors = std::vector<tensor>;
#else
  struct many_tensors {};
#endif
  static result<tensor> arg(std::string_view fn, const value& v, std::size_t i) {
    if (v.kind() != value_kind::tensor) return type_error(fn, ": argument ", i, " must be a tensor, but got ", v.describe());
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
      return value_error(fn, ": takes at most 16 tensors in firmware mode (RELAXVM_HEAP=0), but got ", a.size());
    tensor* t = small;
#endif
    for (std::size_t i = 0; i < a.size(); ++i) {
      RELAXVM_TRY_ASSIGN(t[i], arg(fn, a[i], from + i));
    }
    return std::span<const tensor>(t, a.size());
  }
};
}  // namespace detail

/// Maps, broadcasting binary ops, comparisons, logic, Where, Clip.
inline constexpr auto elementwise_table = make_table(
    fn<"onnx.Sqrt">(&Sqrt_out),
    fn<"onnx.Exp">(&Exp_out),
    fn<"onnx.Log">(&Log_out),
    fn<"onnx.Erf">(&Erf_out),
    fn<"onnx.Tanh">(&Tanh_out),
    fn<"onnx.Sigmoid">(&Sigmoid_out),
    fn<"onnx.Softplus">(&Softplus_out),
    fn<"onnx.Softsign">(&Softsign_out),
    fn<"onnx.Reciprocal">(&Reciprocal_out),
    fn<"onnx.Floor">(&Floor_out),
    fn<"onnx.Ceil">(&Ceil_out),
    fn<"onnx.Round">(&Round_out),
    fn<"onnx.Sin">(&Sin_out),
    fn<"onnx.Cos">(&Cos_out),
    fn<"onnx.Tan">(&Tan_out),
    fn<"onnx.Asin">(&Asin_out),
    fn<"onnx.Acos">(&Acos_out),
    fn<"onnx.Atan">(&Atan_out),
    fn<"onnx.Sinh">(&Sinh_out),
    fn<"onnx.Cosh">(&Cosh_out),
    fn<"onnx.Asinh">(&Asinh_out),
    fn<"onnx.Acosh">(&Acosh_out),
    fn<"onnx.Atanh">(&Atanh_out),
    fn<"onnx.HardSwish">(&HardSwish_out),
    fn<"onnx.Abs">(&Abs_out),
    fn<"onnx.Neg">(&Neg_out),
    fn<"onnx.Sign">(&Sign_out),
    fn<"onnx.Relu">(&Relu_out),
    fn<"onnx.Not">(&Not_out),
    fn<"onnx.IsNaN">(&IsNaN_out),
    fn<"onnx.IsInf">(&IsInf_out),
    fn<"onnx.LeakyRelu">(&LeakyRelu_out),
    fn<"onnx.Elu">(&Elu_out),
    fn<"onnx.Celu">(&Celu_out),
    fn<"onnx.ThresholdedRelu">(&ThresholdedRelu_out),
    fn<"onnx.Selu">(&Selu_out),
    fn<"onnx.HardSigmoid">(&HardSigmoid_out),
    fn<"onnx.Shrink">(&Shrink_out),
    fn<"onnx.Add">(&Add_out),
    fn<"onnx.Sub">(&Sub_out),
    fn<"onnx.Mul">(&Mul_out),
    fn<"onnx.Div">(&Div_out),
    fn<"onnx.Pow">(&Pow_out),
    fn<"onnx.Max">(&Max_out),
    fn<"onnx.Min">(&Min_out),
    fn<"onnx.Mod">(&Mod_out),
    fn<"onnx.PRelu">(&PRelu_out),
    fn<"onnx.Equal">(&Equal_out),
    fn<"onnx.Less">(&Less_out),
    fn<"onnx.LessOrEqual">(&LessOrEqual_out),
    fn<"onnx.Greater">(&Greater_out),
    fn<"onnx.GreaterOrEqual">(&GreaterOrEqual_out),
    fn<"onnx.And">(&And_out),
    fn<"onnx.Or">(&Or_out),
    fn<"onnx.Xor">(&Xor_out),
    fn<"onnx.BitShift">(&BitShift_out),
    fn<"onnx.Where">(&Where_out),
    // Clip(x, min | none, max | none, out).
    fn<"onnx.Clip">([](const tensor& x, const value& lo, const value& hi, const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor l, detail::optional_tensor("onnx.Clip", lo, 1));
      RELAXVM_TRY_ASSIGN(tensor h, detail::optional_tensor("onnx.Clip", hi, 2));
      return Clip_out(x, l, h, out);
    }));

/// Reductions, the softmax family, TopK, the normalizations and the losses.
inline constexpr auto reduce_table = make_table(
    fn<"onnx.ReduceSum">(&ReduceSum_out),
    fn<"onnx.ReduceMean">(&ReduceMean_out),
    fn<"onnx.ReduceMax">(&ReduceMax_out),
    fn<"onnx.ReduceMin">(&ReduceMin_out),
    fn<"onnx.ReduceProd">(&ReduceProd_out),
    fn<"onnx.ReduceL1">(&ReduceL1_out),
    fn<"onnx.ReduceL2">(&ReduceL2_out),
    fn<"onnx.ReduceLogSum">(&ReduceLogSum_out),
    fn<"onnx.ReduceLogSumExp">(&ReduceLogSumExp_out),
    fn<"onnx.ReduceSumSquare">(&ReduceSumSquare_out),
    fn<"onnx.ArgMax">(&ArgMax_out),
    fn<"onnx.ArgMin">(&ArgMin_out),
    fn<"onnx.Softmax">(&Softmax_out),
    fn<"onnx.LogSoftmax">(&LogSoftmax_out),
    fn<"onnx.Hardmax">(&Hardmax_out),
    fn<"onnx.TopK">(&TopK_out),
    fn<"onnx.BatchNormalization">(&BatchNormalization_out),
    fn<"onnx.InstanceNormalization">(&InstanceNormalization_out),
    fn<"onnx.LRN">(&LRN_out),
    fn<"onnx.MeanVarianceNormalization">(&MeanVarianceNormalization_out),
    // LayerNormalization(x, scale, bias | none, axis, epsilon, y, mean, inv_std_dev).
    fn<"onnx.LayerNormalization">([](const tensor& x, const tensor& scale, const value& bias, std::int64_t axis, double epsilon,
                                     const tensor& y, const tensor& mean, const tensor& inv_std_dev) -> status {
      RELAXVM_TRY_ASSIGN(tensor b, detail::optional_tensor("onnx.LayerNormalization", bias, 2));
      return LayerNormalization_out(x, scale, b, axis, epsilon, y, mean, inv_std_dev);
    }),
    // Losses: (x, target, weight | none, reduction, has_ignore, ignore_index, out[, log_prob]).
    fn<"onnx.NegativeLogLikelihoodLoss">([](const tensor& x, const tensor& t, const value& w, std::int64_t reduction,
                                            std::int64_t has_ignore, std::int64_t ignore_index, const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor wt, detail::optional_tensor("onnx.NegativeLogLikelihoodLoss", w, 2));
      return NegativeLogLikelihoodLoss_out(x, t, wt, reduction, has_ignore, ignore_index, out);
    }),
    fn<"onnx.SoftmaxCrossEntropyLoss">([](const tensor& x, const tensor& t, const value& w, std::int64_t reduction,
                                          std::int64_t has_ignore, std::int64_t ignore_index, const tensor& out,
                                          const tensor& log_prob) -> status {
      RELAXVM_TRY_ASSIGN(tensor wt, detail::optional_tensor("onnx.SoftmaxCrossEntropyLoss", w, 2));
      return SoftmaxCrossEntropyLoss_out(x, t, wt, reduction, has_ignore, ignore_index, out, log_prob);
    }));

/// The matrix products (MatMul, Gemm, Einsum).
inline constexpr auto linalg_table = make_table(
    fn<"onnx.MatMul">(&MatMul_out),
    // Gemm(a, b, c | none, alpha, beta, trans_a, trans_b, out).
    fn<"onnx.Gemm">([](const tensor& a, const tensor& b, const value& c, double alpha, double beta, std::int64_t trans_a,
                       std::int64_t trans_b, const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor ct, detail::optional_tensor("onnx.Gemm", c, 2));
      return Gemm_out(a, b, ct, alpha, beta, trans_a, trans_b, out);
    }),
    // Einsum(a, b | none, a_labels, b_labels, out_labels, out).
    fn<"onnx.Einsum">([](const tensor& a, const value& b, const shape& la, const shape& lb, const shape& lo, const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor bt, detail::optional_tensor("onnx.Einsum", b, 1));
      return Einsum_out(a, bt, la, lb, lo, out);
    }));

/// Convolution and pooling: an optional bias, MaxPool's optional Indices output.
inline constexpr auto window_table = make_table(
    fn<"onnx.Conv">([](const tensor& x, const tensor& w, const value& b, std::int64_t auto_pad, std::int64_t group, const shape& strides,
                       const shape& pads, const shape& dilations, const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor bias, detail::optional_tensor("onnx.Conv", b, 2));
      return Conv_out(x, w, bias, auto_pad, group, strides, pads, dilations, out);
    }),
    fn<"onnx.ConvTranspose">([](const tensor& x, const tensor& w, const value& b, std::int64_t auto_pad, std::int64_t group,
                                const shape& strides, const shape& pads, const shape& dilations, const shape& output_padding,
                                const shape& output_shape, const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor bias, detail::optional_tensor("onnx.ConvTranspose", b, 2));
      return ConvTranspose_out(x, w, bias, auto_pad, group, strides, pads, dilations, output_padding, output_shape, out);
    }),
    fn<"onnx.MaxPool">([](const tensor& x, std::int64_t auto_pad, std::int64_t ceil_mode, std::int64_t storage_order,
                          const shape& kernel_shape, const shape& strides, const shape& pads, const shape& dilations, const tensor& out,
                          std::span<const value> indices) -> status {
      if (indices.size() > 1) return detail::value_error("onnx.MaxPool: ", 9 + indices.size(), " arguments; it takes 9 or 10");
      tensor idx;
      if (indices.size() == 1) {
        RELAXVM_TRY_ASSIGN(idx, detail::optional_tensor("onnx.MaxPool", indices[0], 9));
      }
      return MaxPool_out(x, auto_pad, ceil_mode, storage_order, kernel_shape, strides, pads, dilations, out, idx);
    }),
    fn<"onnx.AveragePool">(&AveragePool_out),
    fn<"onnx.LpPool">(&LpPool_out),
    fn<"onnx.GlobalAveragePool">(&GlobalAveragePool_out),
    fn<"onnx.GlobalMaxPool">(&GlobalMaxPool_out),
    fn<"onnx.GlobalLpPool">(&GlobalLpPool_out));

/// Data movement (kernels/data.hpp), Resize, NonZero, Compress, Concat, Split, and the shape
/// kernels (onnx.<Op>.shape: output shapes computed from run-time values, kernels/shape.hpp).
inline constexpr auto data_table = make_table(
    fn<"onnx.Transpose">(&Transpose_out),
    fn<"onnx.DepthToSpace">(&DepthToSpace_out),
    fn<"onnx.SpaceToDepth">(&SpaceToDepth_out),
    fn<"onnx.Slice">(&Slice_out),
    fn<"onnx.Expand">(&Expand_out),
    fn<"onnx.Tile">(&Tile_out),
    fn<"onnx.Gather">(&Gather_out),
    fn<"onnx.GatherElements">(&GatherElements_out),
    fn<"onnx.GatherND">(&GatherND_out),
    fn<"onnx.Cast">(&Cast_out),
    fn<"onnx.ScatterElements">(&ScatterElements_out),
    fn<"onnx.ScatterND">(&ScatterND_out),
    fn<"onnx.CumSum">(&CumSum_out),
    fn<"onnx.OneHot">(&OneHot_out),
    fn<"onnx.EyeLike">(&EyeLike_out),
    fn<"onnx.Range">(&Range_out),
    fn<"onnx.ConstantOfShape">(&ConstantOfShape_out),
    fn<"onnx.Size">(&Size_out),
    fn<"onnx.NonZero">(&NonZero_out),
    fn<"onnx.Compress">(&Compress_out),
    // Pad(x, pads, mode, value | none, out); Trilu(x, k | none, upper, out).
    fn<"onnx.Pad">([](const tensor& x, const tensor& pads, std::int64_t mode, const value& v, const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor t, detail::optional_tensor("onnx.Pad", v, 3));
      return Pad_out(x, pads, mode, t, out);
    }),
    fn<"onnx.Trilu">([](const tensor& x, const value& k, std::int64_t upper, const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor t, detail::optional_tensor("onnx.Trilu", k, 1));
      return Trilu_out(x, t, upper, out);
    }),
    // Resize(x, roi | none, scales | none, mode, coordinate_transformation_mode, nearest_mode,
    // cubic_coeff_a, exclude_outside, extrapolation_value, out); its output shape from run-time scales.
    fn<"onnx.Resize">([](const tensor& x, const value& roi, const value& scales, std::int64_t mode, std::int64_t coord,
                         std::int64_t nearest, double cubic_a, std::int64_t exclude_outside, double extrapolation,
                         const tensor& out) -> status {
      RELAXVM_TRY_ASSIGN(tensor r, detail::optional_tensor("onnx.Resize", roi, 1));
      RELAXVM_TRY_ASSIGN(tensor s, detail::optional_tensor("onnx.Resize", scales, 2));
      return Resize_out(x, r, s, mode, coord, nearest, cubic_a, exclude_outside, extrapolation, out);
    }),
    fn<"onnx.Resize.shape">([](const tensor& x, const tensor& scales) -> result<shape> { return detail::resize_shape(x, scales); }),
    fn<"onnx.NonZero.shape">([](const tensor& x) -> result<shape> { return detail::nonzero_shape(x); }),
    fn<"onnx.Compress.shape">(
        [](const tensor& x, const tensor& c, std::int64_t axis) -> result<shape> { return detail::compress_shape(x, c, axis); }),
    // Concat(inputs..., axis, out) and Split(x, axis, outputs...): any number of tensors.
    packed<"onnx.Concat">([](std::span<const value> a) -> status {
      using v = detail::variadic_tensors;
      if (a.size() < 3) return detail::value_error("onnx.Concat: needs inputs, the axis and the output, but got ", a.size(), " arguments");
      RELAXVM_TRY_ASSIGN(std::int64_t axis, a[a.size() - 2].try_as<std::int64_t>());
      RELAXVM_TRY_ASSIGN(tensor out, v::arg("onnx.Concat", a[a.size() - 1], a.size() - 1));
      tensor small[16];
      v::many_tensors many;
      RELAXVM_TRY_ASSIGN(std::span<const tensor> in, v::collect("onnx.Concat", a.first(a.size() - 2), 0, small, many));
      return Concat_out(in, axis, out);
    }),
    packed<"onnx.Split">([](std::span<const value> a) -> status {
      using v = detail::variadic_tensors;
      if (a.size() < 3) return detail::value_error("onnx.Split: needs the input, the axis and outputs, but got ", a.size(), " arguments");
      RELAXVM_TRY_ASSIGN(tensor x, v::arg("onnx.Split", a[0], 0));
      RELAXVM_TRY_ASSIGN(std::int64_t axis, a[1].try_as<std::int64_t>());
      tensor small[16];
      v::many_tensors many;
      RELAXVM_TRY_ASSIGN(std::span<const tensor> outs, v::collect("onnx.Split", a.subspan(2), 2, small, many));
      return Split_out(x, axis, outs);
    }),
    fn<"onnx.Reshape.shape">(&Reshape_shape),
    fn<"onnx.Slice.shape">(&Slice_shape),
    fn<"onnx.Expand.shape">(&Expand_shape),
    fn<"onnx.Reduce.shape">(&Reduce_shape),
    fn<"onnx.Squeeze.shape">(&Squeeze_shape),
    fn<"onnx.Unsqueeze.shape">(&Unsqueeze_shape),
    fn<"onnx.Tile.shape">(&Tile_shape),
    fn<"onnx.Pad.shape">(&Pad_shape),
    fn<"onnx.TopK.shape">(&TopK_shape),
    fn<"onnx.ConstantOfShape.shape">(&ConstantOfShape_shape),
    fn<"onnx.Split.shape">(&Split_shape),
    fn<"onnx.Range.shape">(&Range_shape),
    fn<"onnx.OneHot.shape">(&OneHot_shape));

/// Every portable kernel, in one table.
inline constexpr auto table = make_table(elementwise_table, reduce_table, linalg_table, window_table, data_table);

namespace detail {
// Deliberately not constexpr: reached when entry<Name>() names no kernel, so that the diagnostic
// shows this function's name and the line that asked.
inline void relaxvm_no_such_kernel() {}
}  // namespace detail

/// The table entry of the kernel registered as `Name` ("onnx.Conv"), for a firmware program's
/// table: make_table(kernels::entry<"onnx.Conv">(), builtins::table). A name with no portable
/// kernel does not compile.
template <fixed_string Name>
consteval auto entry() {
  constexpr std::int64_t i = std::remove_cvref_t<decltype(table)>::find(Name.view());
  if constexpr (i < 0) {
    detail::relaxvm_no_such_kernel();
    return table.template get<0>();
  } else {
    return table.template get<static_cast<std::size_t>(i)>();
  }
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_TABLE_HPP
