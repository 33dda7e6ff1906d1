// expect-error: relaxvm_program_failed_to_link
// expect-error: relaxvm: bad_register
// expect-error: the program was changed after build\(\) and does not verify: function .main., instruction 1 \(ret %1000\)
// Nothing after the reason: no follow-up telling a caller of link() to call link().
// reject-error: static assertion failed
// A static executable changed in a constant expression after build() is verified again by link():
// static_vm would otherwise run a program nothing verified.
#include <relaxvm.hpp>
namespace rv = relaxvm;
std::int64_t twice(std::int64_t x) { return 2 * x; }
static constexpr auto built = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_call("vm.twice", {b.r(0)}, b.r(1));
  b.emit_ret(b.r(1));
});
static constexpr auto prog = [] {
  auto p = built;
  p.layout.instr_data[static_cast<std::size_t>(p.layout.instr_offset[1]) + 1] = 1000;  // ret %1000
  return p;
}();
static constexpr auto table = rv::make_table(rv::fn<"vm.twice">(&twice));
using linked = decltype(rv::link<prog, table>());
