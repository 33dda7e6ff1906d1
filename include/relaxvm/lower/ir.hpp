// SPDX-License-Identifier: Apache-2.0
// The IR's nodes: a module of functions; a function of binding blocks; a binding of a variable to
// an expression whose arguments are leaves (variables, constants, symbolic values, strings, dtypes,
// shapes, function names). Everything is a value held in vectors, with variables, constants and
// symbolic expressions named by index, so modules can be built, checked, transformed and lowered
// inside constant evaluation. Passes are functions from module to module.
#ifndef RELAXVM_LOWER_IR_HPP
#define RELAXVM_LOWER_IR_HPP

#include <bit>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/dtype.hpp"
#include "struct_info.hpp"
#include "sym.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

enum class leaf_kind : std::uint8_t {
  none,      // nothing (an absent value)
  var,       // a variable of the function (index)
  constant,  // a tensor constant of the module (index)
  prim,      // a symbolic (or constant) int64 value, or a bool (dt)
  shape,     // a shape of symbolic dimensions
  string,
  dtype,
  func,      // a function of the module, by name (make_closure's callee)
};

struct leaf {
  leaf_kind kind = leaf_kind::none;
  std::int32_t index = -1;                        ///< var, constant
  sym_ref value;                                  ///< prim
  relaxvm::dtype dt = relaxvm::dtype::int64();    ///< prim's dtype; the dtype of a dtype leaf
  std::vector<sym_ref> dims;                      ///< shape
  name text;                                      ///< string, func

  static constexpr leaf of_var(std::int32_t v) {
    leaf l;
    l.kind = leaf_kind::var;
    l.index = v;
    return l;
  }
  static constexpr leaf of_prim(sym_ref v, relaxvm::dtype t = relaxvm::dtype::int64()) {
    leaf l;
    l.kind = leaf_kind::prim;
    l.value = v;
    l.dt = t;
    return l;
  }
  static constexpr leaf of_int(std::int64_t v) { return of_prim(sym_ref::constant(v)); }
  /// A float64 value (a kernel's attribute: alpha, epsilon): always a constant, its bits held in
  /// the prim's constant, never symbolic.
  static constexpr leaf of_float(double v) {
    return of_prim(sym_ref::constant(std::bit_cast<std::int64_t>(v)), relaxvm::dtype::float64());
  }
  /// The double a float prim holds.
  constexpr double float_value() const { return std::bit_cast<double>(value.value); }
  static constexpr leaf of_shape(std::vector<sym_ref> dims) {
    leaf l;
    l.kind = leaf_kind::shape;
    l.dims = static_cast<std::vector<sym_ref>&&>(dims);
    return l;
  }
  static constexpr leaf of_string(std::string_view s) {
    leaf l;
    l.kind = leaf_kind::string;
    l.text = name(s);
    return l;
  }
  static constexpr leaf of_dtype(relaxvm::dtype t) {
    leaf l;
    l.kind = leaf_kind::dtype;
    l.dt = t;
    return l;
  }
  static constexpr leaf of_func(std::string_view f) {
    leaf l;
    l.kind = leaf_kind::func;
    l.text = name(f);
    return l;
  }
  static constexpr leaf of_constant(std::int32_t c) {
    leaf l;
    l.kind = leaf_kind::constant;
    l.index = c;
    return l;
  }
  constexpr bool is_var() const { return kind == leaf_kind::var; }
};

enum class expr_kind : std::uint8_t {
  leaf,            // args[0] (a variable here is a var-to-var binding: codegen copies it)
  call_dps,        // callee(args..., outputs...): outputs allocated by lowering (call_tir / call_dps_packed)
  call_packed,     // callee(args...) -> result, or void
  call_builtin,    // callee(%vm, args...) -> result, or void (call_builtin_with_ctx)
  call_func,       // a function of this module
  reshape,         // args: tensor, shape (a shape leaf or a variable holding a shape)
  shape_of,        // args: tensor
  tuple,           // args: fields
  get_item,        // args: tuple; index
  make_closure,    // args: func leaf, captured...
  invoke_closure,  // args: closure, arguments...
  if_,             // args: condition; branches[0] then, branches[1] else
  // Introduced by lowering (the reference's operators of the same names).
  builtin_alloc_tensor,  // R.builtin.alloc_tensor(shape, dtype, device, scope)
  mem_alloc_storage,     // R.memory.alloc_storage(size shape, device, scope, dtype)
  mem_alloc_tensor,      // R.memory.alloc_tensor(storage, offset, shape, dtype)
  mem_kill_storage,      // R.memory.kill_storage(x)
  mem_kill_tensor,       // R.memory.kill_tensor(x)
  vm_alloc_storage,      // R.vm.alloc_storage(size shape, device, dtype, scope)
  vm_alloc_tensor,       // R.vm.alloc_tensor(storage, offset, shape, dtype)
  vm_kill_object,        // R.vm.kill_object(x)
  null_value,            // R.null_value()
};

