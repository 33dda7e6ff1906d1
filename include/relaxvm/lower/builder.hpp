// SPDX-License-Identifier: Apache-2.0
// Building IR modules, at run time and in constexpr:
//
//   ir::module_builder m;
//   ir::sym n = m.sym("n");
//   {
//     auto f = m.function("main", {{"x", ir::tensor_info({n, 16}, f32)}});
//     ir::var h = f.call_dps("ops.relu_out", {f.param(0)}, ir::tensor_info({n, 16}, f32));
//     f.ret(h);
//   }                                   // the function ends with its scope
//   ir::module mod = m.get();           // checked (check.hpp)
//
// Every binding call infers the struct info of its result. Misuse never throws while building:
// the first error is kept, with the function and binding it happened in, and get() reports it.
#ifndef RELAXVM_LOWER_BUILDER_HPP
#define RELAXVM_LOWER_BUILDER_HPP

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "check.hpp"
#include "ir.hpp"
#include "struct_info.hpp"
#include "sym.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

class module_builder;
class block_builder;

/// How deeply if_ may nest (the checker, the passes and codegen recurse over branches).
inline constexpr std::int32_t max_if_depth = 256;

/// A parameter: its name and annotation.
struct module_builder_param {
  std::string_view nm;
  struct_info info;
};

/// A variable of a function under construction.
class var {
 public:
  constexpr var() = default;
  constexpr var(const module_builder* owner, std::int32_t func, std::int32_t index)
      : owner_(owner), func_(func), index_(index) {}
  constexpr std::int32_t index() const { return index_; }
  constexpr std::int32_t func() const { return func_; }
  constexpr const module_builder* owner() const { return owner_; }
  constexpr bool valid() const { return index_ >= 0; }

 private:
  const module_builder* owner_ = nullptr;
  std::int32_t func_ = -1, index_ = -1;
};

/// An argument of a binding: a variable, or a leaf made by prim(), str(), dtype_arg(), shape_arg().
class operand {
 public:
  constexpr operand(var v) : var_owner_(v.owner()), var_func_(v.func()), leaf_(leaf::of_var(v.index())) {}  // NOLINT
  constexpr explicit operand(leaf l, bool invalid = false, const sym_arena* arena = nullptr)
      : invalid_(invalid), arena_(arena), leaf_(static_cast<leaf&&>(l)) {}
  constexpr const leaf& get() const { return leaf_; }
  constexpr const module_builder* var_owner() const { return var_owner_; }
  constexpr std::int32_t var_func() const { return var_func_; }
  constexpr bool invalid() const { return invalid_; }
  constexpr const sym_arena* arena() const { return arena_; }

 private:
  const module_builder* var_owner_ = nullptr;
  std::int32_t var_func_ = -1;
  bool invalid_ = false;
  const sym_arena* arena_ = nullptr;  // where a prim's or a shape's expressions live
  leaf leaf_;
};

/// A symbolic expression passed as an int64 (R.prim_value), or a bool constant with dtype bool.
constexpr operand prim(const sym& e, relaxvm::dtype t = relaxvm::dtype::int64()) {
  return operand(leaf::of_prim(e.ref(), t), e.is_invalid(), e.arena());
}
/// A float64 constant argument (a kernel's attribute).
constexpr operand prim_float(double v) { return operand(leaf::of_float(v)); }
constexpr operand str(std::string_view s) { return operand(leaf::of_string(s)); }
constexpr operand dtype_arg(relaxvm::dtype t) { return operand(leaf::of_dtype(t)); }
constexpr operand shape_arg(std::span<const sym> dims) {
  std::vector<sym_ref> d;
  bool bad = false;
  const sym_arena* arena = nullptr;
  for (const sym& s : dims) {
    d.push_back(s.ref());
    bad = bad || s.is_invalid() || (arena && s.arena() && s.arena() != arena);
    if (s.arena()) arena = s.arena();
  }
  return operand(leaf::of_shape(static_cast<std::vector<sym_ref>&&>(d)), bad, arena);
}
constexpr operand shape_arg(std::initializer_list<sym> dims) { return shape_arg(std::span<const sym>(dims.begin(), dims.size())); }

