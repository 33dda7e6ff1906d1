// SPDX-License-Identifier: Apache-2.0
// One executable and one registry, made once and shared read-only by 8 threads; each thread makes
// its own virtual_machine and invokes a program 10,000 times, and every result is checked exactly
// against a value computed on the main thread beforehand. The kernels' pool (kernels/threads.hpp)
// is shared by 8 threads' Conv and MatMul calls. tools/check.sh also runs this file under
// ThreadSanitizer (docs/threads.md); meson runs it again with RELAXVM_KERNEL_THREADS=2.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <relaxvm.hpp>
#include <relaxvm/kernels/conv.hpp>
#include <relaxvm/kernels/linalg.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../support/programs.hpp"

#if RELAXVM_TEST_MLP
#include "../../examples/mlp_program.hpp"
#endif

namespace rv = relaxvm;

namespace {

constexpr int num_threads = 8;
constexpr int calls_per_thread = 10000;
constexpr std::int64_t max_n = 4;  // inputs have n = 1 + (i % 4) elements (rows for the MLP)
constexpr std::int64_t num_k = 13;  // k = 0..12: fact(12) fits int64

std::int64_t n_of(int i) { return 1 + i % max_n; }
std::int64_t k_of(int t, int i) { return (7 * t + i) % num_k; }

// The tensor constant of the program: main adds c[i % 8] to element i.
constexpr std::array<std::int64_t, 8> c_values{3, -1, 4, -1, 5, -9, 2, -6};

std::int64_t fact(std::int64_t n) { return n < 2 ? 1 : n * fact(n - 1); }

rv::registry make_registry() {
  rv::registry reg;
  reg.def("test.lt", [](std::int64_t a, std::int64_t b) { return a < b; });
  reg.def("test.add", [](std::int64_t a, std::int64_t b) { return a + b; });
  reg.def("test.sub", [](std::int64_t a, std::int64_t b) { return a - b; });
  reg.def("test.mul", [](std::int64_t a, std::int64_t b) { return a * b; });
  // out[i] = x[i] * k + c[i % len(c)], into a tensor the program allocated (destination passing).
  reg.def("test.axpy_out", [](const rv::tensor& x, const rv::tensor& c, std::int64_t k, const rv::tensor& out) {
    const auto* xs = x.data<const std::int64_t>();
    const auto* cs = c.data<const std::int64_t>();
    auto* o = out.data<std::int64_t>();
    for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = xs[i] * k + cs[i % c.numel()];
  });
  reg.def("test.sum", [](const rv::tensor& t) {
    std::int64_t s = 0;
    for (std::int64_t i = 0; i < t.numel(); ++i) s += t.data<const std::int64_t>()[i];
    return s;
  });
  return reg;
}

// main(x: Tensor[(n,), int64], k: int64) -> int64 = sum(x * k + c) + fact(k), where
//   fact(n) = n < 2 ? 1 : n * fact(n - 1)    recursive VM-to-VM calls
//   add_fact(s, k) = s + fact(k)             called through a closure capturing k
// main checks and matches x's shape on the shape heap, allocates the tensor x * k + c from its
// storage there, puts (x, sum) in a tuple and takes the sum back out.
rv::executable make_program() {
  using rv::builtins::make_code;
  using rv::builtins::match_code;
  constexpr auto imm = [](auto code) { return static_cast<std::int64_t>(code); };
  rv::exec_builder b;
  relaxvm_test::programs::add_factorial(b);
  {
    auto fn = b.function("add_fact", 2, {"s", "k"});
    b.emit_call("fact", {b.r(1)}, b.r(2));
    b.emit_call("test.add", {b.r(0), b.r(2)}, b.r(3));
    b.emit_ret(b.r(3));
  }
  {
    enum : std::int64_t { x, k, heap, bytes, shp, st, y, sum, pair, sum2, clo, out };
    const auto ctx = b.c(b.add_string("ErrorContext(fn=main, loc=param[0], param=x) "));
    const auto i64 = b.c(b.add_dtype(rv::dtype::int64()));
    const auto u8 = b.c(b.add_dtype(rv::dtype::uint8()));
    const auto global = b.c(b.add_string("global"));
    const auto c = b.c(b.add_tensor<std::int64_t>(c_values, std::array<std::int64_t, 1>{c_values.size()}));
    auto fn = b.function("main", 2, {"x", "k"});
    b.emit_call("vm.builtin.alloc_shape_heap", {b.vm_state(), b.imm(2)}, b.r(heap));
    b.emit_call("vm.builtin.check_tensor_info", {b.r(x), b.imm(1), i64, ctx});
    b.emit_call("vm.builtin.match_shape",
                {b.r(x), b.r(heap), b.imm(1), b.imm(imm(match_code::store_to_heap)), b.imm(0), ctx});
    b.emit_call("vm.builtin.shape_arith", {b.r(heap), b.imm(imm(rv::builtins::arith_op::mul)), b.imm(1),
                                           b.imm(imm(make_code::load_shape)), b.imm(0), b.imm(imm(make_code::use_imm)),
                                           b.imm(8)});
    b.emit_call("vm.builtin.make_shape", {b.r(heap), b.imm(1), b.imm(imm(make_code::load_shape)), b.imm(1)}, b.r(bytes));
    b.emit_call("vm.builtin.make_shape", {b.r(heap), b.imm(1), b.imm(imm(make_code::load_shape)), b.imm(0)}, b.r(shp));
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.r(bytes), b.imm(0), u8, global}, b.r(st));
    b.emit_call("vm.builtin.alloc_tensor", {b.r(st), b.imm(0), b.r(shp), i64}, b.r(y));
    b.emit_call("test.axpy_out", {b.r(x), c, b.r(k), b.r(y)});
    b.emit_call("test.sum", {b.r(y)}, b.r(sum));
    b.emit_call("vm.builtin.kill_object", {b.r(y)}, b.r(y));
    b.emit_call("vm.builtin.kill_object", {b.r(st)}, b.r(st));
    b.emit_call("vm.builtin.make_tuple", {b.r(x), b.r(sum)}, b.r(pair));  // holds a reference to x
    b.emit_call("vm.builtin.tuple_getitem", {b.r(pair), b.imm(1)}, b.r(sum2));
    b.emit_call("vm.builtin.make_closure", {b.f("add_fact"), b.r(k)}, b.r(clo));
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(clo), b.r(sum2)}, b.r(out));
    b.emit_ret(b.r(out));
  }
  return b.get();
}

