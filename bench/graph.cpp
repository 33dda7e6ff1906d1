// SPDX-License-Identifier: Apache-2.0
// Graph executor benchmark: the MLP of examples/mlp_graph.hpp (16 -> 32 -> 32 -> 10, float32) as
// a graph, against the same MLP as VM bytecode and against the same kernels called directly:
//
//   graph:  executor::run() (x already set with set_input_zero_copy; storage planned and bound at
//           load, so a run is five kernel calls)
//   VM:     vm_function::try_call(x): the whole program of examples/mlp_program.hpp (shape checks,
//           shape arithmetic, storage from a pooled allocator, the same five kernels)
//   direct: the five ops:: calls on tensors allocated once, beforehand: a hand-written forward
//           pass with static buffers, what the graph executor does
//
// Runs alternate between the three; each figure is the median. Usage: bench_graph [--quick]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common.hpp"
#include "../examples/mlp_graph.hpp"

namespace rv = relaxvm;
using bench::clock_type;
using bench::median;

namespace {

struct direct_buffers {
  rv::tensor h1, h2, out;
};

rv::status direct_forward(const mlp::weights& w, const rv::tensor& x, const direct_buffers& b) {
  RELAXVM_TRY(rv::ops::dense_out(x, w.w1, w.b1, b.h1));
  RELAXVM_TRY(rv::ops::relu_out(b.h1, b.h1));
  RELAXVM_TRY(rv::ops::dense_out(b.h1, w.w2, w.b2, b.h2));
  RELAXVM_TRY(rv::ops::relu_out(b.h2, b.h2));
  return rv::ops::dense_out(b.h2, w.w3, w.b3, b.out);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int runs = quick ? 5 : 2001;
  const mlp::weights w = mlp::make_weights();
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(), rv::allocator::pooled()}};
  rv::virtual_machine vm(mlp::build(w), reg, opts);
  const rv::vm_function main_fn = vm["main"];
  const std::vector<std::byte> params = mlp::graph_params(w);

  std::printf("relaxvm %s graph benchmark (MLP 16 -> 32 -> 32 -> 10, float32): median of %d runs\n",
              RELAXVM_VERSION_STRING, runs);
  std::printf("%6s %11s %11s %11s %13s %10s\n", "n", "graph", "VM", "direct", "graph/direct", "VM/direct");
  int failures = 0;
  for (std::int64_t n : {1, 7, 64, 256}) {
    rv::graph::executor g = rv::graph::executor::create(mlp::graph_json(n), reg).value();
    failures += !g.load_params(params).ok();
    const rv::tensor x = mlp::make_input(n);
    failures += !g.set_input_zero_copy("x", x).ok();
    std::array<rv::value, 1> args{rv::value(x)};
    const direct_buffers b{rv::tensor::empty({n, mlp::hidden}, rv::dtype::float32()),
                           rv::tensor::empty({n, mlp::hidden}, rv::dtype::float32()),
                           rv::tensor::empty({n, mlp::out_features}, rv::dtype::float32())};
    // Warm up, and check that the three agree.
    rv::result<rv::value> y = main_fn.try_call(args);
    if (!y.ok() || !g.run().ok() || !direct_forward(w, x, b).ok()) return 1;
    const rv::tensor vm_out = y->as<rv::tensor>(), graph_out = g.get_output(0).value();
    for (std::int64_t i = 0; i < vm_out.numel(); ++i)
      failures += vm_out.data<const float>()[i] != graph_out.data<const float>()[i] ||
                  b.out.data<const float>()[i] != graph_out.data<const float>()[i];

    std::vector<double> graph_ns, vm_ns, direct_ns;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = clock_type::now();
      failures += !g.run().ok();
      const auto t1 = clock_type::now();
      failures += !main_fn.try_call(args).ok();
      const auto t2 = clock_type::now();
      failures += !direct_forward(w, x, b).ok();
      const auto t3 = clock_type::now();
      graph_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
      vm_ns.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count());
      direct_ns.push_back(std::chrono::duration<double, std::nano>(t3 - t2).count());
    }
    const double gr = median(graph_ns), v = median(vm_ns), d = median(direct_ns);
    std::printf("%6lld %8.2f us %8.2f us %8.2f us %12.2fx %9.2fx\n", static_cast<long long>(n), gr / 1000, v / 1000,
                d / 1000, gr / d, v / d);
  }
  if (failures) std::fprintf(stderr, "bench_graph: %d mismatches or errors\n", failures);
  return failures == 0 ? 0 : 1;
}
