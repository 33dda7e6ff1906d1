// SPDX-License-Identifier: Apache-2.0
// A 3-layer MLP (16 -> 32 -> 32 -> 10, relu between) whose batch size n is symbolic, written with
// the builder the way Relax's lowering emits it (docs/lowering.md):
// check and match the input's shape, put n on the shape heap, compute the buffer sizes there,
// allocate storage and tensors, call the kernels in destination-passing form, kill dead storage,
// and check the returned shape. Shared by examples/mlp.cpp, tests/unit/mlp.cpp and bench/mlp.cpp.
#ifndef RELAXVM_EXAMPLES_MLP_PROGRAM_HPP
#define RELAXVM_EXAMPLES_MLP_PROGRAM_HPP

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include <cstdint>
#include <relaxvm.hpp>
#include <relaxvm/ops/ops.hpp>
#include <vector>

namespace mlp {

namespace rv = relaxvm;

inline constexpr std::int64_t in_features = 16, hidden = 32, out_features = 10;

struct weights {
  rv::tensor w1, b1, w2, b2, w3, b3;
};

/// Deterministic values in [-0.5, 0.5), from a linear congruential generator.
inline rv::tensor pseudo_random(rv::shape s, std::uint32_t seed) {
  std::int64_t n = 0;
  (void)s.numel(n);
  std::vector<float> v(static_cast<std::size_t>(n));
  std::uint32_t x = seed;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return rv::tensor::from<float>(v, s);
}

inline weights make_weights() {
  return {pseudo_random({hidden, in_features}, 1), pseudo_random({hidden}, 2),
          pseudo_random({hidden, hidden}, 3),      pseudo_random({hidden}, 4),
          pseudo_random({out_features, hidden}, 5), pseudo_random({out_features}, 6)};
}

inline rv::tensor make_input(std::int64_t n) { return pseudo_random({n, in_features}, 7 + static_cast<std::uint32_t>(n)); }

/// main(x: Tensor[(n, 16), float32]) -> Tensor[(n, 10), float32]
inline rv::executable build(const weights& w) {
  using rv::builtins::make_code;
  using rv::builtins::match_code;
  constexpr auto imm = [](auto code) { return static_cast<std::int64_t>(code); };
  rv::exec_builder b;
  // Shape-heap slots: n, the bytes of an (n, 32) float32 tensor, the bytes of an (n, 10) one.
  enum : std::int64_t { slot_n, slot_hidden_bytes, slot_out_bytes, heap_size };
  // Registers (formalize renumbers them).
  enum : std::int64_t { x, heap, hidden_bytes, hidden_shape, st1, h1, st2, h2, out_bytes, out_shape, st3, out };
  const auto ctx_param = b.c(b.add_string(
      "ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 16), dtype=\"float32\")) "));
  const auto ctx_return =
      b.c(b.add_string("ErrorContext(fn=main, loc=return, annotation=R.Tensor((n, 10), dtype=\"float32\")) "));
  const auto f32 = b.c(b.add_dtype(rv::dtype::float32()));
  const auto u8 = b.c(b.add_dtype(rv::dtype::uint8()));
  const auto global = b.c(b.add_string("global"));
  const auto w1 = b.c(b.add_constant(w.w1)), b1 = b.c(b.add_constant(w.b1));
  const auto w2 = b.c(b.add_constant(w.w2)), b2 = b.c(b.add_constant(w.b2));
  const auto w3 = b.c(b.add_constant(w.w3)), b3 = b.c(b.add_constant(w.b3));

  auto fn = b.function("main", 1, {"x"});
  b.emit_call("vm.builtin.alloc_shape_heap", {b.vm_state(), b.imm(heap_size)}, b.r(heap));
  b.emit_call("vm.builtin.check_tensor_info", {b.r(x), b.imm(2), f32, ctx_param});
  b.emit_call("vm.builtin.match_shape", {b.r(x), b.r(heap), b.imm(2), b.imm(imm(match_code::store_to_heap)),
                                         b.imm(slot_n), b.imm(imm(match_code::assert_equal_to_imm)),
                                         b.imm(in_features), ctx_param});
  // heap[1] = n * 32 * 4 and heap[2] = n * 10 * 4: what the reference computes with a TIR shape function.
  b.emit_call("vm.builtin.shape_arith",
              {b.r(heap), b.imm(imm(rv::builtins::arith_op::mul)), b.imm(slot_hidden_bytes), b.imm(imm(make_code::load_shape)),
               b.imm(slot_n), b.imm(imm(make_code::use_imm)), b.imm(hidden * 4),
               b.imm(imm(rv::builtins::arith_op::mul)), b.imm(slot_out_bytes), b.imm(imm(make_code::load_shape)),
               b.imm(slot_n), b.imm(imm(make_code::use_imm)), b.imm(out_features * 4)});
  b.emit_call("vm.builtin.make_shape",
              {b.r(heap), b.imm(1), b.imm(imm(make_code::load_shape)), b.imm(slot_hidden_bytes)}, b.r(hidden_bytes));
  b.emit_call("vm.builtin.make_shape",
              {b.r(heap), b.imm(2), b.imm(imm(make_code::load_shape)), b.imm(slot_n), b.imm(imm(make_code::use_imm)),
               b.imm(hidden)},
              b.r(hidden_shape));
  // Layer 1: h1 = relu(x . w1^T + b1)
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.r(hidden_bytes), b.imm(0), u8, global}, b.r(st1));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(st1), b.imm(0), b.r(hidden_shape), f32}, b.r(h1));
  b.emit_call("ops.dense_out", {b.r(x), w1, b1, b.r(h1)});
  b.emit_call("ops.relu_out", {b.r(h1), b.r(h1)});
  // Layer 2: h2 = relu(h1 . w2^T + b2); then h1 and its storage are dead.
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.r(hidden_bytes), b.imm(0), u8, global}, b.r(st2));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(st2), b.imm(0), b.r(hidden_shape), f32}, b.r(h2));
  b.emit_call("ops.dense_out", {b.r(h1), w2, b2, b.r(h2)});
  b.emit_call("ops.relu_out", {b.r(h2), b.r(h2)});
  b.emit_call("vm.builtin.kill_object", {b.r(h1)}, b.r(h1));
  b.emit_call("vm.builtin.kill_object", {b.r(st1)}, b.r(st1));
  // Layer 3: out = h2 . w3^T + b3
  b.emit_call("vm.builtin.make_shape",
              {b.r(heap), b.imm(1), b.imm(imm(make_code::load_shape)), b.imm(slot_out_bytes)}, b.r(out_bytes));
  b.emit_call("vm.builtin.make_shape",
              {b.r(heap), b.imm(2), b.imm(imm(make_code::load_shape)), b.imm(slot_n), b.imm(imm(make_code::use_imm)),
               b.imm(out_features)},
              b.r(out_shape));
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.r(out_bytes), b.imm(0), u8, global}, b.r(st3));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(st3), b.imm(0), b.r(out_shape), f32}, b.r(out));
  b.emit_call("ops.dense_out", {b.r(h2), w3, b3, b.r(out)});
  b.emit_call("vm.builtin.kill_object", {b.r(h2)}, b.r(h2));
  b.emit_call("vm.builtin.kill_object", {b.r(st2)}, b.r(st2));
  // The return value's annotation, checked as the reference does.
  b.emit_call("vm.builtin.match_shape", {b.r(out), b.r(heap), b.imm(2), b.imm(imm(match_code::assert_equal_to_load)),
                                         b.imm(slot_n), b.imm(imm(match_code::assert_equal_to_imm)),
                                         b.imm(out_features), ctx_return});
  b.emit_ret(b.r(out));
  fn.end();
  return b.get();
}