// x[i] = base + 10 * n + i for an input of n elements.
rv::tensor make_x(std::int64_t base, std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = base + 10 * n + i;
  return rv::tensor::from<std::int64_t>(v, rv::shape{n});
}

// What main(make_x(base, n), k) returns, computed directly.
std::int64_t expected_main(std::int64_t base, std::int64_t n, std::int64_t k) {
  std::int64_t s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += (base + 10 * n + i) * k + c_values[static_cast<std::size_t>(i % 8)];
  return s + fact(k);
}

// Every result must match; the first mismatch is kept for the report.
struct tally {
  std::atomic<std::int64_t> checked{0}, mismatches{0};
  std::mutex mutex;
  std::string first;

  void record(bool ok, const std::string& what) {
    checked.fetch_add(1, std::memory_order_relaxed);
    if (ok) return;
    mismatches.fetch_add(1, std::memory_order_relaxed);
    const std::lock_guard<std::mutex> lock(mutex);
    if (first.empty()) first = what;
  }
  void check() {
    INFO("first mismatch: " << first);
    CHECK(mismatches.load() == 0);
    CHECK(checked.load() == std::int64_t{num_threads} * calls_per_thread);
  }
};

// 8 threads, each with its own VM over `exe` (made from `reg` and `opts`, all shared), each calling
// check(main, thread, iteration, tally) 10,000 times.
template <class Check>
void run_threads(const rv::executable& exe, const rv::registry& reg, const rv::vm_options& opts, Check check) {
  tally results;
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t)
    threads.emplace_back([&, t] {
      rv::result<rv::virtual_machine> vm = rv::virtual_machine::create(exe, reg, opts);
      if (!vm.ok()) {
        for (int i = 0; i < calls_per_thread; ++i) results.record(false, std::string(vm.error().message()));
        return;
      }
      const rv::vm_function main = vm->function("main");
      for (int i = 0; i < calls_per_thread; ++i) check(main, t, i, results);
    });
  for (std::thread& th : threads) th.join();
  results.check();
}

