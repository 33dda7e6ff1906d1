// SPDX-License-Identifier: Apache-2.0
// Writes the program that tests/python/test_relaxvm.py (and the README's Python example) load:
//   make_test_program OUT.rvx
// The Python module has no builder, so the test's program is built here, at build time.
#include <cstdio>
#include <relaxvm.hpp>

namespace rv = relaxvm;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_test_program OUT.rvx\n");
    return 2;
  }
  rv::exec_builder b;
  {
    // main(x, y) = relu(x + y), with the ops/ kernels.
    auto fn = b.function("main", 2, {"x", "y"});
    b.emit_call("ops.add", {b.r(0), b.r(1)}, b.r(2));
    b.emit_call("ops.relu", {b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    // add_out(x, y, out): writes x + y into `out` (destination-passing) and returns it.
    auto fn = b.function("add_out", 3, {"x", "y", "out"});
    b.emit_call("ops.add_out", {b.r(0), b.r(1), b.r(2)});
    b.emit_ret(b.r(2));
  }
  {
    // scale_py(x) = py.scale(x, 2.0) + x: py.scale is a function the caller registers (Python).
    auto fn = b.function("scale_py", 1, {"x"});
    b.emit_call("py.scale", {b.r(0), b.c(b.add_float(2.0))}, b.r(1));
    b.emit_call("ops.add", {b.r(1), b.r(0)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    // echo(v) = v: any value there and back.
    auto fn = b.function("echo", 1, {"v"});
    b.emit_ret(b.r(0));
  }
  {
    // inspect() = py.scale(7, 2.5, "hello", shape(2, 3), float32, true, (1, "hello"), null): a
    // value of every kind a program can pass to a Python function (whatever the caller registered
    // as py.scale: the program's only import that is not a builtin or a kernel).
    auto fn = b.function("inspect", 0);
    const std::int64_t hello = b.add_string("hello");
    b.emit_call("vm.builtin.make_tuple", {b.imm(1), b.c(hello)}, b.r(0));
    b.emit_call("py.scale",
                {b.imm(7), b.c(b.add_float(2.5)), b.c(hello), b.c(b.add_shape({2, 3})),
                 b.c(b.add_dtype(rv::dtype::float32())), b.c(b.add_bool(true)), b.r(0), b.void_arg()},
                b.r(1));
    b.emit_ret(b.r(1));
  }
  {
    // constant() = a tensor constant of the executable (read-only, shared by every VM).
    auto fn = b.function("constant", 0);
    b.emit_call("vm.builtin.copy", {b.c(b.add_constant(rv::tensor::from<float>({1, 2, 3, 4}, {2, 2})))}, b.r(0));
    b.emit_ret(b.r(0));
  }
  rv::result<rv::executable> exe = b.try_get();
  if (!exe.ok()) {
    std::fprintf(stderr, "make_test_program: %s\n", exe.error().what());
    return 1;
  }
  rv::status saved = exe->try_save_file(argv[1]);
  if (!saved.ok()) {
    std::fprintf(stderr, "make_test_program: %s\n", saved.error().what());
    return 1;
  }
  return 0;
}
