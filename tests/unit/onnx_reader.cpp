// SPDX-License-Identifier: Apache-2.0
// relaxvm/onnx/model.hpp and tensor.hpp: ONNX files read from the wire format. Messages written
// here field by field (packed and unpacked lists, wrong wire types, cut lengths, deep nesting),
// every truncation and byte flip of a model (an error, never a crash), and, where Debian's
// libonnx-testdata is installed, every model and TensorProto of ONNX's own backend test data.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <relaxvm.hpp>
#include <relaxvm/onnx/tensor.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "../support/protobuf_writer.hpp"

namespace rv = relaxvm;
namespace onnx = relaxvm::onnx;

namespace {

using relaxvm_test::pb;

std::vector<std::byte> floats_le(std::initializer_list<float> v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.begin(), b.size());
  return b;
}

// A model: y = Relu(x), x a float tensor of shape (batch, 3), with a 2x2 initializer and an
// attribute of each common kind.
std::vector<std::byte> small_model() {
  pb dim_batch, dim_3, shape, tensor_type, type, x;
  dim_batch.str(2, "batch");
  dim_3.i(1, 3);
  shape.msg(1, dim_batch).msg(1, dim_3);
  tensor_type.i(1, 1).msg(2, shape);
  type.msg(1, tensor_type);
  x.str(1, "x").msg(2, type);
  pb y;
  y.str(1, "y").msg(2, type);
  pb w;
  w.i(1, 2).i(1, 2).i(2, 1).str(8, "w").bytes(9, floats_le({1, 2, 3, 4}));
  pb ints, floats, s;
  ints.str(1, "ints").i(20, 7).i(8, 1).i(8, -2);
  floats.str(1, "floats").i(20, 6).f32(7, 0.5f).f32(7, 1.5f);
  s.str(1, "mode").i(20, 3).str(4, "constant");
  pb node;
  node.str(1, "x").str(2, "y").str(3, "relu0").str(4, "Relu").msg(5, ints).msg(5, floats).msg(5, s);
  pb graph;
  graph.msg(1, node).str(2, "g").msg(5, w).msg(11, x).msg(12, y);
  pb opset;
  opset.str(1, "").i(2, 13);
  pb model;
  model.i(1, 7).str(2, "relaxvm-test").msg(7, graph).msg(8, opset);
  return model.out;
}

std::vector<std::byte> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
  return b;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

TEST_CASE("a model's graph, nodes, attributes, initializers and declared shapes are read") {
  const std::vector<std::byte> bytes = small_model();
  rv::result<onnx::model_info> m = onnx::parse_model(bytes);
  REQUIRE(m.ok());
  CHECK(m->ir_version == 7);
  CHECK(m->producer_name == "relaxvm-test");
  CHECK(m->opset("") == 13);
  CHECK(m->opset("ai.onnx") == 13);
  CHECK(m->opset("com.microsoft") == 0);
  const onnx::graph_info& g = m->graph;
  CHECK(g.name == "g");
  REQUIRE(g.nodes.size() == 1);
  const onnx::node_info& n = g.nodes[0];
  CHECK(n.op_type == "Relu");
  CHECK(n.name == "relu0");
  CHECK(n.inputs == std::vector<std::string_view>{"x"});
  REQUIRE(n.attribute("ints") != nullptr);
  CHECK(n.attribute("ints")->type == onnx::attribute_type::ints);
  CHECK(n.attribute("ints")->ints == std::vector<std::int64_t>{1, -2});
  CHECK(n.attribute("floats")->floats == std::vector<float>{0.5f, 1.5f});
  CHECK(n.attribute("mode")->s == "constant");
  CHECK(n.attribute("missing") == nullptr);
  REQUIRE(g.inputs.size() == 1);
  const onnx::type_info& t = g.inputs[0].type;
  CHECK(t.what == onnx::type_info::kind::tensor);
  CHECK(t.elem_type == 1);
  REQUIRE(t.shape.size() == 2);
  CHECK(!t.shape[0].known());
  CHECK(t.shape[0].param == "batch");
  CHECK(t.shape[1].value == 3);
  REQUIRE(g.initializers.size() == 1);
  rv::tensor w = onnx::make_tensor(g.initializers[0]).value();
  CHECK(w.shape() == rv::shape({2, 2}));
  CHECK(w.data<float>()[3] == 4.0f);
  // Zero-copy: the initializer's data is a view of the model's bytes.
  CHECK(g.initializers[0].raw_data.data() >= bytes.data());
  CHECK(g.initializers[0].raw_data.data() < bytes.data() + bytes.size());
}

