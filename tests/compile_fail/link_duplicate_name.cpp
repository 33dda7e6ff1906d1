// expect-error: relaxvm_program_failed_to_link
// expect-error: the function table defines .vm.builtin.copy. twice
#include <relaxvm.hpp>
#include <relaxvm/vm/link.hpp>
namespace rv = relaxvm;
rv::value mine(const rv::value& v) { return v; }
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.copy", {b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::make_table(rv::builtins::table, rv::fn<"vm.builtin.copy">(&mine));
using linked = decltype(rv::link<prog, table>());
