// SPDX-License-Identifier: Apache-2.0
// The shape heap of seed 000: an int64 host tensor whose slots hold symbolic dimensions.
//   vm.builtin.alloc_shape_heap([ctx,] size) -> heap
//   vm.builtin.shape_of(tensor) -> shape
//   vm.builtin.store_shape(shape, heap, idx_0, ..., idx_{n-1})   heap[idx_i] = shape[i]
//   vm.builtin.load_shape(heap, idx_0, ..., idx_{n-1}) -> shape  (heap[idx_0], ...)
#ifndef RELAXVM_BUILTINS_SHAPE_HPP
#define RELAXVM_BUILTINS_SHAPE_HPP

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "../base/error.hpp"
#include "../runtime/context.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/shape.hpp"
#include "../runtime/tensor.hpp"
#include "../runtime/value.hpp"

namespace relaxvm::builtins {

namespace detail {

/// Checks that `heap` is a shape heap and returns its slots.
inline result<std::int64_t*> heap_slots(std::string_view fn, const tensor& heap, std::int64_t& size, bool write) {
  if (heap.ndim() != 1 || heap.dtype() != dtype::int64() || heap.device().device_type != kDLCPU)
    return relaxvm::detail::value_error(fn, ": the shape heap must be a 1-d int64 host tensor, but got ",
                                        relaxvm::detail::cat_shape(heap.shape().dims()), " ", to_text(heap.dtype()),
                                        " on ", to_text(heap.device()));
  if (!heap.is_contiguous() || reinterpret_cast<std::uintptr_t>(heap.raw_data()) % alignof(std::int64_t) != 0)
    return relaxvm::detail::value_error(fn, ": the shape heap must be compact and 8-byte aligned");
  if (write && heap.read_only()) return relaxvm::detail::value_error(fn, ": the shape heap is read-only");
  size = heap.shape()[0];
  return static_cast<std::int64_t*>(heap.raw_data());
}

inline status check_slot(std::string_view fn, std::size_t i, const value& idx, std::int64_t size) {
  if (idx.kind() != value_kind::int64)
    return relaxvm::detail::type_error(fn, ": index ", i, " must be an int64 slot number, but got ", idx.describe());
  if (idx.raw_int() < 0 || idx.raw_int() >= size)
    return relaxvm::detail::value_error(fn, ": index ", i, " is slot ", idx.raw_int(), ", outside the shape heap of ",
                                        size, " slots");
  return {};
}

}  // namespace detail

inline result<value> alloc_shape_heap(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.alloc_shape_heap";
  vm_context* ctx = nullptr;
  if (!args.empty() && args[0].kind() == value_kind::context) {
    ctx = args[0].raw_context();
    args = args.subspan(1);
  }
  if (args.size() != 1)
    return relaxvm::detail::type_error(fn, ": expects ([ctx,] size) but got ", args.size() + (ctx ? 1 : 0),
                                       " arguments");
  if (args[0].kind() != value_kind::int64)
    return relaxvm::detail::type_error(fn, ": size must be an int64, but got ", args[0].describe());
  const std::int64_t size = args[0].raw_int();
  if (size < 0) return relaxvm::detail::value_error(fn, ": size is ", size, "; it must be 0 or more");
  RELAXVM_TRY_ASSIGN(tensor heap, tensor::try_empty(shape{size}, dtype::int64(), ctx ? ctx->host_device() : device::cpu()));
  if (size > 0) std::memset(heap.raw_data(), 0, static_cast<std::size_t>(size) * sizeof(std::int64_t));
  return value(heap);
}

inline status store_shape(const shape& s, const tensor& heap, std::span<const value> indices) {
  constexpr std::string_view fn = "vm.builtin.store_shape";
  std::int64_t size = 0;
  RELAXVM_TRY_ASSIGN(std::int64_t* slots, detail::heap_slots(fn, heap, size, true));
  if (static_cast<std::int64_t>(indices.size()) != s.size())
    return relaxvm::detail::value_error(fn, ": the shape has ", s.size(), " dimensions but ", indices.size(),
                                        " heap indices were given");
  for (std::size_t i = 0; i < indices.size(); ++i) RELAXVM_TRY(detail::check_slot(fn, i, indices[i], size));
  for (std::size_t i = 0; i < indices.size(); ++i) slots[indices[i].raw_int()] = s[static_cast<std::int64_t>(i)];
  return {};
}

inline result<shape> load_shape(const tensor& heap, std::span<const value> indices) {
  constexpr std::string_view fn = "vm.builtin.load_shape";
  std::int64_t size = 0;
  RELAXVM_TRY_ASSIGN(std::int64_t* slots, detail::heap_slots(fn, heap, size, false));
  std::vector<std::int64_t> dims;
  dims.reserve(indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    RELAXVM_TRY(detail::check_slot(fn, i, indices[i], size));
    dims.push_back(slots[indices[i].raw_int()]);
  }
  return shape(dims);
}

inline void register_shape(basic_registry& reg) {
  reg.def_packed("vm.builtin.alloc_shape_heap", &alloc_shape_heap);
  reg.def("vm.builtin.shape_of", [](const tensor& t) { return t.shape(); });
  reg.def("vm.builtin.store_shape", &store_shape);
  reg.def("vm.builtin.load_shape", &load_shape);
}

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_SHAPE_HPP