TEST_CASE("repeated fields are read packed and unpacked, typed data in every field") {
  // dims packed (one length-delimited field), float_data unpacked (one fixed32 per element).
  pb packed_dims;
  packed_dims.varint(2).varint(3);
  pb t;
  t.bytes(1, packed_dims.out).i(2, 1);
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}) t.f32(4, v);
  rv::tensor a = onnx::read_tensor(t.out).value();
  CHECK(a.shape() == rv::shape({2, 3}));
  CHECK(a.data<float>()[5] == 6.0f);

  // int32_data holding int8 values (negative ones sign-extended to ten-byte varints), packed.
  pb vals;
  vals.varint(static_cast<std::uint64_t>(std::int64_t{-5})).varint(7).varint(static_cast<std::uint64_t>(std::int64_t{-128}));
  pb i8;
  i8.i(1, 3).i(2, 3).bytes(5, vals.out);
  rv::tensor b = onnx::read_tensor(i8.out).value();
  CHECK(b.dtype() == rv::dtype::int8());
  CHECK(b.data<std::int8_t>()[0] == -5);
  CHECK(b.data<std::int8_t>()[2] == -128);

  // bool in int32_data; int64 in int64_data; a scalar (no dims).
  pb bools;
  bools.i(1, 2).i(2, 9).i(5, 1).i(5, 0);
  rv::tensor c = onnx::read_tensor(bools.out).value();
  CHECK(c.dtype().is_bool());
  CHECK(c.data<bool>()[0]);
  CHECK(!c.data<bool>()[1]);
  pb scalar;
  scalar.i(2, 7).i(7, -42);
  rv::tensor d = onnx::read_tensor(scalar.out).value();
  CHECK(d.ndim() == 0);
  CHECK(d.data<std::int64_t>()[0] == -42);
}

TEST_CASE("a tensor whose dims need more data than it has is refused before anything is allocated") {
  // 2^20 x 2^20 floats claimed in a few bytes: an error naming both counts, no 4 TiB allocation.
  pb t;
  t.i(1, 1 << 20).i(1, 1 << 20).i(2, 1).str(8, "huge").bytes(9, floats_le({1, 2}));
  rv::result<rv::tensor> r = onnx::read_tensor(t.out);
  REQUIRE(!r.ok());
  CHECK(contains(r.error().message(), "tensor 'huge' has 8 bytes of data, but its dims need 1099511627776 elements of FLOAT"));
  pb over;
  over.i(1, std::int64_t{1} << 40).i(1, std::int64_t{1} << 40).i(2, 1);
  CHECK(contains(onnx::read_tensor(over.out).error().message(), "more elements than fit in 64 bits"));
  pb neg;
  neg.i(1, -1).i(2, 1);
  CHECK(contains(onnx::read_tensor(neg.out).error().message(), "negative dimension"));
  pb str;
  str.i(1, 1).i(2, 8).str(6, "hello");
  CHECK(contains(onnx::read_tensor(str.out).error().message(), "STRING tensors are not supported"));
  pb mixed;
  mixed.i(1, 1).i(2, 1).i(7, 5);
  CHECK(contains(onnx::read_tensor(mixed.out).error().message(), "holds its data in int64_data, not float_data"));
}

