// SPDX-License-Identifier: Apache-2.0
// The packed matrix product the matrix products (linalg.hpp) and the convolution (conv.hpp, as an
// implicit im2col) share: C (m x n) += alpha * A (m x k) B (k x n). B comes in panels of KC rows by
// NR columns, written by a packer into a stack buffer (zero-padded past the last column), so the
// micro-kernel reads it with unit-stride vector loads whatever B is: a strided or transposed
// matrix, or a convolution's input read through its window (the im2col matrix is never made).
// Each panel feeds every row of A: MR rows at a time into MR x 2 vector accumulators, each
// element of A broadcast into a multiply-add with the panel's two vectors. 6 x 2 accumulators
// fit the 16 vector registers of SSE2 and AVX2 (and leave AVX-512's other 16 free); nothing is
// allocated on the heap.
#ifndef RELAXVM_KERNELS_GEMM_HPP
#define RELAXVM_KERNELS_GEMM_HPP

#include <cstdint>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "simd.hpp"

namespace relaxvm::RELAXVM_ABI::kernels::detail {

/// A matrix operand: element (i, j) at p[i * rs + j * cs].
template <class T>
struct mat {
  const T* p;
  std::int64_t rs, cs;
};

/// The packed product's blocking: rows of A per micro-kernel call, vectors of B per panel row,
/// and rows of B per panel (a panel is KC x NR; 32 KiB of float32 with AVX-512, 8 KiB with SSE2).
inline constexpr int panel_mr = 6;
inline constexpr int panel_nv = 2;
inline constexpr int panel_kc = 256;
template <class T>
inline constexpr int panel_nr = lanes<T> * panel_nv;

// C's MR x nr block += alpha * A's MR rows (a(i, p) = a.p[i * a.rs + p * a.cs]) times the panel
// (kc rows of NV vectors, row stride ldb).
template <class T, int MR, int NV = panel_nv>
inline void panel_kernel(std::int64_t kc, mat<T> a, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, int nr, T alpha) {
  constexpr int L = lanes<T>;
  vec<T> acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int u = 0; u < NV; ++u) acc[i][u] = vsplat<T>(T(0));
  const T* ar[MR];
  for (int i = 0; i < MR; ++i) ar[i] = a.p + i * a.rs;
  for (std::int64_t p = 0; p < kc; ++p) {
    vec<T> bv[NV];
    for (int u = 0; u < NV; ++u) bv[u] = vload(b + p * ldb + u * L);
    for (int i = 0; i < MR; ++i) {
      const T av = ar[i][p * a.cs];
      for (int u = 0; u < NV; ++u) acc[i][u] = acc[i][u] + bv[u] * av;
    }
  }
  for (int i = 0; i < MR; ++i) {
    T* ci = c + i * ldc;
    if (nr == L * NV) {
      for (int u = 0; u < NV; ++u) vstore(ci + u * L, vload(ci + u * L) + acc[i][u] * alpha);
    } else {
      for (int j = 0; j < nr; ++j) ci[j] += alpha * acc[i][j / L][j % L];
    }
  }
}

template <class T, int R = 1>
void panel_rows(int mr, std::int64_t kc, mat<T> a, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, int nr, T alpha) {
  if constexpr (R < panel_mr) {
    if (mr != R) return panel_rows<T, R + 1>(mr, kc, a, b, ldb, c, ldc, nr, alpha);
  }
  panel_kernel<T, R>(kc, a, b, ldb, c, ldc, nr, alpha);
}

