// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: bad_if_offset
// expect-error: false offset 1 must be 2 or more
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_if(b.r(0), 1);
  b.emit_ret(b.r(0));
});
