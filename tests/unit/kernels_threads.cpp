// SPDX-License-Identifier: Apache-2.0
// relaxvm/kernels/threads.hpp: the kernels' threads. Conv (3x3, 1x1, strided, depthwise, groups,
// few output channels, batches, float64), Gemm (panels, transposes, few rows, dot products,
// integers), MatMul (batched, broadcast) and the poolings give bit-identical results on 1, 2, 3 and 4 threads,
// on shapes that reach the threaded path and ones below its threshold; calls from several
// std::threads at once and a kernel called inside a part share the pool without mixing; the
// option's environment value is parsed strictly (anything but 1 to 64 keeps the default).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <relaxvm.hpp>
#include <relaxvm/kernels/conv.hpp>
#include <relaxvm/kernels/linalg.hpp>
#include <relaxvm/kernels/pool.hpp>
#include <relaxvm/kernels/threads.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../support/random_tensor.hpp"

namespace rv = relaxvm;
namespace k = relaxvm::kernels;

namespace {

using relaxvm_test::dims_t;
using relaxvm_test::random_tensor;
using relaxvm_test::shp;

bool same_bytes(const rv::tensor& a, const rv::tensor& b) {
  return a.numel() == b.numel() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), static_cast<std::size_t>(a.numel()) * a.dtype().bits / 8) == 0;
}

// Sets the threads for the scope, and one thread again after it.
struct threads_scope {
  explicit threads_scope(int n) { REQUIRE(k::set_kernel_threads(n) == n); }
  ~threads_scope() { k::set_kernel_threads(1); }
};

// f(out) on one thread, then on 2, 3 and 4: every result must be the same bytes.
template <class T, class F>
void same_on_every_width(const dims_t& out_dims, F&& f) {
  const rv::tensor want = rv::tensor::empty(shp(out_dims), rv::dtype_of<T>());
  {
    threads_scope one(1);
    const rv::status st = f(want);
    REQUIRE_MESSAGE(st.ok(), (st.ok() ? std::string() : std::string(st.error().message())));
  }
  for (int n : {2, 3, 4}) {
    CAPTURE(n);
    threads_scope scope(n);
    CHECK(k::detail::kernel_pool_workers() == n - 1);
    const rv::tensor got = rv::tensor::empty(shp(out_dims), rv::dtype_of<T>());
    for (std::int64_t i = 0; i < got.numel(); ++i) got.data<T>()[i] = T(7);  // every element must be written
    const rv::status st = f(got);
    REQUIRE(st.ok());
    CHECK(same_bytes(want, got));
  }
}

struct conv_case {
  const char* name;
  std::int64_t n, c, h, w, m, kh, kw, stride, pad, group;
  bool threaded;  // large enough for the threads (kernels::detail::parallel_min_work)
};

template <class T>
void conv_same(const conv_case& c) {
  CAPTURE(c.name);
  std::mt19937 rng(17);
  const rv::tensor x = random_tensor<T>({c.n, c.c, c.h, c.w}, rng);
  const rv::tensor w = random_tensor<T>({c.m, c.c / c.group, c.kh, c.kw}, rng);
  const rv::tensor b = random_tensor<T>({c.m}, rng);
  const std::int64_t oh = (c.h + 2 * c.pad - c.kh) / c.stride + 1, ow = (c.w + 2 * c.pad - c.kw) / c.stride + 1;
  const double work = static_cast<double>(c.n * c.m * oh * ow * (c.c / c.group) * c.kh * c.kw);
  CHECK((work >= k::detail::parallel_min_work) == c.threaded);
  same_on_every_width<T>({c.n, c.m, oh, ow}, [&](const rv::tensor& y) {
    return k::Conv_out(x, w, b, k::notset, c.group, shp({c.stride, c.stride}), shp({c.pad, c.pad, c.pad, c.pad}), shp({}), y);
  });
}

