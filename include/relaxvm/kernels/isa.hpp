// SPDX-License-Identifier: Apache-2.0
// Which instruction set the vector kernels (the packed product of gemm.hpp and the convolution of
// conv.hpp) run with. The library is header-only, so the user's flags set the portable width
// (simd.hpp); on x86-64 with GCC or clang, hosted, the same kernels are compiled twice more, for
// AVX2 + FMA and for AVX-512, through per-function target attributes, and the widest the CPU has
// is chosen once, at the first call (a build for baseline x86-64 otherwise runs SSE2 on a CPU with
// four times the width). Firmware mode and other targets keep the portable kernels only, chosen
// at compile time.
//
// RELAXVM_KERNEL_ISA=portable|avx2|avx512 in the environment (read once) or set_kernel_isa()
// caps the choice at run time: the tests run both paths and compare them.
#ifndef RELAXVM_KERNELS_ISA_HPP
#define RELAXVM_KERNELS_ISA_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_HOSTED, RELAXVM_HEAP

/// 1: the AVX2 and AVX-512 copies of the vector kernels are compiled and chosen at run time.
/// Predefine 0 to build the portable kernels only.
#ifndef RELAXVM_KERNEL_DISPATCH
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && RELAXVM_HOSTED && RELAXVM_HEAP && \
    !defined(__AVX512F__)
#define RELAXVM_KERNEL_DISPATCH 1
#else
#define RELAXVM_KERNEL_DISPATCH 0
#endif
#endif

#if RELAXVM_KERNEL_DISPATCH
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
// The attributes the kernels' copies are compiled with (isa_avx2 and isa_avx512).
#define RELAXVM_DETAIL_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define RELAXVM_DETAIL_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f")))
#elif defined(__FMA__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>  // the portable kernels' multiply-adds (simd.hpp's vfma)
#endif

namespace relaxvm::RELAXVM_ABI::kernels {

/// The instruction sets the vector kernels are compiled for; each includes the ones before it.
enum class kernel_isa : int {
  portable = 0,  // the user's flags (SSE2 on baseline x86-64; the only one off x86 and in firmware mode)
  avx2 = 1,      // 32-byte vectors and fused multiply-adds
  avx512 = 2,    // 64-byte vectors
};

/// The ISA's name, as RELAXVM_KERNEL_ISA spells it.
inline constexpr const char* kernel_isa_name(kernel_isa isa) noexcept {
  return isa == kernel_isa::avx512 ? "avx512" : isa == kernel_isa::avx2 ? "avx2" : "portable";
}

/// The widest instruction set this CPU runs that the kernels were compiled for.
inline kernel_isa detected_kernel_isa() noexcept {
#if RELAXVM_KERNEL_DISPATCH
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return kernel_isa::portable;
  return __builtin_cpu_supports("avx512f") ? kernel_isa::avx512 : kernel_isa::avx2;
#else
  return kernel_isa::portable;
#endif
}

namespace detail {

#if RELAXVM_KERNEL_DISPATCH
// The ISA in use; -1 until the first call reads the environment.
inline std::atomic<int>& kernel_isa_slot() noexcept {
  static std::atomic<int> slot{-1};
  return slot;
}

inline kernel_isa capped_isa(kernel_isa want) noexcept {
  const kernel_isa have = detected_kernel_isa();
  return static_cast<int>(want) < static_cast<int>(have) ? want : have;
}

// RELAXVM_KERNEL_ISA's cap (an unknown value caps nothing).
inline kernel_isa environment_isa() noexcept {
  const char* e = std::getenv("RELAXVM_KERNEL_ISA");
  for (kernel_isa isa : {kernel_isa::portable, kernel_isa::avx2})
    if (e != nullptr && std::strcmp(e, kernel_isa_name(isa)) == 0) return isa;
  return kernel_isa::avx512;
}
#endif

}  // namespace detail

/// The instruction set the vector kernels run with now.
inline kernel_isa kernel_isa_in_use() noexcept {
#if RELAXVM_KERNEL_DISPATCH
  int isa = detail::kernel_isa_slot().load(std::memory_order_relaxed);
  if (RELAXVM_UNLIKELY(isa < 0)) {
    // Only the first choice is stored: a set_kernel_isa that came between is not undone.
    int expected = -1;
    const int chosen = static_cast<int>(detail::capped_isa(detail::environment_isa()));
    isa = detail::kernel_isa_slot().compare_exchange_strong(expected, chosen, std::memory_order_relaxed) ? chosen : expected;
  }
  return static_cast<kernel_isa>(isa);
#else
  return kernel_isa::portable;
#endif
}

/// Runs the vector kernels with `want`, or the widest this CPU and build have below it; returns
/// the one chosen. For tests and measurements: calls already running keep theirs.
inline kernel_isa set_kernel_isa(kernel_isa want) noexcept {
#if RELAXVM_KERNEL_DISPATCH
  const kernel_isa isa = detail::capped_isa(want);
  detail::kernel_isa_slot().store(static_cast<int>(isa), std::memory_order_relaxed);
  return isa;
#else
  (void)want;
  return kernel_isa::portable;
#endif
}

}  // namespace relaxvm::RELAXVM_ABI::kernels

/// Calls detail::isa_<ISA>::FN ARGS for the instruction set ISA (a kernel_isa; a statement, FN
/// returns void), or for the one in use (RELAXVM_DETAIL_ISA_CALL).
#if RELAXVM_KERNEL_DISPATCH
#define RELAXVM_DETAIL_ISA_CALL_WITH(ISA, FN, ARGS)                            \
  do {                                                                         \
    switch (ISA) {                                                             \
      case ::relaxvm::kernels::kernel_isa::avx512: isa_avx512::FN ARGS; break; \
      case ::relaxvm::kernels::kernel_isa::avx2: isa_avx2::FN ARGS; break;     \
      default: isa_portable::FN ARGS; break;                                   \
    }                                                                          \
  } while (false)
#else
#define RELAXVM_DETAIL_ISA_CALL_WITH(ISA, FN, ARGS) \
  do {                                              \
    (void)(ISA);                                    \
    isa_portable::FN ARGS;                          \
  } while (false)
#endif
#define RELAXVM_DETAIL_ISA_CALL(FN, ARGS) RELAXVM_DETAIL_ISA_CALL_WITH(::relaxvm::kernels::kernel_isa_in_use(), FN, ARGS)

#endif  // RELAXVM_KERNELS_ISA_HPP
