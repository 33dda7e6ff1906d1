// SPDX-License-Identifier: Apache-2.0
// Memory planning, differentially (issue 33): random IR programs mixing destination-passing
// kernels, packed calls that may return one of their arguments (vm.builtin.copy,
// vm.builtin.tuple_getitem, a kernel of ours), tuples, match_cast and reshape views are built
// with and without pass::static_plan_block_memory and run on the VM; the two results must be
// the same bits. A storage reused while a tensor in it is still alive makes them differ.
//
// A fixed seed and 500 small programs by default (0.1 s with g++ -O1; about 5 s of CPU under
// clang's ASan at -O0, where lowering dominates); for a longer run set RELAXVM_PLAN_PROGRAMS (how
// many) and RELAXVM_PLAN_SEED (the first seed).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <relaxvm.hpp>
#include <relaxvm/lower.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace ir = relaxvm::ir;

namespace {

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// splitmix64: the same programs on every platform.
struct rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
};

// Elementwise kernels over any shapes (inputs read cyclically), and packed functions that
// return one of their arguments.
rv::registry kernels() {
  rv::registry reg;
  const auto at = [](const rv::tensor& t, std::int64_t i) { return t.data<const float>()[i % t.numel()]; };
  reg.add("d.affine", rv::make_typed("d.affine", [at](const rv::tensor& a, rv::tensor out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = at(a, i) * 0.5f + 1.0f;
  }));
  reg.add("d.mix", rv::make_typed("d.mix", [at](const rv::tensor& a, const rv::tensor& b, rv::tensor out) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = at(a, i) - 0.25f * at(b, i) + 0.125f * static_cast<float>(i);
  }));
  reg.add("d.pick", rv::make_typed("d.pick", [](const rv::tensor& a, const rv::tensor&) { return a; }));
  reg.add("d.first", rv::make_typed("d.first", [](const rv::tuple& t) { return t[0]; }));
  return reg;
}

// A value of the program being made: a tensor of `units` x n elements (1 or 2), 1-d, or 2-d
// (2, n) / (1, n) as a view makes it; or a tuple of two tensors.
struct value_info {
  ir::var v;
  bool tuple = false;
  int units = 1;
  bool two_d = false;
  int fields[2] = {-1, -1};  // a tuple's fields (indices into the program's values)
};

class program_maker {
 public:
  explicit program_maker(std::uint64_t seed) : r_{seed} {}

  // Function `fn` of `m`, from this maker's seed; its input is (n,) with n = 4 when constant().
  void make(ir::module_builder& m, const std::string& fn) {
    // n: a constant, or symbolic with an upper bound (constant storages), or without one
    // (symbolic storages, reused when provably the same size).
    mode_ = r_.below(3);
    n_ = mode_ == 0 ? ir::sym(4) : m.sym("n_" + fn);
    auto f = m.function(fn, {{"x", info_of(1, false)}});
    if (mode_ == 1) f.upper_bound(n_, 8);
    vals_.push_back(value_info{f.param(0)});
    const int steps = 6 + r_.below(14);
    for (int i = 0; i < steps; ++i) step(f);
    // The result mixes a few values, so their lifetimes reach the end and the others' do not.
    ir::var out = f.call_dps("d.mix", {tensor(), tensor()}, info_of(2, false));
    for (int i = r_.below(3); i > 0; --i) out = f.call_dps("d.mix", {out, tensor()}, info_of(2, false));
    f.ret(out);
    f.end();
  }
  bool constant() const { return mode_ == 0; }

