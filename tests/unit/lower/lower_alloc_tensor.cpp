// SPDX-License-Identifier: Apache-2.0
// ir::pass::lower_alloc_tensor alone (LowerAllocTensor, docs/lowering.md): each
// R.builtin.alloc_tensor(shape, dtype, dev, scope) becomes R.memory.alloc_storage of
// bytes(dtype) * d0 * d1 ... uint8 (symbolic sizes stay symbolic) and R.memory.alloc_tensor at 0.
#include <doctest/doctest.h>

#include <relaxvm/lower.hpp>
#include <string>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// call_tir_rewrite(to_non_dataflow(m)): the pass's usual input.
ir::module rewritten(const ir::module_builder& m) { return ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(m.get())); }
}  // namespace

TEST_CASE("lower_alloc_tensor: test_basic, 16x32 float32 is 2048 bytes") {
  ir::module_builder m;
  {
    auto f = m.function("main", {});
    f.ret(f.call_dps("fill", {}, ir::tensor_info({16, 32}, f32)));
  }
  const ir::module after = ir::pass::lower_alloc_tensor(rewritten(m));
  CHECK(ir::to_text(after) ==
        "@R.function\n"
        "def main():\n"
        "    storage: R.Object = R.memory.alloc_storage(R.shape([2048]), R.prim_value(0), R.str(\"global\"), "
        "R.dtype(\"uint8\"))\n"
        "    alloc: R.Tensor((16, 32), dtype=\"float32\") = R.memory.alloc_tensor(storage, R.prim_value(0), "
        "R.shape([16, 32]), R.dtype(\"float32\"))\n"
        "    _ = R.call_packed(\"fill\", alloc)\n"
        "    lv: R.Tensor((16, 32), dtype=\"float32\") = alloc\n"
        "    return lv\n");
  // The tensor keeps the alloc's variable; the storage is a new one.
  const auto& bs = after.funcs[0].body.blocks[0].bindings;
  REQUIRE(bs.size() == 4);
  CHECK(bs[0].value.kind == ir::expr_kind::mem_alloc_storage);
  CHECK(bs[1].value.kind == ir::expr_kind::mem_alloc_tensor);
  CHECK(after.funcs[0].var(bs[1].var).nm.view() == "alloc");
  CHECK(bs[1].value.args[0].index == bs[0].var);
  rv::detail::text err;
  CHECK(ir::check(after, err));
}

TEST_CASE("lower_alloc_tensor: sizes per dtype, symbolic dimensions stay symbolic") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), k = m.sym("k");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, k}, f32)}});
    const ir::var a = f.call_dps("a", {f.param(0)}, ir::tensor_info({n, 32}, f32));
    const ir::var b = f.call_dps("b", {a}, ir::tensor_info({k, n}, rv::dtype::float16()));
    const ir::var c = f.call_dps("c", {b}, ir::tensor_info({3, 5}, rv::dtype::int8()));
    const ir::var d = f.call_dps("d", {c}, ir::tensor_info({n * 2 + 1}, rv::dtype::int64()));
    const ir::var e = f.call_dps("e", {d}, ir::tensor_info({}, rv::dtype::bool_()));
    f.ret(f.tuple({a, b, c, d, e}));
  }
  const std::string text = ir::to_text(ir::pass::lower_alloc_tensor(rewritten(m)));
  const std::string tail = "), R.prim_value(0), R.str(\"global\"), R.dtype(\"uint8\"))\n";
  CHECK(contains(text, "storage: R.Object = R.memory.alloc_storage(R.shape([4 * n * 32]" + tail));
  CHECK(contains(text, "storage1: R.Object = R.memory.alloc_storage(R.shape([2 * k * n]" + tail));
  CHECK(contains(text, "storage2: R.Object = R.memory.alloc_storage(R.shape([15]" + tail));
  CHECK(contains(text, "storage3: R.Object = R.memory.alloc_storage(R.shape([8 * (n * 2 + 1)]" + tail));
  CHECK(contains(text, "storage4: R.Object = R.memory.alloc_storage(R.shape([1]" + tail));
  // The tensors keep their symbolic shapes.
  CHECK(contains(text, "alloc: R.Tensor((n, 32), dtype=\"float32\") = R.memory.alloc_tensor(storage, R.prim_value(0), "
                       "R.shape([n, 32]), R.dtype(\"float32\"))\n"));
  CHECK(contains(text, "alloc3: R.Tensor((n * 2 + 1,), dtype=\"int64\") = R.memory.alloc_tensor(storage3, "
                       "R.prim_value(0), R.shape([n * 2 + 1]), R.dtype(\"int64\"))\n"));
  CHECK_FALSE(contains(text, "R.builtin.alloc_tensor"));
}

