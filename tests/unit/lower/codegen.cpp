// SPDX-License-Identifier: Apache-2.0
// ir::codegen (VMCodeGen, docs/lowering.md) on lowered modules, built by hand or by
// ir::build: register conventions, copies, kills, immediates and the constant pool, closures, if
// layout, and the errors for modules that are not lowered.
#include <doctest/doctest.h>

#include <relaxvm/io/executable.hpp>
#include <relaxvm/io/text.hpp>
#include <relaxvm/lower.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();

// A lowered function written binding by binding.
struct hand {
  ir::module m;
  explicit hand(std::initializer_list<std::string_view> params = {}) {
    m.funcs.emplace_back();
    m.funcs[0].nm = "main";
    for (std::string_view p : params) m.funcs[0].add_param(p, ir::object_info());
    m.funcs[0].body.blocks.emplace_back();
  }
  std::int32_t bind(std::string_view name, ir::struct_info info, ir::expr_kind k, std::vector<ir::leaf> args,
                    std::string_view callee = {}) {
    ir::binding b;
    b.var = m.funcs[0].add_var(name, static_cast<ir::struct_info&&>(info));
    b.value.kind = k;
    b.value.callee = callee;
    b.value.args = static_cast<std::vector<ir::leaf>&&>(args);
    m.funcs[0].body.blocks[0].bindings.push_back(b);
    return b.var;
  }
  std::int32_t call(std::string_view fn, std::vector<ir::leaf> args, ir::struct_info info = ir::void_info()) {
    return bind(info.is_void() ? "_" : "lv", info, ir::expr_kind::call_packed, static_cast<std::vector<ir::leaf>&&>(args), fn);
  }
  void ret(ir::leaf l) { m.funcs[0].body.result = static_cast<ir::leaf&&>(l); }
};
ir::leaf v(std::int32_t i) { return ir::leaf::of_var(i); }
ir::leaf shape(std::int64_t d) { return ir::leaf::of_shape({ir::sym_ref::constant(d)}); }

// The main function's listing (from "@main:" to its blank line), or the codegen error.
std::string listing(const ir::module& m, const char* fn = "main") {
  rv::exec_builder b;
  rv::detail::text err;
  if (!ir::codegen(m, b, err)) return "error: " + std::string(err.view());
  const std::string t = b.get().as_text();
  const std::size_t at = t.find(std::string("@") + fn + ":\n");
  return t.substr(at, t.find("\n\n", at) + 1 - at);
}
std::string listing(const rv::executable& e, const char* fn = "main") {
  const std::string t = e.as_text();
  const std::size_t at = t.find(std::string("@") + fn + ":\n");
  return t.substr(at, t.find("\n\n", at) + 1 - at);
}
}  // namespace

TEST_CASE("codegen: parameters in r0.., a fresh register per call and per var-to-var binding, %void for void") {
  hand h({"a", "b", "c"});
  const std::int32_t lv = h.call("k", {v(0), v(1)}, ir::object_info());
  h.call("log", {v(lv)});
  const std::int32_t y = h.bind("y", ir::object_info(), ir::expr_kind::leaf, {v(lv)});
  const std::int32_t z = h.bind("z", ir::object_info(), ir::expr_kind::leaf, {v(2)});  // a parameter: copied too
  const std::int32_t r = h.call("k", {v(y), v(z)}, ir::object_info());
  h.ret(v(r));
  CHECK(listing(h.m) ==
        "@main:\n"
        "  call  k                in: %0, %1       dst: %3\n"
        "  call  log              in: %3           dst: %void\n"
        "  call  vm.builtin.copy  in: %3           dst: %4\n"
        "  call  vm.builtin.copy  in: %2           dst: %5\n"
        "  call  k                in: %4, %5       dst: %6\n"
        "  ret   %6\n");
}

