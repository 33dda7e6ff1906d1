// expect-error: relaxvm_program_failed_to_link
// expect-error: relaxvm: link_error
// expect-error: instruction 0 \(call vm.scale in: %0 dst: %1\): .vm.scale. takes 2 arguments \(tensor, int64\), but the call passes 1
#include <relaxvm.hpp>
#include <relaxvm/vm/link.hpp>
namespace rv = relaxvm;
rv::tensor scale(const rv::tensor& t, std::int64_t) { return t; }
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.scale", {b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::make_table(rv::fn<"vm.scale">(&scale));
using linked = decltype(rv::link<prog, table>());
