// SPDX-License-Identifier: Apache-2.0
// The elementwise kernels (maps, broadcasting binary ops, comparisons, logic, Where, Clip): their registration as packed functions (kernels/register.hpp declares it).
#ifndef RELAXVM_KERNELS_REGISTER_ELEMENTWISE_HPP
#define RELAXVM_KERNELS_REGISTER_ELEMENTWISE_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "register.hpp"
#include "elementwise.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_elementwise(basic_registry& reg) {
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
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_ELEMENTWISE_HPP
