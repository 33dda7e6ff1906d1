// SPDX-License-Identifier: Apache-2.0
// The lowering layer end to end: IR programs lowered by the whole pipeline and run on the VM
// (docs/lowering.md), with their outputs, error kinds and messages, and the
// instruction patterns the reference emits.
#include <doctest/doctest.h>
#include <relaxvm/doctest.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <relaxvm.hpp>
#include <relaxvm/lower.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();

std::string text_of(const rv::executable& e) { return e.as_text(); }

// The error of calling `fn` with `args`; fails the test when the call succeeds.
rv::error failure(rv::virtual_machine& vm, std::string_view fn, std::initializer_list<rv::value> args) {
  rv::result<rv::value> r = vm[fn].try_call(std::span<const rv::value>(args.begin(), args.size()));
  REQUIRE(!r.ok());
  return r.error();
}
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The builder's or the checker's message for a module made by `make`; fails the test when it builds.
template <class Make>
std::string get_error(Make&& make) {
  ir::module_builder m;
  make(m);
  rv::result<ir::module> r = m.try_get();
  REQUIRE(!r.ok());
  return std::string(r.error().message());
}
}  // namespace

TEST_CASE("static parameter checks: check_tensor_info and one match_shape, the reference's bytecode") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), k = m.sym("m");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, k}, f32)}});
    f.ret(f.shape({k, n, 2}));
  }
  const rv::executable exe = ir::build(m.get());
  CHECK(contains(text_of(exe), "call  vm.builtin.alloc_shape_heap in: %vm, i2      dst: %1\n"
                               "  call  vm.builtin.check_tensor_info in: %0, i2, c[0], c[1] dst: %void\n"
                               "  call  vm.builtin.match_shape in: %0, %1, i2, i1, i0, i1, i1, c[1] dst: %void\n"
                               "  call  vm.builtin.make_shape in: %1, i3, i1, i1, i1, i0, i0, i2 dst: %2\n"
                               "  ret   %2\n"));
  rv::registry reg;
  rv::virtual_machine vm(exe, reg);
  CHECK(vm["main"](rv::tensor::from<float>({1, 2}, {1, 2})).as<rv::shape>() == rv::shape{2, 1, 2});
  const std::string ctx =
      "ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, m), dtype=\"float32\")) ";
  rv::error e = failure(vm, "main", {rv::shape{1}});
  CHECK(e.kind() == rv::error_kind::type);
  CHECK(contains(e.message(), ctx + "expect a Tensor but get shape"));
  e = failure(vm, "main", {rv::tensor::from<float>({1, 2}, {2})});
  CHECK(e.kind() == rv::error_kind::value);
  CHECK(contains(e.message(), ctx + "expect Tensor with ndim 2 but get 1"));
  e = failure(vm, "main", {rv::tensor::from<std::int32_t>({1, 2}, {1, 2})});
  CHECK(e.kind() == rv::error_kind::value);
  CHECK(contains(e.message(), ctx + "expect Tensor with dtype float32 but get int32"));
}

TEST_CASE("match_cast with a composite: deferred matching and one shape_arith between the two rounds") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), mm = m.sym("m"), k = m.sym("k");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, mm}, f32)}, {"y", ir::tensor_info(rv::dtype::void_(), 3)}});
    f.match_cast(f.param(1), ir::tensor_info({k, mm, k + 1}, f32));
    f.ret(f.shape({k + 1, mm, 2}));
  }
  const ir::module lowered = ir::lower(m.get());
  const std::string text = ir::to_text(lowered);
  // Slots n:0 m:1 k:2 k+1:3; the first match of y stores k, loads m and waits for k + 1.
  CHECK(contains(text, "R.call_packed(\"vm.builtin.match_shape\", y, shape_heap, R.prim_value(3), R.prim_value(1), "
                       "R.prim_value(2), R.prim_value(3), R.prim_value(1), R.prim_value(2), R.prim_value(0)"));
  CHECK(contains(text, "R.call_packed(\"vm.builtin.shape_arith\", shape_heap, R.prim_value(0), R.prim_value(3), "
                       "R.prim_value(1), R.prim_value(2), R.prim_value(0), R.prim_value(1))"));
  CHECK(contains(text, "R.call_packed(\"vm.builtin.match_shape\", y, shape_heap, R.prim_value(3), R.prim_value(3), "
                       "R.prim_value(2), R.prim_value(3), R.prim_value(1), R.prim_value(3), R.prim_value(3)"));
  rv::registry reg;
  rv::virtual_machine vm(ir::build(m.get()), reg);
  const rv::tensor x = rv::tensor::from<float>(std::vector<float>(6), {2, 3});
  CHECK(vm["main"](x, rv::tensor::from<float>(std::vector<float>(60), {4, 3, 5})).as<rv::shape>() == rv::shape{5, 3, 2});
  rv::error e = failure(vm, "main", {x, rv::tensor::from<float>(std::vector<float>(72), {4, 3, 6})});
  CHECK(e.kind() == rv::error_kind::runtime);
  CHECK(contains(e.message(), "ErrorContext(match_cast, struct_info=R.Tensor((k, m, k + 1), dtype=\"float32\")) "
                              "match_cast error,  shape[2] mismatch to a previous populated value."));
  e = failure(vm, "main", {x, rv::tensor::from<float>(std::vector<float>(40), {4, 2, 5})});
  CHECK(contains(e.message(), "shape[1] mismatch to a previous populated value"));
}

TEST_CASE("prim-value parameters and cross-parameter deferral") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), mm = m.sym("m");
  const rv::dtype i64 = rv::dtype::int64();
  {
    auto f = m.function("main", {{"a", ir::prim_info(i64, n)}, {"s", ir::shape_info({n * 2, mm * 2})}, {"b", ir::prim_info(i64, mm)}});
    f.ret(f.shape({n * n, mm + 1}));
  }
  rv::registry reg;
  rv::virtual_machine vm(ir::build(m.get()), reg);
  CHECK(vm["main"](2, rv::shape{4, 12}, 6).as<rv::shape>() == rv::shape{4, 7});
  rv::error e = failure(vm, "main", {2, rv::shape{4, 12}, 1});
  CHECK(e.kind() == rv::error_kind::runtime);
  CHECK(contains(e.message(), "loc=param[1]"));
  e = failure(vm, "main", {rv::shape{2}, rv::shape{4, 12}, 6});
  CHECK(e.kind() == rv::error_kind::type);
}

