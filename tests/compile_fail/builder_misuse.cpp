// expect-error: relaxvm_program_failed_to_build
// expect-error: exec_builder at \S*builder_misuse\.cpp:7: emit_call outside a function
// expect-error: relaxvm: builder_error
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  b.emit_call("vm.builtin.copy", {b.imm(1)});
});
