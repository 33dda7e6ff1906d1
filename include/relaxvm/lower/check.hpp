// SPDX-License-Identifier: Apache-2.0
// The well-formedness checker (the reference's WellFormed, plus what its lowering assumes):
//   - function names are unique and not empty; parameter names are unique within a function;
//   - every variable is defined once, before its use, and used only where it is visible: a
//     dataflow variable inside its block, a variable of an if branch inside that branch;
//   - every symbolic variable is defined at a match point (a bare dimension or value in a
//     parameter's annotation, or in a match_cast's) before it, or an expression containing it, is
//     used; a symbolic variable belongs to one function;
//   - calls to functions of the module name one that exists, with its number of parameters;
//   - num_input and upper bounds make sense.
// Errors name the function and the binding, and say what to do.
#ifndef RELAXVM_LOWER_CHECK_HPP
#define RELAXVM_LOWER_CHECK_HPP

#include <cstdint>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/text_builder.hpp"
#include "ir.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

namespace detail {

class checker {
 public:
  constexpr explicit checker(const module& m) : m_(m), sym_owner_(m.syms.num_vars(), -1) {}

  constexpr bool run(relaxvm::detail::text& err) {
    for (std::size_t i = 0; i < m_.funcs.size() && ok(); ++i) {
      const function& f = m_.funcs[i];
      if (f.nm.empty()) fail_fn(f) << "a function needs a non-empty name";
      if (f.nm.view().substr(0, 11) == "vm.builtin.")
        fail_fn(f) << "names starting with 'vm.builtin.' belong to the VM's builtins; choose another name";
      for (std::size_t j = 0; j < i && ok(); ++j)
        if (m_.funcs[j].nm == f.nm) fail_fn(f) << "is defined twice; function names must be unique in a module";
      if (ok()) check_function(static_cast<std::int32_t>(i));
    }
    if (!ok()) err << err_;
    return ok();
  }

 private:
  constexpr bool ok() const { return err_.empty(); }
  constexpr relaxvm::detail::text& fail_fn(const function& f) {
    err_ << "function '" << f.nm.view() << "': ";
    return err_;
  }
  constexpr relaxvm::detail::text& fail_at(const binding& b) {
    err_ << "function '" << f_->nm.view() << "', binding " << binding_no_;
    if (b.var >= 0 && static_cast<std::size_t>(b.var) < f_->vars.size()) err_ << " (" << f_->var(b.var).nm.view() << ")";
    err_ << ": ";
    return err_;
  }

