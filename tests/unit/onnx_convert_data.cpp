// SPDX-License-Identifier: Apache-2.0
// onnx/convert_data.hpp with a symbolic batch dim, which ONNX's node data (all static shapes)
// does not reach: Slice's clamped and negative bounds become min/max/floordiv of the batch, a
// Split's tuple of outputs, Concat and Transpose over symbolic dims, Unsqueeze as a view; one
// executable run at two batch sizes. Then Slice's starts computed at run time.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <relaxvm/onnx.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "../support/onnx_messages.hpp"

namespace rv = relaxvm;
namespace onnx = relaxvm::onnx;

namespace {

using relaxvm_test::pb;
using namespace relaxvm_test::onnx_pb;

constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();

// x: float (batch, 6). y = x[1:, -5:-1]; a, b = Split(y, axis 1); t = Transpose(Concat(a, b,
// axis 0)); z = x[-2::-2, :]; u = Unsqueeze(b, [0]). Outputs t, u, z. `shape_input` makes the
// Slice's starts a graph input (computed at run time) instead of an initializer.
std::vector<std::byte> model(bool shape_input = false) {
  pb d_batch, d6, shape, tt, type, x;
  d_batch.str(2, "batch");
  d6.i(1, 6);
  shape.msg(1, d_batch).msg(1, d6);
  tt.i(1, 1).msg(2, shape);
  type.msg(1, tt);
  x.str(1, "x").msg(2, type);
  pb graph;
  graph.msg(1, node("Slice", {"x", "starts", "ends", "axes"}, {"y"}));
  graph.msg(1, node("Split", {"y"}, {"a", "b"}, {int_attr("axis", 1)}));
  graph.msg(1, node("Concat", {"a", "b"}, {"c"}, {int_attr("axis", 0)}));
  graph.msg(1, node("Transpose", {"c"}, {"t"}, {ints_attr("perm", {1, 0})}));
  graph.msg(1, node("Slice", {"x", "zs", "ze", "za", "zp"}, {"z"}));
  graph.msg(1, node("Unsqueeze", {"b", "ua"}, {"u"}));
  graph.str(2, "g");
  if (!shape_input) graph.msg(5, int64_tensor("starts", {1, -5}));
  graph.msg(5, int64_tensor("ends", {big, -1}));
  graph.msg(5, int64_tensor("axes", {0, 1}));
  graph.msg(5, int64_tensor("zs", {-2})).msg(5, int64_tensor("ze", {-big})).msg(5, int64_tensor("za", {0})).msg(5, int64_tensor("zp", {-2}));
  graph.msg(5, int64_tensor("ua", {0}));
  graph.msg(11, x);
  if (shape_input) {
    pb d2, s2, t2, ty2, in2;
    d2.i(1, 2);
    s2.msg(1, d2);
    t2.i(1, 7).msg(2, s2);
    ty2.msg(1, t2);
    in2.str(1, "starts").msg(2, ty2);
    graph.msg(11, in2);
  }
  for (std::string_view o : {"t", "u", "z"}) {
    pb v;
    v.str(1, o);
    graph.msg(12, v);
  }
  pb opset;
  opset.str(1, "").i(2, 13);
  pb m;
  m.i(1, 8).str(2, "relaxvm-test").msg(7, graph).msg(8, opset);
  return m.out;
}

// The ops whose output's shape comes from constant values, over x: float (batch, 3):
// p = Pad(x, [0, 1, 0, -1], reflect), t = Tile(x, [2, 1]), e = Expand(x, [2, 1, 3]),
// k = ConstantOfShape([2, 2], value int64 7), r = Range(1, 8, 3), o = OneHot(r, 9, [0, 1]) on
// axis 0, q = Squeeze(Unsqueeze(x, [-1]), [2]).
std::vector<std::byte> shaped_model() {
  pb d_batch, d3, shape, tt, type, x;
  d_batch.str(2, "batch");
  d3.i(1, 3);
  shape.msg(1, d_batch).msg(1, d3);
  tt.i(1, 1).msg(2, shape);
  type.msg(1, tt);
  x.str(1, "x").msg(2, type);
  pb graph;
  pb mode;
  mode.str(1, "mode").i(20, 3).str(4, "reflect");
  graph.msg(1, node("Pad", {"x", "pads"}, {"p"}, {mode}));
  graph.msg(1, node("Tile", {"x", "reps"}, {"t"}));
  graph.msg(1, node("Expand", {"x", "eshape"}, {"e"}));
  pb value, seven;
  seven.i(1, 1).i(2, 7).str(8, "v");
  const std::int64_t sv = 7;
  seven.bytes(9, &sv, 8);
  value.str(1, "value").i(20, 4).msg(5, seven);
  graph.msg(1, node("ConstantOfShape", {"kshape"}, {"k"}, {value}));
  graph.msg(1, node("Range", {"r0", "r1", "r2"}, {"r"}));
  graph.msg(1, node("OneHot", {"r", "depth", "onoff"}, {"o"}, {int_attr("axis", 0)}));
  graph.msg(1, node("Unsqueeze", {"x", "uaxes"}, {"xu"}));
  graph.msg(1, node("Squeeze", {"xu", "saxes"}, {"q"}));
  graph.str(2, "g");
  graph.msg(5, int64_tensor("pads", {0, 1, 0, -1})).msg(5, int64_tensor("reps", {2, 1})).msg(5, int64_tensor("eshape", {2, 1, 3}));
  graph.msg(5, int64_tensor("kshape", {2, 2})).msg(5, int64_tensor("uaxes", {-1})).msg(5, int64_tensor("saxes", {2}));
  pb r0, r1, r2, depth, onoff;
  const std::int64_t a = 1, b = 8, c = 3, dp = 9;
  r0.i(2, 7).str(8, "r0").bytes(9, &a, 8);
  r1.i(2, 7).str(8, "r1").bytes(9, &b, 8);
  r2.i(2, 7).str(8, "r2").bytes(9, &c, 8);
  depth.i(2, 7).str(8, "depth").bytes(9, &dp, 8);
  graph.msg(5, r0).msg(5, r1).msg(5, r2).msg(5, depth).msg(5, int64_tensor("onoff", {0, 1}));
  graph.msg(11, x);
  for (std::string_view o : {"p", "t", "e", "k", "o", "q"}) {
    pb v;
    v.str(1, o);
    graph.msg(12, v);
  }
  pb opset;
  opset.str(1, "").i(2, 13);
  pb m;
  m.i(1, 8).str(2, "relaxvm-test").msg(7, graph).msg(8, opset);
  return m.out;
}

std::vector<float> floats(const rv::tensor& t) {
  const float* p = t.data<const float>();
  return std::vector<float>(p, p + t.numel());
}

}  // namespace

