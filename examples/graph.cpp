// SPDX-License-Identifier: Apache-2.0
// The graph executor: the three-input add graph exactly as TVM's relay.build wrote it (seed_graphs.hpp),
// then the MLP of mlp_program.hpp as a graph (weights from a params file) beside the same MLP as
// VM bytecode: the two must agree. Ends with the per-node timing table of the debug mode.
#include <cmath>
#include <cstdio>
#include <vector>

#include "mlp_graph.hpp"
#include "seed_graphs.hpp"

namespace rv = relaxvm;

int main() {
  rv::registry reg;
  mlp::register_kernels(reg);
  // The graph names the compiled kernel; here it is relaxvm's destination-passing add.
  reg.add("tvmgen_default_fused_add", *reg.find("ops.add_out"));
  int failures = 0;

  {
    rv::graph::executor g = rv::graph::executor::create(seed_graphs::add3, reg).value();
    std::vector<float> a(10), b(10), c(10);
    for (int i = 0; i < 10; ++i) a[i] = static_cast<float>(i), b[i] = 10.0f * static_cast<float>(i), c[i] = 100.0f;
    g.set_input("a", rv::tensor::from<float>(a, {1, 10})).value();
    g.set_input("b", rv::tensor::from<float>(b, {1, 10})).value();
    g.set_input("c", rv::tensor::from<float>(c, {1, 10})).value();
    g.run().value();
    const rv::tensor y = g.get_output(0).value();
    bool ok = true;
    for (int i = 0; i < 10; ++i) ok = ok && y.data<const float>()[i] == 100.0f + 11.0f * static_cast<float>(i);
    failures += !ok;
    std::printf("TVM's graph add(add(a, b), c): y[9] = %g  %s\n", static_cast<double>(y.data<const float>()[9]), ok ? "ok" : "FAIL");
  }

  const std::int64_t n = 7;
  const mlp::weights w = mlp::make_weights();
  rv::graph::executor g = rv::graph::executor::create(mlp::graph_json(n), reg).value();
  const std::vector<std::byte> params = mlp::graph_params(w);
  const std::size_t loaded = g.load_params(params).value();
  std::printf("MLP graph: %zu nodes, %zu storages for %zu entries (planned), %zu params loaded from %zu bytes\n",
              g.graph().nodes.size(), g.storage_bytes().size(), g.graph().num_entries(), loaded, params.size());

  const rv::tensor x = mlp::make_input(n);
  g.set_input("x", x).value();
  g.run().value();
  const rv::tensor from_graph = g.get_output(0).value();

  rv::virtual_machine vm(mlp::build(w), reg);
  const rv::tensor from_vm = vm["main"](x).as<rv::tensor>();
  double max_diff = 0;
  for (std::int64_t i = 0; i < from_vm.numel(); ++i)
    max_diff = std::fmax(max_diff, std::fabs(static_cast<double>(from_graph.data<const float>()[i] - from_vm.data<const float>()[i])));
  const bool same = from_graph.shape() == from_vm.shape() && max_diff == 0;
  failures += !same;
  std::printf("MLP n = %lld: graph and VM agree, max |graph - vm| = %g  %s\n", static_cast<long long>(n), max_diff,
              same ? "ok" : "FAIL");

  std::printf("\n%s", g.profile(100).value().table().c_str());
  return failures == 0 ? 0 : 1;
}
