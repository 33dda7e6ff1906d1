// SPDX-License-Identifier: Apache-2.0
// The MLP of mlp_program.hpp written once as IR: the lowering passes produce the shape checks,
// the shape heap, the allocations and the kills that mlp_program.hpp writes by hand.
#ifndef RELAXVM_EXAMPLES_MLP_IR_HPP
#define RELAXVM_EXAMPLES_MLP_IR_HPP

#include <relaxvm/lower.hpp>

#include "mlp_program.hpp"

namespace mlp {

namespace ir = relaxvm::ir;

/// main(x: R.Tensor((n, 16), "float32")) -> R.Tensor((n, 10), "float32"); with max_batch > 0,
/// n is at most max_batch (tir_var_upper_bound), and the planned storages have constant sizes.
inline ir::module build_ir(const weights& w, std::int64_t max_batch = 0) {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  const auto f32 = rv::dtype::float32();
  const auto hidden_t = ir::tensor_info({n, hidden}, f32);
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, in_features}, f32)}});
    if (max_batch > 0) f.upper_bound(n, max_batch);
    const ir::var w1 = f.rename(f.constant(w.w1), "w1"), b1 = f.rename(f.constant(w.b1), "b1");
    const ir::var w2 = f.rename(f.constant(w.w2), "w2"), b2 = f.rename(f.constant(w.b2), "b2");
    const ir::var w3 = f.rename(f.constant(w.w3), "w3"), b3 = f.rename(f.constant(w.b3), "b3");
    auto df = f.dataflow();
    const ir::var h1 = f.call_dps("ops.relu_out", {f.call_dps("ops.dense_out", {f.param(0), w1, b1}, hidden_t)}, hidden_t);
    const ir::var h2 = f.call_dps("ops.relu_out", {f.call_dps("ops.dense_out", {h1, w2, b2}, hidden_t)}, hidden_t);
    const ir::var y = f.rename(f.call_dps("ops.dense_out", {h2, w3, b3}, ir::tensor_info({n, out_features}, f32)), "y");
    df.output(y);
    df.end();
    f.ret(y, ir::tensor_info({n, out_features}, f32));
  }
  return m.get();
}

/// The same MLP for ir::build_static: tensor constants cannot be constexpr, so the weights are
/// parameters after the input (num_input = 1: their static shapes are not checked at run time).
/// main(x, w1, b1, w2, b2, w3, b3); with MaxBatch > 0, n is at most MaxBatch.
template <std::int64_t MaxBatch = 0>
constexpr auto weights_as_params = [](ir::module_builder& m) {
  const ir::sym n = m.sym("n");
  const auto f32 = rv::dtype::float32();
  const auto hidden_t = ir::tensor_info({n, hidden}, f32);
  auto f = m.function("main", {{"x", ir::tensor_info({n, in_features}, f32)},
                               {"w1", ir::tensor_info({hidden, in_features}, f32)},
                               {"b1", ir::tensor_info({hidden}, f32)},
                               {"w2", ir::tensor_info({hidden, hidden}, f32)},
                               {"b2", ir::tensor_info({hidden}, f32)},
                               {"w3", ir::tensor_info({out_features, hidden}, f32)},
                               {"b3", ir::tensor_info({out_features}, f32)}});
  f.num_input(1);
  if (MaxBatch > 0) f.upper_bound(n, MaxBatch);
  auto df = f.dataflow();
  const ir::var h1 = f.call_dps("ops.relu_out", {f.call_dps("ops.dense_out", {f.param(0), f.param(1), f.param(2)}, hidden_t)}, hidden_t);
  const ir::var h2 = f.call_dps("ops.relu_out", {f.call_dps("ops.dense_out", {h1, f.param(3), f.param(4)}, hidden_t)}, hidden_t);
  const ir::var y = f.call_dps("ops.dense_out", {h2, f.param(5), f.param(6)}, ir::tensor_info({n, out_features}, f32));
  df.output(y);
  df.end();
  f.ret(y);
};

}  // namespace mlp

#endif  // RELAXVM_EXAMPLES_MLP_IR_HPP
