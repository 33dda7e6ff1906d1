// SPDX-License-Identifier: Apache-2.0
// The IR program that bench/lower.cpp lowers at run time and `tools/compile_time.py --program
// lower` lowers at compile time (ir::build_static): one function
//
//   main(x: R.Tensor((n, 16), "float32"))   # n symbolic
//
// of `bindings` bindings (rounded up to a multiple of 10), a chain of units of ten:
//
//   a  = call_dps("ops.relu_out", [h])       R.Tensor((n, 16))
//   b  = call_dps("ops.relu_out", [a])       R.Tensor((n, 16))
//   r  = reshape(b, (n * 16,))               a composite dimension: a shape_arith slot
//   s  = shape_of(r)
//   c  = reshape(r, (n, 16))
//   p  = prim_value(n * 2 + 1)               make_prim_value from the shape heap
//   d  = match_cast(c, R.Tensor((n, 16)))    check_tensor_info + match_shape (assert n)
//   sh = shape((n, 16))                      make_shape
//   e  = reshape(d, sh)                      reshape by a shape variable
//   h  = call_dps("ops.relu_out", [e])
//
// so every pass has work: call_tir_rewrite and lower_alloc_tensor rewrite three call_dps per unit
// (symbolic storage sizes), kill_after_last_use kills the tensors and storages, lower_runtime_builtin
// rewrites three reshapes and a shape_of, and shape_lower emits the match, make_shape and
// make_prim_value calls.
#ifndef RELAXVM_BENCH_LOWER_CHAIN_HPP
#define RELAXVM_BENCH_LOWER_CHAIN_HPP

#include <relaxvm/lower.hpp>

namespace bench {

/// Adds function "main" of about `bindings` bindings to `m` (usable in constexpr).
constexpr void lower_chain(relaxvm::ir::module_builder& m, int bindings) {
  namespace ir = relaxvm::ir;
  const ir::sym n = m.sym("n");
  const relaxvm::dtype f32 = relaxvm::dtype::float32();
  const ir::struct_info t = ir::tensor_info({n, 16}, f32);
  auto f = m.function("main", {{"x", t}});
  ir::var h = f.param(0);
  for (int i = 0; i < bindings; i += 10) {
    const ir::var a = f.call_dps("ops.relu_out", {h}, t);
    const ir::var b = f.call_dps("ops.relu_out", {a}, t);
    const ir::var r = f.reshape(b, {n * 16});
    (void)f.shape_of(r);
    const ir::var c = f.reshape(r, {n, 16});
    (void)f.prim_value(n * 2 + 1);
    const ir::var d = f.match_cast(c, t);
    const ir::var sh = f.shape({n, 16});
    const ir::var e = f.reshape(d, sh);
    h = f.call_dps("ops.relu_out", {e}, t);
  }
  f.ret(h, t);
}

}  // namespace bench

#endif  // RELAXVM_BENCH_LOWER_CHAIN_HPP
