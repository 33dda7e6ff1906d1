// SPDX-License-Identifier: Apache-2.0
// Runs an ONNX model exported from PyTorch: read the file, import it (lowered and memory-planned
// into a verified executable), register the kernels, run it on a TensorProto input, and compare
// with torch's own output.
//   onnx_model MODEL.onnx INPUT.pb EXPECTED.pb
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <relaxvm/onnx.hpp>
#include <vector>

namespace rv = relaxvm;
namespace onnx = relaxvm::onnx;

static std::vector<std::byte> read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
  return b;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: onnx_model MODEL.onnx INPUT.pb EXPECTED.pb\n");
    return 2;
  }
  const std::vector<std::byte> model = read_file(argv[1]);
  rv::result<rv::executable> exe = onnx::load(model);  // imported, lowered, planned, verified
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", exe.error().what());
    return 1;
  }
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine vm(exe.value(), reg);

  const rv::tensor x = onnx::read_tensor(read_file(argv[2])).value();
  const rv::tensor want = onnx::read_tensor(read_file(argv[3])).value();
  const rv::tensor y = vm["main"](x).as<rv::tensor>();

  double err = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i)
    err = std::fmax(err, std::fabs(y.data<const float>()[i] - want.data<const float>()[i]));
  std::printf("%s\nlargest difference from torch: %.3g\n", rv::to_string(y).c_str(), err);
  return err <= 1e-4 ? 0 : 1;
}