// Calls main(x, k) and compares with `expected`.
void check_call(const rv::vm_function& main, const rv::tensor& x, std::int64_t k, std::int64_t expected, tally& out) {
  const std::array<rv::value, 2> args{rv::value(x), rv::value(k)};
  rv::result<rv::value> r = main.try_call(args);
  if (!r.ok()) return out.record(false, std::string(r.error().message()));
  const bool ok = r->kind() == rv::value_kind::int64 && r->as<std::int64_t>() == expected;
  out.record(ok, ok ? std::string() : "main(n = " + std::to_string(x.numel()) + ", k = " + std::to_string(k) + ") = " +
                                          rv::to_string(*r) + ", expected " + std::to_string(expected));
}

// The program, checked once on the main thread against expected_main.
struct builtin_case {
  rv::registry reg = make_registry();
  rv::executable exe = make_program();

  builtin_case() {
    rv::virtual_machine vm(exe, reg);
    for (std::int64_t base : {0, 1000})
      for (std::int64_t n = 1; n <= max_n; ++n)
        for (std::int64_t k = 0; k < num_k; ++k)
          REQUIRE(vm["main"](make_x(base, n), k).as<std::int64_t>() == expected_main(base, n, k));
  }
};

}  // namespace

TEST_CASE("8 threads x 10,000 calls over one executable: recursion, closures, tuples, constants, shape heap") {
  const builtin_case p;
  // Expected results per thread, n and k, computed here before any thread starts.
  std::vector<std::int64_t> expected(static_cast<std::size_t>(num_threads * max_n * num_k));
  auto at = [](int t, std::int64_t n, std::int64_t k) { return static_cast<std::size_t>((t * max_n + n - 1) * num_k + k); };
  for (int t = 0; t < num_threads; ++t)
    for (std::int64_t n = 1; n <= max_n; ++n)
      for (std::int64_t k = 0; k < num_k; ++k) expected[at(t, n, k)] = expected_main(1000 * t, n, k);
  run_threads(p.exe, p.reg, {}, [&](const rv::vm_function& main, int t, int i, tally& out) {
    // Each thread makes its own inputs (plain reference counts).
    const std::int64_t n = n_of(i), k = k_of(t, i);
    check_call(main, make_x(1000 * t, n), k, expected[at(t, n, k)], out);
  });
}

TEST_CASE("tensors made on the main thread and share()d are arguments of every thread's VM at once") {
  const builtin_case p;
  std::vector<rv::tensor> xs;
  std::vector<std::int64_t> expected(static_cast<std::size_t>(max_n * num_k));
  for (std::int64_t n = 1; n <= max_n; ++n) {
    xs.push_back(make_x(0, n));
    xs.back().share();  // the threads copy and drop handles to it (the program puts it in a tuple)
    for (std::int64_t k = 0; k < num_k; ++k) expected[static_cast<std::size_t>((n - 1) * num_k + k)] = expected_main(0, n, k);
  }
  run_threads(p.exe, p.reg, {}, [&](const rv::vm_function& main, int t, int i, tally& out) {
    const std::int64_t n = n_of(i), k = k_of(t, i);
    check_call(main, xs[static_cast<std::size_t>(n - 1)], k, expected[static_cast<std::size_t>((n - 1) * num_k + k)], out);
  });
  for (const rv::tensor& x : xs) CHECK(x.get()->use_count() == 1);  // every thread's references are gone
}

TEST_CASE("one pooled allocator shared by every thread's VM through vm_options::devices") {
  const builtin_case p;
  const rv::allocator pool = rv::allocator::pooled();
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(), pool}};
  opts.reuse_allocations = false;  // every call allocates, so that the pool sees all threads at once
  run_threads(p.exe, p.reg, opts, [&](const rv::vm_function& main, int t, int i, tally& out) {
    const std::int64_t n = n_of(i), k = k_of(t, i);
    check_call(main, make_x(1000 * t, n), k, expected_main(1000 * t, n, k), out);
  });
  const rv::allocator_stats s = pool.stats();
  // Each call allocates its shape heap and its storage from the pool, and frees both.
  CHECK(s.allocations == 2 * std::int64_t{num_threads} * calls_per_thread);
  CHECK(s.bytes_in_use == 0);
  CHECK(s.system_allocations <= 2 * num_threads * max_n);  // the rest come from its cache
}

