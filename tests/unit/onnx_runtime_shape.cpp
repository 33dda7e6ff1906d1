// SPDX-License-Identifier: Apache-2.0
// onnx/runtime_shape.hpp and kernels/shape.hpp: values that set an output's shape given as graph
// inputs (known only at run time). Each op family runs from one executable at two sets of values
// (so the shapes really are computed when it runs), and wrong values give an error naming the op,
// after which the VM still runs. The same values as initializers still fold at import.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <relaxvm/kernels/shape.hpp>
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

struct input {
  std::string_view name;
  int elem;
  std::vector<std::int64_t> dims;
};

// A graph of `nodes` over graph inputs `in` (their shape values among them), outputs `out`.
std::vector<std::byte> model(const std::vector<input>& in, const std::vector<pb>& nodes, const std::vector<std::string_view>& out,
                             std::int64_t opset = 13, const std::vector<pb>& inits = {}) {
  pb graph;
  for (const pb& n : nodes) graph.msg(1, n);
  for (const pb& t : inits) graph.msg(5, t);
  for (const input& i : in) {
    pb shape, tt, type, v;
    for (std::int64_t d : i.dims) {
      pb dim;
      if (d < 0) dim.str(2, "batch");  // a named dim
      else dim.i(1, d);
      shape.msg(1, dim);
    }
    tt.i(1, i.elem).msg(2, shape);
    type.msg(1, tt);
    v.str(1, i.name).msg(2, type);
    graph.msg(11, v);
  }
  return model_of(graph, out, opset);
}

rv::tensor floats(std::vector<std::int64_t> dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return rv::tensor::from<float>(std::span<const float>(v), rv::shape(std::span<const std::int64_t>(dims)));
}
rv::tensor ints(std::vector<std::int64_t> v) {
  return rv::tensor::from<std::int64_t>(std::span<const std::int64_t>(v), rv::shape{static_cast<std::int64_t>(v.size())});
}
template <class T>
rv::tensor scalar(T v) {
  return rv::tensor::from<T>({v}, rv::shape{});
}
std::vector<float> values(const rv::tensor& t) {
  const float* p = t.data<const float>();
  return std::vector<float>(p, p + t.numel());
}

// One executable of a model, run with several argument lists.
struct runner {
  rv::executable exe;
  rv::registry reg;
  rv::virtual_machine vm;
  static rv::executable load(const std::vector<std::byte>& bytes) {
    rv::result<rv::executable> e = onnx::load(bytes);
    INFO((e.ok() ? std::string() : std::string(e.error().message())));
    REQUIRE(e.ok());
    return std::move(*e);
  }
  static const rv::registry& kernels(rv::registry& r) {
    onnx::register_kernels(r);
    return r;
  }
  explicit runner(const std::vector<std::byte>& bytes) : exe(load(bytes)), vm(exe, kernels(reg)) {}
  rv::value run(std::vector<rv::value> args) {
    rv::result<rv::value> r = vm.try_invoke("main", args);
    INFO((r.ok() ? std::string() : std::string(r.error().message())));
    REQUIRE(r.ok());
    return *r;
  }
  // An error whose message names `op` and says `what`.
  void fails(std::vector<rv::value> args, std::string_view op, std::string_view what) {
    rv::result<rv::value> r = vm.try_invoke("main", args);
    REQUIRE(!r.ok());
    const std::string m(r.error().message());
    INFO(m);
    CHECK(m.find(op) != std::string::npos);
    CHECK(m.find(what) != std::string::npos);
  }
};

std::vector<std::int64_t> dims_of(const rv::value& v) {
  const rv::tensor t = v.as<rv::tensor>();
  return std::vector<std::int64_t>(t.shape().dims().begin(), t.shape().dims().end());
}
using dv = std::vector<std::int64_t>;

}  // namespace

