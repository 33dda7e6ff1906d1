// SPDX-License-Identifier: Apache-2.0
// Writes the fuzz targets' seed corpora into DIR/load, DIR/run, DIR/build, DIR/graph, DIR/tvm_relax,
// DIR/tvm_relay and DIR/onnx: real executables (shape heap and matching, control flow, VM-to-VM calls,
// closures and tuples, every constant kind), inputs for fuzz_build's program decoder (one feature
// each), the graphs of examples/seed_graphs.hpp and a params file; the same executables in TVM's Relax format, and
// the Relax and Relay files TVM v0.19.0 wrote (RELAXVM_TVM_FIXTURES, when the build found them); the
// ONNX models of tests/fixtures/onnx and ONNX's node cases (RELAXVM_ONNX_FIXTURES, RELAXVM_ONNX_TESTDATA).
// Usage: make_corpus DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <relaxvm.hpp>
#include <relaxvm/graph/params.hpp>
#include <relaxvm/tvm.hpp>
#include <string>
#include <utility>
#include <vector>

#include "build_input.hpp"
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

// Inputs for fuzz_build, each written against the decoder in fuzz/build.cpp (the comments say
// what the bytes decode to). `RELAXVM_FUZZ_DUMP=1 fuzz_build SEED` prints the program a seed
// makes; a change to the decoder can turn a seed into another program, so check them then.
std::vector<std::pair<const char*, std::vector<std::uint8_t>>> build_seeds() {
  namespace fz = relaxvm_fuzz;
  constexpr auto op = [](fz::stmt s) { return static_cast<std::uint8_t>(s); };
  using fz::stmt;
  return {
      // f0() = t, t = make_tuple(t, heap) 2^15 times: dropping, printing and sharing the result
      // must not recurse once per level.
      {"deep_tuple",
       {fz::share_results, fz::big_budget, 0, /*f0*/ 0, 0, 0,
        /*statements*/ 1, op(stmt::nest_loop), /*tuples*/ 0, /*(closure target: f0)*/ 2, /*2^15*/ 225,
        /*the loop's heap*/ 0, 1, /*no block*/ 0,
        /*ret t*/ 0, 0}},
      // f0() = c, c = make_closure(f0, c) 2^15 times: closures capturing closures.
      {"deep_closure",
       {fz::share_results, fz::big_budget, 0, 0, 0, 0,
        1, op(stmt::nest_loop), /*closures*/ 2, /*of f0*/ 2, /*2^15*/ 225, 0,
        0, 0}},
      // f0(x) = invoke_closure(%vm, make_closure(f0), x): recursion through the C++ stack, with a
      // call depth that lets it go 2^14 deep.
      {"closure_recursion",
       {0, fz::deep_calls, 0, /*f0(x)*/ 1, 0, 0,
        2, op(stmt::make_closure), /*vm function*/ 0, /*itself*/ 2, /*captures nothing*/ 0, 0,
        op(stmt::invoke_closure), /*a register*/ 0, 0, /*%vm*/ 0, /*its arity*/ 0, /*x*/ 0, 0, 0,
        /*ret the result*/ 0, 2}},
      // f0(x) = f1(x) then if (x) return; f1(x) = f0(x): mutual recursion to the depth limit.
      {"mutual_recursion",
       {0, 0, /*two functions*/ 1, 1, 0, 0, 1, 0, 0,
        /*f0*/ 2, op(stmt::call_vm), /*f1*/ 1, /*x*/ 0, 0, 0,
        op(stmt::if_block), /*read_if_cond(x)*/ 0, 0, 0, /*one statement*/ 0, op(stmt::early_ret), 0, 1, /*no else*/ 0,
        0, 1,
        /*f1*/ 1, op(stmt::call_vm), /*f0*/ 0, 0, 0, 0,
        0, 1}},
      // f0() calls f1() until the budget runs out; f1 has 65536 registers: the budget must count
      // the registers each call sets up and clears, or the loop runs for minutes.
      {"big_registers",
       {0, 0, 1, /*f0()*/ 0, 0, 0, /*f1()*/ 0, /*2^16 registers*/ 234, 0,
        /*f0*/ 1, op(stmt::loop), /*forever*/ 248, /*one statement*/ 0, op(stmt::call_vm), /*f1*/ 1, 0,
        0, 0,
        /*f1: no statements*/ 0}},
      // f0 has 65536 registers and calls f1 (131071 registers) and itself: the stack limit
      // refuses the frame that does not fit.
      {"huge_frames",
       {0, 0, 1, /*f0()*/ 0, /*2^16 registers*/ 234, 0, /*f1(x)*/ 1, /*65536 + 0xffff*/ 250, 0xff, 0xff, 0,
        /*f0*/ 2, op(stmt::call_vm), /*f1*/ 1, /*a constant*/ 0, /*int*/ 0, /*1*/ 1, 0,
        op(stmt::call_vm), /*f0*/ 0, 0,
        0, 0,
        /*f1*/ 1, op(stmt::call_vm), 0, 0,
        0, 0}},
      // f0(x): 4 times { c = 5; b = read_if_cond(c); goto the start }: a counted loop left by a
      // backward goto, so only the budget ends it.
      {"loops",
       {0, 0, 0, 1, 0, 0,
        2, op(stmt::loop), /*4 times*/ 3, /*3 statements*/ 2,
        op(stmt::constant), /*int*/ 0, /*5*/ 5, 0,
        op(stmt::cond), /*read_if_cond*/ 1, 0, 0, 0, 0,
        op(stmt::raw_jump), /*goto*/ 3, /*to instruction 0*/ 0,
        op(stmt::make_tuple), /*2 fields*/ 2, 0, 0, 0, 1, 0,
        0, 3}},
      // f0(x) = copy(%vm) after print(x, ...) with x as the context; f1(x) = make_tuple(x, %vm).
      // The first VM dies, then the second gets its context as an argument: stored or returned,
      // %vm must never outlive its VM.
      {"escape_vm",
       {fz::outlive_vm, 0, 1, 1, 0, 0, 1, 0, 0,
        /*f0*/ 2, op(stmt::print), /*context from a register*/ 15, /*x*/ 0, /*no values*/ 0, 0,
        op(stmt::escape_vm), /*copy*/ 0, 0,
        /*ret it*/ 0, 2,
        /*f1*/ 1, op(stmt::escape_vm), /*make_tuple*/ 1, 0, 0, 0,
        0, 1,
        /*arguments: six nulls*/ 0, 0, 0, 0, 0, 0, /*first VM*/ 0, 0, /*second VM: f0 gets the context*/ 6, 8}},
      // Storage of zero bytes and of 16, a tensor view, a reshape, a shape heap filled by
      // match_shape, read by make_shape, computed on by shape_arith.
      {"memory",
       {0, 0, 0, 0, 0, 0,
        8, op(stmt::alloc_storage), /*%vm*/ 0, /*shape [0]*/ 1, 0, 0, /*device 0*/ 0, 0, /*uint8*/ 0, /*no scope*/ 0, 0,
        op(stmt::alloc_storage), 0, /*shape [16]*/ 1, 0, 16, /*device -1*/ 0, 1, 0, 0, 0,
        op(stmt::alloc_tensor), /*the 16 bytes*/ 0, 0, 1, /*offset 0*/ 0, 0, /*shape [2, 2]*/ 2, 0, 2, 0, 2,
        /*int32*/ 0, 3, 0, 0,
        op(stmt::reshape), 0, 0, 0, /*shape constant [4]*/ 216, 0, 1, 0, 4, 0,
        op(stmt::shape_heap), /*%vm*/ 0, 0, /*4 slots*/ 0, 4, 0,
        op(stmt::match_shape), /*a tensor*/ 0, 0, 0, 1, /*the heap*/ 0, 0, 0, 0, /*n = 1*/ 1, 0,
        /*store_to_heap*/ 1, /*slot 0*/ 0, /*no err_ctx*/ 0,
        op(stmt::make_shape), /*n = 2*/ 2, /*the heap*/ 0, 0, 0, 0, /*load slot 0*/ 1, 0, /*imm 3*/ 0, 3, 0,
        op(stmt::shape_arith), /*the heap*/ 0, 0, 0, /*one group*/ 0, /*mul*/ 2, /*slot 1*/ 1, /*load 0*/ 1, 0, 0,
        /*times 5*/ 0, 0, 5,
        0, 6}},
      // Constants of every kind in registers, in a tuple; formalization and dedup off.
      {"constants",
       {fz::no_formalize | fz::no_dedup, 0, 0, 0, 0, 0,
        9, op(stmt::constant), /*int*/ 0, 200, 0,
        op(stmt::constant), /*float*/ 1, /*inf*/ 6, 0,
        op(stmt::constant), /*bool*/ 2, 1, 0,
        op(stmt::constant), /*dtype*/ 3, /*int32*/ 3, 0,
        op(stmt::constant), /*device*/ 4, /*cuda*/ 2, 0,
        op(stmt::constant), /*shape*/ 5, /*3 dims*/ 3, 0, 2, 0, 3, 0, 4, 0,
        op(stmt::constant), /*string*/ 6, 2, 0,
        op(stmt::constant), /*tensor*/ 7, /*float32*/ 5, /*one dim*/ 1, /*of 2*/ 2, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0,
        op(stmt::make_tuple), /*4 fields*/ 4, 0, 1, 0, 4, 0, 5, 0, 7, 0,
        0, 8}},
      // Relay-style code: f0(a, b) makes an ADT, reads its tag, calls f1 through call_tir_dyn
      // with the shape [7], returns a closure of f1; f1(x) prints x and checks it is a tuple. The
      // second VM is instrumented, used through the stateful API, and calls closures from C++.
      {"relay",
       {fz::instrument | fz::stateful | fz::closures_from_c, 0, 1, /*f0(a, b)*/ 2, 0, 3, /*f1(x)*/ 1, 0, 0,
        /*f0*/ 5, op(stmt::make_adt), /*tag 2*/ 2, /*2 fields*/ 2, 0, 0, 0, 1, 0,
        op(stmt::adt_read), 0, 0, 0, /*get_tag*/ 1, 0,
        op(stmt::call_tir_dyn), /*%vm*/ 0, 0, /*a vm function*/ 0, 0, /*f1*/ 1, /*1 dim*/ 1, /*7*/ 7, 0, 0,
        op(stmt::make_closure), 0, 0, 1, 0, 0,
        op(stmt::make_tuple), 2, 0, 3, 0, 5, 0,
        0, 5,
        /*f1*/ 2, op(stmt::print), 0, /*one value*/ 1, 0, 0, 0,
        op(stmt::check_info), 0, 0, /*check_tuple_info*/ 2, /*size 1*/ 1, 0, 216, 0, 2,
        0, 0}},
  };
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
  for (const char* t : {"load", "run", "build", "graph", "tvm_relax", "tvm_relay", "onnx"}) std::filesystem::create_directories(dir / t);
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
    if (rv::result<std::vector<std::byte>> tvm = rv::tvm::save_relax(exe); tvm.ok())  // TVM holds no bool or device
      write(dir / "tvm_relax" / ("exe" + std::to_string(i)), *tvm);
    ++i;
  }
