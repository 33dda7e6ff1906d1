// SPDX-License-Identifier: Apache-2.0
// Compiled, not run, with the strictest warnings users turn on (tests/meson.build: g++ -Wall
// -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Werror, and clang -Weverything less
// the short list there): relaxvm's single header must not break a user's -Werror build. It uses
// the main templates a user instantiates: the builder at compile time, the VM, typed kernels,
// link, static_vm in both dispatch modes, the builtins, comparisons and printing.
#include <relaxvm.hpp>

#include <array>
#include <cstdint>
#include <sstream>

namespace rv = relaxvm;

namespace {
std::int64_t add(std::int64_t a, std::int64_t b) { return a + b; }
rv::result<rv::tensor> twice(const rv::tensor& x) {
  if (x.dtype() != rv::dtype::float32()) return rv::type_error("twice: float32 only");
  RELAXVM_TRY_ASSIGN(rv::tensor out, rv::tensor::try_empty(x.shape(), x.dtype()));
  for (std::int64_t i = 0; i < x.numel(); ++i) out.data<float>()[i] = 2 * x.data<const float>()[i];
  return out;
}

constexpr auto program = rv::build([](rv::exec_builder& b) {
  {
    auto fn = b.function("main", 2);
    b.emit_call("test.add", {b.r(0), b.r(1)}, b.r(2));
    b.emit_call("test.add", {b.r(2), b.imm(1)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("twice", 1);
    b.emit_call("vm.builtin.alloc_shape_heap", {b.imm(1)}, b.r(1));
    b.emit_call("test.twice", {b.r(0)}, b.r(2));
    b.emit_ret(b.r(2));
  }
});
constexpr auto table = rv::make_table(rv::fn<"test.add">(&add), rv::fn<"test.twice">(&twice), rv::builtins::core_table,
                                      rv::builtins::shape_table, rv::builtins::memory_table);
using linked = decltype(rv::link<program, table>());
}  // namespace

int main() {
  rv::registry reg;
  reg.def("test.add", &add);
  reg.def("test.twice", &twice);
  rv::virtual_machine vm(program, reg);
  const std::int64_t sum = vm["main"](std::int64_t{2}, std::int64_t{3}).as<std::int64_t>();
  const rv::tensor x = rv::tensor::from<float>({1, 2}, {2});
  const rv::tensor y = vm["twice"](x).as<rv::tensor>();
  std::ostringstream os;
  os << y << rv::value(sum) << rv::shape{1, 2} << rv::dtype::float32() << rv::device::cpu();
  bool ok = sum == 6 && rv::allclose(y, rv::tensor::from<float>({2, 4}, {2})) && !os.str().empty();

  rv::device_allocator devices[] = {{rv::device::cpu(), rv::allocator::pooled()}};
  alignas(rv::value) static std::byte memory[rv::static_vm<linked, rv::static_dispatch::compile>::memory_bytes];
  auto compiled = rv::static_vm<linked, rv::static_dispatch::compile>::create(memory, devices).value();
  const std::array<rv::value, 2> args{rv::value(2), rv::value(3)};
  ok = ok && compiled.invoke("main", args).value() == rv::value(6);
  alignas(rv::value) static std::byte memory2[rv::static_vm<linked>::memory_bytes];
  auto interpreted = rv::static_vm<linked>::create(memory2, devices).value();
  ok = ok && interpreted.invoke("main", args).value() == rv::value(6);
  return ok ? 0 : 1;
}