TEST_CASE("nested tuples: every check before the matches") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), mm = m.sym("m"), k = m.sym("k");
  const rv::dtype i32 = rv::dtype::int32();
  {
    auto f = m.function("main", {{"x", ir::tuple_info({ir::tensor_info({n, mm}, f32),
                                                       ir::tuple_info({ir::shape_info(), ir::tensor_info({n, k}, i32)})})}});
    f.ret(f.param(0));
  }
  const rv::executable exe = ir::build(m.get());
  const std::string t = text_of(exe);
  CHECK(t.find("check_tensor_info in: %5") < t.find("match_shape"));
  rv::registry reg;
  rv::virtual_machine vm(exe, reg);
  const rv::value a = rv::tensor::from<float>({1, 2}, {1, 2});
  const rv::value ok = rv::tuple({a, rv::tuple({rv::shape{}, rv::tensor::from<std::int32_t>({1, 2, 3}, {1, 3})})});
  CHECK(vm["main"](ok).kind() == rv::value_kind::tuple);
  rv::error e = failure(vm, "main", {rv::tuple({a, rv::tuple({rv::shape{}, rv::tensor::from<std::int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})})})});
  CHECK(contains(e.message(), "previous populated value"));
  e = failure(vm, "main", {rv::tuple({a, rv::tuple({rv::shape{}, a, a})})});
  CHECK(e.kind() == rv::error_kind::value);
  CHECK(contains(e.message(), "expect a Tuple with 2 elements,  but get a Tuple with 3 elements."));
}

TEST_CASE("well-formedness: each rule's message") {
  CHECK(get_error([](ir::module_builder& m) {
          const ir::sym n = m.sym("n"), k = m.sym("k");
          auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
          f.ret(f.call_dps("k", {f.param(0)}, ir::tensor_info({k}, f32)));
        }) == "ir: function 'main', binding 1 (lv): symbolic variable 'k' in the annotation of 'lv' is used before it is "
              "defined; define it first as a bare dimension of a parameter's or a match_cast's annotation");
  CHECK(get_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::tensor_info(f32, 1)}});
          ir::var d;
          {
            auto df = f.dataflow();
            d = f.call_packed("k", {f.param(0)}, ir::tensor_info(f32, 1));
          }
          f.ret(d);
        }) == "ir: function 'main', result: variable 'lv' is a dataflow variable of an earlier block; only the block's "
              "outputs are visible after it (call output() on the dataflow scope)");
  CHECK(get_error([](ir::module_builder& m) {
          { auto f = m.function("main", {{"x", ir::object_info()}}); f.ret(f.param(0)); }
          { auto f = m.function("main", {{"x", ir::object_info()}}); f.ret(f.param(0)); }
        }) == "ir: function 'main': is defined twice; function names must be unique in a module");
  CHECK(get_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}, {"x", ir::object_info()}});
          f.ret(f.param(0));
        }) == "ir: function 'main': parameter name 'x' is used twice; parameter names must be unique");
  CHECK(get_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call("missing", {f.param(0)}, ir::object_info()));
        }) == "ir: function 'main', binding 1 (lv): calls function 'missing', which is not in the module");
  CHECK(get_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          (void)f;
        }) == "ir: function 'main': has no result; end it with ret(value)");
  CHECK(get_error([](ir::module_builder& m) {
          const ir::sym n = m.sym("n");
          { auto f = m.function("a", {{"x", ir::tensor_info({n}, f32)}}); f.ret(f.param(0)); }
          { auto f = m.function("b", {{"x", ir::tensor_info({n}, f32)}}); f.ret(f.param(0)); }
        }) == "ir: function 'b': symbolic variable 'n' belongs to function 'a'; make a new one with "
              "module_builder::sym() for each function");
}

TEST_CASE("if/else on a tensor condition: the reference's 8-instruction layout") {
  ir::module_builder m;
  {
    auto f = m.function("ife", {{"cond", ir::tensor_info({}, rv::dtype::bool_())}, {"x", ir::tensor_info({3, 4}, f32)}});
    const ir::var x = f.param(1);
    const ir::var w = f.if_(
        f.param(0), [&](ir::block_builder& b) { return b.call_packed("test.vm.add", {x, x}, ir::tensor_info({3, 4}, f32)); },
        [&](ir::block_builder& b) { return b.call_packed("test.vm.mul", {x, x}, ir::tensor_info({3, 4}, f32)); });
    f.ret(w);
  }
  const std::string t = text_of(ir::build(m.get()));
  // The parameters' checks, then the reference's layout (docs/lowering.md)
  CHECK(contains(t, "  call  vm.builtin.read_if_cond in: %0           dst: %2\n"
                    "  If    %2, 4\n"
                    "  call  test.vm.add      in: %1, %1       dst: %3\n"
                    "  call  vm.builtin.copy  in: %3           dst: %4\n"
                    "  goto  3\n"
                    "  call  test.vm.mul      in: %1, %1       dst: %5\n"
                    "  call  vm.builtin.copy  in: %5           dst: %4\n"
                    "  ret   %4\n"));
}

TEST_CASE("lowering is deterministic") {
  const auto make = [] {
    ir::module_builder m;
    const ir::sym n = m.sym("n");
    {
      auto f = m.function("main", {{"x", ir::tensor_info({n, 4}, f32)}});
      f.ret(f.call_dps("ops.relu_out", {f.param(0)}, ir::tensor_info({n, 4}, f32)));
    }
    return ir::build(m.get()).save();
  };
  CHECK(make() == make());
}

// An IR program lowered and verified at compile time.
constexpr auto static_prog = ir::build_static([](ir::module_builder& m) {
  const ir::sym n = m.sym("n");
  auto f = m.function("main", {{"x", ir::tensor_info({n, 2}, rv::dtype::float32())}});
  f.ret(f.shape({n * 2 + 1, 3}));
});

using static_linked = decltype(rv::link<static_prog, rv::builtins::table>());

