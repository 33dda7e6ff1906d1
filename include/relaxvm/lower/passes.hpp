// SPDX-License-Identifier: Apache-2.0
// The reference's VM pipeline passes before shape lowering (docs/lowering.md), each
// a function from module to module that tests can call alone:
//   to_non_dataflow        ToNonDataflow + RemovePurityChecking: dataflow blocks become ordinary
//                          ones and adjacent blocks merge (purity is not modelled: nothing to unwrap)
//   call_tir_rewrite       call_dps -> R.builtin.alloc_tensor per output + a void kernel call
//   lower_alloc_tensor     R.builtin.alloc_tensor -> R.memory.alloc_storage (bytes, symbolic) +
//                          R.memory.alloc_tensor
//   kill_after_last_use    kills after each variable's last use (idempotent; see below)
//   lower_runtime_builtin  reshape, shape_of, closures, memory ops -> VM builtins
// Passes that can fail have a try_ form returning pass_output (usable in constexpr) and a form
// that throws relaxvm::error.
#ifndef RELAXVM_LOWER_PASSES_HPP
#define RELAXVM_LOWER_PASSES_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "ir.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

/// A pass's result: the module, or the first problem.
struct pass_output {
  module mod;
  relaxvm::detail::text message;
  constexpr bool ok() const { return message.empty(); }
};

namespace detail {

inline result<module> to_result(pass_output&& out) {
  if (!out.ok()) return relaxvm::error(error_kind::value, out.message.view());
  return static_cast<module&&>(out.mod);
}

constexpr binding make_binding(std::int32_t v, expr_kind k, std::vector<leaf> args, std::string_view callee = {}) {
  binding b;
  b.var = v;
  b.value.kind = k;
  b.value.callee = name(callee);
  b.value.args = static_cast<std::vector<leaf>&&>(args);
  return b;
}

/// Rewrites every sequence of `f` (branches first, so `rw` sees rewritten branches): `rw(f, b, out)`
/// appends what replaces binding `b` to `out`. All blocks of a sequence become one block
/// (passes run after to_non_dataflow).
template <class Rewrite>
constexpr void rewrite_seq(function& f, seq& s, Rewrite& rw) {
  std::vector<binding> out;
  for (block& blk : s.blocks)
    for (binding& b : blk.bindings) {
      for (seq& br : b.value.branches) rewrite_seq(f, br, rw);
      rw(f, b, out);
    }
  s.blocks.clear();
  if (!out.empty()) s.blocks.push_back(block{false, static_cast<std::vector<binding>&&>(out)});
}
template <class Rewrite>
constexpr void rewrite_module(module& m, Rewrite& rw) {
  for (function& f : m.funcs) rewrite_seq(f, f.body, rw);
}

/// Calls `f(v)` for each variable that `e` reads, its branches included.
template <class F>
constexpr void visit_uses(const expr& e, F&& f) {
  for (const leaf& l : e.args)
    if (l.is_var()) f(l.index);
  for (const seq& br : e.branches) {
    for (const block& b : br.blocks)
      for (const binding& x : b.bindings) visit_uses(x.value, f);
    if (br.result.is_var()) f(br.result.index);
  }
}

constexpr bool is_kill(expr_kind k) {
  return k == expr_kind::mem_kill_storage || k == expr_kind::mem_kill_tensor || k == expr_kind::vm_kill_object;
}

// ---- kill_after_last_use ---------------------------------------------------------------------

class kill_inserter {
 public:
  constexpr explicit kill_inserter(function& f) : f_(f) {}

  constexpr void run() {
    // 1-2. Trivial var-to-var bindings (y = x, or a match_cast to the same info) are dropped and
    // y's uses read x: one register per value, so a kill frees the value.
    subst_.assign(f_.vars.size(), -1);
    for (std::size_t i = 0; i < subst_.size(); ++i) subst_[i] = static_cast<std::int32_t>(i);
    drop_trivial(f_.body);
    // 3. Kills after the last uses.
    insert(f_.body);
  }

 private:
  constexpr std::int32_t resolve(std::int32_t v) const {
    while (subst_[static_cast<std::size_t>(v)] != v) v = subst_[static_cast<std::size_t>(v)];
    return v;
  }
  constexpr void rename(leaf& l) const {
    if (l.is_var()) l.index = resolve(l.index);
  }
  constexpr void drop_trivial(seq& s) {
    for (block& blk : s.blocks) {
      std::vector<binding> kept;
      for (binding& b : blk.bindings) {
        for (leaf& l : b.value.args) rename(l);
        for (seq& br : b.value.branches) drop_trivial(br);
        // (a match_cast checks at run time: it is never trivial)
        const bool trivial = b.value.kind == expr_kind::leaf && b.value.args[0].is_var() && !b.match_cast;
        if (trivial && b.var >= 0) {
          subst_[static_cast<std::size_t>(b.var)] = b.value.args[0].index;
          continue;
        }
        kept.push_back(static_cast<binding&&>(b));
      }
      blk.bindings = static_cast<std::vector<binding>&&>(kept);
    }
    rename(s.result);
  }

