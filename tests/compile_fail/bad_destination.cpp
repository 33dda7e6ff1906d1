// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: bad_destination
// expect-error: a destination is a register or %void
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.copy", {b.r(0)}, b.vm_state());
  b.emit_ret(b.r(0));
});
