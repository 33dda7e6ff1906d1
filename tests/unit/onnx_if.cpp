// SPDX-License-Identifier: Apache-2.0
// onnx/control.hpp: If imported as the IR's if_. A condition known only when the program runs
// takes both branches; branches read the outer graph's values and initializers and their own; a
// constant read in a branch and after the If (emitted again outside, the branch's variable not
// being visible there); a value computed before the If read after it; several outputs; nested
// Ifs; a condition known at import folding to the taken branch (no if_); branch outputs of
// different shapes (fresh symbolic dims, matched when it runs); and the refusals: a missing
// branch, a branch whose output count differs from the node's, a condition that is not one bool,
// dtypes or ranks that differ, Loop and Scan (unsupported, named with their node), and graphs
// nested past the reader's limit.
#include <doctest/doctest.h>

#include <cstdint>
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

constexpr int boolean = 9;

// A branch: a GraphProto of `nodes` with outputs `outputs` (names only) and initializers.
pb if_graph(std::string_view name, const std::vector<pb>& nodes, const std::vector<std::string_view>& outputs,
            const std::vector<pb>& inits = {}) {
  pb g;
  for (const pb& n : nodes) g.msg(1, n);
  g.str(2, name);
  for (const pb& t : inits) g.msg(5, t);
  for (std::string_view o : outputs) {
    pb v;
    v.str(1, o);
    g.msg(12, v);
  }
  return g;
}
// AttributeProto of type GRAPH (5) and TENSOR (4).
pb graph_attr(std::string_view name, const pb& g) {
  pb a;
  a.str(1, name).i(20, 5).msg(6, g);
  return a;
}
pb tensor_attr(std::string_view name, const pb& t) {
  pb a;
  a.str(1, name).i(20, 4).msg(5, t);
  return a;
}
pb if_node(std::string_view cond, const std::vector<std::string_view>& out, const pb& then_g, const pb& else_g,
           std::string_view name = "") {
  pb n = node("If", {cond}, out, {graph_attr("then_branch", then_g), graph_attr("else_branch", else_g)});
  if (!name.empty()) n.str(3, name);
  return n;
}
// A bool scalar TensorProto.
pb bool_tensor(std::string_view name, bool v) {
  pb t;
  const std::uint8_t b = v ? 1 : 0;
  t.i(2, boolean).str(8, name).bytes(9, &b, 1);
  return t;
}

rv::tensor floats(std::vector<float> v, rv::shape s) { return rv::tensor::from<float>(std::span<const float>(v), s); }
rv::tensor flag(bool v) {
  rv::tensor t = rv::tensor::try_empty(rv::shape{}, rv::dtype::bool_()).value();
  *static_cast<std::uint8_t*>(t.raw_data()) = v ? 1 : 0;
  return t;
}
std::vector<float> values(const rv::value& v) {
  const rv::tensor t = v.as<rv::tensor>();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}
std::string message(const auto& r) { return r.ok() ? std::string() : std::string(r.error().message()); }

struct program {
  rv::executable exe;
  rv::registry reg;
};
program load(const std::vector<std::byte>& bytes) {
  rv::result<rv::executable> exe = onnx::load(bytes);
  INFO(message(exe));
  REQUIRE(exe.ok());
  program p{std::move(*exe), {}};
  onnx::register_kernels(p.reg);
  return p;
}
rv::value run(program& p, std::vector<rv::value> in) {
  rv::virtual_machine vm(p.exe, p.reg);
  rv::result<rv::value> r = vm.try_invoke("main", in);
  INFO(message(r));
  REQUIRE(r.ok());
  return *r;
}
std::string text_of(const std::vector<std::byte>& bytes) {
  rv::result<rv::ir::module> m = onnx::import(bytes);
  INFO(message(m));
  REQUIRE(m.ok());
  return rv::ir::to_text(*m);
}

}  // namespace

