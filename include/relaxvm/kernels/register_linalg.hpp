// SPDX-License-Identifier: Apache-2.0
// The matrix products (MatMul, Gemm, Einsum): their registration as packed functions (kernels/register.hpp declares it).
#ifndef RELAXVM_KERNELS_REGISTER_LINALG_HPP
#define RELAXVM_KERNELS_REGISTER_LINALG_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "register.hpp"
#include "linalg.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_linalg(basic_registry& reg) {
  reg.def("onnx.MatMul", &MatMul_out);
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
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_LINALG_HPP
