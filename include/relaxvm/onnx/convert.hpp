// SPDX-License-Identifier: Apache-2.0
// The ONNX operators the importer converts: each family's table (convert_*.hpp), joined. A
// converter turns a node into kernel calls (or views, or folded constants) with the output's dtype
// and symbolic shape computed at import, under the semantics of the model's opset.
#ifndef RELAXVM_ONNX_CONVERT_HPP
#define RELAXVM_ONNX_CONVERT_HPP

#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"
#include "convert_conv.hpp"
#include "convert_data.hpp"
#include "convert_elementwise.hpp"
#include "convert_linalg.hpp"
#include "convert_loss.hpp"
#include "convert_shape.hpp"
#include "convert_reduce.hpp"
#include "convert_resize.hpp"
#include "convert_select.hpp"
#include "convert_normalization.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

inline constexpr std::span<const op_converter> converter_tables[] = {
    elementwise_converters, linalg_converters, shape_converters,
    reduce_converters, normalization_converters,
    conv_converters,
    data_converters,
    loss_converters,
    resize_converters,
    select_converters,
};

/// The converter of an operator of the default domain, or null.
inline converter find_converter(std::string_view domain, std::string_view op) {
  if (!domain.empty() && domain != "ai.onnx") return nullptr;
  for (std::span<const op_converter> table : converter_tables)
    for (const op_converter& c : table)
      if (c.op_type == op) return c.fn;
  return nullptr;
}

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_HPP
