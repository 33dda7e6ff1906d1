// SPDX-License-Identifier: Apache-2.0
// Two graphs exactly as TVM's relay.build wrote them. Shared by
// examples/graph.cpp, tests/unit/graph.cpp and fuzz/make_corpus.cpp.
#ifndef RELAXVM_EXAMPLES_SEED_GRAPHS_HPP
#define RELAXVM_EXAMPLES_SEED_GRAPHS_HPP

namespace seed_graphs {

/// add(add(a, b), c) for (1, 10) float32 tensors.
inline constexpr const char* add3 = R"({ "nodes": [ { "op": "null", "name": "a", "inputs": [] }, { "op": "null", "name": "b", "inputs": [] }, { "op": "null", "name": "c", "inputs": [] }, { "op": "tvm_op", "name": "tvmgen_default_fused_add", "attrs": { "num_inputs": "2", "num_outputs": "1", "hash": "8ec3c08331cd92b5", "flatten_data": "0", "func_name": "tvmgen_default_fused_add" }, "inputs": [ [ 0, 0, 0 ], [ 1, 0, 0 ] ] }, { "op": "tvm_op", "name": "tvmgen_default_fused_add1", "attrs": { "num_inputs": "2", "num_outputs": "1", "hash": "8ec3c08331cd92b5", "flatten_data": "0", "func_name": "tvmgen_default_fused_add" }, "inputs": [ [ 3, 0, 0 ], [ 2, 0, 0 ] ] } ], "arg_nodes": [0, 1, 2], "heads": [ [ 4, 0, 0 ] ], "attrs": { "dltype": [ "list_str", [ "float32", "float32", "float32", "float32", "float32" ] ], "shape": [ "list_shape", [ [1, 10], [1, 10], [1, 10], [1, 10], [1, 10] ] ], "storage_id": [ "list_int", [0, 1, 2, 3, 4] ] }, "node_row_ptr": [0, 1, 2, 3, 4, 5] })";

/// out1 = a + b; out2 = out1 + a; out = out2 + b. out shares out1's storage.
inline constexpr const char* shared = R"({ "nodes": [ { "op": "null", "name": "a", "inputs": [] }, { "op": "null", "name": "b", "inputs": [] }, { "op": "tvm_op", "name": "tvmgen_default_fused_add", "attrs": { "num_outputs": "1", "num_inputs": "2", "flatten_data": "0", "func_name": "tvmgen_default_fused_add", "hash": "8ec3c08331cd92b5" }, "inputs": [ [ 0, 0, 0 ], [ 1, 0, 0 ] ] }, { "op": "tvm_op", "name": "tvmgen_default_fused_add1", "attrs": { "num_outputs": "1", "num_inputs": "2", "flatten_data": "0", "func_name": "tvmgen_default_fused_add", "hash": "8ec3c08331cd92b5" }, "inputs": [ [ 2, 0, 0 ], [ 0, 0, 0 ] ] }, { "op": "tvm_op", "name": "tvmgen_default_fused_add2", "attrs": { "num_outputs": "1", "num_inputs": "2", "flatten_data": "0", "func_name": "tvmgen_default_fused_add", "hash": "8ec3c08331cd92b5" }, "inputs": [ [ 3, 0, 0 ], [ 1, 0, 0 ] ] } ], "arg_nodes": [0, 1], "heads": [ [ 4, 0, 0 ] ], "attrs": { "dltype": [ "list_str", [ "float32", "float32", "float32", "float32", "float32" ] ], "storage_id": [ "list_int", [0, 1, 2, 3, 2] ], "shape": [ "list_shape", [ [1, 10], [1, 10], [1, 10], [1, 10], [1, 10] ] ] }, "node_row_ptr": [0, 1, 2, 3, 4, 5] })";

}  // namespace seed_graphs

#endif  // RELAXVM_EXAMPLES_SEED_GRAPHS_HPP
