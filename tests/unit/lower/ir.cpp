// SPDX-License-Identifier: Apache-2.0
// The lowering layer's IR: symbolic expressions (folding, equality, proofs, printing), struct info
// printing, the builder's misuse errors, every rule of the well-formedness checker, and to_text.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <relaxvm/lower.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();
const rv::dtype i64 = rv::dtype::int64();
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
const std::string invalid_expr =
    "an invalid expression (a constant fold that overflows int64 or divides by zero, nesting deeper than "
    "ir::max_sym_depth or larger than ir::max_sym_nodes, or symbolic variables of another module_builder)";

// A module with a fresh arena, and symbolic variables on it.
struct arena_fixture {
  ir::module mod;
  ir::sym var(std::string_view name) { return ir::sym(&mod.syms, mod.syms.make_var(name)); }
  std::string show(const ir::sym& e) const {
    rv::detail::text t;
    mod.syms.print(t, e.ref());
    return std::string(t.view());
  }
  std::string show(const ir::struct_info& s) const {
    rv::detail::text t;
    ir::print_info(t, mod.syms, s);
    return std::string(t.view());
  }
  bool equal(const ir::sym& a, const ir::sym& b) const { return mod.syms.equal(a.ref(), b.ref()); }
  bool provable(const ir::sym& a, const ir::sym& b) const { return mod.syms.can_prove_equal(a.ref(), b.ref()); }
};

bool is_const(const ir::sym& e, std::int64_t v) { return e.is_const() && e.ref().value == v; }

// The builder's error for what `make` builds (it must fail).
template <class F>
std::string build_error(F&& make) {
  ir::module_builder m;
  make(m);
  rv::result<ir::module> r = m.try_get();
  REQUIRE(!r.ok());
  CHECK(r.error().kind() == rv::error_kind::value);
  return std::string(r.error().message());
}

// The checker's message for a module (it must be rejected).
std::string check_error(const ir::module& m) {
  rv::detail::text t;
  REQUIRE(!ir::check(m, t));
  return std::string(t.view());
}

// A valid module to break by hand: main(x: Tensor((n, 4))) { lv = k(x); lv1 = k(lv); return lv1 }.
ir::module small_module() {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, 4}, f32)}});
    const ir::var a = f.call_packed("k", {f.param(0)}, ir::tensor_info({n, 4}, f32));
    f.ret(f.call_packed("k", {a}, ir::tensor_info({n, 4}, f32)));
  }
  return m.get();
}
}  // namespace

TEST_CASE("sym: constants fold and neutral operands drop") {
  arena_fixture a;
  const ir::sym n = a.var("n"), m = a.var("m");
  CHECK(is_const(ir::sym(3) + 4, 7));
  CHECK(is_const(ir::sym(3) * 4 - 20, -8));
  CHECK(is_const(ir::floordiv(ir::sym(-7), 2), -4));  // floor, not truncation
  CHECK(is_const(ir::floormod(ir::sym(-7), 2), 1));
  CHECK(is_const(ir::floordiv(ir::sym(7), -2), -4));
  CHECK(is_const(ir::floormod(ir::sym(7), -2), -1));
  CHECK(is_const(ir::min(ir::sym(3), 5), 3));
  CHECK(is_const(ir::max(ir::sym(3), 5), 5));
  CHECK(is_const(ir::sym(3) < 5, 1));
  CHECK(is_const(!(ir::sym(3) < 5), 0));
  // Folding also happens on the arena (a constant operand with an arena pointer).
  CHECK(is_const(n * 0 + 5, 5));
  const std::size_t nodes = a.mod.syms.num_nodes();
  CHECK(a.equal(n + 0, n));
  CHECK(a.equal(0 + n, n));
  CHECK(a.equal(n - 0, n));
  CHECK(a.equal(n * 1, n));
  CHECK(a.equal(1 * n, n));
  CHECK(is_const(n * 0, 0));
  CHECK(is_const(0 * n, 0));
  CHECK(a.equal(ir::floordiv(n, 1), n));
  CHECK(is_const(ir::floormod(n, 1), 0));
  CHECK(a.equal(ir::min(m, m), m));
  CHECK(a.equal(ir::max(m, m), m));
  CHECK(a.mod.syms.num_nodes() == nodes);  // none of these made a node
  // 0 - n and n // n are not simplified (they are not neutral operands).
  CHECK_FALSE((0 - n).is_const());
  CHECK(a.show(0 - n) == "0 - n");
  CHECK(a.show(ir::floordiv(n, n)) == "n // n");
}

