// SPDX-License-Identifier: Apache-2.0
// The packed matrix product the matrix products (linalg.hpp) and the convolution (conv.hpp, as an
// implicit im2col) share: C (m x n) += alpha * A (m x k) B (k x n). B comes in panels of KC rows by
// NR columns, written by a packer into a stack buffer (zero-padded past the last column), so the
// micro-kernel reads it with unit-stride vector loads whatever B is: a strided or transposed
// matrix, or a convolution's input read through its window (the im2col matrix is never made).
// Each panel feeds every row of A: MR rows at a time into MR x 2 vector accumulators, each
// element of A broadcast into a multiply-add with the panel's two vectors. 6 x 2 accumulators
// fit the 16 vector registers of SSE2 and AVX2 (and leave AVX-512's other 16 free); nothing is
// allocated on the heap. The kernels are in gemm_body.inc, compiled once per instruction set
// (isa.hpp); detail::gemm_acc runs the copy for the CPU.
#ifndef RELAXVM_KERNELS_GEMM_HPP
#define RELAXVM_KERNELS_GEMM_HPP

#include <cstdint>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "isa.hpp"
#include "simd.hpp"

namespace relaxvm::RELAXVM_ABI::kernels::detail {

/// A matrix operand: element (i, j) at p[i * rs + j * cs].
template <class T>
struct mat {
  const T* p;
  std::int64_t rs, cs;
};

}  // namespace relaxvm::RELAXVM_ABI::kernels::detail

#define RELAXVM_KERNEL_TARGET
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_portable {
#include "gemm_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_portable
#undef RELAXVM_KERNEL_TARGET
#if RELAXVM_KERNEL_DISPATCH
#define RELAXVM_KERNEL_TARGET RELAXVM_DETAIL_TARGET_AVX2
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx2 {
#include "gemm_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx2
#undef RELAXVM_KERNEL_TARGET
#define RELAXVM_KERNEL_TARGET RELAXVM_DETAIL_TARGET_AVX512
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx512 {
#include "gemm_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx512
#undef RELAXVM_KERNEL_TARGET
#endif

namespace relaxvm::RELAXVM_ABI::kernels::detail {

/// c (m x n, row stride ldc) += alpha * a (m x k) . b (k x n), with the kernels of the
/// instruction set in use.
template <class T>
void gemm_acc(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, mat<T> a, mat<T> b, T* c, std::int64_t ldc) {
  RELAXVM_DETAIL_ISA_CALL(gemm_acc<T>, (m, n, k, alpha, a, b, c, ldc));
}

}  // namespace relaxvm::RELAXVM_ABI::kernels::detail

#endif  // RELAXVM_KERNELS_GEMM_HPP
