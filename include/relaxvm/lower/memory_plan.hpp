// SPDX-License-Identifier: Apache-2.0
// StaticPlanBlockMemory (docs/lowering.md): tensors that call_tir_rewrite
// allocated (R.builtin.alloc_tensor) and that live and die inside one binding block, used only by
// kernels, share storages whose lifetimes do not overlap.
//
//   1. Tokens. Each alloc_tensor gets a token; the token follows its tensor through var-to-var
//      bindings, match_casts, tuples and get_item, reshape views (R.reshape, and direct calls of
//      vm.builtin.reshape / vm.builtin.ensure_zero_offset). A kernel call (call_packed, a
//      destination-passing call) counts one use of each token among its arguments. Its result,
//      unless the callee always allocates, may be any tensor it was passed or one inside a tuple
//      it was passed: their tokens join one set, which the result (and any field of it) holds,
//      and a set's tensors live until the last use of any of them (a tuple whose tree would pass
//      64 nodes is one set too, so nested tuples cannot double it at each level). Anything else
//      that sees a token (a module function, a closure, a builtin taking the VM, an if condition
//      or branch value, a use in another block, the function's result) leaves its tensor (its
//      set) unplanned: it stays R.builtin.alloc_tensor, and lower_alloc_tensor gives it its own
//      storage.
//   2. Plan, in program order, with one pool of free storages (per if branch), matched by (scope, dtype):
//      a tensor never used by a kernel gets a storage of its own; a constant size takes the
//      smallest free storage of at least its size (at most 16x larger, first freed first), else
//      enlarges the largest smaller one (at least 1/16 of its size), else a new one; a symbolic
//      size takes the first free storage whose size is provably equal, else a new one. A storage
//      is free again after the last kernel call that uses its tensor.
//   3. Rewrite: each planned tensor becomes R.memory.alloc_tensor(storage, 0, shape, dtype); each
//      storage is R.memory.alloc_storage(R.shape([bytes]), device, scope, dtype) at its first
//      tensor (or, with plan_options::hoist_constant_storage, at the function's entry when its size
//      is a constant), with its final size.
// Sizes are bytes(dtype) x the product of the dimensions, each dimension replaced by its constant
// upper bound when the function's upper bounds give one (function_builder::upper_bound): with n <= 8,
// (n, 32) float32 takes 1,024 bytes.
//
// Differences from the reference, on purpose: tokens follow match_cast (the reference reused a
// storage while a match_cast alias was alive: apache/tvm#20190, #20207), direct calls of
// vm.builtin.reshape (#20134) and the results of opaque calls (issue 33); an if branch starts
// with no free storage and keeps what it frees, so no storage is used where its variable is not
// visible.
#ifndef RELAXVM_LOWER_MEMORY_PLAN_HPP
#define RELAXVM_LOWER_MEMORY_PLAN_HPP

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/checked_math.hpp"
#include "../base/text_builder.hpp"
#include "ir.hpp"
#include "passes.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

/// The most work the planner's size proofs (can_prove_equal) do for one function, in all: each
/// proof takes at most ir::max_proof_steps of it, and once it is spent a symbolic size that is
/// not the same expression gets a storage of its own, so however many symbolic sizes a function
/// compares, its proofs cost at most this.
inline constexpr std::int64_t max_plan_proof_steps = 64 * max_proof_steps;

struct plan_options {
  /// Allocate every storage of constant size at the function's entry instead of at its first
  /// tensor. Off by default, so that dumps match the reference's.
  bool hoist_constant_storage = false;
  /// Make each symbolic shape (a storage's size, a tensor's shape) once, and use it again until
  /// the shape heap is next written, instead of one vm.builtin.make_shape per use (the MLP makes
  /// 4 shapes instead of 8). Off by default, so that dumps match the reference's.
  bool reuse_shapes = false;
  /// Leave out the check of a function's return value (vm.builtin.match_shape at its end) when
  /// the value is a tensor the function allocated itself with exactly the annotated shape and
  /// dtype, where the check cannot fail. Off by default, so that dumps match the reference's.
  bool elide_proven_return_check = false;
};

