// SPDX-License-Identifier: Apache-2.0
// Tensors of random values for the kernels' tests (kernels_conv, kernels_isa, kernels_threads):
// floating point in (-1, 1), integers in (-50, 50), from the caller's generator so that a test's
// data is the same on every run.
#ifndef RELAXVM_TESTS_RANDOM_TENSOR_HPP
#define RELAXVM_TESTS_RANDOM_TENSOR_HPP

#include <relaxvm.hpp>
#include <cstdint>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

namespace relaxvm_test {

using dims_t = std::vector<std::int64_t>;

inline relaxvm::shape shp(const dims_t& d) { return relaxvm::shape(std::span<const std::int64_t>(d)); }

template <class T>
relaxvm::tensor random_tensor(const dims_t& d, std::mt19937& rng) {
  relaxvm::tensor t = relaxvm::tensor::empty(shp(d), relaxvm::dtype_of<T>());
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.data<T>()[i] = static_cast<T>(std::is_floating_point_v<T> ? u(rng) : u(rng) * 50);
  return t;
}

}  // namespace relaxvm_test

#endif  // RELAXVM_TESTS_RANDOM_TENSOR_HPP
