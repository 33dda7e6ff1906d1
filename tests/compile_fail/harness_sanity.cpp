// A program that compiles: the runner must report failure (meson marks this test should_fail),
// which proves the harness can fail.
// expect-error: this text never appears
#include <relaxvm.hpp>
constexpr auto prog = relaxvm::build([](relaxvm::exec_builder& b) {
  auto fn = b.function("main", 1);
  b.emit_ret(b.r(0));
});
