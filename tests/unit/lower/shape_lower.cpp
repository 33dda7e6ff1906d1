// SPDX-License-Identifier: Apache-2.0
// ir::pass::shape_lower alone (VMShapeLower + ComputePrimValue, docs/lowering.md):
// the cases of test_backend_transform_shape_lower.py (3.6), on modules built with the builder.
// Lines are compared in a compact form: R.call_packed("vm.builtin.X", a, ...) as X(a, ...),
// R.prim_value(3) as 3, an ErrorContext string as ctx, annotations and sinfo_args dropped; the
// contexts themselves are checked on the module.
#include <doctest/doctest.h>

#include <relaxvm/lower.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();
const rv::dtype i64 = rv::dtype::int64();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Replaces each `open ... close` (close searched after open, parentheses balanced when `balance`).
std::string replace_spans(std::string s, const std::string& open, const std::string& close, const std::string& with,
                          bool balance = false) {
  for (std::size_t i = s.find(open); i != std::string::npos; i = s.find(open, i + with.size())) {
    std::size_t end = s.find(close, i + open.size());
    if (balance) {
      int depth = 1;
      for (end = i + open.size(); depth > 0; ++end) depth += s[end] == '(' ? 1 : s[end] == ')' ? -1 : 0;
      end -= close.size();
    }
    s.replace(i, end + close.size() - i, with);
  }
  return s;
}

// Function `fn` of `m` after the header, compacted (see the top of this file).
std::string lowered(const ir::module& m, std::size_t fn = 0) {
  ir::module one;
  one.syms = m.syms;
  one.funcs.push_back(m.funcs[fn]);
  std::string s = ir::to_text(one);
  s = s.substr(s.find("):\n") + 3);
  if (s.rfind("    R.func_attr", 0) == 0) s = s.substr(s.find('\n') + 1);
  s = replace_spans(s, "R.str(\"ErrorContext(", ") \")", "ctx");
  s = replace_spans(s, ", sinfo_args=(", ")", "", true);
  for (std::size_t i = s.find("R.prim_value("); i != std::string::npos; i = s.find("R.prim_value(", i + 1)) {
    const std::size_t end = s.find(')', i);
    const std::string v = s.substr(i + 13, end - i - 13);
    if (v.find_first_not_of("-0123456789") == std::string::npos) s.replace(i, end + 1 - i, v);
  }
  for (std::size_t i = s.find("R.call_packed(\"vm.builtin."); i != std::string::npos;
       i = s.find("R.call_packed(\"vm.builtin.", i + 1)) {
    const std::size_t q = s.find('"', i + 26);
    s.replace(i, q + 3 - i, s.substr(i + 26, q - i - 26) + "(");
  }
  std::string out;  // "name: info = value" -> "name = value", indentation dropped
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t nl = s.find('\n', i);
    std::string line = s.substr(i, nl - i);
    line = line.substr(line.find_first_not_of(' '));
    const std::size_t colon = line.find(": "), eq = line.find(" = ");
    if (colon != std::string::npos && eq != std::string::npos && colon < eq) line.erase(colon, eq - colon);
    out += line + "\n";
    i = nl + 1;
  }
  return out;
}

// Every string argument of function `fn`, in order.
std::vector<std::string> strings(const ir::module& m, std::size_t fn = 0) {
  std::vector<std::string> out;
  ir::for_each_binding(m.funcs[fn].body, [&](const ir::binding& b) {
    for (const ir::leaf& l : b.value.args)
      if (l.kind == ir::leaf_kind::string) out.emplace_back(l.text.view());
  });
  return out;
}

template <class F>
ir::module build(F&& make) {
  ir::module_builder m;
  make(m);
  return m.get();
}
}  // namespace

