// SPDX-License-Identifier: Apache-2.0
// The portable convolution kernel (relaxvm/kernels/conv.hpp, onnx.Conv) on the float32 NCHW
// shapes ResNet18 and MobileNetV2 spend their time in, batch 1, one thread: best and median ms
// and GFLOP/s (2 * multiply-adds). Each result is checked against a naive 7-loop convolution.
//
//   g++ -std=c++20 -O3 -march=native -DNDEBUG -Iinclude bench/conv.cpp -o bench_conv
//   bench_conv [--quick] [--runs N] [--threads T]
//
// --threads T: each run is timed on one thread and then on T (kernels::set_kernel_threads,
// kernels/threads.hpp), alternating, and both are reported with the ratio of the medians; the
// T-thread output must equal the one-thread output bit for bit.
//
// /work/shared/reference/onnx.md section 6 has the reference figures for the first case (3x3,
// 1x64x56x56 to 64 channels, pad 1): relaxvm's old im2col + i-k-j 13.5 ms, direct convolutions
// 3.6-5.3 ms, im2col + Eigen 3.6 ms, torch 1.13 with oneDNN 1.25 ms.
#include <relaxvm.hpp>
#include <relaxvm/kernels/conv.hpp>
#include <relaxvm/kernels/threads.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"

namespace rv = relaxvm;
namespace k = relaxvm::kernels;