namespace detail {

/// The ranges of a function's symbolic variables: [0, bound] for those with an upper bound.
constexpr std::vector<sym_range> variable_ranges(const module& m, const function& f) {
  std::vector<sym_range> r(m.syms.num_vars());
  for (const upper_bound& u : f.upper_bounds)
    if (u.var >= 0 && static_cast<std::size_t>(u.var) < r.size()) r[static_cast<std::size_t>(u.var)] = sym_range::between(0, u.bound);
  return r;
}

/// The bytes of a tensor of `dt` and `dims`, each dimension replaced by its constant upper bound
/// where `ranges` give one: bytes(dtype) x (constant dimensions) x (the others), as the reference
/// writes it (4 * (m * n)). False when the constant part overflows int64.
constexpr bool storage_bytes(sym_arena& syms, relaxvm::dtype dt, const std::vector<sym_ref>& dims,
                             const std::vector<sym_range>& ranges, sym_ref& out) {
  std::int64_t constant = dt.bytes();
  sym_ref rest = sym_ref::constant(1);
  for (const sym_ref& d : dims) {
    const sym_range r = syms.range(d, ranges);
    if (r.has_hi) {
      if (!relaxvm::detail::checked_mul(constant, r.hi > 0 ? r.hi : 0, constant)) return false;
    } else {
      rest = syms.make(sym_op::mul, rest, d);
    }
  }
  out = syms.make(sym_op::mul, sym_ref::constant(constant), rest);
  return true;
}

class memory_planner {
 public:
  constexpr memory_planner(module& m, function& f, const plan_options& o, relaxvm::detail::text& err)
      : m_(m), f_(f), opt_(o), err_(err) {}

  constexpr void run() {
    ranges_ = variable_ranges(m_, f_);
    trees_.assign(f_.vars.size(), tree{});
    init_seq(f_.body);
    if (!err_.empty()) return;
    pool_.clear();
    plan_seq(f_.body);
    rewrite();
  }

 private:
  // What a variable holds: a planned tensor's token, or a tuple of such trees (at most
  // max_tree_nodes nodes: a larger tuple is one token for all the tensors in it).
  struct tree {
    std::int32_t token = -1;
    std::int32_t nodes = 1;
    std::vector<tree> fields;
  };
  static constexpr std::int32_t max_tree_nodes = 64;
  // Tokens are grouped into sets that live and die together (union-find: `parent`, and at a
  // set's root its members, the uses left of all of them, and whether they escape). A set is
  // made where a value may be any of several tensors: the result of an opaque call, a tuple
  // too large to follow field by field.
  struct token {
    sym_ref bytes;
    relaxvm::dtype dt;
    name scope;
    std::int32_t block = -1;
    std::int64_t uses = 0;  // kernel calls using this tensor
    std::int32_t storage = -1;
    std::int32_t parent = -1;
    // at a root:
    std::int64_t set_uses = 0;  // kernel calls using any tensor of the set, not yet planned
    bool discarded = false;     // the set is not planned
    std::vector<std::int32_t> members;
  };
  struct storage {
    sym_ref bytes;  // the final size (a constant size may grow while planning)
    relaxvm::dtype dt;
    name scope;
    std::int32_t var = -1;  // its variable, once emitted
  };

  constexpr const tree& tree_of(const leaf& l) const {
    if (!l.is_var() || static_cast<std::size_t>(l.index) >= trees_.size()) return none_;
    return trees_[static_cast<std::size_t>(l.index)];
  }
  constexpr void set_tree(std::int32_t v, tree t) {
    if (v >= 0 && static_cast<std::size_t>(v) < trees_.size()) trees_[static_cast<std::size_t>(v)] = static_cast<tree&&>(t);
  }
  template <class F>
  static constexpr void for_each_token(const tree& t, F&& f) {
    if (t.token >= 0) f(t.token);
    for (const tree& x : t.fields) for_each_token(x, f);
  }
  constexpr token& tok(std::int32_t t) { return tokens_[static_cast<std::size_t>(t)]; }
  constexpr token& root(std::int32_t t) {
    while (tok(t).parent != t) t = tok(t).parent = tok(tok(t).parent).parent;  // path halving
    return tok(t);
  }
  constexpr void unite(std::int32_t a, std::int32_t b) {
    a = root(a).parent;
    b = root(b).parent;
    if (a == b) return;
    if (tok(a).members.size() < tok(b).members.size()) {
      const std::int32_t t = a;
      a = b;
      b = t;
    }
    token &ra = tok(a), &rb = tok(b);
    rb.parent = a;
    ra.set_uses += rb.set_uses;
    ra.discarded = ra.discarded || rb.discarded;
    for (std::int32_t m : rb.members) ra.members.push_back(m);
    rb.members.clear();
  }
  // One token for every token in the values `args`: what may be any of them.
  constexpr tree merged(std::span<const leaf> args) {
    tree r;
    for (const leaf& l : args)
      for_each_token(tree_of(l), [&](std::int32_t k) {
        if (r.token < 0) r.token = k;
        else unite(r.token, k);
      });
    return r;
  }
  constexpr void discard(const leaf& l) {
    for_each_token(tree_of(l), [&](std::int32_t t) { root(t).discarded = true; });
  }
  constexpr bool planned(std::int32_t t) { return t >= 0 && !root(t).discarded && tok(t).storage >= 0; }

