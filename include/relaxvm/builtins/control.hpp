// SPDX-License-Identifier: Apache-2.0
// Closures and control:
//   vm.builtin.make_closure(f, captured...) -> closure     captured values go after the call's own
//   vm.builtin.invoke_closure(ctx, closure, args...) -> value
//   vm.builtin.read_if_cond(cond) -> bool       an int, a bool, or element 0 of an int/uint/bool tensor
//   vm.builtin.scalar_eq(a, b) -> bool          the Relay VM's If test: a == b, each an int, a bool
//                                               or element 0 of an int/uint/bool tensor. Unlike the
//                                               Relay VM it compares full int64 values (no int32
//                                               truncation) and reads uint8 as unsigned.
//   vm.builtin.fatal([message])                 always fails: "VM encountered fatal error"
//   vm.builtin.call_tir_dyn([ctx,] f, args..., shape) -> value   f(args..., shape[0], shape[1], ...)
#ifndef RELAXVM_BUILTINS_CONTROL_HPP
#define RELAXVM_BUILTINS_CONTROL_HPP

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../runtime/context.hpp"
#include "../runtime/adapters.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/tensor.hpp"
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI::builtins {

/// An int, a bool, or element 0 of an integer or bool host tensor, as int64 (the reference's
/// LoadScalarInt and read_if_cond).
inline result<std::int64_t> scalar_int(std::string_view fn, const value& v) {
  if (v.kind() == value_kind::int64 || v.kind() == value_kind::boolean) return v.raw_int();
  if (v.kind() != value_kind::tensor)
    return relaxvm::detail::type_error(fn, ": expects an int, a bool or an integer tensor, but got ", v.describe());
  const tensor t = v.as<tensor>();
  const dtype d = t.dtype();
  if (!(d.is_int() || d.is_uint()) || d.lanes != 1 || t.device().device_type != kDLCPU)
    return relaxvm::detail::type_error(fn, ": expects an integer or bool host tensor, but got ", d, " on ",
                                       t.device());
  if (t.numel() < 1) return relaxvm::detail::value_error(fn, ": the tensor is empty");
  const void* p = t.raw_data();
  switch (d.bits) {
    case 1:
    case 8: {
      std::uint8_t x;
      std::memcpy(&x, p, 1);
      return d.is_int() ? static_cast<std::int64_t>(static_cast<std::int8_t>(x)) : static_cast<std::int64_t>(x);
    }
    case 16: {
      std::uint16_t x;
      std::memcpy(&x, p, 2);
      return d.is_int() ? static_cast<std::int64_t>(static_cast<std::int16_t>(x)) : static_cast<std::int64_t>(x);
    }
    case 32: {
      std::uint32_t x;
      std::memcpy(&x, p, 4);
      return d.is_int() ? static_cast<std::int64_t>(static_cast<std::int32_t>(x)) : static_cast<std::int64_t>(x);
    }
    case 64: {
      std::int64_t x;
      std::memcpy(&x, p, 8);
      return x;
    }
    default: return relaxvm::detail::value_error(fn, ": Unknown scalar int type ", d);
  }
}

/// (The adapter has checked that `f` is a closure: a null value never reaches here.)
inline result<closure> make_closure(const closure& f, std::span<const value> captured) {
  RELAXVM_TRY(check_no_context("vm.builtin.make_closure", "captured value", captured));
  return f.try_bind(captured);
}

inline result<value> invoke_closure(vm_context& ctx, const closure& f, std::span<const value> args) {
  return ctx.invoke_closure(f, args);
}

inline result<bool> read_if_cond(const value& cond) {
  RELAXVM_TRY_ASSIGN(std::int64_t x, scalar_int("vm.builtin.read_if_cond", cond));
  return x != 0;
}

inline result<bool> scalar_eq(const value& a, const value& b) {
  RELAXVM_TRY_ASSIGN(std::int64_t x, scalar_int("vm.builtin.scalar_eq", a));
  RELAXVM_TRY_ASSIGN(std::int64_t y, scalar_int("vm.builtin.scalar_eq", b));
  return x == y;
}

inline status fatal(std::span<const value> args) {
  if (!args.empty() && args[0].kind() == value_kind::string)
    return relaxvm::detail::runtime_error("VM encountered fatal error: ", args[0].as<std::string_view>());
  return relaxvm::detail::runtime_error("VM encountered fatal error");
}

/// The reference's call_tir_dyn(f, args..., shape): the trailing shape becomes int64 arguments.
/// %vm may come first; it is needed when f is a VM function.
inline result<value> call_tir_dyn(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.call_tir_dyn";
  vm_context* ctx = take_context(args);
  if (args.size() < 2 || args[0].kind() != value_kind::closure || args.back().kind() != value_kind::shape)
    return relaxvm::detail::type_error(fn, ": expects ([ctx,] function, args..., shape)");
  const closure f = args[0].as<closure>();
  if (!ctx && f.is_vm_function())
    return relaxvm::detail::type_error(fn, ": calling VM function '", f.name(), "' needs the VM context (%vm) first");
  const shape extra = args.back().as<shape>();
  std::vector<value> all;
  all.reserve(args.size() - 2 + static_cast<std::size_t>(extra.size()));
  for (std::size_t i = 1; i + 1 < args.size(); ++i) all.push_back(value::borrow(args[i]));
  for (std::int64_t d : extra) all.push_back(value(d));
  return ctx ? ctx->invoke_closure(f, all) : f.try_call(all);
}

inline constexpr auto control_table =
    make_table(fn<"vm.builtin.make_closure">(&make_closure), fn<"vm.builtin.invoke_closure">(&invoke_closure),
               fn<"vm.builtin.read_if_cond">(&read_if_cond), fn<"vm.builtin.scalar_eq">(&scalar_eq),
               packed<"vm.builtin.fatal">(&fatal), packed<"vm.builtin.call_tir_dyn">(&call_tir_dyn));

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_CONTROL_HPP