TEST_CASE("Reshape to a shape known at run time: 0 and -1 resolved when it runs, a wrong size named") {
  const auto bytes = model({{"x", f32, {2, 3, 4}}, {"s", i64, {3}}}, {node("Reshape", {"x", "s"}, {"y"})}, {"y"});
  // The program computes the shape; the output is a view of x, so what it allocates (the shape
  // kernel's result) is still bounded.
  const rv::ir::module m = onnx::import(bytes).value();
  CHECK(rv::ir::to_text(m).find("onnx.Reshape.shape") != std::string::npos);
  CHECK(rv::ir::to_text(m).find("tensor_to_shape") != std::string::npos);
  CHECK(rv::ir::planned_bytes(m, "main") > 0);
  runner r(bytes);
  const rv::tensor x = floats({2, 3, 4});
  rv::value y = r.run({x, ints({4, 0, -1})});
  CHECK(dims_of(y) == dv{4, 3, 2});
  CHECK(values(y.as<rv::tensor>()) == values(x));
  CHECK(dims_of(r.run({x, ints({-1, 1, 2})})) == dv{12, 1, 2});
  r.fails({x, ints({5, 0, -1})}, "Reshape", "does not reshape");
  r.fails({x, ints({2, 2, 2})}, "Reshape", "holds 8 elements");
  r.fails({x, ints({-1, -1, 2})}, "Reshape", "more than one -1");
  r.fails({x, ints({-3, 2, 4})}, "Reshape", "-3");
  CHECK(dims_of(r.run({x, ints({1, 24, 1})})) == dv{1, 24, 1});  // still usable
  // allowzero: a 0 is a 0.
  const auto zero = model({{"x", f32, {0, 3}}, {"s", i64, {2}}}, {node("Reshape", {"x", "s"}, {"y"}, {int_attr("allowzero", 1)})}, {"y"}, 14);
  runner rz(zero);
  CHECK(dims_of(rz.run({floats({0, 3}), ints({3, 0})})) == dv{3, 0});
  rz.fails({floats({0, 3}), ints({0, -1})}, "Reshape", "-1");
}

TEST_CASE("the same shape as an initializer still folds at import: no shape computed at run time") {
  const auto bytes = model({{"x", f32, {2, 3, 4}}}, {node("Reshape", {"x", "s"}, {"y"})}, {"y"}, 13, {int64_tensor("s", {4, 0, -1})});
  const rv::ir::module m = onnx::import(bytes).value();
  CHECK(rv::ir::to_text(m).find("tensor_to_shape") == std::string::npos);
  CHECK(rv::ir::planned_bytes(m, "main") == 0);  // a view of x, planned at import
  runner r(bytes);
  CHECK(dims_of(r.run({floats({2, 3, 4})})) == dv{4, 3, 2});
}

TEST_CASE("Slice with bounds known at run time: clamping, negative steps, and bad axes and steps") {
  const auto bytes = model({{"x", f32, {4, 5}}, {"b", i64, {2}}, {"e", i64, {2}}, {"a", i64, {2}}, {"p", i64, {2}}},
                           {node("Slice", {"x", "b", "e", "a", "p"}, {"y"})}, {"y"});
  runner r(bytes);
  const rv::tensor x = floats({4, 5});
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  // Rows 3, 1 (from 3 down, past the start), columns 1, 3.
  rv::value y = r.run({x, ints({3, 1}), ints({-big, 5}), ints({0, 1}), ints({-2, 2})});
  CHECK(dims_of(y) == dv{2, 2});
  CHECK(values(y.as<rv::tensor>()) == std::vector<float>{16, 18, 6, 8});
  // The axes the other way round, ends past the dims: clamped.
  CHECK(dims_of(r.run({x, ints({1, 2}), ints({100, 100}), ints({1, 0}), ints({1, 1})})) == dv{2, 4});
  CHECK(dims_of(r.run({x, ints({2, 0}), ints({1, 1}), ints({0, -1}), ints({1, 1})})) == dv{0, 1});
  r.fails({x, ints({0, 0}), ints({1, 1}), ints({0, 2}), ints({1, 1})}, "Slice", "axis 2");
  r.fails({x, ints({0, 0}), ints({1, 1}), ints({0, 0}), ints({1, 1})}, "Slice", "twice");
  r.fails({x, ints({0, 0}), ints({1, 1}), ints({0, 1}), ints({0, 1})}, "Slice", "step");
  // Axes and steps left out: made from the starts' length.
  const auto dflt = model({{"x", f32, {4, 5}}, {"b", i64, {1}}, {"e", i64, {1}}}, {node("Slice", {"x", "b", "e"}, {"y"})}, {"y"});
  runner rd(dflt);
  CHECK(dims_of(rd.run({x, ints({-3}), ints({-1})})) == dv{2, 5});
}