TEST_CASE("lower_alloc_tensor: the shape may be a variable holding a shape of known values") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
    const ir::var s = f.rename(f.shape({n, 3}), "s");
    f.ret(f.call_dps("k", {f.param(0), s}, ir::tensor_info({n, 3}, f32)));
  }
  ir::module mod = rewritten(m);
  ir::binding& alloc = mod.funcs[0].body.blocks[0].bindings[1];
  REQUIRE(alloc.value.kind == ir::expr_kind::builtin_alloc_tensor);
  alloc.value.args[0] = ir::leaf::of_var(mod.funcs[0].body.blocks[0].bindings[0].var);
  const std::string text = ir::to_text(ir::pass::lower_alloc_tensor(mod));
  CHECK(contains(text, "storage: R.Object = R.memory.alloc_storage(R.shape([4 * n * 3]), R.prim_value(0), "
                       "R.str(\"global\"), R.dtype(\"uint8\"))\n"
                       "    alloc: R.Tensor((n, 3), dtype=\"float32\") = R.memory.alloc_tensor(storage, R.prim_value(0), "
                       "s, R.dtype(\"float32\"))\n"));
}

TEST_CASE("lower_alloc_tensor: a malformed alloc_tensor is an error") {
  const std::string message = "function 'main': R.builtin.alloc_tensor should have four arguments, [shape, dtype, "
                              "runtime_device_index, storage_scope], with a shape of known values";
  ir::module_builder m;
  {
    auto f = m.function("main", {{"x", ir::tensor_info({4}, f32)}, {"s", ir::shape_info(1)}});
    const ir::var a = f.call_dps("a", {f.param(0)}, ir::tensor_info({4}, f32));
    f.ret(f.call_dps("b", {a}, ir::tensor_info({4}, f32)));
  }
  const ir::module good = rewritten(m);
  const auto allocs = [](ir::module& mod, auto&& edit) {
    for (ir::binding& b : mod.funcs[0].body.blocks[0].bindings)
      if (b.value.kind == ir::expr_kind::builtin_alloc_tensor) edit(b.value.args);
  };
  // A shape variable of unknown values (parameter s: R.Shape(ndim=1)).
  ir::module mod = good;
  allocs(mod, [](std::vector<ir::leaf>& args) { args[0] = ir::leaf::of_var(1); });
  ir::pass_output out = ir::pass::try_lower_alloc_tensor(mod);
  CHECK_FALSE(out.ok());
  CHECK(out.message.view() == message);
  // The throwing form.
  rv::result<ir::module> r = ir::detail::to_result(ir::pass::try_lower_alloc_tensor(mod));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::value);
  CHECK(r.error().message() == message);
  // Three arguments in one allocation.
  mod = good;
  mod.funcs[0].body.blocks[0].bindings[0].value.args.pop_back();
  out = ir::pass::try_lower_alloc_tensor(mod);
  CHECK_FALSE(out.ok());
  CHECK(out.message.view() == message);
}

// Last in the file: after a first error the pass goes on reading a[1..3] of the next malformed
// alloc_tensor (passes.hpp, try_lower_alloc_tensor), out of bounds: AddressSanitizer reports it,
// and without it the test crashes.
TEST_CASE("lower_alloc_tensor: two malformed alloc_tensors, only the first is reported") {
  ir::module_builder m;
  {
    auto f = m.function("main", {{"x", ir::tensor_info({4}, f32)}});
    const ir::var a = f.call_dps("a", {f.param(0)}, ir::tensor_info({4}, f32));
    f.ret(f.call_dps("b", {a}, ir::tensor_info({4}, f32)));
  }
  ir::module mod = rewritten(m);
  for (ir::binding& b : mod.funcs[0].body.blocks[0].bindings)
    if (b.value.kind == ir::expr_kind::builtin_alloc_tensor) {
      b.value.args.resize(3);
      b.value.args.shrink_to_fit();
    }
  const ir::pass_output out = ir::pass::try_lower_alloc_tensor(mod);
  CHECK_FALSE(out.ok());
  CHECK(out.message.view() == "function 'main': R.builtin.alloc_tensor should have four arguments, [shape, dtype, "
                              "runtime_device_index, storage_scope], with a shape of known values");
}