  // Whether a call_packed only makes a view of its first argument.
  static constexpr bool is_view(const expr& e) {
    return e.kind == expr_kind::reshape ||
           (e.kind == expr_kind::call_packed &&
            (e.callee == std::string_view("vm.builtin.reshape") || e.callee == std::string_view("vm.builtin.ensure_zero_offset")));
  }
  static constexpr bool is_kernel_call(const expr& e) {
    return (e.kind == expr_kind::call_packed || e.kind == expr_kind::call_dps) && !is_view(e);
  }
  // Whether a kernel call's result is new memory, never one of its arguments: a call_dps output
  // (lowering allocates it), or a builtin that always copies.
  static constexpr bool returns_fresh(const expr& e) {
    return e.kind == expr_kind::call_dps || e.callee == std::string_view("vm.builtin.to_device") ||
           e.callee == std::string_view("vm.builtin.shape_to_tensor");
  }

  // The dimensions of an alloc_tensor's shape argument; false when they are not known.
  constexpr bool alloc_dims(const binding& b, std::vector<sym_ref>& dims) const {
    const std::vector<leaf>& a = b.value.args;
    if (a.size() != 4 || a[1].kind != leaf_kind::dtype || a[3].kind != leaf_kind::string) return false;
    if (a[0].kind == leaf_kind::shape) {
      dims = a[0].dims;
      return true;
    }
    if (a[0].is_var() && f_.var(a[0].index).info.kind == info_kind::shape && f_.var(a[0].index).info.known) {
      dims = f_.var(a[0].index).info.dims;
      return true;
    }
    return false;
  }

