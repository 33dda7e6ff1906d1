// SPDX-License-Identifier: Apache-2.0
// Writes the relaxvm executables tests/cli/check_cli.py runs the command-line tool on:
//   OUT.rvx: main(x, y) = relu(x + y) with ops.add and ops.relu;  pair(x) = (x, relu(x));  unused(x) warns.
//   GROW.rvx (when given): a hostile program; main() = loop { t = (t,) }, which never returns and
//   holds ever more tuples.
//   PLUGIN.rvx (when given): a program calling the kernels of examples/plugin/my_kernels.cpp:
//   main(x, k) = example.scale(x, k);  fill(n, v) = example.fill(n, v).
#include <cstdio>
#include <relaxvm.hpp>

namespace rv = relaxvm;

int save(const rv::executable& exe, const char* path) {
  const rv::status saved = exe.try_save_file(path);
  if (!saved.ok()) {
    std::fprintf(stderr, "%s\n", std::string(saved.error().message()).c_str());
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: %s OUT.rvx [GROW.rvx [PLUGIN.rvx]]\n", argv[0]);
    return 2;
  }
  if (argc == 4) {
    rv::exec_builder p;
    {
      auto fn = p.function("main", 2, {"x", "k"});
      p.emit_call("example.scale", {p.r(0), p.r(1)}, p.r(2));
      p.emit_ret(p.r(2));
    }
    {
      auto fn = p.function("fill", 2, {"n", "v"});
      p.emit_call("example.fill", {p.r(0), p.r(1)}, p.r(2));
      p.emit_ret(p.r(2));
    }
    if (const int rc = save(p.get(), argv[3])) return rc;
  }
  if (argc >= 3) {
    rv::exec_builder g;
    {
      auto fn = g.function("main", 0);
      g.emit_call("vm.builtin.null_value", {}, g.r(0));
      g.emit_call("vm.builtin.make_tuple", {g.r(0)}, g.r(0));  // 1
      g.emit_goto(-1);                                        // 2: -> 1
      g.emit_ret(g.r(0));
    }
    if (const int rc = save(g.get(), argv[2])) return rc;
  }
  rv::exec_builder b;
  {
    auto fn = b.function("main", 2, {"x", "y"});
    b.emit_call("ops.add", {b.r(0), b.r(1)}, b.r(2));
    b.emit_call("ops.relu", {b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    auto fn = b.function("pair", 1, {"x"});
    b.emit_call("ops.relu", {b.r(0)}, b.r(1));
    b.emit_call("vm.builtin.make_tuple", {b.r(0), b.r(1)}, b.r(2));
    b.emit_ret(b.r(2));
  }
  {
    auto fn = b.function("unused", 2, {"x", "ignored"});  // an unused input: a verifier warning
    b.emit_ret(b.r(0));
  }
  return save(b.get(), argv[1]);
}