TEST_CASE("shape_lower: test_const_shape_arg and test_static_fn_check, no slots and a null heap") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    auto f = m.function("main", {{"x", ir::shape_info({1, 2})}, {"y", ir::shape_info()}});
    f.ret(f.param(0));
  }));
  CHECK(lowered(a) ==
        "shape_heap = R.null_value()\n"
        "_ = check_shape_info(x, 2, ctx)\n"
        "_ = check_shape_info(y, -1, ctx)\n"
        "_ = match_shape(x, shape_heap, 2, 0, 1, 0, 2, ctx)\n"
        "return x\n");
  // Exactly, with the contexts (they hold no quotes here).
  CHECK(ir::to_text(a) ==
        "@R.function\n"
        "def main(x: R.Shape([1, 2]), y: R.Shape(ndim=-1)):\n"
        "    shape_heap: R.Object = R.null_value()\n"
        "    _ = R.call_packed(\"vm.builtin.check_shape_info\", x, R.prim_value(2), "
        "R.str(\"ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Shape([1, 2])) \"))\n"
        "    _ = R.call_packed(\"vm.builtin.check_shape_info\", y, R.prim_value(-1), "
        "R.str(\"ErrorContext(fn=main, loc=param[1], param=y, annotation=R.Shape(ndim=-1)) \"))\n"
        "    _ = R.call_packed(\"vm.builtin.match_shape\", x, shape_heap, R.prim_value(2), R.prim_value(0), "
        "R.prim_value(1), R.prim_value(0), R.prim_value(2), "
        "R.str(\"ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Shape([1, 2])) \"))\n"
        "    return x\n");
  const ir::module b = ir::pass::shape_lower(build([](ir::module_builder& m) {
    auto f = m.function("main", {{"f", ir::func_info()}, {"y", ir::shape_info({1, 2})}});
    f.ret(f.param(1));
  }));
  CHECK(lowered(b) ==
        "shape_heap = R.null_value()\n"
        "_ = check_func_info(f, ctx)\n"
        "_ = check_shape_info(y, 2, ctx)\n"
        "_ = match_shape(y, shape_heap, 2, 0, 1, 0, 2, ctx)\n"
        "return y\n");
  CHECK(b.funcs[0].var(b.funcs[0].body.blocks[0].bindings[0].var).info.kind == ir::info_kind::object);
}

TEST_CASE("shape_lower: test_simple_symbolic_shape") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n"), k = m.sym("m");
    auto f = m.function("main", {{"x", ir::tensor_info({n, 2, k}, f32)}});
    f.ret(f.param(0));
  }));
  CHECK(lowered(a) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (2,))\n"
        "_ = check_tensor_info(x, 3, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(x, shape_heap, 3, 1, 0, 0, 2, 1, 1, ctx)\n"
        "return x\n");
  const std::string ctx = "ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 2, m), dtype=\"float32\")) ";
  CHECK(strings(a) == std::vector<std::string>{ctx, ctx});
  const ir::binding& heap = a.funcs[0].body.blocks[0].bindings[0];
  CHECK(heap.value.kind == ir::expr_kind::call_builtin);
  CHECK(heap.value.callee.view() == "vm.builtin.alloc_shape_heap");
  CHECK(ir::same_info(a.syms, a.funcs[0].var(heap.var).info, ir::tensor_info(i64, 1)));
}

