// SPDX-License-Identifier: Apache-2.0
// Programs that several tests build: written once here.
#ifndef RELAXVM_TESTS_PROGRAMS_HPP
#define RELAXVM_TESTS_PROGRAMS_HPP

#include <relaxvm.hpp>

namespace relaxvm_test::programs {

/// Adds fact(n) = n < 2 ? 1 : n * fact(n - 1) to `b`: recursive VM-to-VM calls, with the packed
/// functions test.lt, test.sub and test.mul (int64).
inline void add_factorial(relaxvm::exec_builder& b) {
  auto fn = b.function("fact", 1, {"n"});
  b.emit_call("test.lt", {b.r(0), b.imm(2)}, b.r(1));
  b.emit_if(b.r(1), 3);
  b.emit_call("vm.builtin.copy", {b.imm(1)}, b.r(2));
  b.emit_ret(b.r(2));
  b.emit_call("test.sub", {b.r(0), b.imm(1)}, b.r(3));
  b.emit_call("fact", {b.r(3)}, b.r(4));
  b.emit_call("test.mul", {b.r(0), b.r(4)}, b.r(2));
  b.emit_ret(b.r(2));
}

/// The factorial alone.
inline relaxvm::executable factorial() {
  relaxvm::exec_builder b;
  add_factorial(b);
  return b.get();
}

/// The reference's test_vm_if example: main(c, x, y) = c ? test.vm.add(x, y) : test.vm.mul(x, y),
/// with If, Goto and two packed functions.
inline relaxvm::executable if_example() {
  relaxvm::exec_builder b;
  {
    auto fn = b.function("main", 3);
    b.emit_if(b.r(0), 3);
    b.emit_call("test.vm.add", {b.r(1), b.r(2)}, b.r(3));
    b.emit_goto(2);
    b.emit_call("test.vm.mul", {b.r(1), b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  return b.get();
}

}  // namespace relaxvm_test::programs

#endif  // RELAXVM_TESTS_PROGRAMS_HPP
