// expect-error: relaxvm_program_failed_to_link
// expect-error: .vm.builtin.alloc_tensor. takes at least 4 arguments \(relaxvm.storage, int64, shape, dtype\), but the call passes 2
#include <relaxvm.hpp>
#include <relaxvm/vm/link.hpp>
namespace rv = relaxvm;
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.alloc_tensor", {b.r(0), b.imm(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
