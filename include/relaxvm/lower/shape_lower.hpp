// SPDX-License-Identifier: Apache-2.0
// ShapeLower: the reference's VMShapeLower and ComputePrimValue in one pass (docs/lowering.md,
// Shape lowering). Every symbolic expression of a function gets a slot on an int64
// shape heap, in the reference's order; parameters, match_casts and the return value are checked
// with vm.builtin.check_* calls and matched with vm.builtin.match_shape / match_prim_value in two
// rounds; composite expressions are computed as soon as their variables are known, with one
// vm.builtin.shape_arith call per match point (where the reference generates a TIR shape
// function); symbolic shapes and prim values in value position become make_shape /
// make_prim_value. Error contexts are the reference's strings, trailing space included.
//
// Differences from the reference, on purpose:
//   - composites are computed by shape_arith groups into temporary slots after the reference's
//     slots (so match_shape / make_shape arguments equal the reference's);
//   - symbolic conditions (n > 4, and, or, not) are computed the same way (arith_op codes 7-14);
//   - what an if branch matches stays inside the branch (the reference's computed flags are
//     function-wide, so a variable stored in one branch was loaded, unset, in the other);
//   - a weight (parameter past num_input) whose shape is unknown is skipped, not a crash
//     (apache/tvm#20335);
//   - a variable with an upper bound (function_builder::upper_bound) is checked against it with
//     vm.builtin.check_upper_bound as soon as it is matched: planned storages are sized by it.
#ifndef RELAXVM_LOWER_SHAPE_LOWER_HPP
#define RELAXVM_LOWER_SHAPE_LOWER_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/text_builder.hpp"
#include "../builtins/codes.hpp"
#include "ir.hpp"
#include "passes.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

namespace detail {

class shape_lowerer {
 public:
  constexpr shape_lowerer(module& m, function& f, relaxvm::detail::text& err, bool reuse_shapes = false,
                          bool elide_proven_return = false)
      : m_(m), f_(f), err_(err), reuse_shapes_(reuse_shapes), elide_proven_return_(elide_proven_return) {}

  constexpr void run() {
    collect();
    if (!ok()) return;
    std::vector<binding> out;
    out_ = &out;
    // The heap first; its size (and whether it exists) is known at the end.
    heap_ = f_.add_var("shape_heap", tensor_info(relaxvm::dtype::int64(), 1));
    out.push_back(make_binding(heap_, expr_kind::call_builtin, {leaf::of_int(0)}, "vm.builtin.alloc_shape_heap"));
    // Parameters: every check first, then the matches (the reference's order).
    std::vector<todo> todos;
    for (std::size_t i = 0; i < f_.params.size(); ++i) {
      // A copy: checking adds variables to f_.vars, which may move.
      const var_info p = f_.var(f_.params[i]);
      relaxvm::detail::text ctx;
      ctx << "ErrorContext(fn=" << f_.nm.view() << ", loc=param[" << i << "], param=" << p.nm.view() << ", annotation=";
      print_info(ctx, m_.syms, p.info);
      ctx << ") ";
      const bool dynamic_only = f_.num_input >= 0 && static_cast<std::int64_t>(i) >= f_.num_input;
      check_match_cast(p.info, leaf::of_var(f_.params[i]), true, dynamic_only, ctx.view(), todos);
    }
    rounds(todos);
    // The body.
    seq body = static_cast<seq&&>(f_.body);
    lower_seq(body);
    if (!ok()) return;
    // The return value: checks, then one round (everything must be known by now).
    if (f_.has_ret_info && !(elide_proven_return_ && proven_return(body.result))) {
      relaxvm::detail::text ctx;
      ctx << "ErrorContext(fn=" << f_.nm.view() << ", loc=return, annotation=";
      print_info(ctx, m_.syms, f_.ret_info);
      ctx << ") ";
      std::vector<todo> ret;
      out_ = &body_out_;
      check_match_cast(f_.ret_info, body.result, false, false, ctx.view(), ret);
      run_match(ret, true);
      for (binding& b : body_out_) body.blocks.back().bindings.push_back(static_cast<binding&&>(b));
      body_out_.clear();
    }
    if (!ok()) return;
    const std::int64_t size = static_cast<std::int64_t>(slots_.size()) + max_temps_;
    if (size > 0) out[0].value.args[0] = leaf::of_int(size);
    else out[0] = make_binding(heap_, expr_kind::null_value, {});
    if (size == 0) f_.var(heap_).info = object_info();
    // Prepend the parameter section to the body.
    if (body.blocks.empty()) body.blocks.push_back(block{});
    for (binding& b : body.blocks.front().bindings) out.push_back(static_cast<binding&&>(b));
    body.blocks.front().bindings = static_cast<std::vector<binding>&&>(out);
    f_.body = static_cast<seq&&>(body);
  }