/// The builder's result: the module, or the first problem.
struct module_output {
  module mod;
  relaxvm::detail::text message;
  constexpr bool ok() const { return message.empty(); }
};

/// Adds bindings to a sequence: a function's body (function_builder) or an if branch.
class block_builder {
 public:
  block_builder(const block_builder&) = delete;
  block_builder& operator=(const block_builder&) = delete;

  // ---- kernels and calls ---------------------------------------------------------------

  /// A kernel in destination-passing style: lowering allocates the outputs (a tensor of known
  /// shape, or a tuple of them) and calls kernel(args..., outputs...). With ir::reshape_like, a
  /// kernel that only copies its one tensor argument into another shape: inside a dataflow block
  /// the call becomes a view of the argument (rewrite_dataflow_reshape).
  constexpr var call_dps(std::string_view kernel, std::initializer_list<operand> args, struct_info out,
                         call_attrs attrs = {}) {
    return call_dps(kernel, std::span<const operand>(args.begin(), args.size()), static_cast<struct_info&&>(out), attrs);
  }
  /// The same with arguments counted at run time (an importer's).
  constexpr var call_dps(std::string_view kernel, std::span<const operand> args, struct_info out, call_attrs attrs = {}) {
    if (!dps_outputs_ok(out)) {
      relaxvm::detail::text t;
      print_info(t, arena(), out);
      fail() << "call_dps('" << kernel << "'): the outputs must be a tensor of known shape and dtype, or a tuple of "
                "them (lowering allocates them), but got " << t.view();
      return {};
    }
    var v = emit_call(expr_kind::call_dps, kernel, args, static_cast<struct_info&&>(out));
    if (v.valid()) last().value.attrs = attrs;
    return v;
  }
  /// A packed function returning a value of `out`; without `out` it returns nothing (void).
  constexpr var call_packed(std::string_view fn, std::initializer_list<operand> args, struct_info out = void_info()) {
    return emit_call(expr_kind::call_packed, fn, std::span<const operand>(args.begin(), args.size()), static_cast<struct_info&&>(out));
  }
  constexpr var call_packed(std::string_view fn, std::span<const operand> args, struct_info out = void_info()) {
    return emit_call(expr_kind::call_packed, fn, args, static_cast<struct_info&&>(out));
  }
  /// A packed function that takes the VM context first (call_builtin_with_ctx).
  constexpr var call_builtin(std::string_view fn, std::initializer_list<operand> args, struct_info out = void_info()) {
    return emit_call(expr_kind::call_builtin, fn, args, static_cast<struct_info&&>(out));
  }
  /// A function of this module (it may be defined later; recursion works).
  constexpr var call(std::string_view fn, std::initializer_list<operand> args, struct_info out) {
    return emit_call(expr_kind::call_func, fn, args, static_cast<struct_info&&>(out));
  }

  // ---- values ----------------------------------------------------------------------------