#ifdef RELAXVM_TVM_FIXTURES  // tests/fixtures/tvm, set by fuzz/meson.build
  for (const char* f : {"relax_calls.rxe", "relax_float.rxe", "relax_shape.rxe"})
    std::filesystem::copy_file(std::filesystem::path(RELAXVM_TVM_FIXTURES) / f, dir / "tvm_relax" / f,
                               std::filesystem::copy_options::overwrite_existing);
  for (const char* f : {"relay_adt.ro", "relay_tensor.ro", "relay_storage_shape.ro"})  // Relay: TVM's files only
    std::filesystem::copy_file(std::filesystem::path(RELAXVM_TVM_FIXTURES) / f, dir / "tvm_relay" / f,
                               std::filesystem::copy_options::overwrite_existing);
#endif
#ifdef RELAXVM_ONNX_FIXTURES  // tests/fixtures/onnx; the MLPs (941 KB of weights) would only slow the fuzzer
  for (const char* f : {"dscnn.onnx", "lenet.onnx", "transformer.onnx", "transformer.dynbatch.onnx", "transformer.opset17.onnx"})
    std::filesystem::copy_file(std::filesystem::path(RELAXVM_ONNX_FIXTURES) / f, dir / "onnx" / f,
                               std::filesystem::copy_options::overwrite_existing);
