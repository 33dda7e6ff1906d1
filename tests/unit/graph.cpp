// SPDX-License-Identifier: Apache-2.0
// The graph executor: TVM's graphs (examples/seed_graphs.hpp), the storage planner, every API call, params files
// (byte-exact against the reference's format), several devices, the debug timing, and one test per
// class of malformed graph.
#include <doctest/doctest.h>
#include <relaxvm/doctest.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../support/counting_new.hpp"
#include "mlp_graph.hpp"
#include "seed_graphs.hpp"

namespace rv = relaxvm;
namespace gr = relaxvm::graph;

namespace {

// TVM's add graph (storage ids as TVM wrote them).
const std::string add3 = seed_graphs::add3;

// TVM's second graph: out2 = (a + b) + a; out = out2 + b; out shares out1's storage.
const std::string shared = seed_graphs::shared;

std::string replace(std::string s, std::string_view from, std::string_view to) {
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The same graph without its "storage_id" attribute (and the comma that separated it).
std::string without_storage_ids(const std::string& json) {
  std::size_t at = json.find("\"storage_id\"");
  REQUIRE(at != std::string::npos);
  std::size_t end = json.find(']', json.find('[', json.find('[', at) + 1)) + 1;  // ["list_int", [...]]
  end = json.find(']', end) + 1;
  std::size_t before = at;
  while (before > 0 && json[before - 1] == ' ') --before;
  if (json[before - 1] == ',') {
    at = before - 1;
  } else {
    while (end < json.size() && (json[end] == ' ' || json[end] == ',')) ++end;
  }
  return json.substr(0, at) + json.substr(end);
}

rv::registry make_registry() {
  rv::registry reg;
  rv::ops::register_all(reg);
  reg.add("tvmgen_default_fused_add", *reg.find("ops.add_out"));
  return reg;
}

rv::tensor filled(rv::shape s, float v) {
  std::int64_t n = 0;
  (void)s.numel(n);
  return rv::tensor::from<float>(std::vector<float>(static_cast<std::size_t>(n), v), s);
}

std::string error_of(const rv::status& s) { return s.ok() ? std::string("(no error)") : std::string(s.error().message()); }
template <class T>
std::string error_of(const rv::result<T>& r) {
  return r.ok() ? std::string("(no error)") : std::string(r.error().message());
}

// A tensor of `s` float32 viewing a 64-byte aligned buffer the test owns.
struct external_buffer {
  alignas(64) float data[64] = {};
  rv::tensor view(rv::shape s, std::size_t offset_floats = 0) {
    return rv::tensor::try_view(data + offset_floats, s, rv::dtype::float32(), rv::device::cpu(), {}, false).value();
  }
};

}  // namespace

TEST_CASE("TVM's three-input add graph runs as the reference prints it") {
  const rv::registry reg = make_registry();
  gr::executor g = gr::executor::create(add3, reg).value();
  CHECK(g.get_num_inputs() == 3);
  CHECK(g.get_num_outputs() == 1);
  CHECK(g.graph().storage_ids == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  REQUIRE(g.set_input("a", filled({1, 10}, 1)).ok());
  REQUIRE(g.set_input(1, filled({1, 10}, 2)).ok());
  REQUIRE(g.set_input("c", filled({1, 10}, 4)).ok());
  REQUIRE(g.run().ok());
  const rv::tensor y = g.get_output(0).value();
  CHECK(y.shape() == rv::shape{1, 10});
  for (int i = 0; i < 10; ++i) CHECK(y.data<const float>()[i] == 7.0f);
  // run() allocates nothing.
  const long before = relaxvm_test::heap_allocations();
  for (int i = 0; i < 10; ++i) REQUIRE(g.run().ok());
  CHECK(relaxvm_test::heap_allocations() == before);
}

TEST_CASE("TVM's second graph: the output shares out1's storage, and the result is still right") {
  const rv::registry reg = make_registry();
  gr::executor g = gr::executor::create(shared, reg).value();
  CHECK(g.graph().storage_ids == std::vector<std::int64_t>{0, 1, 2, 3, 2});
  CHECK(g.storage_bytes().size() == 4);
  REQUIRE(g.set_input("a", filled({1, 10}, 1)).ok());
  REQUIRE(g.set_input("b", filled({1, 10}, 10)).ok());
  REQUIRE(g.run().ok());
  const rv::tensor out = g.get_output(0).value();
  CHECK(out.data<const float>()[0] == 22.0f);  // ((1 + 10) + 1) + 10
}

TEST_CASE("planner: without storage ids the seeds' graphs get the ids printed there") {
  gr::graph_def g1 = gr::parse_graph(without_storage_ids(add3)).value();
  CHECK(g1.storage_ids.empty());
  gr::plan_storage(g1);
  CHECK(g1.storage_ids == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  gr::graph_def g2 = gr::parse_graph(without_storage_ids(shared)).value();
  gr::plan_storage(g2);
  CHECK(g2.storage_ids == std::vector<std::int64_t>{0, 1, 2, 3, 2});
  // The executor plans by itself, and the planned graph runs.
  const rv::registry reg = make_registry();
  gr::executor g = gr::executor::create(without_storage_ids(shared), reg).value();
  CHECK(g.graph().storage_ids == std::vector<std::int64_t>{0, 1, 2, 3, 2});
}

TEST_CASE("planner: a chain reuses freed storage; __nop shares; the smallest fitting block wins") {
  // x -> f -> f -> f -> reshape(__nop) -> g (smaller): a worked example of the reference's planner, extended.
  const std::string chain = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "a", "attrs": {"func_name": "f", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0]]},
    {"op": "tvm_op", "name": "b", "attrs": {"func_name": "f", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[1, 0]]},
    {"op": "tvm_op", "name": "c", "attrs": {"func_name": "f", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[2, 0]]},
    {"op": "tvm_op", "name": "r", "attrs": {"func_name": "__nop", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[3, 0]]},
    {"op": "tvm_op", "name": "d", "attrs": {"func_name": "f", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[4, 0]]}],
   "arg_nodes": [0], "heads": [[5, 0]], "node_row_ptr": [0, 1, 2, 3, 4, 5, 6],
   "attrs": {"dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32", "float32"]],
             "shape": ["list_shape", [[8], [8], [8], [8], [2, 4], [4]]]}})";
  gr::graph_def g = gr::parse_graph(chain).value();
  gr::plan_storage(g);
  // a: new 1; b: new 2 (a is live); a freed; c: 1; b freed; r = c's storage; d (16 bytes) takes
  // the freed 32-byte block 2 (within 16x) rather than a new one.
  CHECK(g.storage_ids == std::vector<std::int64_t>{0, 1, 2, 1, 1, 2});
}