 private:
  struct slot {
    sym_ref e;
    bool is_var = false;
    bool computed = false;
    std::int64_t outstanding = 0;  // composites: variables not yet known
    std::vector<std::int64_t> users;
  };
  struct todo {
    leaf value;
    std::vector<sym_ref> pattern;
    bool prim = false;
    name ctx;  // the match point's ErrorContext
  };

  constexpr bool ok() const { return err_.empty(); }
  constexpr relaxvm::detail::text& fail() {
    err_ << "function '" << f_.nm.view() << "': ";
    return err_;
  }

  // ---- slots -------------------------------------------------------------------------------
  constexpr std::int64_t find_slot(sym_ref e) const {
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (m_.syms.equal(slots_[i].e, e)) return static_cast<std::int64_t>(i);
    return -1;
  }
  constexpr void add_slot(sym_ref e) {
    if (e.is_const() || find_slot(e) >= 0) return;
    slot s;
    s.e = e;
    s.is_var = m_.syms.is_var(e);
    slots_.push_back(static_cast<slot&&>(s));
  }
  constexpr void collect_info(const struct_info& s) {
    for (const sym_ref& d : s.dims) add_slot(d);
    for (const struct_info& x : s.fields) collect_info(x);
  }
  constexpr void collect_leaf(const leaf& l) {
    if (l.kind == leaf_kind::prim) add_slot(l.value);
    if (l.kind == leaf_kind::shape)
      for (const sym_ref& d : l.dims) add_slot(d);
  }
  constexpr void collect_seq(const seq& s) {
    for (const block& b : s.blocks)
      for (const binding& x : b.bindings) {
        for (const leaf& l : x.value.args) collect_leaf(l);
        const expr_kind k = x.value.kind;
        if (k == expr_kind::call_packed || k == expr_kind::call_builtin || k == expr_kind::call_func ||
            k == expr_kind::invoke_closure)
          collect_info(f_.var(x.var).info);  // the call's annotation (sinfo_args)
        if (x.match_cast) collect_info(x.cast);
        for (const seq& br : x.value.branches) collect_seq(br);
      }
    collect_leaf(s.result);
  }
  constexpr void collect() {
    for (std::int32_t p : f_.params) collect_info(f_.var(p).info);
    collect_seq(f_.body);
    if (f_.has_ret_info) collect_info(f_.ret_info);
    // Each composite waits for its variables, which must have slots of their own.
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].is_var) continue;
      std::vector<std::int64_t> vars;
      m_.syms.free_vars(slots_[i].e, vars);
      for (std::int64_t v : vars) {
        std::int64_t at = -1;
        for (std::size_t j = 0; j < slots_.size(); ++j)
          if (slots_[j].is_var && m_.syms.var_index(slots_[j].e) == v) at = static_cast<std::int64_t>(j);
        if (at < 0) {
          fail() << "symbolic variable '" << m_.syms.var_name(v) << "' is not defined in the function but is used by ";
          m_.syms.print(err_, slots_[i].e);
          return;
        }
        slots_[static_cast<std::size_t>(at)].users.push_back(static_cast<std::int64_t>(i));
      }
      slots_[i].outstanding = static_cast<std::int64_t>(vars.size());
    }
  }

  // ---- emitting ----------------------------------------------------------------------------
  constexpr void emit(std::int32_t v, expr_kind k, std::vector<leaf> args, std::string_view callee = {}) {
    // The shapes made so far may read slots these write (temporaries are reused).
    if (callee == "vm.builtin.match_shape" || callee == "vm.builtin.shape_arith" || callee == "vm.builtin.match_prim_value")
      made_.clear();
    out_->push_back(make_binding(v, k, static_cast<std::vector<leaf>&&>(args), callee));
  }
  constexpr void emit_void(std::string_view callee, std::vector<leaf> args) {
    emit(f_.add_var("_", void_info()), expr_kind::call_packed, static_cast<std::vector<leaf>&&>(args), callee);
  }
  static constexpr leaf code(builtins::match_code c) { return leaf::of_int(static_cast<std::int64_t>(c)); }
  static constexpr leaf code(builtins::make_code c) { return leaf::of_int(static_cast<std::int64_t>(c)); }

  constexpr struct_info info_of(const leaf& l) const {
    switch (l.kind) {
      case leaf_kind::var: return f_.var(l.index).info;
      case leaf_kind::prim: return prim_info(l.dt);
      case leaf_kind::shape: return shape_info(static_cast<std::int32_t>(l.dims.size()));
      case leaf_kind::constant: {
        const constant& c = m_.constants[static_cast<std::size_t>(l.index)];
        return tensor_info(c.dt, static_cast<std::int32_t>(c.dims.size()));
      }
      case leaf_kind::func: return func_info();
      default: return object_info();
    }
  }
  // Whether a value of `derived` always fits `base`'s kind, ndim and dtype (IsBaseOf on the part
  // the check_* builtins test).
  static constexpr bool fits(const struct_info& base, const struct_info& derived) {
    if (base.kind != derived.kind) return false;
    switch (base.kind) {
      case info_kind::tensor:
        return (base.ndim < 0 || base.ndim == derived.ndim) && (base.dt.is_void() || base.dt == derived.dt);
      case info_kind::shape: return base.ndim < 0 || base.ndim == derived.ndim;
      case info_kind::prim: return base.dt == derived.dt;
      default: return true;
    }
  }

  /// No symbolic dimension (true for an unknown shape too: nothing dynamic to match).
  static constexpr bool all_static(const struct_info& info) {
    for (const sym_ref& d : info.dims)
      if (!d.is_const()) return false;
    return true;
  }
  /// Whether check_match_cast(info, a value of `vinfo`, ...) emits a check or collects a match.
  static constexpr bool emits(const struct_info& info, const struct_info& vinfo, bool always_check, bool dynamic_only) {
    switch (info.kind) {
      case info_kind::object: return false;
      case info_kind::func: return always_check || !fits(info, vinfo);
      case info_kind::tensor:
        if (dynamic_only && all_static(info)) return false;
        return always_check || !fits(info, vinfo) || info.known;
      case info_kind::shape:
      case info_kind::prim: return always_check || !fits(info, vinfo) || info.known;
      case info_kind::tuple: {
        const bool tuple_known = vinfo.kind == info_kind::tuple && vinfo.fields.size() == info.fields.size();
        if (always_check || !tuple_known) return true;
        for (std::size_t i = 0; i < info.fields.size(); ++i)
          if (emits(info.fields[i], vinfo.fields[i], always_check, dynamic_only)) return true;
        return false;
      }
    }
    return true;
  }

  /// Emits the type/ndim/dtype checks of `info` for `value` and collects what to match.
  constexpr void check_match_cast(const struct_info& info, const leaf& value, bool always_check, bool dynamic_only,
                                  std::string_view ctx, std::vector<todo>& todos) {
    if (!ok()) return;
    const struct_info vinfo = info_of(value);
    switch (info.kind) {
      case info_kind::object: return;
      case info_kind::func:
        if (always_check || !fits(info, vinfo)) emit_void("vm.builtin.check_func_info", {value, leaf::of_string(ctx)});
        return;
      case info_kind::tensor: {
        if (dynamic_only && all_static(info)) return;  // a static weight (or one of unknown shape): nothing to check
        if (always_check || !fits(info, vinfo))
          emit_void("vm.builtin.check_tensor_info",
                    {value, leaf::of_int(info.ndim), leaf::of_dtype(info.dt), leaf::of_string(ctx)});
        if (info.known) todos.push_back(todo{value, info.dims, false, name(ctx)});
        return;
      }
      case info_kind::shape:
        if (always_check || !fits(info, vinfo))
          emit_void("vm.builtin.check_shape_info", {value, leaf::of_int(info.ndim), leaf::of_string(ctx)});
        if (info.known) todos.push_back(todo{value, info.dims, false, name(ctx)});
        return;
      case info_kind::prim:
        if (always_check || !fits(info, vinfo))
          emit_void("vm.builtin.check_prim_value_info", {value, leaf::of_dtype(info.dt), leaf::of_string(ctx)});
        if (info.known) todos.push_back(todo{value, info.dims, true, name(ctx)});
        return;
      case info_kind::tuple: {
        const bool tuple_known = vinfo.kind == info_kind::tuple;
        if (tuple_known && vinfo.fields.size() != info.fields.size()) {
          fail() << "TypeError: " << ctx << " during match-cast we find tuple size mismatch (" << vinfo.fields.size()
                 << " fields, annotation " << info.fields.size() << ")";
          return;
        }
        if (always_check || !tuple_known)
          emit_void("vm.builtin.check_tuple_info",
                    {value, leaf::of_int(static_cast<std::int64_t>(info.fields.size())), leaf::of_string(ctx)});
        for (std::size_t i = 0; i < info.fields.size(); ++i) {
          // A field is taken out of the tuple only when something checks or matches it.
          const struct_info field_info = tuple_known ? vinfo.fields[i] : object_info();
          if (!emits(info.fields[i], field_info, always_check, dynamic_only)) continue;
          std::int32_t field;
          if (tuple_known) {
            field = f_.add_var("lv", vinfo.fields[i]);
            binding b = make_binding(field, expr_kind::get_item, {value});
            b.value.index = static_cast<std::int64_t>(i);
            out_->push_back(static_cast<binding&&>(b));
          } else {
            field = f_.add_var("tuple_get_item", object_info());
            emit(field, expr_kind::call_packed, {value, leaf::of_int(static_cast<std::int64_t>(i))},
                 "vm.builtin.tuple_getitem");
          }
          check_match_cast(info.fields[i], leaf::of_var(field), always_check, dynamic_only, ctx, todos);
        }
        return;
      }
    }
  }

  /// Emits one match per todo; returns the todos that wait for composites.
  constexpr std::vector<todo> run_match(const std::vector<todo>& todos, bool require) {
    std::vector<todo> outstanding;
    for (const todo& t : todos) {
      if (!ok()) break;
      std::vector<leaf> codes;
      bool all_noop = true, deferred = false;
      for (const sym_ref& d : t.pattern) {
        if (d.is_const()) {
          codes.push_back(code(builtins::match_code::assert_equal_to_imm));
          codes.push_back(leaf::of_int(d.value));
          all_noop = false;
          continue;
        }
        const std::int64_t s = find_slot(d);
        slot& sl = slots_[static_cast<std::size_t>(s)];
        if (sl.computed) {
          codes.push_back(code(builtins::match_code::assert_equal_to_load));
          codes.push_back(leaf::of_int(s));
          all_noop = false;
        } else if (sl.is_var) {
          codes.push_back(code(builtins::match_code::store_to_heap));
          codes.push_back(leaf::of_int(s));
          sl.computed = true;
          ready_.push_back(s);
          all_noop = false;
        } else if (require) {
          fail() << "the expression ";
          m_.syms.print(err_, d);
          err_ << " is not computed when it is matched";
          return outstanding;
        } else {
          codes.push_back(code(builtins::match_code::no_op));
          codes.push_back(leaf::of_int(0));
          deferred = true;
        }
      }
      if (deferred) outstanding.push_back(t);
      if (all_noop) continue;
      const leaf ctx = leaf::of_string(t.ctx.view());
      if (t.prim) {
        emit_void("vm.builtin.match_prim_value", {t.value, leaf::of_var(heap_), codes[0], codes[1], ctx});
      } else {
        std::vector<leaf> args{t.value, leaf::of_var(heap_), leaf::of_int(static_cast<std::int64_t>(t.pattern.size()))};
        for (leaf& c : codes) args.push_back(static_cast<leaf&&>(c));
        args.push_back(ctx);
        emit_void("vm.builtin.match_shape", static_cast<std::vector<leaf>&&>(args));
      }
    }
    return outstanding;
  }

  /// Checks each variable just stored that has an upper bound (relaxvm's addition: the reference
  /// trusts the bound, and a larger value overruns storages planned by it).
  constexpr void check_upper_bounds() {
    for (std::int64_t s : ready_) {
      const std::int64_t v = m_.syms.var_index(slots_[static_cast<std::size_t>(s)].e);
      for (const upper_bound& u : f_.upper_bounds) {
        if (u.var != v) continue;
        relaxvm::detail::text ctx;
        ctx << "ErrorContext(fn=" << f_.nm.view() << ", loc=upper_bound) ";
        emit_void("vm.builtin.check_upper_bound", {leaf::of_var(heap_), leaf::of_int(s), leaf::of_int(u.bound),
                                                   leaf::of_string(m_.syms.var_name(v)), leaf::of_string(ctx.view())});
      }
    }
  }

  /// Computes every composite whose variables just became known, in one shape_arith call.
  constexpr void emit_outstanding() {
    std::vector<std::int64_t> to_compute;
    if (!first_compute_done_) {
      first_compute_done_ = true;
      for (std::size_t i = 0; i < slots_.size(); ++i)
        if (!slots_[i].is_var && slots_[i].outstanding == 0) to_compute.push_back(static_cast<std::int64_t>(i));
    }
    for (std::int64_t v : ready_)
      for (std::int64_t u : slots_[static_cast<std::size_t>(v)].users)
        if (--slots_[static_cast<std::size_t>(u)].outstanding == 0) to_compute.push_back(u);
    ready_.clear();
    if (to_compute.empty()) return;
    std::vector<leaf> args{leaf::of_var(heap_)};
    for (std::int64_t s : to_compute) {
      temps_ = 0;
      decompose(slots_[static_cast<std::size_t>(s)].e, s, args, true);
      slots_[static_cast<std::size_t>(s)].computed = true;
    }
    emit_void("vm.builtin.shape_arith", static_cast<std::vector<leaf>&&>(args));
  }
  // Appends the groups computing `e` into slot `dst` (or a temporary); returns where the value is.
  constexpr std::int64_t decompose(sym_ref e, std::int64_t dst, std::vector<leaf>& args, bool top) {
    const sym_node& n = m_.syms.node(e);
    const auto operand = [&](sym_ref x, leaf& c, leaf& v) {
      if (x.is_const()) {
        c = code(builtins::make_code::use_imm);
        v = leaf::of_int(x.value);
        return;
      }
      const std::int64_t s = find_slot(x);
      std::int64_t at;
      if (s >= 0 && slots_[static_cast<std::size_t>(s)].computed) at = s;
      else at = decompose(x, -1, args, false);
      c = code(builtins::make_code::load_shape);
      v = leaf::of_int(at);
    };
    leaf ca, va, cb, vb;
    builtins::arith_op op = builtins::arith_op::add;
    operand(m_.syms.lhs(e), ca, va);
    if (n.op == sym_op::not_) {
      op = builtins::arith_op::eq;
      cb = code(builtins::make_code::use_imm);
      vb = leaf::of_int(0);
    } else {
      operand(m_.syms.rhs(e), cb, vb);
      op = arith_of(n.op);
    }
    if (!top) {
      dst = static_cast<std::int64_t>(slots_.size()) + temps_++;
      if (temps_ > max_temps_) max_temps_ = temps_;
    }
    args.push_back(leaf::of_int(static_cast<std::int64_t>(op)));
    args.push_back(leaf::of_int(dst));
    args.push_back(ca);
    args.push_back(va);
    args.push_back(cb);
    args.push_back(vb);
    return dst;
  }
  static constexpr builtins::arith_op arith_of(sym_op op) {
    switch (op) {
      case sym_op::add: return builtins::arith_op::add;
      case sym_op::sub: return builtins::arith_op::sub;
      case sym_op::mul: return builtins::arith_op::mul;
      case sym_op::floordiv: return builtins::arith_op::floordiv;
      case sym_op::floormod: return builtins::arith_op::floormod;
      case sym_op::min: return builtins::arith_op::min;
      case sym_op::max: return builtins::arith_op::max;
      case sym_op::eq: return builtins::arith_op::eq;
      case sym_op::ne: return builtins::arith_op::ne;
      case sym_op::lt: return builtins::arith_op::lt;
      case sym_op::le: return builtins::arith_op::le;
      case sym_op::gt: return builtins::arith_op::gt;
      case sym_op::ge: return builtins::arith_op::ge;
      case sym_op::and_: return builtins::arith_op::and_;
      case sym_op::or_: return builtins::arith_op::or_;
      default: return builtins::arith_op::add;
    }
  }


  // ---- the body ----------------------------------------------------------------------------

  // A symbolic shape or prim value in value position becomes make_shape / make_prim_value: `e`
  // receives the call. False when `l` needs nothing (or on an error).
  constexpr bool make_value(const leaf& l, expr& e) {
    if (!ok()) return false;
    std::vector<leaf> args{leaf::of_var(heap_)};
    if (l.kind == leaf_kind::prim && !l.value.is_const()) {
      const std::int64_t s = computed_slot(l.value);
      if (s < 0) return false;
      args.push_back(code(builtins::make_code::load_shape));
      args.push_back(leaf::of_int(s));
      e = make_binding(-1, expr_kind::call_packed, static_cast<std::vector<leaf>&&>(args), "vm.builtin.make_prim_value").value;
      return true;
    }
    if (l.kind != leaf_kind::shape) return false;
    bool symbolic = false;
    for (const sym_ref& d : l.dims) symbolic = symbolic || !d.is_const();
    if (!symbolic) return false;
    args.push_back(leaf::of_int(static_cast<std::int64_t>(l.dims.size())));
    for (const sym_ref& d : l.dims) {
      if (d.is_const()) {
        args.push_back(code(builtins::make_code::use_imm));
        args.push_back(leaf::of_int(d.value));
        continue;
      }
      const std::int64_t s = computed_slot(d);
      if (s < 0) return false;
      args.push_back(code(builtins::make_code::load_shape));
      args.push_back(leaf::of_int(s));
    }
    e = make_binding(-1, expr_kind::call_packed, static_cast<std::vector<leaf>&&>(args), "vm.builtin.make_shape").value;
    return true;
  }
  // An argument: the value is bound to a new variable first.
  constexpr void lower_leaf(leaf& l) {
    expr e;
    if (!make_value(l, e)) return;
    // With reuse_shapes, a shape made earlier in this sequence (or an enclosing one) from the same
    // slots, with no write to the heap since, is used again.
    std::vector<std::int64_t> key;
    if (reuse_shapes_ && e.callee == "vm.builtin.make_shape") {
      for (std::size_t i = 1; i < e.args.size(); ++i) key.push_back(e.args[i].value.value);
      for (const made_shape& m : made_)
        if (m.key == key) {
          l = leaf::of_var(m.var);
          return;
        }
    }
    const std::int32_t v = f_.add_var("lv", l.kind == leaf_kind::prim ? prim_info(l.dt)
                                                                      : shape_info(static_cast<std::int32_t>(l.dims.size())));
    binding b;
    b.var = v;
    b.value = static_cast<expr&&>(e);
    out_->push_back(static_cast<binding&&>(b));
    l = leaf::of_var(v);
    if (!key.empty()) {
      if (made_.size() == max_made_shapes) made_.erase(made_.begin());  // a bounded search per use
      made_.push_back(made_shape{static_cast<std::vector<std::int64_t>&&>(key), v});
    }
  }
  constexpr std::int64_t computed_slot(sym_ref e) {
    const std::int64_t s = find_slot(e);
    if (s >= 0 && slots_[static_cast<std::size_t>(s)].computed) return s;
    fail() << "PrimExpr ";
    m_.syms.print(err_, e);
    err_ << " has not been computed where it is used; its variables must be matched (by a parameter or a match_cast) "
            "before this point";
    return -1;
  }

  // Whether the return annotation holds for `result` by construction: a tensor this function's
  // body allocated (R.vm.alloc_tensor, in the function's own sequence) with exactly the annotated
  // shape and dtype. Its shape's variables were known at the allocation, and a variable's slot is
  // written once, so the return check would compare each dimension with itself.
  constexpr bool proven_return(const leaf& result) const {
    const struct_info& want = f_.ret_info;
    if (result.kind != leaf_kind::var || want.kind != info_kind::tensor || !want.known) return false;
    for (const allocated& a : allocated_) {
      if (a.var != result.index) continue;
      if (a.dims.size() != want.dims.size() || !(want.dt.is_void() || want.dt == a.dt)) return false;
      for (std::size_t i = 0; i < a.dims.size(); ++i)
        if (!m_.syms.equal(a.dims[i], want.dims[i])) return false;
      return true;
    }
    return false;
  }

  constexpr void lower_seq(seq& s) {
    std::vector<binding> out;
    std::vector<binding>* saved = out_;
    out_ = &out;
    ++depth_;
    for (block& blk : s.blocks)
      for (binding& b : blk.bindings) {
        if (!ok()) return;
        if (elide_proven_return_ && depth_ == 1 && b.value.kind == expr_kind::vm_alloc_tensor && b.value.args.size() == 4 &&
            b.value.args[2].kind == leaf_kind::shape && b.value.args[3].kind == leaf_kind::dtype)
          allocated_.push_back(allocated{b.var, b.value.args[2].dims, b.value.args[3].dt});
        expr made;
        if (b.value.kind == expr_kind::leaf && !b.match_cast && make_value(b.value.args[0], made)) {
          b.value = static_cast<expr&&>(made);  // the binding itself becomes the call
        } else {
          for (leaf& l : b.value.args) lower_leaf(l);
        }
        const std::vector<made_shape> made_before = made_;
        for (seq& br : b.value.branches) {
          made_ = made_before;  // what the branch makes stays in it
          // What a branch matches stays in the branch.
          std::vector<char> computed;
          std::vector<std::int64_t> outstanding;
          for (const slot& x : slots_) {
            computed.push_back(x.computed);
            outstanding.push_back(x.outstanding);
          }
          lower_seq(br);
          for (std::size_t i = 0; i < slots_.size(); ++i) {
            slots_[i].computed = computed[i] != 0;
            slots_[i].outstanding = outstanding[i];
          }
        }
        if (!b.value.branches.empty()) made_.clear();  // the branches may have written the heap
        if (b.match_cast) {
          relaxvm::detail::text ctx;
          ctx << "ErrorContext(match_cast, struct_info=";
          print_info(ctx, m_.syms, b.cast);
          ctx << ") ";
          std::vector<todo> todos;
          check_match_cast(b.cast, b.value.args[0], false, false, ctx.view(), todos);
          rounds(todos);
        }
        out.push_back(static_cast<binding&&>(b));
      }
    lower_leaf(s.result);
    s.blocks.clear();
    s.blocks.push_back(block{false, static_cast<std::vector<binding>&&>(out)});
    out_ = saved;
    --depth_;
  }

  // Round 1, the upper-bound checks of the variables it stored, computation of what became known,
  // round 2 (which only loads: round 1 stores every variable of its patterns).
  constexpr void rounds(const std::vector<todo>& todos) {
    std::vector<todo> waiting = run_match(todos, false);
    check_upper_bounds();
    emit_outstanding();
    run_match(waiting, true);
  }

  module& m_;
  function& f_;
  relaxvm::detail::text& err_;
  std::vector<slot> slots_;
  std::vector<std::int64_t> ready_;
  std::int64_t temps_ = 0, max_temps_ = 0;
  bool first_compute_done_ = false;
  std::int32_t heap_ = -1;
  std::vector<binding>* out_ = nullptr;
  std::vector<binding> body_out_;
  // reuse_shapes: the make_shape calls that may be used again, by their (n, code, value, ...).
  struct made_shape {
    std::vector<std::int64_t> key;
    std::int32_t var = -1;
  };
  static constexpr std::size_t max_made_shapes = 32;
  bool reuse_shapes_ = false;
  std::vector<made_shape> made_;
  // elide_proven_return: the tensors the function's own sequence allocates, with their shapes.
  struct allocated {
    std::int32_t var = -1;
    std::vector<sym_ref> dims;
    relaxvm::dtype dt;
  };
  bool elide_proven_return_ = false;
  std::vector<allocated> allocated_;
  int depth_ = 0;  // of lower_seq: 1 in the function's own sequence
};

}  // namespace detail

namespace pass {

/// ShapeLower (VMShapeLower + ComputePrimValue); see the top of this file. With reuse_shapes,
/// a symbolic shape is made once where the reference makes it at each use; with
/// elide_proven_return, a return value allocated with its annotation is not checked (plan_options).
constexpr pass_output try_shape_lower(module m, bool reuse_shapes = false, bool elide_proven_return = false) {
  pass_output res;
  for (function& f : m.funcs) {
    detail::shape_lowerer(m, f, res.message, reuse_shapes, elide_proven_return).run();
    if (!res.ok()) return res;
  }
  res.mod = static_cast<module&&>(m);
  return res;
}
inline module shape_lower(module m, bool reuse_shapes = false, bool elide_proven_return = false) {
  return detail::to_result(try_shape_lower(static_cast<module&&>(m), reuse_shapes, elide_proven_return)).value();
}

}  // namespace pass
}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_SHAPE_LOWER_HPP
