// SPDX-License-Identifier: Apache-2.0
// The portable kernels built twice from this file (tests/meson.build): in firmware mode
// (RELAXVM_HEAP=0, RELAXVM_THREADS=0, -fno-exceptions -fno-rtti: tensors over static buffers,
// objects from set_object_memory()) and hosted (tensor::empty on the heap, the default build).
// Each build runs the same cases and prints every output element; tests/support/compare_kernels.py
// runs both and requires equal results within float tolerance, and equal error messages (an
// error names the op and the argument in both). The two builds cannot share one executable:
// their ABI namespaces differ (base/config.hpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <relaxvm.hpp>
#include <relaxvm/kernels/conv.hpp>
#include <relaxvm/kernels/data.hpp>
#include <relaxvm/kernels/elementwise.hpp>
#include <relaxvm/kernels/linalg.hpp>
#include <relaxvm/kernels/normalization.hpp>
#include <relaxvm/kernels/pool.hpp>
#include <relaxvm/kernels/reduce.hpp>
#include <relaxvm/kernels/resize.hpp>
#include <span>
#include <string_view>

namespace rv = relaxvm;
namespace k = relaxvm::kernels;

namespace {

#if !RELAXVM_HEAP
// Firmware mode: tensor data from a bump buffer, tensor objects from object memory.
alignas(64) std::byte object_memory[256 * 1024];
alignas(64) std::byte data_pool[512 * 1024];
std::size_t data_used = 0;
#endif

[[noreturn]] void fail(std::string_view what, std::string_view why) {
  std::printf("FAILED %.*s: %.*s\n", static_cast<int>(what.size()), what.data(), static_cast<int>(why.size()), why.data());
  std::exit(1);
}

rv::tensor make(std::initializer_list<std::int64_t> dims, rv::dtype t) {
  const rv::shape s(std::span<const std::int64_t>(dims.begin(), dims.size()));
#if RELAXVM_HEAP
  rv::result<rv::tensor> r = rv::tensor::try_empty(s, t);
#else
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  const std::size_t bytes = (static_cast<std::size_t>(n) * static_cast<std::size_t>(t.bytes()) + 63) / 64 * 64;
  if (data_used + bytes > sizeof data_pool) fail("make", "the data pool is too small");
  void* p = data_pool + data_used;
  data_used += bytes;
  rv::result<rv::tensor> r = rv::tensor::try_view(p, s, t, rv::device::cpu(), {}, false);
#endif
  if (!r.ok()) fail("make", r.error().message());
  return *r;
}

// Inputs: a fixed pseudo-random sequence in [-1, 1), the same in both builds.
std::uint32_t lcg = 12345;
rv::tensor randn(std::initializer_list<std::int64_t> dims) {
  rv::tensor t = make(dims, rv::dtype::float32());
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    lcg = lcg * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(lcg >> 8) / 8388608.0f - 1.0f;
  }
  return t;
}
template <class T>
rv::tensor values(std::initializer_list<std::int64_t> dims, std::initializer_list<T> v) {
  rv::tensor t = make(dims, rv::dtype_of<T>());
  if (static_cast<std::int64_t>(v.size()) != t.numel()) fail("values", "wrong count");
  std::int64_t i = 0;
  for (T x : v) t.data<T>()[i++] = x;
  return t;
}

// One case's outputs, one line each: its name, its element count, its elements.
void print(std::string_view name, rv::status s, std::initializer_list<rv::tensor> outs) {
  if (!s.ok()) fail(name, s.error().message());
  for (const rv::tensor& t : outs) {
    std::printf("%.*s %lld", static_cast<int>(name.size()), name.data(), static_cast<long long>(t.numel()));
    for (std::int64_t i = 0; i < t.numel(); ++i) std::printf(" %.9g", static_cast<double>(t.data<float>()[i]));
    std::printf("\n");
  }
}
// A case that must fail: its message.
void print_error(std::string_view name, rv::status s) {
  if (s.ok()) fail(name, "succeeded, but must fail");
  const std::string_view m = s.error().message();
  std::printf("%.*s error %.*s\n", static_cast<int>(name.size()), name.data(), static_cast<int>(m.size()), m.data());
}

