// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: arity_mismatch
// expect-error: passes 2 arguments but function .f. takes 1
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("f", 1);
    b.emit_ret(b.r(0));
  }
  auto fn = b.function("main", 1);
  b.emit_call("f", {b.r(0), b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