TEST_CASE("API: inputs by name and index, outputs, and their errors") {
  const rv::registry reg = make_registry();
  gr::executor g = gr::executor::create(add3, reg).value();
  CHECK(g.get_input_index("a") == 0);
  CHECK(g.get_input_index("c") == 2);
  CHECK(g.get_input_index("nope") == -1);
  REQUIRE(g.set_input("b", filled({1, 10}, 3)).ok());
  CHECK(g.get_input("b").value().data<const float>()[5] == 3.0f);
  CHECK(g.get_input(1).value().data<const float>()[0] == 3.0f);
  // The same bytes in another shape are accepted (the reference checks the size only)...
  CHECK(g.set_input(0, filled({10}, 1)).ok());
  // ...but not another size or dtype.
  CHECK(error_of(g.set_input(0, filled({1, 9}, 1))) ==
        "set_input: input 0 ('a') is [1, 10] float32, but the tensor is [1, 9] float32");
  CHECK(error_of(g.set_input(0, rv::tensor::from<double>(std::vector<double>(10, 1.0), {1, 10}))) ==
        "set_input: input 0 ('a') is [1, 10] float32, but the tensor is [1, 10] float64");
  CHECK(error_of(g.set_input("nope", filled({1, 10}, 1))) == "set_input: the graph has no input named 'nope'");
  CHECK(error_of(g.set_input(3, filled({1, 10}, 1))) == "input 3 does not exist; the graph has 3 inputs");
  CHECK(error_of(g.get_input("nope")) == "get_input: the graph has no input named 'nope'");
  CHECK(error_of(g.get_output(1)) == "get_output: output 1 does not exist; the graph has 1 outputs");
  CHECK(error_of(g.set_input(0, rv::tensor())) == "set_input: input 0 ('a'): the tensor is undefined");
}

TEST_CASE("API: zero-copy inputs and outputs") {
  const rv::registry reg = make_registry();
  gr::executor g = gr::executor::create(add3, reg).value();
  external_buffer in, out;
  for (int i = 0; i < 10; ++i) in.data[i] = static_cast<float>(i);
  REQUIRE(g.set_input_zero_copy("a", in.view({1, 10})).ok());
  REQUIRE(g.set_input("b", filled({1, 10}, 0)).ok());
  REQUIRE(g.set_input("c", filled({1, 10}, 100)).ok());
  REQUIRE(g.set_output_zero_copy(0, out.view({1, 10})).ok());
  REQUIRE(g.run().ok());
  CHECK(out.data[9] == 109.0f);  // written straight into the caller's buffer
  in.data[9] = 50.0f;  // read straight from it
  REQUIRE(g.run().ok());
  CHECK(out.data[9] == 150.0f);
  CHECK(g.get_output(0).value().raw_data() == out.data);
  CHECK(g.get_input(0).value().raw_data() == in.data);
  // The reference's checks (alignment, shape, device), and the dtype too.
  CHECK(error_of(g.set_input_zero_copy(0, in.view({1, 10}, 1))) ==
        "set_input_zero_copy: node 0 ('a'): the tensor's data is at 4 bytes past a 64-byte boundary; it must be aligned");
  CHECK(error_of(g.set_input_zero_copy(0, in.view({10}))) ==
        "set_input_zero_copy: node 0 ('a') is [1, 10] float32 on cpu:0, but the tensor is [10] float32 on cpu:0");
  CHECK(error_of(g.set_output_zero_copy(0, rv::tensor::from<double>(std::vector<double>(10, 1.0), {1, 10}))) ==
        "set_output_zero_copy: node 4 ('tvmgen_default_fused_add1') is [1, 10] float32 on cpu:0, but the tensor is [1, 10] "
        "float64 on cpu:0");
  CHECK(error_of(g.set_output_zero_copy(1, out.view({1, 10}))) ==
        "set_output_zero_copy: output 1 does not exist; the graph has 1 outputs");
  CHECK(error_of(g.set_input_zero_copy("x", in.view({1, 10}))) == "set_input_zero_copy: the graph has no input named 'x'");
}

TEST_CASE("API: a zero-copy output behind a __nop re-points the producer") {
  // y = reshape(x + x) through __nop: the output entry is an alias of the add's.
  const std::string g_json = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "add", "attrs": {"func_name": "ops.add_out", "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0], [0, 0]]},
    {"op": "tvm_op", "name": "reshape_nop", "attrs": {"func_name": "__nop", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[1, 0]]}],
   "arg_nodes": [0], "heads": [[2, 0]], "node_row_ptr": [0, 1, 2, 3],
   "attrs": {"dltype": ["list_str", ["float32", "float32", "float32"]], "shape": ["list_shape", [[2, 4], [2, 4], [8]]]}})";
  const rv::registry reg = make_registry();
  gr::executor g = gr::executor::create(g_json, reg).value();
  CHECK(g.graph().storage_ids == std::vector<std::int64_t>{0, 1, 1});
  external_buffer out;
  REQUIRE(g.set_output_zero_copy(0, out.view({8})).ok());
  REQUIRE(g.set_input("x", filled({2, 4}, 1.5f)).ok());
  REQUIRE(g.run().ok());
  CHECK(out.data[7] == 3.0f);
}