TEST_CASE("codegen: test_vm_kill_object (2.7(c)), a kill writes null into the killed register") {
  hand h;
  const auto storage_of = [&] {
    return h.bind("storage", ir::object_info(), ir::expr_kind::vm_alloc_storage,
                  {shape(16), ir::leaf::of_int(0), ir::leaf::of_dtype(rv::dtype::uint8()), ir::leaf::of_string("global")});
  };
  const auto tensor_of = [&](std::int32_t st) {
    return h.bind("alloc", ir::tensor_info({4}, f32), ir::expr_kind::vm_alloc_tensor,
                  {v(st), ir::leaf::of_int(0), shape(4), ir::leaf::of_dtype(f32)});
  };
  const auto kill = [&](std::int32_t x) { h.bind("_", ir::void_info(), ir::expr_kind::vm_kill_object, {v(x)}); };
  const std::int32_t storage = storage_of();
  const std::int32_t alloc = tensor_of(storage);
  h.call("full", {v(alloc)});
  kill(alloc);
  h.bind("x", ir::tensor_info({4}, f32), ir::expr_kind::leaf, {v(alloc)});
  const std::int32_t alloc1 = tensor_of(storage);
  h.call("full", {v(alloc1)});
  kill(alloc1);
  h.bind("y", ir::tensor_info({4}, f32), ir::expr_kind::leaf, {v(alloc1)});
  const std::int32_t alloc2 = tensor_of(storage_of());
  h.call("full1", {v(alloc2)});
  const std::int32_t z = h.bind("z", ir::tensor_info({4}, f32), ir::expr_kind::leaf, {v(alloc2)});
  kill(storage);
  h.ret(v(z));
  // The reference's listing; equal dtypes share a pool entry here (c[4] twice, c[1] twice).
  CHECK(listing(h.m) ==
        "@main:\n"
        "  call  vm.builtin.alloc_storage in: %vm, c[0], i0, c[1], c[2] dst: %0\n"
        "  call  vm.builtin.alloc_tensor in: %0, i0, c[3], c[4] dst: %1\n"
        "  call  full             in: %1           dst: %void\n"
        "  call  vm.builtin.null_value in:              dst: %1\n"
        "  call  vm.builtin.copy  in: %1           dst: %2\n"
        "  call  vm.builtin.alloc_tensor in: %0, i0, c[3], c[4] dst: %3\n"
        "  call  full             in: %3           dst: %void\n"
        "  call  vm.builtin.null_value in:              dst: %3\n"
        "  call  vm.builtin.copy  in: %3           dst: %4\n"
        "  call  vm.builtin.alloc_storage in: %vm, c[0], i0, c[1], c[2] dst: %5\n"
        "  call  vm.builtin.alloc_tensor in: %5, i0, c[3], c[4] dst: %6\n"
        "  call  full1            in: %6           dst: %void\n"
        "  call  vm.builtin.copy  in: %6           dst: %7\n"
        "  call  vm.builtin.null_value in:              dst: %0\n"
        "  ret   %7\n");
}

TEST_CASE("codegen: test_prim_value and test_string_imm (2.7(d)), ret through a copy") {
  ir::module_builder m;
  {
    auto f = m.function("main", {});
    f.ret(ir::prim(1));
  }
  {
    auto f = m.function("s", {});
    f.ret(ir::str("hello"));
  }
  const rv::executable e = ir::build(m.get());
  CHECK(listing(e) == "@main:\n  call  vm.builtin.copy  in: i1           dst: %0\n  ret   %0\n");
  CHECK(listing(e, "s") == "@s:\n  call  vm.builtin.copy  in: c[0]         dst: %0\n  ret   %0\n");
}