  /// A tensor constant from raw little-endian bytes (usable in constexpr).
  constexpr var constant(relaxvm::dtype t, std::span<const std::int64_t> dims, std::span<const std::uint8_t> bytes) {
    return constant(t, dims, std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  }
  /// The same, taking the bytes' vector over (no copy: a large weight is held once).
  constexpr var constant(relaxvm::dtype t, std::span<const std::int64_t> dims, std::vector<std::uint8_t>&& bytes);
  constexpr var constant(relaxvm::dtype t, std::initializer_list<std::int64_t> dims,
                         std::initializer_list<std::uint8_t> bytes) {
    return constant(t, std::span<const std::int64_t>(dims.begin(), dims.size()),
                    std::span<const std::uint8_t>(bytes.begin(), bytes.size()));
  }
  /// A tensor constant from a relaxvm::tensor (run time): anything with dtype(), shape(),
  /// raw_data(), nbytes() and is_contiguous().
  template <class Tensor>
    requires requires(const Tensor& x) {
      x.raw_data();
      x.nbytes();
      x.shape().dims();
    }
  var constant(const Tensor& t) {
    if (!t.is_contiguous() || t.device().device_type != 1 /* kDLCPU */) {
      fail() << "constant: the tensor must be a compact host tensor";
      return {};
    }
    const auto* p = static_cast<const std::uint8_t*>(t.raw_data());
    const auto n = static_cast<std::size_t>(t.nbytes());
    return constant(t.dtype(), t.shape().dims(), std::span<const std::uint8_t>(p, p ? n : 0));
  }

  /// value checked against `info` at run time; bare symbolic variables of `info` are defined here.
  constexpr var match_cast(operand value, struct_info info) {
    if (!accept(value)) return {};
    binding b;
    b.match_cast = true;
    b.cast = info;
    b.value.kind = expr_kind::leaf;
    b.value.args.push_back(value.get());
    return bind(static_cast<binding&&>(b), static_cast<struct_info&&>(info));
  }
  /// A view of `x` with another shape (vm.builtin.reshape, no copy).
  constexpr var reshape(var x, std::initializer_list<sym> dims) { return reshape(x, std::span<const sym>(dims.begin(), dims.size())); }
  constexpr var reshape(var x, std::span<const sym> dims) {
    const operand s = shape_arg(dims);
    const struct_info& xi = info_of(x);
    struct_info out = tensor_info(relaxvm::dtype::void_(), static_cast<std::int32_t>(dims.size()));
    if (xi.kind == info_kind::tensor) out.dt = xi.dt;
    out.known = true;
    out.dims = s.get().dims;
    return emit(expr_kind::reshape, {}, {x, s}, static_cast<struct_info&&>(out));
  }
  /// A view of `x` with the shape held by variable `shape`.
  constexpr var reshape(var x, var shape) {
    const struct_info& xi = info_of(x);
    const struct_info& si = info_of(shape);
    struct_info out = tensor_info(xi.kind == info_kind::tensor ? xi.dt : relaxvm::dtype::void_(), si.ndim);
    if (si.known) {
      out.known = true;
      out.dims = si.dims;
    }
    return emit(expr_kind::reshape, {}, {x, shape}, static_cast<struct_info&&>(out));
  }
  constexpr var shape_of(var x) {
    const struct_info& xi = info_of(x);
    struct_info out = shape_info(xi.kind == info_kind::tensor ? xi.ndim : -1);
    if (xi.kind == info_kind::tensor && xi.known) {
      out.known = true;
      out.dims = xi.dims;
    }
    return emit(expr_kind::shape_of, {}, {x}, static_cast<struct_info&&>(out));
  }
  /// A shape value from symbolic expressions.
  constexpr var shape(std::initializer_list<sym> dims) {
    operand s = shape_arg(dims);
    struct_info out = shape_info(static_cast<std::int32_t>(dims.size()));
    out.known = true;
    out.dims = s.get().dims;
    return emit(expr_kind::leaf, {}, {static_cast<operand&&>(s)}, static_cast<struct_info&&>(out));
  }
  /// An int64 value from a symbolic expression.
  constexpr var prim_value(const sym& e) {
    return emit(expr_kind::leaf, {}, {prim(e)}, prim_info(relaxvm::dtype::int64(), e));
  }
  constexpr var tuple(std::initializer_list<operand> fields) {
    return tuple(std::span<const operand>(fields.begin(), fields.size()));
  }
  constexpr var tuple(std::span<const operand> fields) {
    std::vector<struct_info> infos;
    for (const operand& o : fields) infos.push_back(info_of(o));
    return emit_list(expr_kind::tuple, {}, fields, tuple_info(static_cast<std::vector<struct_info>&&>(infos)));
  }
  constexpr var get_item(var t, std::int64_t i) {
    const struct_info& ti = info_of(t);
    struct_info out;
    if (ti.kind == info_kind::tuple) {
      if (i < 0 || i >= static_cast<std::int64_t>(ti.fields.size())) {
        fail() << "get_item: index " << i << " is outside a tuple of " << ti.fields.size() << " fields";
        return {};
      }
      out = ti.fields[static_cast<std::size_t>(i)];
    } else if (ti.kind != info_kind::object) {
      fail() << "get_item: the value is not a tuple";
      return {};
    } else if (i < 0) {
      fail() << "get_item: index " << i << " is negative";
      return {};
    }
    var v = emit(expr_kind::get_item, {}, {t}, static_cast<struct_info&&>(out));
    if (v.valid()) last().value.index = i;
    return v;
  }
  /// A closure of module function `fn` with `captured` bound after the call's own arguments
  /// (a function already lifted: no nested functions).
  constexpr var make_closure(std::string_view fn, std::initializer_list<operand> captured) {
    std::vector<operand> args;
    args.push_back(operand(leaf::of_func(fn)));
    for (const operand& o : captured) args.push_back(o);
    return emit_list(expr_kind::make_closure, {}, args, func_info());
  }
  constexpr var invoke_closure(var closure, std::initializer_list<operand> args, struct_info out) {
    std::vector<operand> all;
    all.push_back(closure);
    for (const operand& o : args) all.push_back(o);
    return emit_list(expr_kind::invoke_closure, {}, all, static_cast<struct_info&&>(out));
  }

  /// if cond then ... else ...: `cond` is a bool or int tensor (element 0), a bool or int value,
  /// or prim(symbolic condition). Each branch is a function of a block_builder returning its
  /// value.
  template <class Then, class Else>
  constexpr var if_(operand cond, Then&& then_branch, Else&& else_branch);

  /// Names `v` (for the printer); the name must be new in the function.
  constexpr var rename(var v, std::string_view n);

 protected:
  // What the builders of one function share: whether it ended, and the innermost open branch.
  struct scope_state {
    bool ended = false;
    std::int32_t depth = 0;
  };
  constexpr block_builder(module_builder* m, function* f, std::int32_t fi, seq* s, scope_state* st = nullptr,
                          std::int32_t level = 0)
      : m_(m), f_(f), fi_(fi), s_(s), st_(st), level_(level) {}

  constexpr sym_arena& arena();
  constexpr relaxvm::detail::text& fail();
  constexpr bool failed() const;

  constexpr bool accept(const operand& o) {
    if (o.invalid()) {
      fail() << "an argument is an invalid expression (a constant fold that overflows int64 or divides by zero, nesting deeper than ir::max_sym_depth or larger than ir::max_sym_nodes, or symbolic variables of another module_builder)";
      return false;
    }
    if (o.arena() && o.arena() != &arena()) {
      fail() << "an argument's symbolic expression comes from another module_builder";
      return false;
    }
    if (o.get().is_var()) {
      if (o.get().index < 0) {
        fail() << "an argument is a variable from a failed binding";
        return false;
      }
      if (o.var_owner() != m_) {
        fail() << "an argument is a variable of another module_builder";
        return false;
      }
      if (o.var_func() != fi_) {
        fail() << "an argument is a variable of another function";
        return false;
      }
    }
    return !failed();
  }
  constexpr const struct_info& info_of(var v) const {
    if (v.owner() != m_ || v.func() != fi_ || v.index() < 0 || static_cast<std::size_t>(v.index()) >= f_->vars.size()) return unknown_;
    return f_->var(v.index()).info;
  }
  constexpr struct_info info_of(const operand& o) const;

  constexpr static bool dps_outputs_ok(const struct_info& s) {
    if (s.kind == info_kind::tensor) return s.known && !s.dt.is_void();
    if (s.kind != info_kind::tuple || s.fields.empty()) return false;
    for (const struct_info& x : s.fields)
      if (!(x.kind == info_kind::tensor && x.known && !x.dt.is_void())) return false;
    return true;
  }

  constexpr var emit_call(expr_kind k, std::string_view callee, std::initializer_list<operand> args, struct_info out) {
    return emit_call(k, callee, std::span<const operand>(args.begin(), args.size()), static_cast<struct_info&&>(out));
  }
  constexpr var emit_call(expr_kind k, std::string_view callee, std::span<const operand> args, struct_info out) {
    if (callee.empty()) {
      fail() << "a call needs a non-empty function name";
      return {};
    }
    return emit_list(k, callee, args, static_cast<struct_info&&>(out));
  }
  constexpr var emit(expr_kind k, std::string_view callee, std::initializer_list<operand> args, struct_info out) {
    return emit_list(k, callee, std::span<const operand>(args.begin(), args.size()), static_cast<struct_info&&>(out));
  }
  constexpr var emit_list(expr_kind k, std::string_view callee, std::span<const operand> args, struct_info out) {
    for (const operand& o : args)
      if (!accept(o)) return {};
    binding b;
    b.value.kind = k;
    b.value.callee = name(callee);
    for (const operand& o : args) b.value.args.push_back(o.get());
    return bind(static_cast<binding&&>(b), static_cast<struct_info&&>(out));
  }
  constexpr var bind(binding b, struct_info out) {
    if (failed()) return {};
    if (st_->ended) {
      fail() << "a binding after the function ended (end() or its scope); bind before ending it";
      return {};
    }
    if (st_->depth != level_) {
      fail() << "a binding through an outer builder while an if branch is open; use the block_builder the branch "
                "receives";
      return {};
    }
    if (out.arena && out.arena != &arena()) {
      fail() << "the annotation's symbolic expressions come from another module_builder";
      return {};
    }
    if (out.invalid) {
      fail() << "the annotation has an invalid expression (a constant fold that overflows int64 or divides by zero, nesting deeper than ir::max_sym_depth or larger than ir::max_sym_nodes, or symbolic variables of another module_builder)";
      return {};
    }
    if (s_->blocks.empty() || s_->blocks.back().dataflow != in_dataflow_) s_->blocks.push_back(block{in_dataflow_, {}});
    b.var = f_->add_var("lv", static_cast<struct_info&&>(out), in_dataflow_);
    const std::int32_t v = b.var;
    s_->blocks.back().bindings.push_back(static_cast<binding&&>(b));
    return var(m_, fi_, v);
  }
  constexpr binding& last() { return s_->blocks.back().bindings.back(); }

  module_builder* m_;
  function* f_;
  std::int32_t fi_;
  seq* s_;
  scope_state* st_;
  std::int32_t level_;
  bool in_dataflow_ = false;
  struct_info unknown_;

  friend class module_builder;
  friend class dataflow_scope;
};

/// A dataflow block: bindings made while it is open are dataflow variables, visible only inside
/// the block unless made an output.
class [[nodiscard]] dataflow_scope {
 public:
  constexpr explicit dataflow_scope(block_builder* b) : b_(b) {
    b_->in_dataflow_ = true;
    b_->s_->blocks.push_back(block{true, {}});
  }
  dataflow_scope(const dataflow_scope&) = delete;
  dataflow_scope& operator=(const dataflow_scope&) = delete;
  constexpr ~dataflow_scope() { end(); }
  /// Makes `v` visible after the block (R.output).
  constexpr void output(var v) {
    if (!b_ || !v.valid()) return;
    if (v.owner() != b_->m_ || v.func() != b_->fi_) {
      b_->fail() << "output: the variable is not one of this function's";
      return;
    }
    b_->f_->var(v.index()).dataflow = false;
  }
  constexpr void end() {
    if (b_) std::exchange(b_, nullptr)->in_dataflow_ = false;
  }

