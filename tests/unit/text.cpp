// SPDX-License-Identifier: Apache-2.0
// io/text.hpp: as_text() and stats() in the reference's layout, and as_cpp().
#include <doctest/doctest.h>

#include <relaxvm.hpp>
#include <string>

#include "../support/programs.hpp"

namespace rv = relaxvm;

TEST_CASE("as_text: the reference's test_vm_if example") {
  CHECK(relaxvm_test::programs::if_example().as_text() ==
        "@main:\n"
        "  If    %0, 3\n"
        "  call  test.vm.add      in: %1, %2       dst: %3\n"
        "  goto  2\n"
        "  call  test.vm.mul      in: %1, %2       dst: %3\n"
        "  ret   %3\n"
        "\n"
        "@test.vm.add packed_func;\n"
        "\n"
        "@test.vm.mul packed_func;\n"
        "\n");
}

TEST_CASE("as_text and stats: the Relax VM design example's func0") {
  rv::exec_builder b;
  {
    auto fn = b.function("func0", 2);
    b.emit_call("vm.op.add", {b.r(0), b.r(1)}, b.r(2));
    b.emit_call("vm.builtin.move", {b.r(2)}, b.r(3));
    b.emit_call("vm.builtin.print", {b.r(3)});
    b.emit_ret(b.r(3));
  }
  rv::executable exe = b.get();
  CHECK(exe.as_text() ==
        "@func0:\n"
        "  call  vm.op.add        in: %0, %1       dst: %2\n"
        "  call  vm.builtin.move  in: %2           dst: %3\n"
        "  call  vm.builtin.print in: %3           dst: %void\n"
        "  ret   %3\n"
        "\n"
        "@vm.op.add packed_func;\n"
        "\n"
        "@vm.builtin.move packed_func;\n"
        "\n"
        "@vm.builtin.print packed_func;\n"
        "\n");
  CHECK(exe.stats() ==
        "Relax VM executable statistics:\n"
        "  Constant pool (# 0): []\n"
        "  Globals (#4): [func0, vm.op.add, vm.builtin.move, vm.builtin.print]\n");
}

TEST_CASE("as_text and stats: the reference's test_vm_storage example") {
  rv::exec_builder b;
  const std::int64_t scope = b.add_string("global");
  {
    auto fn = b.function("main", 0);
    b.emit_call("vm.builtin.alloc_storage",
                {b.vm_state(), b.c(b.add_shape({24})), b.imm(0), b.c(b.add_dtype(rv::dtype::float32())), b.c(scope)},
                b.r(1));
    b.emit_call("vm.builtin.alloc_tensor",
                {b.r(1), b.imm(0), b.c(b.add_shape({4, 6})), b.c(b.add_dtype(rv::dtype::float32()))}, b.r(2));
    b.emit_ret(b.r(2));
  }
  rv::executable exe = b.get();
  CHECK(exe.as_text() ==
        "@main:\n"
        "  call  vm.builtin.alloc_storage in: %vm, c[1], i0, c[2], c[0] dst: %0\n"
        "  call  vm.builtin.alloc_tensor in: %0, i0, c[3], c[2] dst: %1\n"
        "  ret   %1\n"
        "\n"
        "@vm.builtin.alloc_storage packed_func;\n"
        "\n"
        "@vm.builtin.alloc_tensor packed_func;\n"
        "\n");
  CHECK(exe.stats() ==
        "Relax VM executable statistics:\n"
        "  Constant pool (# 4): [\"global\", shapetuple[24], float32, shapetuple[4, 6]]\n"
        "  Globals (#3): [main, vm.builtin.alloc_storage, vm.builtin.alloc_tensor]\n");
}

TEST_CASE("stats shows every kind of constant") {
  rv::exec_builder b;
  b.add_int(7);
  b.add_float(2.5);
  b.add_bool(false);
  b.add_device(rv::device::cpu(1));
  b.add_shape({});
  b.add_tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  b.add_tensor<float>({1}, {});
  {
    auto fn = b.function("main", 0);
    b.emit_ret(b.void_arg());
  }
  CHECK(b.get().stats() ==
        "Relax VM executable statistics:\n"
        "  Constant pool (# 7): [7, 2.5, false, cpu:1, shapetuple[], [2, 3], scalar]\n"
        "  Globals (#1): [main]\n");
  // Typed (relaxvm info): a tensor constant names its kind and dtype, so it cannot pass for a shape.
  CHECK(b.get().stats(rv::constant_style::typed) ==
        "Relax VM executable statistics:\n"
        "  Constant pool (# 7): [7, 2.5, false, cpu:1, shapetuple[], tensor float32[2, 3], tensor float32 scalar]\n"
        "  Globals (#1): [main]\n");
}

TEST_CASE("as_cpp prints builder code") {
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2, {"x", "y"});
    b.emit_if(b.r(0), 3);
    b.emit_call("test.vm.add", {b.r(1), b.imm(-5), b.c(b.add_string("a\"b\n"))}, b.r(2));
    b.emit_goto(2);
    b.emit_call("test.vm.mul", {b.vm_state(), b.f("main"), b.void_arg()}, b.r(2));
    b.emit_call("vm.builtin.print", {b.r(2)});
    b.emit_ret(b.r(2));
  }
  CHECK(b.get().as_cpp() ==
        "// relaxvm builder code (executable::as_cpp)\n"
        "[](relaxvm::exec_builder& b) {\n"
        "  b.declare_function(\"main\", relaxvm::func_kind::vm);\n"
        "  b.declare_function(\"test.vm.add\");\n"
        "  b.declare_function(\"test.vm.mul\");\n"
        "  b.declare_function(\"vm.builtin.print\");\n"
        "  b.add_string(\"a\\\"b\\012\");  // c[0]\n"
        "  {\n"
        "    auto fn = b.function(\"main\", 2, {\"x\", \"y\"});\n"
        "    b.emit_if(b.r(0), 3);\n"
        "    b.emit_call(\"test.vm.add\", {b.r(1), b.imm(-5), b.c(0)}, b.r(2));\n"
        "    b.emit_goto(2);\n"
        "    b.emit_call(\"test.vm.mul\", {b.vm_state(), b.f(\"main\"), b.void_arg()}, b.r(2));\n"
        "    b.emit_call(\"vm.builtin.print\", {b.r(2)});\n"
        "    b.emit_ret(b.r(2));\n"
        "  }\n"
        "}\n");
}