TEST_CASE("Slice, Split, Concat, Transpose and Unsqueeze over a symbolic batch: one executable, two batch sizes") {
  const std::vector<std::byte> bytes = model();
  rv::result<rv::executable> exe = onnx::load(bytes);
  INFO((exe.ok() ? std::string() : std::string(exe.error().message())));
  REQUIRE(exe.ok());
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine vm(*exe, reg);
  for (std::int64_t batch : {3, 5, 2}) {
    CAPTURE(batch);
    std::vector<float> xv(static_cast<std::size_t>(batch * 6));
    for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
    const rv::tensor x = rv::tensor::from<float>(std::span<const float>(xv), rv::shape{batch, 6});
    rv::result<rv::value> r = vm.try_invoke("main", std::vector<rv::value>{x});
    INFO((r.ok() ? std::string() : std::string(r.error().message())));
    REQUIRE(r.ok());
    const rv::tuple outs = r->as<rv::tuple>();
    REQUIRE(outs.size() == 3);
    // y = x[1:, 1:5]: a its columns 1, 2 and b 3, 4; c = (a; b); t = c's transpose.
    const std::int64_t rows = batch - 1;
    const rv::tensor t = outs[0].as<rv::tensor>();
    CHECK(t.shape() == rv::shape({2, 2 * rows}));
    std::vector<float> want_t;
    for (std::int64_t j = 0; j < 2; ++j)
      for (std::int64_t i = 0; i < 2 * rows; ++i) {
        const std::int64_t row = 1 + i % rows, col = 1 + j + (i < rows ? 0 : 2);
        want_t.push_back(static_cast<float>(row * 6 + col));
      }
    CHECK(floats(t) == want_t);
    const rv::tensor u = outs[1].as<rv::tensor>();
    CHECK(u.shape() == rv::shape({1, rows, 2}));
    CHECK(floats(u)[0] == 9.0f);  // x[1, 3]
    // z = x[batch-2, batch-4, ... >= 0]
    const rv::tensor z = outs[2].as<rv::tensor>();
    const std::int64_t zrows = (batch - 2) / 2 + 1;
    CHECK(z.shape() == rv::shape({zrows, 6}));
    CHECK(floats(z)[0] == static_cast<float>((batch - 2) * 6));
    CHECK(floats(z)[static_cast<std::size_t>((zrows - 1) * 6)] == static_cast<float>(((batch - 2) % 2) * 6));
  }
}