 private:
  block_builder* b_;
};

/// A function under construction; it joins the module when its scope ends.
class [[nodiscard]] function_builder : public block_builder {
 public:
  constexpr ~function_builder() { end(); }

  constexpr var param(std::size_t i) const {
    if (i >= f_->params.size()) return {};
    return var(m_, fi_, f_->params[i]);
  }
  constexpr dataflow_scope dataflow() { return dataflow_scope(this); }
  /// The first `n` parameters are inputs; the others are weights, checked only where their
  /// shapes are symbolic (the reference's num_input attribute).
  constexpr void num_input(std::int64_t n) { f_->num_input = n; }
  /// Symbolic variable `v` is at most `bound` (tir_var_upper_bound).
  constexpr void upper_bound(const sym& v, std::int64_t bound);
  /// The function's result, with an optional annotation checked at run time.
  constexpr void ret(operand result) {
    if (!accept(result)) return;
    f_->body.result = result.get();
  }
  constexpr void ret(operand result, struct_info annotation) {
    ret(static_cast<operand&&>(result));
    f_->has_ret_info = true;
    f_->ret_info = static_cast<struct_info&&>(annotation);
  }
  /// Ends the function now (its scope does otherwise).
  constexpr void end();

 private:
  friend class module_builder;
  constexpr function_builder(module_builder* m, std::int32_t fi, std::string_view n,
                             std::span<const module_builder_param> params);
  function own_;
  scope_state state_;
};

class module_builder {
 public:
  constexpr module_builder() = default;
  module_builder(const module_builder&) = delete;
  module_builder& operator=(const module_builder&) = delete;

