// SPDX-License-Identifier: Apache-2.0
// The MLP of mlp_program.hpp as a graph for the graph executor, for a fixed batch size n: the JSON
// the reference's graph codegen would write for it (without storage ids: the executor plans them),
// and its weights as a params file. Shared by examples/graph.cpp, tests/unit/graph.cpp and
// bench/graph.cpp.
#ifndef RELAXVM_EXAMPLES_MLP_GRAPH_HPP
#define RELAXVM_EXAMPLES_MLP_GRAPH_HPP

#include <cstddef>
#include <cstdint>
#include <relaxvm/graph.hpp>
#include <string>
#include <vector>

#include "mlp_program.hpp"

namespace mlp {

/// x -> dense(w1, b1) -> relu -> dense(w2, b2) -> relu -> dense(w3, b3), with the kernels of
/// relaxvm/ops in destination-passing form (inputs, then the output).
inline std::string graph_json(std::int64_t n) {
  const std::string N = std::to_string(n);
  auto op = [](const char* name, const char* func, const char* inputs, int num_inputs) {
    return std::string(R"({"op": "tvm_op", "name": ")") + name + R"(", "attrs": {"func_name": ")" + func +
           R"(", "num_inputs": ")" + std::to_string(num_inputs) +
           R"(", "num_outputs": "1", "flatten_data": "0"}, "inputs": [)" + inputs + "]}";
  };
  auto input = [](const char* name) { return std::string(R"({"op": "null", "name": ")") + name + R"(", "inputs": []})"; };
  const std::string hidden = "[" + N + ", 32]";
  return R"({"nodes": [)" + input("x") + ", " + input("w1") + ", " + input("b1") + ", " + input("w2") + ", " +
         input("b2") + ", " + input("w3") + ", " + input("b3") + ", " +
         op("dense1", "ops.dense_out", "[0, 0, 0], [1, 0, 0], [2, 0, 0]", 3) + ", " +
         op("relu1", "ops.relu_out", "[7, 0, 0]", 1) + ", " +
         op("dense2", "ops.dense_out", "[8, 0, 0], [3, 0, 0], [4, 0, 0]", 3) + ", " +
         op("relu2", "ops.relu_out", "[9, 0, 0]", 1) + ", " +
         op("dense3", "ops.dense_out", "[10, 0, 0], [5, 0, 0], [6, 0, 0]", 3) +
         R"(], "arg_nodes": [0, 1, 2, 3, 4, 5, 6], "heads": [[11, 0, 0]],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
  "attrs": {"dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32", "float32", "float32",
                                    "float32", "float32", "float32", "float32", "float32"]],
            "shape": ["list_shape", [[)" + N + R"(, 16], [32, 16], [32], [32, 32], [32], [10, 32], [10], )" + hidden + ", " +
         hidden + ", " + hidden + ", " + hidden + ", [" + N + R"(, 10]]]}})";
}

/// The weights as a params file, the way they would ship beside the graph.
inline std::vector<std::byte> graph_params(const weights& w) {
  const rv::graph::named_tensor params[] = {{"w1", w.w1}, {"b1", w.b1}, {"w2", w.w2},
                                            {"b2", w.b2}, {"w3", w.w3}, {"b3", w.b3}};
  return rv::graph::save_params(params).value();
}

}  // namespace mlp

#endif  // RELAXVM_EXAMPLES_MLP_GRAPH_HPP
