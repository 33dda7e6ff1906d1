// expect-error: relaxvm_program_failed_to_build
// expect-error: exec_builder at \S*immediate_out_of_range\.cpp:8: immediate 1152921504606846976 is outside
// expect-error: use add_int\(\) and c\(\) instead
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  b.emit_call("vm.builtin.copy", {b.imm(std::int64_t{1} << 60)}, b.r(0));
  b.emit_ret(b.r(0));
});