TEST_CASE("sym: folding never overflows") {
  arena_fixture a;
  const ir::sym n = a.var("n");
  // Outside any arena: the invalid marker.
  CHECK((ir::sym(int64_max) + 1).is_invalid());
  CHECK((ir::sym(int64_max) * 2).is_invalid());
  CHECK((ir::sym(std::numeric_limits<std::int64_t>::min()) - 1).is_invalid());
  CHECK(ir::floordiv(ir::sym(1), 0).is_invalid());
  CHECK(ir::floormod(ir::sym(1), 0).is_invalid());
  CHECK(is_const(ir::floormod(ir::sym(std::numeric_limits<std::int64_t>::min()), -1), 0));
  CHECK(ir::floordiv(ir::sym(std::numeric_limits<std::int64_t>::min()), -1).is_invalid());
  // On an arena: a node, never a wrapped constant.
  const ir::sym big = n * 0 + int64_max;
  REQUIRE(is_const(big, int64_max));
  const ir::sym over = big + 1;
  CHECK_FALSE(over.is_const());
  CHECK_FALSE(over.is_invalid());
  CHECK(a.show(over) == "9223372036854775807 + 1");
  std::int64_t out = 0;
  CHECK_FALSE(a.mod.syms.eval(over.ref(), {}, {}, out));
  const ir::sym div0 = ir::floordiv(n * 0 + 1, 0);
  CHECK_FALSE(div0.is_const());
  CHECK(a.show(div0) == "1 // 0");
}

TEST_CASE("sym: invalid expressions propagate, and depth is bounded by max_sym_depth") {
  arena_fixture a;
  const ir::sym n = a.var("n");
  const ir::sym bad = ir::sym(int64_max) + 1;
  REQUIRE(bad.is_invalid());
  CHECK((bad + n).is_invalid());
  CHECK((n * bad).is_invalid());
  CHECK((!bad).is_invalid());
  CHECK(ir::min(n, bad).is_invalid());
  ir::sym e = n;  // depth 1
  for (int i = 1; i < ir::max_sym_depth; ++i) e = e + 1;
  REQUIRE_FALSE(e.is_invalid());
  CHECK(a.mod.syms.depth(e.ref()) == ir::max_sym_depth);
  CHECK((e + 1).is_invalid());
  CHECK((!e).is_invalid());
  CHECK(a.mod.syms.depth(((n + 1) * (n + (n + 2))).ref()) == 4);
  CHECK(a.mod.syms.depth(ir::sym(5).ref()) == 0);
  // An invalid expression is reported where it is used.
  CHECK(build_error([&](ir::module_builder& m) {
          const ir::sym k = m.sym("k");
          ir::sym deep = k;
          for (int i = 0; i < ir::max_sym_depth; ++i) deep = deep * 2;
          auto f = m.function("main", {{"x", ir::tensor_info({k}, f32)}});
          f.ret(f.shape({deep}));
        }) == "ir::module_builder: function 'main', binding 1: an argument is " + invalid_expr);
}

TEST_CASE("sym: structural equality") {
  arena_fixture a;
  const ir::sym n = a.var("n"), m = a.var("m"), n2 = a.var("n");
  CHECK(a.equal(n * m, n * m));  // two nodes, one tree
  CHECK_FALSE(a.equal(n * m, m * n));
  CHECK_FALSE(a.equal(n, n2));  // same name, another variable
  CHECK_FALSE(a.equal(n + 1, n - 1));
  CHECK_FALSE(a.equal(n + 1, n + 2));
  CHECK_FALSE(a.equal(n, ir::sym(1)));
  CHECK(a.equal(ir::sym(2), ir::sym(2)));
  CHECK(a.equal(!(n > 1), !(n > 1)));
  CHECK_FALSE(a.equal(!(n > 1), !(n > 2)));
  CHECK(a.equal(ir::floordiv(n + 1, 2), ir::floordiv(n + 1, 2)));
}

TEST_CASE("sym: can_prove_equal, true and false") {
  arena_fixture a;
  const ir::sym n = a.var("n"), m = a.var("m"), k = a.var("k");
  CHECK(a.provable(n * m, m * n));
  CHECK(a.provable((n + 1) * 2, 2 * n + 2));
  CHECK(a.provable(4 * (m * n), m * 4 * n));
  CHECK(a.provable((n + m) * (n - m), n * n - m * m));
  CHECK(a.provable(n - n, ir::sym(0)));
  CHECK(a.provable(n + m + k, k + (m + n)));
  CHECK(a.provable(ir::sym(6), ir::sym(6)));
  // Atoms: floordiv / floormod / min / max subexpressions compared structurally.
  CHECK(a.provable(ir::floordiv(n, 2) * 2, 2 * ir::floordiv(n, 2)));
  CHECK(a.provable(ir::floordiv(n, 2) + ir::floormod(n, 2), ir::floormod(n, 2) + ir::floordiv(n, 2)));
  CHECK(a.provable(ir::min(n, m) + 1, 1 + ir::min(n, m)));
  // Not proved.
  CHECK_FALSE(a.provable(n, m));
  CHECK_FALSE(a.provable(n * m, n * k));
  CHECK_FALSE(a.provable(n + 1, n));
  CHECK_FALSE(a.provable((n + 1) * 2, 2 * n + 1));
  CHECK_FALSE(a.provable(ir::floordiv(n, 2) * 2, n));  // true only for even n
  CHECK_FALSE(a.provable(ir::floordiv(2 * n, 2), n));  // true, but floordiv is an atom
  CHECK_FALSE(a.provable(ir::min(n, m), ir::min(m, n)));  // atoms are compared structurally
  CHECK_FALSE(a.provable(ir::sym(6), ir::sym(7)));
}

