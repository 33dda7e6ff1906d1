// SPDX-License-Identifier: Apache-2.0
// ir::pass::to_non_dataflow alone (ToNonDataflow + RemovePurityChecking, docs/lowering.md):
// dataflow variables become ordinary ones, keeping their index, name and struct info, and the
// blocks of each sequence merge into one.
#include <doctest/doctest.h>

#include <relaxvm/lower.hpp>
#include <string>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();

// main(x): lv0 = k(x) outside; a dataflow block with lv1 (dataflow) and gv0 (output); lv3 = k(gv0).
ir::module mixed_blocks() {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  const auto t = ir::tensor_info({n}, f32);
  {
    auto f = m.function("main", {{"x", t}});
    const ir::var lv0 = f.call_packed("k", {f.param(0)}, t);
    ir::var gv0;
    {
      auto df = f.dataflow();
      const ir::var lv1 = f.call_dps("ops.exp", {lv0}, t);
      gv0 = f.rename(f.call_dps("ops.exp", {lv1}, t), "gv0");
      df.output(gv0);
    }
    f.ret(f.call_packed("k", {gv0}, t));
  }
  return m.get();
}
}  // namespace

TEST_CASE("to_non_dataflow: dataflow blocks become ordinary ones and adjacent blocks merge") {
  const ir::module before = mixed_blocks();
  REQUIRE(before.funcs[0].body.blocks.size() == 3);
  CHECK(before.funcs[0].var(2).dataflow);  // lv1
  const ir::module after = ir::pass::to_non_dataflow(before);
  const ir::function& f = after.funcs[0];
  REQUIRE(f.body.blocks.size() == 1);
  CHECK_FALSE(f.body.blocks[0].dataflow);
  CHECK(f.body.blocks[0].bindings.size() == 4);
  for (const ir::var_info& v : f.vars) CHECK_FALSE(v.dataflow);
  // The same variables: index, name and struct info unchanged.
  REQUIRE(f.vars.size() == before.funcs[0].vars.size());
  for (std::size_t i = 0; i < f.vars.size(); ++i) {
    CHECK(f.vars[i].nm == before.funcs[0].vars[i].nm);
    CHECK(ir::same_info(after.syms, f.vars[i].info, before.funcs[0].vars[i].info));
  }
  CHECK(f.body.blocks[0].bindings[1].var == 2);
  CHECK(ir::to_text(after) ==
        "@R.function\n"
        "def main(x: R.Tensor((n,), dtype=\"float32\")):\n"
        "    lv: R.Tensor((n,), dtype=\"float32\") = R.call_packed(\"k\", x, sinfo_args=(R.Tensor((n,), dtype=\"float32\"),))\n"
        "    lv1: R.Tensor((n,), dtype=\"float32\") = R.call_dps_packed(\"ops.exp\", (lv,), out_sinfo=R.Tensor((n,), dtype=\"float32\"))\n"
        "    gv0: R.Tensor((n,), dtype=\"float32\") = R.call_dps_packed(\"ops.exp\", (lv1,), out_sinfo=R.Tensor((n,), dtype=\"float32\"))\n"
        "    lv3: R.Tensor((n,), dtype=\"float32\") = R.call_packed(\"k\", gv0, sinfo_args=(R.Tensor((n,), dtype=\"float32\"),))\n"
        "    return lv3\n");
  // Still well formed, and a second run changes nothing.
  rv::detail::text err;
  CHECK(ir::check(after, err));
  CHECK(ir::to_text(ir::pass::to_non_dataflow(after)) == ir::to_text(after));
}

TEST_CASE("to_non_dataflow: two dataflow blocks in a row, if branches, and an empty body") {
  ir::module_builder m;
  const auto t = ir::tensor_info({4}, f32);
  {
    auto f = m.function("main", {{"c", ir::prim_info(rv::dtype::bool_())}, {"x", t}});
    ir::var a, b;
    {
      auto df = f.dataflow();
      a = f.call_packed("k", {f.param(1)}, t);
      df.output(a);
    }
    {
      auto df = f.dataflow();
      b = f.call_packed("k", {a}, t);
      df.output(b);
    }
    f.ret(f.if_(
        f.param(0), [&](ir::block_builder& bb) { return bb.call_packed("k", {b}, t); }, [&](ir::block_builder&) { return a; }));
  }
  {
    auto g = m.function("id", {{"x", ir::object_info()}});
    g.ret(g.param(0));
  }
  ir::module before = m.get();
  REQUIRE(before.funcs[0].body.blocks.size() == 3);  // df, df, the if
  const ir::module after = ir::pass::to_non_dataflow(before);
  REQUIRE(after.funcs[0].body.blocks.size() == 1);
  const ir::block& blk = after.funcs[0].body.blocks[0];
  REQUIRE(blk.bindings.size() == 3);
  CHECK(blk.bindings[2].value.kind == ir::expr_kind::if_);
  CHECK(blk.bindings[2].value.branches[0].blocks.size() == 1);
  CHECK(blk.bindings[2].value.branches[1].blocks.empty());  // a branch that only returns
  CHECK(after.funcs[1].body.blocks.empty());
  CHECK(after.funcs[1].body.result.is_var());
  const std::string text = ir::to_text(after);
  CHECK(text.find("R.dataflow") == std::string::npos);
  CHECK(text.find("R.output") == std::string::npos);
}