namespace {

struct conv_case {
  const char* name;
  std::int64_t c, h, w, m, kh, kw, stride, pad, group;
};

const conv_case bench_cases[] = {
    {"3x3 64->64 56x56 pad 1 (the reference case)", 64, 56, 56, 64, 3, 3, 1, 1, 1},
    {"ResNet18 conv1 7x7/2 3->64 224x224 pad 3", 3, 224, 224, 64, 7, 7, 2, 3, 1},
    {"ResNet18 3x3/2 128->256 28x28 pad 1", 128, 28, 28, 256, 3, 3, 2, 1, 1},
    {"ResNet18 3x3 512->512 7x7 pad 1", 512, 7, 7, 512, 3, 3, 1, 1, 1},
    {"MobileNetV2 1x1 24->144 56x56", 24, 56, 56, 144, 1, 1, 1, 0, 1},
    {"MobileNetV2 1x1 144->24 56x56", 144, 56, 56, 24, 1, 1, 1, 0, 1},
    {"MobileNetV2 1x1 320->1280 7x7", 320, 7, 7, 1280, 1, 1, 1, 0, 1},
    {"MobileNetV2 depthwise 3x3 144 56x56 pad 1", 144, 56, 56, 144, 3, 3, 1, 1, 144},
    {"MobileNetV2 depthwise 3x3/2 144 56x56 pad 1", 144, 56, 56, 144, 3, 3, 2, 1, 144},
    // Small ones, around the threads' threshold (kernels::detail::parallel_min_work).
    {"small 3x3 16->16 28x28 pad 1", 16, 28, 28, 16, 3, 3, 1, 1, 1},
    {"small 3x3 32->32 14x14 pad 1", 32, 14, 14, 32, 3, 3, 1, 1, 1},
    {"small 1x1 64->64 14x14", 64, 14, 14, 64, 1, 1, 1, 0, 1},
    {"small depthwise 3x3 96 28x28 pad 1", 96, 28, 28, 96, 3, 3, 1, 1, 96},
};

rv::tensor filled(std::vector<std::int64_t> dims, std::mt19937& rng) {
  rv::tensor t = rv::tensor::empty(rv::shape(std::span<const std::int64_t>(dims)), rv::dtype::float32());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
  return t;
}

// A case's inputs (random, in the order x, w, b) and attributes, and its output's size.
struct prepared {
  prepared(const conv_case& c, std::mt19937& rng)
      : oh((c.h + 2 * c.pad - c.kh) / c.stride + 1), ow((c.w + 2 * c.pad - c.kw) / c.stride + 1),
        x(filled({1, c.c, c.h, c.w}, rng)), w(filled({c.m, c.c / c.group, c.kh, c.kw}, rng)), b(filled({c.m}, rng)),
        strides{c.stride, c.stride}, pads{c.pad, c.pad, c.pad, c.pad}, group(c.group), m(c.m) {}
  rv::tensor output() const { return rv::tensor::empty(rv::shape{1, m, oh, ow}, rv::dtype::float32()); }
  /// One Conv into `y`, timed (ms appended to `ms`); false (the error printed) when it fails.
  bool timed(const char* name, const rv::tensor& y, std::vector<double>& ms) const {
    const auto t0 = bench::clock_type::now();
    const rv::status st = run(y);
    const auto t1 = bench::clock_type::now();
    if (!st.ok()) {
      std::printf("%s: %s\n", name, std::string(st.error().message()).c_str());
      return false;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    return true;
  }
  rv::status run(const rv::tensor& y) const { return k::Conv_out(x, w, b, k::notset, group, strides, pads, dil, y); }

  std::int64_t oh, ow;
  rv::tensor x, w, b;
  rv::shape strides, pads, dil;
  std::int64_t group, m;
};

// The naive convolution (NCHW, one image), for the check.
void naive(const conv_case& c, const float* x, const float* w, const float* b, float* y, std::int64_t oh_n, std::int64_t ow_n) {
  const std::int64_t cg = c.c / c.group, mg = c.m / c.group;
  for (std::int64_t m = 0; m < c.m; ++m) {
    const std::int64_t g = m / mg;
    for (std::int64_t oh = 0; oh < oh_n; ++oh)
      for (std::int64_t ow = 0; ow < ow_n; ++ow) {
        double acc = b[m];
        for (std::int64_t ic = 0; ic < cg; ++ic)
          for (std::int64_t kh = 0; kh < c.kh; ++kh)
            for (std::int64_t kw = 0; kw < c.kw; ++kw) {
              const std::int64_t ih = oh * c.stride - c.pad + kh, iw = ow * c.stride - c.pad + kw;
              if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
              acc += static_cast<double>(x[((g * cg + ic) * c.h + ih) * c.w + iw]) * w[((m * cg + ic) * c.kh + kh) * c.kw + kw];
            }
        y[(m * oh_n + oh) * ow_n + ow] = static_cast<float>(acc);
      }
  }
}

// Each case timed alternately on one thread and on `threads` (wall clock): best and median ms of
// each, and the ratio of the medians (one thread over T: the speed-up).
int compare_threads(int runs, int threads) {
  std::mt19937 rng(42);
  std::printf("kernels: %s, 1 thread against %d (alternating runs)\n", k::kernel_isa_name(k::kernel_isa_in_use()), threads);
  std::printf("%-48s %9s %9s %9s %9s %9s\n", "case", "1: best", "1: median", "T: best", "T: median", "speed-up");
  for (const conv_case& c : bench_cases) {
    const prepared in(c, rng);
    const rv::tensor y1 = in.output(), yt = in.output();
    std::vector<double> ms[2];
    for (int r = 0; r < runs; ++r)
      for (int side = 0; side < 2; ++side) {
        k::set_kernel_threads(side == 0 ? 1 : threads);
        const rv::tensor& y = side == 0 ? y1 : yt;
        (void)in.run(y);  // untimed: new workers start
        if (!in.timed(c.name, y, ms[side])) return 1;
      }
    k::set_kernel_threads(1);
    if (std::memcmp(y1.raw_data(), yt.raw_data(), static_cast<std::size_t>(y1.nbytes())) != 0) {
      std::printf("%s: the output on %d threads differs from one thread's\n", c.name, threads);
      return 1;
    }
    const double m1 = bench::median(ms[0]), mt = bench::median(ms[1]);
    std::printf("%-48s %9.3f %9.3f %9.3f %9.3f %8.2fx\n", c.name, *std::min_element(ms[0].begin(), ms[0].end()), m1,
                *std::min_element(ms[1].begin(), ms[1].end()), mt, m1 / mt);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 41, threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) runs = 3;
    else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
  }
  if (threads > 1) return compare_threads(runs, threads);
  std::mt19937 rng(42);
  // Which copy of the kernels runs (kernels/isa.hpp; RELAXVM_KERNEL_ISA=portable for the baseline one).
  std::printf("kernels: %s\n", k::kernel_isa_name(k::kernel_isa_in_use()));
  std::printf("%-48s %9s %9s %9s %9s %9s\n", "case", "MFLOP", "best ms", "GFLOP/s", "median ms", "GFLOP/s");
  int bad = 0;
  for (const conv_case& c : bench_cases) {
    const prepared in(c, rng);
    const rv::tensor y = in.output();
    const std::int64_t oh = in.oh, ow = in.ow;
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r)
      if (!in.timed(c.name, y, ms)) return 1;
    std::vector<float> want(static_cast<std::size_t>(y.numel()));
    naive(c, in.x.data<float>(), in.w.data<float>(), in.b.data<float>(), want.data(), oh, ow);
    double err = 0;
    for (std::size_t i = 0; i < want.size(); ++i) err = std::fmax(err, std::fabs(want[i] - y.data<float>()[i]) / (1 + std::fabs(want[i])));
    if (err > 1e-4) {
      std::printf("%s: differs from the naive convolution by %g\n", c.name, err);
      ++bad;
    }
    const double mflop = 2.0 * static_cast<double>(c.m * oh * ow) * static_cast<double>(c.c / c.group * c.kh * c.kw) / 1e6;
    const double best = *std::min_element(ms.begin(), ms.end()), med = bench::median(ms);
    std::printf("%-48s %9.1f %9.3f %9.1f %9.3f %9.1f\n", c.name, mflop, best, mflop / best, med, mflop / med);
  }
  return bad == 0 ? 0 : 1;
}
