// SPDX-License-Identifier: Apache-2.0
// ir::pass::static_plan_block_memory (StaticPlanBlockMemory, docs/lowering.md) and
// ir::pass::rewrite_dataflow_reshape (RewriteDataflowReshape, 1.1) alone: which tensors share
// which storage, of what size, where the storages are made, and which calls become views. The
// reference's tests are named where a case follows one. tests/unit/lower.cpp runs such programs.
#include <doctest/doctest.h>

#include <relaxvm/lower.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {
const rv::dtype f32 = rv::dtype::float32();
const rv::dtype i32 = rv::dtype::int32();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The planner's usual input: to_non_dataflow, then call_tir_rewrite.
ir::module planned(const ir::module& m, ir::plan_options o = {}) {
  return ir::pass::static_plan_block_memory(ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(m)), o);
}

// Per binding of main's body (branches not included): "S<bytes>" for an alloc_storage,
// "T<storage index>" for a tensor carved from the storage made by the S at that index (in order of
// the S entries), "U" for a tensor left unplanned.
std::vector<std::string> plan_of(const ir::module& m, std::string_view fn = "main") {
  const ir::function& f = m.funcs[static_cast<std::size_t>(m.find(fn))];
  std::vector<std::int32_t> storages;
  std::vector<std::string> out;
  for (const ir::block& b : f.body.blocks)
    for (const ir::binding& x : b.bindings) {
      if (x.value.kind == ir::expr_kind::mem_alloc_storage) {
        storages.push_back(x.var);
        rv::detail::text t;
        m.syms.print(t, x.value.args[0].dims[0]);
        out.push_back("S" + std::string(t.view()));
      } else if (x.value.kind == ir::expr_kind::mem_alloc_tensor) {
        std::size_t i = 0;
        while (i < storages.size() && storages[i] != x.value.args[0].index) ++i;
        out.push_back("T" + std::to_string(i));
      } else if (x.value.kind == ir::expr_kind::builtin_alloc_tensor) {
        out.push_back("U");
      }
    }
  return out;
}
using plan = std::vector<std::string>;

// exp(x) -> reshape -> relu -> add -> pad -> log (test_basic), with x of shape (2, `cols`).
template <class Dim>
void basic_chain(ir::function_builder& f, Dim cols, bool dataflow = true) {
  ir::sym n(cols);
  auto df = f.dataflow();
  if (!dataflow) df.end();
  const ir::var a = f.call_dps("exp", {f.param(0)}, ir::tensor_info({2, n}, f32));
  const ir::var b = f.reshape(a, {n * 2});
  const ir::var c = f.call_dps("relu", {b}, ir::tensor_info({n * 2}, f32));
  const ir::var d = f.call_dps("add", {c}, ir::tensor_info({n * 2}, f32));
  const ir::var e = f.call_dps("pad", {d}, ir::tensor_info({n * 2 + 2}, f32));
  const ir::var g = f.call_dps("log", {e}, ir::tensor_info({n * 2 + 2}, f32));
  df.output(g);
  df.end();
  f.ret(g);
}
}  // namespace

TEST_CASE("static_plan_block_memory: test_basic, 3 storages of 32, 40 and 40 bytes for 5 tensors") {
  ir::module_builder m;
  {
    auto f = m.function("main", {{"x", ir::tensor_info({2, 4}, f32)}});
    basic_chain(f, 4);
  }
  const ir::module after = planned(m.get());
  // alloc in S0 (32); alloc1 in a new S1 (S0 is busy); alloc2 reuses S0; alloc3 (40 bytes) takes
  // S1, enlarged to 40; the returned alloc4 is unplanned (lower_alloc_tensor gives it the third).
  CHECK(plan_of(after) == plan{"S32", "T0", "S40", "T1", "T0", "T1", "U"});
  const std::string text = ir::to_text(after);
  CHECK(contains(text, "    storage: R.Object = R.memory.alloc_storage(R.shape([32]), R.prim_value(0), R.str(\"global\"), "
                       "R.dtype(\"float32\"))\n"
                       "    alloc: R.Tensor((2, 4), dtype=\"float32\") = R.memory.alloc_tensor(storage, R.prim_value(0), "
                       "R.shape([2, 4]), R.dtype(\"float32\"))\n"));
  CHECK(contains(text, "    storage1: R.Object = R.memory.alloc_storage(R.shape([40]), R.prim_value(0), R.str(\"global\"), "
                       "R.dtype(\"float32\"))\n"));
  CHECK(contains(text, "    alloc3: R.Tensor((10,), dtype=\"float32\") = R.memory.alloc_tensor(storage1, R.prim_value(0), "
                       "R.shape([10]), R.dtype(\"float32\"))\n"));
  CHECK(contains(text, "    alloc4: R.Tensor((10,), dtype=\"float32\") = R.builtin.alloc_tensor(R.shape([10]), "
                       "R.dtype(\"float32\"), R.prim_value(0), R.str(\"global\"))\n"));
  rv::detail::text err;
  CHECK(ir::check(after, err));
  // After the rest of the pipeline: three storages, each killed after its last tensor is carved.
  const std::string lowered = ir::to_text(ir::lower(m.get()));
  CHECK(contains(lowered, "R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([8]), R.dtype(\"float32\"))\n"
                          "    _ = R.vm.kill_object(storage)\n"));
  CHECK(contains(lowered, "storage2: R.Object = R.vm.alloc_storage(R.shape([40]), R.prim_value(0), R.dtype(\"uint8\"), "
                          "R.str(\"global\"))\n"));
  CHECK_FALSE(contains(lowered, "storage3"));
}

