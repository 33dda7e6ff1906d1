// SPDX-License-Identifier: Apache-2.0
// Tensors as a foreign producer hands them over through DLPack: strided, or with odd addresses.
#ifndef RELAXVM_TESTS_FOREIGN_HPP
#define RELAXVM_TESTS_FOREIGN_HPP

#include <cstdint>
#include <initializer_list>
#include <relaxvm.hpp>
#include <vector>

namespace relaxvm_test {

/// The 2 x 2 float64 matrix [[1, 2], [3, 4]] stored column-major ({1, 3, 2, 4} in memory).
inline relaxvm::tensor column_major_2x2() {
  struct holder {
    std::int64_t shape[2] = {2, 2};
    std::int64_t strides[2] = {1, 2};
    double data[4] = {1, 3, 2, 4};
    DLManagedTensor m{};
  };
  auto* h = new holder;
  h->m.dl_tensor.data = h->data;
  h->m.dl_tensor.device = {kDLCPU, 0};
  h->m.dl_tensor.ndim = 2;
  h->m.dl_tensor.dtype = {kDLFloat, 64, 1};
  h->m.dl_tensor.shape = h->shape;
  h->m.dl_tensor.strides = h->strides;
  h->m.manager_ctx = h;
  h->m.deleter = [](DLManagedTensor* self) { delete static_cast<holder*>(self->manager_ctx); };
  return relaxvm::tensor::from_dlpack(&h->m);
}

/// A 1-d int64 tensor of every other element of `data` (stride 2), which it owns.
inline relaxvm::tensor every_other_int64(std::initializer_list<std::int64_t> data) {
  struct holder {
    std::int64_t shape[1];
    std::int64_t strides[1] = {2};
    std::vector<std::int64_t> data;
    DLManagedTensor m{};
  };
  auto* h = new holder{{static_cast<std::int64_t>(data.size() / 2)}, {2}, data, {}};
  h->m.dl_tensor.data = h->data.data();
  h->m.dl_tensor.device = {kDLCPU, 0};
  h->m.dl_tensor.ndim = 1;
  h->m.dl_tensor.dtype = {kDLInt, 64, 1};
  h->m.dl_tensor.shape = h->shape;
  h->m.dl_tensor.strides = h->strides;
  h->m.manager_ctx = h;
  h->m.deleter = [](DLManagedTensor* self) { delete static_cast<holder*>(self->manager_ctx); };
  return relaxvm::tensor::from_dlpack(&h->m);
}

}  // namespace relaxvm_test

#endif  // RELAXVM_TESTS_FOREIGN_HPP
