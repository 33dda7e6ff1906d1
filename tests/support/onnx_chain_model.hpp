// SPDX-License-Identifier: Apache-2.0
// A generated ONNX model of `n` nodes: a chain of elementwise ops over x (1, 64) with a Reshape
// every 1,000 nodes, for measuring that import, lowering and planning stay linear in the nodes.
#ifndef RELAXVM_TEST_ONNX_CHAIN_MODEL_HPP
#define RELAXVM_TEST_ONNX_CHAIN_MODEL_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "protobuf_writer.hpp"

namespace relaxvm_test {

inline std::vector<std::byte> chain_model(int n) {
  const auto value_info = [](const char* name, std::int64_t d0, std::int64_t d1) {
    pb dim0, dim1, shape, tensor_type, type, v;
    dim0.i(1, d0);
    dim1.i(1, d1);
    shape.msg(1, dim0).msg(1, dim1);
    tensor_type.i(1, 1).msg(2, shape);
    type.msg(1, tensor_type);
    v.str(1, name).msg(2, type);
    return v;
  };
  pb graph;
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = i + 1 == n ? "y" : "t" + std::to_string(i);
    pb node;
    node.str(1, prev);
    if (i % 1000 == 999) {
      node.str(1, (i / 1000) % 2 == 0 ? "to_col" : "to_row").str(4, "Reshape");
    } else {
      static const char* const ops[] = {"Add", "Relu", "Mul", "Sigmoid", "Sub", "Neg"};
      const char* op = ops[i % 6];
      if (i % 2 == 0) node.str(1, "c");  // the binary ops take the shared constant c (1)
      node.str(4, op);
    }
    node.str(2, out).str(3, "n" + std::to_string(i));
    graph.msg(1, node);
    prev = out;
  }
  const auto ints = [](const char* name, std::vector<std::int64_t> v) {
    pb t;
    t.i(1, static_cast<std::int64_t>(v.size())).i(2, 7).str(8, name);
    std::vector<std::byte> raw(v.size() * 8);
    std::memcpy(raw.data(), v.data(), raw.size());
    t.bytes(9, raw);
    return t;
  };
  pb c;
  c.i(1, 1).i(2, 1).str(8, "c");
  const float one = 0.5f;
  c.bytes(9, &one, 4);
  graph.str(2, "chain").msg(5, c).msg(5, ints("to_col", {64, 1})).msg(5, ints("to_row", {1, 64}));
  graph.msg(11, value_info("x", 1, 64));
  graph.msg(12, value_info("y", (n / 1000) % 2 == 0 ? 1 : 64, (n / 1000) % 2 == 0 ? 64 : 1));
  pb opset;
  opset.str(1, "").i(2, 13);
  pb model;
  model.i(1, 7).str(2, "relaxvm-test").msg(7, graph).msg(8, opset);
  return model.out;
}

}  // namespace relaxvm_test

#endif  // RELAXVM_TEST_ONNX_CHAIN_MODEL_HPP
