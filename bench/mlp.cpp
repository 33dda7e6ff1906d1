// SPDX-License-Identifier: Apache-2.0
// MLP benchmark: the 3-layer MLP (16 -> 32 -> 32 -> 10, batch size n symbolic) against the same
// kernels called directly from C++, per batch size, four ways:
//
//   direct:   the three ops::dense_out and two ops::relu_out calls on tensors allocated per run
//             from a pooled allocator of its own: what a hand-written C++ forward pass would do
//   by hand:  examples/mlp_program.hpp, bytecode written by hand, on the VM (vm_function::try_call:
//             shape checks, shape arithmetic, storage and tensor allocation from a pooled
//             allocator, kernels in destination-passing form)
//   IR:       examples/mlp_ir.hpp's build_ir, lowered and memory-planned (ir::build), on the VM
//   static:   mlp::weights_as_params lowered at compile time (ir::build_static), linked, run by
//             static_vm with static_dispatch::compile (the weights are parameters)
//
// Also per run: allocations served by the IR VM's pool, and allocations from the system heap (the
// global operator new, counted) on each side. Runs alternate between the four, as in
// bench/dispatch.cpp; each figure is the median.
//
//   bench_mlp [--quick]
//   bench_mlp --only direct|hand|ir|static N RUNS   runs one way RUNS times at batch size N, for
//                                                  tools/profile.py (callgrind)
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "../examples/mlp_ir.hpp"
#include "../examples/mlp_program.hpp"
#include "../tests/support/counting_new.hpp"

namespace rv = relaxvm;
using bench::clock_type;
using bench::median;

