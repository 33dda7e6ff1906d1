// SPDX-License-Identifier: Apache-2.0
// The firmware example's network (network.hpp) written as an IR function with a symbolic batch
// size n <= 4, and lowered at compile time: ir::build_static runs the checker and every pass
// (memory planning included, with the storages of constant size made at the entry), and the
// static executable is linked at compile time against the kernels and the builtins. The tensor
// arena is sized by the planner's constexpr figure (ir::planned_bytes), so it cannot be too
// small; an input with more rows than the bound is a clear error, not an overrun. Built and run
// like main.cpp (tools/firmware.sh OUT_DIR ir).
#include "network.hpp"

#include <relaxvm/lower.hpp>

namespace {

using namespace network;
namespace ir = relaxvm::ir;

constexpr std::int64_t max_batch = 4;

// main(x: R.Tensor((n, 4), "float32")) with n <= 4: y = dense(relu(dense(x, w1, b1)), w2, b2).
constexpr auto model = [](ir::module_builder& m) {
  const rv::dtype f32 = rv::dtype::float32();
  const ir::sym n = m.sym("n");
  auto f = m.function("main", {{"x", ir::tensor_info({n, in_features}, f32)}});
  f.upper_bound(n, max_batch);
  const ir::var cw1 = f.constant(f32, w1_shape, w1_bytes), cb1 = f.constant(f32, b1_shape, b1_bytes);
  const ir::var cw2 = f.constant(f32, w2_shape, w2_bytes), cb2 = f.constant(f32, b2_shape, b2_bytes);
  auto df = f.dataflow();
  const ir::var h0 = f.call_dps("fw.dense", {f.param(0), cw1, cb1}, ir::tensor_info({n, hidden}, f32));
  const ir::var h = f.call_dps("fw.relu", {h0}, ir::tensor_info({n, hidden}, f32));
  const ir::var y = f.call_dps("fw.dense", {h, cw2, cb2}, ir::tensor_info({n, out_features}, f32));
  df.output(y);
  df.end();
  f.ret(y);
};
constexpr ir::plan_options plan{.hoist_constant_storage = true};
constexpr auto program = ir::build_static<plan>(model);
constexpr auto table = rv::make_table(rv::fn<"fw.dense">(&dense), rv::fn<"fw.relu">(&relu), rv::builtins::core_table,
                                      rv::builtins::shape_table, rv::builtins::memory_table);
using linked = decltype(rv::link<program, table>());

// The most one call takes from the arena: two (n, 8) storages at n = 4, the (n, 3) output and the
// shape heap, each rounded up to 64 bytes.
constexpr std::int64_t arena_bytes = ir::planned_bytes(model, "main", plan);
static_assert(arena_bytes == 384);

alignas(rv::value) std::byte vm_memory[linked::memory_bytes];
alignas(64) std::byte arena_memory[arena_bytes];
// The program's objects, and this file's: the two inputs (views of 2 dimensions) and the arena.
constexpr std::size_t caller_objects = 2 * rv::tensor_view_object_bytes(2) + rv::arena_object_bytes;
rv::object_buffer<linked::object_bytes + caller_objects> object_memory;

}  // namespace

int main() {
  rv::static_vm<linked>::object_memory<caller_objects>(object_memory);
  // The output's storage has the symbolic size n x 3: linked::arena_bytes is not known, the
  // planner's figure is.
  static_assert(!linked::arena_known);
  return network::run<linked>(vm_memory, rv::allocator::arena(arena_memory), sizeof(arena_memory), max_batch,
                              input_tensor(max_batch + 1, in_features), object_memory.size);
}
