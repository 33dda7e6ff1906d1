// expect-error: relaxvm_typed_invoke_failed
// expect-error: invoke<main>: function main takes 2 arguments \(x, y\), but the call passes 1
#include <relaxvm.hpp>
namespace rv = relaxvm;
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 2, {"x", "y"});
  b.emit_call("vm.builtin.shape_of", {b.r(0)}, b.r(2));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::builtins::table;
using linked = decltype(rv::link<prog, table>());
void call(rv::static_vm<linked>& vm) { (void)vm.invoke<"main">(1); }
