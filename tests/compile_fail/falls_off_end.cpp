// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: falls_off_end
// expect-error: instruction 1 \(call vm.builtin.copy in: %0 dst: %1\): execution can run past the last instruction
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.copy", {b.r(0)}, b.r(1));
  b.emit_call("vm.builtin.copy", {b.r(0)}, b.r(1));
});