  /// A new symbolic int64 variable.
  constexpr ir::sym sym(std::string_view n) { return ir::sym(&mod_.syms, mod_.syms.make_var(n)); }

  using param = module_builder_param;
  /// Opens function `name`; it ends (and joins the module) when the returned scope does.
  constexpr function_builder function(std::string_view n, std::initializer_list<param> params) {
    return function_builder(this, static_cast<std::int32_t>(mod_.funcs.size()) + open_, n,
                            std::span<const param>(params.begin(), params.size()));
  }
  constexpr function_builder function(std::string_view n, std::span<const param> params) {
    return function_builder(this, static_cast<std::int32_t>(mod_.funcs.size()) + open_, n, params);
  }

  /// Checks and returns what was built: a copy, or (from an rvalue builder) the module itself,
  /// its constants not copied.
  constexpr module_output finish() const& {
    module_output out;
    if (unfinished(out)) return out;
    out.mod = mod_;
    return checked(static_cast<module_output&&>(out));
  }
  constexpr module_output finish() && {
    module_output out;
    if (unfinished(out)) return out;
    out.mod = static_cast<module&&>(mod_);
    return checked(static_cast<module_output&&>(out));
  }
  /// The checked module; throws relaxvm::error (kind value) on any problem.
  module get() const& { return try_get().value(); }
  module get() && { return static_cast<module_builder&&>(*this).try_get().value(); }
  result<module> try_get() const& { return to_result(finish()); }
  result<module> try_get() && { return to_result(static_cast<module_builder&&>(*this).finish()); }
  constexpr bool ok() const { return error_.empty(); }