  // Which kill, if any, variable `v` bound by `b` gets.
  constexpr expr_kind kill_kind(const binding& b) const {
    const var_info& v = f_.var(b.var);
    const expr& e = b.value;
    if (v.info.is_void() || is_kill(e.kind) || e.kind == expr_kind::null_value) return expr_kind::leaf;
    if (e.kind == expr_kind::leaf && !e.args[0].is_var()) return expr_kind::leaf;  // constants, immediates
    if (v.info.kind == info_kind::func || v.info.kind == info_kind::shape || v.info.kind == info_kind::prim)
      return expr_kind::leaf;
    if (e.kind == expr_kind::call_builtin && e.callee == std::string_view("vm.builtin.alloc_shape_heap"))
      return expr_kind::leaf;  // the shape heap lives for the whole function
    if (v.info.kind == info_kind::tensor) return expr_kind::mem_kill_tensor;
    if (e.kind == expr_kind::mem_alloc_storage || e.kind == expr_kind::vm_alloc_storage) return expr_kind::mem_kill_storage;
    return expr_kind::vm_kill_object;
  }

  constexpr void insert(seq& s) {
    for (block& blk : s.blocks)
      for (binding& b : blk.bindings)
        for (seq& br : b.value.branches) insert(br);
    // Flatten, then place each kill after the binding of this sequence that reads its variable last.
    std::vector<binding> all;
    for (block& blk : s.blocks)
      for (binding& b : blk.bindings) all.push_back(static_cast<binding&&>(b));
    // One sweep: the last binding reading each variable, and whether that is a kill.
    std::vector<std::int64_t> last(f_.vars.size(), -1);
    std::vector<char> killed(f_.vars.size(), 0);
    for (std::size_t j = 0; j < all.size(); ++j)
      visit_uses(all[j].value, [&](std::int32_t v) {
        last[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(j);
        killed[static_cast<std::size_t>(v)] = is_kill(all[j].value.kind);
      });
    std::vector<std::vector<std::int32_t>> after(all.size());
    for (const binding& b : all) {
      if (b.var < 0 || kill_kind(b) == expr_kind::leaf) continue;
      if (s.result.is_var() && s.result.index == b.var) continue;  // returned
      const std::int64_t j = last[static_cast<std::size_t>(b.var)];
      if (j < 0 || killed[static_cast<std::size_t>(b.var)]) continue;  // never used, or already killed
      after[static_cast<std::size_t>(j)].push_back(b.var);
    }
    // The kind of each variable's kill, computed while its binding is at hand.
    std::vector<expr_kind> kind(f_.vars.size(), expr_kind::leaf);
    for (const binding& b : all)
      if (b.var >= 0) kind[static_cast<std::size_t>(b.var)] = kill_kind(b);
    std::vector<binding> out;
    for (std::size_t i = 0; i < all.size(); ++i) {
      out.push_back(static_cast<binding&&>(all[i]));
      // kill_tensor, then kill_storage, then kill_object (the reference's order)
      for (expr_kind k : {expr_kind::mem_kill_tensor, expr_kind::mem_kill_storage, expr_kind::vm_kill_object})
        for (std::int32_t v : after[i]) {
          if (kind[static_cast<std::size_t>(v)] != k) continue;
          out.push_back(make_binding(f_.add_var("_", void_info()), k, {leaf::of_var(v)}));
        }
    }
    s.blocks.clear();
    if (!out.empty()) s.blocks.push_back(block{false, static_cast<std::vector<binding>&&>(out)});
  }

  function& f_;
  std::vector<std::int32_t> subst_;
};

}  // namespace detail

namespace pass {

/// RewriteDataflowReshape (docs/lowering.md): a call_dps declared ir::reshape_like
/// becomes R.reshape(x, shape), a view with no storage and no copy, when all of these hold: it is
/// bound to a dataflow variable inside a dataflow block (a block's output keeps its own tensor),
/// it has exactly one tensor argument x and one tensor output, their dtypes are known and equal,
/// both shapes are known, and their element counts are provably equal (an empty shape counts 1).
/// Runs before to_non_dataflow.
constexpr module rewrite_dataflow_reshape(module m) {
  for (function& f : m.funcs) {
    const auto numel = [&](const std::vector<sym_ref>& dims) {
      sym_ref p = sym_ref::constant(1);
      for (const sym_ref& d : dims) p = m.syms.make(sym_op::mul, p, d);
      return p;
    };
    const auto rewrite = [&](const auto& self, seq& s) -> void {
      for (block& blk : s.blocks)
        for (binding& b : blk.bindings) {
          for (seq& br : b.value.branches) self(self, br);
          expr& e = b.value;
          if (!blk.dataflow || e.kind != expr_kind::call_dps || !e.attrs.reshape_like || b.var < 0 || !f.var(b.var).dataflow)
            continue;
          const leaf* x = nullptr;
          std::int32_t tensors = 0;
          for (const leaf& l : e.args)
            if (l.is_var() && f.var(l.index).info.kind == info_kind::tensor) {
              ++tensors;
              x = &l;
            }
          if (tensors != 1) continue;
          const struct_info& in = f.var(x->index).info;
          const struct_info& out = f.var(b.var).info;
          if (out.kind != info_kind::tensor || !in.known || !out.known || in.dt.is_void() || in.dt != out.dt) continue;
          if (!m.syms.can_prove_equal(numel(in.dims), numel(out.dims))) continue;
          const leaf input = *x;
          e.kind = expr_kind::reshape;
          e.callee = name();
          e.attrs = call_attrs{};
          e.args = {input, leaf::of_shape(out.dims)};
        }
    };
    rewrite(rewrite, f.body);
  }
  return m;
}

/// ToNonDataflow (+ RemovePurityChecking, which has nothing to unwrap here): every variable
/// becomes an ordinary one, and the blocks of each sequence merge into one.
constexpr module to_non_dataflow(module m) {
  for (function& f : m.funcs) {
    for (var_info& v : f.vars) v.dataflow = false;
    auto keep = [](function&, binding& b, std::vector<binding>& out) { out.push_back(static_cast<binding&&>(b)); };
    detail::rewrite_seq(f, f.body, keep);
  }
  return m;
}

/// CallTIRRewrite: each call_dps output becomes `alloc = R.builtin.alloc_tensor(shape, dtype, 0,
/// "global")`, the call becomes `_ = kernel(args..., alloc...)`, and the binding's variable is
/// bound to the output (a tuple of them for several).
constexpr module call_tir_rewrite(module m) {
  auto rw = [](function& f, binding& b, std::vector<binding>& out) {
    if (b.value.kind != expr_kind::call_dps) {
      out.push_back(static_cast<binding&&>(b));
      return;
    }
    const struct_info info = f.var(b.var).info;
    std::vector<struct_info> outs;
    if (info.kind == info_kind::tuple) outs = info.fields;
    else outs.push_back(info);
    std::vector<leaf> call_args = b.value.args;
    std::vector<leaf> allocs;
    for (const struct_info& o : outs) {
      const std::int32_t a = f.add_var("alloc", o);
      out.push_back(detail::make_binding(a, expr_kind::builtin_alloc_tensor,
                                         {leaf::of_shape(o.dims), leaf::of_dtype(o.dt), leaf::of_int(0),
                                          leaf::of_string("global")}));
      call_args.push_back(leaf::of_var(a));
      allocs.push_back(leaf::of_var(a));
    }
    out.push_back(detail::make_binding(f.add_var("_", void_info()), expr_kind::call_packed,
                                       static_cast<std::vector<leaf>&&>(call_args), b.value.callee.view()));
    binding r = detail::make_binding(b.var, info.kind == info_kind::tuple ? expr_kind::tuple : expr_kind::leaf,
                                     static_cast<std::vector<leaf>&&>(allocs));
    out.push_back(static_cast<binding&&>(r));
  };
  detail::rewrite_module(m, rw);
  return m;
}

/// LowerAllocTensor: R.builtin.alloc_tensor(shape, dtype, dev, scope) becomes
/// storage = R.memory.alloc_storage(R.shape([bytes(dtype) * d0 * d1 ...]), dev, scope, "uint8")
/// and R.memory.alloc_tensor(storage, 0, shape, dtype). Sizes stay symbolic.
constexpr pass_output try_lower_alloc_tensor(module m) {
  pass_output res;
  auto rw = [&](function& f, binding& b, std::vector<binding>& out) {
    if (b.value.kind != expr_kind::builtin_alloc_tensor) {
      out.push_back(static_cast<binding&&>(b));
      return;
    }
    const std::vector<leaf>& a = b.value.args;
    std::vector<sym_ref> dims;
    if (a.size() == 4 && a[0].kind == leaf_kind::shape) dims = a[0].dims;
    else if (a.size() == 4 && a[0].is_var() && f.var(a[0].index).info.kind == info_kind::shape && f.var(a[0].index).info.known)
      dims = f.var(a[0].index).info.dims;
    else {
      if (res.ok())
        res.message << "function '" << f.nm.view() << "': R.builtin.alloc_tensor should have four arguments, [shape, "
                       "dtype, runtime_device_index, storage_scope], with a shape of known values";
      return;
    }
    sym_ref bytes = sym_ref::constant(a[1].dt.bytes());
    for (const sym_ref& d : dims) bytes = m.syms.make(sym_op::mul, bytes, d);
    const std::int32_t st = f.add_var("storage", object_info());
    out.push_back(detail::make_binding(st, expr_kind::mem_alloc_storage,
                                       {leaf::of_shape({bytes}), a[2], a[3], leaf::of_dtype(relaxvm::dtype::uint8())}));
    out.push_back(detail::make_binding(b.var, expr_kind::mem_alloc_tensor,
                                       {leaf::of_var(st), leaf::of_int(0), a[0], a[1]}));
  };
  detail::rewrite_module(m, rw);
  if (res.ok()) res.mod = static_cast<module&&>(m);
  return res;
}
inline module lower_alloc_tensor(module m) { return detail::to_result(try_lower_alloc_tensor(static_cast<module&&>(m))).value(); }

/// KillAfterLastUse: trivial var-to-var bindings are dropped (their uses read the source), then
/// after the binding holding each variable's last use come R.memory.kill_tensor (tensors),
/// R.memory.kill_storage (storage) or R.vm.kill_object (others). Never killed: parameters,
/// returned values (also an if branch's), constants and immediates, shapes, prim values,
/// functions, void results, the shape heap, and values already killed, so running the pass twice
/// changes nothing. Last uses are per sequence: a variable used inside an if branch is used by the
/// if, and kills after the if are kept.
constexpr module kill_after_last_use(module m) {
  for (function& f : m.funcs) detail::kill_inserter(f).run();
  return m;
}

/// LowerRuntimeBuiltin: reshape -> vm.builtin.reshape, shape_of -> vm.builtin.shape_of,
/// make_closure -> vm.builtin.make_closure, invoke_closure -> vm.builtin.invoke_closure (with
/// the VM context), R.memory.alloc_storage(size, dev, scope, dtype) -> R.vm.alloc_storage(size,
/// dev, "uint8", scope), R.memory.alloc_tensor -> R.vm.alloc_tensor, kills -> R.vm.kill_object.
constexpr pass_output try_lower_runtime_builtin(module m) {
  pass_output res;
  auto rw = [&](function& f, binding& b, std::vector<binding>& out) {
    expr& e = b.value;
    switch (e.kind) {
      case expr_kind::reshape: {
        const leaf& s = e.args[1];
        const bool ok = s.kind == leaf_kind::shape || (s.is_var() && f.var(s.index).info.kind == info_kind::shape);
        if (!ok && res.ok())
          res.message << "function '" << f.nm.view() << "': TypeError: VMBuiltinLower expects the shape arg of "
                         "R.reshape to be a ShapeExpr or VarNode bound to a ShapeExpr";
        e.kind = expr_kind::call_packed;
        e.callee = name("vm.builtin.reshape");
        break;
      }
      case expr_kind::shape_of:
        e.kind = expr_kind::call_packed;
        e.callee = name("vm.builtin.shape_of");
        break;
      case expr_kind::make_closure:
        e.kind = expr_kind::call_packed;
        e.callee = name("vm.builtin.make_closure");
        break;
      case expr_kind::invoke_closure:
        e.kind = expr_kind::call_builtin;
        e.callee = name("vm.builtin.invoke_closure");
        break;
      case expr_kind::builtin_alloc_tensor:
        if (res.ok())
          res.message << "function '" << f.nm.view()
                      << "': R.builtin.alloc_tensor should have been lowered earlier using the LowerAllocTensor "
                         "pass (ir::pass::lower_alloc_tensor)";
        break;
      case expr_kind::mem_alloc_storage: {
        // (size, dev, scope, dtype) -> (size, dev, "uint8", scope)
        leaf scope = e.args[2];
        e.args[2] = leaf::of_dtype(relaxvm::dtype::uint8());
        e.args[3] = static_cast<leaf&&>(scope);
        e.kind = expr_kind::vm_alloc_storage;
        break;
      }
      case expr_kind::mem_alloc_tensor: e.kind = expr_kind::vm_alloc_tensor; break;
      case expr_kind::mem_kill_storage:
      case expr_kind::mem_kill_tensor: e.kind = expr_kind::vm_kill_object; break;
      default: break;
    }
    out.push_back(static_cast<binding&&>(b));
  };
  detail::rewrite_module(m, rw);
  if (res.ok()) res.mod = static_cast<module&&>(m);
  return res;
}
inline module lower_runtime_builtin(module m) {
  return detail::to_result(try_lower_runtime_builtin(static_cast<module&&>(m))).value();
}

}  // namespace pass
}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_PASSES_HPP
