// SPDX-License-Identifier: Apache-2.0
// ir::pass::lower_runtime_builtin alone (LowerRuntimeBuiltin, docs/lowering.md): reshape,
// shape_of, make_closure and invoke_closure become VM builtins, the memory operators become the
// R.vm ones (alloc_storage's arguments reordered to (size, dev, "uint8", scope)), kills become
// R.vm.kill_object, and an R.builtin.alloc_tensor still present is an error.
#include <doctest/doctest.h>

#include <relaxvm/lower.hpp>
#include <string>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
std::string body(const ir::module& m, std::size_t fn = 0) {
  rv::detail::text t;
  ir::module one;
  one.syms = m.syms;
  one.constants = m.constants;
  one.funcs.push_back(m.funcs[fn]);
  ir::print(one, t);
  const std::string s(t.view());
  return s.substr(s.find(":\n") + 2);
}
}  // namespace

TEST_CASE("lower_runtime_builtin: memory operators, argument order and kills") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), k = m.sym("m");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({k, n}, f32)}});
    const ir::var a = f.call_dps("exp", {f.param(0)}, ir::tensor_info({k, n}, f32));
    f.ret(f.call_packed("sum", {a}, ir::tensor_info({}, f32)));
  }
  const ir::module before = ir::pass::kill_after_last_use(
      ir::pass::lower_alloc_tensor(ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(m.get()))));
  REQUIRE(contains(body(before), "R.memory.alloc_storage(R.shape([4 * m * n]), R.prim_value(0), R.str(\"global\"), "
                                 "R.dtype(\"uint8\"))"));
  const ir::module after = ir::pass::lower_runtime_builtin(before);
  CHECK(body(after) ==
        "    storage: R.Object = R.vm.alloc_storage(R.shape([4 * m * n]), R.prim_value(0), R.dtype(\"uint8\"), "
        "R.str(\"global\"))\n"
        "    alloc: R.Tensor((m, n), dtype=\"float32\") = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([m, n]), "
        "R.dtype(\"float32\"))\n"
        "    _ = R.vm.kill_object(storage)\n"
        "    _ = R.call_packed(\"exp\", x, alloc)\n"
        "    lv1: R.Tensor((), dtype=\"float32\") = R.call_packed(\"sum\", alloc, sinfo_args=(R.Tensor((), dtype=\"float32\"),))\n"
        "    _ = R.vm.kill_object(alloc)\n"
        "    return lv1\n");
  const auto& bs = after.funcs[0].body.blocks[0].bindings;
  CHECK(bs[0].value.kind == ir::expr_kind::vm_alloc_storage);
  CHECK(bs[1].value.kind == ir::expr_kind::vm_alloc_tensor);
  CHECK(bs[2].value.kind == ir::expr_kind::vm_kill_object);
  CHECK(bs[5].value.kind == ir::expr_kind::vm_kill_object);
  // The reference's test_vm_builtin_lower_mem_alloc_storage: a storage whose dtype is not uint8
  // (as StaticPlanBlockMemory writes them) becomes uint8 all the same.
  ir::module planned = before;
  planned.funcs[0].body.blocks[0].bindings[0].value.args[3] = ir::leaf::of_dtype(f32);
  CHECK(contains(body(ir::pass::lower_runtime_builtin(planned)),
                 "R.vm.alloc_storage(R.shape([4 * m * n]), R.prim_value(0), R.dtype(\"uint8\"), R.str(\"global\"))"));
  // Nothing left to lower: a second run changes nothing.
  CHECK(ir::to_text(ir::pass::lower_runtime_builtin(after)) == ir::to_text(after));
}