TEST_CASE("build_static: an IR program with symbolic shapes, linked at compile time, on static_vm and the VM") {
  static_assert(static_linked::bounded);
  const rv::value x = rv::tensor::from<float>(std::vector<float>(10), {5, 2});
  alignas(rv::value) std::byte memory[static_linked::memory_bytes];
  rv::device_allocator host[] = {{rv::device::cpu(), rv::allocator::naive()}};
  rv::static_vm<static_linked> svm = rv::static_vm<static_linked>::create(memory, host).value();
  CHECK(svm.invoke("main", std::vector<rv::value>{x}).value().as<rv::shape>() == rv::shape{11, 3});
  const rv::result<rv::value> bad = svm.invoke("main", std::vector<rv::value>{rv::tensor::from<float>({1, 2, 3}, {1, 3})});
  REQUIRE(!bad.ok());
  CHECK(contains(bad.error().message(), "shape[1] mismatch to specified constant"));
  rv::registry reg;
  rv::virtual_machine vm(rv::executable(static_prog), reg);
  CHECK(vm["main"](x).as<rv::shape>() == rv::shape{11, 3});
}

TEST_CASE("return check: the annotation is matched against the returned value") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), mm = m.sym("m");
  const rv::dtype i32 = rv::dtype::int32();
  {
    auto f = m.function("foo", {{"x", ir::tensor_info({n, mm}, i32)}, {"y", ir::object_info()}});
    f.ret(f.param(1), ir::tensor_info({mm, n}, i32));
  }
  rv::registry reg;
  rv::virtual_machine vm(ir::build(m.get()), reg);
  const rv::value x = rv::tensor::from<std::int32_t>({1, 2}, {1, 2});
  CHECK(vm["foo"](x, rv::tensor::from<std::int32_t>({1, 2}, {2, 1})).kind() == rv::value_kind::tensor);
  const std::string ctx = "ErrorContext(fn=foo, loc=return, annotation=R.Tensor((m, n), dtype=\"int32\")) ";
  rv::error e = failure(vm, "foo", {x, rv::tensor::from<std::int32_t>({1, 2}, {1, 2})});
  CHECK(e.kind() == rv::error_kind::runtime);
  CHECK(contains(e.message(), ctx + "match_cast error,  shape[0] mismatch to a previous populated value."));
  e = failure(vm, "foo", {x, rv::tensor::from<std::int32_t>({1, 2}, {1, 2, 1})});
  CHECK(e.kind() == rv::error_kind::value);
  CHECK(contains(e.message(), ctx + "expect Tensor with ndim 2 but get 3"));
}

TEST_CASE("elide_proven_return_check: a returned tensor the function allocated with its annotation is not checked") {
  ir::module_builder m;
  {
    const auto t = ir::tensor_info({m.sym("n"), 4}, f32);
    auto f = m.function("made", {{"x", t}});  // allocates what it returns
    auto df = f.dataflow();
    const ir::var y = f.call_dps("test.twice", {f.param(0)}, t);
    df.output(y);
    df.end();
    f.ret(y, t);
  }
  {
    const auto t = ir::tensor_info({m.sym("n"), 4}, f32);
    auto f = m.function("passed", {{"x", t}, {"y", ir::object_info()}});  // returns what it was given
    f.ret(f.param(1), t);
  }
  {
    const auto t = ir::tensor_info({m.sym("n"), 4}, f32);
    auto f = m.function("called", {{"x", t}});  // returns what a packed function claims
    f.ret(f.call_packed("test.echo", {f.param(0)}, t), t);
  }
  const ir::module mod = m.get();
  rv::registry reg;
  reg.def("test.twice", [](const rv::tensor& x, const rv::tensor& out) {
    for (std::int64_t i = 0; i < x.numel(); ++i) out.data<float>()[i] = 2 * x.data<const float>()[i];
  });
  reg.def("test.echo", [](const rv::tensor& x) { return rv::tensor::from<float>({1.0f}, {1, 1}); (void)x; });
  const auto matches = [](const rv::executable& e, std::string_view fn) {
    const std::string text = e.as_text();
    const std::size_t begin = text.find("@" + std::string(fn) + ":"), end = text.find("\n\n", begin);
    std::size_t count = 0;
    for (std::size_t i = text.find("match_shape", begin); i < end; i = text.find("match_shape", i + 1)) ++count;
    return count;
  };
  const rv::executable reference = ir::build(mod), elided = ir::build(mod, {.elide_proven_return_check = true});
  CHECK(matches(reference, "made") == 2);  // the parameter's and the return value's
  CHECK(matches(elided, "made") == 1);
  for (std::string_view fn : {"passed", "called"}) {
    CAPTURE(fn);
    CHECK(matches(reference, fn) == matches(elided, fn));
  }
  rv::virtual_machine vm(elided, reg);
  const rv::tensor x = rv::tensor::from<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  RELAXVM_CHECK_EQUAL(vm["made"](x).as<rv::tensor>(), rv::tensor::from<float>({2, 4, 6, 8, 10, 12, 14, 16}, {2, 4}));
  // The checks that are kept still fail.
  CHECK(contains(failure(vm, "passed", {x, rv::tensor::from<float>({1}, {1, 1})}).message(), "loc=return"));
  CHECK(contains(failure(vm, "called", {x}).message(), "loc=return"));
}

TEST_CASE("symbolic arithmetic in returned shapes, from a match_cast and from a shape parameter") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), mm = m.sym("m"), a = m.sym("a"), b = m.sym("b");
  {
    auto f = m.function("foo", {{"x", ir::tensor_info()}});
    f.match_cast(f.param(0), ir::tensor_info({n, mm}, f32));
    f.ret(f.shape({n * 2, mm * 3}));
  }
  {
    auto f = m.function("bar", {{"s", ir::shape_info({a, b})}});
    f.ret(f.shape({2 * a, 3 * b}));
  }
  rv::registry reg;
  rv::virtual_machine vm(ir::build(m.get()), reg);
  CHECK(vm["foo"](rv::tensor::from<float>(std::vector<float>(32 * 16), {32, 16})).as<rv::shape>() == rv::shape{64, 48});
  rv::error e = failure(vm, "foo", {rv::tensor::from<std::int32_t>({1, 2}, {1, 2})});
  CHECK(e.kind() == rv::error_kind::value);
  CHECK(contains(e.message(), "ErrorContext(match_cast, struct_info=R.Tensor((n, m), dtype=\"float32\")) expect Tensor "
                              "with dtype float32 but get int32"));
  e = failure(vm, "foo", {rv::tensor::from<float>({1, 2}, {2})});
  CHECK(contains(e.message(), "ErrorContext(match_cast, struct_info=R.Tensor((n, m), dtype=\"float32\")) expect Tensor "
                              "with ndim 2 but get 1"));
  CHECK(vm["bar"](rv::shape{2, 3}).as<rv::shape>() == rv::shape{4, 9});
  e = failure(vm, "bar", {rv::shape{2, 3, 4}});
  CHECK(e.kind() == rv::error_kind::value);
  CHECK(contains(e.message(), "expect Shape with ndim 2 but get 3"));
  e = failure(vm, "bar", {rv::value(std::int64_t{3})});
  CHECK(e.kind() == rv::error_kind::type);
}

