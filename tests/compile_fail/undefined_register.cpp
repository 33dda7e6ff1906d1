// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: undefined_register
// expect-error: reads register %5 before any instruction writes it
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.copy", {b.r(5)}, b.r(1));
  b.emit_ret(b.r(1));
});
