// SPDX-License-Identifier: Apache-2.0
// The integer encodings of the shape builtins (builtins/shape_heap.hpp), on their own so that code which
// emits bytecode (the lowering layer, hand-written programs) needs no runtime headers.
//
//   match_code, the reference's MatchShapeCode: what match_shape / match_prim_value do per value
//   make_code,  the reference's MakeShapeCode: where make_shape / make_prim_value / shape_arith read
//   arith_op,   the operations of vm.builtin.shape_arith (relaxvm's; the reference generates TIR)
#ifndef RELAXVM_BUILTINS_CODES_HPP
#define RELAXVM_BUILTINS_CODES_HPP

#include <cstdint>

#include "../base/config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI::builtins {

enum class match_code : std::int64_t { assert_equal_to_imm = 0, store_to_heap = 1, no_op = 2, assert_equal_to_load = 3 };
enum class make_code : std::int64_t { use_imm = 0, load_shape = 1 };

/// heap[dst] = A op B. Comparisons and logic give 0 or 1 (for symbolic conditions); `and_`/`or_`
/// treat any non-zero operand as true. Logical not is `eq(x, 0)`.
enum class arith_op : std::int64_t {
  add = 0, sub = 1, mul = 2, floordiv = 3, floormod = 4, min = 5, max = 6,
  eq = 7, ne = 8, lt = 9, le = 10, gt = 11, ge = 12, and_ = 13, or_ = 14,
};
inline constexpr std::int64_t arith_op_count = 15;

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_CODES_HPP
