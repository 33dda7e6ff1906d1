// SPDX-License-Identifier: Apache-2.0
// The portable matrix product's speed (relaxvm/kernels/linalg.hpp), float32, one thread:
// MatMul and Gemm with transB = 1 (the form torch writes for nn.Linear) at 256x256x256, the MLP's
// layers at batch 1 (1x784x256, 1x256x128, 1x128x10) and the d=64 transformer encoder's products
// (16 tokens: 16x64x192, 16x64x128, 16x128x64). Prints the best and median time of each and the
// GFLOP/s at the best; each result is checked against a double-precision triple loop.
//
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/gemm.cpp -o gemm && ./gemm [--quick]
//   (and with -O3 -march=native)
#include <relaxvm.hpp>
#include <relaxvm/kernels/linalg.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

namespace rv = relaxvm;
namespace k = relaxvm::kernels;

namespace {

rv::tensor filled(std::initializer_list<std::int64_t> dims, unsigned seed) {
  rv::tensor t = rv::tensor::try_empty(rv::shape(dims), rv::dtype::float32()).value();
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  return t;
}

// The reference: the naive triple loop in double.
double max_error(const rv::tensor& a, const rv::tensor& b, bool trans_b, const rv::tensor& out) {
  const std::int64_t m = a.shape()[0], kk = a.shape()[1], n = out.shape()[1];
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  const float* po = out.data<float>();
  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < kk; ++p) s += static_cast<double>(pa[i * kk + p]) * pb[trans_b ? j * kk + p : p * n + j];
      worst = std::max(worst, std::fabs(s - po[i * n + j]));
    }
  return worst;
}

bool quick = false;  // --quick: a few runs (the test suite's check that it works)

template <class F>
void time(const char* name, double flops, F&& f) {
  f();
  std::vector<double> ms;
  const int runs = quick ? 3 : flops > 1e7 ? 41 : 401;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-28s best %8.4f ms (%6.1f GFLOP/s)  median %8.4f ms (%6.1f GFLOP/s)\n", name, ms[0], flops / ms[0] / 1e6,
              ms[ms.size() / 2], flops / ms[ms.size() / 2] / 1e6);
}

int bad = 0;
void report(double err) {
  std::printf("  max error %.2g\n", err);
  if (!(err < 1e-3)) ++bad;
}

void run(std::int64_t m, std::int64_t kk, std::int64_t n) {
  const double flops = 2.0 * static_cast<double>(m * kk * n);
  rv::tensor a = filled({m, kk}, 1), b = filled({kk, n}, 2), bt = filled({n, kk}, 3);
  rv::tensor out = rv::tensor::try_empty(rv::shape{m, n}, rv::dtype::float32()).value();
  char name[64];
  std::snprintf(name, sizeof name, "MatMul %lldx%lldx%lld", static_cast<long long>(m), static_cast<long long>(kk), static_cast<long long>(n));
  time(name, flops, [&] { (void)k::MatMul_out(a, b, out); });
  report(max_error(a, b, false, out));
  std::snprintf(name, sizeof name, "Gemm transB %lldx%lldx%lld", static_cast<long long>(m), static_cast<long long>(kk), static_cast<long long>(n));
  time(name, flops, [&] { (void)k::Gemm_out(a, bt, rv::tensor(), 1.0, 1.0, 0, 1, out); });
  report(max_error(a, bt, true, out));
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) quick = quick || std::string_view(argv[i]) == "--quick";
  // Which copy of the kernels runs (kernels/isa.hpp; RELAXVM_KERNEL_ISA=portable for the baseline one).
  std::printf("kernels: %s\n", k::kernel_isa_name(k::kernel_isa_in_use()));
  run(256, 256, 256);
  run(1, 784, 256);
  run(1, 256, 128);
  run(1, 128, 10);
  run(16, 64, 192);
  run(16, 64, 128);
  run(16, 128, 64);
  return bad == 0 ? 0 : 1;
}