TEST_CASE("dims that values known at run time do not touch stay symbolic as they were") {
  // Slice along axis 1 only (constant axes), TopK along axis 1: the batch stays the batch.
  const auto bytes = model({{"x", f32, {-1, 5}}, {"b", i64, {1}}, {"e", i64, {1}}, {"k", i64, {1}}},
                           {node("Slice", {"x", "b", "e", "a"}, {"y"}), node("TopK", {"x", "k"}, {"v", "i"})}, {"y", "v"}, 13,
                           {int64_tensor("a", {-1})});
  const std::string text = rv::ir::to_text(onnx::import(bytes).value());
  INFO(text);
  CHECK(text.find("onnx.Slice\"") != std::string::npos);
  CHECK(text.find("R.Tensor((batch, rt1)") != std::string::npos);  // the Slice's (rt0: unused)
  CHECK(text.find("R.Tensor((batch, rt3)") != std::string::npos);  // the TopK's
  runner r(bytes);
  const rv::tuple out = r.run({floats({3, 5}), ints({1}), ints({-1}), ints({2})}).as<rv::tuple>();
  CHECK(dims_of(out[0]) == dv{3, 3});
  CHECK(dims_of(out[1]) == dv{3, 2});
}

TEST_CASE("a bound from Shape arithmetic over a symbolic dim: a 0-d tensor at run time") {
  // Range(0, Size(x), 1) with x (batch, 3): the limit is the symbolic scalar batch * 3.
  pb zero, one;
  const std::int64_t z = 0, o = 1;
  zero.i(2, i64).str(8, "zero").bytes(9, &z, 8);
  one.i(2, i64).str(8, "one").bytes(9, &o, 8);
  const auto bytes = model({{"x", f32, {-1, 3}}}, {node("Size", {"x"}, {"n"}), node("Range", {"zero", "n", "one"}, {"y"})}, {"y"}, 11,
                           {zero, one});
  runner r(bytes);
  rv::value y = r.run({floats({2, 3})});
  CHECK(dims_of(y) == dv{6});
  CHECK(y.as<rv::tensor>().data<const std::int64_t>()[5] == 5);
  CHECK(dims_of(r.run({floats({0, 3})})) == dv{0});
}

TEST_CASE("Expand to a shape known at run time broadcasts when it runs") {
  const auto bytes = model({{"x", f32, {3, 1}}, {"s", i64, {3}}}, {node("Expand", {"x", "s"}, {"y"})}, {"y"});
  // The output's size is known only when it runs: no bound on the memory the program takes.
  CHECK(rv::ir::planned_bytes(onnx::import(bytes).value(), "main") == -1);
  runner r(bytes);
  const rv::tensor x = floats({3, 1});
  rv::value y = r.run({x, ints({2, 1, 4})});
  CHECK(dims_of(y) == dv{2, 3, 4});
  CHECK(values(y.as<rv::tensor>())[5] == 1.0f);
  CHECK(dims_of(r.run({x, ints({1, 3, 1})})) == dv{1, 3, 1});
  r.fails({x, ints({1, 2, 4})}, "Expand", "does not broadcast");
  r.fails({x, ints({1, -1, 4})}, "Expand", "negative");
  // A shape shorter than the input's rank.
  const auto shorter = model({{"x", f32, {2, 3, 1}}, {"s", i64, {1}}}, {node("Expand", {"x", "s"}, {"y"})}, {"y"});
  runner rs(shorter);
  CHECK(dims_of(rs.run({floats({2, 3, 1}), ints({5})})) == dv{2, 3, 5});
}

