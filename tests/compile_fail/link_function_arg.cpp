// expect-error: relaxvm_program_failed_to_link
// expect-error: \(call vm.builtin.copy in: f\[vm.missing\] dst: %0\): argument 0: .vm.missing. is not in the function table
#include <relaxvm.hpp>
#include <relaxvm/vm/link.hpp>
namespace rv = relaxvm;
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  b.emit_call("vm.builtin.copy", {b.f("vm.missing")}, b.r(0));
  b.emit_ret(b.r(0));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