TEST_CASE("flatten_data passes every argument as a 1-d view, and the entries keep their shapes") {
  rv::registry reg = make_registry();
  int calls = 0;
  reg.def("check_flat", [&](const rv::tensor& a, const rv::tensor& out) -> rv::status {
    ++calls;
    CHECK(a.ndim() == 1);
    CHECK(out.ndim() == 1);
    CHECK(a.shape()[0] == 6);
    for (int i = 0; i < 6; ++i) out.data<float>()[i] = a.data<const float>()[i] * 2;
    return {};
  });
  const std::string g_json = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "double", "attrs": {"func_name": "check_flat", "num_inputs": "1", "num_outputs": "1", "flatten_data": "1"}, "inputs": [[0, 0]]}],
   "arg_nodes": [0], "heads": [[1, 0]], "node_row_ptr": [0, 1, 2],
   "attrs": {"dltype": ["list_str", ["float32", "float32"]], "shape": ["list_shape", [[2, 3], [3, 2]]]}})";
  gr::executor g = gr::executor::create(g_json, reg).value();
  REQUIRE(g.set_input("x", filled({2, 3}, 4)).ok());
  REQUIRE(g.run().ok());
  CHECK(calls == 1);
  const rv::tensor y = g.get_output(0).value();
  CHECK(y.shape() == rv::shape{3, 2});
  CHECK(y.data<const float>()[5] == 8.0f);
  // Zero-copy reaches the flattened views too.
  external_buffer in;
  in.data[0] = 21;
  REQUIRE(g.set_input_zero_copy("x", in.view({2, 3})).ok());
  REQUIRE(g.run().ok());
  CHECK(g.get_output(0).value().data<const float>()[0] == 42.0f);
}

TEST_CASE("params: the reference's bytes, byte for byte") {
  // As TVM's save_param_dict writes {"x": float32[2] = [1.0, 2.0]}, 97 bytes.
  const unsigned char golden[] = {
      0xb7, 0x9c, 0x04, 0x05, 0x4f, 0x8d, 0xe5, 0xf7, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x78, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3f, 0xa1, 0xb4, 0x96, 0xf0, 0x40, 0x5e,  //
      0xdd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x20, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00,  //
      0x40};
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(golden), sizeof(golden));
  const std::vector<gr::named_tensor> p = gr::load_params(bytes).value();
  REQUIRE(p.size() == 1);
  CHECK(p[0].name == "x");
  CHECK(p[0].value.shape() == rv::shape{2});
  CHECK(p[0].value.dtype() == rv::dtype::float32());
  CHECK(p[0].value.data<const float>()[0] == 1.0f);
  CHECK(p[0].value.data<const float>()[1] == 2.0f);
  const std::vector<std::byte> saved = gr::save_params(p).value();
  REQUIRE(saved.size() == sizeof(golden));
  CHECK(std::memcmp(saved.data(), golden, sizeof(golden)) == 0);

  // Every way a file can be broken is an error, never a crash or a huge allocation.
  std::vector<std::byte> bad(bytes.begin(), bytes.end());
  CHECK(error_of(gr::load_params(std::span(bad).first(90))) ==
        "load_params: the file ends at byte 90 in a tensor's data (at byte 89)");
  bad[0] = std::byte{0};
  CHECK(error_of(gr::load_params(bad)) == "load_params: not a params file (the first 8 bytes are not the list magic number)");
  bad.assign(bytes.begin(), bytes.end());
  bad[16] = std::byte{0xff};  // the name count
  CHECK(error_of(gr::load_params(bad)).find("load_params: the file says it has 255 names") == 0);
  bad.assign(bytes.begin(), bytes.end());
  bad[81] = std::byte{0x09};  // the byte count: 9 instead of 8
  CHECK(error_of(gr::load_params(bad)) == "load_params: tensor 'x' says it has 9 data bytes, but [2] x float32 is 8 bytes");
  bad.assign(bytes.begin(), bytes.end());
  bad[57] = std::byte{0x02};  // device type 2
  CHECK(error_of(gr::load_params(bad)) == "load_params: tensor 'x' is on device type 2 id 0; params files hold cpu:0 tensors");
  bad.assign(bytes.begin(), bytes.end());
  bad.push_back(std::byte{0});
  CHECK(error_of(gr::load_params(bad)) == "load_params: 1 bytes follow the last tensor (at byte 97)");
}

TEST_CASE("params: round trip of several dtypes and shapes; load_params into an executor") {
  const std::vector<gr::named_tensor> p = {
      {"scalar", rv::tensor::from<std::int64_t>(std::vector<std::int64_t>{-5}, rv::shape{})},
      {"empty", rv::tensor::from<float>(std::vector<float>{}, {0, 3})},
      {"m", rv::tensor::from<double>(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3})},
  };
  const std::vector<gr::named_tensor> back = gr::load_params(gr::save_params(p).value()).value();
  REQUIRE(back.size() == 3);
  CHECK(back[0].value.data<const std::int64_t>()[0] == -5);
  CHECK(back[1].value.shape() == rv::shape{0, 3});
  CHECK(back[2].value.data<const double>()[5] == 6.0);
  CHECK(error_of(gr::save_params(std::vector<gr::named_tensor>{{"u", rv::tensor()}})) ==
        "save_params: 'u' is an undefined tensor");

  const rv::registry reg = make_registry();
  gr::executor g = gr::executor::create(add3, reg).value();
  const std::vector<gr::named_tensor> weights = {{"b", filled({1, 10}, 5)}, {"unused", filled({3}, 1)}};
  CHECK(g.load_params(gr::save_params(weights).value()).value() == 1);  // 'unused' is skipped, as the reference does
  CHECK(g.get_input("b").value().data<const float>()[0] == 5.0f);
  const std::vector<gr::named_tensor> wrong = {{"c", filled({1, 10}, 1)}, {"a", filled({2, 10}, 7)}};
  CHECK(error_of(g.load_params(gr::save_params(wrong).value())) ==
        "load_params: input 0 ('a') is [1, 10] float32, but the tensor is [2, 10] float32");
  CHECK(g.get_input("c").value().data<const float>()[0] != 1.0f);  // nothing was copied
  const std::vector<gr::named_tensor> wrong_dtype = {{"a", rv::tensor::from<double>(std::vector<double>(10, 1.0), {1, 10})}};
  CHECK(error_of(g.load_params(gr::save_params(wrong_dtype).value())) ==
        "load_params: input 0 ('a') is [1, 10] float32, but the tensor is [1, 10] float64");
  // The same bytes in another shape load, as with set_input.
  const std::vector<gr::named_tensor> reshaped = {{"a", filled({10}, 7)}};
  CHECK(g.load_params(gr::save_params(reshaped).value()).value() == 1);
}

