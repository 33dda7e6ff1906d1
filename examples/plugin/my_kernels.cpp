// SPDX-License-Identifier: Apache-2.0
// A kernel library: two kernels that the command-line tool (or any host calling
// relaxvm::load_kernels) loads at run time, without being rebuilt:
//
//   c++ -std=c++20 -shared -fPIC -I<relaxvm>/include my_kernels.cpp -o libmy_kernels.so
//   relaxvm run --kernels ./libmy_kernels.so program.rvx '[1, 2, 3]' 2.5
//
// Build it with the same relaxvm version and configuration macros as the host: a library built
// for another ABI namespace is refused when it loads (docs/configuration.md, docs/cli.md).
#include <relaxvm/plugin.hpp>
#include <relaxvm/runtime/context.hpp>
#include <relaxvm/runtime/tensor.hpp>

namespace rv = relaxvm;

namespace {

/// example.scale(x, k): x * k for a float32 tensor x, as a new tensor.
rv::result<rv::tensor> scale(const rv::tensor& x, double k) {
  if (x.dtype() != rv::dtype::float32())
    return rv::type_error("example.scale: x must be float32, but it is ", x.dtype());
  RELAXVM_TRY_ASSIGN(rv::tensor out, rv::tensor::try_empty(x.shape(), x.dtype()));
  for (std::int64_t i = 0; i < x.numel(); ++i)
    out.data<float>()[i] = x.data<const float>()[i] * static_cast<float>(k);
  return out;
}

/// example.fill(n, v): a float32 tensor of n elements, each v. Its work grows with n, so it
/// charges n units to the running VM's instruction budget, as the builtins do: a program from a
/// file cannot make it run without bound (relaxvm run --max-instructions).
rv::result<rv::tensor> fill(std::int64_t n, double v) {
  if (n < 0) return rv::value_error("example.fill: n must be 0 or more, but it is ", n);
  if (rv::vm_context* vm = rv::running_context()) vm->charge(n);
  RELAXVM_TRY_ASSIGN(rv::tensor out, rv::tensor::try_empty(rv::shape{n}, rv::dtype::float32()));
  for (std::int64_t i = 0; i < n; ++i) out.data<float>()[i] = static_cast<float>(v);
  return out;
}

}  // namespace

RELAXVM_PLUGIN(reg) {
  RELAXVM_TRY(reg.try_add("example.scale", rv::make_typed("example.scale", scale)));
  RELAXVM_TRY(reg.try_add("example.fill", rv::make_typed("example.fill", fill)));
  return {};
}
