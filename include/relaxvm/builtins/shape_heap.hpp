// SPDX-License-Identifier: Apache-2.0
// The shape machinery: the shape heap (an int64 host tensor whose slots hold symbolic dimensions),
// matching and making shapes against it, the struct-info checks, and shape arithmetic, one header
// each in shape_heap/ (heap.hpp, match.hpp, struct_info.hpp, arith.hpp), each with its builtins'
// prepared and specialized call sites; here, their table.
//
//   vm.builtin.alloc_shape_heap([ctx,] size) -> heap
//   vm.builtin.shape_of(tensor) -> shape
//   vm.builtin.store_shape(shape, heap, idx_0, ..., idx_{n-1})        heap[idx_i] = shape[i]
//   vm.builtin.load_shape(heap, idx_0, ..., idx_{n-1}) -> shape
//   vm.builtin.match_shape(tensor|shape, heap|null, n, code_0, v_0, ..., [err_ctx])
//   vm.builtin.make_shape(heap|null, n, code_0, v_0, ...) -> shape
//   vm.builtin.match_prim_value(int, heap|null, code, v, [err_ctx])
//   vm.builtin.make_prim_value(heap|null, code, v) -> int
//   vm.builtin.check_tensor_info(x, ndim, [dtype,] err_ctx)   check_shape_info(x, ndim, err_ctx)
//   vm.builtin.check_tuple_info(x, size, err_ctx)   check_func_info(x, err_ctx)
//   vm.builtin.check_prim_value_info(x, dtype, err_ctx)
//   vm.builtin.shape_arith(heap, op, dst, code_a, a, code_b, b, ...)   see below
//   vm.builtin.tensor_to_shape(tensor) -> shape     vm.builtin.shape_to_tensor(shape) -> tensor
//
// Codes, as in the reference: match_code {assert_equal_to_imm = 0, store_to_heap = 1, no_op = 2,
// assert_equal_to_load = 3}; make_code {use_imm = 0, load_shape = 1}. err_ctx is a string (the
// reference's "ErrorContext(...) ") or null, and starts every message.
//
// shape_arith computes symbolic dimensions with bytecode alone (the reference generates TIR for
// this). After the heap come groups of six integers, each one operation:
//   op, dst, code_a, a, code_b, b      heap[dst] = A op B
// where A is a (code_a = use_imm) or heap[a] (code_a = load_shape), B likewise, and op is
// add = 0, sub = 1, mul = 2, floordiv = 3, floormod = 4, min = 5, max = 6 (floordiv and floormod
// round toward negative infinity, like Python), and for symbolic conditions eq = 7, ne = 8, lt = 9,
// le = 10, gt = 11, ge = 12, and = 13, or = 14, which give 0 or 1 (and/or read non-zero as true).
// Groups run in order, so one call can compute n * 32 * 4 in two steps. Overflow and division by
// zero are runtime errors. The codes are in codes.hpp.
#ifndef RELAXVM_BUILTINS_SHAPE_HEAP_HPP
#define RELAXVM_BUILTINS_SHAPE_HEAP_HPP

#include "../base/config.hpp"  // RELAXVM_ABI
#include "shape_heap/arith.hpp"
#include "shape_heap/heap.hpp"
#include "shape_heap/match.hpp"
#include "shape_heap/struct_info.hpp"

namespace relaxvm::RELAXVM_ABI::builtins {

inline constexpr auto shape_table = make_table(
    packed<"vm.builtin.alloc_shape_heap", makes<object_rule::shape_heap>>(&alloc_shape_heap, detail::prepare_alloc_shape_heap),
    fn<"vm.builtin.shape_of", makes<object_rule::none>>(&shape_of), fn<"vm.builtin.store_shape">(&store_shape),
    fn<"vm.builtin.load_shape", makes<object_rule::shape_of_indices>>(&load_shape), packed<"vm.builtin.match_shape", detail::match_shape_site>(&match_shape, detail::prepare_match_shape),
    packed<"vm.builtin.make_shape", detail::make_shape_site>(&make_shape, detail::prepare_make_shape),
    packed<"vm.builtin.match_prim_value", makes<object_rule::none>>(&match_prim_value), fn<"vm.builtin.make_prim_value">(&make_prim_value),
    packed<"vm.builtin.check_tensor_info", detail::check_tensor_info_site>(&check_tensor_info,
                                                                           detail::prepare_check_tensor_info),
    fn<"vm.builtin.check_shape_info">(&check_shape_info),
    fn<"vm.builtin.check_tuple_info">(&check_tuple_info), fn<"vm.builtin.check_func_info">(&check_func_info),
    fn<"vm.builtin.check_prim_value_info">(&check_prim_value_info), fn<"vm.builtin.check_upper_bound">(&check_upper_bound),
    packed<"vm.builtin.shape_arith", detail::shape_arith_site>(&shape_arith, detail::prepare_shape_arith),
    fn<"vm.builtin.tensor_to_shape">(&tensor_to_shape), fn<"vm.builtin.shape_to_tensor">(&shape_to_tensor));
}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_SHAPE_HEAP_HPP