TEST_CASE("codegen: constants, immediates and the pool; calls, builtins with %vm, tuples") {
  ir::module_builder m;
  {
    auto g = m.function("g", {{"a", ir::object_info()}, {"b", ir::object_info()}});
    g.ret(g.param(0));
  }
  {
    auto f = m.function("main", {{"y", ir::object_info()}, {"z", ir::object_info()}});
    const ir::var c1 = f.constant(f32, {1}, {0, 0, 128, 63});
    const ir::var c2 = f.constant(f32, {1}, {0, 0, 128, 63});  // equal: one pool entry
    const ir::var c3 = f.constant(f32, {1}, {0, 0, 0, 64});
    const ir::var t = f.tuple({c1, c2, c3, f.param(1), ir::prim(std::int64_t{1} << 60), ir::prim(1, rv::dtype::bool_()),
                               ir::prim(-5), ir::str("a"), ir::str("a"), ir::dtype_arg(f32), ir::shape_arg({2, 3})});
    const ir::var r = f.call("g", {f.get_item(t, 3), f.param(0)}, ir::object_info());
    f.ret(f.call_builtin("test.ctx", {r}, ir::object_info()));
  }
  const rv::executable e = ir::build(m.get());
  CHECK(listing(e) ==
        "@main:\n"
        "  call  vm.builtin.make_tuple in: c[0], c[0], c[1], %1, c[2], c[3], i-5, c[4], c[4], c[5], c[6] dst: %2\n"
        "  call  vm.builtin.tuple_getitem in: %2, i3       dst: %3\n"
        "  call  vm.builtin.null_value in:              dst: %2\n"
        "  call  g                in: %3, %0       dst: %4\n"
        "  call  vm.builtin.null_value in:              dst: %3\n"
        "  call  test.ctx         in: %vm, %4      dst: %5\n"
        "  call  vm.builtin.null_value in:              dst: %4\n"
        "  ret   %5\n");
  CHECK(rv::stats(e.view()) ==
        "Relax VM executable statistics:\n"
        "  Constant pool (# 7): [[1], [1], 1152921504606846976, true, \"a\", float32, shapetuple[2, 3]]\n"
        "  Globals (#6): [g, main, vm.builtin.make_tuple, vm.builtin.tuple_getitem, vm.builtin.null_value, test.ctx]\n");
}

TEST_CASE("codegen: closures (2.6) and an if whose branch gives an immediate") {
  ir::module_builder m;
  {
    auto g = m.function("lifted_func_1", {{"y", ir::object_info()}, {"x", ir::object_info()}});
    g.ret(g.call_packed("test.add", {g.param(0), g.param(1)}, ir::object_info()));
  }
  {
    auto f = m.function("main", {{"x", ir::object_info()}, {"y", ir::object_info()}});
    f.ret(f.invoke_closure(f.make_closure("lifted_func_1", {f.param(0)}), {f.param(1)}, ir::object_info()));
  }
  {
    auto f = m.function("ife", {{"c", ir::object_info()}});
    const ir::var c = f.param(0);
    f.ret(f.if_(
        c, [&](ir::block_builder& b) { return b.call_packed("k", {c}, ir::object_info()); },
        [&](ir::block_builder& b) { return b.prim_value(7); }));
  }
  const rv::executable e = ir::build(m.get());
  CHECK(listing(e) ==
        "@main:\n"
        "  call  vm.builtin.make_closure in: f[lifted_func_1], %0 dst: %2\n"
        "  call  vm.builtin.invoke_closure in: %vm, %2, %1  dst: %3\n"
        "  ret   %3\n");
  CHECK(listing(e, "ife") ==
        "@ife:\n"
        "  call  vm.builtin.read_if_cond in: %0           dst: %1\n"
        "  If    %1, 4\n"
        "  call  k                in: %0           dst: %2\n"
        "  call  vm.builtin.copy  in: %2           dst: %3\n"
        "  goto  2\n"
        "  call  vm.builtin.copy  in: i7           dst: %3\n"
        "  ret   %3\n");
}

