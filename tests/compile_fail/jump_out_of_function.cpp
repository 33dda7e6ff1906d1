// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: jump_out_of_function
// expect-error: function .main., instruction 0 \(goto 7\): goto offset 7 leads outside the function
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_goto(7);
  b.emit_ret(b.r(0));
});
