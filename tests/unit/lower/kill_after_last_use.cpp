// SPDX-License-Identifier: Apache-2.0
// ir::pass::kill_after_last_use alone (KillAfterLastUse, docs/lowering.md):
// trivial var-to-var bindings are dropped, then kill_tensor / kill_storage / kill_object follow
// each variable's last use; parameters, returned values, constants, shapes, prim values, functions,
// void results, the shape heap and values already killed are never killed, and the pass is
// idempotent.
#include <doctest/doctest.h>

#include <relaxvm/lower.hpp>
#include <string>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t i = s.find(part); i != std::string::npos; i = s.find(part, i + 1)) ++n;
  return n;
}

// Inserts `name = source` (a trivial binding) at position `at` of main's only block.
std::int32_t alias(ir::module& m, std::size_t at, std::int32_t source, std::string_view name) {
  ir::function& f = m.funcs[0];
  const std::int32_t v = f.add_var(name, f.var(source).info);
  ir::binding b;
  b.var = v;
  b.value.args.push_back(ir::leaf::of_var(source));
  auto& bs = f.body.blocks[0].bindings;
  bs.insert(bs.begin() + static_cast<std::ptrdiff_t>(at), b);
  return v;
}

// The function body's lines, without the header (from the first binding on).
std::string body(const ir::module& m) {
  const std::string t = ir::to_text(m);
  return t.substr(t.find(":\n") + 2);
}
}  // namespace

TEST_CASE("kill_after_last_use: test_basic, storage killed after its last alloc_tensor, the tensor after its last use") {
  ir::module_builder m;
  const auto t = ir::tensor_info({4}, f32);
  {
    auto f = m.function("main", {{"x", t}});
    const ir::var y = f.call_dps("fill", {}, t);
    f.call_packed("add_tensors", {f.param(0), y});
    f.ret(f.rename(f.call_packed("add", {f.param(0), y}, t), "z"));
  }
  const ir::module before =
      ir::pass::lower_alloc_tensor(ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(m.get())));
  const ir::module after = ir::pass::kill_after_last_use(before);
  CHECK(body(after) ==
        "    storage: R.Object = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str(\"global\"), R.dtype(\"uint8\"))\n"
        "    alloc: R.Tensor((4,), dtype=\"float32\") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([4]), "
        "R.dtype(\"float32\"))\n"
        "    _ = R.memory.kill_storage(storage)\n"
        "    _ = R.call_packed(\"fill\", alloc)\n"
        "    _ = R.call_packed(\"add_tensors\", x, alloc)\n"
        "    z: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"add\", x, alloc, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "    _ = R.memory.kill_tensor(alloc)\n"
        "    return z\n");
  rv::detail::text err;
  CHECK(ir::check(after, err));
  // Idempotent: a second run gives the identical module text.
  CHECK(ir::to_text(ir::pass::kill_after_last_use(after)) == ir::to_text(after));
}