TEST_CASE("If on a condition known when it runs: both branches, outer values, outer and own initializers") {
  // t = Relu(x) before the If (read in a branch and after it); then: y = x + w + t (w the graph's
  // initializer); else: y = x * v (v the branch's own). z = y + t after.
  pb g;
  g.msg(1, node("Relu", {"x"}, {"t"}));
  const pb then_g = if_graph("then", {node("Add", {"x", "w"}, {"a"}), node("Add", {"a", "t"}, {"y_then"})}, {"y_then"});
  const pb else_g = if_graph("else", {node("Mul", {"x", "v"}, {"y_else"})}, {"y_else"}, {float_tensor("v", {10, 20})});
  g.msg(1, if_node("c", {"y"}, then_g, else_g, "choose"));
  g.msg(1, node("Add", {"y", "t"}, {"z"}));
  g.msg(5, float_tensor("w", {1, 2}));
  g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("x", f32, {"2"}));
  const std::vector<std::byte> bytes = model_of(g, {"z"});
  CHECK(text_of(bytes).find("if ") != std::string::npos);
  program p = load(bytes);
  const rv::tensor x = floats({-1, 3}, rv::shape{2});
  CHECK(values(run(p, {flag(true), x})) == std::vector<float>{0, 11});   // (x + w + t) + t
  CHECK(values(run(p, {flag(false), x})) == std::vector<float>{-10, 63}); // x * v + t
}

TEST_CASE("If: a constant read in a branch and after the If; a branch output that is an outer value") {
  // k is an initializer that then_branch reads first (emitted there) and the graph reads after
  // the If: it is emitted again outside, as the branch's variable is not visible there. else
  // returns x itself.
  pb g;
  const pb then_g = if_graph("then", {node("Add", {"x", "k"}, {"y_then"})}, {"y_then"});
  const pb else_g = if_graph("else", {}, {"x"});
  g.msg(1, if_node("c", {"y"}, then_g, else_g));
  g.msg(1, node("Mul", {"y", "k"}, {"z"}));
  g.msg(5, float_tensor("k", {2, 3}));
  g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("x", f32, {"2"}));
  program p = load(model_of(g, {"z"}));
  const rv::tensor x = floats({1, 1}, rv::shape{2});
  CHECK(values(run(p, {flag(true), x})) == std::vector<float>{6, 12});
  CHECK(values(run(p, {flag(false), x})) == std::vector<float>{2, 3});
}

TEST_CASE("If with several outputs, and nested Ifs") {
  // then: (x + 1, x * 2), or, nested on d, (x - 1, x); else: (x * 2, x + 1).
  pb g;
  const pb inner_then = if_graph("inner_then", {node("Add", {"x", "one"}, {"p"}), node("Mul", {"x", "two"}, {"q"})}, {"p", "q"});
  const pb inner_else = if_graph("inner_else", {node("Sub", {"x", "one"}, {"p2"})}, {"p2", "x"});
  const pb then_g = if_graph("then", {if_node("d", {"a", "b"}, inner_then, inner_else)}, {"a", "b"});
  const pb else_g = if_graph("else", {node("Mul", {"x", "two"}, {"e"}), node("Add", {"x", "one"}, {"f"})}, {"e", "f"});
  g.msg(1, if_node("c", {"y0", "y1"}, then_g, else_g));
  g.msg(1, node("Sub", {"y0", "y1"}, {"z"}));
  g.msg(5, float_tensor("one", {1})).msg(5, float_tensor("two", {2}));
  g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("d", boolean, {"1"}));
  g.msg(11, tensor_value_info("x", f32, {"3"}));
  program p = load(model_of(g, {"y0", "y1", "z"}));
  const rv::tensor x = floats({0, 1, 5}, rv::shape{3});
  rv::tensor d_true = rv::tensor::try_empty(rv::shape{1}, rv::dtype::bool_()).value();
  *static_cast<std::uint8_t*>(d_true.raw_data()) = 1;
  rv::tensor d_false = rv::tensor::try_empty(rv::shape{1}, rv::dtype::bool_()).value();
  *static_cast<std::uint8_t*>(d_false.raw_data()) = 0;
  struct each {
    bool c;
    rv::tensor d;
    std::vector<float> y0, y1;
  };
  for (const each& e : {each{true, d_true, {1, 2, 6}, {0, 2, 10}}, each{true, d_false, {-1, 0, 4}, {0, 1, 5}},
                        each{false, d_true, {0, 2, 10}, {1, 2, 6}}}) {
    const rv::tuple t = run(p, {flag(e.c), e.d, x}).as<rv::tuple>();
    CHECK(values(t[0]) == e.y0);
    CHECK(values(t[1]) == e.y1);
    std::vector<float> z;
    for (std::size_t i = 0; i < 3; ++i) z.push_back(e.y0[i] - e.y1[i]);
    CHECK(values(t[2]) == z);
  }
}

