// SPDX-License-Identifier: Apache-2.0
// Fuzz target: an ONNX file through the reader, every initializer made into a tensor, then
// onnx::load (import, lowering, planning, verification) and a VM made over what loads (every
// kernel it names resolves). Nothing is run: a kernel's time grows with the shapes a file names,
// which would be timeouts, not findings. Seeds: tests/fixtures/onnx and ONNX's node cases
// (fuzz/make_corpus).
#include <cstddef>
#include <cstdint>
#include <relaxvm/onnx.hpp>

namespace rv = relaxvm;
namespace onnx = relaxvm::onnx;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const rv::registry reg = [] {
    rv::registry r;
    onnx::register_kernels(r);
    return r;
  }();
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  rv::result<onnx::model_info> m = onnx::parse_model(bytes);
  if (!m.ok()) return 0;
  for (const onnx::tensor_info& t : m->graph.initializers) (void)onnx::make_tensor(t);
  rv::result<rv::executable> exe = onnx::load(bytes);
  if (!exe.ok()) return 0;
  (void)exe->as_text();
  (void)rv::virtual_machine::create(*exe, reg);
  return 0;
}
