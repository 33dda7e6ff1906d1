// expect-error: relaxvm_program_failed_to_link
// expect-error: argument 0 of .vm.builtin.shape_of. expects tensor, but the call passes %vm \(the vm context\)
#include <relaxvm.hpp>
#include <relaxvm/vm/link.hpp>
namespace rv = relaxvm;
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  b.emit_call("vm.builtin.shape_of", {b.vm_state()}, b.r(0));
  b.emit_ret(b.r(0));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