TEST_CASE("sym: can_prove_equal does bounded work, then answers not proved (issue 33)") {
  arena_fixture a;
  const ir::sym n = a.var("n"), m = a.var("m");
  // prod(1 + n // k), its factors in the other order, and with the first factor written n // 2 + 1,
  // which only expanding the product (2^factors terms) can match: 16 factors took 11 s, 25 did not
  // finish.
  const auto product = [&](int factors, bool reversed, bool swapped) {
    ir::sym p(1);
    for (int i = 0; i < factors; ++i) {
      const ir::sym q = ir::floordiv(n, 2 + (reversed ? factors - 1 - i : i));
      p = p * (swapped && i == 0 ? q + 1 : 1 + q);
    }
    return p;
  };
  for (int factors : {25, 200}) {
    CAPTURE(factors);
    const ir::sym x = product(factors, false, false);
    REQUIRE(a.mod.syms.within_limits(x.ref()));
    std::int64_t budget = 10 * ir::max_proof_steps;
    CHECK_FALSE(a.mod.syms.can_prove_equal(x.ref(), product(factors, false, true).ref(), budget));
    CHECK(budget == 9 * ir::max_proof_steps);  // a proof that runs out spends exactly its cap
    CHECK(a.provable(x, x));
    // The same factors in another order are matched without expanding, while the steps last.
    const bool reordered = a.mod.syms.can_prove_equal(x.ref(), product(factors, true, false).ref(), budget);
    CHECK(reordered == (factors == 25));
  }
  // A proof that fits spends what it used, and a caller's budget caps it too.
  std::int64_t budget = ir::max_proof_steps;
  CHECK(a.mod.syms.can_prove_equal(((n + m) * (n - m)).ref(), (n * n - m * m).ref(), budget));
  CHECK(budget < ir::max_proof_steps);
  CHECK(budget > ir::max_proof_steps - 200);
  std::int64_t none = 0;
  CHECK_FALSE(a.mod.syms.can_prove_equal((n * m).ref(), (m * n).ref(), none));
  const ir::sym nm = n * m;
  CHECK(a.mod.syms.can_prove_equal(nm.ref(), nm.ref(), none));
  CHECK(none == 0);
  // Products of the same factors, grouped another way: a reshape's element counts.
  CHECK(a.provable(4 * ((n + 1) * (m + 2)), (m + 2) * 2 * ((n + 1) * 2)));
  CHECK_FALSE(a.provable(4 * ((n + 1) * (m + 2)), (m + 2) * 2 * (n + 1)));
}

TEST_CASE("sym: printing in TVMScript's spelling") {
  arena_fixture a;
  const ir::sym n = a.var("n"), m = a.var("m");
  CHECK(a.show(n * 2 + 1) == "n * 2 + 1");
  CHECK(a.show((n + 1) * 2) == "(n + 1) * 2");
  CHECK(a.show(n - m - 1) == "n - m - 1");
  CHECK(a.show(n - (m - 1)) == "n - (m - 1)");
  CHECK(a.show(n + (m + 1)) == "n + (m + 1)");
  CHECK(a.show(n * (m * 2)) == "n * (m * 2)");
  CHECK(a.show(ir::floordiv(n, 2)) == "n // 2");
  CHECK(a.show(ir::floordiv(n * 4, m + 1)) == "n * 4 // (m + 1)");
  CHECK(a.show(ir::floormod(n + 1, m)) == "(n + 1) % m");
  CHECK(a.show(ir::min(n, m)) == "T.min(n, m)");
  CHECK(a.show(ir::max(n + 1, m * 2) * 3) == "T.max(n + 1, m * 2) * 3");
  CHECK(a.show(n * -1) == "n * (-1)");
  CHECK(a.show(ir::sym(-1) * 0 + n * 0 - 3) == "-3");
  CHECK(a.show(ir::eq(n, m)) == "n == m");
  CHECK(a.show(ir::ne(n, 1)) == "n != 1");
  CHECK(a.show(n <= 4) == "n <= 4");
  CHECK(a.show(n >= 4) == "n >= 4");
  CHECK(a.show(n > 4 && m < 2) == "n > 4 and m < 2");
  CHECK(a.show(n > 4 || (m < 2 && n < 3)) == "n > 4 or m < 2 and n < 3");
  CHECK(a.show((n > 4 || m < 2) && n < 3) == "(n > 4 or m < 2) and n < 3");
  CHECK(a.show(!(n > 4)) == "not n > 4");
  CHECK(a.show(!(n > 4) && m < 1) == "not n > 4 and m < 1");
  CHECK(a.show(!(n > 4 || m < 1)) == "not (n > 4 or m < 1)");
  CHECK(a.show(n + (n < m)) == "n + (n < m)");
}