  constexpr void check_function(std::int32_t fi) {
    const function& f = m_.funcs[static_cast<std::size_t>(fi)];
    f_ = &f;
    fi_ = fi;
    binding_no_ = 0;
    defined_.assign(f.vars.size(), 0);
    visible_.assign(f.vars.size(), 0);
    sym_defined_.assign(m_.syms.num_vars(), 0);
    for (std::size_t i = 0; i < f.params.size(); ++i) {
      const std::int32_t p = f.params[i];
      if (p < 0 || static_cast<std::size_t>(p) >= f.vars.size()) {
        fail_fn(f) << "parameter " << i << " names no variable";
        return;
      }
      if (f.var(p).nm.empty()) {
        fail_fn(f) << "parameter " << i << " needs a name";
        return;
      }
      for (std::size_t j = 0; j < i; ++j)
        if (f.var(f.params[j]).nm == f.var(p).nm) {
          fail_fn(f) << "parameter name '" << f.var(p).nm.view() << "' is used twice; parameter names must be unique";
          return;
        }
      defined_[static_cast<std::size_t>(p)] = visible_[static_cast<std::size_t>(p)] = 1;
    }
    // All parameters define their symbolic variables before any composite is needed (the
    // reference matches every parameter, then computes, then matches again).
    for (std::int32_t p : f.params) define_syms(f.var(p).info);
    for (std::size_t i = 0; i < f.params.size() && ok(); ++i)
      need_syms(f.var(f.params[i]).info, "the annotation of parameter '", f.var(f.params[i]).nm.view());
    if (!ok()) return;
    if (f.num_input < -1) {
      fail_fn(f) << "num_input is " << f.num_input << "; it must be 0 or more";
      return;
    }
    if (f.num_input > static_cast<std::int64_t>(f.params.size())) {
      fail_fn(f) << "num_input is " << f.num_input << " but the function has " << f.params.size() << " parameters";
      return;
    }
    for (std::size_t i = 0; i < f.upper_bounds.size(); ++i) {
      const upper_bound& u = f.upper_bounds[i];
      if (u.var < 0 || static_cast<std::size_t>(u.var) >= sym_owner_.size()) {
        fail_fn(f) << "an upper bound names symbolic variable " << u.var << ", which does not exist";
        return;
      }
      for (std::size_t j = 0; j < i; ++j)
        if (f.upper_bounds[j].var == u.var) {
          fail_fn(f) << "'" << m_.syms.var_name(u.var) << "' has two upper bounds; give one";
          return;
        }
      if (u.bound <= 0) {
        fail_fn(f) << "the upper bound of '" << m_.syms.var_name(u.var) << "' is " << u.bound << "; it must be positive";
        return;
      }
      if (sym_owner_[static_cast<std::size_t>(u.var)] != fi_) {
        fail_fn(f) << "upper_bound names '" << m_.syms.var_name(u.var)
                   << "', which is not a symbolic variable of this function's parameters";
        return;
      }
    }
    check_seq(f.body);
    if (!ok()) return;
    if (f.has_ret_info) need_syms(f.ret_info, "the return annotation", "");
    if (!ok()) return;
    // Two symbolic variables of one function with one name would print (and read) as one.
    std::vector<std::int64_t> mine;
    for (std::size_t v = 0; v < sym_owner_.size(); ++v)
      if (sym_owner_[v] == fi_) mine.push_back(static_cast<std::int64_t>(v));
    for (std::size_t i = 0; i < mine.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (m_.syms.var_name(mine[i]) == m_.syms.var_name(mine[j])) {
          fail_fn(f) << "two symbolic variables are named '" << m_.syms.var_name(mine[i])
                     << "'; give each its own name";
          return;
        }
  }

  // Marks the bare variables of `s` (dimensions, shape values, a prim value) as defined here.
  // `fresh` (if given) receives the variables that were not defined before.
  constexpr void define_syms(const struct_info& s, std::vector<std::int64_t>* fresh = nullptr) {
    for (const sym_ref& d : s.dims) {
      if (!m_.syms.is_var(d)) continue;
      const auto v = static_cast<std::size_t>(m_.syms.var_index(d));
      if (fresh && !sym_defined_[v]) fresh->push_back(static_cast<std::int64_t>(v));
      sym_defined_[v] = 1;
      if (sym_owner_[v] < 0) sym_owner_[v] = fi_;
    }
    for (const struct_info& x : s.fields) define_syms(x, fresh);
  }
  constexpr void need_sym(sym_ref e, std::string_view where, std::string_view what) {
    std::vector<std::int64_t> vars;
    m_.syms.free_vars(e, vars);
    for (std::int64_t v : vars) {
      const auto u = static_cast<std::size_t>(v);
      if (sym_owner_[u] >= 0 && sym_owner_[u] != fi_) {
        err_ << "function '" << f_->nm.view() << "': symbolic variable '" << m_.syms.var_name(v)
             << "' belongs to function '" << m_.funcs[static_cast<std::size_t>(sym_owner_[u])].nm.view()
             << "'; make a new one with module_builder::sym() for each function";
        return;
      }
      if (!sym_defined_[u]) {
        err_ << "function '" << f_->nm.view() << "'";
        if (cur_) {
          err_ << ", binding " << binding_no_;
          if (cur_->var >= 0) err_ << " (" << f_->var(cur_->var).nm.view() << ")";
        }
        err_ << ": symbolic variable '" << m_.syms.var_name(v) << "' in " << where << what
             << (what.empty() ? "" : "'")
             << " is used before it is defined; define it first as a bare dimension of a parameter's or a "
                "match_cast's annotation";
        return;
      }
    }
  }
  // "function 'main': the annotation of 'lv'" (`what` names a variable, or is empty).
  constexpr relaxvm::detail::text& fail_info(std::string_view where, std::string_view what) {
    err_ << "function '" << f_->nm.view() << "': " << where << what << (what.empty() ? "" : "'");
    return err_;
  }
  constexpr void need_syms(const struct_info& s, std::string_view where, std::string_view what) {
    if (s.ndim > max_ndim || s.dims.size() > static_cast<std::size_t>(max_ndim)) {
      fail_info(where, what) << " has "
           << s.dims.size() << " dimensions; at most " << max_ndim << " are supported";
      return;
    }
    for (const sym_ref& d : s.dims)
      if (s.kind != info_kind::prim && d.is_const() && d.value < 0) {
        fail_info(where, what)
             << " has the negative dimension " << d.value;
        return;
      }
    if (s.kind == info_kind::prim && !(s.dt.is_int() || s.dt.is_uint())) {
      fail_info(where, what)
           << " is a prim value of dtype " << s.dt << "; prim values are integers or bool";
      return;
    }
    if (s.invalid) {
      fail_info(where, what)
           << " has an invalid expression (a constant fold that overflows int64 or divides by zero, nesting deeper than ir::max_sym_depth or larger than ir::max_sym_nodes, or symbolic variables of another module_builder)";
      return;
    }
    for (const sym_ref& d : s.dims) {
      if (!ok()) return;
      need_sym(d, where, what);
    }
    for (const struct_info& x : s.fields) {
      if (!ok()) return;
      need_syms(x, where, what);
    }
  }

  constexpr void use(const leaf& l, const binding* b) {
    if (!ok()) return;
    switch (l.kind) {
      case leaf_kind::var: {
        if (l.index < 0 || static_cast<std::size_t>(l.index) >= f_->vars.size()) {
          fail_here(b) << "an argument names variable " << l.index << ", which does not exist";
          return;
        }
        const auto v = static_cast<std::size_t>(l.index);
        if (!defined_[v]) {
          fail_here(b) << "variable '" << f_->var(l.index).nm.view() << "' is used before it is defined";
        } else if (!visible_[v]) {
          if (f_->var(l.index).dataflow)
            fail_here(b) << "variable '" << f_->var(l.index).nm.view()
                         << "' is a dataflow variable of an earlier block; only the block's outputs are visible "
                            "after it (call output() on the dataflow scope)";
          else
            fail_here(b) << "variable '" << f_->var(l.index).nm.view()
                         << "' is defined inside an if branch and is not visible here; return it from the branch";
        }
        return;
      }
      case leaf_kind::constant:
        if (l.index < 0 || static_cast<std::size_t>(l.index) >= m_.constants.size())
          fail_here(b) << "constant " << l.index << " does not exist";
        return;
      case leaf_kind::prim:
        if (l.dt == relaxvm::dtype::float64()) {
          if (!l.value.is_const()) fail_here(b) << "a float64 prim value must be a constant";
          return;
        }
        if (!(l.dt.is_int() || l.dt.is_uint()))
          fail_here(b) << "a prim value of dtype " << l.dt << "; prim values are integers, bool or float64 constants";
        else need_sym(l.value, "a prim value", "");
        return;
      case leaf_kind::shape:
        if (l.dims.size() > static_cast<std::size_t>(max_ndim)) {
          fail_here(b) << "a shape of " << l.dims.size() << " dimensions; at most " << max_ndim << " are supported";
          return;
        }
        for (const sym_ref& d : l.dims) {
          if (d.is_const() && d.value < 0) {
            fail_here(b) << "a shape has the negative dimension " << d.value;
            return;
          }
          need_sym(d, "a shape", "");
        }
        return;
      case leaf_kind::func:
        if (m_.find(l.text.view()) < 0)
          fail_here(b) << "function '" << l.text.view() << "' is not in the module";
        return;
      default: return;
    }
  }
  constexpr relaxvm::detail::text& fail_here(const binding* b) {
    if (b) return fail_at(*b);
    err_ << "function '" << f_->nm.view() << "', result: ";
    return err_;
  }

  constexpr void check_seq(const seq& s) {
    std::vector<std::int32_t> local;  // variables defined in this seq (hidden when it ends)
    std::vector<std::int64_t> local_syms;
    for (const block& blk : s.blocks) {
      std::vector<std::int32_t> df;
      for (const binding& b : blk.bindings) {
        ++binding_no_;
        cur_ = &b;
        check_binding(b, local_syms);
        if (!ok()) return;
        if (b.var >= 0) {
          local.push_back(b.var);
          if (f_->var(b.var).dataflow) df.push_back(b.var);
        }
      }
      cur_ = nullptr;
      for (std::int32_t v : df) visible_[static_cast<std::size_t>(v)] = 0;
    }
    cur_ = nullptr;
    use(s.result, nullptr);
    if (!ok()) return;
    if (s.result.kind == leaf_kind::none) {
      fail_fn(*f_) << "has no result; end it with ret(value)";
      return;
    }
    if (s.result.is_var() && f_->var(s.result.index).dataflow) {
      fail_fn(*f_) << "returns dataflow variable '" << f_->var(s.result.index).nm.view()
                   << "'; make it an output of its dataflow block";
      return;
    }
    for (std::int32_t v : local) visible_[static_cast<std::size_t>(v)] = 0;
    for (std::int64_t v : local_syms) sym_defined_[static_cast<std::size_t>(v)] = 0;
  }

  constexpr void check_binding(const binding& b, std::vector<std::int64_t>& local_syms) {
    if (b.var >= 0) {
      if (static_cast<std::size_t>(b.var) >= f_->vars.size()) {
        fail_at(b) << "binds variable " << b.var << ", which does not exist";
        return;
      }
      if (defined_[static_cast<std::size_t>(b.var)]) {
        fail_at(b) << "variable '" << f_->var(b.var).nm.view() << "' is defined twice; each variable is bound once";
        return;
      }
    }
    const expr& e = b.value;
    if (!well_shaped(e)) {
      fail_at(b) << "a malformed expression (" << e.args.size() << " arguments, " << e.branches.size()
                 << " branches for its kind)";
      return;
    }
    if (is_callee_kind(e.kind) && m_.find(e.callee.view()) >= 0) {
      fail_at(b) << "calls packed function '" << e.callee.view()
                 << "', which is also the name of a function of the module; rename one of them";
      return;
    }
    for (const leaf& l : e.args) use(l, &b);
    if (!ok()) return;
    if (e.kind == expr_kind::call_func) {
      const std::int64_t callee = m_.find(e.callee.view());
      if (callee < 0) {
        fail_at(b) << "calls function '" << e.callee.view() << "', which is not in the module";
        return;
      }
      const std::size_t n = m_.funcs[static_cast<std::size_t>(callee)].params.size();
      if (n != e.args.size()) {
        fail_at(b) << "calls '" << e.callee.view() << "' with " << e.args.size() << " arguments; it has " << n
                   << " parameters";
        return;
      }
    }
    if (e.kind == expr_kind::make_closure && !e.args.empty()) {
      const std::int64_t callee = m_.find(e.args[0].text.view());
      if (callee >= 0 && m_.funcs[static_cast<std::size_t>(callee)].params.size() < e.args.size() - 1) {
        fail_at(b) << "make_closure captures " << e.args.size() - 1 << " values but '" << e.args[0].text.view()
                   << "' has only " << m_.funcs[static_cast<std::size_t>(callee)].params.size() << " parameters";
        return;
      }
    }
    if (!e.branches.empty() && ++if_depth_ > max_nesting) {
      fail_at(b) << "if nested deeper than " << max_nesting;
      return;
    }
    for (const seq& br : e.branches) {
      check_seq(br);
      if (!ok()) return;
    }
    if (!e.branches.empty()) --if_depth_;
    if (b.match_cast) {
      // The annotation's bare variables are defined here (until the sequence ends); composites
      // may use them.
      define_syms(b.cast, &local_syms);
      need_syms(b.cast, "the match_cast annotation", "");
      if (!ok()) return;
    }
    if (b.var >= 0) {
      need_syms(f_->var(b.var).info, "the annotation of '", f_->var(b.var).nm.view());
      defined_[static_cast<std::size_t>(b.var)] = visible_[static_cast<std::size_t>(b.var)] = 1;
    }
  }

  static constexpr std::int32_t max_ndim = 64;
  static constexpr std::int32_t max_nesting = 256;  // if_ in if_ (ir::max_if_depth)

  static constexpr bool is_callee_kind(expr_kind k) {
    return k == expr_kind::call_dps || k == expr_kind::call_packed || k == expr_kind::call_builtin;
  }
  // The arguments (and branches) each kind of expression has.
  static constexpr bool well_shaped(const expr& e) {
    const std::size_t n = e.args.size();
    if (e.kind != expr_kind::if_ && !e.branches.empty()) return false;
    switch (e.kind) {
      case expr_kind::leaf:
      case expr_kind::shape_of:
      case expr_kind::get_item:
      case expr_kind::mem_kill_storage:
      case expr_kind::mem_kill_tensor:
      case expr_kind::vm_kill_object: return n == 1;
      case expr_kind::reshape: return n == 2;
      case expr_kind::if_: return n == 1 && e.branches.size() == 2;
      case expr_kind::make_closure: return n >= 1 && e.args[0].kind == leaf_kind::func;
      case expr_kind::invoke_closure: return n >= 1;
      case expr_kind::builtin_alloc_tensor:
      case expr_kind::mem_alloc_storage:
      case expr_kind::mem_alloc_tensor:
      case expr_kind::vm_alloc_storage:
      case expr_kind::vm_alloc_tensor: return n == 4;
      case expr_kind::null_value: return n == 0;
      default: return true;
    }
  }

  const module& m_;
  std::int32_t if_depth_ = 0;
  const function* f_ = nullptr;
  const binding* cur_ = nullptr;
  std::int32_t fi_ = 0;
  std::int64_t binding_no_ = 0;
  std::vector<char> defined_, visible_, sym_defined_;
  std::vector<std::int32_t> sym_owner_;
  relaxvm::detail::text err_;
};

}  // namespace detail

/// Checks `m`; on failure writes the first problem to `err` and returns false.
constexpr bool check(const module& m, relaxvm::detail::text& err) { return detail::checker(m).run(err); }

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_CHECK_HPP
