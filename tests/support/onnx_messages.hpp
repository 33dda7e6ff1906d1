// SPDX-License-Identifier: Apache-2.0
// ONNX's messages as the tests write them (over protobuf_writer.hpp's pb): nodes, attributes,
// initializers and typed graph inputs, field numbers as onnx.proto gives them.
#ifndef RELAXVM_TEST_ONNX_MESSAGES_HPP
#define RELAXVM_TEST_ONNX_MESSAGES_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protobuf_writer.hpp"

namespace relaxvm_test::onnx_pb {

// TensorProto.DataType values the tests use.
inline constexpr int f32 = 1, i64 = 7;

/// NodeProto: op_type `op` over inputs `in` to outputs `out`, with its attributes.
inline pb node(std::string_view op, const std::vector<std::string_view>& in, const std::vector<std::string_view>& out,
               const std::vector<pb>& attrs = {}) {
  pb n;
  for (std::string_view s : in) n.str(1, s);
  for (std::string_view s : out) n.str(2, s);
  n.str(4, op);
  for (const pb& a : attrs) n.msg(5, a);
  return n;
}

/// AttributeProto of type INT (2), INTS (7) and STRING (3).
inline pb int_attr(std::string_view name, std::int64_t v) {
  pb a;
  a.str(1, name).i(20, 2).i(3, v);
  return a;
}
inline pb ints_attr(std::string_view name, const std::vector<std::int64_t>& v) {
  pb a;
  a.str(1, name).i(20, 7);
  for (std::int64_t x : v) a.i(8, x);
  return a;
}
inline pb str_attr(std::string_view name, std::string_view v) {
  pb a;
  a.str(1, name).i(20, 3).str(4, v);
  return a;
}

/// A 1-d TensorProto (an initializer) of int64 or float values, in raw_data.
inline pb int64_tensor(std::string_view name, const std::vector<std::int64_t>& v) {
  pb t;
  t.i(1, static_cast<std::int64_t>(v.size())).i(2, i64).str(8, name).bytes(9, v.data(), v.size() * 8);
  return t;
}
inline pb float_tensor(std::string_view name, const std::vector<float>& v) {
  pb t;
  t.i(1, static_cast<std::int64_t>(v.size())).i(2, f32).str(8, name).bytes(9, v.data(), v.size() * 4);
  return t;
}

/// ValueInfoProto of a tensor of element type `et` whose dims are names (dim_param) or, when they
/// start with a digit, values.
inline pb tensor_value_info(std::string_view name, int et, const std::vector<std::string_view>& dims) {
  pb shape, tt, type, v;
  for (std::string_view d : dims) {
    pb dim;
    if (!d.empty() && d[0] >= '0' && d[0] <= '9') dim.i(1, std::stoll(std::string(d)));
    else dim.str(2, d);
    shape.msg(1, dim);
  }
  tt.i(1, et).msg(2, shape);
  type.msg(1, tt);
  v.str(1, name).msg(2, type);
  return v;
}

/// ModelProto bytes (IR version 8, the default domain at `opset`) around `graph`, named "g", with
/// graph outputs `outputs` (names only: the importer infers their types).
inline std::vector<std::byte> model_of(pb graph, const std::vector<std::string_view>& outputs, std::int64_t opset = 13) {
  graph.str(2, "g");
  for (std::string_view o : outputs) {
    pb v;
    v.str(1, o);
    graph.msg(12, v);
  }
  pb ops;
  ops.str(1, "").i(2, opset);
  pb m;
  m.i(1, 8).str(2, "relaxvm-test").msg(7, graph).msg(8, ops);
  return m.out;
}

}  // namespace relaxvm_test::onnx_pb

#endif  // RELAXVM_TEST_ONNX_MESSAGES_HPP