TEST_CASE("sym: free variables and evaluation") {
  arena_fixture a;
  const ir::sym n = a.var("n"), m = a.var("m"), k = a.var("k");
  std::vector<std::int64_t> vars;
  a.mod.syms.free_vars((k * n + m * k).ref(), vars);
  CHECK(vars == std::vector<std::int64_t>{2, 0, 1});
  const std::int64_t values[] = {7, 3, 0};
  const bool known[] = {true, true, false};
  std::int64_t out = 0;
  REQUIRE(a.mod.syms.eval((ir::floordiv(n - 10, m) + ir::floormod(n, m) * 100).ref(), values, known, out));
  CHECK(out == -1 + 100);
  REQUIRE(a.mod.syms.eval((n > 4 && !(m > 4)).ref(), values, known, out));
  CHECK(out == 1);
  CHECK_FALSE(a.mod.syms.eval((n + k).ref(), values, known, out));  // k has no value
  CHECK_FALSE(a.mod.syms.eval(ir::floordiv(n, m - 3).ref(), values, known, out));  // division by zero
  CHECK(a.mod.syms.var_name(1) == "m");
  CHECK(a.mod.syms.num_vars() == 3);
}

TEST_CASE("struct info: every printed form") {
  arena_fixture a;
  const ir::sym n = a.var("n"), m = a.var("m");
  CHECK(a.show(ir::tensor_info({n, 16}, f32)) == "R.Tensor((n, 16), dtype=\"float32\")");
  CHECK(a.show(ir::tensor_info({n}, f32)) == "R.Tensor((n,), dtype=\"float32\")");
  CHECK(a.show(ir::tensor_info({n * 2 + 1, m}, i64)) == "R.Tensor((n * 2 + 1, m), dtype=\"int64\")");
  CHECK(a.show(ir::tensor_info({}, rv::dtype::bool_())) == "R.Tensor((), dtype=\"bool\")");
  CHECK(a.show(ir::tensor_info({n, 2}, rv::dtype::void_())) == "R.Tensor((n, 2))");
  CHECK(a.show(ir::tensor_info(f32, 2)) == "R.Tensor(dtype=\"float32\", ndim=2)");
  CHECK(a.show(ir::tensor_info(f32)) == "R.Tensor(dtype=\"float32\")");
  CHECK(a.show(ir::tensor_info(rv::dtype::void_(), 3)) == "R.Tensor(ndim=3)");
  CHECK(a.show(ir::tensor_info()) == "R.Tensor");
  CHECK(a.show(ir::tensor_info(f32, -7)) == "R.Tensor(dtype=\"float32\")");  // ndim below -1: unknown
  CHECK(a.show(ir::shape_info({n, 2})) == "R.Shape([n, 2])");
  CHECK(a.show(ir::shape_info({n})) == "R.Shape([n])");
  CHECK(a.show(ir::shape_info({})) == "R.Shape([])");
  CHECK(a.show(ir::shape_info(2)) == "R.Shape(ndim=2)");
  CHECK(a.show(ir::shape_info()) == "R.Shape(ndim=-1)");
  CHECK(a.show(ir::prim_info()) == "R.Prim(\"int64\")");
  CHECK(a.show(ir::prim_info(rv::dtype::bool_())) == "R.Prim(\"bool\")");
  CHECK(a.show(ir::prim_info(i64, n)) == "R.Prim(value=n)");
  CHECK(a.show(ir::prim_info(i64, n * m)) == "R.Prim(value=n * m)");
  CHECK(a.show(ir::tuple_info({ir::tensor_info({n}, f32), ir::tuple_info({ir::shape_info(), ir::object_info()})})) ==
        "R.Tuple(R.Tensor((n,), dtype=\"float32\"), R.Tuple(R.Shape(ndim=-1), R.Object))");
  CHECK(a.show(ir::void_info()) == "R.Tuple");
  CHECK(ir::void_info().is_void());
  CHECK(a.show(ir::object_info()) == "R.Object");
  CHECK(a.show(ir::func_info()) == "R.Callable");
}