TEST_CASE("devices: two CPU ids, entries placed by device_index, a __copy between them") {
  // x (device 0) -> add (device 0) -> __copy -> add (device 1)
  const std::string g_json = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "add0", "attrs": {"func_name": "ops.add_out", "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0], [0, 0]]},
    {"op": "tvm_op", "name": "copy", "attrs": {"func_name": "__copy", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[1, 0]]},
    {"op": "tvm_op", "name": "add1", "attrs": {"func_name": "ops.add_out", "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[2, 0], [2, 0]]}],
   "arg_nodes": [0], "heads": [[3, 0]], "node_row_ptr": [0, 1, 2, 3, 4],
   "attrs": {"dltype": ["list_str", ["float32", "float32", "float32", "float32"]], "shape": ["list_shape", [[4], [4], [4], [4]]],
             "device_index": ["list_int", [0, 0, 1, 1]]}})";
  const rv::registry reg = make_registry();
  const rv::allocator a0 = rv::allocator::pooled(), a1 = rv::allocator::pooled();
  gr::graph_options opts;
  opts.devices = {{rv::device::cpu(0), a0}, {rv::device::cpu(1), a1}};
  opts.device_index = gr::device_index_kind::position;
  gr::executor g = gr::executor::create(g_json, reg, opts).value();
  CHECK(g.get_input(0).value().device() == rv::device::cpu(0));
  CHECK(g.get_output(0).value().device() == rv::device::cpu(1));
  CHECK(a0.stats().bytes_in_use == 2 * 64);  // two storages of 16 bytes, 64-byte aligned blocks
  CHECK(a1.stats().bytes_in_use == 2 * 64);
  REQUIRE(g.set_input("x", filled({4}, 1.25f)).ok());
  REQUIRE(g.run().ok());
  CHECK(g.get_output(0).value().data<const float>()[3] == 5.0f);
  // Read as the reference does (a device type), device_index 0 and 1 are not CPU; everything
  // falls back to the first device.
  gr::graph_options by_type;
  by_type.devices = opts.devices;
  const std::string typed = replace(g_json, "[0, 0, 1, 1]", "[1, 1, 1, 1]");
  gr::executor t = gr::executor::create(typed, reg, by_type).value();
  CHECK(t.get_output(0).value().device() == rv::device::cpu(0));
  // A position past the list, and a storage id on two devices.
  gr::graph_options one = opts;
  one.devices.pop_back();
  CHECK(error_of(gr::executor::create(g_json, reg, one)) == "graph: entry 2 has device_index 1, but the executor has 1 devices");
  const std::string clash = replace(g_json, "\"device_index\"", "\"storage_id\": [\"list_int\", [0, 1, 1, 2]], \"device_index\"");
  CHECK(error_of(gr::executor::create(clash, reg, opts)) ==
        "graph: storage 1 is used on device cpu:0 by entry 1 and on cpu:1 by entry 2; one storage cannot be on two devices");
  gr::graph_options gpu;
  gpu.devices = {{rv::device(kDLCUDA, 0), a0}};
  CHECK(error_of(gr::executor::create(g_json, reg, gpu)) ==
        "graph executor: device 0 is cuda:0; relaxvm runs on host (cpu) devices only");
}

TEST_CASE("debug mode: per-node times, sorted, with the total") {
  const rv::registry reg = make_registry();
  gr::executor g = gr::executor::create(mlp::graph_json(4), reg).value();
  REQUIRE(g.load_params(mlp::graph_params(mlp::make_weights())).ok());
  const gr::profile_report r = g.profile(20).value();
  CHECK(r.runs == 20);
  REQUIRE(r.rows.size() == 5);  // the operator nodes
  double sum = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    sum += r.rows[i].mean_us;
    if (i > 0) CHECK(r.rows[i - 1].mean_us >= r.rows[i].mean_us);
  }
  CHECK(sum == doctest::Approx(r.total_us));
  const std::string table = r.table();
  CHECK(table.find("Node Name") == 0);
  CHECK(table.find("dense1") != std::string::npos);
  CHECK(table.find("[4, 10]") != std::string::npos);
  CHECK(table.find("Total_time") != std::string::npos);
  CHECK(error_of(g.profile(0)) == "profile: runs must be at least 1");
}

TEST_CASE("the MLP graph gives what the MLP bytecode gives") {
  const rv::registry reg = make_registry();
  const mlp::weights w = mlp::make_weights();
  rv::virtual_machine vm(mlp::build(w), reg);
  for (std::int64_t n : {1, 5}) {
    gr::executor g = gr::executor::create(mlp::graph_json(n), reg).value();
    CHECK(g.load_params(mlp::graph_params(w)).value() == 6);
    const rv::tensor x = mlp::make_input(n);
    REQUIRE(g.set_input("x", x).ok());
    REQUIRE(g.run().ok());
    const rv::tensor a = g.get_output(0).value();
    const rv::tensor b = vm["main"](x).as<rv::tensor>();
    RELAXVM_CHECK_EQUAL(a, b);
  }
}