TEST_CASE("conditions: a tensor, a bool, an int, and a symbolic expression select the branch") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  const auto one = [](ir::block_builder& b) { return b.prim_value(1); };
  const auto two = [](ir::block_builder& b) { return b.prim_value(2); };
  {
    auto f = m.function("ife", {{"c", ir::object_info()}});
    f.ret(f.if_(f.param(0), one, two));
  }
  {
    auto f = m.function("even_above_4", {{"x", ir::tensor_info({n}, f32)}});
    f.ret(f.if_(ir::prim(n > 4 && ir::eq(ir::floormod(n, 2), 0)), one, two));
  }
  rv::registry reg;
  rv::virtual_machine vm(ir::build(m.get()), reg);
  CHECK(vm["ife"](rv::tensor::from<bool>({true}, {})).as<std::int64_t>() == 1);
  CHECK(vm["ife"](rv::tensor::from<bool>({false}, {})).as<std::int64_t>() == 2);
  CHECK(vm["ife"](true).as<std::int64_t>() == 1);
  CHECK(vm["ife"](false).as<std::int64_t>() == 2);
  CHECK(vm["ife"](1).as<std::int64_t>() == 1);
  CHECK(vm["ife"](0).as<std::int64_t>() == 2);
  const auto vec = [](std::int64_t k) { return rv::tensor::from<float>(std::vector<float>(static_cast<std::size_t>(k)), {k}); };
  CHECK(vm["even_above_4"](vec(6)).as<std::int64_t>() == 1);
  CHECK(vm["even_above_4"](vec(5)).as<std::int64_t>() == 2);
  CHECK(vm["even_above_4"](vec(2)).as<std::int64_t>() == 2);
}

TEST_CASE("calls between functions: recursion and a call chain") {
  ir::module_builder m;
  const rv::dtype i64 = rv::dtype::int64();
  {
    // pow2(k) = k <= 0 ? 1 : 2 * pow2(k - 1), with the arithmetic in kernels
    auto f = m.function("pow2", {{"k", ir::prim_info(i64)}});
    const ir::var k = f.param(0);
    const ir::var stop = f.call_packed("test.le0", {k}, ir::prim_info(rv::dtype::bool_()));
    f.ret(f.if_(
        stop, [](ir::block_builder& b) { return b.prim_value(1); },
        [&](ir::block_builder& b) {
          const ir::var r = b.call("pow2", {b.call_packed("test.dec", {k}, ir::prim_info(i64))}, ir::prim_info(i64));
          return b.call_packed("test.twice", {r}, ir::prim_info(i64));
        }));
  }
  {
    auto f = m.function("chain", {{"k", ir::prim_info(i64)}});
    f.ret(f.call("pow2", {f.call("pow2", {f.param(0)}, ir::prim_info(i64))}, ir::prim_info(i64)));
  }
  rv::registry reg;
  reg.add("test.le0", rv::make_typed("test.le0", [](std::int64_t k) { return k <= 0; }));
  reg.add("test.dec", rv::make_typed("test.dec", [](std::int64_t k) { return k - 1; }));
  reg.add("test.twice", rv::make_typed("test.twice", [](std::int64_t k) { return 2 * k; }));
  rv::virtual_machine vm(ir::build(m.get()), reg);
  CHECK(vm["pow2"](10).as<std::int64_t>() == 1024);
  CHECK(vm["chain"](2).as<std::int64_t>() == 16);
}

TEST_CASE("closures: make_closure binds the captured value last") {
  ir::module_builder m;
  const auto t = ir::tensor_info({2}, f32);
  {
    auto f = m.function("lifted", {{"y", t}, {"x", t}});
    f.ret(f.call_dps("test.sub_out", {f.param(1), f.param(0)}, t));
  }
  {
    auto f = m.function("main", {{"x", t}, {"y", t}});
    const ir::var clo = f.make_closure("lifted", {f.param(0)});
    f.ret(f.invoke_closure(clo, {f.param(1)}, t));
  }
  const rv::executable exe = ir::build(m.get());
  CHECK(contains(text_of(exe), "  call  vm.builtin.make_closure in: f[lifted], %0 dst: %2\n"
                               "  call  vm.builtin.invoke_closure in: %vm, %2, %1  dst: %3\n"
                               "  ret   %3\n"));
  rv::registry reg;
  reg.add("test.sub_out", rv::make_typed("test.sub_out", [](const rv::tensor& a, const rv::tensor& b, const rv::tensor& out) {
    for (std::int64_t i = 0; i < 2; ++i) out.data<float>()[i] = a.data<const float>()[i] - b.data<const float>()[i];
  }));
  rv::virtual_machine vm(exe, reg);
  const rv::tensor r = vm["main"](rv::tensor::from<float>({5, 7}, {2}), rv::tensor::from<float>({1, 2}, {2})).as<rv::tensor>();
  CHECK(r.data<const float>()[0] == 4);  // x - y: x (captured) is lifted's second parameter
  CHECK(r.data<const float>()[1] == 5);
}