TEST_CASE("shape_lower: test_symbolic_compute, a match_cast with a composite matched in two rounds") {
  const auto make = [](rv::dtype cast) {
    return build([cast](ir::module_builder& m) {
      const ir::sym n = m.sym("n"), k2 = m.sym("m"), k = m.sym("k");
      auto f = m.function("main", {{"x", ir::tensor_info({n, k2}, f32)}, {"y", ir::tensor_info(rv::dtype::void_(), 3)}});
      f.match_cast(f.param(1), ir::tensor_info({k, k2, k + 1}, cast));
      f.ret(f.shape({k + 1, k2, 2}));
    });
  };
  // Slots n:0 m:1 k:2 k+1:3. y's ndim already proves the annotation: no check for the match_cast.
  const ir::module a = ir::pass::shape_lower(make(rv::dtype::void_()));
  CHECK(lowered(a) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (4,))\n"
        "_ = check_tensor_info(x, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = check_tensor_info(y, 3, R.dtype(\"\"), ctx)\n"
        "_ = match_shape(x, shape_heap, 2, 1, 0, 1, 1, ctx)\n"
        "_ = match_shape(y, shape_heap, 3, 1, 2, 3, 1, 2, 0, ctx)\n"
        "_ = shape_arith(shape_heap, 0, 3, 1, 2, 0, 1)\n"
        "_ = match_shape(y, shape_heap, 3, 3, 2, 3, 1, 3, 3, ctx)\n"
        "lv = R.match_cast(y, R.Tensor((k, m, k + 1)))\n"
        "lv1 = make_shape(shape_heap, 3, 1, 3, 1, 1, 0, 2)\n"
        "return lv1\n");
  CHECK(strings(a)[4] == "ErrorContext(match_cast, struct_info=R.Tensor((k, m, k + 1))) ");
  // With a dtype the match_cast checks it first.
  const ir::module b = ir::pass::shape_lower(make(f32));
  CHECK(contains(lowered(b), "_ = match_shape(x, shape_heap, 2, 1, 0, 1, 1, ctx)\n"
                             "_ = check_tensor_info(y, 3, R.dtype(\"float32\"), ctx)\n"
                             "_ = match_shape(y, shape_heap, 3, 1, 2, 3, 1, 2, 0, ctx)\n"));
  CHECK(strings(b)[3] == "ErrorContext(match_cast, struct_info=R.Tensor((k, m, k + 1), dtype=\"float32\")) ");
}

TEST_CASE("shape_lower: test_tuple_handling, every check before the matches") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n"), k2 = m.sym("m"), k = m.sym("k");
    auto f = m.function("main", {{"x", ir::tuple_info({ir::tensor_info({n, k2}, f32),
                                                       ir::tuple_info({ir::shape_info(), ir::tensor_info({n, k}, rv::dtype::int32())})})}});
    f.ret(f.param(0));
  }));
  CHECK(lowered(a) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (3,))\n"
        "_ = check_tuple_info(x, 2, ctx)\n"
        "lv = x[0]\n"
        "_ = check_tensor_info(lv, 2, R.dtype(\"float32\"), ctx)\n"
        "lv1 = x[1]\n"
        "_ = check_tuple_info(lv1, 2, ctx)\n"
        "lv2 = lv1[0]\n"
        "_ = check_shape_info(lv2, -1, ctx)\n"
        "lv3 = lv1[1]\n"
        "_ = check_tensor_info(lv3, 2, R.dtype(\"int32\"), ctx)\n"
        "_ = match_shape(lv, shape_heap, 2, 1, 0, 1, 1, ctx)\n"
        "_ = match_shape(lv3, shape_heap, 2, 3, 0, 1, 2, ctx)\n"
        "return x\n");
}

