// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: zero_goto
// expect-error: goto 0 would loop on itself forever
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_goto(0);
  b.emit_ret(b.r(0));
});
