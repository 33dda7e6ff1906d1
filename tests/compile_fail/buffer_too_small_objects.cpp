// expect-error: relaxvm_buffer_too_small
// expect-error: static_vm::object_memory: the object buffer has 100 bytes, but the program needs [0-9]+ \(linked::object_bytes \+ Caller\)
// Firmware mode: objects live in the buffer given to set_object_memory.
#define RELAXVM_HEAP 0
#define RELAXVM_THREADS 0
#include <relaxvm.hpp>
namespace rv = relaxvm;
// A storage and a view of it: a storage object, a tensor object, and the shape constant's object.
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  const rv::arg f32 = b.c(b.add_dtype(rv::dtype::float32()));
  b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.c(b.add_shape({4})), b.imm(-1), f32}, b.r(0));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(0), b.imm(0), b.c(b.add_shape({4})), f32}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
static_assert(linked::objects_known);
rv::object_buffer<100> objects;
void give() { rv::static_vm<linked>::object_memory<rv::arena_object_bytes>(objects); }