const conv_case conv_cases[] = {
    {"3x3 32->64 20x20 pad 1", 1, 32, 20, 20, 64, 3, 3, 1, 1, 1, true},
    {"3x3 256->256 7x7 pad 1 (cut by output channels)", 1, 256, 7, 7, 256, 3, 3, 1, 1, 1, true},
    {"1x1 64->96 28x28", 1, 64, 28, 28, 96, 1, 1, 1, 0, 1, true},
    {"3x3/2 48->64 30x30 pad 1", 1, 48, 30, 30, 64, 3, 3, 2, 1, 1, true},
    {"7x7/2 3->16 100x100 pad 3", 1, 3, 100, 100, 16, 7, 7, 2, 3, 1, true},
    {"depthwise 3x3 256 56x56 pad 1", 1, 256, 56, 56, 256, 3, 3, 1, 1, 256, true},
    {"depthwise 3x3/2 512 57x57 pad 1", 1, 512, 57, 57, 512, 3, 3, 2, 1, 512, true},
    {"groups of 16: 3x3 64->64 28x28 group 4", 1, 64, 28, 28, 64, 3, 3, 1, 1, 4, true},
    {"3 output channels: 3x3 64->3 71x71 (cut by output rows)", 1, 64, 71, 71, 3, 3, 3, 1, 1, 1, true},
    {"batch 3: 3x3 16->24 30x30 pad 1", 3, 16, 30, 30, 24, 3, 3, 1, 1, 1, true},
    {"small: 3x3 8->8 9x9 pad 1", 1, 8, 9, 9, 8, 3, 3, 1, 1, 1, false},
    {"small depthwise 3x3 16 14x14", 1, 16, 14, 14, 16, 3, 3, 1, 1, 16, false},
};

}  // namespace

// First: the environment's value is read at the first kernel call (meson runs this file with
// RELAXVM_KERNEL_THREADS=3 and with a bad value too).
TEST_CASE("kernel threads: RELAXVM_KERNEL_THREADS sets the default, a bad value keeps 1") {
  const int env = k::detail::parse_kernel_threads(std::getenv("RELAXVM_KERNEL_THREADS"));
  CHECK(k::kernel_threads() == (env > 0 ? env : 1));
  CHECK(k::detail::kernel_pool_workers() == 0);  // made at the first large call, not before
  std::mt19937 rng(3);
  const rv::tensor a = random_tensor<float>({256, 256}, rng), b = random_tensor<float>({256, 256}, rng);
  const rv::tensor y = rv::tensor::empty(shp({256, 256}), rv::dtype::float32());
  REQUIRE(k::MatMul_out(a, b, y).ok());
  CHECK(k::detail::kernel_pool_workers() == (env > 1 ? env - 1 : 0));
  k::set_kernel_threads(1);
  CHECK(k::detail::kernel_pool_workers() == 0);
}

TEST_CASE("kernel threads: the environment value's parsing") {
  using k::detail::parse_kernel_threads;
  CHECK(parse_kernel_threads("1") == 1);
  CHECK(parse_kernel_threads("4") == 4);
  CHECK(parse_kernel_threads("64") == 64);
  CHECK(parse_kernel_threads("004") == 4);
  for (const char* bad : {"", "0", "65", "100000000000000000000", "-2", "+2", " 2", "2 ", "2x", "two", "1.5"}) {
    CAPTURE(bad);
    CHECK(parse_kernel_threads(bad) == 0);
  }
  CHECK(parse_kernel_threads(nullptr) == 0);
}

TEST_CASE("kernel threads: set_kernel_threads clamps and makes or joins the workers") {
  CHECK(k::set_kernel_threads(0) == 1);
  CHECK(k::kernel_threads() == 1);
  CHECK(k::set_kernel_threads(-5) == 1);
  CHECK(k::set_kernel_threads(1000) == k::max_kernel_threads);
  CHECK(k::detail::kernel_pool_workers() == k::max_kernel_threads - 1);
  CHECK(k::set_kernel_threads(3) == 3);
  CHECK(k::kernel_threads() == 3);
  CHECK(k::detail::kernel_pool_workers() == 2);
  CHECK(k::set_kernel_threads(1) == 1);
  CHECK(k::detail::kernel_pool_workers() == 0);
}

TEST_CASE("kernel threads: the workers take parts while the caller runs its own") {
  // Two parts that each wait (up to 20 s) for the other to start finish only if a worker runs one
  // while the caller runs the other: the pool is really parallel.
  threads_scope scope(2);
  std::atomic<int> started{0};
  std::atomic<bool> both{true};
  std::thread::id ran_on[2];
  auto part = [&](std::int64_t i) {
    ran_on[i] = std::this_thread::get_id();
    started.fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (started.load() < 2)
      if (std::chrono::steady_clock::now() > until) {
        both = false;
        return;
      }
  };
  k::detail::run_parts(2, part);
  CHECK(both.load());
  CHECK(ran_on[0] != ran_on[1]);
}