TEST_CASE("num_input: static weights are not checked, dynamic ones are") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({16, 16}, f32)},
                                 {"params", ir::tuple_info({ir::tensor_info({16, 16}, f32), ir::tensor_info({n}, f32)})},
                                 {"w", ir::tensor_info({16, 16}, f32)}});
    f.num_input(1);
    f.ret(f.param(0));
  }
  const std::string t = text_of(ir::build(m.get()));
  // x: check + match; params: check_tuple_info, field 1 checked and matched; w: nothing.
  CHECK(contains(t, "check_tensor_info in: %0, i2"));
  CHECK(contains(t, "check_tuple_info in: %1, i2"));
  CHECK(t.find("check_tensor_info in: %2") == std::string::npos);
  CHECK(contains(t, "match_shape in: %0, %3, i2, i0, i16, i0, i16"));
  CHECK(contains(t, "match_shape in: %4, %3, i1, i1, i0"));
  CHECK(t.find("tuple_getitem in: %1, i0") == std::string::npos);  // the static field is not taken out
  std::size_t checks = 0;
  for (std::size_t at = t.find("call  vm.builtin.check_tensor_info"); at != std::string::npos;
       at = t.find("call  vm.builtin.check_tensor_info", at + 1))
    ++checks;
  CHECK(checks == 2);
}

TEST_CASE("hostile IR: expressions nested without bound and constant folds that overflow are errors") {
  {
    ir::module_builder m;
    ir::sym e = m.sym("n");
    for (int i = 0; i < 100000; ++i) e = e + 1;  // depth 100,000: invalid past ir::max_sym_depth
    auto f = m.function("main", {{"x", ir::tensor_info({m.sym("k")}, f32)}});
    f.ret(f.prim_value(e));
    f.end();
    rv::result<ir::module> r = m.try_get();
    REQUIRE(!r.ok());
    CHECK(contains(r.error().message(), "nesting deeper than ir::max_sym_depth"));
  }
  {
    ir::module_builder m;
    auto f = m.function("main", {{"x", ir::tensor_info({ir::sym(std::int64_t{1} << 62) * 4}, f32)}});
    f.ret(f.param(0));
    f.end();
    rv::result<ir::module> r = m.try_get();
    REQUIRE(!r.ok());
    CHECK(contains(r.error().message(), "the annotation of parameter 'x' has an invalid expression"));
  }
}


TEST_CASE("hostile IR found by review: errors, not crashes, hangs or wrong code") {
  // Symbolic expressions and variables of another module builder.
  ir::module_builder other;
  const ir::sym a = other.sym("a");
  CHECK(contains(get_error([&](ir::module_builder& m) {
                   const ir::sym n = m.sym("n");
                   auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
                   f.ret(f.prim_value(a * 3));
                 }),
                 "an argument's symbolic expression comes from another module_builder"));
  CHECK(contains(get_error([&](ir::module_builder& m) {
                   auto f = m.function("main", {{"x", ir::tensor_info({a}, f32)}});
                   f.ret(f.param(0));
                 }),
                 "uses symbolic variables of another module_builder"));
  CHECK(contains(get_error([&](ir::module_builder& m) {
                   const ir::sym n = m.sym("n");
                   auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
                   f.ret(f.prim_value(n + a));
                 }),
                 "symbolic variables of another module_builder"));
  {
    auto g = other.function("g", {{"p", ir::object_info()}});
    const ir::var foreign = g.param(0);
    g.ret(foreign);
    CHECK(contains(get_error([&](ir::module_builder& m) {
                     auto f = m.function("main", {{"x", ir::object_info()}});
                     f.ret(f.tuple({f.param(0), foreign}));
                   }),
                   "an argument is a variable of another module_builder"));
  }
  // Shared subexpressions: a tree of 2^64 nodes in 64 steps is refused at once.
  CHECK(contains(get_error([](ir::module_builder& m) {
                   const ir::sym n = m.sym("n");
                   ir::sym e = n;
                   for (int i = 0; i < 64; ++i) e = e + e;
                   auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
                   f.ret(f.prim_value(e));
                 }),
                 "larger than ir::max_sym_nodes"));
  // 100,000 dimensions, negative dimensions, float prim values.
  CHECK(contains(get_error([](ir::module_builder& m) {
                   const ir::sym n = m.sym("n");
                   auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
                   f.ret(f.call_dps("k", {f.param(0)}, ir::tensor_info(std::vector<ir::sym_ref>(100000, n.ref()), f32)));
                 }),
                 "has 100000 dimensions; at most 64 are supported"));
  CHECK(contains(get_error([](ir::module_builder& m) {
                   auto f = m.function("main", {{"x", ir::object_info()}});
                   f.ret(f.shape({3, -1}));
                 }),
                 "negative dimension -1"));
  CHECK(contains(get_error([](ir::module_builder& m) {
                   auto f = m.function("main", {{"x", ir::prim_info(f32)}});
                   f.ret(f.param(0));
                 }),
                 "is a prim value of dtype float32; prim values are integers or bool"));
  // A module function may not take a packed function's name (it would run instead of it).
  CHECK(contains(get_error([](ir::module_builder& m) {
                   { auto f = m.function("main", {{"x", ir::object_info()}}); f.ret(f.call_packed("helper", {f.param(0)}, ir::object_info())); }
                   { auto f = m.function("helper", {{"x", ir::object_info()}}); f.ret(f.param(0)); }
                 }),
                 "calls packed function 'helper', which is also the name of a function of the module"));
  CHECK(contains(get_error([](ir::module_builder& m) {
                   auto f = m.function("vm.builtin.make_tuple", {{"x", ir::object_info()}});
                   f.ret(f.param(0));
                 }),
                 "names starting with 'vm.builtin.' belong to the VM's builtins"));
  // Bindings after the function ended, and through the outer builder inside a branch.
  CHECK(contains(get_error([](ir::module_builder& m) {
                   auto f = m.function("main", {{"x", ir::object_info()}});
                   f.ret(f.param(0));
                   f.end();
                   (void)f.call_packed("side", {}, ir::object_info());
                 }),
                 "a binding after the function ended"));
  CHECK(contains(get_error([](ir::module_builder& m) {
                   auto f = m.function("main", {{"c", ir::object_info()}});
                   f.ret(f.if_(
                       f.param(0), [&](ir::block_builder&) { return f.call_packed("k.side_effect", {}, ir::object_info()); },
                       [&](ir::block_builder&) { return f.param(0); }));
                 }),
                 "a binding through an outer builder while an if branch is open"));
  // if_ nested past ir::max_if_depth.
  CHECK(contains(get_error([](ir::module_builder& m) {
                   auto f = m.function("main", {{"c", ir::object_info()}});
                   const ir::var c = f.param(0);
                   const auto nest = [&](const auto& self, ir::block_builder& b, int depth) -> ir::var {
                     if (depth == 300) return c;
                     return b.if_(c, [&](ir::block_builder& in) { return self(self, in, depth + 1); },
                                  [&](ir::block_builder&) { return c; });
                   };
                   f.ret(nest(nest, f, 0));
                 }),
                 "if_ nested deeper than ir::max_if_depth (256)"));
  // A module lowered once is not lowered again.
  {
    ir::module_builder m;
    const ir::sym n = m.sym("n");
    {
      auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
      f.ret(f.param(0));
    }
    const rv::result<rv::executable> twice = ir::try_build(ir::lower(m.get()));
    REQUIRE(!twice.ok());
    CHECK(contains(twice.error().message(), "function 'main' is already lowered"));
  }
  // A tuple index outside the immediates' range goes to the constant pool.
  {
    ir::module_builder m;
    {
      auto f = m.function("main", {{"t", ir::object_info()}});
      f.ret(f.get_item(f.param(0), std::int64_t{1} << 60));
    }
    CHECK(ir::try_build(m.get()).ok());
  }
}