TEST_CASE("a kernel's error names its node, and the executor stays usable") {
  rv::registry reg = make_registry();
  bool fail = true;
  reg.def("maybe_fail", [&](const rv::tensor&, const rv::tensor&) -> rv::status {
    if (fail) return rv::detail::runtime_error("maybe_fail: asked to fail");
    return {};
  });
  const std::string g_json = replace(add3, R"("func_name": "tvmgen_default_fused_add" }, "inputs": [ [ 3, 0, 0 ])",
                                     R"("func_name": "maybe_fail" }, "inputs": [ [ 3, 0, 0 ])");
  gr::executor g = gr::executor::create(replace(replace(g_json, R"("num_inputs": "2", "num_outputs": "1", "hash": "8ec3c08331cd92b5", "flatten_data": "0", "func_name": "maybe_fail")",
                                                        R"("num_inputs": "1", "num_outputs": "1", "hash": "8ec3c08331cd92b5", "flatten_data": "0", "func_name": "maybe_fail")"),
                                                R"([ [ 3, 0, 0 ], [ 2, 0, 0 ] ])", R"([ [ 3, 0, 0 ] ])"),
                                        reg)
                        .value();
  CHECK(error_of(g.run()) == "maybe_fail: asked to fail\n  in graph node 4 ('tvmgen_default_fused_add1')");
  fail = false;
  CHECK(g.run().ok());
}

TEST_CASE("what a kernel returns is not kept, also when a later node fails") {
  rv::registry reg;
  rv::tensor kept = rv::tensor::empty({4}, rv::dtype::float32());
  int calls = 0;
  // Returns a tensor (which the executor drops), and fails on every second call.
  reg.def_packed("tvmgen_default_fused_add", [&](std::span<const rv::value>) -> rv::result<rv::value> {
    if (++calls % 2 == 0) return rv::detail::runtime_error("second node fails");
    return rv::value(kept);
  });
  gr::executor g = gr::executor::create(add3, reg).value();
  CHECK_FALSE(g.run().ok());
  CHECK(kept.get()->use_count() == 1);
  CHECK_FALSE(g.run().ok());
  CHECK(kept.get()->use_count() == 1);
}