TEST_CASE("Reduce axes known at run time: keepdims, negative axes, no axes, noop_with_empty_axes") {
  const rv::tensor x = floats({2, 3, 4});
  {
    runner r(model({{"x", f32, {2, 3, 4}}, {"a", i64, {1}}}, {node("ReduceSum", {"x", "a"}, {"y"}, {int_attr("keepdims", 0)})}, {"y"}));
    rv::value y = r.run({x, ints({1})});
    CHECK(dims_of(y) == dv{2, 4});
    CHECK(values(y.as<rv::tensor>())[0] == 0.0f + 4 + 8);
    CHECK(dims_of(r.run({x, ints({-1})})) == dv{2, 3});
    r.fails({x, ints({3})}, "Reduce", "axis 3");
  }
  {
    runner r(model({{"x", f32, {2, 3, 4}}, {"a", i64, {2}}}, {node("ReduceMax", {"x", "a"}, {"y"})}, {"y"}, 18));
    rv::value y = r.run({x, ints({0, 2})});
    CHECK(dims_of(y) == dv{1, 3, 1});
    CHECK(values(y.as<rv::tensor>()) == std::vector<float>{15, 19, 23});
    r.fails({x, ints({0, -3})}, "Reduce", "repeated");
  }
  {
    // An empty list: every axis, or (noop_with_empty_axes) none.
    runner all(model({{"x", f32, {2, 3, 4}}, {"a", i64, {0}}}, {node("ReduceSum", {"x", "a"}, {"y"}, {int_attr("keepdims", 0)})}, {"y"}));
    rv::value y = all.run({x, ints({})});
    CHECK(dims_of(y) == dv{});
    CHECK(values(y.as<rv::tensor>())[0] == 276.0f);
    runner none(model({{"x", f32, {2, 3, 4}}, {"a", i64, {0}}},
                      {node("ReduceSum", {"x", "a"}, {"y"}, {int_attr("keepdims", 0), int_attr("noop_with_empty_axes", 1)})}, {"y"}));
    CHECK(dims_of(none.run({x, ints({})})) == dv{2, 3, 4});
  }
}

TEST_CASE("Squeeze and Unsqueeze with axes known at run time are views") {
  runner sq(model({{"x", f32, {1, 3, 1}}, {"a", i64, {1}}}, {node("Squeeze", {"x", "a"}, {"y"})}, {"y"}));
  const rv::tensor x = floats({1, 3, 1});
  CHECK(dims_of(sq.run({x, ints({-1})})) == dv{1, 3});
  CHECK(dims_of(sq.run({x, ints({0})})) == dv{3, 1});
  sq.fails({x, ints({1})}, "Squeeze", "not 1");
  sq.fails({x, ints({3})}, "Squeeze", "axis 3");
  runner un(model({{"x", f32, {3}}, {"a", i64, {2}}}, {node("Unsqueeze", {"x", "a"}, {"y"})}, {"y"}));
  rv::value y = un.run({floats({3}), ints({0, -1})});
  CHECK(dims_of(y) == dv{1, 3, 1});
  CHECK(values(y.as<rv::tensor>()) == std::vector<float>{0, 1, 2});
  CHECK(dims_of(un.run({floats({3}), ints({2, 1})})) == dv{3, 1, 1});
  un.fails({floats({3}), ints({1, 1})}, "Unsqueeze", "repeated");
}