TEST_CASE("builder: misuse is reported by get(), with the function and binding") {
  const std::string prefix = "ir::module_builder: function 'main', binding ";
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::tuple_info({ir::object_info(), ir::object_info()})}});
          const ir::var a = f.get_item(f.param(0), 1);
          f.ret(f.get_item(f.param(0), 2));
          (void)a;
        }) == prefix + "2: get_item: index 2 is outside a tuple of 2 fields");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::tuple_info({ir::object_info()})}});
          f.ret(f.get_item(f.param(0), -1));
        }) == prefix + "1: get_item: index -1 is outside a tuple of 1 fields");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.get_item(f.param(0), -1));
        }) == prefix + "1: get_item: index -1 is negative");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::tensor_info()}});
          f.ret(f.get_item(f.param(0), 0));
        }) == prefix + "1: get_item: the value is not a tuple");
  const std::string dps = "1: call_dps('k'): the outputs must be a tensor of known shape and dtype, or a tuple of them "
                          "(lowering allocates them), but got ";
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call_dps("k", {f.param(0)}, ir::tensor_info(f32, 2)));
        }) == prefix + dps + "R.Tensor(dtype=\"float32\", ndim=2)");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call_dps("k", {f.param(0)}, ir::tensor_info({2}, rv::dtype::void_())));
        }) == prefix + dps + "R.Tensor((2,))");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call_dps("k", {f.param(0)}, ir::tuple_info({ir::tensor_info({2}, f32), ir::shape_info()})));
        }) == prefix + dps + "R.Tuple(R.Tensor((2,), dtype=\"float32\"), R.Shape(ndim=-1))");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call_dps("k", {f.param(0)}, ir::void_info()));
        }) == prefix + dps + "R.Tuple");
  CHECK(build_error([](ir::module_builder& m) {
          ir::var other;
          {
            auto g = m.function("g", {{"y", ir::object_info()}});
            other = g.param(0);
            g.ret(other);
          }
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call_packed("k", {other}, ir::object_info()));
        }) == prefix + "1: an argument is a variable of another function");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call_packed("", {f.param(0)}, ir::object_info()));
        }) == prefix + "1: a call needs a non-empty function name");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          auto df = f.dataflow();
          f.ret(f.if_(
              f.param(0), [&](ir::block_builder&) { return f.param(0); }, [&](ir::block_builder&) { return f.param(0); }));
        }) == prefix + "1: if_ inside a dataflow block; end the dataflow scope first (dataflow blocks hold no control flow)");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.rename(f.call_packed("k", {}, ir::object_info()), "x"));
        }) == prefix + "2: rename: the name 'x' is taken");
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym n = m.sym("n");
          auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
          f.upper_bound(n * 2, 4);
          f.ret(f.param(0));
        }) == prefix + "1: upper_bound: the first argument must be a symbolic variable of this module_builder");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.constant(f32, {2}, {1, 2, 3}));
        }) == prefix + "1: constant: 3 bytes do not hold a tensor of 2 float32 elements");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.constant(f32, {-1}, {}));
        }) == prefix + "1: constant: dimensions must be 0 or more and their product must fit in int64");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.prim_value(ir::sym(int64_max) + 1));
        }) == prefix + "1: an argument is " + invalid_expr);
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call_packed("k", {f.param(0)}, ir::tensor_info({ir::floordiv(ir::sym(1), 0)}, f32)));
        }) == prefix + "1: the annotation has " + invalid_expr);
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::tensor_info({ir::sym(int64_max) * 2}, f32)}});
          f.ret(f.param(0));
        }) == "ir::module_builder: function 'main': the annotation of parameter 'x' has " + invalid_expr);
  // Only the first error is kept.
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          const ir::var a = f.call_packed("", {}, ir::object_info());
          f.ret(f.get_item(a, -1));
        }) == prefix + "1: a call needs a non-empty function name");
  // get() while a function is open.
  ir::module_builder m;
  auto f = m.function("main", {{"x", ir::object_info()}});
  f.ret(f.param(0));
  rv::result<ir::module> r = m.try_get();
  REQUIRE(!r.ok());
  CHECK(r.error().message() == "ir::module_builder: a function is still open; end it (its scope does) before get()");
  f.end();
  CHECK(m.try_get().ok());
}