TEST_CASE("static_plan_block_memory: dtypes never share; a tensor no call uses keeps its storage") {
  ir::module_builder m;
  {
    // test_different_dtype: intermediates of 64 bytes, float32 and int32.
    auto f = m.function("main", {{"x", ir::tensor_info({16}, f32)}});
    const ir::var a = f.call_dps("k1", {f.param(0)}, ir::tensor_info({16}, f32));
    const ir::var b = f.call_dps("k2", {a}, ir::tensor_info({16}, i32));
    const ir::var c = f.call_dps("k3", {b}, ir::tensor_info({16}, f32));  // a's storage is free: reused
    const ir::var d = f.call_dps("k4", {c}, ir::tensor_info({16}, i32));  // b's storage is free: reused
    f.ret(f.call_dps("k5", {d}, ir::tensor_info({16}, f32)));
  }
  {
    auto f = m.function("zero", {{"x", ir::tensor_info({16}, f32)}});
    const ir::var a = f.call_dps("k1", {f.param(0)}, ir::tensor_info({16}, f32));
    (void)a;
    const ir::var b = f.call_dps("k2", {f.param(0)}, ir::tensor_info({16}, f32));
    f.ret(f.call_dps("k3", {b}, ir::tensor_info({16}, f32)));
  }
  ir::module before = ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(m.get()));
  // test_zero_reference: without the call that writes it, a's tensor is used by nothing; it gets a
  // storage of its own for good (b does not take it).
  std::vector<ir::binding>& zero = before.funcs[1].body.blocks[0].bindings;
  REQUIRE(zero[1].value.kind == ir::expr_kind::call_packed);
  zero.erase(zero.begin() + 1);
  const ir::module after = ir::pass::static_plan_block_memory(before);
  CHECK(plan_of(after) == plan{"S64", "T0", "S64", "T1", "T0", "T1", "U"});
  CHECK(contains(ir::to_text(after), "R.memory.alloc_storage(R.shape([64]), R.prim_value(0), R.str(\"global\"), R.dtype(\"int32\"))"));
  CHECK(plan_of(after, "zero") == plan{"S64", "T0", "S64", "T1", "U"});
}

TEST_CASE("static_plan_block_memory: constant sizes take the smallest fit within 16x, else grow the largest within 1/16") {
  ir::module_builder m;
  {
    auto f = m.function("main", {{"x", ir::tensor_info({4}, f32)}});
    const ir::var a = f.call_dps("k", {f.param(0)}, ir::tensor_info({100}, f32));  // 400 B
    const ir::var b = f.call_dps("k", {f.param(0)}, ir::tensor_info({10}, f32));   // 40 B
    const ir::var c = f.call_dps("k", {a, b}, ir::tensor_info({8}, f32));          // 32 B: both busy
    // Now a (400) and b (40) are free.
    const ir::var d = f.call_dps("k", {c}, ir::tensor_info({30}, i32));            // int32: new
    const ir::var e = f.call_dps("k", {c}, ir::tensor_info({6}, f32));             // 24 B: b (a is over 16x)
    // 2000 B: a (400) is the largest smaller one above 2000/16 = 125: it grows to 2000
    const ir::var g = f.call_dps("k", {e, d}, ir::tensor_info({500}, f32));
    // 4 B: c (32) is free and within 16x; a (2000) is not
    const ir::var h = f.call_dps("k", {g}, ir::tensor_info({1}, f32));
    f.ret(f.call_dps("k", {h}, ir::tensor_info({1}, f32)));
  }
  const ir::module after = planned(m.get());
  CHECK(plan_of(after) == plan{"S2000", "T0", "S40", "T1", "S32", "T2", "S120", "T3", "T1", "T0", "T2", "U"});
}

