// expect-error: relaxvm_program_failed_to_link
// expect-error: instruction 0 \(call vm.scale in: i3, %0 dst: %1\): argument 0 of .vm.scale. expects tensor, but the call passes the immediate 3 \(int64\)
#include <relaxvm.hpp>
#include <relaxvm/vm/link.hpp>
namespace rv = relaxvm;
rv::tensor scale(const rv::tensor& t, std::int64_t) { return t; }
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.scale", {b.imm(3), b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto table = rv::make_table(rv::fn<"vm.scale">(&scale));
using linked = decltype(rv::link<prog, table>());
