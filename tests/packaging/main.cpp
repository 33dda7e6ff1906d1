// SPDX-License-Identifier: Apache-2.0
// The program each packaging consumer (tests/packaging/packaging.py) builds against relaxvm as its
// users get it: it runs a two-instruction function on the VM and says which layout of the headers
// it was given (all of include/, the single header alone, or include/ with the compiled library:
// separate compilation).
#include <relaxvm.hpp>
#include <cstdint>
#include <cstdio>

#if defined(RELAXVM_SEPARATE_COMPILATION)
#define CONSUMER_LAYOUT "compiled"
#elif __has_include(<relaxvm/vm/virtual_machine.hpp>)
#define CONSUMER_LAYOUT "headers"
#else
#define CONSUMER_LAYOUT "single"
#endif

namespace rv = relaxvm;

int main() {
  rv::registry reg;
  reg.def("consumer.mul", [](std::int64_t a, std::int64_t b) { return a * b; });
  rv::exec_builder b;
  {
    auto fn = b.function("main", 1);
    b.emit_call("consumer.mul", {b.r(0), b.imm(6)}, b.r(1));
    b.emit_ret(b.r(1));
  }
  rv::executable exe = b.get();
  rv::virtual_machine vm(exe, reg);
  std::int64_t y = vm["main"](std::int64_t{7}).as<std::int64_t>();
  std::printf("relaxvm %s (%s): main(7) = %lld\n", RELAXVM_VERSION_STRING, CONSUMER_LAYOUT, static_cast<long long>(y));
  return y == 42 ? 0 : 1;
}
