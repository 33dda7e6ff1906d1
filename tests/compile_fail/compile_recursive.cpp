// expect-error: static_dispatch::compile needs a program without recursion
#include <relaxvm.hpp>
namespace rv = relaxvm;
std::int64_t sub1(std::int64_t x) { return x - 1; }
// count(n) calls itself: its depth is not known at compile time.
static constexpr auto prog = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("count", 1);
  b.emit_call("test.sub1", {b.r(0)}, b.r(1));
  b.emit_call("count", {b.r(1)}, b.r(2));
  b.emit_ret(b.r(2));
});
static constexpr auto table = rv::make_table(rv::fn<"test.sub1">(&sub1));
using linked = decltype(rv::link<prog, table>());
void f(std::span<std::byte> memory, std::span<const rv::device_allocator> devices) {
  (void)rv::static_vm<linked, rv::static_dispatch::compile>::create(memory, devices);
}
