// SPDX-License-Identifier: Apache-2.0
// Writes the relaxvm executable tests/cli/check_cli.py runs the command-line tool on:
//   main(x, y) = relu(x + y) with ops.add and ops.relu;  pair(x) = (x, relu(x));  unused(x) warns.
#include <cstdio>
#include <relaxvm.hpp>

namespace rv = relaxvm;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.rvx\n", argv[0]);
    return 2;
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
  const rv::status saved = b.get().try_save_file(argv[1]);
  if (!saved.ok()) {
    std::fprintf(stderr, "%s\n", std::string(saved.error().message()).c_str());
    return 1;
  }
  return 0;
}
