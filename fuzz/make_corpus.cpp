// SPDX-License-Identifier: Apache-2.0
// Writes the fuzz targets' seed corpora into DIR/load, DIR/run and DIR/graph: real executables
// (shape heap and matching, control flow, VM-to-VM calls, closures and tuples, every constant
// kind), the graphs of seeds/004 and a params file. Usage: make_corpus DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <relaxvm.hpp>
#include <relaxvm/graph/params.hpp>
#include <string>
#include <vector>

#include "seed_graphs.hpp"

namespace rv = relaxvm;
using rv::builtins::make_code;
using rv::builtins::match_code;

namespace {

void write(const std::filesystem::path& p, const std::vector<std::byte>& bytes) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<rv::executable> programs() {
  constexpr auto imm = [](auto code) { return static_cast<std::int64_t>(code); };
  std::vector<rv::executable> out;
  {  // shapes: main(x) = the shape of x, through the shape heap
    rv::exec_builder b;
    auto fn = b.function("main", 1, {"x"});
    b.emit_call("vm.builtin.alloc_shape_heap", {b.vm_state(), b.imm(2)}, b.r(1));
    b.emit_call("vm.builtin.match_shape", {b.r(0), b.r(1), b.imm(2), b.imm(imm(match_code::store_to_heap)), b.imm(0),
                                           b.imm(imm(match_code::store_to_heap)), b.imm(1)});
    b.emit_call("vm.builtin.make_shape", {b.r(1), b.imm(2), b.imm(imm(make_code::load_shape)), b.imm(1),
                                          b.imm(imm(make_code::load_shape)), b.imm(0)},
                b.r(2));
    b.emit_call("vm.builtin.alloc_storage", {b.vm_state(), b.r(2), b.imm(0), b.c(b.add_dtype(rv::dtype::uint8())),
                                             b.c(b.add_string("global"))},
                b.r(3));
    b.emit_ret(b.r(2));
    fn.end();
    out.push_back(b.get());
  }
  {  // control flow and calls: loop(n) counts down through a VM call; pick(c) branches
    rv::exec_builder b;
    {
      auto fn = b.function("dec", 1, {"n"});
      b.emit_call("vm.builtin.shape_of", {b.r(0)}, b.r(1));
      b.emit_ret(b.r(0));
      fn.end();
    }
    {
      auto fn = b.function("pick", 2, {"c", "x"});
      b.emit_if(b.r(0), 3);
      b.emit_call("dec", {b.r(1)}, b.r(2));
      b.emit_ret(b.r(2));
      b.emit_call("vm.builtin.copy", {b.r(1)}, b.r(3));
      b.emit_ret(b.r(3));
      fn.end();
    }
    out.push_back(b.get());
  }
  {  // tuples, closures, constants of every kind
    rv::exec_builder b;
    auto fn = b.function("main", 1, {"x"});
    const auto t = b.c(b.add_constant(rv::tensor::from<float>(std::vector<float>{1, 2, 3, 4}, {2, 2})));
    b.emit_call("vm.builtin.make_tuple", {b.r(0), t, b.c(b.add_shape({3, 4})), b.c(b.add_string("s")), b.imm(7)}, b.r(1));
    b.emit_call("vm.builtin.tuple_getitem", {b.r(1), b.imm(1)}, b.r(2));
    b.emit_call("vm.builtin.make_closure", {b.f("vm.builtin.copy"), b.r(2)}, b.r(3));
    b.emit_call("vm.builtin.invoke_closure", {b.vm_state(), b.r(3)}, b.r(4));
    b.emit_call("vm.builtin.check_tensor_info", {b.r(4), b.imm(2), b.c(b.add_dtype(rv::dtype::float32())),
                                                 b.c(b.add_string("ErrorContext(fn=main)"))});
    b.emit_ret(b.r(4));
    fn.end();
    out.push_back(b.get());
  }
  return out;
}

const char* graphs[] = {
    seed_graphs::add3,
    seed_graphs::shared,
    R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "add", "attrs": {"func_name": "ops.add_out", "num_inputs": "2", "num_outputs": "1", "flatten_data": "1"}, "inputs": [[0, 0], [0, 0]]},
    {"op": "tvm_op", "name": "reshape_nop", "attrs": {"func_name": "__nop", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[1, 0]]},
    {"op": "tvm_op", "name": "copy", "attrs": {"func_name": "__copy", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[2, 0]]},
    {"op": "tvm_op", "name": "relu", "attrs": {"func_name": "ops.relu_out", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[3, 0]]}],
   "arg_nodes": [0], "heads": [[4, 0]], "node_row_ptr": [0, 1, 2, 3, 4, 5],
   "attrs": {"dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32"]],
             "shape": ["list_shape", [[2, 4], [2, 4], [8], [8], [8]]], "device_index": ["list_int", [1, 1, 1, 1, 1]]}})",
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  for (const char* t : {"load", "run", "graph"}) std::filesystem::create_directories(dir / t);
  int i = 0;
  for (const rv::executable& exe : programs()) {
    const std::vector<std::byte> bytes = exe.save();
    write(dir / "load" / ("exe" + std::to_string(i)), bytes);
    // run: 18 argument bytes (a float32 tensor, an int, a bool), then the executable
    std::vector<std::byte> run = {std::byte{18}, std::byte{5}};
    for (int k = 0; k < 8; ++k) run.push_back(std::byte{static_cast<unsigned char>(k == 0 ? 0x1d : 0)});
    run.push_back(std::byte{1});
    for (int k = 0; k < 8; ++k) run.push_back(std::byte{static_cast<unsigned char>(k == 0 ? 3 : 0)});
    run.resize(19, std::byte{2});
    run.insert(run.end(), bytes.begin(), bytes.end());
    write(dir / "run" / ("exe" + std::to_string(i)), run);
    ++i;
  }
  i = 0;
  for (const char* g : graphs) {
    std::vector<std::byte> b = {std::byte{0}};
    for (const char* c = g; *c; ++c) b.push_back(static_cast<std::byte>(*c));
    write(dir / "graph" / ("graph" + std::to_string(i++)), b);
  }
  const rv::graph::named_tensor p[] = {{"w", rv::tensor::from<float>(std::vector<float>{1, 2, 3}, {3})},
                                       {"n", rv::tensor::from<std::int64_t>(std::vector<std::int64_t>{4}, rv::shape{})}};
  std::vector<std::byte> params = {std::byte{1}};
  const std::vector<std::byte> saved = rv::graph::save_params(p).value();
  params.insert(params.end(), saved.begin(), saved.end());
  write(dir / "graph" / "params", params);
  std::printf("make_corpus: seeds written to %s\n", dir.c_str());
  return 0;
}
