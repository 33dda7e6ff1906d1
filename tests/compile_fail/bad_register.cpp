// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: bad_register
// expect-error: ret cannot be %vm
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  b.emit_ret(b.vm_state());
});