TEST_CASE("Tile and Pad with counts known at run time") {
  runner tile(model({{"x", f32, {2, 3}}, {"r", i64, {2}}}, {node("Tile", {"x", "r"}, {"y"})}, {"y"}));
  const rv::tensor x = floats({2, 3});
  rv::value t = tile.run({x, ints({2, 1})});
  CHECK(dims_of(t) == dv{4, 3});
  CHECK(values(t.as<rv::tensor>())[6] == 0.0f);
  CHECK(dims_of(tile.run({x, ints({1, 0})})) == dv{2, 0});
  tile.fails({x, ints({-1, 1})}, "Tile", "negative");
  runner pad(model({{"x", f32, {2, 3}}, {"p", i64, {4}}}, {node("Pad", {"x", "p"}, {"y"})}, {"y"}));
  rv::value p = pad.run({x, ints({1, 0, 0, 2})});
  CHECK(dims_of(p) == dv{3, 5});
  CHECK(values(p.as<rv::tensor>()) == std::vector<float>{0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 5, 0, 0});
  CHECK(dims_of(pad.run({x, ints({0, -1, 0, -1})})) == dv{2, 1});
  pad.fails({x, ints({0, -2, 0, -2})}, "Pad", "below 0");
}

TEST_CASE("TopK, ConstantOfShape, Split, Range and OneHot with values known at run time") {
  runner topk(model({{"x", f32, {5}}, {"k", i64, {1}}}, {node("TopK", {"x", "k"}, {"v", "i"})}, {"v", "i"}, 11));
  rv::tuple out = topk.run({floats({5}), ints({2})}).as<rv::tuple>();
  CHECK(values(out[0].as<rv::tensor>()) == std::vector<float>{4, 3});
  CHECK(dims_of(topk.run({floats({5}), ints({0})}).as<rv::tuple>()[1]) == dv{0});
  topk.fails({floats({5}), ints({6})}, "TopK", "k (6)");

  runner cos(model({{"s", i64, {2}}}, {node("ConstantOfShape", {"s"}, {"y"})}, {"y"}, 9));
  rv::value c = cos.run({ints({2, 3})});
  CHECK(dims_of(c) == dv{2, 3});
  CHECK(values(c.as<rv::tensor>()) == std::vector<float>(6, 0.0f));
  cos.fails({ints({-1, 3})}, "ConstantOfShape", "negative");

  runner split(model({{"x", f32, {5}}, {"s", i64, {2}}}, {node("Split", {"x", "s"}, {"a", "b"})}, {"a", "b"}));
  rv::tuple parts = split.run({floats({5}), ints({2, 3})}).as<rv::tuple>();
  CHECK(values(parts[1].as<rv::tensor>()) == std::vector<float>{2, 3, 4});
  CHECK(dims_of(split.run({floats({5}), ints({5, 0})}).as<rv::tuple>()[1]) == dv{0});
  split.fails({floats({5}), ints({2, 2})}, "Split", "add up to 4");
  split.fails({floats({5}), ints({6, -1})}, "Split", "negative");

  runner range(model({{"a", f32, {}}, {"b", f32, {}}, {"d", f32, {}}}, {node("Range", {"a", "b", "d"}, {"y"})}, {"y"}, 11));
  rv::value rg = range.run({scalar(1.0f), scalar(2.0f), scalar(0.25f)});
  CHECK(values(rg.as<rv::tensor>()) == std::vector<float>{1, 1.25f, 1.5f, 1.75f});
  CHECK(dims_of(range.run({scalar(3.0f), scalar(1.0f), scalar(0.5f)})) == dv{0});
  range.fails({scalar(1.0f), scalar(2.0f), scalar(0.0f)}, "Range", "delta is 0");
  range.fails({scalar(0.0f), scalar(1.0e30f), scalar(1.0f)}, "Range", "too long");
  runner irange(model({{"a", i64, {}}, {"b", i64, {}}, {"d", i64, {}}}, {node("Range", {"a", "b", "d"}, {"y"})}, {"y"}, 11));
  constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  CHECK(dims_of(irange.run({scalar<std::int64_t>(10), scalar<std::int64_t>(-3), scalar<std::int64_t>(-4)})) == dv{4});
  irange.fails({scalar(lo), scalar(hi), scalar<std::int64_t>(1)}, "Range", "too long");  // no overflow on the way

  runner hot(model({{"i", i64, {3}}, {"d", i64, {}}}, {node("OneHot", {"i", "d", "v"}, {"y"}, {int_attr("axis", 0)})}, {"y"}, 11,
                   {int64_tensor("v", {0, 1})}));
  rv::value h = hot.run({ints({0, 2, -1}), scalar<std::int64_t>(4)});
  CHECK(dims_of(h) == dv{4, 3});
  CHECK(h.as<rv::tensor>().data<const std::int64_t>()[2 * 3 + 1] == 1);
  CHECK(h.as<rv::tensor>().data<const std::int64_t>()[3 * 3 + 2] == 1);
  hot.fails({ints({0, 1, 2}), scalar<std::int64_t>(0)}, "OneHot", "depth");
}

