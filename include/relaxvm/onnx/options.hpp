// SPDX-License-Identifier: Apache-2.0
// How an ONNX model is imported (onnx::import, onnx::load).
#ifndef RELAXVM_ONNX_OPTIONS_HPP
#define RELAXVM_ONNX_OPTIONS_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI::onnx {

/// How a model is imported.
struct options {
  /// Upper bounds of named dimensions ({"batch", 8}): with one for every dim_param, the planned
  /// memory of the imported program is finite (ir::planned_bytes), and an input past its bound
  /// is an error when the program runs.
  std::vector<std::pair<std::string, std::int64_t>> upper_bounds;
  /// Called with an initializer's whole TensorProto (its bytes in the file) each time its data has
  /// been copied into the program; null: not called. onnx::load_file gives the
  /// mapped file's pages back through it, so that the weights are held once while a model loads,
  /// not twice (the file and the program).
  void (*weight_copied)(std::span<const std::byte> tensor_proto, void* context) = nullptr;
  void* weight_copied_context = nullptr;
};

}  // namespace relaxvm::onnx

#endif  // RELAXVM_ONNX_OPTIONS_HPP