TEST_CASE("shape_lower: test_return_match_check and test_return_match_check_with_new_expr") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n"), k = m.sym("m");
    auto f = m.function("main", {{"x", ir::tensor_info({n, k}, f32)}, {"y", ir::object_info()}});
    f.ret(f.param(1), ir::tuple_info({ir::tensor_info({n, k}, f32)}));
  }));
  CHECK(lowered(a) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (2,))\n"
        "_ = check_tensor_info(x, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(x, shape_heap, 2, 1, 0, 1, 1, ctx)\n"
        "_ = check_tuple_info(y, 1, ctx)\n"
        "tuple_get_item = tuple_getitem(y, 0)\n"
        "_ = check_tensor_info(tuple_get_item, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(tuple_get_item, shape_heap, 2, 3, 0, 3, 1, ctx)\n"
        "return y\n");
  CHECK(strings(a).back() == "ErrorContext(fn=main, loc=return, annotation=R.Tuple(R.Tensor((n, m), dtype=\"float32\"))) ");
  // x: (n, n) checks squareness (Store then Load); n * n is computed at the parameters.
  const ir::module b = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n");
    auto f = m.function("main", {{"x", ir::tensor_info({n, n}, f32)}});
    f.ret(f.call_packed("flatten_matrix", {f.param(0)}, ir::object_info()), ir::tensor_info({n * n}, f32));
  }));
  CHECK(lowered(b) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (2,))\n"
        "_ = check_tensor_info(x, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(x, shape_heap, 2, 1, 0, 3, 0, ctx)\n"
        "_ = shape_arith(shape_heap, 2, 1, 1, 0, 1, 0)\n"
        "lv = R.call_packed(\"flatten_matrix\", x)\n"
        "_ = check_tensor_info(lv, 1, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(lv, shape_heap, 1, 3, 1, ctx)\n"
        "return lv\n");
}

TEST_CASE("shape_lower: test_symbolic_shape_multiple_function, slots per function") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    {
      const ir::sym k = m.sym("m"), n = m.sym("n");
      auto f = m.function("fn1", {{"A", ir::tensor_info({k, n}, f32)}});
      f.ret(f.shape({n, k}));
    }
    {
      const ir::sym n = m.sym("n"), k = m.sym("m");
      auto f = m.function("fn2", {{"A", ir::tensor_info({n, k}, f32)}});
      f.ret(f.shape({n, k}));
    }
  }));
  CHECK(contains(lowered(a, 0), "_ = match_shape(A, shape_heap, 2, 1, 0, 1, 1, ctx)\n"
                                "lv = make_shape(shape_heap, 2, 1, 1, 1, 0)\n"));
  CHECK(contains(lowered(a, 1), "_ = match_shape(A, shape_heap, 2, 1, 0, 1, 1, ctx)\n"
                                "lv = make_shape(shape_heap, 2, 1, 0, 1, 1)\n"));
}

TEST_CASE("shape_lower: test_check_lifted_weights and test_check_weights_with_dynamic_shape (num_input)") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    {
      auto f = m.function("main", {{"x", ir::tensor_info({16, 16}, f32)}, {"param_0", ir::tensor_info({16, 16}, f32)}});
      f.num_input(1);
      f.ret(f.param(0));
    }
    {
      auto f = m.function("main_transform_params", {{"params", ir::tuple_info({ir::tensor_info({16, 16}, f32)})}});
      f.ret(f.param(0));
    }
  }));
  CHECK(lowered(a, 0) ==
        "shape_heap = R.null_value()\n"
        "_ = check_tensor_info(x, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(x, shape_heap, 2, 0, 16, 0, 16, ctx)\n"
        "return x\n");
  CHECK(lowered(a, 1) ==
        "shape_heap = R.null_value()\n"
        "_ = check_tuple_info(params, 1, ctx)\n"
        "lv = params[0]\n"
        "_ = check_tensor_info(lv, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(lv, shape_heap, 2, 0, 16, 0, 16, ctx)\n"
        "return params\n");
  // A static weight in a tuple is skipped (no params[0] at all), a dynamic one is checked.
  const ir::module b = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n");
    auto f = m.function("main", {{"x", ir::tensor_info({16, 16}, f32)},
                                 {"params", ir::tuple_info({ir::tensor_info({16, 16}, f32), ir::tensor_info({n}, f32)})},
                                 {"w", ir::tensor_info(f32)}});  // unknown shape: skipped (apache/tvm#20335)
    f.num_input(1);
    f.ret(f.param(0));
  }));
  const std::string text = lowered(b);
  CHECK_FALSE(contains(text, "params[0]"));
  const std::size_t at = text.find(" = params[1]\n");
  REQUIRE(at != std::string::npos);
  const std::string p1 = text.substr(text.rfind('\n', at) + 1, at - text.rfind('\n', at) - 1);
  CHECK(text ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (1,))\n"
        "_ = check_tensor_info(x, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = check_tuple_info(params, 2, ctx)\n" +
            p1 + " = params[1]\n" +
            "_ = check_tensor_info(" + p1 + ", 1, R.dtype(\"float32\"), ctx)\n"
            "_ = match_shape(x, shape_heap, 2, 0, 16, 0, 16, ctx)\n"
            "_ = match_shape(" + p1 + ", shape_heap, 1, 1, 0, ctx)\n"
            "return x\n");
}