TEST_CASE("malformed bytes name the message, the field and the byte offset") {
  // A graph field (7) with a varint wire type.
  pb wrong;
  wrong.i(1, 7).i(7, 3);
  rv::result<onnx::model_info> r = onnx::parse_model(wrong.out);
  REQUIRE(!r.ok());
  CHECK(r.error().kind() == rv::error_kind::value);
  CHECK(contains(r.error().message(), "ModelProto.graph at byte 2: has a numeric wire type"));
  // A length running past the end.
  pb cut;
  cut.i(1, 7).key(7, 2).varint(100);
  CHECK(contains(onnx::parse_model(cut.out).error().message(), "runs past the end of its message"));
  // A varint of 11 bytes.
  std::vector<std::byte> eleven(11, std::byte{0x80});
  CHECK(contains(onnx::parse_model(eleven).error().message(), "not a valid varint"));
  // Groups (wire type 3) and the undefined wire types.
  pb group;
  group.key(7, 3);
  CHECK(contains(onnx::parse_model(group.out).error().message(), "deprecated group encoding"));
  pb six;
  six.key(7, 6);
  CHECK(contains(onnx::parse_model(six.out).error().message(), "wire type 6 or 7"));
  // No graph at all.
  pb none;
  none.i(1, 7);
  CHECK(contains(onnx::parse_model(none.out).error().message(), "the model has no graph"));
  // An error deep in the model: an attribute's ints field as fixed64.
  pb attr;
  attr.str(1, "a").key(8, 1);
  for (int k = 0; k < 8; ++k) attr.out.push_back(std::byte{0});
  pb node;
  node.str(4, "Relu").msg(5, attr);
  pb graph;
  graph.msg(1, node);
  pb model;
  model.msg(7, graph);
  CHECK(contains(onnx::parse_model(model.out).error().message(), "AttributeProto.ints at byte 15: is not a list of varints"));
}

TEST_CASE("graphs nested past the limit are refused, not recursed into") {
  // If's then_branch holding an If whose then_branch holds an If ... 100 levels.
  pb inner;
  for (int level = 0; level < 100; ++level) {
    pb attr;
    attr.str(1, "then_branch").i(20, 5).msg(6, inner);
    pb node;
    node.str(4, "If").msg(5, attr);
    pb graph;
    graph.msg(1, node);
    inner = graph;
  }
  pb model;
  model.msg(7, inner);
  rv::result<onnx::model_info> r = onnx::parse_model(model.out);
  REQUIRE(!r.ok());
  CHECK(contains(r.error().message(), "more than 64 levels deep"));
}

TEST_CASE("every truncation and byte flip of a model is an error or a model, never a crash") {
  const std::vector<std::byte> good = small_model();
  int errors = 0;
  for (std::size_t n = 0; n < good.size(); ++n) {
    std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    if (!onnx::parse_model(cut).ok()) ++errors;
  }
  CHECK(errors > 0);
  for (std::size_t i = 0; i < good.size(); ++i)
    for (std::uint8_t x : {0x01, 0x80, 0xFF}) {
      std::vector<std::byte> bad = good;
      bad[i] ^= std::byte{x};
      rv::result<onnx::model_info> m = onnx::parse_model(bad);
      if (!m.ok()) continue;
      for (const onnx::tensor_info& t : m->graph.initializers) (void)onnx::make_tensor(t);
    }
}

#ifdef RELAXVM_ONNX_TESTDATA
// ONNX's backend test data (Debian's libonnx-testdata): every model reads; every TensorProto reads
// into a tensor except the sequences, optionals and strings, which relaxvm's tensors do not hold.
TEST_CASE("every model and tensor of ONNX's backend test data reads") {
  namespace fs = std::filesystem;
  const fs::path root(RELAXVM_ONNX_TESTDATA);
  if (!fs::exists(root)) {
    MESSAGE("libonnx-testdata is not installed: skipped");
    return;
  }
  int models = 0, tensors = 0, refused = 0;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    const std::vector<std::byte> bytes = read_file(e.path());
    if (name == "model.onnx") {
      rv::result<onnx::model_info> m = onnx::parse_model(bytes);
      CHECK_MESSAGE(m.ok(), e.path().string());
      ++models;
    } else if (e.path().extension() == ".pb") {
      rv::result<rv::tensor> t = onnx::read_tensor(bytes);
      const std::string dir = e.path().parent_path().parent_path().filename().string();
      const bool not_a_tensor = contains(dir, "sequence") || contains(dir, "optional") || contains(dir, "_opt") ||
                                contains(dir, "_seq") || contains(dir, "STRING") || contains(dir, "strnorm");
      if (!t.ok()) {
        ++refused;
        const std::string why = e.path().string() + ": " + std::string(t.error().message());
        CHECK_MESSAGE(not_a_tensor, why);
      }
      ++tensors;
    }
  }
  // ONNX 1.12's data: 1,072 models and 3,205 tensors (83 of them sequences, optionals or strings).
  CHECK(models == 1072);
  CHECK(tensors == 3205);
  CHECK(refused <= 83);
}
#endif