TEST_CASE("malformed graphs are rejected at load, naming what is wrong") {
  const rv::registry reg = make_registry();
  auto load = [&](const std::string& json) { return error_of(gr::executor::create(json, reg)); };
  // Not JSON, or not the format.
  CHECK(load("{\"nodes\": [") == "graph: the JSON does not parse: at byte 12 (near '\"nodes\": [')");
  CHECK(load("[1, 2]") == "graph: the JSON must be an object, but is an array of 2 elements");
  // Missing fields.
  CHECK(load(replace(add3, "\"arg_nodes\": [0, 1, 2], ", "")) == "graph: the JSON has no 'arg_nodes'");
  CHECK(load(replace(add3, "\"dltype\": [ \"list_str\", [ \"float32\", \"float32\", \"float32\", \"float32\", \"float32\" ] ], ", "")) ==
        "graph: attrs has no dltype");
  CHECK(load(replace(add3, "\"func_name\": \"tvmgen_default_fused_add\" }, \"inputs\": [ [ 0", "\"x\": \"y\" }, \"inputs\": [ [ 0")) ==
        "graph: node 3 ('tvmgen_default_fused_add') has no attrs.func_name (a tvm_op needs all four)");
  CHECK(load(replace(add3, "{ \"op\": \"null\", \"name\": \"b\", \"inputs\": [] }", "{ \"op\": \"null\", \"inputs\": [] }")) ==
        "graph: node 1 has no 'name'");
  // Wrong types.
  CHECK(load(replace(add3, "\"node_row_ptr\": [0, 1, 2, 3, 4, 5]", "\"node_row_ptr\": 5")) ==
        "graph: node_row_ptr must be an array, but is 5");
  CHECK(load(replace(add3, "[1, 10], [1, 10], [1, 10] ] ]", "[1, 10], [1, \"10\"], [1, 10] ] ]")) ==
        "graph: attrs.shape[3][1] must be an integer, but is \"10\"");
  CHECK(load(replace(add3, "\"num_inputs\": \"2\", \"num_outputs\": \"1\", \"hash\": \"8ec3c08331cd92b5\", \"flatten_data\": \"0\", \"func_name\": \"tvmgen_default_fused_add\" }, \"inputs\": [ [ 0",
                     "\"num_inputs\": \"two\", \"num_outputs\": \"1\", \"hash\": \"8ec3c08331cd92b5\", \"flatten_data\": \"0\", \"func_name\": \"tvmgen_default_fused_add\" }, \"inputs\": [ [ 0")) ==
        "graph: node 3 ('tvmgen_default_fused_add').attrs.num_inputs must be a decimal number, but is \"two\"");
  CHECK(load(replace(add3, "\"float32\", \"float32\" ] ]", "\"float32\", \"floaty\" ] ]")) ==
        "graph: attrs.dltype[4] is \"floaty\", not a dtype");
  CHECK(load(replace(add3, "{ \"op\": \"null\", \"name\": \"a\"", "{ \"op\": \"conv\", \"name\": \"a\"")) ==
        "graph: node 0 ('a'): op is 'conv'; only 'null' and 'tvm_op' are supported");
  CHECK(load(replace(add3, "\"arg_nodes\"", "\"extra\": 1, \"arg_nodes\"")) == "graph: key 'extra' is not supported");
  // Node and entry indices out of range.
  CHECK(load(replace(add3, "\"inputs\": [ [ 3, 0, 0 ]", "\"inputs\": [ [ 9, 0, 0 ]")) ==
        "graph: node 4 ('tvmgen_default_fused_add1') reads missing node 9, which does not come before it: nodes must be in "
        "topological order (is there a cycle?)");
  CHECK(load(replace(add3, "\"inputs\": [ [ 3, 0, 0 ]", "\"inputs\": [ [ 3, 1, 0 ]")) ==
        "graph: node 4 ('tvmgen_default_fused_add1') input 0 is output 1 of node 3 ('tvmgen_default_fused_add'), which has 1 outputs");
  CHECK(load(replace(add3, "\"arg_nodes\": [0, 1, 2]", "\"arg_nodes\": [0, 1, 7]")) ==
        "graph: arg_nodes[2] is node 7, but the graph has 5 nodes");
  CHECK(load(replace(add3, "\"heads\": [ [ 4, 0, 0 ] ]", "\"heads\": [ [ 5, 0, 0 ] ]")) ==
        "graph: heads[0] is [5, 0], which is not an output of the graph's 5 nodes");
  CHECK(load(replace(add3, "\"node_row_ptr\": [0, 1, 2, 3, 4, 5]", "\"node_row_ptr\": [0, 1, 2, 3, 4]")) ==
        "graph: node_row_ptr has 5 elements; 5 nodes need 6");
  CHECK(load(replace(add3, "\"storage_id\": [ \"list_int\", [0, 1, 2, 3, 4] ]", "\"storage_id\": [ \"list_int\", [0, 1, 2, 3] ]")) ==
        "graph: attrs.storage_id has 4 elements, but the graph has 5 entries");
  // Order: a later node, or itself (a cycle).
  CHECK(load(replace(add3, "\"inputs\": [ [ 0, 0, 0 ], [ 1, 0, 0 ] ]", "\"inputs\": [ [ 0, 0, 0 ], [ 4, 0, 0 ] ]")) ==
        "graph: node 3 ('tvmgen_default_fused_add') reads node 4 ('tvmgen_default_fused_add1'), which does not come before it: "
        "nodes must be in topological order (is there a cycle?)");
  CHECK(load(replace(add3, "\"inputs\": [ [ 3, 0, 0 ]", "\"inputs\": [ [ 4, 0, 0 ]")) ==
        "graph: node 4 ('tvmgen_default_fused_add1') reads node 4 ('tvmgen_default_fused_add1'), which does not come before it: "
        "nodes must be in topological order (is there a cycle?)");
  // Arity, inputs, functions.
  CHECK(load(replace(add3, "\"inputs\": [ [ 3, 0, 0 ], [ 2, 0, 0 ] ]", "\"inputs\": [ [ 3, 0, 0 ] ]")) ==
        "graph: node 4 ('tvmgen_default_fused_add1') says num_inputs = 2 but lists 1");
  CHECK(load(replace(add3, "\"arg_nodes\": [0, 1, 2]", "\"arg_nodes\": [0, 1]")) ==
        "graph: node 2 ('c') is a null (input) node missing from arg_nodes");
  CHECK(load(replace(add3, "\"arg_nodes\": [0, 1, 2]", "\"arg_nodes\": [0, 1, 2, 3]")) ==
        "graph: arg_nodes[3] is node 3 ('tvmgen_default_fused_add'), which is not a null (input) node");
  CHECK(load(replace(add3, "\"name\": \"b\"", "\"name\": \"a\"")) ==
        "graph: node 0 ('a') and node 1 ('a') are inputs with the same name");
  rv::registry empty;
  CHECK(error_of(gr::executor::create(add3, empty)) ==
        "graph: node 3 ('tvmgen_default_fused_add') calls 'tvmgen_default_fused_add', which is not in the registry");
  // Sizes: a negative dimension, an overflowing one, a storage that does not fit.
  CHECK(load(replace(add3, "[ [1, 10], [1, 10]", "[ [1, -10], [1, 10]")) ==
        "graph: entry 0: dimension 1 is -10; dimensions must be 0 or more");
  CHECK(load(replace(add3, "[ [1, 10], [1, 10]", "[ [4611686018427387904, 10], [1, 10]")) ==
        "graph: entry 0: the element count of shape [4611686018427387904, 10] overflows int64");
  alignas(64) std::byte small[256];
  gr::graph_options arena;
  arena.devices = {{rv::device::cpu(), rv::allocator::arena(small)}};
  CHECK(error_of(gr::executor::create(add3, reg, arena)).find(
            "graph: storage 4 (40 bytes, first used by node 4 ('tvmgen_default_fused_add1')) cannot be allocated on cpu:0: "
            "arena allocator: exhausted") == 0);
  CHECK(load(replace(add3, "\"storage_id\": [ \"list_int\", [0, 1, 2, 3, 4] ]", "\"storage_id\": [ \"list_int\", [0, 1, 2, 3, 99] ]")) ==
        "graph: entry 4 has storage_id 99; ids must be below the entry count (5)");
  CHECK(load(replace(add3, "\"storage_id\"", "\"storage_scope\": [\"list_str\", [\"\", \"\", \"texture\", \"\", \"\"]], \"storage_id\"")) ==
        "graph: attrs.storage_scope[2] is \"texture\"; only global (flat) memory is supported");
  // __copy must keep the bytes.
  const std::string copy = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "c", "attrs": {"func_name": "__copy", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0]]}],
   "arg_nodes": [0], "heads": [[1, 0]], "node_row_ptr": [0, 1, 2],
   "attrs": {"dltype": ["list_str", ["float32", "float32"]], "shape": ["list_shape", [[4], [5]]]}})";
  CHECK(load(copy) == "graph: node 1 ('c') copies [4] float32 to [5] float32; a __copy keeps the bytes and the dtype");
}

namespace {
// x -> one operator node `op` (attrs and inputs as given) -> output; shapes of the two entries as given.
std::string one_op(std::string_view func, std::string_view num_outputs, std::string_view row_ptr, std::string_view shapes,
                   std::string_view dtypes = R"("float32", "float32")") {
  return std::string(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "op", "attrs": {"func_name": ")") + std::string(func) + R"(", "num_inputs": "1", "num_outputs": ")" +
         std::string(num_outputs) + R"(", "flatten_data": "0"}, "inputs": [[0, 0]]}],
   "arg_nodes": [0], "heads": [[0, 0]], "node_row_ptr": )" + std::string(row_ptr) + R"(,
   "attrs": {"dltype": ["list_str", [)" + std::string(dtypes) + R"(]], "shape": ["list_shape", )" + std::string(shapes) + "]}}";
}
}  // namespace