TEST_CASE("kernel threads: Conv is bit-identical on 1 to 4 threads") {
  for (const conv_case& c : conv_cases) conv_same<float>(c);
  conv_same<double>({"float64 3x3 32->40 24x24 pad 1", 1, 32, 24, 24, 40, 3, 3, 1, 1, 1, true});
  conv_same<double>({"float64 depthwise 3x3 192 40x40", 1, 192, 40, 40, 192, 3, 3, 1, 1, 192, true});
}

TEST_CASE("kernel threads: Gemm and MatMul are bit-identical on 1 to 4 threads") {
  std::mt19937 rng(29);
  // Panels (cut by columns, or by rows when the columns are few), both transposes, a bias.
  for (const dims_t& mnk : {dims_t{160, 192, 200}, dims_t{517, 33, 300}, dims_t{100, 700, 90}, dims_t{20, 1000, 300}}) {
    const std::int64_t m = mnk[0], n = mnk[1], kk = mnk[2];
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(kk);
    const rv::tensor a = random_tensor<float>({m, kk}, rng), at = random_tensor<float>({kk, m}, rng);
    const rv::tensor b = random_tensor<float>({kk, n}, rng), bt = random_tensor<float>({n, kk}, rng);
    const rv::tensor c = random_tensor<float>({n}, rng);
    same_on_every_width<float>({m, n}, [&](const rv::tensor& y) { return k::MatMul_out(a, b, y); });
    same_on_every_width<float>({m, n}, [&](const rv::tensor& y) { return k::Gemm_out(at, bt, c, 0.5, 2.0, 1, 1, y); });
    same_on_every_width<float>({m, n}, [&](const rv::tensor& y) { return k::Gemm_out(a, bt, c, 1.0, 1.0, 0, 1, y); });
  }
  // A row or two against a large B (strips of C in place) and a few rows against a transposed B
  // (dot products), each over 2^21 multiply-adds (this test's threshold: tests/meson.build).
  {
    const rv::tensor a = random_tensor<float>({2, 2048}, rng), b = random_tensor<float>({2048, 1000}, rng);
    same_on_every_width<float>({2, 1000}, [&](const rv::tensor& y) { return k::MatMul_out(a, b, y); });
    const rv::tensor a4 = random_tensor<float>({5, 1024}, rng), bt = random_tensor<float>({1001, 1024}, rng);
    same_on_every_width<float>({5, 1001}, [&](const rv::tensor& y) { return k::Gemm_out(a4, bt, rv::tensor(), 1.0, 0.0, 0, 1, y); });
  }
  // Integers (exact either way) and float64.
  {
    const rv::tensor a = random_tensor<std::int32_t>({130, 140}, rng), b = random_tensor<std::int32_t>({140, 150}, rng);
    same_on_every_width<std::int32_t>({130, 150}, [&](const rv::tensor& y) { return k::MatMul_out(a, b, y); });
    const rv::tensor ad = random_tensor<double>({150, 160}, rng), bd = random_tensor<double>({160, 170}, rng);
    same_on_every_width<double>({150, 170}, [&](const rv::tensor& y) { return k::MatMul_out(ad, bd, y); });
  }
  // Batched: many small products shared out whole, two large ones cut each, B broadcast over
  // the batch, and a batch below the threshold.
  {
    const rv::tensor a = random_tensor<float>({4, 8, 64, 64}, rng), b = random_tensor<float>({4, 8, 64, 64}, rng);
    same_on_every_width<float>({4, 8, 64, 64}, [&](const rv::tensor& y) { return k::MatMul_out(a, b, y); });
    const rv::tensor a2 = random_tensor<float>({2, 200, 150}, rng), b2 = random_tensor<float>({150, 180}, rng);
    same_on_every_width<float>({2, 200, 180}, [&](const rv::tensor& y) { return k::MatMul_out(a2, b2, y); });
    const rv::tensor a3 = random_tensor<float>({3, 1, 64, 80}, rng), b3 = random_tensor<float>({5, 80, 96}, rng);
    same_on_every_width<float>({3, 5, 64, 96}, [&](const rv::tensor& y) { return k::MatMul_out(a3, b3, y); });
    const rv::tensor a4 = random_tensor<float>({7, 9, 10}, rng), b4 = random_tensor<float>({7, 10, 11}, rng);
    same_on_every_width<float>({7, 9, 11}, [&](const rv::tensor& y) { return k::MatMul_out(a4, b4, y); });
  }
}