void run() {
  const rv::tensor none;
  {  // Conv 3x3, pads 1; then strided with asymmetric pads; 1x1; depthwise.
    rv::tensor x = randn({1, 4, 7, 7}), w = randn({6, 4, 3, 3}), b = randn({6}), y = make({1, 6, 7, 7}, rv::dtype::float32());
    print("conv3x3", k::Conv_out(x, w, b, k::notset, 1, {}, {1, 1, 1, 1}, {}, y), {y});
    rv::tensor x2 = randn({1, 4, 8, 8}), y2 = make({1, 6, 4, 4}, rv::dtype::float32());
    print("conv3x3_stride2", k::Conv_out(x2, w, none, k::notset, 1, {2, 2}, {1, 0, 0, 1}, {}, y2), {y2});
    rv::tensor x3 = randn({1, 16, 5, 5}), w3 = randn({8, 16, 1, 1}), y3 = make({1, 8, 5, 5}, rv::dtype::float32());
    print("conv1x1", k::Conv_out(x3, w3, none, k::notset, 1, {}, {}, {}, y3), {y3});
    rv::tensor x4 = randn({1, 8, 6, 6}), w4 = randn({8, 1, 3, 3}), b4 = randn({8}), y4 = make({1, 8, 6, 6}, rv::dtype::float32());
    print("conv_depthwise", k::Conv_out(x4, w4, b4, k::notset, 8, {}, {1, 1, 1, 1}, {}, y4), {y4});
    rv::tensor bad = randn({6, 3, 3, 3});
    print_error("conv_bad_weight", k::Conv_out(x, bad, b, k::notset, 1, {}, {1, 1, 1, 1}, {}, y));
  }
  {  // Gemm with a transposed B and a broadcast C; batched, broadcast MatMul.
    rv::tensor a = randn({5, 7}), b = randn({9, 7}), c = randn({9}), y = make({5, 9}, rv::dtype::float32());
    print("gemm", k::Gemm_out(a, b, c, 0.5, 2.0, 0, 1, y), {y});
    rv::tensor ma = randn({2, 3, 4, 5}), mb = randn({5, 6}), my = make({2, 3, 4, 6}, rv::dtype::float32());
    print("matmul_batched", k::MatMul_out(ma, mb, my), {my});
    rv::tensor wrong = make({2, 3, 4, 7}, rv::dtype::float32());
    print_error("matmul_bad_out", k::MatMul_out(ma, mb, wrong));
  }
  {  // Pooling: max 3x3 stride 2 pads 1; average 2x2 stride 2 pads 1 without the pads counted.
    rv::tensor x = randn({1, 3, 9, 9}), ym = make({1, 3, 5, 5}, rv::dtype::float32()), ya = make({1, 3, 5, 5}, rv::dtype::float32());
    print("maxpool", k::MaxPool_out(x, k::notset, 0, 0, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, ym, none), {ym});
    print("averagepool", k::AveragePool_out(x, k::notset, 0, 0, {2, 2}, {2, 2}, {1, 1, 1, 1}, {}, ya), {ya});
    rv::tensor yg = make({1, 3, 1, 1}, rv::dtype::float32());
    print("global_averagepool", k::GlobalAveragePool_out(x, yg), {yg});
  }
  {  // Softmax along the last axis; LayerNormalization over the last axis with its statistics.
    rv::tensor x = randn({3, 10}), y = make({3, 10}, rv::dtype::float32());
    print("softmax", k::Softmax_out(x, -1, y), {y});
    rv::tensor xl = randn({2, 3, 8}), s = randn({8}), b = randn({8}), yl = make({2, 3, 8}, rv::dtype::float32());
    rv::tensor mean = make({2, 3, 1}, rv::dtype::float32()), inv = make({2, 3, 1}, rv::dtype::float32());
    print("layer_norm", k::LayerNormalization_out(xl, s, b, -1, 1e-5, yl, mean, inv), {yl, mean, inv});
  }
  {  // Elementwise with NumPy broadcasting, and a unary map.
    rv::tensor a = randn({2, 1, 4}), b = randn({3, 1}), y = make({2, 3, 4}, rv::dtype::float32());
    print("add_broadcast", k::Add_out(a, b, y), {y});
    rv::tensor s = randn({}), m = make({2, 1, 4}, rv::dtype::float32());
    print("mul_scalar", k::Mul_out(a, s, m), {m});
    rv::tensor e = make({2, 3, 4}, rv::dtype::float32());
    print("sigmoid", k::Sigmoid_out(y, e), {e});
    rv::tensor c = randn({3, 2}), bad = make({2, 3, 4}, rv::dtype::float32());
    print_error("add_bad_broadcast", k::Add_out(a, c, bad));
  }
  {  // Data movement: Transpose, Concat, Slice (negative start, step 2), Gather (negative index).
    rv::tensor x = randn({2, 3, 4}), y = make({4, 2, 3}, rv::dtype::float32());
    print("transpose", k::Transpose_out(x, {2, 0, 1}, y), {y});
    const rv::tensor parts[] = {randn({2, 2, 3}), randn({2, 1, 3}), randn({2, 4, 3})};
    rv::tensor cy = make({2, 7, 3}, rv::dtype::float32());
    print("concat", k::Concat_out(parts, 1, cy), {cy});
    rv::tensor sx = randn({4, 6}), sy = make({3, 3}, rv::dtype::float32());
    print("slice",
          k::Slice_out(sx, values<std::int64_t>({2}, {1, -5}), values<std::int64_t>({2}, {4, 6}), values<std::int64_t>({2}, {0, 1}),
                       values<std::int64_t>({2}, {1, 2}), sy),
          {sy});
    rv::tensor gd = randn({5, 4}), gy = make({2, 2, 4}, rv::dtype::float32());
    print("gather", k::Gather_out(gd, values<std::int64_t>({2, 2}, {0, 4, -1, 2}), 0, gy), {gy});
    print_error("gather_bad_index", k::Gather_out(gd, values<std::int64_t>({2, 2}, {0, 5, -1, 2}), 0, gy));
  }
  {  // Resize nearest, asymmetric coordinates, floor, scales 2 and 1.5.
    rv::tensor x = randn({1, 2, 3, 4}), y = make({1, 2, 6, 6}, rv::dtype::float32());
    rv::tensor scales = values<float>({4}, {1.0f, 1.0f, 2.0f, 1.5f});
    print("resize_nearest",
          k::Resize_out(x, none, scales, k::resize_nearest, k::coord_asymmetric, k::nearest_floor, -0.75, 0, 0.0, y), {y});
  }
}

}  // namespace

int main() {
#if !RELAXVM_HEAP
  rv::set_object_memory(object_memory);
#endif
  run();
  return 0;
}
