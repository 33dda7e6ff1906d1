// SPDX-License-Identifier: Apache-2.0
// A generated ONNX model of `n` nodes: a chain of elementwise ops over x (1, 64) with a Reshape
// every 1,000 nodes, for measuring that import, lowering and planning stay linear in the nodes.
#ifndef RELAXVM_TEST_ONNX_CHAIN_MODEL_HPP
#define RELAXVM_TEST_ONNX_CHAIN_MODEL_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onnx_messages.hpp"

namespace relaxvm_test {

inline std::vector<std::byte> chain_model(int n) {
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
  using namespace onnx_pb;
  graph.str(2, "chain").msg(5, float_tensor("c", {0.5f})).msg(5, int64_tensor("to_col", {64, 1})).msg(5, int64_tensor("to_row", {1, 64}));
  graph.msg(11, tensor_value_info("x", f32, {"1", "64"}));
  const bool row = (n / 1000) % 2 == 0;  // the last Reshape's target
  graph.msg(12, tensor_value_info("y", f32, {row ? "1" : "64", row ? "64" : "1"}));
  pb opset;
  opset.str(1, "").i(2, 13);
  pb model;
  model.i(1, 7).str(2, "relaxvm-test").msg(7, graph).msg(8, opset);
  return model.out;
}

}  // namespace relaxvm_test

#endif  // RELAXVM_TEST_ONNX_CHAIN_MODEL_HPP