TEST_CASE("malformed graphs: operators without outputs, and __nop that is not a reshape") {
  const rv::registry reg = make_registry();
  auto load = [&](const std::string& json) { return error_of(gr::executor::create(json, reg)); };
  CHECK(load(one_op("ops.relu_out", "0", "[0, 1, 1]", "[[4]]", R"("float32")")) == "graph: node 1 ('op') has no outputs");
  CHECK(load(one_op("__nop", "2", "[0, 1, 3]", "[[4], [2], [2]]", R"("float32", "float32", "float32")")) ==
        "graph: node 1 ('op') is a __nop with 1 inputs and 2 outputs; it must have 1 and 1");
  CHECK(load(one_op("__nop", "1", "[0, 1, 2]", "[[2], [16]]")) ==
        "graph: node 1 ('op') reshapes [2] float32 to [16] float32; a __nop keeps the bytes and the dtype");
  CHECK(load(replace(one_op("__nop", "1", "[0, 1, 2]", "[[2, 2], [4]]"), R"("shape")", R"("storage_id": ["list_int", [0, 1]], "shape")")) ==
        "graph: node 1 ('op') is a __nop whose output has storage_id 1 but its input 0; they must be the same");
  CHECK(load(replace(one_op("__nop", "1", "[0, 1, 2]", "[[2, 2], [4]]"), R"("shape")", R"("device_index": ["list_int", [1, 2]], "shape")")) ==
        "graph: node 1 ('op') is a __nop from device_index 1 to 2; use a __copy to move data");
  // A valid reshape through __nop shares its input's storage.
  gr::executor ok = gr::executor::create(one_op("__nop", "1", "[0, 1, 2]", "[[2, 2], [4]]"), reg).value();
  CHECK(ok.graph().storage_ids == std::vector<std::int64_t>{0, 0});
}

TEST_CASE("malformed graphs: every missing field and wrong type") {
  const rv::registry reg = make_registry();
  auto load = [&](const std::string& json) { return error_of(gr::executor::create(json, reg)); };
  CHECK(load(replace(add3, R"("heads": [ [ 4, 0, 0 ] ], )", "")) == "graph: the JSON has no 'heads'");
  CHECK(load(R"({"arg_nodes": [], "heads": [], "node_row_ptr": [0], "attrs": {"dltype": ["list_str", []], "shape": ["list_shape", []]}})") ==
        "graph: the JSON has no 'nodes'");
  CHECK(load(R"({"nodes": [], "arg_nodes": [], "heads": [], "node_row_ptr": [0]})") == "graph: the JSON has no 'attrs'");
  CHECK(load(replace(add3, R"("shape": [ "list_shape", [ [1, 10], [1, 10], [1, 10], [1, 10], [1, 10] ] ], )", "")) ==
        "graph: attrs has no shape");
  CHECK(load(replace(add3, R"({ "op": "null", "name": "a", "inputs": [] })", R"({ "name": "a", "inputs": [] })")) ==
        "graph: node 0 has no 'op'");
  CHECK(load(replace(add3, R"({ "op": "null", "name": "a", "inputs": [] })", R"({ "op": "null", "name": "a" })")) ==
        "graph: node 0 ('a') has no 'inputs'");
  CHECK(load(replace(add3, R"("node_row_ptr": [0, 1, 2, 3, 4, 5])", R"("node_row_ptr": [0, 1, 2, 3, 4, 5], "nodes": {})")) ==
        "graph: nodes must be an array, but is an object with 0 keys");
  CHECK(load(replace(add3, R"({ "op": "null", "name": "a", "inputs": [] })", "7")) == "graph: node 0 must be an object, but is 7");
  CHECK(load(replace(add3, R"("heads": [ [ 4, 0, 0 ] ])", R"("heads": [ [ 4 ] ])")) ==
        "graph: heads[0] must be [node, index] or [node, index, version], but is an array of 1 elements");
  CHECK(load(replace(add3, R"("inputs": [ [ 0, 0, 0 ], [ 1, 0, 0 ] ])", R"("inputs": [ [ 0, 0, 0, 0 ], [ 1, 0, 0 ] ])")) ==
        "graph: node 3.inputs[0] must be [node, index] or [node, index, version], but is an array of 4 elements");
  CHECK(load(replace(add3, R"("inputs": [ [ 0, 0, 0 ], [ 1, 0, 0 ] ])", R"("inputs": [ [ 0, -1 ], [ 1, 0, 0 ] ])")) ==
        "graph: node 3.inputs[0]'s index must be an unsigned integer below 2^32, but is -1");
  CHECK(load(replace(add3, R"("hash": "8ec3c08331cd92b5", "flatten_data": "0", "func_name": "tvmgen_default_fused_add" }, "inputs": [ [ 0)",
                     R"("hash": 5, "flatten_data": "0", "func_name": "tvmgen_default_fused_add" }, "inputs": [ [ 0)")) ==
        "graph: node 3 ('tvmgen_default_fused_add').attrs.hash must be a string, but is 5");
  CHECK(load(replace(add3, R"({ "op": "null", "name": "a", "inputs": [] })", R"({ "op": "null", "name": "a", "inputs": [], "control_deps": 1 })")) ==
        "graph: node 0.control_deps must be an array, but is 1");
  CHECK(load(replace(add3, R"("storage_id": [ "list_int", [0, 1, 2, 3, 4] ])", R"("storage_id": [ "list_str", [0, 1, 2, 3, 4] ])")) ==
        "graph: attrs.storage_id must be [\"list_int\", [...]], but is an array of 2 elements");
  CHECK(load(replace(add3, R"("storage_id")", R"("extra": ["list_float", []], "storage_id")")) ==
        "graph: attrs.extra has a type tag the reference does not know: an array of 2 elements");
  // Deep nesting is an error, not a stack overflow.
  std::string deep = R"({"nodes": [)";
  for (int i = 0; i < 100000; ++i) deep += '[';
  for (int i = 0; i < 100000; ++i) deep += ']';
  deep += "]}";
  CHECK(load(deep) == "graph: node 0 must be an object, but is an array of 1 elements");
  // Keys are read in document order and reading stops at "metadata", as in the reference.
  CHECK(load(replace(add3, R"("node_row_ptr": [0, 1, 2, 3, 4, 5])", R"("node_row_ptr": [0, 1, 2, 3, 4, 5], "metadata": {}, "zzz": 1)")) ==
        "(no error)");
}

