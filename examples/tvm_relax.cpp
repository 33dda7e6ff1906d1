// SPDX-License-Identifier: Apache-2.0
// Runs an executable that Apache TVM wrote (a Relax VM .rxe file) on relaxvm: load it, register
// the kernels it calls, run it, write it back in TVM's format.
//   tvm_relax FILE.rxe      (the test suite runs it on tests/fixtures/tvm/relax_shape.rxe)
// The file's main(x: R.Tensor((n, 4), "float32")) calls one kernel, test.add_one_f32(x, out).
#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <fstream>
#include <iterator>
#include <relaxvm.hpp>
#include <relaxvm/tvm.hpp>
#include <vector>

namespace rv = relaxvm;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tvm_relax FILE.rxe\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bytes = std::as_bytes(std::span<const char>(chars));

  rv::result<rv::executable> exe = rv::tvm::load_relax(bytes);  // checked and verified, never trusted
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", std::string(exe.error().message()).c_str());
    return 1;
  }
  std::printf("%s", exe->as_text().c_str());

  // TVM's kernel library is not loaded: the kernels the program calls are registered by name.
  rv::registry reg;
  reg.def("test.add_one_f32", [](const rv::tensor& x, const rv::tensor& out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = x.data<const float>()[i] + 1;
  });
  rv::virtual_machine vm(*exe, reg);
  const rv::tensor x = rv::tensor::from<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  const rv::tensor y = vm["main"](x).as<rv::tensor>();
  std::printf("main(x) = [");
  for (std::int64_t i = 0; i < y.numel(); ++i) std::printf(i ? ", %g" : "%g", static_cast<double>(y.data<const float>()[i]));
  std::printf("]\n");

  // A wrong shape is caught by the program's own checks, with TVM's error context.
  const std::vector<rv::value> wrong{rv::value(rv::tensor::empty({2, 3}, rv::dtype::float32()))};
  rv::result<rv::value> bad = vm.try_invoke("main", wrong);
  std::printf("main(float32[2, 3]): %s\n", std::string(bad.error().message()).c_str());

  // Written back in TVM's format: the same bytes TVM wrote.
  const rv::result<std::vector<std::byte>> again = rv::tvm::save_relax(*exe);
  const bool same = again.ok() && std::equal(again->begin(), again->end(), bytes.begin(), bytes.end());
  std::printf("save_relax gives the file back byte for byte: %s\n", same ? "yes" : "no");
  return y.data<const float>()[11] == 12.0f && !bad.ok() && same ? 0 : 1;
}