// ---- memory planning and views, run (docs/lowering.md) ----------------

namespace {
// Float kernels for the chain exp -> reshape -> relu -> add 1 -> pad with two ones -> log, twice, and
// sum2 (a + b).
rv::registry chain_kernels() {
  rv::registry reg;
  const auto unary = [&](std::string_view name, float (*op)(float)) {
    reg.add(name, rv::make_typed(name, [op](const rv::tensor& x, rv::tensor out) {
      const float* p = x.data<const float>();
      float* q = out.data<float>();
      for (std::int64_t i = 0; i < x.numel(); ++i) q[i] = op(p[i]);
    }));
  };
  unary("exp", [](float v) { return std::exp(v); });
  unary("relu", [](float v) { return v > 0 ? v : 0.0f; });
  unary("add", [](float v) { return v + 1; });
  unary("log", [](float v) { return std::log(v); });
  unary("twice", [](float v) { return 2 * v; });
  reg.add("pad", rv::make_typed("pad", [](const rv::tensor& x, rv::tensor out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = i < x.numel() ? x.data<const float>()[i] : 1.0f;
  }));
  reg.add("sum2", rv::make_typed("sum2", [](const rv::tensor& a, const rv::tensor& b, rv::tensor out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = a.data<const float>()[i] + b.data<const float>()[i];
  }));
  return reg;
}
std::vector<float> chain_expected(const std::vector<float>& x) {
  std::vector<float> y;
  for (float v : x) y.push_back(std::log(std::max(std::exp(v), 0.0f) + 1));
  y.push_back(0.0f);  // log of the padding, 1
  y.push_back(0.0f);
  return y;
}
// The sizes of the storages `vm` makes (vm.builtin.alloc_storage's size argument), from now on.
std::shared_ptr<std::vector<std::int64_t>> watch_storages(rv::virtual_machine& vm) {
  auto sizes = std::make_shared<std::vector<std::int64_t>>();
  vm.set_instrument([sizes](const rv::call_event& e) {
    if (e.before && e.callee == "vm.builtin.alloc_storage") sizes->push_back(e.args[1].as<rv::shape>()[0]);
    return rv::instrument_action::proceed;
  });
  return sizes;
}
void check_floats(const rv::tensor& t, const std::vector<float>& want) {
  REQUIRE(t.numel() == static_cast<std::int64_t>(want.size()));
  RELAXVM_CHECK_ALLCLOSE(t, rv::tensor::from<float>(want, t.shape()));
}
// main(x: (2, cols)) = the chain above, with `bound` as n's upper bound when cols is symbolic.
ir::module chain_module(bool symbolic, std::int64_t bound) {
  ir::module_builder m;
  const ir::sym n = symbolic ? m.sym("n") : ir::sym(4);
  auto f = m.function("main", {{"x", ir::tensor_info({2, n}, f32)}});
  if (bound > 0) f.upper_bound(n, bound);
  auto df = f.dataflow();
  const ir::var a = f.call_dps("exp", {f.param(0)}, ir::tensor_info({2, n}, f32));
  const ir::var c = f.call_dps("relu", {f.reshape(a, {n * 2})}, ir::tensor_info({n * 2}, f32));
  const ir::var d = f.call_dps("add", {c}, ir::tensor_info({n * 2}, f32));
  const ir::var e = f.call_dps("pad", {d}, ir::tensor_info({n * 2 + 2}, f32));
  const ir::var g = f.call_dps("log", {e}, ir::tensor_info({n * 2 + 2}, f32));
  df.output(g);
  df.end();
  f.ret(g);
  f.end();
  return m.get();
}
std::vector<float> iota(std::size_t count) {
  std::vector<float> v;
  for (std::size_t i = 0; i < count; ++i) v.push_back(static_cast<float>(i) * 0.25f - 0.5f);
  return v;
}
}  // namespace

TEST_CASE("memory planning, static chain (test_basic): 3 storages of 32, 40 and 40 bytes per run, reshape makes none") {
  rv::registry reg = chain_kernels();
  rv::virtual_machine vm(ir::build(chain_module(false, 0)), reg);
  auto sizes = watch_storages(vm);
  for (int run = 0; run < 2; ++run) {
    sizes->clear();
    const std::vector<float> x = iota(8);
    check_floats(vm["main"](rv::tensor::from<float>(x, {2, 4})).as<rv::tensor>(), chain_expected(x));
    CHECK(*sizes == std::vector<std::int64_t>{32, 40, 40});
  }
}

