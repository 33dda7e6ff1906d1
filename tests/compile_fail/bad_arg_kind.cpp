// expect-error: relaxvm_program_failed_to_build
// expect-error: relaxvm: bad_arg_kind
// expect-error: argument 0 has kind 7
#include <relaxvm.hpp>
namespace rv = relaxvm;
constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.builtin.copy", {rv::arg::from_data(std::int64_t{7} << 56)}, b.r(1));
  b.emit_ret(b.r(1));
});
