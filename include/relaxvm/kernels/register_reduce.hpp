// SPDX-License-Identifier: Apache-2.0
// The reductions, the softmax family, TopK, the normalizations and the losses: their registration as packed functions (kernels/register.hpp declares it).
#ifndef RELAXVM_KERNELS_REGISTER_REDUCE_HPP
#define RELAXVM_KERNELS_REGISTER_REDUCE_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "register.hpp"
#include "reduce.hpp"
#include "normalization.hpp"
#include "loss.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_reduce(basic_registry& reg) {
  // Reductions, softmax family, TopK, normalizations, matrix products.
  reg.def("onnx.ReduceSum", &ReduceSum_out).def("onnx.ReduceMean", &ReduceMean_out).def("onnx.ReduceMax", &ReduceMax_out);
  reg.def("onnx.ReduceMin", &ReduceMin_out).def("onnx.ReduceProd", &ReduceProd_out).def("onnx.ReduceL1", &ReduceL1_out);
  reg.def("onnx.ReduceL2", &ReduceL2_out).def("onnx.ReduceLogSum", &ReduceLogSum_out).def("onnx.ReduceLogSumExp", &ReduceLogSumExp_out);
  reg.def("onnx.ReduceSumSquare", &ReduceSumSquare_out).def("onnx.ArgMax", &ArgMax_out).def("onnx.ArgMin", &ArgMin_out);
  reg.def("onnx.Softmax", &Softmax_out).def("onnx.LogSoftmax", &LogSoftmax_out).def("onnx.Hardmax", &Hardmax_out);
  reg.def("onnx.TopK", &TopK_out).def("onnx.BatchNormalization", &BatchNormalization_out);
  reg.def("onnx.InstanceNormalization", &InstanceNormalization_out).def("onnx.LRN", &LRN_out);
  reg.def("onnx.MeanVarianceNormalization", &MeanVarianceNormalization_out);
  // LayerNormalization(x, scale, bias | none, axis, epsilon, y, mean, inv_std_dev).
  reg.def("onnx.LayerNormalization", [](const tensor& x, const tensor& scale, const value& bias, std::int64_t axis, double epsilon,
                                        const tensor& y, const tensor& mean, const tensor& inv_std_dev) -> status {
    RELAXVM_TRY_ASSIGN(tensor b, detail::optional_tensor("onnx.LayerNormalization", bias, 2));
    return LayerNormalization_out(x, scale, b, axis, epsilon, y, mean, inv_std_dev);
  });
  // Losses: (x, target, weight | none, reduction, has_ignore, ignore_index, out[, log_prob]).
  reg.def("onnx.NegativeLogLikelihoodLoss", [](const tensor& x, const tensor& t, const value& w, std::int64_t reduction,
                                              std::int64_t has_ignore, std::int64_t ignore_index, const tensor& out) -> status {
    RELAXVM_TRY_ASSIGN(tensor wt, detail::optional_tensor("onnx.NegativeLogLikelihoodLoss", w, 2));
    return NegativeLogLikelihoodLoss_out(x, t, wt, reduction, has_ignore, ignore_index, out);
  });
  reg.def("onnx.SoftmaxCrossEntropyLoss", [](const tensor& x, const tensor& t, const value& w, std::int64_t reduction,
                                            std::int64_t has_ignore, std::int64_t ignore_index, const tensor& out,
                                            const tensor& log_prob) -> status {
    RELAXVM_TRY_ASSIGN(tensor wt, detail::optional_tensor("onnx.SoftmaxCrossEntropyLoss", w, 2));
    return SoftmaxCrossEntropyLoss_out(x, t, wt, reduction, has_ignore, ignore_index, out, log_prob);
  });
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_REDUCE_HPP