TEST_CASE("memory planning, symbolic: upper bounds give constant storages, and a larger input is an error at once") {
  rv::registry reg = chain_kernels();
  {
    // tir_var_upper_bound {n: 4}: 32 and 40 bytes whatever n; the returned tensor's own is 8n + 8.
    rv::virtual_machine vm(ir::build(chain_module(true, 4)), reg);
    auto sizes = watch_storages(vm);
    for (std::int64_t n = 1; n <= 4; ++n) {
      sizes->clear();
      const std::vector<float> x = iota(static_cast<std::size_t>(2 * n));
      check_floats(vm["main"](rv::tensor::from<float>(x, {2, n})).as<rv::tensor>(), chain_expected(x));
      CHECK(*sizes == std::vector<std::int64_t>{32, 40, 8 * n + 8});
    }
    // n = 5: the bound is checked right after the parameter is matched, before any storage.
    sizes->clear();
    const rv::error e = failure(vm, "main", {rv::tensor::from<float>(iota(10), {2, 5})});
    CHECK(e.kind() == rv::error_kind::value);
    CHECK(contains(e.message(), "ErrorContext(fn=main, loc=upper_bound) symbolic variable n is 5, larger than its upper bound 4"));
    CHECK(sizes->empty());
    check_floats(vm["main"](rv::tensor::from<float>(iota(2), {2, 1})).as<rv::tensor>(), chain_expected(iota(2)));
  }
  {
    // No bound: sizes are computed on the shape heap (8n, 4 * (n * 2), 4 * (n * 2 + 2)); add's
    // output reuses exp's storage, because 4 * (n * 2) is provably 8 * n; pad's cannot.
    rv::virtual_machine vm(ir::build(chain_module(true, 0)), reg);
    auto sizes = watch_storages(vm);
    for (std::int64_t n : {3, 7}) {
      sizes->clear();
      const std::vector<float> x = iota(static_cast<std::size_t>(2 * n));
      check_floats(vm["main"](rv::tensor::from<float>(x, {2, n})).as<rv::tensor>(), chain_expected(x));
      CHECK(*sizes == std::vector<std::int64_t>{8 * n, 8 * n, 8 * n + 8, 8 * n + 8});
    }
  }
}

TEST_CASE("memory planning: an alias made by match_cast, a view or an opaque call keeps its storage (apache/tvm#20190, #20134)") {
  // a = exp(x); alias = a by match_cast (or a reshape view, or a packed call that may return its
  // argument or a tuple's field: issue 33); c = twice(a); d = add(c); result = sum2(alias, d).
  // In the reference's plan d took a's storage after a's last direct use, so alias read d's
  // values: exp(x) + 2 exp(x) + 1 became 2 (2 exp(x) + 1).
  rv::registry reg = chain_kernels();
  reg.add("first_of", rv::make_typed("first_of", [](const rv::tensor& a, const rv::tensor&) { return a; }));
  const auto t4 = ir::tensor_info({4}, f32);
  for (int alias_kind = 0; alias_kind < 5; ++alias_kind) {
    CAPTURE(alias_kind);
    ir::module_builder m;
    {
      auto f = m.function("main", {{"x", t4}});
      const ir::var a = f.call_dps("exp", {f.param(0)}, t4);
      ir::var alias;
      switch (alias_kind) {
        case 0: alias = f.match_cast(a, t4); break;
        case 1: alias = f.call_packed("vm.builtin.reshape", {a, ir::shape_arg({4})}, t4); break;
        case 2: alias = f.call_packed("vm.builtin.copy", {a}, t4); break;
        case 3: alias = f.call_packed("vm.builtin.tuple_getitem", {f.tuple({f.param(0), a}), ir::prim(1)}, t4); break;
        default: alias = f.call_packed("first_of", {a, f.param(0)}, t4); break;
      }
      const ir::var d = f.call_dps("add", {f.call_dps("twice", {a}, t4)}, t4);
      f.ret(f.call_dps("sum2", {alias, d}, t4));
    }
    rv::virtual_machine vm(ir::build(m.get()), reg);
    auto sizes = watch_storages(vm);
    const std::vector<float> x = iota(4);
    std::vector<float> want;
    for (float v : x) want.push_back(std::exp(v) + 2 * std::exp(v) + 1);
    check_floats(vm["main"](rv::tensor::from<float>(x, {4})).as<rv::tensor>(), want);
    CHECK(*sizes == std::vector<std::int64_t>{16, 16, 16, 16});
  }
}

TEST_CASE("rewrite_dataflow_reshape, run: a reshape-like kernel becomes a view, with no storage, no call and no copy") {
  rv::registry reg = chain_kernels();
  reg.add("copy_reshape", rv::make_typed("copy_reshape", [](const rv::tensor& x, rv::tensor out) {
    std::memcpy(out.raw_data(), x.raw_data(), static_cast<std::size_t>(x.nbytes()));
  }));
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, 4}, f32)}});
    auto df = f.dataflow();
    const ir::var flat = f.call_dps("copy_reshape", {f.param(0)}, ir::tensor_info({n * 4}, f32), ir::reshape_like);
    const ir::var y = f.call_dps("relu", {flat}, ir::tensor_info({n * 4}, f32));
    df.output(y);
    df.end();
    f.ret(y);
  }
  rv::virtual_machine vm(ir::build(m.get()), reg);
  const rv::tensor x = rv::tensor::from<float>(iota(8), {2, 4});
  std::vector<std::string> calls;
  const void* relu_input = nullptr;
  vm.set_instrument([&](const rv::call_event& e) {
    if (!e.before) return rv::instrument_action::proceed;
    calls.emplace_back(e.callee);
    if (e.callee == "relu") relu_input = e.args[0].as<rv::tensor>().raw_data();
    return rv::instrument_action::proceed;
  });
  const rv::tensor y = vm["main"](x).as<rv::tensor>();
  std::vector<float> want;
  for (float v : iota(8)) want.push_back(v > 0 ? v : 0.0f);
  check_floats(y, want);
  CHECK(relu_input == x.raw_data());  // the view reads x's memory
  CHECK(std::count(calls.begin(), calls.end(), "copy_reshape") == 0);
  CHECK(std::count(calls.begin(), calls.end(), "vm.builtin.reshape") == 1);
  CHECK(std::count(calls.begin(), calls.end(), "vm.builtin.alloc_storage") == 1);  // relu's output only
}