TEST_CASE("static_plan_block_memory: upper bounds make symbolic sizes constant (test_tir_var_upper_bound)") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({2, n}, f32)}});
    f.upper_bound(n, 4);
    basic_chain(f, n);
  }
  const ir::module after = planned(m.get());
  CHECK(plan_of(after) == plan{"S32", "T0", "S40", "T1", "T0", "T1", "U"});
  // The tensors keep their symbolic shapes.
  CHECK(contains(ir::to_text(after), "R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, n]), R.dtype(\"float32\"))"));
  CHECK(contains(ir::to_text(after), "R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([n * 2 + 2]), R.dtype(\"float32\"))"));
}

TEST_CASE("static_plan_block_memory: symbolic sizes, partial bounds, and reuse only when provably equal") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), k = m.sym("m");
  {
    // test_symbolic_shape: no bounds.
    auto f = m.function("main", {{"x", ir::tensor_info({k, n}, f32)}});
    const ir::var a = f.call_dps("k", {f.param(0)}, ir::tensor_info({k, n}, f32));
    const ir::var b = f.call_dps("k", {a}, ir::tensor_info({n, k}, f32));
    const ir::var c = f.call_dps("k", {b}, ir::tensor_info({k * n}, f32));      // 4 * (m * n): a's
    const ir::var d = f.call_dps("k", {c}, ir::tensor_info({k + 1, n}, f32));  // not provably equal: new
    f.ret(f.call_dps("k", {d}, ir::tensor_info({k, n}, f32)));
  }
  {
    // test_call_tir_dyn_plan_partially_dynamic: (n, m) with only n <= 20 is 80 * m bytes.
    const ir::sym n = m.sym("n"), k = m.sym("m");
    auto f = m.function("partial", {{"x", ir::tensor_info({n, k}, f32)}});
    f.upper_bound(n, 20);
    const ir::var a = f.call_dps("k", {f.param(0)}, ir::tensor_info({n, k}, f32));
    f.ret(f.call_dps("k", {a}, ir::tensor_info({n, k}, f32)));
  }
  {
    // test_tir_var_decreasing_monotone: max(n - m, 1) with n <= 20 and m <= 5 is at most 20.
    const ir::sym n = m.sym("n"), k = m.sym("m");
    auto f = m.function("monotone", {{"x", ir::tensor_info({n, k}, f32)}});
    f.upper_bound(n, 20);
    f.upper_bound(k, 5);
    const ir::var a = f.call_dps("k", {f.param(0)}, ir::tensor_info({ir::max(n - k, 1)}, f32));
    f.ret(f.call_dps("k", {a}, ir::tensor_info({n}, f32)));
  }
  const ir::module after = planned(m.get());
  CHECK(plan_of(after) == plan{"S4 * (m * n)", "T0", "S4 * (n * m)", "T1", "T0", "S4 * ((m + 1) * n)", "T2", "U"});
  CHECK(plan_of(after, "partial") == plan{"S80 * m", "T0", "U"});
  CHECK(plan_of(after, "monotone") == plan{"S80", "T0", "U"});
}

