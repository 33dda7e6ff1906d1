// SPDX-License-Identifier: Apache-2.0
// MLP benchmark: the 3-layer MLP of examples/mlp_program.hpp (16 -> 32 -> 32 -> 10, batch size n
// symbolic) on the VM, against the same kernels called directly from C++, per batch size.
//
//   VM:     vm_function::try_call(x): the whole program (shape checks, shape arithmetic, storage and
//           tensor allocation from a pooled allocator, kernels in destination-passing form)
//   direct: the same three ops::dense_out and two ops::relu_out calls on tensors allocated per run
//           from a pooled allocator of its own: what a hand-written C++ forward pass would do
//
// Also per run: allocations served by the VM's pool, and allocations from the system heap (the
// global operator new, counted) on each side. Runs alternate between the two, as in
// bench/dispatch.cpp; each figure is the median. Usage: bench_mlp [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int runs = quick ? 5 : 2001;
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::allocator vm_pool = rv::allocator::pooled(), direct_pool = rv::allocator::pooled();
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(), vm_pool}};
  rv::virtual_machine vm(mlp::build(w), reg, opts);
  const rv::vm_function main_fn = vm["main"];

  std::printf("relaxvm %s MLP benchmark (16 -> 32 -> 32 -> 10, float32): median of %d runs\n", RELAXVM_VERSION_STRING,
              runs);
  std::printf("%6s %12s %12s %7s %16s %18s\n", "n", "VM", "direct", "ratio", "pool allocs/run",
              "heap allocs VM/direct");
  int failures = 0;
  for (std::int64_t n : {1, 7, 64, 256}) {
    const rv::tensor x = mlp::make_input(n);
    std::array<rv::value, 1> args{rv::value(x)};
    rv::tensor direct_out;
    // Warm up both twice (a result is still held while the next run allocates), and check that
    // they agree.
    rv::result<rv::value> y = main_fn.try_call(args);
    y = main_fn.try_call(args);
    if (!y.ok() || !direct_forward(w, x, direct_pool, direct_out).ok() ||
        !direct_forward(w, x, direct_pool, direct_out).ok())
      return 1;
    const rv::tensor vm_out = y->as<rv::tensor>();
    for (std::int64_t i = 0; i < vm_out.numel(); ++i)
      failures += vm_out.data<const float>()[i] != direct_out.data<const float>()[i];

    std::vector<double> vm_ns, direct_ns;
    const std::int64_t pool_before = vm_pool.stats().allocations;
    long vm_heap = 0, direct_heap = 0;
    for (int r = 0; r < runs; ++r) {
      const long h0 = relaxvm_test::heap_allocations();
      const auto t0 = clock_type::now();
      failures += !main_fn.try_call(args).ok();
      const auto t1 = clock_type::now();
      const long h1 = relaxvm_test::heap_allocations();
      failures += !direct_forward(w, x, direct_pool, direct_out).ok();
      const auto t2 = clock_type::now();
      vm_heap += h1 - h0;
      direct_heap += relaxvm_test::heap_allocations() - h1;
      vm_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
      direct_ns.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count());
    }
    const double v = median(vm_ns), d = median(direct_ns);
    std::printf("%6lld %9.2f us %9.2f us %6.2fx %16.1f %12ld / %ld\n", static_cast<long long>(n), v / 1000, d / 1000,
                v / d, static_cast<double>(vm_pool.stats().allocations - pool_before) / runs, vm_heap, direct_heap);
  }
  std::printf("\nheap allocs: calls to the global operator new over all %d runs, after two warm-up runs.\n", runs);
  if (failures) std::fprintf(stderr, "bench_mlp: %d mismatches or errors\n", failures);
  return failures == 0 ? 0 : 1;
}