TEST_CASE("codegen: nested ifs, both jumps patched") {
  ir::module_builder m;
  {
    auto f = m.function("ife", {{"c", ir::object_info()}, {"d", ir::object_info()}});
    const ir::var c = f.param(0), d = f.param(1);
    const auto call = [&](const char* k) {
      return [&, k](ir::block_builder& b) { return b.call_packed(k, {c}, ir::object_info()); };
    };
    f.ret(f.if_(
        c, [&](ir::block_builder& b) { return b.if_(d, call("k1"), call("k2")); }, call("k3")));
  }
  CHECK(listing(ir::build(m.get()), "ife") ==
        "@ife:\n"
        "  call  vm.builtin.read_if_cond in: %0           dst: %2\n"
        "  If    %2, 10\n"
        "  call  vm.builtin.read_if_cond in: %1           dst: %3\n"
        "  If    %3, 4\n"
        "  call  k1               in: %0           dst: %4\n"
        "  call  vm.builtin.copy  in: %4           dst: %5\n"
        "  goto  3\n"
        "  call  k2               in: %0           dst: %6\n"
        "  call  vm.builtin.copy  in: %6           dst: %5\n"
        "  call  vm.builtin.copy  in: %5           dst: %7\n"
        "  goto  3\n"
        "  call  k3               in: %0           dst: %8\n"
        "  call  vm.builtin.copy  in: %8           dst: %7\n"
        "  ret   %7\n");
}

TEST_CASE("codegen: a match_cast of a constant builds (its value is copied, or never killed)") {
  // The reference copies every binding whose value is a variable; here the kill that
  // kill_after_last_use puts after the match_cast's last use must find a register.
  ir::module_builder m;
  {
    auto f = m.function("main", {{"x", ir::object_info()}});
    const ir::var z = f.match_cast(f.constant(f32, {1}, {0, 0, 128, 63}), ir::tensor_info({1}, f32));
    f.call_packed("use", {z});
    f.ret(f.param(0));
  }
  const rv::result<rv::executable> r = ir::try_build(m.get());
  CHECK(r.ok());
  if (!r.ok()) MESSAGE(r.error().message());
}

TEST_CASE("codegen: modules that are not lowered, and build errors") {
  const std::string at = "error: codegen, function 'main': ";
  hand sym_prim;
  const ir::sym n(&sym_prim.m.syms, sym_prim.m.syms.make_var("n"));
  sym_prim.call("k", {ir::leaf::of_prim((n + 1).ref())});
  sym_prim.ret(ir::leaf::of_int(0));
  CHECK(listing(sym_prim.m) == at + "PrimValue should only contain constant after VMShapeLower (run ir::pass::shape_lower)");
  hand sym_shape;
  const ir::sym k(&sym_shape.m.syms, sym_shape.m.syms.make_var("k"));
  sym_shape.call("k", {ir::leaf::of_shape({k.ref()})});
  sym_shape.ret(ir::leaf::of_int(0));
  CHECK(listing(sym_shape.m) == at + "Should only use constant shape after shape lowering (run ir::pass::shape_lower)");
  hand high({"x"});
  high.ret(v(high.bind("lv", ir::shape_info(), ir::expr_kind::shape_of, {v(0)})));
  CHECK(listing(high.m) ==
        at + "binding 'lv' still holds a high-level operation; lower the module first (ir::build runs every pass)");
  hand imm;
  const std::int32_t i = imm.bind("i", ir::prim_info(), ir::expr_kind::leaf, {ir::leaf::of_int(3)});
  imm.bind("_", ir::void_info(), ir::expr_kind::vm_kill_object, {v(i)});
  imm.ret(v(i));
  // A kill of a value no register holds (an immediate, a constant) frees nothing: no instruction.
  CHECK(listing(imm.m).rfind("@main:\n  call  vm.builtin.copy  in: i3           dst: %0\n  ret   %0\n", 0) == 0);
  // ir::try_build reports the checker's and the passes' errors.
  hand no_result({"x"});
  rv::result<rv::executable> r = ir::try_build(no_result.m);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind() == rv::error_kind::value);
  CHECK(r.error().message() == "exec_builder: function 'main': has no result; end it with ret(value)");
  ir::module_builder m;
  {
    auto f = m.function("main", {{"x", ir::tuple_info({ir::object_info()})}});
    f.ret(f.match_cast(f.param(0), ir::tuple_info({ir::object_info(), ir::object_info()})));
  }
  r = ir::try_build(m.get());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message() == "exec_builder: function 'main': TypeError: ErrorContext(match_cast, "
                               "struct_info=R.Tuple(R.Object, R.Object))  during match-cast we find tuple size mismatch "
                               "(1 fields, annotation 2)");
}