namespace {
// The chain above with n <= 4, for compile time.
constexpr auto bounded_chain = [](ir::module_builder& m) {
  const ir::sym n = m.sym("n");
  auto f = m.function("main", {{"x", ir::tensor_info({2, n}, rv::dtype::float32())}});
  f.upper_bound(n, 4);
  const auto t = [&](ir::sym d) { return ir::tensor_info({d}, rv::dtype::float32()); };
  const ir::var a = f.call_dps("exp", {f.param(0)}, ir::tensor_info({2, n}, rv::dtype::float32()));
  const ir::var c = f.call_dps("relu", {f.reshape(a, {n * 2})}, t(n * 2));
  const ir::var e = f.call_dps("pad", {f.call_dps("add", {c}, t(n * 2))}, t(n * 2 + 2));
  f.ret(f.call_dps("log", {e}, t(n * 2 + 2)));
};
}  // namespace

TEST_CASE("planned_memory: the most a call takes from the allocators, at compile time too") {
  // Storages of 32, 40 and (the output) at most 40 bytes, and a shape heap of 4 slots (n, 2n,
  // 2n + 2 and a temporary), each rounded up to 64.
  static_assert(ir::planned_bytes(bounded_chain, "main") == 4 * 64);
  ir::module_builder m;
  bounded_chain(m);
  const ir::module mod = m.get();
  const ir::memory_need need = ir::planned_memory(mod, "main");
  CHECK(need.bounded);
  CHECK(need.bytes == 256);
  CHECK(need.storages == 3);
  CHECK(ir::planned_bytes(mod, "main", {}, 8) == 32 + 40 + 40 + 32);
  // Without the bound, or with recursion, there is no figure, and the message says why.
  const ir::memory_need open = ir::planned_memory(chain_module(true, 0), "main");
  CHECK_FALSE(open.bounded);
  CHECK(contains(open.message.view(), "function 'main': the size of storage 'storage', 8 * n bytes, has no upper bound"));
  CHECK(ir::planned_bytes(chain_module(false, 0), "main") == 3 * 64);
  CHECK(contains(ir::planned_memory(mod, "nope").message.view(), "no function 'nope'"));
  ir::module_builder r;
  {
    auto f = r.function("main", {{"x", ir::tensor_info({4}, f32)}});
    f.ret(f.call("main", {f.call_dps("relu", {f.param(0)}, ir::tensor_info({4}, f32))}, ir::tensor_info({4}, f32)));
  }
  CHECK(contains(ir::planned_memory(r.get(), "main").message.view(), "function 'main' calls itself, directly or not"));
}

TEST_CASE("planned_memory counts what the builtins a program calls allocate, and an arena of that size suffices (issue 33)") {
  // main(x: (n, 4), n <= 4): y = to_device(x) (a copy), a storage of 16n bytes from
  // vm.builtin.alloc_storage, z = shape_to_tensor(shape(y)), then relu(y), returned (its own
  // storage). Each is at most 64 bytes, as is the shape heap: 5 x 64.
  const auto t = [](ir::sym d) { return ir::tensor_info({d, 4}, f32); };
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", t(n)}});
    f.upper_bound(n, 4);
    const ir::var y = f.call_packed("vm.builtin.to_device", {f.param(0), ir::prim(1), ir::prim(0)}, t(n));
    f.call_builtin("vm.builtin.alloc_storage", {ir::shape_arg({n * 16}), ir::prim(0), ir::dtype_arg(rv::dtype::uint8())},
                   ir::object_info());
    f.call_packed("vm.builtin.shape_to_tensor", {f.shape_of(y)}, ir::tensor_info({2}, rv::dtype::int64()));
    f.ret(f.call_dps("relu", {y}, t(n)));
  }
  const ir::module mod = m.get();
  const ir::memory_need need = ir::planned_memory(mod, "main");
  CHECK(need.bounded);
  CHECK(need.bytes == 5 * 64);
  CHECK(need.storages == 2);
  // Run at the bound with an arena of exactly that size: before, the copy and the storage were
  // not counted and the arena ran out ("arena allocator: exhausted").
  rv::registry reg = chain_kernels();
  std::vector<std::byte> arena(static_cast<std::size_t>(need.bytes) + 64);
  const std::span<std::byte> buffer = [&] {  // 64-byte aligned, need.bytes long
    void* p = arena.data();
    std::size_t space = arena.size();
    std::align(64, static_cast<std::size_t>(need.bytes), p, space);
    return std::span<std::byte>(static_cast<std::byte*>(p), static_cast<std::size_t>(need.bytes));
  }();
  rv::vm_options opts;
  opts.devices = {{rv::device::cpu(), rv::allocator::arena(buffer)}};
  rv::virtual_machine vm(ir::build(mod), reg, opts);
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = iota(16);
    std::vector<float> want;
    for (float v : x) want.push_back(v > 0 ? v : 0.0f);
    check_floats(vm["main"](rv::tensor::from<float>(x, {4, 4})).as<rv::tensor>(), want);
  }

  // What cannot be bounded is refused, with the reason.
  const auto refused = [&](auto&& body) {
    ir::module_builder r;
    const ir::sym k = r.sym("k");
    {
      auto f = r.function("main", {{"x", t(k)}});
      body(f, k);
    }
    const ir::module rm = r.get();
    const ir::memory_need no = ir::planned_memory(rm, "main");
    CHECK_FALSE(no.bounded);
    CHECK(ir::planned_bytes(rm, "main") == -1);
    return std::string(no.message.view());
  };
  CHECK(contains(refused([&](ir::function_builder& f, const ir::sym& k) {  // k has no upper bound
                   f.ret(f.call_packed("vm.builtin.to_device", {f.param(0), ir::prim(1), ir::prim(0)}, t(k)));
                 }),
                 "function 'main': the size of the copy 'lv' has no upper bound (its dimension k)"));
  CHECK(contains(refused([&](ir::function_builder& f, const ir::sym& k) {
                   f.upper_bound(k, 4);
                   f.call_builtin("vm.builtin.alloc_storage", {ir::shape_arg({k}), ir::prim(0), ir::prim(4)}, ir::object_info());
                   f.ret(f.param(0));
                 }),
                 "has no shape of known values and dtype: its size is not known"));
  CHECK(contains(refused([&](ir::function_builder& f, const ir::sym& k) {
                   f.upper_bound(k, 4);
                   f.call_packed("vm.builtin.call_tir_dyn", {f.param(0), ir::shape_arg({k})}, ir::object_info());
                   f.ret(f.param(0));
                 }),
                 "vm.builtin.call_tir_dyn (making 'lv') may allocate memory that is not known here"));
}
