// A builder call that fails names itself: the file and line of the emit_* call, in one piece.
// expect-error: relaxvm_program_failed_to_build
// expect-error: exec_builder at \S*builder_location\.cpp:11: function .main., instruction 1: emit_ret: the result must be a register
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.copy", {b.r(0)}, b.r(1));
  // The next line's number is in the expected message.

  b.emit_ret(b.imm(3));
});