 private:
  ir::struct_info info_of(int units, bool two_d) const {
    const ir::sym n = n_;
    if (two_d) return ir::tensor_info({units == 2 ? ir::sym(2) : ir::sym(1), n}, rv::dtype::float32());
    return ir::tensor_info({units == 2 ? n * 2 : n}, rv::dtype::float32());
  }
  ir::struct_info info_of(const value_info& v) const { return info_of(v.units, v.two_d); }
  int pick_tensor() {
    for (;;) {
      const int i = r_.below(static_cast<int>(vals_.size()));
      if (!vals_[static_cast<std::size_t>(i)].tuple) return i;
    }
  }
  int pick_tuple() {
    std::vector<int> tuples;
    for (std::size_t i = 0; i < vals_.size(); ++i)
      if (vals_[i].tuple) tuples.push_back(static_cast<int>(i));
    return tuples.empty() ? -1 : tuples[static_cast<std::size_t>(r_.below(static_cast<int>(tuples.size())))];
  }
  // A random tensor value.
  ir::var tensor() { return vals_[static_cast<std::size_t>(pick_tensor())].v; }
  void add(ir::var v, int units, bool two_d) {
    value_info x;
    x.v = v;
    x.units = units;
    x.two_d = two_d;
    vals_.push_back(x);
  }
  void add_like(ir::var v, int of) {
    value_info x = vals_[static_cast<std::size_t>(of)];
    x.v = v;
    vals_.push_back(x);
  }

  void step(ir::function_builder& f) {
    const int op = r_.below(12);
    const int a = pick_tensor();
    const value_info va = vals_[static_cast<std::size_t>(a)];
    switch (op) {
      case 0:
      case 1: {  // a kernel, output like a, or of the other size
        const int units = r_.below(2) ? va.units : 3 - va.units;
        const bool two_d = units == va.units && va.two_d;
        add(f.call_dps("d.affine", {va.v}, info_of(units, two_d)), units, two_d);
        return;
      }
      case 2:
      case 3: {
        const int b = pick_tensor();
        add(f.call_dps("d.mix", {va.v, vals_[static_cast<std::size_t>(b)].v}, info_of(va)), va.units, va.two_d);
        return;
      }
      case 4: add_like(f.call_packed("vm.builtin.copy", {va.v}, info_of(va)), a); return;
      case 5: {
        const int b = pick_tensor();
        add_like(f.call_packed("d.pick", {va.v, vals_[static_cast<std::size_t>(b)].v}, info_of(va)), a);
        return;
      }
      case 6: {  // a tuple of two tensors
        const int b = pick_tensor();
        const value_info vb = vals_[static_cast<std::size_t>(b)];
        value_info t;
        t.v = f.tuple({va.v, vb.v});
        t.tuple = true;
        t.fields[0] = a;
        t.fields[1] = b;
        vals_.push_back(t);
        return;
      }
      case 7: {  // a field of a tuple: get_item, vm.builtin.tuple_getitem or d.first
        const int t = pick_tuple();
        if (t < 0) return;
        const value_info vt = vals_[static_cast<std::size_t>(t)];
        const int how = r_.below(3);
        const int i = how == 2 ? 0 : r_.below(2);
        const int field = vt.fields[i];
        const ir::struct_info fi = info_of(vals_[static_cast<std::size_t>(field)]);
        ir::var got = how == 0   ? f.get_item(vt.v, i)
                      : how == 1 ? f.call_packed("vm.builtin.tuple_getitem", {vt.v, ir::prim(i)}, fi)
                                 : f.call_packed("d.first", {vt.v}, fi);
        add_like(got, field);
        return;
      }
      case 8: add_like(f.match_cast(va.v, info_of(va)), a); return;
      case 9:
      case 10: {  // a view with the other number of dimensions
        const ir::struct_info to = info_of(va.units, !va.two_d);
        ir::var v;
        if (op == 9) {
          v = va.two_d ? f.reshape(va.v, {va.units == 2 ? n_ * 2 : n_})
                       : f.reshape(va.v, {va.units == 2 ? ir::sym(2) : ir::sym(1), n_});
        } else {
          const ir::operand s = va.two_d ? ir::shape_arg({va.units == 2 ? n_ * 2 : n_})
                                         : ir::shape_arg({va.units == 2 ? ir::sym(2) : ir::sym(1), n_});
          v = f.call_packed("vm.builtin.reshape", {va.v, s}, to);
        }
        add(v, va.units, !va.two_d);
        return;
      }
      default: {  // a kernel over two values whose output is the first's size
        const int b = pick_tensor();
        add(f.call_dps("d.mix", {vals_[static_cast<std::size_t>(b)].v, va.v}, info_of(vals_[static_cast<std::size_t>(b)])),
            vals_[static_cast<std::size_t>(b)].units, vals_[static_cast<std::size_t>(b)].two_d);
        return;
      }
    }
  }

