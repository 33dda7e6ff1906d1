// SPDX-License-Identifier: Apache-2.0
// A 3-layer MLP with a symbolic batch size, run on the VM for n = 1, 7 and 64 and compared with
// the same network computed directly with xtensor (examples/mlp_program.hpp builds the bytecode).
#include <cmath>
#include <cstdio>

#include "mlp_program.hpp"

int main() {
  namespace rv = relaxvm;
  const mlp::weights w = mlp::make_weights();
  const rv::executable exe = mlp::build(w);
  std::printf("%s", exe.stats().c_str());
  rv::registry reg;
  mlp::register_kernels(reg);
  rv::vm_options opts;
  rv::allocator pool = rv::allocator::pooled();
  opts.devices = {{rv::device::cpu(), pool}};
  rv::virtual_machine vm(exe, reg, opts);
  int failures = 0;
  for (std::int64_t n : {1, 7, 64}) {
    const rv::tensor x = mlp::make_input(n);
    const rv::tensor y = vm["main"](x).as<rv::tensor>();
    const auto expected = mlp::reference(w, x);
    double max_err = 0;
    for (std::int64_t i = 0; i < y.numel(); ++i)
      max_err = std::fmax(max_err, std::fabs(static_cast<double>(y.data<const float>()[i] - expected.data()[i])));
    const bool ok = y.shape() == rv::shape{n, mlp::out_features} && max_err < 1e-5;
    failures += !ok;
    std::printf("n = %-3lld output [%lld, %lld], max |vm - xtensor| = %.2g  %s\n", static_cast<long long>(n),
                static_cast<long long>(y.shape()[0]), static_cast<long long>(y.shape()[1]), max_err, ok ? "ok" : "FAIL");
  }
  // A wrong input shape is caught by the program's own checks, with the reference's ErrorContext.
  rv::result<rv::value> bad = vm.try_invoke("main", std::vector<rv::value>{rv::value(mlp::pseudo_random({3, 15}, 1))});
  std::printf("input [3, 15]: %s\n", bad.ok() ? "accepted (WRONG)" : bad.error().what());
  failures += bad.ok();
  const rv::allocator_stats s = pool.stats();
  std::printf("pool: %lld allocations, %lld from the cache, %lld from the system\n", static_cast<long long>(s.allocations),
              static_cast<long long>(s.cache_hits), static_cast<long long>(s.system_allocations));
  return failures == 0 ? 0 : 1;
}
