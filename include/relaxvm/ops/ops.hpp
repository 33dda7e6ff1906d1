// SPDX-License-Identifier: Apache-2.0
// Kernels over xtensor for float32 and float64, registered as packed functions under the prefix
// "ops.". Each kernel has a returning form and a destination-passing form whose outputs come last
// and are preallocated (what call_tir lowers to, e.g. with alloc_tensor):
//
//   ops.add / subtract / multiply / divide / maximum (a, b)      ops.<name>_out(a, b, out)
//   ops.relu / gelu / sigmoid (x)                                ops.<name>_out(x, out)
//   ops.matmul(a, b)                                             ops.matmul_out(a, b, out)
//   ops.dense(x, w, [bias])   x . w^T + bias                     ops.dense_out(x, w, [bias,] out)
//   ops.softmax(x, [axis = -1])                                  ops.softmax_out(x, axis, out)
//   ops.sum / mean (x, axis, [keepdims = false])                 ops.<name>_out(x, axis, out)
//
// Binary ops broadcast like NumPy. Not included by <relaxvm.hpp>: it needs xtensor (Debian:
// xtensor-dev) and a hosted build.
#ifndef RELAXVM_OPS_OPS_HPP
#define RELAXVM_OPS_OPS_HPP

#include <span>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../runtime/registry.hpp"
#include "common.hpp"
#include "elementwise.hpp"
#include "linalg.hpp"
#include "reduce.hpp"

namespace relaxvm::RELAXVM_ABI::ops {

namespace detail {
inline result<tensor> tensor_arg(std::string_view fn, const value& v, std::string_view what) {
  if (v.kind() != value_kind::tensor) return type_error(fn, ": ", what, " must be a tensor, but got ", v.describe());
  return v.as<tensor>();
}
/// tensor_arg without a reference: valid while `v` is (a kernel's arguments, during its call).
inline status check_tensor_arg(std::string_view fn, const value& v, std::string_view what) {
  if (v.kind() != value_kind::tensor) return type_error(fn, ": ", what, " must be a tensor, but got ", v.describe());
  return {};
}
}  // namespace detail

/// Registers every kernel in `reg` (see the list above).
inline void register_all(basic_registry& reg) {
  reg.def("ops.add", &add).def("ops.add_out", &add_out);
  reg.def("ops.subtract", &subtract).def("ops.subtract_out", &subtract_out);
  reg.def("ops.multiply", &multiply).def("ops.multiply_out", &multiply_out);
  reg.def("ops.divide", &divide).def("ops.divide_out", &divide_out);
  reg.def("ops.maximum", &maximum).def("ops.maximum_out", &maximum_out);
  reg.def("ops.relu", &relu).def("ops.relu_out", &relu_out);
  reg.def("ops.gelu", &gelu).def("ops.gelu_out", &gelu_out);
  reg.def("ops.sigmoid", &sigmoid).def("ops.sigmoid_out", &sigmoid_out);
  reg.def("ops.matmul", &matmul).def("ops.matmul_out", &matmul_out);
  reg.def("ops.dense", [](const tensor& x, const tensor& w, std::span<const value> rest) -> result<tensor> {
    if (rest.size() > 1) return detail::type_error("ops.dense: expects (x, weight, [bias])");
    if (rest.empty()) return dense(x, w);
    RELAXVM_TRY_ASSIGN(tensor bias, detail::tensor_arg("ops.dense", rest[0], "the bias"));
    return dense(x, w, &bias);
  });
  reg.def("ops.dense_out", [](const tensor& x, const tensor& w, std::span<const value> rest) -> status {
    if (rest.empty() || rest.size() > 2) return detail::type_error("ops.dense_out: expects (x, weight, [bias,] out)");
    RELAXVM_TRY(detail::check_tensor_arg("ops.dense_out", rest.back(), "the output"));
    const borrowed<tensor> out(rest.back().raw_object());
    if (rest.size() == 1) return dense_out(x, w, out.get());
    RELAXVM_TRY(detail::check_tensor_arg("ops.dense_out", rest[0], "the bias"));
    const borrowed<tensor> bias(rest[0].raw_object());
    return dense_out(x, w, bias.get(), out.get());
  });
  reg.def("ops.softmax", [](const tensor& x, std::span<const value> rest) -> result<tensor> {
    if (rest.size() > 1 || (rest.size() == 1 && rest[0].kind() != value_kind::int64))
      return detail::type_error("ops.softmax: expects (x, [axis])");
    return softmax(x, rest.empty() ? -1 : rest[0].raw_int());
  });
  reg.def("ops.softmax_out", &softmax_out);
  for (bool is_mean : {false, true}) {
    const char* name = is_mean ? "ops.mean" : "ops.sum";
    reg.def(name, [is_mean, name](const tensor& x, std::int64_t axis, std::span<const value> rest) -> result<tensor> {
      if (rest.size() > 1 || (rest.size() == 1 && rest[0].kind() != value_kind::boolean))
        return detail::type_error(name, ": expects (x, axis, [keepdims])");
      const bool keepdims = !rest.empty() && rest[0].raw_int() != 0;
      return is_mean ? mean(x, axis, keepdims) : sum(x, axis, keepdims);
    });
  }
  reg.def("ops.sum_out", &sum_out).def("ops.mean_out", &mean_out);
}

}  // namespace relaxvm::ops

#endif  // RELAXVM_OPS_OPS_HPP
