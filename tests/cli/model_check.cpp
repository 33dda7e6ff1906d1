// SPDX-License-Identifier: Apache-2.0
// A header written by `relaxvm cpp MODEL.onnx --name NAME` (cli/cpp.hpp), compiled in firmware
// mode (RELAXVM_HEAP=0, RELAXVM_THREADS=0, -fno-exceptions -fno-rtti) on the host and run on
// an .npy input: prints each output element, one per line, for tests/cli/model_check.py to
// compare with `relaxvm run MODEL.onnx IN.npy` (onnx::load and the VM). The build names the
// header (MODEL_HEADER) and its namespace (MODEL_NAME).
#include <cstdint>
#include <cstdio>
#include <cstring>

#include MODEL_HEADER

namespace {

namespace model = MODEL_NAME;
namespace rv = relaxvm;

rv::arena_buffer<model::arena_bytes> arena;
alignas(rv::value) std::byte frames[model::frame_bytes];
#if !RELAXVM_HEAP
rv::object_buffer<model::object_bytes> objects;
#endif

// The first input's element type and count, from the typed entry point's description.
using input_t = float;
constexpr std::size_t input_count = [] {
  std::size_t n = 1;
  for (std::int64_t d : model::model::inputs[0].dims) n *= static_cast<std::size_t>(d);
  return n;
}();
constexpr std::size_t output_count = [] {
  std::size_t n = 1;
  for (std::int64_t d : model::model::outputs[0].dims) n *= static_cast<std::size_t>(d);
  return n;
}();
input_t input[input_count];
float output[output_count];

// The elements of a little-endian float32 .npy file (format 1.0 or 2.0).
bool read_npy(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  unsigned char head[12];
  bool ok = std::fread(head, 1, 10, f) == 10 && std::memcmp(head, "\x93NUMPY", 6) == 0;
  std::size_t header = 0;
  if (ok && head[6] == 1) header = 10 + (head[8] | head[9] << 8);
  else if (ok && std::fread(head + 10, 1, 2, f) == 2)
    header = 12 + (head[8] | head[9] << 8 | static_cast<std::size_t>(head[10]) << 16 | static_cast<std::size_t>(head[11]) << 24);
  ok = ok && std::fseek(f, static_cast<long>(header), SEEK_SET) == 0 &&
       std::fread(input, sizeof(input_t), input_count, f) == input_count;
  std::fclose(f);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || !read_npy(argv[1])) {
    std::printf("usage: model_check IN.npy (float32, %zu elements)\n", input_count);
    return 2;
  }
  // Twice: the second run reuses the arena and the object memory.
  for (int run = 0; run < 2; ++run) {
#if RELAXVM_HEAP
    const rv::status s = model::run(arena, frames, input, output);
#else
    const rv::status s = model::run(arena, frames, objects, input, output);
#endif
    if (!s.ok()) {
      const std::string_view m = s.error().message();
      std::printf("error: %.*s\n", static_cast<int>(m.size()), m.data());
      return 1;
    }
  }
  for (float y : output) std::printf("%.9g\n", static_cast<double>(y));
  std::printf("arena %zu, frames %zu, objects %zu\n", model::arena_bytes, model::frame_bytes, model::object_bytes);
  return 0;
}
