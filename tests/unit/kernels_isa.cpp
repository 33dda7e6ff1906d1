// SPDX-License-Identifier: Apache-2.0
// relaxvm/kernels/isa.hpp: the vector kernels' copies for each instruction set this CPU has
// (portable, AVX2 + FMA, AVX-512) give the portable copy's results within float tolerance (only
// the fused multiply-adds' rounding differs: every copy sums in the same order) on Conv (every
// tile path, the product, depthwise, float64), MatMul and Gemm (dot products, few rows, panels,
// more than one panel of K, integers exactly); and the choice is capped at what the CPU has.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <relaxvm.hpp>
#include <relaxvm/kernels/conv.hpp>
#include <relaxvm/kernels/isa.hpp>
#include <relaxvm/kernels/linalg.hpp>
#include <string>
#include <vector>

#include "../support/random_tensor.hpp"

namespace rv = relaxvm;
namespace k = relaxvm::kernels;

namespace {

using relaxvm_test::dims_t;
using relaxvm_test::random_tensor;
using relaxvm_test::shp;

// The instruction sets above portable that this CPU and build run.
std::vector<k::kernel_isa> wider_isas() {
  std::vector<k::kernel_isa> out;
  for (k::kernel_isa isa : {k::kernel_isa::avx2, k::kernel_isa::avx512})
    if (static_cast<int>(isa) <= static_cast<int>(k::detected_kernel_isa())) out.push_back(isa);
  return out;
}

// Runs f(out) with the portable kernels and with each wider copy, and requires the same results
// (within float tolerance; integers exactly). Leaves the ISA in use as it found it.
template <class T, class F>
void same_on_every_isa(const dims_t& out_dims, F&& f) {
  const k::kernel_isa before = k::kernel_isa_in_use();
  const rv::tensor want = rv::tensor::empty(shp(out_dims), rv::dtype_of<T>());
  REQUIRE(k::set_kernel_isa(k::kernel_isa::portable) == k::kernel_isa::portable);
  REQUIRE(k::kernel_isa_in_use() == k::kernel_isa::portable);
  rv::status st = f(want);
  REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : std::string(st.error().message())));
  for (k::kernel_isa isa : wider_isas()) {
    CAPTURE(k::kernel_isa_name(isa));
    REQUIRE(k::set_kernel_isa(isa) == isa);
    const rv::tensor got = rv::tensor::empty(shp(out_dims), rv::dtype_of<T>());
    st = f(got);
    REQUIRE(st.ok());
    double worst = 0;
    for (std::int64_t i = 0; i < want.numel(); ++i) {
      const double a = static_cast<double>(got.data<T>()[i]), b = static_cast<double>(want.data<T>()[i]);
      worst = std::max(worst, std::fabs(a - b) / (1 + std::fabs(b)));
    }
    CHECK(worst <= (std::is_same_v<T, float> ? 1e-5 : std::is_same_v<T, double> ? 1e-13 : 0));
  }
  k::set_kernel_isa(before);
}

struct conv_case {
  dims_t x, w;  // x [N, C, H, W], w [M, C / group, kh, kw]
  std::int64_t group, stride, dilation, pad;
};

template <class T>
void conv_on_every_isa(const conv_case& c, std::mt19937& rng) {
  CAPTURE(c.x);
  CAPTURE(c.w);
  CAPTURE(c.group);
  CAPTURE(c.stride);
  const rv::tensor x = random_tensor<T>(c.x, rng), w = random_tensor<T>(c.w, rng), b = random_tensor<T>({c.w[0]}, rng);
  dims_t od{c.x[0], c.w[0]};
  for (int i = 0; i < 2; ++i) {
    const std::int64_t ek = (c.w[2 + i] - 1) * c.dilation + 1;
    od.push_back((c.x[2 + i] + 2 * c.pad - ek) / c.stride + 1);
  }
  const dims_t s{c.stride, c.stride}, d{c.dilation, c.dilation}, p{c.pad, c.pad, c.pad, c.pad};
  same_on_every_isa<T>(od, [&](const rv::tensor& y) { return k::Conv_out(x, w, b, k::notset, c.group, shp(s), shp(p), shp(d), y); });
}

}  // namespace