TEST_CASE("checker: the rules reachable through the builder") {
  const std::string undefined = " is used before it is defined; define it first as a bare dimension of a parameter's or a "
                                "match_cast's annotation";
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("", {{"x", ir::object_info()}});
          f.ret(f.param(0));
        }) == "ir: function '': a function needs a non-empty name");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"", ir::object_info()}});
          f.ret(f.param(0));
        }) == "ir: function 'main': parameter 0 needs a name");
  // A composite alone defines nothing.
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym n = m.sym("n");
          auto f = m.function("main", {{"x", ir::object_info()}, {"y", ir::tensor_info({n + 1}, f32)}});
          f.ret(f.param(0));
        }) == "ir: function 'main': symbolic variable 'n' in the annotation of parameter 'y'" + undefined);
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym n = m.sym("n");
          auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
          f.num_input(2);
          f.ret(f.param(0));
        }) == "ir: function 'main': num_input is 2 but the function has 1 parameters");
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym n = m.sym("n");
          auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
          f.upper_bound(n, 0);
          f.ret(f.param(0));
        }) == "ir: function 'main': the upper bound of 'n' is 0; it must be positive");
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym n = m.sym("n"), k = m.sym("k");
          auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
          f.upper_bound(k, 4);
          f.ret(f.param(0));
        }) == "ir: function 'main': upper_bound names 'k', which is not a symbolic variable of this function's parameters");
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym n = m.sym("n"), k = m.sym("k");
          auto f = m.function("main", {{"x", ir::tensor_info({n}, f32)}});
          f.ret(f.param(0), ir::tensor_info({k}, f32));
        }) == "ir: function 'main': symbolic variable 'k' in the return annotation" + undefined);
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym k = m.sym("k");
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.prim_value(k * 2));
        }) == "ir: function 'main', binding 1 (lv): symbolic variable 'k' in a prim value" + undefined);
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym k = m.sym("k");
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.shape({2, k}));
        }) == "ir: function 'main', binding 1 (lv): symbolic variable 'k' in a shape" + undefined);
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym k = m.sym("k");
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.match_cast(f.param(0), ir::tensor_info({k + 1}, f32)));
        }) == "ir: function 'main', binding 1 (lv): symbolic variable 'k' in the match_cast annotation" + undefined);
  // A match_cast defines its bare variables for what follows, and its own composites.
  {
    ir::module_builder m;
    const ir::sym k = m.sym("k");
    {
      auto f = m.function("main", {{"x", ir::object_info()}});
      f.match_cast(f.param(0), ir::tensor_info({k, k + 1}, f32));
      f.ret(f.shape({k * 2}));
    }
    CHECK(m.try_get().ok());
  }
  // What an if branch matches stays in the branch.
  CHECK(build_error([](ir::module_builder& m) {
          const ir::sym k = m.sym("k");
          auto f = m.function("main", {{"x", ir::object_info()}});
          const ir::var x = f.param(0);
          f.if_(
              x, [&](ir::block_builder& b) { return b.match_cast(x, ir::shape_info({k})); },
              [&](ir::block_builder&) { return x; });
          f.ret(f.shape({k}));
        }) == "ir: function 'main', binding 3 (lv2): symbolic variable 'k' in a shape" + undefined);
  // The if's value cannot name what a branch defines: its info forgets k (the reference's
  // normalizer erases such variables, EraseToWellDefined), so the module is well formed.
  {
    ir::module_builder m;
    const ir::sym k = m.sym("k");
    {
      auto f = m.function("main", {{"x", ir::object_info()}, {"c", ir::object_info()}});
      const ir::var x = f.param(0);
      const auto branch = [&](ir::block_builder& b) { return b.match_cast(x, ir::shape_info({k})); };
      f.ret(f.if_(f.param(1), branch, branch));
    }
    const rv::result<ir::module> r = m.try_get();
    CHECK(r.ok());
    if (r.ok()) {
      const ir::function& f = r.value().funcs[0];
      const ir::struct_info& info = f.var(f.body.result.index).info;
      CHECK(info.kind == ir::info_kind::shape);
      CHECK(info.ndim == 1);
      CHECK_FALSE(info.known);
    }
  }
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          ir::var inner;
          const ir::var x = f.param(0);
          f.if_(
              x,
              [&](ir::block_builder& b) {
                inner = b.call_packed("k", {x}, ir::object_info());
                return inner;
              },
              [&](ir::block_builder&) { return x; });
          f.ret(inner);
        }) == "ir: function 'main', result: variable 'lv' is defined inside an if branch and is not visible here; return "
              "it from the branch");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          ir::var d;
          {
            auto df = f.dataflow();
            d = f.call_packed("k", {f.param(0)}, ir::object_info());
          }
          f.ret(f.call_packed("k", {d}, ir::object_info()));
        }) == "ir: function 'main', binding 2 (lv1): variable 'lv' is a dataflow variable of an earlier block; only the "
              "block's outputs are visible after it (call output() on the dataflow scope)");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.make_closure("missing", {f.param(0)}));
        }) == "ir: function 'main', binding 1 (lv): function 'missing' is not in the module");
  CHECK(build_error([](ir::module_builder& m) {
          {
            auto g = m.function("g", {{"a", ir::object_info()}});
            g.ret(g.param(0));
          }
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.make_closure("g", {f.param(0), f.param(0)}));
        }) == "ir: function 'main', binding 1 (lv): make_closure captures 2 values but 'g' has only 1 parameters");
  CHECK(build_error([](ir::module_builder& m) {
          auto f = m.function("main", {{"x", ir::object_info()}});
          f.ret(f.call("main", {f.param(0), f.param(0)}, ir::object_info()));
        }) == "ir: function 'main', binding 1 (lv): calls 'main' with 2 arguments; it has 1 parameters");
  // Functions may be called before they are defined, and recursively.
  {
    ir::module_builder m;
    {
      auto f = m.function("main", {{"x", ir::object_info()}});
      f.ret(f.call("later", {f.param(0)}, ir::object_info()));
    }
    {
      auto g = m.function("later", {{"a", ir::object_info()}});
      g.ret(g.call("later", {g.param(0)}, ir::object_info()));
    }
    CHECK(m.try_get().ok());
  }
}

