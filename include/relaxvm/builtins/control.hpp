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
//   vm.builtin.invoke_packed([ctx,] f, outputs, args...) -> value  the Relay VM's InvokePacked: f(args...)
//                                               with each tuple argument replaced by its fields
//   vm.builtin.call_captured_first([ctx,] args..., captured..., f, k) -> value   f(captured..., args...),
//                                               the last k values before f being the captured ones: a
//                                               closure over it with (captured..., f, k) calls f as a
//                                               Relay closure does (captured values first)
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
#include "../runtime/tuple.hpp"
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

/// Calls `f` with `args`: through the VM when there is one (f may then be a VM function), else as
/// a packed function. `fn` names the builtin calling it.
inline result<value> call_function(std::string_view fn, vm_context* ctx, const closure& f, std::span<const value> args) {
  if (ctx) return ctx->invoke_closure(f, args);
  if (f.is_vm_function())
    return relaxvm::detail::type_error(fn, ": calling VM function '", f.name(), "' needs the VM context (%vm) first");
  return f.try_call(args);
}

/// The reference's call_tir_dyn(f, args..., shape): the trailing shape becomes int64 arguments.
/// %vm may come first; it is needed when f is a VM function.
inline result<value> call_tir_dyn(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.call_tir_dyn";
  vm_context* ctx = take_context(args);
  if (args.size() < 2 || args[0].kind() != value_kind::closure || args.back().kind() != value_kind::shape)
    return relaxvm::detail::type_error(fn, ": expects ([ctx,] function, args..., shape)");
  const closure f = args[0].as<closure>();
  const shape extra = args.back().as<shape>();
  std::vector<value> all;
  all.reserve(args.size() - 2 + static_cast<std::size_t>(extra.size()));
  for (std::size_t i = 1; i + 1 < args.size(); ++i) all.push_back(value::borrow(args[i]));
  for (std::int64_t d : extra) all.push_back(value(d));
  return call_function(fn, ctx, f, all);
}

/// The Relay VM's InvokePacked(f, outputs, args...): a tuple argument passes its fields, which
/// must be tensors, in its place (one level, as TVM's VM flattens ADTs); and f is not called when
/// it has one output and that output, the last argument, is a tensor with no elements.
inline result<value> invoke_packed(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.invoke_packed";
  vm_context* ctx = take_context(args);
  if (args.size() < 2 || args[0].kind() != value_kind::closure || args[1].kind() != value_kind::int64)
    return relaxvm::detail::type_error(fn, ": expects ([ctx,] function, output count, args...)");
  const closure f = args[0].as<closure>();
  const bool one_output = args[1].raw_int() == 1;
  args = args.subspan(2);
  if (one_output && !args.empty() && args.back().kind() == value_kind::tensor && args.back().as<tensor>().numel() == 0)
    return value();
  std::size_t n = 0;
  bool tuples = false;
  for (const value& a : args) {
    const bool t = a.kind() == value_kind::tuple;
    tuples |= t;
    n += t ? static_cast<std::size_t>(a.as<tuple>().size()) : 1;
  }
  if (!tuples) return call_function(fn, ctx, f, args);  // the common case: nothing to copy
  std::vector<value> flat;
  flat.reserve(n);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind() != value_kind::tuple) {
      flat.push_back(value::borrow(args[i]));
      continue;
    }
    const tuple t = args[i].as<tuple>();
    for (std::int64_t k = 0; k < t.size(); ++k) {
      if (t[k].kind() != value_kind::tensor)
        return relaxvm::detail::type_error(fn, ": calling '", f.name(), "', argument ", i, " is a tuple whose field ", k,
                                           " is ", t[k].describe(), "; a tuple argument passes its fields, which must be tensors");
      flat.push_back(value::borrow(t[k]));
    }
  }
  return call_function(fn, ctx, f, flat);
}

/// call_captured_first(args..., captured..., f, k) = f(captured..., args...), captured being the k
/// values before f. make_closure(call_captured_first, captured..., f, k) is thus a closure that
/// passes its captured values first, as the Relay VM's closures do, where make_closure's own pass
/// them last: one builtin for every such closure, with no function made per captured count.
inline result<value> call_captured_first(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.call_captured_first";
  vm_context* ctx = take_context(args);
  const std::size_t n = args.size() < 2 ? 0 : args.size() - 2;
  if (args.size() < 2 || args[n].kind() != value_kind::closure || args[n + 1].kind() != value_kind::int64)
    return relaxvm::detail::type_error(fn, ": expects ([ctx,] args..., captured..., function, captured count)");
  const std::int64_t k = args[n + 1].raw_int();
  if (k < 0 || static_cast<std::uint64_t>(k) > n)
    return relaxvm::detail::value_error(fn, ": captured count ", k, " is not within the ", n, " values before the function");
  const std::size_t first = n - static_cast<std::size_t>(k);
  std::vector<value> all;
  all.reserve(n);
  for (std::size_t i = first; i < n; ++i) all.push_back(value::borrow(args[i]));
  for (std::size_t i = 0; i < first; ++i) all.push_back(value::borrow(args[i]));
  return call_function(fn, ctx, args[n].as<closure>(), all);
}

inline constexpr auto control_table =
    make_table(fn<"vm.builtin.make_closure">(&make_closure), fn<"vm.builtin.invoke_closure">(&invoke_closure),
               fn<"vm.builtin.read_if_cond">(&read_if_cond), fn<"vm.builtin.scalar_eq">(&scalar_eq),
               packed<"vm.builtin.fatal">(&fatal), packed<"vm.builtin.call_tir_dyn">(&call_tir_dyn),
               packed<"vm.builtin.invoke_packed">(&invoke_packed),
               packed<"vm.builtin.call_captured_first">(&call_captured_first));

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_CONTROL_HPP