/// The same network computed directly with xtensor (no relaxvm kernels involved).
inline xt::xarray<float> reference(const weights& w, const rv::tensor& x) {
  auto view = [](const rv::tensor& t) {
    std::vector<std::size_t> s(t.shape().begin(), t.shape().end());
    return xt::xarray<float>(xt::adapt(t.data<const float>(), static_cast<std::size_t>(t.numel()), xt::no_ownership(), s));
  };
  auto layer = [](const xt::xarray<float>& in, const xt::xarray<float>& wt, const xt::xarray<float>& bias) {
    // in[n, k] . wt[m, k]^T: broadcast to [n, m, k] and sum over k.
    xt::xarray<float> prod = xt::view(in, xt::all(), xt::newaxis(), xt::all()) * wt;
    return xt::xarray<float>(xt::sum(prod, {2}) + bias);
  };
  xt::xarray<float> h1 = xt::maximum(layer(view(x), view(w.w1), view(w.b1)), 0.0f);
  xt::xarray<float> h2 = xt::maximum(layer(h1, view(w.w2), view(w.b2)), 0.0f);
  return layer(h2, view(w.w3), view(w.b3));
}

/// Registers the kernels the program calls.
inline void register_kernels(rv::basic_registry& reg) { rv::ops::register_all(reg); }

}  // namespace mlp

#endif  // RELAXVM_EXAMPLES_MLP_PROGRAM_HPP
