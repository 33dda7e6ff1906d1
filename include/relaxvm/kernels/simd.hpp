// SPDX-License-Identifier: Apache-2.0
// The vectors the convolution and the matrix products keep their accumulators in: GCC's and
// clang's vector extension (plain element-wise code on targets without SIMD), else arrays with
// the same operators. They are sized by RELAXVM_KERNEL_VECTOR_BYTES: 64 with AVX-512, 32 with
// AVX, else 16 (what the user's flags allow: the library is header-only, so -march decides).
#ifndef RELAXVM_KERNELS_SIMD_HPP
#define RELAXVM_KERNELS_SIMD_HPP

#include <cstddef>
#include <cstring>

#include "../base/config.hpp"  // RELAXVM_ABI

/// The bytes of the vector registers the kernels' register tiles are sized for.
#ifndef RELAXVM_KERNEL_VECTOR_BYTES
#if defined(__AVX512F__)
#define RELAXVM_KERNEL_VECTOR_BYTES 64
#elif defined(__AVX__)
#define RELAXVM_KERNEL_VECTOR_BYTES 32
#else
#define RELAXVM_KERNEL_VECTOR_BYTES 16
#endif
#endif

namespace relaxvm::RELAXVM_ABI::kernels::detail {

inline constexpr int vector_bytes = RELAXVM_KERNEL_VECTOR_BYTES;
#if defined(__GNUC__)
template <class T>
struct vec_of {
  typedef T type __attribute__((vector_size(vector_bytes)));
};
template <class T>
using vec = typename vec_of<T>::type;
template <class T>
inline vec<T> vsplat(T s) {
  return vec<T>{} + s;
}
#else
template <class T>
struct vec {
  T v[vector_bytes / sizeof(T)];
  T& operator[](int i) { return v[i]; }
  friend vec operator+(vec a, const vec& b) {
    for (std::size_t i = 0; i < sizeof(v) / sizeof(T); ++i) a.v[i] += b.v[i];
    return a;
  }
  friend vec operator*(vec a, T s) {
    for (std::size_t i = 0; i < sizeof(v) / sizeof(T); ++i) a.v[i] *= s;
    return a;
  }
};
template <class T>
inline vec<T> vsplat(T s) {
  vec<T> r;
  for (std::size_t i = 0; i < sizeof(r) / sizeof(T); ++i) r.v[i] = s;
  return r;
}
#endif
template <class T>
inline constexpr int lanes = vector_bytes / static_cast<int>(sizeof(T));
template <class T>
inline vec<T> vload(const T* p) {
  vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void vstore(T* p, const vec<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace relaxvm::RELAXVM_ABI::kernels::detail

#endif  // RELAXVM_KERNELS_SIMD_HPP