TEST_CASE("lower_runtime_builtin: reshape, shape_of, closures, and what stays") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto g = m.function("lifted", {{"y", ir::tensor_info(f32)}, {"x", ir::tensor_info(f32)}});
    g.ret(g.call_packed("add", {g.param(0), g.param(1)}, ir::tensor_info(f32)));
  }
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, 2}, f32)}, {"s", ir::shape_info(1)}, {"c", ir::object_info()}});
    const ir::var x = f.param(0);
    const ir::var r = f.reshape(x, {n * 2});
    const ir::var r2 = f.reshape(r, f.param(1));  // the shape may be a variable (apache/tvm#17217)
    const ir::var s = f.shape_of(r2);
    const ir::var clo = f.make_closure("lifted", {x});
    const ir::var v = f.invoke_closure(clo, {r}, ir::tensor_info(f32));
    const ir::var w = f.if_(
        f.param(2), [&](ir::block_builder& b) { return b.shape_of(v); }, [&](ir::block_builder&) { return s; });
    f.ret(f.tuple({v, w, f.call("lifted", {x, x}, ir::tensor_info(f32))}));
  }
  const ir::module after = ir::pass::lower_runtime_builtin(ir::pass::to_non_dataflow(m.get()));
  CHECK(body(after, 1) ==
        "    lv: R.Tensor((n * 2,), dtype=\"float32\") = R.call_packed(\"vm.builtin.reshape\", x, R.shape([n * 2]), "
        "sinfo_args=(R.Tensor((n * 2,), dtype=\"float32\"),))\n"
        "    lv1: R.Tensor(dtype=\"float32\", ndim=1) = R.call_packed(\"vm.builtin.reshape\", lv, s, "
        "sinfo_args=(R.Tensor(dtype=\"float32\", ndim=1),))\n"
        "    lv2: R.Shape(ndim=1) = R.call_packed(\"vm.builtin.shape_of\", lv1, sinfo_args=(R.Shape(ndim=1),))\n"
        "    lv3: R.Callable = R.call_packed(\"vm.builtin.make_closure\", cls.lifted, x, sinfo_args=(R.Callable,))\n"
        "    lv4: R.Tensor(dtype=\"float32\") = R.call_builtin_with_ctx(\"vm.builtin.invoke_closure\", (lv3, lv), "
        "sinfo_args=(R.Tensor(dtype=\"float32\"),))\n"
        "    if c:\n"
        "        lv5: R.Shape(ndim=-1) = R.call_packed(\"vm.builtin.shape_of\", lv4, sinfo_args=(R.Shape(ndim=-1),))\n"
        "        lv6 = lv5\n"
        "    else:\n"
        "        lv6 = lv2\n"
        "    lv7: R.Tensor(dtype=\"float32\") = cls.lifted(x, x)\n"
        "    lv8: R.Tuple(R.Tensor(dtype=\"float32\"), R.Shape(ndim=-1), R.Tensor(dtype=\"float32\")) = (lv4, lv6, lv7)\n"
        "    return lv8\n");
  CHECK(body(after, 0) == body(m.get(), 0));  // a plain packed call: unchanged
}

TEST_CASE("lower_runtime_builtin: errors") {
  ir::module_builder m;
  {
    auto f = m.function("main", {{"x", ir::tensor_info({4}, f32)}});
    f.ret(f.call_dps("exp", {f.param(0)}, ir::tensor_info({4}, f32)));
  }
  // R.builtin.alloc_tensor must have been lowered first.
  const ir::module rewritten = ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(m.get()));
  ir::pass_output out = ir::pass::try_lower_runtime_builtin(rewritten);
  CHECK_FALSE(out.ok());
  CHECK(out.message.view() == "function 'main': R.builtin.alloc_tensor should have been lowered earlier using the "
                              "LowerAllocTensor pass (ir::pass::lower_alloc_tensor)");
  bool threw = false;
  try {
    (void)ir::pass::lower_runtime_builtin(rewritten);
  } catch (const rv::error& e) {
    threw = true;
    CHECK(e.kind() == rv::error_kind::value);
    CHECK(std::string(e.message()) == std::string(out.message.view()));
  }
  CHECK(threw);
  // A reshape whose shape is not a shape.
  ir::module_builder m2;
  {
    auto f = m2.function("main", {{"x", ir::tensor_info({4}, f32)}, {"o", ir::object_info()}});
    f.ret(f.reshape(f.param(0), f.param(1)));
  }
  out = ir::pass::try_lower_runtime_builtin(m2.get());
  CHECK_FALSE(out.ok());
  CHECK(out.message.view() == "function 'main': TypeError: VMBuiltinLower expects the shape arg of R.reshape to be a "
                              "ShapeExpr or VarNode bound to a ShapeExpr");
}