TEST_CASE("If whose condition is known at import imports the taken branch only") {
  // c is an initializer, e a Constant: each If folds (no if_ in the program); the folded
  // branch's constant output still folds further (Shape of it).
  for (bool c : {true, false}) {
    pb g;
    const pb then_g = if_graph("then", {node("Add", {"x", "k"}, {"a"})}, {"a"});
    const pb else_g = if_graph("else", {node("Sub", {"x", "k"}, {"b"})}, {"b"});
    g.msg(1, if_node("c", {"y"}, then_g, else_g));
    g.msg(1, node("Constant", {}, {"e"}, {tensor_attr("value", bool_tensor("", !c))}));
    const pb then2 = if_graph("then2", {node("Constant", {}, {"u"}, {tensor_attr("value", float_tensor("", {7}))})}, {"u"});
    const pb else2 = if_graph("else2", {node("Constant", {}, {"w"}, {tensor_attr("value", float_tensor("", {9}))})}, {"w"});
    g.msg(1, if_node("e", {"s"}, then2, else2));
    g.msg(1, node("Add", {"y", "s"}, {"z"}));
    g.msg(5, bool_tensor("c", c)).msg(5, float_tensor("k", {1, 1}));
    g.msg(11, tensor_value_info("x", f32, {"2"}));
    const std::vector<std::byte> bytes = model_of(g, {"z"});
    CHECK(text_of(bytes).find("if ") == std::string::npos);
    program p = load(bytes);
    // c: x + k + 9 (e is !c: the else of the second); !c: x - k + 7.
    CHECK(values(run(p, {floats({1, 2}, rv::shape{2})})) == (c ? std::vector<float>{11, 12} : std::vector<float>{7, 8}));
  }
}

TEST_CASE("If whose branches' outputs differ in shape: fresh symbolic dims, matched when it runs") {
  // then: x (n, 2); else: Concat(x, x) on axis 0 (2n, 2). z = y + y uses the merged shape.
  pb g;
  const pb then_g = if_graph("then", {node("Identity", {"x"}, {"a"})}, {"a"});
  const pb else_g = if_graph("else", {node("Concat", {"x", "x"}, {"b"}, {int_attr("axis", 0)})}, {"b"});
  g.msg(1, if_node("c", {"y"}, then_g, else_g));
  g.msg(1, node("Add", {"y", "y"}, {"z"}));
  g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("x", f32, {"n", "2"}));
  const std::vector<std::byte> bytes = model_of(g, {"z"});
  const std::string text = text_of(bytes);
  CHECK(text.find("match_cast") != std::string::npos);
  program p = load(bytes);
  const rv::tensor x = floats({1, 2, 3, 4}, rv::shape{2, 2});
  const rv::tensor a = run(p, {flag(true), x}).as<rv::tensor>();
  CHECK(a.shape() == rv::shape{2, 2});
  CHECK(values(a) == std::vector<float>{2, 4, 6, 8});
  const rv::tensor b = run(p, {flag(false), x}).as<rv::tensor>();
  CHECK(b.shape() == rv::shape{4, 2});
  CHECK(values(b) == std::vector<float>{2, 4, 6, 8, 2, 4, 6, 8});
}

