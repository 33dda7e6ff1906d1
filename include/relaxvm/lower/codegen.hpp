// SPDX-License-Identifier: Apache-2.0
// Code generation: a fully lowered module into an exec_builder, with the reference's conventions
// (docs/lowering.md): parameters in r0..n-1, a fresh register per non-void call
// and per var-to-var binding (vm.builtin.copy), immediates for int64 values, the constant pool
// for tensors, strings, dtypes and shapes, %vm first for builtins with the context, %void for
// void results and null values, a kill as `call vm.builtin.null_value -> the killed register`,
// if/else as read_if_cond, If, the true branch, a copy, Goto, the false branch, a copy, and ret
// through a register. The builder then formalizes and verifies.
#ifndef RELAXVM_LOWER_CODEGEN_HPP
#define RELAXVM_LOWER_CODEGEN_HPP

#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../bytecode/builder.hpp"
#include "ir.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

namespace detail {

class codegen {
 public:
  constexpr codegen(const module& m, exec_builder& b, relaxvm::detail::text& err) : m_(m), b_(b), err_(err) {}
  /// The same over a module the caller is done with: each tensor constant's bytes are freed once
  /// they are in the pool, so a model's weights are held twice only one constant at a time.
  constexpr codegen(module& m, exec_builder& b, relaxvm::detail::text& err, bool release_constants)
      : codegen(static_cast<const module&>(m), b, err) {
    if (release_constants) owned_ = &m;
  }

  constexpr void run() {
    for (const function& f : m_.funcs) {
      if (!ok()) return;
      function_(f);
    }
  }

 private:
  constexpr bool ok() const { return err_.empty() && b_.ok(); }
  constexpr relaxvm::detail::text& fail() {
    err_ << "codegen, function '" << f_->nm.view() << "': ";
    return err_;
  }
  constexpr arg fresh() { return b_.r(next_++); }

  constexpr void function_(const function& f) {
    f_ = &f;
    std::vector<std::string_view> names;
    for (std::int32_t p : f.params) names.push_back(f.var(p).nm.view());
    map_.assign(f.vars.size(), arg::reg(void_register));
    mapped_.assign(f.vars.size(), 0);
    next_ = 0;
    auto scope = b_.function(f.nm.view(), static_cast<std::int64_t>(f.params.size()),
                             std::span<const std::string_view>(names.data(), names.size()));
    for (std::int32_t p : f.params) set(p, fresh());
    const arg r = seq_(f.body);
    if (!ok()) return;
    b_.emit_ret(ensure_reg(r));
    scope.end();
  }

  constexpr void set(std::int32_t v, arg a) {
    map_[static_cast<std::size_t>(v)] = a;
    mapped_[static_cast<std::size_t>(v)] = 1;
  }
  constexpr arg ensure_reg(arg a) {
    if (a.kind() == arg_kind::reg) return a;
    const arg r = fresh();
    b_.emit_call("vm.builtin.copy", {a}, r);
    return r;
  }

  constexpr arg leaf_(const leaf& l) {
    switch (l.kind) {
      case leaf_kind::var:
        if (!mapped_[static_cast<std::size_t>(l.index)]) fail() << "variable '" << f_->var(l.index).nm.view() << "' is not defined";
        return map_[static_cast<std::size_t>(l.index)];
      case leaf_kind::constant: {
        // Added once, on first use; every later use takes the same pool index.
        const auto i = static_cast<std::size_t>(l.index);
        if (pool_index_.empty()) pool_index_.assign(m_.constants.size(), -1);
        if (pool_index_[i] < 0) {
          const constant& c = m_.constants[i];
          pool_index_[i] = b_.add_tensor(c.dt, c.dims, c.bytes);
          if (owned_ != nullptr) std::vector<std::uint8_t>().swap(owned_->constants[i].bytes);
        }
        return b_.c(pool_index_[i]);
      }
      case leaf_kind::prim:
        if (!l.value.is_const()) {
          fail() << "PrimValue should only contain constant after VMShapeLower (run ir::pass::shape_lower)";
          return b_.void_arg();
        }
        if (l.dt.is_bool()) return b_.c(b_.add_bool(l.value.value != 0));
        if (l.dt.is_float()) return b_.c(b_.add_float(l.float_value()));
        if (l.value.value < arg_value_min || l.value.value > arg_value_max) return b_.c(b_.add_int(l.value.value));
        return b_.imm(l.value.value);
      case leaf_kind::shape: {
        std::vector<std::int64_t> dims;
        for (const sym_ref& d : l.dims) {
          if (!d.is_const()) {
            fail() << "Should only use constant shape after shape lowering (run ir::pass::shape_lower)";
            return b_.void_arg();
          }
          dims.push_back(d.value);
        }
        return b_.c(b_.add_shape(dims));
      }
      case leaf_kind::string: return b_.c(b_.add_string(l.text.view()));
      case leaf_kind::dtype: return b_.c(b_.add_dtype(l.dt));
      case leaf_kind::func: return b_.f(l.text.view());
      case leaf_kind::none: break;
    }
    return b_.void_arg();
  }
  constexpr std::vector<arg> args_(const expr& e, std::size_t from = 0) {
    std::vector<arg> out;
    for (std::size_t i = from; i < e.args.size(); ++i) out.push_back(leaf_(e.args[i]));
    return out;
  }
  constexpr void call(std::string_view fn, const std::vector<arg>& args, arg dst) {
    b_.emit_call(fn, std::span<const arg>(args.data(), args.size()), dst);
  }