TEST_CASE("params: every broken field") {
  const std::vector<gr::named_tensor> one = {{"x", filled({2}, 1)}};
  const std::vector<std::byte> good = gr::save_params(one).value();
  auto broken = [&](std::size_t at, std::uint8_t v) {
    std::vector<std::byte> b = good;
    b[at] = std::byte{v};
    return error_of(gr::load_params(b));
  };
  CHECK(broken(33, 2) == "load_params: the file has 1 names but 2 tensors");
  CHECK(broken(41, 0) == "load_params: tensor 'x' does not start with the tensor magic number (byte 41)");
  CHECK(broken(65, 65) == "load_params: tensor 'x' has 65 dimensions (0 to 64 expected)");
  CHECK(broken(71, 2) == "load_params: tensor 'x' has dtype float32x2; params files hold scalar dtypes only");
  CHECK(broken(80, 0xff) == "load_params: tensor 'x': dimension 0 is -72057594037927934; dimensions must be 0 or more");
  CHECK(broken(80, 0x40) == "load_params: tensor 'x': 4611686018427387906 elements of float32 overflow int64 bytes");
}

TEST_CASE("executor: moves but does not copy; zero-copy keeps the caller's tensor alive and respects read-only") {
  static_assert(!std::is_copy_constructible_v<gr::executor> && std::is_nothrow_move_constructible_v<gr::executor>);
  const rv::registry reg = make_registry();
  rv::tensor held;
  {
    gr::executor g = gr::executor::create(add3, reg).value();
    gr::executor moved = std::move(g);
    REQUIRE(moved.set_output_zero_copy("tvmgen_default_fused_add1:0", filled({1, 10}, 0)).ok());
    REQUIRE(moved.set_input("a", filled({1, 10}, 1)).ok());
    REQUIRE(moved.set_input("b", filled({1, 10}, 1)).ok());
    REQUIRE(moved.set_input("c", filled({1, 10}, 1)).ok());
    REQUIRE(moved.run().ok());
    held = moved.get_output("tvmgen_default_fused_add1").value();
    CHECK(error_of(moved.get_output("x")) ==
          "get_output: no output is named 'x' (outputs are named by their node, or \"node:index\")");
  }
  CHECK(held.data<const float>()[0] == 3.0f);  // the executor is gone; the tensor it wrote into is not

  gr::executor g = gr::executor::create(add3, reg).value();
  alignas(64) static const float flash[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const rv::tensor ro = rv::tensor::try_view(const_cast<float*>(flash), {1, 10}, rv::dtype::float32(), rv::device::cpu(), {}, true).value();
  CHECK(error_of(g.set_output_zero_copy(0, ro)) == "set_output_zero_copy: output 0: the tensor is read-only");
  REQUIRE(g.set_input_zero_copy("a", ro).ok());  // read, never written
  REQUIRE(g.set_input("b", filled({1, 10}, 0)).ok());
  REQUIRE(g.set_input("c", filled({1, 10}, 0)).ok());
  REQUIRE(g.run().ok());
  CHECK(g.get_output(0).value().data<const float>()[9] == 10.0f);
  CHECK(error_of(g.set_input("a", filled({1, 10}, 1))) ==
        "set_input: input 0 ('a') reads a read-only tensor given to set_input_zero_copy; nothing can be copied into it");
  const rv::tensor on_gpu = rv::tensor::try_view(const_cast<float*>(flash), {1, 10}, rv::dtype::float32(), rv::device(kDLCUDA, 0), {}, false).value();
  CHECK(error_of(g.set_input("b", on_gpu)) ==
        "set_input: input 1 ('b'): the tensor is on cuda:0; relaxvm copies from host memory only");
}

TEST_CASE("executor: a registered closure with captured values, a storage cap, planning across devices") {
  rv::registry reg = make_registry();
  // scale_out(x, out, factor): the graph passes (x, out); the closure adds the captured factor.
  reg.def("scale_out_raw", [](const rv::tensor& x, const rv::tensor& out, double factor) -> rv::status {
    for (std::int64_t i = 0; i < x.numel(); ++i) out.data<float>()[i] = x.data<const float>()[i] * static_cast<float>(factor);
    return {};
  });
  const rv::value three[] = {rv::value(3.0)};
  reg.add("scale3", reg.find("scale_out_raw")->bind(three));
  gr::executor g = gr::executor::create(one_op("scale3", "1", "[0, 1, 2]", "[[4], [4]]"), reg).value();
  REQUIRE(g.set_input("x", filled({4}, 2)).ok());
  const long before = relaxvm_test::heap_allocations();
  REQUIRE(g.run().ok());
  CHECK(relaxvm_test::heap_allocations() == before);  // the captured value was joined at load
  CHECK(g.get_input(0).value().data<const float>()[0] == 2.0f);

  gr::graph_options capped;
  capped.max_storage_bytes = 100;
  CHECK(error_of(gr::executor::create(add3, reg, capped)) ==
        "graph: the storage plan needs more than max_storage_bytes (100 bytes)");
  capped.max_storage_bytes = 200;
  CHECK(gr::executor::create(add3, reg, capped).ok());

  // Storage is reused on the same device only: b (device 1) cannot take a's freed block.
  const std::string two_dev = R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
    {"op": "tvm_op", "name": "a", "attrs": {"func_name": "f", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[0, 0]]},
    {"op": "tvm_op", "name": "b", "attrs": {"func_name": "f", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[1, 0]]},
    {"op": "tvm_op", "name": "c", "attrs": {"func_name": "f", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}, "inputs": [[2, 0]]}],
   "arg_nodes": [0], "heads": [[3, 0]], "node_row_ptr": [0, 1, 2, 3, 4],
   "attrs": {"dltype": ["list_str", ["float32", "float32", "float32", "float32"]], "shape": ["list_shape", [[4], [4], [4], [4]]],
             "device_index": ["list_int", [0, 0, 1, 0]]}})";
  gr::graph_def d = gr::parse_graph(two_dev).value();
  gr::plan_storage(d);
  CHECK(d.storage_ids == std::vector<std::int64_t>{0, 1, 2, 1});  // c (device 0) takes a's block back
}