TEST_CASE("kill_after_last_use: test_track_usage_across_trivial_rebindings") {
  ir::module_builder m;
  const auto t = ir::tensor_info({4}, f32);
  {
    auto f = m.function("main", {{"x", t}});
    const ir::var a = f.call_packed("make", {f.param(0)}, t);
    f.call_packed("use", {a});
    f.ret(f.call_packed("use2", {f.param(0)}, t));
  }
  ir::module mod = m.get();
  // main(x) { a = make(x); y = a; w = y; use(w); r = use2(x); return r }
  const std::int32_t y = alias(mod, 1, 1, "y");
  const std::int32_t w = alias(mod, 2, y, "w");
  mod.funcs[0].body.blocks[0].bindings[3].value.args[0] = ir::leaf::of_var(w);
  rv::detail::text err;
  REQUIRE(ir::check(mod, err));
  const ir::module after = ir::pass::kill_after_last_use(mod);
  CHECK(body(after) ==
        "    lv: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"make\", x, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "    _ = R.call_packed(\"use\", lv)\n"
        "    _ = R.memory.kill_tensor(lv)\n"
        "    lv2: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"use2\", x, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "    return lv2\n");
  // A trivial binding that is returned: the source is returned, and not killed.
  ir::module ret = m.get();
  const std::int32_t r = alias(ret, 3, 3, "r");
  ret.funcs[0].body.result = ir::leaf::of_var(r);
  const std::string text = body(ir::pass::kill_after_last_use(ret));
  CHECK(contains(text, "    return lv2\n"));
  CHECK_FALSE(contains(text, "kill_tensor(lv2)"));
  CHECK_FALSE(contains(text, " r:"));
}

TEST_CASE("kill_after_last_use: what is never killed") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  const auto t = ir::tensor_info({n}, f32);
  {
    auto g = m.function("g", {{"a", ir::object_info()}});
    g.ret(g.param(0));
  }
  {
    auto f = m.function("main", {{"x", t}, {"o", ir::object_info()}});
    const ir::var c = f.rename(f.constant(f32, {1}, {0, 0, 128, 63}), "c");
    const ir::var s = f.rename(f.shape_of(f.param(0)), "s");
    const ir::var s2 = f.rename(f.shape({n, 2}), "s2");
    const ir::var p = f.rename(f.prim_value(n + 1), "p");
    const ir::var clo = f.rename(f.make_closure("g", {}), "clo");
    const ir::var heap = f.rename(f.call_builtin("vm.builtin.alloc_shape_heap", {ir::prim(2)}, ir::tensor_info(rv::dtype::int64(), 1)), "heap");
    f.call_packed("use", {f.param(0), f.param(1), c, s, s2, p, clo, heap});
    const ir::var r = f.rename(f.call_packed("r", {f.param(0)}, t), "r");
    f.ret(r);
  }
  const std::string text = ir::to_text(ir::pass::kill_after_last_use(m.get()));
  CHECK_FALSE(contains(text, "kill"));
}

TEST_CASE("kill_after_last_use: kinds and order of kills, tuples and objects") {
  ir::module_builder m;
  const auto t = ir::tensor_info({4}, f32);
  {
    auto f = m.function("main", {{"x", t}});
    const ir::var a = f.rename(f.call_packed("k", {f.param(0)}, t), "a");
    const ir::var o = f.rename(f.call_packed("obj", {}, ir::object_info()), "o");
    const ir::var tup = f.rename(f.tuple({a, f.param(0)}), "tup");
    const ir::var g = f.rename(f.get_item(tup, 0), "g");
    f.call_packed("use", {o, tup, g});  // the last use of three values: tensor first, then object kills
    f.ret(f.param(0));
  }
  CHECK(body(ir::pass::kill_after_last_use(m.get())) ==
        "    a: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"k\", x, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "    o: R.Object = R.call_packed(\"obj\", sinfo_args=(R.Object,))\n"
        "    tup: R.Tuple(R.Tensor((4,), dtype=\"float32\"), R.Tensor((4,), dtype=\"float32\")) = (a, x)\n"
        "    _ = R.memory.kill_tensor(a)\n"
        "    g: R.Tensor((4,), dtype=\"float32\") = tup[0]\n"
        "    _ = R.call_packed(\"use\", o, tup, g)\n"
        "    _ = R.memory.kill_tensor(g)\n"
        "    _ = R.vm.kill_object(o)\n"
        "    _ = R.vm.kill_object(tup)\n"
        "    return x\n");
}

TEST_CASE("kill_after_last_use: if branches, and kills after an if are kept") {
  ir::module_builder m;
  const auto t = ir::tensor_info({4}, f32);
  {
    auto f = m.function("main", {{"c", ir::prim_info(rv::dtype::bool_())}, {"x", t}});
    const ir::var a = f.rename(f.call_packed("k", {f.param(1)}, t), "a");  // used inside a branch only
    const ir::var b = f.rename(f.call_packed("k", {f.param(1)}, t), "b");  // used inside and after
    const ir::var w = f.rename(
        f.if_(
            f.param(0),
            [&](ir::block_builder& bb) {
              const ir::var in = bb.rename(bb.call_packed("k", {a, b}, t), "in");  // killed in the branch
              const ir::var out = bb.rename(bb.call_packed("k", {in}, t), "out");  // the branch's result
              return out;
            },
            [&](ir::block_builder&) { return b; }),
        "w");
    const ir::var after = f.rename(f.call_packed("k", {w, b}, t), "after");  // defined after the if
    const ir::var last = f.rename(f.call_packed("k", {after}, t), "last");
    f.ret(last);
  }
  const ir::module once = ir::pass::kill_after_last_use(m.get());
  CHECK(body(once) ==
        "    a: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"k\", x, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "    b: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"k\", x, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "    if c:\n"
        "        in: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"k\", a, b, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "        out: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"k\", in, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "        _ = R.memory.kill_tensor(in)\n"
        "        w = out\n"
        "    else:\n"
        "        w = b\n"
        "    _ = R.memory.kill_tensor(a)\n"
        "    after: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"k\", w, b, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "    _ = R.memory.kill_tensor(b)\n"  // kills of one kind: in order of definition
        "    _ = R.memory.kill_tensor(w)\n"
        "    last: R.Tensor((4,), dtype=\"float32\") = R.call_packed(\"k\", after, sinfo_args=(R.Tensor((4,), dtype=\"float32\"),))\n"
        "    _ = R.memory.kill_tensor(after)\n"
        "    return last\n");
  CHECK(ir::to_text(ir::pass::kill_after_last_use(once)) == ir::to_text(once));
  rv::detail::text err;
  CHECK(ir::check(once, err));
}

TEST_CASE("kill_after_last_use: idempotent after lowering, and the shape heap is never killed") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, 4}, f32)}});
    const ir::var a = f.call_dps("relu", {f.param(0)}, ir::tensor_info({n, 4}, f32));
    const ir::var b = f.call_dps("relu", {a}, ir::tensor_info({n, 4}, f32));
    f.ret(f.call_dps("relu", {b}, ir::tensor_info({n, 4}, f32)));
  }
  const ir::module lowered = ir::lower(m.get());
  const std::string text = ir::to_text(lowered);
  REQUIRE(contains(text, "shape_heap"));
  CHECK(count(text, "R.vm.kill_object(") == 5);  // three storages, two intermediate tensors
  const std::string again = ir::to_text(ir::pass::kill_after_last_use(lowered));
  CHECK_FALSE(contains(again, "kill_storage(shape_heap)"));
  CHECK_FALSE(contains(again, "kill_tensor(shape_heap)"));
  CHECK_FALSE(contains(again, "kill_object(shape_heap)"));
  CHECK(count(again, "kill") == count(text, "kill"));
  // Idempotent on the pass's own output, before runtime lowering.
  const ir::module killed = ir::pass::kill_after_last_use(
      ir::pass::lower_alloc_tensor(ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(m.get()))));
  CHECK(ir::to_text(ir::pass::kill_after_last_use(killed)) == ir::to_text(killed));
}