  // ---- 1. tokens ---------------------------------------------------------------------------
  constexpr void init_seq(const seq& s) {
    for (const block& blk : s.blocks) {
      const std::int32_t id = next_block_++;
      for (const binding& b : blk.bindings) init_binding(b, id);
    }
    discard(s.result);
  }
  constexpr void init_binding(const binding& b, std::int32_t blk) {
    const expr& e = b.value;
    switch (e.kind) {
      case expr_kind::builtin_alloc_tensor: {
        std::vector<sym_ref> dims;
        if (!alloc_dims(b, dims)) return;  // not planned (lower_alloc_tensor reports it)
        token t;
        if (!storage_bytes(m_.syms, e.args[1].dt, dims, ranges_, t.bytes)) {
          err_ << "function '" << f_.nm.view() << "': the tensor '" << f_.var(b.var).nm.view()
               << "' needs more than 2^63 bytes";
          return;
        }
        t.dt = e.args[1].dt;
        t.scope = e.args[3].text;
        t.block = blk;
        t.parent = static_cast<std::int32_t>(tokens_.size());
        t.members.push_back(t.parent);
        tokens_.push_back(static_cast<token&&>(t));
        tree tr;
        tr.token = static_cast<std::int32_t>(tokens_.size()) - 1;
        set_tree(b.var, static_cast<tree&&>(tr));
        return;
      }
      case expr_kind::leaf: set_tree(b.var, tree_of(e.args[0])); return;  // var = var, match_cast
      case expr_kind::tuple: {
        tree tr;
        for (const leaf& l : e.args) tr.nodes += tree_of(l).nodes;
        if (tr.nodes > max_tree_nodes) {  // nested tuples would double the tree at each level
          set_tree(b.var, merged(e.args));
          return;
        }
        for (const leaf& l : e.args) tr.fields.push_back(tree_of(l));
        set_tree(b.var, static_cast<tree&&>(tr));
        return;
      }
      case expr_kind::get_item: {
        const tree& t = tree_of(e.args[0]);
        if (e.index >= 0 && static_cast<std::size_t>(e.index) < t.fields.size())
          set_tree(b.var, t.fields[static_cast<std::size_t>(e.index)]);
        else if (t.token >= 0)  // a merged set: any field may be any of its tensors
          set_tree(b.var, t);
        return;
      }
      case expr_kind::if_:
        discard(e.args[0]);
        for (const seq& br : e.branches) init_seq(br);  // discards each branch's value
        return;
      default: break;
    }
    if (is_view(e)) {
      set_tree(b.var, tree_of(e.args[0]));
      for (std::size_t i = 1; i < e.args.size(); ++i) discard(e.args[i]);
      return;
    }
    for (const leaf& l : e.args) {
      if (!is_kernel_call(e)) {
        discard(l);
        continue;
      }
      for_each_token(tree_of(l), [&](std::int32_t t) {
        if (tok(t).block != blk) {
          root(t).discarded = true;  // allocated in another block
          return;
        }
        ++tok(t).uses;
        ++root(t).set_uses;
      });
    }
    // The result of a call that is neither a view nor known to allocate may be any tensor it
    // was passed, or one held in a tuple it was passed (vm.builtin.copy, tuple_getitem, a kernel
    // returning its argument): those tensors live as long as it is used.
    if (is_kernel_call(e) && !returns_fresh(e) && b.var >= 0 && !f_.var(b.var).info.is_void())
      set_tree(b.var, merged(e.args));
  }

  // ---- 2. plan -----------------------------------------------------------------------------
  constexpr void plan_seq(const seq& s) {
    for (const block& blk : s.blocks)
      for (const binding& b : blk.bindings) plan_binding(b);
  }
  constexpr void plan_binding(const binding& b) {
    const expr& e = b.value;
    if (e.kind == expr_kind::builtin_alloc_tensor) {
      const tree& t = tree_of(leaf::of_var(b.var));
      if (t.token >= 0 && !root(t.token).discarded) tok(t.token).storage = request(tok(t.token));
      return;
    }
    for (const seq& br : e.branches) {
      // A branch starts with no free storage, and what it frees stays there: its storages'
      // variables are not visible outside it.
      std::vector<std::int32_t> outer = static_cast<std::vector<std::int32_t>&&>(pool_);
      pool_.clear();
      plan_seq(br);
      pool_ = static_cast<std::vector<std::int32_t>&&>(outer);
    }
    if (!is_kernel_call(e)) return;
    for (const leaf& l : e.args)
      for_each_token(tree_of(l), [&](std::int32_t t) {
        token& r = root(t);
        if (r.discarded || --r.set_uses != 0) return;
        for (std::int32_t k : r.members)  // the set's last use: all its storages are free
          if (tok(k).storage >= 0) pool_.push_back(tok(k).storage);
      });
  }
  constexpr bool same_kind(const storage& s, const token& t) const { return s.dt == t.dt && s.scope == t.scope; }
  constexpr std::int32_t request(const token& t) {
    std::int64_t chosen = -1;  // index into pool_
    if (t.uses > 0 && t.bytes.is_const()) {
      const std::int64_t size = t.bytes.value;
      std::int64_t upper = 0;
      if (!relaxvm::detail::checked_mul(size, std::int64_t{16}, upper)) upper = std::numeric_limits<std::int64_t>::max();
      const std::int64_t lower = size / 16;
      std::int64_t larger = -1, smaller = -1;
      for (std::size_t i = 0; i < pool_.size(); ++i) {
        const storage& s = storages_[static_cast<std::size_t>(pool_[i])];
        if (!same_kind(s, t) || !s.bytes.is_const()) continue;
        const std::int64_t have = s.bytes.value;
        const auto at = static_cast<std::int64_t>(i);
        if (have >= size && have <= upper) {
          if (larger < 0 || have < storages_[static_cast<std::size_t>(pool_[static_cast<std::size_t>(larger)])].bytes.value)
            larger = at;
        } else if (have < size && have >= lower) {
          if (smaller < 0 || have > storages_[static_cast<std::size_t>(pool_[static_cast<std::size_t>(smaller)])].bytes.value)
            smaller = at;
        }
      }
      chosen = larger >= 0 ? larger : smaller;
      if (chosen >= 0) {
        storage& s = storages_[static_cast<std::size_t>(pool_[static_cast<std::size_t>(chosen)])];
        if (s.bytes.value < size) s.bytes = t.bytes;  // enlarged
      }
    } else if (t.uses > 0) {
      for (std::size_t i = 0; i < pool_.size() && chosen < 0; ++i) {
        const storage& s = storages_[static_cast<std::size_t>(pool_[i])];
        if (same_kind(s, t) && !s.bytes.is_const() && m_.syms.can_prove_equal(s.bytes, t.bytes, proof_steps_))
          chosen = static_cast<std::int64_t>(i);
      }
    }
    if (chosen >= 0) {
      const std::int32_t id = pool_[static_cast<std::size_t>(chosen)];
      pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(chosen));
      return id;
    }
    storages_.push_back(storage{t.bytes, t.dt, t.scope, -1});
    return static_cast<std::int32_t>(storages_.size()) - 1;
  }