TEST_CASE("checker: two symbolic variables of one name in one function are rejected (sym.hpp's make_var promises it)") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), n2 = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, n2}, f32)}});
    f.ret(f.param(0));
  }
  // Printed, the annotation reads (n, n): a square matrix, which it is not.
  CHECK_FALSE(m.try_get().ok());
}

TEST_CASE("checker: the rules only a hand-built module can break") {
  REQUIRE(small_module().funcs.size() == 1);
  {
    rv::detail::text t;
    CHECK(ir::check(small_module(), t));
    CHECK(t.empty());
  }
  const std::string at2 = "function 'main', binding 2 (lv1): ";
  ir::module m = small_module();
  m.funcs[0].body.blocks[0].bindings[1].var = 1;  // lv bound again
  CHECK(check_error(m) == "function 'main', binding 2 (lv): variable 'lv' is defined twice; each variable is bound once");
  m = small_module();
  m.funcs[0].body.blocks[0].bindings[1].value.args[0] = ir::leaf::of_var(99);
  CHECK(check_error(m) == at2 + "an argument names variable 99, which does not exist");
  m = small_module();
  m.funcs[0].body.blocks[0].bindings[0].value.args[0] = ir::leaf::of_var(2);  // lv1, bound after
  CHECK(check_error(m) == "function 'main', binding 1 (lv): variable 'lv1' is used before it is defined");
  m = small_module();
  m.funcs[0].body.blocks[0].bindings[1].value.args[0] = ir::leaf::of_constant(3);
  CHECK(check_error(m) == at2 + "constant 3 does not exist");
  m = small_module();
  m.funcs[0].body.result = ir::leaf::of_var(42);
  CHECK(check_error(m) == "function 'main', result: an argument names variable 42, which does not exist");
  m = small_module();
  m.funcs[0].params[0] = 7;
  CHECK(check_error(m) == "function 'main': parameter 0 names no variable");
  m = small_module();
  m.funcs[0].var(0).dataflow = true;  // a dataflow parameter, returned
  m.funcs[0].body.result = ir::leaf::of_var(0);
  CHECK(check_error(m) == "function 'main': returns dataflow variable 'x'; make it an output of its dataflow block");
  m = small_module();
  m.funcs[0].var(0).info.invalid = true;
  CHECK(check_error(m) == "function 'main': the annotation of parameter 'x' has " + invalid_expr);
  m = small_module();
  m.funcs[0].ret_info = ir::tensor_info(f32, 2);
  m.funcs[0].ret_info.invalid = true;
  m.funcs[0].has_ret_info = true;
  CHECK(check_error(m) == "function 'main': the return annotation has " + invalid_expr);
  m = small_module();
  m.funcs.push_back(m.funcs[0]);
  m.funcs[1].nm = "other";
  // The copy's parameter defines n again: n belongs to 'main'.
  CHECK(check_error(m) == "function 'other': symbolic variable 'n' belongs to function 'main'; make a new one with "
                          "module_builder::sym() for each function");
  m = small_module();
  m.funcs[0].body.blocks[0].bindings[1].value.kind = ir::expr_kind::call_func;
  m.funcs[0].body.blocks[0].bindings[1].value.callee = "nowhere";
  CHECK(check_error(m) == at2 + "calls function 'nowhere', which is not in the module");
}

