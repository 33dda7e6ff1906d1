// SPDX-License-Identifier: Apache-2.0
// The vectors the convolution and the matrix products keep their accumulators in: GCC's and
// clang's vector extension (plain element-wise code on targets without SIMD), else arrays with
// the same operators. The portable kernels' vectors are sized by RELAXVM_KERNEL_VECTOR_BYTES: 64
// with AVX-512, 32 with AVX, else 16 (what the user's flags allow); where isa.hpp dispatches, the
// same operations are defined again, in isa_avx2 (32 bytes) and isa_avx512 (64 bytes), for the
// kernels' copies compiled for those instruction sets (simd_body.inc, once per namespace).
#ifndef RELAXVM_KERNELS_SIMD_HPP
#define RELAXVM_KERNELS_SIMD_HPP

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "isa.hpp"

/// The bytes of the vector registers the portable kernels' register tiles are sized for.
#ifndef RELAXVM_KERNEL_VECTOR_BYTES
#if defined(__AVX512F__)
#define RELAXVM_KERNEL_VECTOR_BYTES 64
#elif defined(__AVX__)
#define RELAXVM_KERNEL_VECTOR_BYTES 32
#else
#define RELAXVM_KERNEL_VECTOR_BYTES 16
#endif
#endif

// RELAXVM_DETAIL_X86_FMA: 1 where simd_body.inc's vfma may use the x86 fused multiply-add
// intrinsics; RELAXVM_DETAIL_PORTABLE_FMA: 1 where the user's flags allow them everywhere.
#if defined(__FMA__) && (defined(__x86_64__) || defined(__i386__))
#define RELAXVM_DETAIL_PORTABLE_FMA 1
#else
#define RELAXVM_DETAIL_PORTABLE_FMA 0
#endif
#if RELAXVM_KERNEL_DISPATCH || RELAXVM_DETAIL_PORTABLE_FMA
#define RELAXVM_DETAIL_X86_FMA 1
#else
#define RELAXVM_DETAIL_X86_FMA 0
#endif

// Each copy: its vector width, whether it has fused multiply-adds, the target attribute of its
// functions (RELAXVM_KERNEL_TARGET, defined around each inclusion of a body).
#define RELAXVM_KERNEL_TARGET
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_portable {
inline constexpr int vector_bytes = RELAXVM_KERNEL_VECTOR_BYTES;
inline constexpr bool use_fma = RELAXVM_DETAIL_PORTABLE_FMA;
#include "simd_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_portable
#undef RELAXVM_KERNEL_TARGET
#if RELAXVM_KERNEL_DISPATCH
#define RELAXVM_KERNEL_TARGET RELAXVM_DETAIL_TARGET_AVX2
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx2 {
inline constexpr int vector_bytes = 32;
inline constexpr bool use_fma = true;
#include "simd_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx2
#undef RELAXVM_KERNEL_TARGET
#define RELAXVM_KERNEL_TARGET RELAXVM_DETAIL_TARGET_AVX512
namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx512 {
inline constexpr int vector_bytes = 64;
inline constexpr bool use_fma = true;
#include "simd_body.inc"
}  // namespace relaxvm::RELAXVM_ABI::kernels::detail::isa_avx512
#undef RELAXVM_KERNEL_TARGET
#endif

#endif  // RELAXVM_KERNELS_SIMD_HPP