  // ---- 3. rewrite --------------------------------------------------------------------------
  constexpr binding make_storage(storage& s, const binding& alloc) {
    s.var = f_.add_var("storage", object_info());
    return make_binding(s.var, expr_kind::mem_alloc_storage,
                        {leaf::of_shape({s.bytes}), alloc.value.args[2], alloc.value.args[3], leaf::of_dtype(s.dt)});
  }
  constexpr void rewrite() {
    std::vector<binding> hoisted;
    auto rw = [&](function&, binding& b, std::vector<binding>& out) {
      const std::int32_t t = b.value.kind == expr_kind::builtin_alloc_tensor ? tree_of(leaf::of_var(b.var)).token : -1;
      if (!planned(t)) {
        out.push_back(static_cast<binding&&>(b));
        return;
      }
      storage& s = storages_[static_cast<std::size_t>(tok(t).storage)];
      if (s.var < 0) {
        if (opt_.hoist_constant_storage && s.bytes.is_const()) hoisted.push_back(make_storage(s, b));
        else out.push_back(make_storage(s, b));
      }
      std::vector<leaf> args{leaf::of_var(s.var), leaf::of_int(0), b.value.args[0], b.value.args[1]};
      out.push_back(make_binding(b.var, expr_kind::mem_alloc_tensor, static_cast<std::vector<leaf>&&>(args)));
    };
    rewrite_seq(f_, f_.body, rw);
    if (hoisted.empty()) return;
    if (f_.body.blocks.empty()) f_.body.blocks.push_back(block{});
    for (binding& b : f_.body.blocks.front().bindings) hoisted.push_back(static_cast<binding&&>(b));
    f_.body.blocks.front().bindings = static_cast<std::vector<binding>&&>(hoisted);
  }

  module& m_;
  function& f_;
  plan_options opt_;
  relaxvm::detail::text& err_;
  std::vector<sym_range> ranges_;
  std::vector<tree> trees_;
  std::vector<token> tokens_;
  std::vector<storage> storages_;
  std::vector<std::int32_t> pool_;
  std::int32_t next_block_ = 0;
  std::int64_t proof_steps_ = max_plan_proof_steps;  // what the function's size proofs have left
  tree none_;
};

}  // namespace detail

namespace pass {

/// StaticPlanBlockMemory; see the top of this file. Runs after call_tir_rewrite.
constexpr pass_output try_static_plan_block_memory(module m, plan_options o = {}) {
  pass_output res;
  for (function& f : m.funcs) {
    detail::memory_planner(m, f, o, res.message).run();
    if (!res.ok()) return res;
  }
  res.mod = static_cast<module&&>(m);
  return res;
}
inline module static_plan_block_memory(module m, plan_options o = {}) {
  return detail::to_result(try_static_plan_block_memory(static_cast<module&&>(m), o)).value();
}

}  // namespace pass
}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_MEMORY_PLAN_HPP
