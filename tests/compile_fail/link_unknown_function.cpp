// expect-error: relaxvm_program_failed_to_link
// expect-error: relaxvm: link_error
// expect-error: in function .main., instruction 0 \(call vm.nope in: %0 dst: %1\): .vm.nope. is not in the function table
// Nothing after the reason: no follow-up telling a caller of link() to call link().
// reject-error: static assertion failed
#include <relaxvm.hpp>
#include <relaxvm/vm/link.hpp>
namespace rv = relaxvm;
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.nope", {b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