TEST_CASE("kernel threads: MaxPool (with and without indices) and AveragePool are bit-identical on 1 to 4 threads") {
  std::mt19937 rng(5);
  for (const dims_t& xd : {dims_t{1, 128, 112, 112}, dims_t{2, 3, 60, 60}}) {
    CAPTURE(xd[1]);
    const rv::tensor x = random_tensor<float>(xd, rng);
    const std::int64_t oh = (xd[2] + 2 - 3) / 2 + 1;
    const dims_t od{xd[0], xd[1], oh, oh};
    const rv::shape ks{3, 3}, st{2, 2}, pads{1, 1, 1, 1}, none{};
    same_on_every_width<float>(od, [&](const rv::tensor& y) { return k::MaxPool_out(x, k::notset, 0, 0, ks, st, pads, none, y, rv::tensor()); });
    const rv::tensor values = rv::tensor::empty(shp(od), rv::dtype::float32());
    same_on_every_width<std::int64_t>(od, [&](const rv::tensor& idx) { return k::MaxPool_out(x, k::notset, 0, 1, ks, st, pads, none, values, idx); });
    same_on_every_width<float>(od, [&](const rv::tensor& y) { return k::AveragePool_out(x, k::notset, 0, 1, ks, st, pads, none, y); });
  }
}

TEST_CASE("kernel threads: calls from several threads at once, and a kernel inside a part") {
  std::mt19937 rng(41);
  const rv::tensor x = random_tensor<float>({1, 32, 40, 40}, rng), w = random_tensor<float>({48, 32, 3, 3}, rng);
  const rv::tensor bias = random_tensor<float>({48}, rng);
  const rv::tensor a = random_tensor<float>({160, 200}, rng), b = random_tensor<float>({200, 170}, rng);
  const auto conv = [&](const rv::tensor& y) {
    return k::Conv_out(x, w, bias, k::notset, 1, shp({1, 1}), shp({1, 1, 1, 1}), shp({}), y);
  };
  const rv::tensor conv_want = rv::tensor::empty(shp({1, 48, 40, 40}), rv::dtype::float32());
  const rv::tensor mm_want = rv::tensor::empty(shp({160, 170}), rv::dtype::float32());
  REQUIRE(conv(conv_want).ok());
  REQUIRE(k::MatMul_out(a, b, mm_want).ok());

  threads_scope scope(3);
  constexpr int callers = 4, calls = 25;
  std::vector<int> wrong(callers, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t)
    threads.emplace_back([&, t] {
      const rv::tensor y = rv::tensor::empty(shp({1, 48, 40, 40}), rv::dtype::float32());
      const rv::tensor z = rv::tensor::empty(shp({160, 170}), rv::dtype::float32());
      for (int i = 0; i < calls; ++i) {
        if (!conv(y).ok() || !same_bytes(y, conv_want)) ++wrong[static_cast<std::size_t>(t)];
        if (!k::MatMul_out(a, b, z).ok() || !same_bytes(z, mm_want)) ++wrong[static_cast<std::size_t>(t)];
      }
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < callers; ++t) CHECK(wrong[static_cast<std::size_t>(t)] == 0);

  // Parts that call a kernel themselves: the inner calls find the pool busy and run alone.
  std::vector<rv::tensor> outs;
  for (int i = 0; i < 6; ++i) outs.push_back(rv::tensor::empty(shp({160, 170}), rv::dtype::float32()));
  std::vector<int> ok(outs.size(), 0);
  auto part = [&](std::int64_t i) {
    const std::size_t j = static_cast<std::size_t>(i);
    ok[j] = k::MatMul_out(a, b, outs[j]).ok() && same_bytes(outs[j], mm_want);
  };
  k::detail::run_parts(static_cast<std::int64_t>(outs.size()), part);
  for (int v : ok) CHECK(v == 1);
}

// Last in the file: the pool is left on, its workers asleep, when the program exits; the
// static's destructor joins them (ASan's leak check and TSan run after it).
TEST_CASE("kernel threads: the pool left on at exit") {
  std::mt19937 rng(7);
  const rv::tensor a = random_tensor<float>({200, 200}, rng), b = random_tensor<float>({200, 200}, rng);
  const rv::tensor y = rv::tensor::empty(shp({200, 200}), rv::dtype::float32());
  REQUIRE(k::set_kernel_threads(2) == 2);
  REQUIRE(k::MatMul_out(a, b, y).ok());
  CHECK(k::detail::kernel_pool_workers() == 1);
}