 private:
  constexpr bool unfinished(module_output& out) const {
    if (!error_.empty()) out.message << "ir::module_builder: " << error_;
    else if (open_ != 0) out.message << "ir::module_builder: a function is still open; end it (its scope does) before get()";
    return !out.message.empty();
  }
  static constexpr module_output checked(module_output&& out) {
    relaxvm::detail::text err;
    if (!check(out.mod, err)) out.message << "ir: " << err;
    return static_cast<module_output&&>(out);
  }
  static result<module> to_result(module_output&& out) {
    if (!out.ok()) return relaxvm::error(error_kind::value, out.message.view());
    return static_cast<module&&>(out.mod);
  }
  friend class block_builder;
  friend class function_builder;

  constexpr relaxvm::detail::text& fail_in(std::string_view fn) {
    relaxvm::detail::text& t = fail();
    t << "function '" << fn << "': ";
    return t;
  }
  constexpr relaxvm::detail::text& fail() {
    if (error_.empty()) return error_;
    dropped_.clear();
    return dropped_;
  }

  module mod_;
  std::int32_t open_ = 0;
  relaxvm::detail::text error_, dropped_;
};

// ---- out-of-line members ----------------------------------------------------------------------

constexpr sym_arena& block_builder::arena() { return m_->mod_.syms; }
constexpr bool block_builder::failed() const { return !m_->error_.empty(); }
constexpr relaxvm::detail::text& block_builder::fail() {
  relaxvm::detail::text& t = m_->fail();
  std::size_t n = 0;
  for (const block& b : s_->blocks) n += b.bindings.size();
  t << "function '" << f_->nm.view() << "', binding " << n + 1 << ": ";
  return t;
}

constexpr struct_info block_builder::info_of(const operand& o) const {
  const leaf& l = o.get();
  switch (l.kind) {
    case leaf_kind::var: return info_of(var(o.var_owner(), o.var_func(), l.index));
    case leaf_kind::prim: return l.dt.is_float() ? prim_info(l.dt) : prim_info(l.dt, sym(nullptr, l.value));
    case leaf_kind::shape: {
      struct_info s = shape_info(static_cast<std::int32_t>(l.dims.size()));
      s.known = true;
      s.dims = l.dims;
      return s;
    }
    case leaf_kind::func: return func_info();
    default: return object_info();
  }
}

constexpr var block_builder::constant(relaxvm::dtype t, std::span<const std::int64_t> dims,
                                      std::vector<std::uint8_t>&& bytes) {
  std::int64_t numel = 1, nbytes = 0;
  for (std::int64_t d : dims)
    if (d < 0 || !relaxvm::detail::checked_mul(numel, d, numel)) {
      fail() << "constant: dimensions must be 0 or more and their product must fit in int64";
      return {};
    }
  if (!t.valid_for_tensor() || !relaxvm::detail::checked_mul(numel, t.bytes(), nbytes) ||
      nbytes != static_cast<std::int64_t>(bytes.size())) {
    fail() << "constant: " << bytes.size() << " bytes do not hold a tensor of " << numel << " " << t << " elements";
    return {};
  }
  ir::constant c;
  c.dt = t;
  c.dims.assign(dims.begin(), dims.end());
  c.bytes = static_cast<std::vector<std::uint8_t>&&>(bytes);
  m_->mod_.constants.push_back(static_cast<ir::constant&&>(c));
  std::vector<sym_ref> shape;
  for (std::int64_t d : dims) shape.push_back(sym_ref::constant(d));
  return emit(expr_kind::leaf, {},
              {operand(leaf::of_constant(static_cast<std::int32_t>(m_->mod_.constants.size()) - 1))},
              tensor_info(static_cast<std::vector<sym_ref>&&>(shape), t));
}

namespace detail {
// The symbolic variables that match_casts inside `s` define (bare dimensions of their annotations).
constexpr void branch_syms(const sym_arena& ar, const seq& s, std::vector<std::int64_t>& out) {
  const auto bare = [&](const auto& self, const struct_info& info) -> void {
    for (const sym_ref& d : info.dims)
      if (ar.is_var(d)) out.push_back(ar.var_index(d));
    for (const struct_info& f : info.fields) self(self, f);
  };
  for (const block& b : s.blocks)
    for (const binding& x : b.bindings) {
      if (x.match_cast) bare(bare, x.cast);
      for (const seq& br : x.value.branches) branch_syms(ar, br, out);
    }
}
// `info` without the values that name one of `vars` (the if's result cannot name what only a
// branch defines): such a shape, tensor shape or prim value becomes unknown.
constexpr void forget_syms(const sym_arena& ar, struct_info& info, const std::vector<std::int64_t>& vars) {
  bool named = false;
  for (const sym_ref& d : info.dims) {
    std::vector<std::int64_t> used;
    ar.free_vars(d, used);
    for (std::int64_t u : used)
      for (std::int64_t v : vars) named = named || u == v;
  }
  if (named) {
    info.known = false;
    info.dims.clear();
  }
  for (struct_info& f : info.fields) forget_syms(ar, f, vars);
}
}  // namespace detail

template <class Then, class Else>
constexpr var block_builder::if_(operand cond, Then&& then_branch, Else&& else_branch) {
  if (!accept(cond)) return {};
  if (in_dataflow_) {
    fail() << "if_ inside a dataflow block; end the dataflow scope first (dataflow blocks hold no control flow)";
    return {};
  }
  if (level_ + 1 > max_if_depth) {
    fail() << "if_ nested deeper than ir::max_if_depth (" << max_if_depth << ")";
    return {};
  }
  if (st_->ended || st_->depth != level_) {
    fail() << "if_ through an outer builder, or after the function ended";
    return {};
  }
  expr e;
  e.kind = expr_kind::if_;
  e.args.push_back(cond.get());
  e.branches.resize(2);
  struct_info infos[2];
  for (int k = 0; k < 2; ++k) {
    block_builder inner(m_, f_, fi_, &e.branches[static_cast<std::size_t>(k)], st_, level_ + 1);
    st_->depth = level_ + 1;
    operand r = k == 0 ? operand(then_branch(inner)) : operand(else_branch(inner));
    st_->depth = level_;
    if (failed() || !accept(r)) return {};
    e.branches[static_cast<std::size_t>(k)].result = r.get();
    infos[k] = info_of(r);
  }
  struct_info result = common_info(arena(), infos[0], infos[1]);
  std::vector<std::int64_t> local;
  for (const seq& br : e.branches) detail::branch_syms(arena(), br, local);
  if (!local.empty()) detail::forget_syms(arena(), result, local);
  binding b;
  b.value = static_cast<expr&&>(e);
  return bind(static_cast<binding&&>(b), static_cast<struct_info&&>(result));
}

constexpr var block_builder::rename(var v, std::string_view n) {
  if (failed() || !v.valid() || v.func() != fi_) return v;
  for (const var_info& x : f_->vars)
    if (x.nm == n) {
      fail() << "rename: the name '" << n << "' is taken";
      return v;
    }
  f_->var(v.index()).nm = name(n);
  return v;
}

constexpr void function_builder::upper_bound(const sym& v, std::int64_t bound) {
  if (v.arena() != &arena() || !v.arena()->is_var(v.ref())) {
    fail() << "upper_bound: the first argument must be a symbolic variable of this module_builder";
    return;
  }
  f_->upper_bounds.push_back(ir::upper_bound{v.arena()->var_index(v.ref()), bound});
}

constexpr function_builder::function_builder(module_builder* m, std::int32_t fi, std::string_view n,
                                             std::span<const module_builder_param> params)
    : block_builder(m, nullptr, fi, nullptr) {
  f_ = &own_;  // own_ and state_ are constructed after the base: point at them here
  s_ = &own_.body;
  st_ = &state_;
  ++m->open_;
  own_.nm = name(n);
  for (const module_builder_param& p : params) {
    if (p.info.arena && p.info.arena != &m->mod_.syms)
      m->fail_in(n) << "the annotation of parameter '" << p.nm << "' uses symbolic variables of another module_builder";
    else if (p.info.invalid)
      m->fail_in(n) << "the annotation of parameter '" << p.nm
                    << "' has an invalid expression (a constant fold that overflows int64 or divides by zero, nesting deeper than ir::max_sym_depth or larger than ir::max_sym_nodes, or symbolic variables of another module_builder)";
    own_.add_param(p.nm, p.info);
  }
}

constexpr void function_builder::end() {
  if (state_.ended) return;
  state_.ended = true;
  --m_->open_;
  if (failed()) return;
  m_->mod_.funcs.push_back(static_cast<function&&>(own_));
}

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_BUILDER_HPP
