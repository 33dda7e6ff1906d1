// expect-error: relaxvm_program_failed_to_link
// expect-error: function table entry 1 \(.vm.unused.\) is not in the function table
#include <relaxvm.hpp>
#include <relaxvm/vm/link.hpp>
namespace rv = relaxvm;
// A packed function that no instruction calls can still be invoked by name: it must link too.
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.declare_function("vm.unused");
  b.emit_ret(b.r(0));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
