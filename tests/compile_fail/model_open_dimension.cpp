// expect-error: static_model::run: the model leaves a dimension of an input, weight or output open \(-1\); run\(\) takes fixed shapes
// A model in the form `relaxvm cpp MODEL.onnx --name NAME` writes it (cli/cpp.hpp) whose input
// leaves its dimension open (as --upper-bound models do): run() is refused when it compiles.
#include <relaxvm.hpp>
#include <relaxvm/kernels/table.hpp>
#include <relaxvm/vm/static_model.hpp>
namespace rv = relaxvm;
namespace tiny {
inline constexpr std::array<std::int64_t, 1> dims{4}, open_dims{-1};
alignas(64) inline constexpr float w[4]{1.0f, 2.0f, 3.0f, 4.0f};
inline constexpr auto program = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 2);
  const rv::arg f32 = b.c(b.add_dtype(rv::dtype::float32())), u8 = b.c(b.add_dtype(rv::dtype::uint8()));
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({16})), b.imm(0), u8}, b.r(2));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(2), b.imm(0), b.c(b.add_shape({4})), f32}, b.r(3));
  b.emit_call("onnx.Add", {b.r(0), b.r(1), b.r(3)});
  b.emit_ret(b.r(3));
});
inline constexpr auto table = rv::make_table(rv::kernels::entry<"onnx.Add">(), rv::builtins::core_table,
                                             rv::builtins::shape_table, rv::builtins::memory_table);
struct model {
  using linked = decltype(rv::link<program, table>());
  static constexpr std::size_t arena_bytes = 64;
  static constexpr std::array<rv::model_tensor, 1> inputs{{{"x", rv::dtype::float32(), open_dims, nullptr}}};
  static constexpr std::array<rv::model_tensor, 1> weights{{{"w", rv::dtype::float32(), dims, w}}};
  static constexpr std::array<rv::model_tensor, 1> outputs{{{"y", rv::dtype::float32(), dims, nullptr}}};
};
}  // namespace tiny
rv::arena_buffer<64> arena;
alignas(rv::value) std::byte frames[1024];
float x[4], y[4];
const void* const in[] = {x};
void* const out[] = {y};
rv::status run() { return rv::static_model<tiny::model>::run(arena, frames, in, out); }