TEST_CASE("shape_lower: test_update_symbolic_vars_in_match_cast_rhs, prim values") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n"), k = m.sym("m");
    auto f = m.function("main", {{"arg", ir::prim_info(i64, n)}});
    f.match_cast(f.shape({n}), ir::shape_info({k}));
    f.ret(ir::prim(k));
  }));
  CHECK(lowered(a) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (2,))\n"
        "_ = check_prim_value_info(arg, R.dtype(\"int64\"), ctx)\n"
        "_ = match_prim_value(arg, shape_heap, 1, 0, ctx)\n"
        "lv = make_shape(shape_heap, 1, 1, 0)\n"
        "_ = match_shape(lv, shape_heap, 1, 1, 1, ctx)\n"
        "lv1 = R.match_cast(lv, R.Shape([m]))\n"
        "lv2 = make_prim_value(shape_heap, 1, 1)\n"
        "return lv2\n");
  CHECK(strings(a)[2] == "ErrorContext(match_cast, struct_info=R.Shape([m])) ");
}

TEST_CASE("shape_lower: composites need temporaries, conditions are computed, constants stay") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n"), k = m.sym("m");
    auto f = m.function("main", {{"x", ir::tensor_info({n, k}, f32)}});
    const ir::var x = f.param(0);
    const ir::var s = f.shape({(n + 1) * (k + 1), 3});
    const ir::var c = f.if_(
        ir::prim(n > 4), [&](ir::block_builder& b) { return b.call_packed("big", {x, ir::prim(7), ir::shape_arg({2, 3})}, ir::object_info()); },
        [&](ir::block_builder&) { return s; });
    f.ret(c);
  }));
  // Slots n:0 m:1 (n+1)*(m+1):2 n>4:3, then two temporaries (4, 5) for n + 1 and m + 1.
  CHECK(lowered(a) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (6,))\n"
        "_ = check_tensor_info(x, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(x, shape_heap, 2, 1, 0, 1, 1, ctx)\n"
        "_ = shape_arith(shape_heap, 11, 3, 1, 0, 0, 4, 0, 4, 1, 0, 0, 1, 0, 5, 1, 1, 0, 1, 2, 2, 1, 4, 1, 5)\n"
        "lv = make_shape(shape_heap, 2, 1, 2, 0, 3)\n"
        "lv3 = make_prim_value(shape_heap, 1, 3)\n"
        "if lv3:\n"
        "lv1 = R.call_packed(\"big\", x, 7, R.shape([2, 3]))\n"
        "lv2 = lv1\n"
        "else:\n"
        "lv2 = lv\n"
        "return lv2\n");
}