TEST_CASE("to_text: a module in TVMScript's style") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("add1", {{"a", ir::tensor_info({4}, f32)}, {"b", ir::tensor_info({4}, f32)}});
    f.ret(f.call_packed("test.add", {f.param(0), f.param(1)}, ir::tensor_info({4}, f32)));
  }
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, 4}, f32)}, {"w", ir::tensor_info({4}, f32)}});
    f.num_input(1);
    f.upper_bound(n, 8);
    ir::var r;
    {
      auto df = f.dataflow();
      const ir::var a = f.call_dps("ops.relu_out", {f.param(0)}, ir::tensor_info({n, 4}, f32));
      const ir::var s = f.shape_of(a);
      const ir::var t = f.tuple({f.reshape(a, {n * 4}), s, ir::prim(n + 1), ir::str("hi"), ir::dtype_arg(f32)});
      r = f.get_item(t, 0);
      df.output(r);
    }
    const ir::var c = f.constant(f32, {1}, {0, 0, 128, 63});
    const ir::var w = f.invoke_closure(f.make_closure("add1", {c}), {f.param(1)}, ir::tensor_info({4}, f32));
    const ir::var b = f.if_(
        ir::prim(n > 4), [&](ir::block_builder& bb) { return bb.call_builtin("vm.builtin.copy", {w}, ir::tensor_info({4}, f32)); },
        [&](ir::block_builder&) { return w; });
    const ir::var mc = f.rename(f.match_cast(b, ir::tensor_info({4}, f32)), "checked");
    f.call_packed("test.log", {mc, ir::prim(1, rv::dtype::bool_()), ir::shape_arg({n, 2})});
    f.ret(f.tuple({r, f.call("add1", {mc, mc}, ir::tensor_info({4}, f32))}),
          ir::tuple_info({ir::tensor_info(f32, 1), ir::object_info()}));
  }
  CHECK(ir::to_text(m.get()) ==
        R"(@R.function
def add1(a: R.Tensor((4,), dtype="float32"), b: R.Tensor((4,), dtype="float32")):
    lv: R.Tensor((4,), dtype="float32") = R.call_packed("test.add", a, b, sinfo_args=(R.Tensor((4,), dtype="float32"),))
    return lv

@R.function
def main(x: R.Tensor((n, 4), dtype="float32"), w: R.Tensor((4,), dtype="float32")) -> R.Tuple(R.Tensor(dtype="float32", ndim=1), R.Object):
    R.func_attr({"num_input": 1, "tir_var_upper_bound": {"n": 8}})
    with R.dataflow():
        lv: R.Tensor((n, 4), dtype="float32") = R.call_dps_packed("ops.relu_out", (x,), out_sinfo=R.Tensor((n, 4), dtype="float32"))
        lv1: R.Shape([n, 4]) = R.shape_of(lv)
        lv2: R.Tensor((n * 4,), dtype="float32") = R.reshape(lv, R.shape([n * 4]))
        lv3: R.Tuple(R.Tensor((n * 4,), dtype="float32"), R.Shape([n, 4]), R.Prim(value=n + 1), R.Object, R.Object) = (lv2, lv1, R.prim_value(n + 1), R.str("hi"), R.dtype("float32"))
        lv4: R.Tensor((n * 4,), dtype="float32") = lv3[0]
        R.output(lv4)
    lv5: R.Tensor((1,), dtype="float32") = metadata["relax.expr.Constant"][0]
    lv6: R.Callable = R.make_closure(cls.add1, (lv5,))
    lv7: R.Tensor((4,), dtype="float32") = R.invoke_closure(lv6, (w,), sinfo_args=(R.Tensor((4,), dtype="float32"),))
    if R.prim_value(n > 4):
        lv8: R.Tensor((4,), dtype="float32") = R.call_builtin_with_ctx("vm.builtin.copy", (lv7,), sinfo_args=(R.Tensor((4,), dtype="float32"),))
        lv9 = lv8
    else:
        lv9 = lv7
    checked: R.Tensor((4,), dtype="float32") = R.match_cast(lv9, R.Tensor((4,), dtype="float32"))
    _ = R.call_packed("test.log", checked, R.prim_value(True), R.shape([n, 2]))
    lv12: R.Tensor((4,), dtype="float32") = cls.add1(checked, checked)
    lv13: R.Tuple(R.Tensor((n * 4,), dtype="float32"), R.Tensor((4,), dtype="float32")) = (lv4, lv12)
    return lv13
)");
}

// The IR works inside constant evaluation: build, check and print a module at compile time.
static_assert([] {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n}, rv::dtype::float32())}});
    f.ret(f.shape({n * 2 + 1}));
  }
  const ir::sym a = n * 2 + 1, b = 1 + 2 * n;  // before finish(), which copies the arena
  const ir::module_output out = m.finish();
  rv::detail::text t;
  ir::print(out.mod, t);
  return out.ok() && out.mod.syms.can_prove_equal(a.ref(), b.ref()) &&
         t.view() == "@R.function\ndef main(x: R.Tensor((n,), dtype=\"float32\")):\n"
                     "    lv: R.Shape([n * 2 + 1]) = R.shape([n * 2 + 1])\n    return lv\n";
}());

// Last in the file: check.hpp's fail_at reads the name of the variable that does not exist (an
// out-of-bounds read: AddressSanitizer reports it, and without it the test may crash).
TEST_CASE("checker: a binding of a variable that does not exist is reported without naming it") {
  ir::module m = small_module();
  m.funcs[0].body.blocks[0].bindings[1].var = 99;
  CHECK(check_error(m) == "function 'main', binding 2: binds variable 99, which does not exist");
}
