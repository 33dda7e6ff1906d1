// expect-error: relaxvm_program_failed_to_link
// expect-error: instruction 1 \(call vm.builtin.alloc_tensor .*\): vm.builtin.alloc_tensor: a view of 40 bytes at offset 96 does not fit its storage of 128 bytes \(%1, made by instruction 0\)
// Nothing after the reason: no follow-up telling a caller of link() to call link().
// reject-error: static assertion failed
#include <relaxvm.hpp>
namespace rv = relaxvm;
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.alloc_storage",
              {b.vm_state(), b.c(b.add_shape({128})), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(1));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(96), b.c(b.add_shape({2, 5})), b.c(b.add_dtype(rv::dtype::float32()))},
              b.r(2));
  b.emit_ret(b.r(2));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