TEST_CASE("shape_lower: compile-time errors") {
  // A tuple of the wrong size.
  ir::pass_output out = ir::pass::try_shape_lower(build([](ir::module_builder& m) {
    auto f = m.function("main", {{"x", ir::tuple_info({ir::object_info(), ir::object_info()})}});
    f.ret(f.match_cast(f.param(0), ir::tuple_info({ir::object_info(), ir::object_info(), ir::object_info()})));
  }));
  CHECK_FALSE(out.ok());
  CHECK(out.message.view() == "function 'main': TypeError: ErrorContext(match_cast, struct_info=R.Tuple(R.Object, "
                              "R.Object, R.Object))  during match-cast we find tuple size mismatch (2 fields, annotation 3)");
  // Modules the checker rejects (they skip it here): a value used before its variable is matched,
  // and a composite whose variable is never defined.
  ir::module early = build([](ir::module_builder& m) {
    const ir::sym k = m.sym("k");
    auto f = m.function("main", {{"x", ir::object_info()}});
    f.match_cast(f.param(0), ir::shape_info({k}));
    f.ret(f.prim_value(k * 2));
  });
  auto& bs = early.funcs[0].body.blocks[0].bindings;
  std::swap(bs[0], bs[1]);
  out = ir::pass::try_shape_lower(early);
  CHECK_FALSE(out.ok());
  CHECK(out.message.view() == "function 'main': PrimExpr k * 2 has not been computed where it is used; its variables "
                              "must be matched (by a parameter or a match_cast) before this point");
  ir::module undefined = build([](ir::module_builder& m) {
    const ir::sym k = m.sym("k");
    auto f = m.function("main", {{"x", ir::object_info()}});
    f.match_cast(f.param(0), ir::shape_info({k}));
    f.ret(f.prim_value(k * 2));
  });
  undefined.funcs[0].body.blocks[0].bindings.erase(undefined.funcs[0].body.blocks[0].bindings.begin());
  out = ir::pass::try_shape_lower(undefined);
  CHECK_FALSE(out.ok());
  CHECK(out.message.view() == "function 'main': symbolic variable 'k' is not defined in the function but is used by k * 2");
  bool threw = false;
  try {
    (void)ir::pass::shape_lower(undefined);
  } catch (const rv::error& e) {
    threw = e.kind() == rv::error_kind::value;
  }
  CHECK(threw);
}

TEST_CASE("shape_lower: the return check skips what the value's info proves; branches match on their own") {
  const ir::module a = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n"), k = m.sym("m");
    auto f = m.function("main", {{"x", ir::tensor_info({n, k}, f32)}});
    f.ret(f.param(0), ir::tensor_info({k, n}, f32));
  }));
  CHECK(lowered(a) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (2,))\n"
        "_ = check_tensor_info(x, 2, R.dtype(\"float32\"), ctx)\n"
        "_ = match_shape(x, shape_heap, 2, 1, 0, 1, 1, ctx)\n"
        "_ = match_shape(x, shape_heap, 2, 3, 1, 3, 0, ctx)\n"
        "return x\n");
  CHECK(strings(a).back() == "ErrorContext(fn=main, loc=return, annotation=R.Tensor((m, n), dtype=\"float32\")) ");
  // k is stored in each branch (the reference would load it, unset, in the second one).
  const ir::module b = ir::pass::shape_lower(build([](ir::module_builder& m) {
    const ir::sym k = m.sym("k");
    auto f = m.function("main", {{"x", ir::object_info()}, {"c", ir::object_info()}});
    const ir::var x = f.param(0);
    const auto branch = [&](ir::block_builder& bb) {
      return bb.call_packed("use", {bb.match_cast(x, ir::shape_info({k}))}, ir::object_info());
    };
    f.ret(f.if_(f.param(1), branch, branch));
  }));
  CHECK(lowered(b) ==
        "shape_heap = R.call_builtin_with_ctx(\"vm.builtin.alloc_shape_heap\", (1,))\n"
        "if c:\n"
        "_ = check_shape_info(x, 1, ctx)\n"
        "_ = match_shape(x, shape_heap, 1, 1, 0, ctx)\n"
        "lv = R.match_cast(x, R.Shape([k]))\n"
        "lv1 = R.call_packed(\"use\", lv)\n"
        "lv4 = lv1\n"
        "else:\n"
        "_ = check_shape_info(x, 1, ctx)\n"
        "_ = match_shape(x, shape_heap, 1, 1, 0, ctx)\n"
        "lv2 = R.match_cast(x, R.Shape([k]))\n"
        "lv3 = R.call_packed(\"use\", lv2)\n"
        "lv4 = lv3\n"
        "return lv4\n");
}