#if RELAXVM_TEST_MLP
TEST_CASE("the MLP (examples/mlp_program.hpp): 8 threads x 10,000 calls, n = 1 + (i % 4), shared inputs") {
  rv::registry reg;
  // Only the two kernels the program calls: ops::register_all would make this file much slower to
  // compile (tests/unit/mlp.cpp checks the MLP against a direct computation).
  reg.def("ops.dense_out", [](const rv::tensor& x, const rv::tensor& w, const rv::tensor& b, const rv::tensor& out) {
    return rv::ops::dense_out(x, w, b, out);
  });
  reg.def("ops.relu_out", &rv::ops::relu_out);
  const rv::executable exe = mlp::build(mlp::make_weights());  // the weights are its tensor constants
  // Inputs made and share()d here; every thread passes them. The outputs of a VM on this thread
  // are what each call must reproduce bit for bit.
  std::vector<rv::tensor> xs, ys;
  {
    rv::virtual_machine vm(exe, reg);
    for (std::int64_t n = 1; n <= max_n; ++n) {
      xs.push_back(mlp::make_input(n));
      xs.back().share();
      ys.push_back(vm["main"](xs.back()).as<rv::tensor>());
      REQUIRE(ys.back().shape() == rv::shape{n, mlp::out_features});
    }
  }
  run_threads(exe, reg, {}, [&](const rv::vm_function& main, int, int i, tally& out) {
    const auto n = static_cast<std::size_t>(n_of(i));
    const std::array<rv::value, 1> args{rv::value(xs[n - 1])};
    rv::result<rv::value> r = main.try_call(args);
    if (!r.ok()) return out.record(false, std::string(r.error().message()));
    const rv::tensor& want = ys[n - 1];
    const rv::tensor got = r->as<rv::tensor>();
    const bool ok = got.shape() == want.shape() &&
                    std::memcmp(got.raw_data(), want.raw_data(), static_cast<std::size_t>(want.nbytes())) == 0;
    out.record(ok, ok ? std::string() : "the MLP's output for n = " + std::to_string(n) + " differs");
  });
}
#endif

TEST_CASE("the kernels' pool: 8 threads' Conv and MatMul calls at once, each bit for bit as on one thread") {
  namespace k = rv::kernels;
  const int before = k::kernel_threads();
  const auto filled = [](std::initializer_list<std::int64_t> d, float scale) {
    rv::tensor t = rv::tensor::empty(rv::shape(d), rv::dtype::float32());
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * static_cast<float>((i * 7919) % 201 - 100);
    return t;
  };
  // Each a little over the threads' threshold (2^21 multiply-adds in this test: tests/meson.build).
  const rv::tensor x = filled({1, 16, 24, 24}, 0.01f), w = filled({32, 16, 3, 3}, 0.003f), b = filled({32}, 0.1f);
  const rv::tensor a = filled({128, 160}, 0.02f), m = filled({160, 128}, 0.005f);
  const rv::shape ones{1, 1}, pads{1, 1, 1, 1}, none{};
  const auto conv = [&](const rv::tensor& y) { return k::Conv_out(x, w, b, k::notset, 1, ones, pads, none, y); };
  k::set_kernel_threads(1);
  const rv::tensor conv_want = rv::tensor::empty(rv::shape{1, 32, 24, 24}, rv::dtype::float32());
  const rv::tensor mm_want = rv::tensor::empty(rv::shape{128, 128}, rv::dtype::float32());
  REQUIRE(conv(conv_want).ok());
  REQUIRE(k::MatMul_out(a, m, mm_want).ok());
  k::set_kernel_threads(before > 1 ? before : 2);
  constexpr int calls = 12;
  std::atomic<int> checked{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t)
    threads.emplace_back([&] {
      const rv::tensor y = rv::tensor::empty(rv::shape{1, 32, 24, 24}, rv::dtype::float32());
      const rv::tensor z = rv::tensor::empty(rv::shape{128, 128}, rv::dtype::float32());
      for (int i = 0; i < calls; ++i) {
        const bool ok_conv = conv(y).ok() && std::memcmp(y.raw_data(), conv_want.raw_data(), static_cast<std::size_t>(y.nbytes())) == 0;
        const bool ok_mm = k::MatMul_out(a, m, z).ok() && std::memcmp(z.raw_data(), mm_want.raw_data(), static_cast<std::size_t>(z.nbytes())) == 0;
        wrong.fetch_add(!ok_conv + !ok_mm);
        checked.fetch_add(2);
      }
    });
  for (std::thread& th : threads) th.join();
  k::set_kernel_threads(before);
  CHECK(wrong.load() == 0);
  CHECK(checked.load() == num_threads * calls * 2);
}