TEST_CASE("If: a branch's own run-time dims and folded shapes stay in it; the result's dims are fresh") {
  // then: NonZero(m), (1, k) with k bound in the branch; else: [0, 1] unsqueezed, (1, 2). After
  // the If: y + y, and Shape(y) folded over the merged dims (1, fresh).
  pb g;
  const pb then_g = if_graph("then", {node("NonZero", {"m"}, {"nz"})}, {"nz"});
  const pb else_g = if_graph("else", {node("Unsqueeze", {"ci", "ax"}, {"u"})}, {"u"}, {int64_tensor("ci", {0, 1}), int64_tensor("ax", {0})});
  g.msg(1, if_node("c", {"y"}, then_g, else_g));
  g.msg(1, node("Add", {"y", "y"}, {"z"}));
  g.msg(1, node("Shape", {"y"}, {"s"}));
  g.msg(1, node("Reshape", {"z", "s"}, {"r"}));
  g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("m", boolean, {"n"}));
  program p = load(model_of(g, {"r"}));
  rv::tensor m = rv::tensor::try_empty(rv::shape{3}, rv::dtype::bool_()).value();
  for (int i = 0; i < 3; ++i) static_cast<std::uint8_t*>(m.raw_data())[i] = i == 1 ? 0 : 1;
  const auto ints = [](const rv::value& v) {
    const rv::tensor t = v.as<rv::tensor>();
    return std::vector<std::int64_t>(t.data<std::int64_t>(), t.data<std::int64_t>() + t.numel());
  };
  const rv::value a = run(p, {flag(true), m});
  CHECK(a.as<rv::tensor>().shape() == rv::shape{1, 2});
  CHECK(ints(a) == std::vector<std::int64_t>{0, 4});
  for (int i = 0; i < 3; ++i) static_cast<std::uint8_t*>(m.raw_data())[i] = 1;
  CHECK(ints(run(p, {flag(true), m})) == std::vector<std::int64_t>{0, 2, 4});
  CHECK(ints(run(p, {flag(false), m})) == std::vector<std::int64_t>{0, 2});
}

TEST_CASE("Malformed Ifs are refused, naming the node") {
  const auto refused = [](const pb& ifn, std::string_view want, rv::error_kind kind = rv::error_kind::value) {
    pb g;
    g.msg(1, ifn);
    g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("x", f32, {"2"}));
    g.msg(11, tensor_value_info("i", i64, {"2"})).msg(11, tensor_value_info("m", boolean, {"2"}));
    g.msg(11, tensor_value_info("huge", boolean, {"4294967296", "4294967296", "4"}));  // no product: it would overflow
    rv::result<rv::ir::module> r = onnx::import(model_of(g, {"y"}));
    REQUIRE_FALSE(r.ok());
    INFO(r.error().message());
    CHECK(r.error().kind() == kind);
    CHECK(std::string(r.error().message()).find(want) != std::string::npos);
  };
  const pb one = if_graph("one", {node("Neg", {"x"}, {"a"})}, {"a"});
  const pb two = if_graph("two", {node("Neg", {"x"}, {"a"}), node("Abs", {"x"}, {"b"})}, {"a", "b"});
  refused(node("If", {"c"}, {"y"}, {graph_attr("then_branch", one)}), "node 0 (If): the else_branch attribute (a graph) is missing");
  refused(if_node("c", {"y"}, one, two, "f"), "node 0 (If 'f'): else_branch has 2 outputs, but the node has 1");
  refused(if_node("x", {"y"}, one, one), "node 0 (If): the condition is float32; If takes bool");
  refused(if_node("m", {"y"}, one, one), "node 0 (If): the condition has a dimension of 2; If takes one element");
  refused(if_node("huge", {"y"}, one, one), "node 0 (If): the condition has a dimension of 4294967296; If takes one element");
  refused(if_node("c", {"y"}, one, if_graph("e", {node("Neg", {"i"}, {"b"})}, {"b"})),
          "node 0 (If): output 0 is float32 in then_branch but int64 in else_branch");
  refused(if_node("c", {"y"}, one, if_graph("e", {node("Unsqueeze", {"x", "ax"}, {"b"})}, {"b"}, {int64_tensor("ax", {0})})),
          "node 0 (If) is not supported: output 0 has rank 1 in then_branch but 2 in else_branch", rv::error_kind::unsupported);
  // An error inside a branch says where: the If, the branch, the branch's node.
  refused(if_node("c", {"y"}, one, if_graph("e", {node("Add", {"x", "q"}, {"b"})}, {"b"})),
          "node 0 (If): else_branch: node 0 (Add): input 1 ('q') is not defined before the node");
  refused(if_node("c", {"y"}, one, if_graph("e", {}, {"nothing"})), "node 0 (If): else_branch: output 'nothing' is not computed by any node");
}