TEST_CASE("a shape value of a length known only at run time is refused at import, clearly") {
  pb d_n, shape, tt, type, s;
  d_n.str(2, "n");
  shape.msg(1, d_n);
  tt.i(1, i64).msg(2, shape);
  type.msg(1, tt);
  s.str(1, "s").msg(2, type);
  pb graph;
  graph.msg(1, node("Reshape", {"x", "s"}, {"y"}));
  graph.str(2, "g");
  pb xd, xs, xt, xty, x;
  xd.i(1, 6);
  xs.msg(1, xd);
  xt.i(1, f32).msg(2, xs);
  xty.msg(1, xt);
  x.str(1, "x").msg(2, xty);
  graph.msg(11, x).msg(11, s);
  pb y;
  y.str(1, "y");
  graph.msg(12, y);
  pb op;
  op.str(1, "").i(2, 13);
  pb m;
  m.i(1, 8).msg(7, graph).msg(8, op);
  rv::result<rv::ir::module> r = onnx::import(m.out);
  REQUIRE(!r.ok());
  const std::string msg(r.error().message());
  CHECK(msg.find("Reshape") != std::string::npos);
  CHECK(msg.find("length known only at run time") != std::string::npos);
}

TEST_CASE("the shape kernels on their own: integer ranges without overflow, the output's length checked") {
  namespace k = relaxvm::kernels;
  const rv::tensor one = rv::tensor::empty({1}, rv::dtype::int64());
  const auto count = [&](const rv::tensor& a, const rv::tensor& b, const rv::tensor& d) {
    REQUIRE(k::Range_shape(a, b, d, one).ok());
    return one.data<const std::int64_t>()[0];
  };
  // int8 from -128 to 127: a distance int8 does not hold.
  CHECK(count(scalar<std::int8_t>(-128), scalar<std::int8_t>(127), scalar<std::int8_t>(1)) == 255);
  CHECK(count(scalar<std::int8_t>(127), scalar<std::int8_t>(-128), scalar<std::int8_t>(-128)) == 2);
  CHECK(count(scalar<std::uint64_t>(1), scalar<std::uint64_t>(std::uint64_t{1} << 40), scalar<std::uint64_t>(std::uint64_t{1} << 39)) == 2);
  CHECK(count(scalar(5.0), scalar(5.0), scalar(-1.0)) == 0);
  CHECK(!k::Range_shape(scalar(0.0), scalar(std::nan("")), scalar(1.0), one).ok());
  CHECK(!k::Range_shape(scalar<std::int32_t>(0), scalar<std::int64_t>(4), scalar<std::int32_t>(1), one).ok());  // mixed types
  // An output of the wrong length is refused, not overrun.
  const rv::status bad = k::Reshape_shape(rv::shape{2, 3}, ints({6}), 0, rv::tensor::empty({2}, rv::dtype::int64()));
  REQUIRE(!bad.ok());
  CHECK(std::string(bad.error().message()).find("onnx.Reshape.shape") != std::string::npos);
  // Slice's INT64_MIN step (its negation overflows) is refused.
  const rv::tensor two = rv::tensor::empty({2}, rv::dtype::int64());
  const rv::status step = k::Slice_shape(rv::shape{4, 5}, ints({0}), ints({1}), ints({0}), ints({std::numeric_limits<std::int64_t>::min()}), two);
  REQUIRE(!step.ok());
  CHECK(std::string(step.error().message()).find("step") != std::string::npos);
}
