// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: bad_constant_index
// expect-error: argument 0 names constant 3 but the pool has 0
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  b.emit_call("vm.builtin.copy", {b.c(3)}, b.r(0));
  b.emit_ret(b.r(0));
});