TEST_CASE("static_plan_block_memory: what escapes or leaves the block is not planned") {
  ir::module_builder m;
  const auto t4 = ir::tensor_info({4}, f32);
  {
    auto f = m.function("sub", {{"x", t4}});
    f.ret(f.param(0));
  }
  {
    // test_call_func_other_than_primfunc, a closure, a builtin taking the VM, a tuple returned.
    auto f = m.function("main", {{"x", t4}});
    const ir::var a = f.call_dps("k", {f.param(0)}, t4);
    const ir::var b = f.call("sub", {a}, t4);
    const ir::var c = f.call_dps("k", {b}, t4);
    const ir::var clo = f.make_closure("sub", {c});
    const ir::var d = f.call_dps("k", {f.param(0)}, t4);
    const ir::var e = f.call_builtin("test.keep", {d}, t4);
    const ir::var g = f.call_dps("k", {e}, t4);  // only used by kernels, but returned in a tuple
    const ir::var h = f.call_dps("k", {g}, t4);  // planned: used by a kernel, not returned
    const ir::var i = f.call_dps("k", {h}, t4);
    f.ret(f.tuple({clo, g, i}));
  }
  {
    // test_if_cond, test_if_then_else, test_cross_block_use
    auto f = m.function("branches", {{"x", t4}, {"c", ir::prim_info(rv::dtype::bool_())}});
    const ir::var cond = f.call_dps("k", {f.param(0)}, ir::tensor_info({}, rv::dtype::bool_()));
    const ir::var a = f.call_dps("k", {f.param(0)}, t4);  // used inside a branch
    const ir::var v = f.if_(
        cond, [&](ir::block_builder& b) { return b.call_dps("k", {a}, t4); },
        [&](ir::block_builder& b) {
          // Planned inside the branch: its own storage, from its own pool.
          const ir::var t = b.call_dps("k", {f.param(0)}, t4);
          return b.call_dps("k", {t}, t4);
        });
    f.ret(v);
  }
  const ir::module after = planned(m.get());
  CHECK(plan_of(after) == plan{"U", "U", "U", "U", "S16", "T0", "U"});
  CHECK(plan_of(after, "branches") == plan{"U", "U"});
  // The else branch plans its own tensor: the storage is made inside the branch.
  const ir::function& br = after.funcs[static_cast<std::size_t>(after.find("branches"))];
  const ir::expr* if_expr = nullptr;
  for (const ir::binding& x : br.body.blocks[0].bindings)
    if (x.value.kind == ir::expr_kind::if_) if_expr = &x.value;
  REQUIRE(if_expr != nullptr);
  std::vector<ir::expr_kind> kinds[2];
  for (int k = 0; k < 2; ++k)
    for (const ir::binding& x : if_expr->branches[static_cast<std::size_t>(k)].blocks[0].bindings) kinds[k].push_back(x.value.kind);
  using K = ir::expr_kind;
  CHECK(kinds[0] == std::vector<K>{K::builtin_alloc_tensor, K::call_packed, K::leaf});
  CHECK(kinds[1] == std::vector<K>{K::mem_alloc_storage, K::mem_alloc_tensor, K::call_packed, K::leaf,
                                   K::builtin_alloc_tensor, K::call_packed, K::leaf});
}

TEST_CASE("static_plan_block_memory: tokens follow match_cast and vm.builtin.reshape (apache/tvm#20190, #20134)") {
  const auto t4 = ir::tensor_info({4}, f32);
  for (int alias_kind = 0; alias_kind < 3; ++alias_kind) {
    ir::module_builder m;
    {
      auto f = m.function("main", {{"x", t4}});
      const ir::var a = f.call_dps("k1", {f.param(0)}, t4);
      ir::var alias;
      if (alias_kind == 0) alias = f.match_cast(a, t4);
      else if (alias_kind == 1) alias = f.call_packed("vm.builtin.reshape", {a, ir::shape_arg({4})}, t4);
      else alias = f.call_packed("vm.builtin.ensure_zero_offset", {a}, t4);  // test_view
      const ir::var c = f.call_dps("k2", {a}, t4);  // a's last direct use
      const ir::var d = f.call_dps("k3", {c}, t4);  // must not take a's storage: the alias is alive
      f.ret(f.call_dps("k4", {alias, d}, t4));
    }
    CAPTURE(alias_kind);
    // a: S0; c: S1; d: a new S2 (without the alias's token it took S0 and overwrote a).
    CHECK(plan_of(planned(m.get())) == plan{"S16", "T0", "S16", "T1", "S16", "T2", "U"});
  }
}