TEST_CASE("Pad, Tile, Expand, ConstantOfShape, Range, OneHot, Squeeze with constant shape values") {
  const std::vector<std::byte> bytes = shaped_model();
  rv::result<rv::executable> exe = onnx::load(bytes);
  INFO((exe.ok() ? std::string() : std::string(exe.error().message())));
  REQUIRE(exe.ok());
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine vm(*exe, reg);
  for (std::int64_t batch : {1, 4}) {
    CAPTURE(batch);
    std::vector<float> xv(static_cast<std::size_t>(batch * 3));
    for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
    const rv::tensor x = rv::tensor::from<float>(std::span<const float>(xv), rv::shape{batch, 3});
    rv::result<rv::value> r = vm.try_invoke("main", std::vector<rv::value>{x});
    INFO((r.ok() ? std::string() : std::string(r.error().message())));
    REQUIRE(r.ok());
    const rv::tuple outs = r->as<rv::tuple>();
    REQUIRE(outs.size() == 6);
    const rv::tensor p = outs[0].as<rv::tensor>();  // row i: x[i, 1], x[i, 0], x[i, 1]
    CHECK(p.shape() == rv::shape({batch, 3}));
    CHECK(floats(p)[0] == 1.0f);
    CHECK(floats(p)[1] == 0.0f);
    CHECK(floats(p)[2] == 1.0f);
    const rv::tensor t = outs[1].as<rv::tensor>();
    CHECK(t.shape() == rv::shape({2 * batch, 3}));
    CHECK(floats(t)[static_cast<std::size_t>(batch * 3)] == 0.0f);
    const rv::tensor e = outs[2].as<rv::tensor>();
    CHECK(e.shape() == rv::shape({2, batch, 3}));
    CHECK(floats(e)[static_cast<std::size_t>(batch * 3 + 2)] == 2.0f);
    const rv::tensor k = outs[3].as<rv::tensor>();
    CHECK(k.shape() == rv::shape({2, 2}));
    CHECK(k.data<const std::int64_t>()[3] == 7);
    const rv::tensor o = outs[4].as<rv::tensor>();  // Range(1, 8, 3) = 1, 4, 7; one-hot of depth 9 on axis 0
    CHECK(o.shape() == rv::shape({9, 3}));
    CHECK(o.data<const std::int64_t>()[1 * 3 + 0] == 1);
    CHECK(o.data<const std::int64_t>()[4 * 3 + 1] == 1);
    CHECK(o.data<const std::int64_t>()[7 * 3 + 2] == 1);
    CHECK(o.data<const std::int64_t>()[0] == 0);
    const rv::tensor q = outs[5].as<rv::tensor>();
    CHECK(q.shape() == rv::shape({batch, 3}));
    CHECK(floats(q) == xv);
  }
}

TEST_CASE("Slice's starts as a graph input: computed at run time, the same results as the constant ones") {
  rv::result<rv::executable> fixed = onnx::load(model());
  rv::result<rv::executable> late = onnx::load(model(true));
  INFO((late.ok() ? std::string() : std::string(late.error().message())));
  REQUIRE(fixed.ok());
  REQUIRE(late.ok());
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine a(*fixed, reg), b(*late, reg);
  for (std::int64_t batch : {3, 5}) {
    CAPTURE(batch);
    std::vector<float> xv(static_cast<std::size_t>(batch * 6));
    for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
    const rv::tensor x = rv::tensor::from<float>(std::span<const float>(xv), rv::shape{batch, 6});
    const rv::tensor starts = rv::tensor::from<std::int64_t>({1, -5}, rv::shape{2});
    const rv::tuple want = a.invoke("main", {x}).as<rv::tuple>();
    rv::result<rv::value> got = b.try_invoke("main", std::vector<rv::value>{x, starts});
    INFO((got.ok() ? std::string() : std::string(got.error().message())));
    REQUIRE(got.ok());
    const rv::tuple outs = got->as<rv::tuple>();
    for (std::int64_t i = 0; i < 3; ++i) {
      CHECK(outs[i].as<rv::tensor>().shape() == want[i].as<rv::tensor>().shape());
      CHECK(floats(outs[i].as<rv::tensor>()) == floats(want[i].as<rv::tensor>()));
    }
  }
  // Starts that leave an odd number of columns: the Split after the Slice refuses them, by name.
  const rv::tensor x = rv::tensor::empty({3, 6}, rv::dtype::float32());
  rv::result<rv::value> odd = b.try_invoke("main", std::vector<rv::value>{x, rv::tensor::from<std::int64_t>({1, -4}, rv::shape{2})});
  REQUIRE(!odd.ok());
  CHECK(std::string(odd.error().message()).find("Split") != std::string::npos);
}

TEST_CASE("a weight kept in an external file: an unsupported error naming the tensor and the file") {
  pb entry_location, entry_offset, w;
  entry_location.str(1, "location").str(2, "weights.bin");
  entry_offset.str(1, "offset").str(2, "0");
  w.i(1, 2).i(2, f32).str(8, "w").msg(13, entry_location).msg(13, entry_offset).i(14, 1);  // data_location EXTERNAL
  pb graph;
  graph.msg(1, node("Add", {"x", "w"}, {"y"}));
  graph.msg(5, w);
  graph.msg(11, tensor_value_info("x", f32, {"2"}));
  const rv::result<rv::executable> exe = onnx::load(model_of(graph, {"y"}));
  REQUIRE_FALSE(exe.ok());
  CHECK(exe.error().kind() == rv::error_kind::unsupported);
  CHECK(exe.error().message().find("onnx: tensor 'w' keeps its data in the external file 'weights.bin', which relaxvm does not read") == 0);
}