  rng r_;
  int mode_ = 0;
  ir::sym n_ = ir::sym(4);
  std::vector<value_info> vals_;
};

// The executable of `m` with every pass but memory planning.
rv::executable build_unplanned(ir::module m) {
  rv::detail::text err;
  REQUIRE(ir::check(m, err));
  m = ir::pass::call_tir_rewrite(ir::pass::to_non_dataflow(ir::pass::rewrite_dataflow_reshape(std::move(m))));
  m = ir::pass::lower_alloc_tensor(std::move(m));
  m = ir::pass::lower_runtime_builtin(ir::pass::kill_after_last_use(std::move(m)));
  m = ir::pass::shape_lower(std::move(m));
  rv::exec_builder b;
  REQUIRE(ir::codegen(m, b, err));
  return b.try_get<rv::executable>().value();
}

std::vector<float> floats(const rv::tensor& t) {
  std::vector<float> v(static_cast<std::size_t>(t.numel()));
  std::memcpy(v.data(), t.raw_data(), v.size() * sizeof(float));
  return v;
}

}  // namespace

TEST_CASE("memory planning, differential: planned and unplanned random programs give the same bits (issue 33)") {
  const std::uint64_t count = env_or("RELAXVM_PLAN_PROGRAMS", 500), first = env_or("RELAXVM_PLAN_SEED", 33);
  constexpr std::uint64_t per_module = 50;  // one build and one VM pair per 50 programs
  const rv::registry reg = kernels();
  std::int64_t storages[2] = {0, 0};  // made by the planned and the unplanned builds
  for (std::uint64_t start = first; start < first + count; start += per_module) {
    ir::module_builder mb;
    std::vector<bool> constant;
    for (std::uint64_t seed = start; seed < start + per_module && seed < first + count; ++seed) {
      program_maker maker(seed);
      maker.make(mb, "p" + std::to_string(seed));
      constant.push_back(maker.constant());
    }
    const ir::module mod = mb.get();
    rv::virtual_machine planned(ir::build(mod), reg), unplanned(build_unplanned(mod), reg);
    rv::virtual_machine* vms[2] = {&planned, &unplanned};
    for (int k = 0; k < 2; ++k) {
      std::int64_t* c = &storages[k];
      vms[k]->set_instrument([c](const rv::call_event& e) {
        if (e.before && e.callee == "vm.builtin.alloc_storage") ++*c;
        return rv::instrument_action::proceed;
      });
    }
    for (std::size_t i = 0; i < mod.funcs.size(); ++i) {
      const std::uint64_t seed = start + i;
      const std::int64_t rows = constant[i] ? 4 : 2 + 2 * static_cast<std::int64_t>(seed % 3);  // 2, 4 or 6
      std::vector<float> x;
      for (std::int64_t r = 0; r < rows; ++r) x.push_back(static_cast<float>(r) * 0.75f - 1.0f);
      const rv::tensor in = rv::tensor::from<float>(x, {rows});
      const std::string fn = "p" + std::to_string(seed);
      const std::vector<float> want = floats(unplanned[fn](in).as<rv::tensor>());
      const std::vector<float> got = floats(planned[fn](in).as<rv::tensor>());
      if (got == want) continue;
      ir::module one;
      one.syms = mod.syms;
      one.funcs.push_back(mod.funcs[i]);
      FAIL("seed ", seed, ": planned and unplanned results differ for\n", ir::to_text(one));
    }
  }
  // Planning did share storages (the programs are not all escapes).
  MESSAGE(count, " programs: ", storages[0], " storages planned, ", storages[1], " unplanned");
  CHECK(storages[0] < storages[1]);
}
