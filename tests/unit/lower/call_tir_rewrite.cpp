// SPDX-License-Identifier: Apache-2.0
// ir::pass::call_tir_rewrite alone (CallTIRRewrite, docs/lowering.md): each call_dps output
// becomes an R.builtin.alloc_tensor, the call becomes a void packed call taking the outputs last,
// and the binding's variable is bound to the output (a tuple of them for several).
#include <doctest/doctest.h>

#include <relaxvm/lower.hpp>
#include <string>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("call_tir_rewrite: test_call_tir_rewrite, one output") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), mm = m.sym("m");
  {
    auto f = m.function("foo", {{"x", ir::tensor_info({mm, n}, f32)}});
    const ir::var gv0 = f.rename(f.call_dps("exp", {f.param(0)}, ir::tensor_info({mm, n}, f32)), "gv0");
    f.ret(gv0);
  }
  const ir::module before = ir::pass::to_non_dataflow(m.get());
  const ir::module after = ir::pass::call_tir_rewrite(before);
  CHECK(ir::to_text(after) ==
        "@R.function\n"
        "def foo(x: R.Tensor((m, n), dtype=\"float32\")):\n"
        "    alloc: R.Tensor((m, n), dtype=\"float32\") = R.builtin.alloc_tensor(R.shape([m, n]), R.dtype(\"float32\"), "
        "R.prim_value(0), R.str(\"global\"))\n"
        "    _ = R.call_packed(\"exp\", x, alloc)\n"
        "    gv0: R.Tensor((m, n), dtype=\"float32\") = alloc\n"
        "    return gv0\n");
  // The structure: the binding keeps its variable (same index), now a var-to-var binding.
  const ir::function& f = after.funcs[0];
  REQUIRE(f.body.blocks.size() == 1);
  const auto& bs = f.body.blocks[0].bindings;
  REQUIRE(bs.size() == 3);
  CHECK(bs[0].value.kind == ir::expr_kind::builtin_alloc_tensor);
  CHECK(bs[1].value.kind == ir::expr_kind::call_packed);
  CHECK(bs[1].value.callee.view() == "exp");
  CHECK(f.var(bs[1].var).info.is_void());
  CHECK(bs[2].var == before.funcs[0].body.blocks[0].bindings[0].var);
  CHECK(bs[2].value.kind == ir::expr_kind::leaf);
  CHECK(bs[2].value.args[0].index == bs[0].var);
  rv::detail::text err;
  CHECK(ir::check(after, err));
}

TEST_CASE("call_tir_rewrite: tuple outputs, several calls, branches, other bindings untouched") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  const auto t = ir::tensor_info({n, 2}, f32);
  {
    auto f = m.function("main", {{"x", t}, {"c", ir::prim_info(rv::dtype::bool_())}});
    const ir::var two = f.call_dps("split", {f.param(0), ir::prim(3)},
                                   ir::tuple_info({ir::tensor_info({n}, f32), ir::tensor_info({2, 3}, rv::dtype::int32())}));
    const ir::var s = f.shape_of(f.param(0));
    const ir::var w = f.if_(
        f.param(1), [&](ir::block_builder& b) { return b.call_dps("relu", {f.param(0)}, t); },
        [&](ir::block_builder&) { return f.param(0); });
    f.ret(f.tuple({two, s, w}));
  }
  const ir::module after = ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(m.get()));
  const std::string text = ir::to_text(after);
  CHECK(contains(text,
                 "    alloc: R.Tensor((n,), dtype=\"float32\") = R.builtin.alloc_tensor(R.shape([n]), R.dtype(\"float32\"), "
                 "R.prim_value(0), R.str(\"global\"))\n"
                 "    alloc1: R.Tensor((2, 3), dtype=\"int32\") = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype(\"int32\"), "
                 "R.prim_value(0), R.str(\"global\"))\n"
                 "    _ = R.call_packed(\"split\", x, R.prim_value(3), alloc, alloc1)\n"
                 "    lv: R.Tuple(R.Tensor((n,), dtype=\"float32\"), R.Tensor((2, 3), dtype=\"int32\")) = (alloc, alloc1)\n"
                 "    lv1: R.Shape([n, 2]) = R.shape_of(x)\n"
                 "    if c:\n"
                 "        alloc2: R.Tensor((n, 2), dtype=\"float32\") = R.builtin.alloc_tensor(R.shape([n, 2]), "
                 "R.dtype(\"float32\"), R.prim_value(0), R.str(\"global\"))\n"
                 "        _ = R.call_packed(\"relu\", x, alloc2)\n"
                 "        lv2: R.Tensor((n, 2), dtype=\"float32\") = alloc2\n"
                 "        lv3 = lv2\n"
                 "    else:\n"
                 "        lv3 = x\n"));
  CHECK_FALSE(contains(text, "call_dps_packed"));
  rv::detail::text err;
  CHECK(ir::check(after, err));
  // Nothing left to rewrite: a second run changes nothing.
  CHECK(ir::to_text(ir::pass::call_tir_rewrite(after)) == text);
}
