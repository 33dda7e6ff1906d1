// expect-error: relaxvm_typed_invoke_failed
// expect-error: invoke<mian>: the program has no function mian
#include <relaxvm.hpp>
namespace rv = relaxvm;
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1, {"x"});
  b.emit_ret(b.r(0));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
void call(rv::static_vm<linked>& vm) { (void)vm.invoke<"mian">(1); }