#endif
#ifdef RELAXVM_ONNX_TESTDATA  // ONNX's node cases (Debian's libonnx-testdata), where installed: one per op family
  for (const char* c : {"test_add_bcast", "test_batchnorm_example", "test_cast_FLOAT_to_DOUBLE", "test_clip_default_int8_min",
                        "test_concat_1d_axis_0", "test_constant", "test_conv_with_strides_padding", "test_einsum_batch_matmul",
                        "test_expand_dim_changed", "test_gather_0", "test_gemm_all_attributes", "test_layer_normalization_2d_axis0",
                        "test_matmul_2d", "test_maxpool_2d_pads", "test_reduce_sum_keepdims_example", "test_reshape_reordered_all_dims",
                        "test_shape", "test_slice", "test_softmax_axis_0", "test_split_equal_parts_1d", "test_transpose_default",
                        "test_where_example"}) {
    const std::filesystem::path from = std::filesystem::path(RELAXVM_ONNX_TESTDATA) / "node" / c / "model.onnx";
    if (std::filesystem::exists(from))
      std::filesystem::copy_file(from, dir / "onnx" / (std::string(c) + ".onnx"), std::filesystem::copy_options::overwrite_existing);
  }
#endif
  for (const auto& [name, input] : build_seeds()) {
    std::vector<std::byte> b(input.size());
    for (std::size_t k = 0; k < input.size(); ++k) b[k] = static_cast<std::byte>(input[k]);
    write(dir / "build" / name, b);
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