/// C (m x n, row stride ldc) += alpha * A (m x k) B (k x n), B given by pack(p0, kc, j0, nr, panel):
/// rows p0 .. p0 + kc and columns j0 .. j0 + nr of B into panel[r * NR + j], zeros for j >= nr
/// (or, returning a pointer and a row stride, B's own rows where they need no copy: `direct`).
/// K is blocked outermost, so a block of A's columns stays in the cache while every panel of B
/// passes.
template <class T, class Pack>
void panel_product(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, mat<T> a, Pack&& pack, T* c, std::int64_t ldc) {
  constexpr int NR = panel_nr<T>, KC = panel_kc, MR = panel_mr;
  alignas(64) T panel[KC * NR];
  for (std::int64_t p0 = 0; p0 < k; p0 += KC) {
    const std::int64_t kc = k - p0 < KC ? k - p0 : KC;
    for (std::int64_t j0 = 0; j0 < n; j0 += NR) {
      const int nr = static_cast<int>(n - j0 < NR ? n - j0 : NR);
      std::int64_t ldb = NR;
      const T* b = pack(p0, kc, j0, nr, panel, ldb);
      std::int64_t i0 = 0;
      for (; i0 + MR <= m; i0 += MR)
        panel_kernel<T, MR>(kc, mat<T>{a.p + i0 * a.rs + p0 * a.cs, a.rs, a.cs}, b, ldb, c + i0 * ldc + j0, ldc, nr, alpha);
      if (i0 < m)
        panel_rows<T>(static_cast<int>(m - i0), kc, mat<T>{a.p + i0 * a.rs + p0 * a.cs, a.rs, a.cs}, b, ldb, c + i0 * ldc + j0, ldc,
                      nr, alpha);
    }
  }
}

/// One or two rows of A against a B with unit-stride rows (a batch-1 MatMul), read in place: each
/// strip of 8 vectors of a row of C summed in registers over all of K, so the few rows of A need
/// no panel of B (each element of B is used once or twice).
template <class T>
void gemm_few_rows(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, mat<T> a, mat<T> b, T* c, std::int64_t ldc) {
  constexpr int L = lanes<T>, NV = 8;
  for (std::int64_t i = 0; i < m; ++i) {
    const mat<T> ai{a.p + i * a.rs, a.rs, a.cs};
    T* ci = c + i * ldc;
    std::int64_t j = 0;
    for (; j + L * NV <= n; j += L * NV) panel_kernel<T, 1, NV>(k, ai, b.p + j, b.rs, ci + j, ldc, L * NV, alpha);
    for (; j + L <= n; j += L) panel_kernel<T, 1, 1>(k, ai, b.p + j, b.rs, ci + j, ldc, L, alpha);
    for (; j < n; ++j) {
      T sum = T(0);
      for (std::int64_t p = 0; p < k; ++p) sum += ai.p[p * ai.cs] * b.p[p * b.rs + j];
      ci[j] += alpha * sum;
    }
  }
}

/// A packer for a plain matrix B: a full-width panel of a B with unit-stride rows is read in
/// place when A has few rows (a copy would be used only once or twice), else copied.
template <class T>
struct matrix_packer {
  mat<T> b;
  bool in_place;
  const T* operator()(std::int64_t p0, std::int64_t kc, std::int64_t j0, int nr, T* panel, std::int64_t& ldb) const {
    constexpr int NR = panel_nr<T>;
    const T* src = b.p + p0 * b.rs + j0 * b.cs;
    if (b.cs == 1 && nr == NR && in_place) {
      ldb = b.rs;
      return src;
    }
    if (b.rs == 1) {  // a transposed B: read each column along its unit stride
      for (int j = 0; j < nr; ++j) {
        const T* col = src + j * b.cs;
        for (std::int64_t p = 0; p < kc; ++p) panel[p * NR + j] = col[p];
      }
      for (std::int64_t p = 0; p < kc; ++p)
        for (int j = nr; j < NR; ++j) panel[p * NR + j] = T(0);
    } else {
      for (std::int64_t p = 0; p < kc; ++p) {
        T* dst = panel + p * NR;
        const T* row = src + p * b.rs;
        for (int j = 0; j < nr; ++j) dst[j] = row[j * b.cs];
        for (int j = nr; j < NR; ++j) dst[j] = T(0);
      }
    }
    ldb = NR;
    return panel;
  }
};

}  // namespace relaxvm::RELAXVM_ABI::kernels::detail

#endif  // RELAXVM_KERNELS_GEMM_HPP
