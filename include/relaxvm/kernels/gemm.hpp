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
// (isa.hpp); detail::gemm_acc runs the copy for the CPU, on blocks of C for the kernels' threads
// where they are on (threads.hpp).
#ifndef RELAXVM_KERNELS_GEMM_HPP
#define RELAXVM_KERNELS_GEMM_HPP

#include <cstdint>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "isa.hpp"
#include "simd.hpp"
#include "threads.hpp"

namespace relaxvm::RELAXVM_ABI::kernels::detail {

/// A matrix operand: element (i, j) at p[i * rs + j * cs].
template <class T>
struct mat {
  const T* p;
  std::int64_t rs, cs;
};

/// A block of an output matrix: rows [r0, r1), columns [c0, c1).
struct out_block {
  std::int64_t r0, r1, c0, c1;
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

/// How a block of `rows` x `cols` is cut for `width` threads: along the rows or the columns, in
/// runs of whole units (row_unit rows, col_unit columns), whichever leaves the slowest thread the
/// least (columns on a tie: the parts then share no packing). A part's block is block(i).
struct block_split {
  out_block whole;
  std::int64_t row_unit, col_unit, parts;
  bool by_rows;

  static block_split make(out_block whole, std::int64_t row_unit, std::int64_t col_unit, int width) {
    const std::int64_t rows = whole.r1 - whole.r0, cols = whole.c1 - whole.c0;
    const std::int64_t ru = (rows + row_unit - 1) / row_unit, cu = (cols + col_unit - 1) / col_unit;
    // The slowest thread's share (in elements) with each cut.
    const std::int64_t w = width;
    const std::int64_t by_row = ((ru + w - 1) / w) * row_unit * cols, by_col = ((cu + w - 1) / w) * col_unit * rows;
    block_split s{whole, row_unit, col_unit, 1, by_row < by_col};
    // Column parts share nothing, so more of them than threads balance a late worker; row parts
    // each pack all of B's panels, so there are as many as threads.
    const std::int64_t units = s.by_rows ? ru : cu, most = s.by_rows ? w : 4 * w;
    s.parts = units < most ? units : most;
    if (s.parts < 1) s.parts = 1;
    return s;
  }

  out_block block(std::int64_t i) const {
    std::int64_t u0 = 0, u1 = 0;
    out_block b = whole;
    if (by_rows) {
      part_range((whole.r1 - whole.r0 + row_unit - 1) / row_unit, parts, i, u0, u1);
      b.r0 = whole.r0 + u0 * row_unit;
      b.r1 = whole.r0 + u1 * row_unit < whole.r1 ? whole.r0 + u1 * row_unit : whole.r1;
    } else {
      part_range((whole.c1 - whole.c0 + col_unit - 1) / col_unit, parts, i, u0, u1);
      b.c0 = whole.c0 + u0 * col_unit;
      b.c1 = whole.c0 + u1 * col_unit < whole.c1 ? whole.c0 + u1 * col_unit : whole.c1;
    }
    return b;
  }
};

/// c (m x n, row stride ldc) += alpha * a (m x k) . b (k x n) on the calling thread, with the
/// kernels of the instruction set in use.
template <class T>
void gemm_acc_alone(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, mat<T> a, mat<T> b, T* c, std::int64_t ldc) {
  RELAXVM_DETAIL_ISA_CALL(gemm_acc<T>, (m, k, alpha, a, b, c, ldc, out_block{0, m, 0, n}));
}

/// The same, cut into blocks of C for the kernels' threads where the product is large enough
/// (kernels/threads.hpp): each element is summed as on one thread.
template <class T>
void gemm_acc(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, mat<T> a, mat<T> b, T* c, std::int64_t ldc) {
  const int width = kernel_width(static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
  if (width <= 1) return gemm_acc_alone(m, n, k, alpha, a, b, c, ldc);
  const kernel_isa isa = kernel_isa_in_use();  // one copy for every part
  std::int64_t ru = 1, cu = 1;
  RELAXVM_DETAIL_ISA_CALL_WITH(isa, gemm_units<T>, (m, a, b, ru, cu));
  const block_split split = block_split::make(out_block{0, m, 0, n}, ru, cu, width);
  auto part = [&](std::int64_t i) { RELAXVM_DETAIL_ISA_CALL_WITH(isa, gemm_acc<T>, (m, k, alpha, a, b, c, ldc, split.block(i))); };
  run_parts(split.parts, part);
}

}  // namespace relaxvm::RELAXVM_ABI::kernels::detail

#endif  // RELAXVM_KERNELS_GEMM_HPP