namespace {

/// The forward pass written by hand with the same kernels.
rv::status direct_forward(const mlp::weights& w, const rv::tensor& x, const rv::allocator& pool, rv::tensor& out) {
  const std::int64_t n = x.shape()[0];
  const rv::device cpu = rv::device::cpu();
  RELAXVM_TRY_ASSIGN(rv::tensor h1, rv::empty_tensor({n, mlp::hidden}, rv::dtype::float32(), pool, cpu));
  RELAXVM_TRY(rv::ops::dense_out(x, w.w1, w.b1, h1));
  RELAXVM_TRY(rv::ops::relu_out(h1, h1));
  RELAXVM_TRY_ASSIGN(rv::tensor h2, rv::empty_tensor({n, mlp::hidden}, rv::dtype::float32(), pool, cpu));
  RELAXVM_TRY(rv::ops::dense_out(h1, w.w2, w.b2, h2));
  RELAXVM_TRY(rv::ops::relu_out(h2, h2));
  RELAXVM_TRY_ASSIGN(out, rv::empty_tensor({n, mlp::out_features}, rv::dtype::float32(), pool, cpu));
  return rv::ops::dense_out(h2, w.w3, w.b3, out);
}

rv::status dense_out(const rv::tensor& x, const rv::tensor& w, const rv::tensor& b, const rv::tensor& out) {
  return rv::ops::dense_out(x, w, b, out);
}
rv::status relu_out(const rv::tensor& x, const rv::tensor& out) { return rv::ops::relu_out(x, out); }

// Both lowered programs make each shape once (ir::plan_options::reuse_shapes) and do not check
// the returned tensor, which they allocate with its annotated shape (elide_proven_return_check).
constexpr relaxvm::ir::plan_options plan{.reuse_shapes = true, .elide_proven_return_check = true};
constexpr auto static_program = relaxvm::ir::build_static<plan>(mlp::weights_as_params<>);
constexpr auto table = rv::make_table(rv::fn<"ops.dense_out">(&dense_out), rv::fn<"ops.relu_out">(&relu_out),
                                      rv::builtins::core_table, rv::builtins::shape_table, rv::builtins::memory_table);
using compiled_vm = rv::static_vm<decltype(rv::link<static_program, table>()), rv::static_dispatch::compile>;

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int runs = quick ? 5 : 2001;
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::allocator hand_pool = rv::allocator::pooled(), ir_pool = rv::allocator::pooled(),
                static_pool = rv::allocator::pooled(), direct_pool = rv::allocator::pooled();
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(), hand_pool}};
  rv::virtual_machine hand_vm(mlp::build(w), reg, opts);
  opts.devices = {{rv::device::cpu(), ir_pool}};
  rv::virtual_machine ir_vm(relaxvm::ir::build(mlp::build_ir(w), plan), reg, opts);
  const rv::vm_function hand_fn = hand_vm["main"], ir_fn = ir_vm["main"];
  rv::device_allocator static_devices[] = {{rv::device::cpu(), static_pool}};
  alignas(rv::value) static std::byte static_memory[compiled_vm::memory_bytes];
  compiled_vm svm = compiled_vm::create(static_memory, static_devices).value();

  if (argc == 5 && std::strcmp(argv[1], "--only") == 0) {
    const std::string_view way = argv[2];
    const std::int64_t n = std::atoll(argv[3]);
    const int count = std::atoi(argv[4]);
    const rv::tensor x = mlp::make_input(n);
    const std::array<rv::value, 1> args{rv::value(x)};
    const std::array<rv::value, 7> static_args{rv::value(x), w.w1, w.b1, w.w2, w.b2, w.w3, w.b3};
    rv::tensor out;
    bool ok = true;
    for (int r = 0; r < count; ++r) {
      if (way == "direct") ok = ok && direct_forward(w, x, direct_pool, out).ok();
      else if (way == "hand") ok = ok && hand_fn.try_call(args).ok();
      else if (way == "ir") ok = ok && ir_fn.try_call(args).ok();
      else if (way == "static") ok = ok && svm.invoke("main", static_args).ok();
      else ok = false;
    }
    return ok ? 0 : 1;
  }
  std::printf("relaxvm %s MLP benchmark (16 -> 32 -> 32 -> 10, float32): median of %d runs\n", RELAXVM_VERSION_STRING,
              runs);
  std::printf("%5s %10s %10s %7s %10s %7s %10s %7s %11s %13s\n", "n", "direct", "by hand", "ratio", "IR", "ratio",
              "static", "ratio", "IR pool/run", "heap IR/dir");
  int failures = 0;
  for (std::int64_t n : {1, 7, 64, 256}) {
    const rv::tensor x = mlp::make_input(n);
    const std::array<rv::value, 1> args{rv::value(x)};
    const std::array<rv::value, 7> static_args{rv::value(x), w.w1, w.b1, w.w2, w.b2, w.w3, w.b3};
    rv::tensor direct_out;
    // Warm up each twice (a result is still held while the next run allocates), and check that
    // they agree.
    for (int k = 0; k < 2; ++k) failures += !direct_forward(w, x, direct_pool, direct_out).ok();
    for (const auto& run : {std::function<rv::result<rv::value>()>([&] { return hand_fn.try_call(args); }),
                            std::function<rv::result<rv::value>()>([&] { return ir_fn.try_call(args); }),
                            std::function<rv::result<rv::value>()>([&] { return svm.invoke("main", static_args); })}) {
      rv::result<rv::value> y = run();
      y = run();
      if (!y.ok()) return 1;
      const rv::tensor out = y->as<rv::tensor>();
      for (std::int64_t i = 0; i < out.numel(); ++i) failures += out.data<const float>()[i] != direct_out.data<const float>()[i];
    }

    std::vector<double> ns[4];
    const std::int64_t pool_before = ir_pool.stats().allocations;
    long ir_heap = 0, direct_heap = 0;
    for (int r = 0; r < runs; ++r) {
      const long hd = relaxvm_test::heap_allocations();
      const auto t0 = clock_type::now();
      failures += !direct_forward(w, x, direct_pool, direct_out).ok();
      const auto t1 = clock_type::now();
      direct_heap += relaxvm_test::heap_allocations() - hd;
      failures += !hand_fn.try_call(args).ok();
      const auto t2 = clock_type::now();
      const long h0 = relaxvm_test::heap_allocations();
      const auto t3 = clock_type::now();
      failures += !ir_fn.try_call(args).ok();
      const auto t4 = clock_type::now();
      ir_heap += relaxvm_test::heap_allocations() - h0;
      const auto t5 = clock_type::now();
      failures += !svm.invoke("main", static_args).ok();
      const auto t6 = clock_type::now();
      ns[0].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
      ns[1].push_back(std::chrono::duration<double, std::nano>(t2 - t1).count());
      ns[2].push_back(std::chrono::duration<double, std::nano>(t4 - t3).count());
      ns[3].push_back(std::chrono::duration<double, std::nano>(t6 - t5).count());
    }
    const double d = median(ns[0]), h = median(ns[1]), i = median(ns[2]), st = median(ns[3]);
    std::printf("%5lld %7.2f us %7.2f us %6.3fx %7.2f us %6.3fx %7.2f us %6.3fx %11.1f %7ld / %ld\n",
                static_cast<long long>(n), d / 1000, h / 1000, h / d, i / 1000, i / d, st / 1000, st / d,
                static_cast<double>(ir_pool.stats().allocations - pool_before) / runs, ir_heap, direct_heap);
  }
  std::printf("\nheap IR/dir: calls to the global operator new over all %d runs of the IR program and of the direct\n"
              "forward pass, after two warm-up runs.\n", runs);
  if (failures) std::fprintf(stderr, "bench_mlp: %d mismatches or errors\n", failures);
  return failures == 0 ? 0 : 1;
}