TEST_CASE("shape_lower with reuse_shapes: a shape is made once, until the heap is written again") {
  const ir::module m = build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n"), k = m.sym("k");
    auto f = m.function("main", {{"x", ir::tensor_info({n, 2}, f32)}, {"y", ir::tensor_info(f32, 2)}});
    f.call_packed("use", {ir::shape_arg({n, 2}), ir::shape_arg({n, 2})});
    f.call_packed("use", {ir::shape_arg({n, 2}), ir::shape_arg({n + 1})});
    f.match_cast(f.param(1), ir::tensor_info({k, k + 1}, f32));  // writes the heap (k, then k + 1)
    f.call_packed("use", {ir::shape_arg({n, 2}), ir::shape_arg({n + 1})});
    f.ret(f.param(0));
  });
  // Slots n:0 n+1:1 k:2 k+1:3.
  const std::string reference = lowered(ir::pass::shape_lower(m));
  CHECK(contains(reference, "lv4 = make_shape(shape_heap, 2, 1, 0, 0, 2)\n"
                            "lv5 = make_shape(shape_heap, 2, 1, 0, 0, 2)\n"
                            "_ = R.call_packed(\"use\", lv4, lv5)\n"));
  const std::string reused = lowered(ir::pass::shape_lower(m, true));
  CHECK(contains(reused, "lv4 = make_shape(shape_heap, 2, 1, 0, 0, 2)\n"
                         "_ = R.call_packed(\"use\", lv4, lv4)\n"
                         "lv5 = make_shape(shape_heap, 1, 1, 1)\n"
                         "_ = R.call_packed(\"use\", lv4, lv5)\n"));
  // After the match_cast's match_shape and shape_arith, both shapes are made again.
  const std::size_t cast = reused.find("R.match_cast(y");
  REQUIRE(cast != std::string::npos);
  CHECK(contains(reused.substr(cast), "lv6 = make_shape(shape_heap, 2, 1, 0, 0, 2)\n"
                                      "lv7 = make_shape(shape_heap, 1, 1, 1)\n"
                                      "_ = R.call_packed(\"use\", lv6, lv7)\n"));
  std::size_t made = 0;
  for (std::size_t i = reused.find("make_shape("); i != std::string::npos; i = reused.find("make_shape(", i + 1)) ++made;
  CHECK(made == 4);  // the reference's order makes 6
  rv::detail::text err;
  CHECK(ir::check(ir::pass::shape_lower(m, true), err));
}

TEST_CASE("shape_lower with reuse_shapes: what a branch makes stays in the branch") {
  const ir::module m = build([](ir::module_builder& m) {
    const ir::sym n = m.sym("n");
    auto f = m.function("main", {{"x", ir::tensor_info({n, 2}, f32)}, {"c", ir::prim_info(rv::dtype::bool_())}});
    f.call_packed("use", {ir::shape_arg({n, 2})});
    f.if_(
        f.param(1),
        [&](ir::block_builder& b) {
          b.call_packed("use", {ir::shape_arg({n, 2})});  // made before the if: used again
          return b.call_packed("use", {ir::shape_arg({n, 3})});
        },
        [&](ir::block_builder& b) {
          return b.call_packed("use", {ir::shape_arg({n, 3})});  // made in the other branch: made here too
        });
    f.call_packed("use", {ir::shape_arg({n, 2})});  // after an if: made again
    f.ret(f.param(0));
  });
  const std::string reused = lowered(ir::pass::shape_lower(m, true));
  std::size_t made = 0;
  for (std::size_t i = reused.find("make_shape("); i != std::string::npos; i = reused.find("make_shape(", i + 1)) ++made;
  CHECK(made == 4);
  rv::detail::text err;
  CHECK(ir::check(ir::pass::shape_lower(m, true), err));
}