TEST_CASE("static_plan_block_memory: each function plans alone; hoisting constant storages to the entry") {
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({2, 4}, f32)}});
    basic_chain(f, 4);
  }
  {
    auto f = m.function("dyn", {{"x", ir::tensor_info({2, n}, f32)}});
    basic_chain(f, n);
  }
  const ir::module after = planned(m.get());
  CHECK(plan_of(after) == plan{"S32", "T0", "S40", "T1", "T0", "T1", "U"});
  CHECK(plan_of(after, "dyn") == plan{"S8 * n", "T0", "S4 * (n * 2)", "T1", "T0", "S4 * (n * 2 + 2)", "T2", "U"});
  const ir::module hoisted = planned(m.get(), ir::plan_options{.hoist_constant_storage = true});
  CHECK(plan_of(hoisted) == plan{"S32", "S40", "T0", "T1", "T0", "T1", "U"});
  const ir::function& f = hoisted.funcs[0];
  CHECK(f.body.blocks[0].bindings[0].value.kind == ir::expr_kind::mem_alloc_storage);
  CHECK(f.body.blocks[0].bindings[1].value.kind == ir::expr_kind::mem_alloc_storage);
  // Symbolic sizes stay where they are first used.
  CHECK(plan_of(hoisted, "dyn") == plan_of(after, "dyn"));
  rv::detail::text err;
  CHECK(ir::check(hoisted, err));
}

// ---- rewrite_dataflow_reshape -------------------------------------------------------------------

TEST_CASE("rewrite_dataflow_reshape: test_reshape_expand_dims, a reshape-like call to a dataflow variable becomes a view") {
  ir::module_builder m;
  {
    auto f = m.function("main", {{"x", ir::tensor_info({8, 3}, f32)}});
    auto df = f.dataflow();
    const ir::var y = f.call_dps("reshape", {f.param(0)}, ir::tensor_info({2, 4, 3}, f32), ir::reshape_like);
    // z is reshape-like too, but a block output: it keeps its own tensor.
    const ir::var z = f.call_dps("expand_dims", {y}, ir::tensor_info({2, 1, 4, 1, 3}, f32), ir::reshape_like);
    df.output(z);
    df.end();
    f.ret(z);
  }
  const std::string text = ir::to_text(ir::pass::rewrite_dataflow_reshape(m.get()));
  CHECK(contains(text, "lv: R.Tensor((2, 4, 3), dtype=\"float32\") = R.reshape(x, R.shape([2, 4, 3]))\n"));
  CHECK(contains(text, "R.call_dps_packed(\"expand_dims\", (lv,), out_sinfo=R.Tensor((2, 1, 4, 1, 3), dtype=\"float32\"))"));
}

TEST_CASE("rewrite_dataflow_reshape: what stays a kernel call") {
  ir::module_builder m;
  const ir::sym n = m.sym("n"), k = m.sym("k");
  {
    auto f = m.function("main", {{"x", ir::tensor_info({n, 4}, f32)}, {"y", ir::tensor_info({k}, f32)}});
    auto df = f.dataflow();
    const ir::var a = f.call_dps("plain", {f.param(0)}, ir::tensor_info({n * 4}, f32));  // not declared
    const ir::var b = f.call_dps("r", {a}, ir::tensor_info({n, 4}, i32), ir::reshape_like);  // dtype differs
    const ir::var c = f.call_dps("r", {b}, ir::tensor_info({n, 3}, i32), ir::reshape_like);  // 4n vs 3n
    const ir::var d = f.call_dps("r", {c, f.param(1)}, ir::tensor_info({n * 3}, i32), ir::reshape_like);  // two tensors
    const ir::var e = f.call_dps("r", {d}, ir::tensor_info({k}, i32), ir::reshape_like);  // n * 3 vs k
    const ir::var g = f.call_dps("r", {e}, ir::tensor_info({1, k, 1}, i32), ir::reshape_like);  // a view
    const ir::var h = f.call_dps("r", {g}, ir::tensor_info({k}, i32), ir::reshape_like);
    df.output(h);
    df.end();
    // Outside a dataflow block nothing is rewritten.
    f.ret(f.call_dps("r", {h}, ir::tensor_info({k, 1}, i32), ir::reshape_like));
  }
  const ir::module after = ir::pass::rewrite_dataflow_reshape(m.get());
  std::vector<ir::expr_kind> kinds;
  for (const ir::block& b : after.funcs[0].body.blocks)
    for (const ir::binding& x : b.bindings) kinds.push_back(x.value.kind);
  using K = ir::expr_kind;
  CHECK(kinds == std::vector<K>{K::call_dps, K::call_dps, K::call_dps, K::call_dps, K::call_dps, K::reshape, K::call_dps, K::call_dps});
}

