// expect-error: relaxvm_buffer_too_small
// expect-error: static_vm::arena: the arena buffer has 100 bytes, but the program needs 192 \(linked::arena_bytes\)
#include <relaxvm.hpp>
namespace rv = relaxvm;
// Two storages, 100 and 20 bytes: 128 + 64 from an arena that aligns each block to 64 bytes.
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  const rv::arg u8 = b.c(b.add_dtype(rv::dtype::uint8()));
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({100})), b.imm(-1), u8}, b.r(0));
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({20})), b.imm(-1), u8}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
rv::arena_buffer<100> arena;
rv::allocator tensors() { return rv::static_vm<linked>::arena(arena); }