struct seq;

/// What a kernel call declares about its kernel.
struct call_attrs {
  /// The kernel copies its one tensor argument into its output unchanged, element for element
  /// (a reshape, expand_dims, squeeze, flatten): rewrite_dataflow_reshape may make it a view.
  bool reshape_like = false;
};
/// call_dps(kernel, args, out, ir::reshape_like)
inline constexpr call_attrs reshape_like{true};

struct expr {
  expr_kind kind = expr_kind::leaf;
  name callee;               ///< the kernel, packed function, builtin or module function
  std::vector<leaf> args;
  std::int64_t index = 0;    ///< get_item
  std::vector<seq> branches; ///< if_: then, else
  call_attrs attrs;          ///< call_dps
};

/// var = value, or (match_cast) var = value checked against `cast`.
struct binding {
  std::int32_t var = -1;
  expr value;
  bool match_cast = false;
  struct_info cast;
};

struct block {
  bool dataflow = false;
  std::vector<binding> bindings;
};

/// Blocks, then a result (a function body, or a branch of an if).
struct seq {
  std::vector<block> blocks;
  leaf result;
};

struct var_info {
  name nm;
  struct_info info;
  bool dataflow = false;
};

struct upper_bound {
  std::int64_t var = 0;  ///< the symbolic variable's index in the arena
  std::int64_t bound = 0;
};

struct function {
  name nm;
  std::vector<var_info> vars;
  std::vector<std::int32_t> params;
  bool has_ret_info = false;
  struct_info ret_info;
  std::int64_t num_input = -1;  ///< -1: every parameter is an input
  std::vector<upper_bound> upper_bounds;
  seq body;

  constexpr const var_info& var(std::int32_t v) const { return vars[static_cast<std::size_t>(v)]; }
  constexpr var_info& var(std::int32_t v) { return vars[static_cast<std::size_t>(v)]; }
  /// A parameter, named as given (the checker reports duplicates).
  constexpr std::int32_t add_param(std::string_view n, struct_info info) {
    vars.push_back(var_info{name(n), static_cast<struct_info&&>(info), false});
    params.push_back(static_cast<std::int32_t>(vars.size()) - 1);
    return params.back();
  }
  /// A new variable with a name made unique within the function from `base`.
  constexpr std::int32_t add_var(std::string_view base, struct_info info, bool dataflow = false) {
    var_info v;
    v.nm = unique_name(base);
    v.info = static_cast<struct_info&&>(info);
    v.dataflow = dataflow;
    vars.push_back(static_cast<var_info&&>(v));
    return static_cast<std::int32_t>(vars.size()) - 1;
  }

 private:
  // base, base1, base2, ...: a counter per base keeps this linear in the number of variables.
  struct counter {
    name base;
    std::int64_t next = 0;
  };
  std::vector<counter> counters_;
  constexpr name unique_name(std::string_view base) {
    if (base == "_") return name(base);  // void results all print as _
    counter* c = nullptr;
    for (counter& k : counters_)
      if (k.base == base) c = &k;
    if (!c) {
      counters_.push_back(counter{name(base), 0});
      c = &counters_.back();
    }
    for (;;) {
      relaxvm::detail::text t;
      t << base;
      if (c->next > 0) t << c->next;
      ++c->next;
      // Generated names differ from each other (one counter per base, and no base ends in a
      // digit); only a parameter, named by the user, can hold the same name.
      bool used = false;
      for (std::int32_t p : params)
        if (var(p).nm == t.view()) used = true;
      if (!used) return name(t.view());
    }
  }
};

/// A tensor constant: its bytes, little-endian, compact.
struct constant {
  relaxvm::dtype dt;
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> bytes;
};

struct module {
  sym_arena syms;
  std::vector<function> funcs;
  std::vector<constant> constants;

  constexpr std::int64_t find(std::string_view n) const {
    for (std::size_t i = 0; i < funcs.size(); ++i)
      if (funcs[i].nm == n) return static_cast<std::int64_t>(i);
    return -1;
  }
};

/// Calls `f(binding&)` for every binding of `s`, branches included (depth first, in order).
template <class S, class F>
constexpr void for_each_binding(S& s, F&& f) {
  for (auto& b : s.blocks)
    for (auto& bd : b.bindings) {
      f(bd);
      for (auto& br : bd.value.branches) for_each_binding(br, f);
    }
}

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_IR_HPP