  constexpr arg seq_(const seq& s) {
    for (const block& blk : s.blocks)
      for (const binding& b : blk.bindings) {
        if (!ok()) return b_.void_arg();
        binding_(b);
      }
    if (!ok()) return b_.void_arg();
    return leaf_(s.result);
  }

  constexpr void binding_(const binding& b) {
    const expr& e = b.value;
    const bool is_void = f_->var(b.var).info.is_void();
    switch (e.kind) {
      case expr_kind::leaf: {
        const arg src = leaf_(e.args[0]);
        if (e.args[0].is_var() && src.kind() == arg_kind::reg && src.value() != void_register) {
          const arg r = fresh();  // one register per binding, so a kill acts like `del`
          b_.emit_call("vm.builtin.copy", {src}, r);
          set(b.var, r);
        } else {
          set(b.var, src);
        }
        return;
      }
      case expr_kind::null_value: set(b.var, b_.void_arg()); return;
      case expr_kind::vm_kill_object: {
        const arg x = leaf_(e.args[0]);
        if (x.kind() != arg_kind::reg || x.value() == void_register) {
          // A constant or an immediate (e.g. a match_cast of a constant): no register holds it,
          // so there is nothing to free.
          set(b.var, b_.void_arg());
          return;
        }
        b_.emit_call("vm.builtin.null_value", {}, x);
        set(b.var, x);
        return;
      }
      case expr_kind::if_: {
        const arg c = fresh();
        b_.emit_call("vm.builtin.read_if_cond", {leaf_(e.args[0])}, c);
        const std::int64_t if_pc = b_.next_instruction();
        b_.emit_if(c, 3);
        const arg t = seq_(e.branches[0]);
        const arg merge = fresh();
        b_.emit_call("vm.builtin.copy", {t}, merge);
        const std::int64_t goto_pc = b_.next_instruction();
        b_.emit_goto(1);
        const arg f = seq_(e.branches[1]);
        b_.emit_call("vm.builtin.copy", {f}, merge);
        b_.patch(if_pc, 2, goto_pc - if_pc + 1);
        b_.patch(goto_pc, 1, b_.next_instruction() - goto_pc);
        set(b.var, merge);
        return;
      }
      default: break;
    }
    const arg dst = is_void ? b_.void_arg() : fresh();
    switch (e.kind) {
      case expr_kind::call_packed: call(e.callee.view(), args_(e), dst); break;
      case expr_kind::call_func: {
        const std::vector<arg> a = args_(e);
        b_.emit_call(b_.f(e.callee.view()), std::span<const arg>(a.data(), a.size()), dst);
        break;
      }
      case expr_kind::call_builtin: {
        std::vector<arg> a{b_.vm_state()};
        for (const arg& x : args_(e)) a.push_back(x);
        call(e.callee.view(), a, dst);
        break;
      }
      case expr_kind::vm_alloc_storage: {
        std::vector<arg> a{b_.vm_state()};
        for (const arg& x : args_(e)) a.push_back(x);
        call("vm.builtin.alloc_storage", a, dst);
        break;
      }
      case expr_kind::vm_alloc_tensor: call("vm.builtin.alloc_tensor", args_(e), dst); break;
      case expr_kind::tuple: call("vm.builtin.make_tuple", args_(e), dst); break;
      case expr_kind::get_item: call("vm.builtin.tuple_getitem", {leaf_(e.args[0]), leaf_(leaf::of_int(e.index))}, dst); break;
      default:
        fail() << "binding '" << f_->var(b.var).nm.view()
               << "' still holds a high-level operation; lower the module first (ir::build runs every pass)";
        return;
    }
    set(b.var, dst);
  }

  const module& m_;
  module* owned_ = nullptr;                // set when its constants may be released
  std::vector<std::int64_t> pool_index_;  // per constant: its index in the pool, or -1
  exec_builder& b_;
  relaxvm::detail::text& err_;
  const function* f_ = nullptr;
  std::vector<arg> map_;
  std::vector<char> mapped_;
  std::int64_t next_ = 0;
};

}  // namespace detail

/// Emits a lowered module into `b`; on failure writes the problem to `err`.
constexpr bool codegen(const module& m, exec_builder& b, relaxvm::detail::text& err) {
  detail::codegen(m, b, err).run();
  return err.empty();
}
/// The same, consuming `m`: its tensor constants move into the pool one by one (each IR copy is
/// freed as soon as the pool holds it), the pool's room reserved once for all of them.
constexpr bool codegen(module&& m, exec_builder& b, relaxvm::detail::text& err) {
  std::size_t bytes = 0;
  for (const constant& c : m.constants) bytes += c.bytes.size() + static_cast<std::size_t>(tensor_data_alignment);
  b.reserve_tensor_bytes(bytes);
  detail::codegen(m, b, err, true).run();
  return err.empty();
}

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_CODEGEN_HPP