TEST_CASE("kernel ISA: the choice is capped at what the CPU and the build have") {
  const k::kernel_isa have = k::detected_kernel_isa(), before = k::kernel_isa_in_use();
  CHECK(k::set_kernel_isa(k::kernel_isa::portable) == k::kernel_isa::portable);
  CHECK(k::kernel_isa_in_use() == k::kernel_isa::portable);
  CHECK(k::set_kernel_isa(k::kernel_isa::avx512) == have);
  CHECK(k::kernel_isa_in_use() == have);
#if RELAXVM_KERNEL_DISPATCH
  // RELAXVM_KERNEL_ISA's values (read once, at the first kernel call).
  ::setenv("RELAXVM_KERNEL_ISA", "portable", 1);
  CHECK(k::detail::environment_isa() == k::kernel_isa::portable);
  ::setenv("RELAXVM_KERNEL_ISA", "avx2", 1);
  CHECK(k::detail::environment_isa() == k::kernel_isa::avx2);
  ::setenv("RELAXVM_KERNEL_ISA", "avx512", 1);
  CHECK(k::detail::environment_isa() == k::kernel_isa::avx512);
  ::setenv("RELAXVM_KERNEL_ISA", "sse9", 1);
  CHECK(k::detail::environment_isa() == k::kernel_isa::avx512);
  ::unsetenv("RELAXVM_KERNEL_ISA");
  CHECK(k::detail::environment_isa() == k::kernel_isa::avx512);
#else
  CHECK(have == k::kernel_isa::portable);
#endif
  k::set_kernel_isa(before);
}

TEST_CASE("kernel ISA: Conv gives the portable results on every instruction set") {
  std::mt19937 rng(7);
  // Direct tiles (fewer than 4 output channels per group) at widths around every copy's tile
  // widths (4 to 64 columns), interior and edge tiles.
  for (std::int64_t width : {1, 7, 16, 31, 33, 56, 70})
    for (std::int64_t m : {1, 3})
      conv_on_every_isa<float>({{1, 3, 5, width}, {m, 3, 3, 3}, 1, 1, 1, 1}, rng);
  // The product: panels spanning rows, more (channel, tap) rows than a panel (256), row remainders.
  conv_on_every_isa<float>({{1, 64, 14, 14}, {13, 64, 3, 3}, 1, 1, 1, 1}, rng);
  conv_on_every_isa<float>({{1, 3, 30, 30}, {16, 3, 7, 7}, 1, 2, 1, 3}, rng);
  conv_on_every_isa<float>({{1, 24, 9, 9}, {20, 24, 1, 1}, 1, 1, 1, 0}, rng);
  conv_on_every_isa<float>({{2, 8, 9, 10}, {8, 4, 3, 3}, 2, 2, 2, 1}, rng);
  // Depthwise, stride 1 and 2 (the strided gather), a multiplier of 2, and float64.
  conv_on_every_isa<float>({{1, 16, 28, 28}, {16, 1, 3, 3}, 16, 1, 1, 1}, rng);
  conv_on_every_isa<float>({{1, 16, 56, 56}, {16, 1, 3, 3}, 16, 2, 1, 1}, rng);
  conv_on_every_isa<float>({{1, 6, 13, 29}, {12, 1, 3, 3}, 6, 1, 1, 1}, rng);
  conv_on_every_isa<double>({{1, 4, 8, 40}, {4, 1, 3, 3}, 4, 1, 1, 1}, rng);
  conv_on_every_isa<double>({{1, 5, 8, 20}, {9, 5, 3, 3}, 1, 1, 2, 2}, rng);
}

TEST_CASE("kernel ISA: MatMul and Gemm give the portable results on every instruction set") {
  std::mt19937 rng(8);
  for (std::int64_t m : {1, 2, 5, 16, 33})
    for (std::int64_t n : {1, 7, 33, 130})
      for (std::int64_t kk : {3, 64, 300}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(kk);
        const rv::tensor a = random_tensor<float>({m, kk}, rng), b = random_tensor<float>({kk, n}, rng);
        same_on_every_isa<float>({m, n}, [&](const rv::tensor& y) { return k::MatMul_out(a, b, y); });
        // transB (nn.Linear's weight): the dot products for few rows, the panels otherwise.
        const rv::tensor bt = random_tensor<float>({n, kk}, rng), c = random_tensor<float>({n}, rng);
        same_on_every_isa<float>({m, n}, [&](const rv::tensor& y) { return k::Gemm_out(a, bt, c, 0.5, 2.0, 0, 1, y); });
      }
  const rv::tensor a = random_tensor<double>({3, 2, 17, 40}, rng), b = random_tensor<double>({2, 40, 23}, rng);
  same_on_every_isa<double>({3, 2, 17, 23}, [&](const rv::tensor& y) { return k::MatMul_out(a, b, y); });
  const rv::tensor ia = random_tensor<std::int32_t>({9, 70}, rng), ib = random_tensor<std::int32_t>({70, 45}, rng);
  same_on_every_isa<std::int32_t>({9, 45}, [&](const rv::tensor& y) { return k::MatMul_out(ia, ib, y); });
}
