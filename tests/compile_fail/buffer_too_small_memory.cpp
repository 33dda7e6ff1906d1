// expect-error: relaxvm_buffer_too_small
// expect-error: static_vm::create: the VM memory buffer has 64 bytes, but the program needs [0-9]+ \(linked::memory_bytes\)
#include <relaxvm.hpp>
namespace rv = relaxvm;
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.shape_of", {b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
alignas(rv::value) std::byte memory[64];
bool make(std::span<const rv::device_allocator> devices) { return rv::static_vm<linked>::create(memory, devices).ok(); }