TEST_CASE("size proofs past ir::max_proof_steps are not proved: planning and reshapes end (issue 33)") {
  // prod(1 + n // k) over 25 factors; the same factors in another order; and the first factor
  // written n // 2 + 1, which only expanding 2^25 terms could match (this did not finish).
  ir::module_builder m;
  const ir::sym n = m.sym("n");
  const auto product = [&](bool reversed, bool swapped) {
    ir::sym p(1);
    for (int i = 0; i < 25; ++i) {
      const ir::sym q = ir::floordiv(n, 2 + (reversed ? 24 - i : i));
      p = p * (swapped && i == 0 ? q + 1 : 1 + q);
    }
    return p;
  };
  const ir::sym p = product(false, false), reordered = product(true, false), swapped = product(false, true);
  const auto t = [](const ir::sym& d) { return ir::tensor_info({d}, f32); };
  {
    auto f = m.function("main", {{"s", t(n)}, {"x", t(p)}});
    auto df = f.dataflow();
    const ir::var a = f.call_dps("k", {f.param(1)}, t(p));
    const ir::var b = f.call_dps("k", {a}, t(p));
    const ir::var c = f.call_dps("k", {b}, t(swapped));  // a's storage is free: not provably the same size
    const ir::var d = f.call_dps("k", {c}, t(p));        // takes a's storage
    const ir::var v = f.call_dps("r", {d}, t(reordered), ir::reshape_like);  // a view
    const ir::var w = f.call_dps("r", {v}, t(swapped), ir::reshape_like);    // stays a kernel call
    const ir::var y = f.call_dps("k", {w}, t(p));
    df.output(y);
    df.end();
    f.ret(y);
  }
  const ir::module mod = m.get();
  const ir::module viewed = ir::pass::rewrite_dataflow_reshape(mod);
  std::vector<ir::expr_kind> kinds;
  for (const ir::binding& x : viewed.funcs[0].body.blocks[0].bindings) kinds.push_back(x.value.kind);
  using K = ir::expr_kind;
  CHECK(kinds == std::vector<K>{K::call_dps, K::call_dps, K::call_dps, K::call_dps, K::reshape, K::call_dps, K::call_dps});
  const plan got = plan_of(planned(viewed));
  REQUIRE(got.size() == 9);
  CHECK(got[1] == "T0");
  CHECK(got[3] == "T1");
  CHECK(got[5] == "T2");  // c: a storage of its own
  CHECK(got[6] == "T0");  // d: a's
  CHECK(got[7] == "T2");  // w: not b's (the proof runs out), c's (the same expression)
  CHECK(got[8] == "U");   // y, returned
}

TEST_CASE("static_plan_block_memory: tuples nested 60 deep are followed as one set, not 2^60 leaves (issue 33)") {
  // a = k(x); t0 = (a, a); t_i = (t_i-1, t_i-1); use(t_60); b = k(x); c = k(b). The tuples are
  // put in by hand: the builder's struct info of such tuples doubles at each level.
  const auto t4 = ir::tensor_info({4}, f32);
  ir::module_builder mb;
  {
    auto f = mb.function("main", {{"x", t4}});
    const ir::var a = f.call_dps("k", {f.param(0)}, t4);
    f.call_packed("use", {f.tuple({a, a})});
    const ir::var b = f.call_dps("k", {f.param(0)}, t4);
    f.ret(f.call_dps("k", {b}, t4));
  }
  ir::module m = mb.get();
  ir::function& fn = m.funcs[0];
  std::vector<ir::binding>& bs = fn.body.blocks[0].bindings;
  REQUIRE(bs[1].value.kind == ir::expr_kind::tuple);
  std::int32_t prev = bs[1].var;
  std::vector<ir::binding> nest;
  for (int i = 0; i < 60; ++i) {
    ir::binding t;
    t.var = fn.add_var("t", ir::object_info());
    t.value.kind = ir::expr_kind::tuple;
    t.value.args = {ir::leaf::of_var(prev), ir::leaf::of_var(prev)};
    nest.push_back(t);
    prev = t.var;
  }
  bs[2].value.args[0] = ir::leaf::of_var(prev);
  bs.insert(bs.begin() + 2, nest.begin(), nest.end());
  // b takes a's storage once use() has run; c, returned, has its own.
  CHECK(plan_of(planned(m)) == plan{"S16", "T0", "T0", "U"});
}
