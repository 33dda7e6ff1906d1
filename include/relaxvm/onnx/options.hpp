// SPDX-License-Identifier: Apache-2.0
// How an ONNX model is imported (onnx::import, onnx::load).
#ifndef RELAXVM_ONNX_OPTIONS_HPP
#define RELAXVM_ONNX_OPTIONS_HPP

#include <cstdint>
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
};

}  // namespace relaxvm::onnx

#endif  // RELAXVM_ONNX_OPTIONS_HPP