TEST_CASE("Loop and Scan are refused as unsupported, naming the op and the node, in a branch too") {
  pb g;
  g.msg(1, node("Loop", {"", "c"}, {"y"}, {graph_attr("body", if_graph("body", {}, {"c"}))}));
  g.msg(1, node("Scan", {"x"}, {"s"}, {graph_attr("body", if_graph("body", {}, {"x"})), int_attr("num_scan_inputs", 1)}));
  const pb then_g = if_graph("then", {node("Loop", {"", "c"}, {"l"}, {graph_attr("body", if_graph("b", {}, {"c"}))})}, {"l"});
  g.msg(1, if_node("c", {"z"}, then_g, if_graph("else", {}, {"x"}), "pick"));
  g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("x", f32, {"2"}));
  rv::result<rv::ir::module> r = onnx::import(model_of(g, {"y", "s", "z"}, 16));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::unsupported);
  const std::string m(r.error().message());
  INFO(m);
  CHECK(m.find("ai.onnx Loop (opset 16): 2 nodes: node 0 (Loop), node 0 (Loop) in node 2 (If 'pick').then_branch") != std::string::npos);
  CHECK(m.find("ai.onnx Scan (opset 16): 1 node: node 1 (Scan)") != std::string::npos);
}

TEST_CASE("Ifs nested past the reader's limit are refused") {
  // 64 nested Ifs read; 65 do not (model.hpp's max_nesting).
  for (int depth : {64, 65}) {
    pb inner = if_graph("leaf", {node("Neg", {"x"}, {"a"})}, {"a"});
    for (int k = 1; k < depth; ++k) inner = if_graph("b", {if_node("c", {"a"}, inner, if_graph("e", {}, {"x"}))}, {"a"});
    pb g;
    g.msg(1, if_node("c", {"y"}, inner, if_graph("e", {}, {"x"})));
    g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("x", f32, {"2"}));
    rv::result<rv::ir::module> r = onnx::import(model_of(g, {"y"}));
    INFO(message(r));
    if (depth == 64) {
      CHECK(r.ok());
    } else {
      REQUIRE_FALSE(r.ok());
      CHECK(std::string(r.error().message()).find("nests graphs or types more than 64 levels deep") != std::string::npos);
    }
  }
}

TEST_CASE("If on a condition whose length is known only when it runs: one element, or an error") {
  pb g;
  g.msg(1, if_node("c", {"y"}, if_graph("t", {node("Neg", {"x"}, {"a"})}, {"a"}), if_graph("e", {node("Abs", {"x"}, {"b"})}, {"b"})));
  g.msg(11, tensor_value_info("c", boolean, {"n"})).msg(11, tensor_value_info("x", f32, {"2"}));
  program p = load(model_of(g, {"y"}));
  rv::tensor one = rv::tensor::try_empty(rv::shape{1}, rv::dtype::bool_()).value();
  *static_cast<std::uint8_t*>(one.raw_data()) = 1;
  CHECK(values(run(p, {one, floats({1, -2}, rv::shape{2})})) == std::vector<float>{-1, 2});
  const rv::tensor three = rv::tensor::try_empty(rv::shape{3}, rv::dtype::bool_()).value();
  rv::virtual_machine vm(p.exe, p.reg);
  CHECK_FALSE(vm.try_invoke("main", std::vector<rv::value>{three, floats({1, -2}, rv::shape{2})}).ok());
}

// Converters emit local copies of entries (ConstantOfShape's shape, a Slice's starts read when it
// runs): inside a branch they must not be recorded for undoing, since they die with the call
// (the onnx_if test runs under ASan with detect_stack_use_after_return).
TEST_CASE("If: a branch whose converters emit local entries (Shape into ConstantOfShape)") {
  pb g;
  const pb then_g = if_graph("t", {node("Shape", {"x"}, {"s"}), node("ConstantOfShape", {"s"}, {"z"})}, {"z"});
  g.msg(1, if_node("c", {"y"}, then_g, if_graph("e", {node("Relu", {"x"}, {"r"})}, {"r"})));
  g.msg(11, tensor_value_info("c", boolean, {})).msg(11, tensor_value_info("x", f32, {"N"}));
  program p = load(model_of(g, {"y"}));
  CHECK(values(run(p, {flag(true), floats({1, -2, 3}, rv::shape{3})})) == std::vector<float>{0, 0, 0});
  CHECK(values(run(p, {flag(false), floats({1, -2, 3}, rv::shape{3})})) == std::vector<float>{1, 0, 3});
}
