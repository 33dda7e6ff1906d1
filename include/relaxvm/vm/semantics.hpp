// SPDX-License-Identifier: Apache-2.0
// The instructions' semantics, written once for every loop that runs them (virtual_machine's,
// static_vm's interpreter and its compiled functions; the graph executor for the error a kernel
// leaves): loading a Call argument, what a failed packed call leaves, the If test, what Ret
// returns, how an error unwinds through the frames it passes ("in ..." then "called from ..."),
// and the errors of arity, re-entrancy and the VM context.
#ifndef RELAXVM_VM_SEMANTICS_HPP
#define RELAXVM_VM_SEMANTICS_HPP

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string_view>
#include <utility>

#include "../base/config.hpp"
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "../bytecode/instruction.hpp"
#include "../bytecode/layout.hpp"
#include "../bytecode/opcode.hpp"
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI {

class vm_context;

namespace detail {

/// The kinds of Call arguments a program passes (arg_kinds_used), as bits: a loop compiled for a
/// known program leaves out the others.
enum arg_use : unsigned {
  uses_register = 1,
  uses_vm = 2,
  uses_void = 4,
  uses_immediate = 8,
  uses_constant = 16,
  uses_function = 32,
  uses_any_arg = 63,
};
/// The arg_use bits of every Call argument of program `v`.
constexpr unsigned arg_kinds_used(const exec_view& v) {
  unsigned used = 0;
  for (std::size_t i = 0; i < v.instr_offset.size(); ++i) {
    const instruction in = decode(v, static_cast<std::int64_t>(i));
    if (in.op != opcode::call) continue;
    for (std::int64_t k = 0; k < in.num_args; ++k) {
      const arg a = in.arg_at(k);
      switch (a.kind()) {
        case arg_kind::reg:
          used |= a.value() == vm_register ? uses_vm : a.value() == void_register ? uses_void : uses_register;
          break;
        case arg_kind::imm: used |= uses_immediate; break;
        case arg_kind::const_idx: used |= uses_constant; break;
        case arg_kind::func_idx: used |= uses_function; break;
      }
    }
  }
  return used;
}

/// Call argument `a` as a value in `slot`, which owns no reference (null, a scalar or a borrow:
/// the interpreters' argument scratch), so it is written over: registers, constants and function
/// values are borrowed (no reference counting), immediates held inline, %vm is `ctx`, %void is
/// null. Used: the arg_use bits of the kinds that can occur (the program's); the code for the
/// others is left out. Registers and indices are read from the word's low 32 bits, where a
/// verified program's fit (32-bit code on a 32-bit core), and immediates too when
/// NarrowImmediates (the program's all fit).
template <unsigned Used = uses_any_arg, bool NarrowImmediates = false>
RELAXVM_ALWAYS_INLINE void load_arg(value& slot, arg a, value* regs, vm_context* ctx, const value* consts,
                                    const value* funcs) {
  const auto index = static_cast<std::uint32_t>(a.data);
  switch (a.kind()) {
    case arg_kind::reg:
      // A register's word is 0 above its low half but for %void and %vm.
      if ((Used & (uses_vm | uses_void)) == 0 || RELAXVM_LIKELY(static_cast<std::uint64_t>(a.data) >> 32 == 0)) {
        value::borrow_into(slot, regs[index]);
      } else if ((Used & uses_vm) != 0 &&
                 ((Used & uses_void) == 0 || index == static_cast<std::uint32_t>(vm_register))) {
        ::new (&slot) value(ctx);
      } else {
        value::forget(slot);
      }
      break;
    case arg_kind::imm:
      if constexpr ((Used & uses_immediate) != 0)
        ::new (&slot) value(NarrowImmediates ? std::int64_t{static_cast<std::int32_t>(index)} : a.value());
      break;
    case arg_kind::const_idx:
      if constexpr ((Used & uses_constant) != 0) value::borrow_into(slot, consts[index]);
      break;
    case arg_kind::func_idx:
      if constexpr ((Used & uses_function) != 0) value::borrow_into(slot, funcs[index]);
      break;
  }
}

/// Where the C++ stack is now, to measure what re-entrant invocations use (vm_options::
/// max_native_stack). The frame address, not a local's: AddressSanitizer may move locals to a
/// heap "fake stack".
RELAXVM_ALWAYS_INLINE std::uintptr_t native_stack_position() noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
#else
  int here = 0;
  return reinterpret_cast<std::uintptr_t>(&here);
#endif
}
/// Bytes of C++ stack between `base` (an earlier native_stack_position()) and here.
RELAXVM_ALWAYS_INLINE std::size_t native_stack_used(std::uintptr_t base) noexcept {
  const std::uintptr_t now = native_stack_position();
  return base > now ? base - now : now - base;  // stacks grow down on every target we know; either way works
}
/// The error of a re-entrant invocation of `name` that would take the C++ stack past `limit` bytes.
RELAXVM_NOINLINE inline error native_stack_error(std::string_view name, std::size_t used, std::size_t limit,
                                                 std::string_view option) {
  return runtime_error("calling function '", name, "' re-enters the VM with ", used,
                       " bytes of C++ stack in use by this invocation, past the limit of ", limit, " (", option,
                       "): closures calling closures (vm.builtin.invoke_closure) or kernels calling back into the VM "
                       "nest too deep; direct calls between VM functions use no C++ stack");
}

/// The error of an invocation of `name` that returned the VM context, which must not leave the VM.
RELAXVM_NOINLINE inline error context_returned_error(std::string_view name) {
  return type_error("function '", name, "' returned the vm context (%vm), which is valid only inside the VM");
}

/// If: whether the condition can be tested (an int64 or a bool).
RELAXVM_ALWAYS_INLINE bool valid_condition(const value& c) noexcept {
  return c.kind() == value_kind::int64 || c.kind() == value_kind::boolean;
}
/// If: how far to go, from the If: the next instruction when the condition is non-zero, else the
/// false offset.
RELAXVM_ALWAYS_INLINE std::int64_t if_offset(const value& c, std::int64_t false_offset) noexcept {
  return c.raw_int() != 0 ? 1 : false_offset;
}

/// Ret: the value in register `src` of the returning frame, which dies: moved out when the frame
/// owns it, copied when it only borrows it (an argument or a constant).
RELAXVM_ALWAYS_INLINE value take_return(value& src) { return src.is_borrowed() ? value(src) : std::move(src); }

/// An error's way out: records where it happened in `e` (error::function_index() and
/// instruction(), of the failing instruction) and, unless errors are terse, adds it to the message
/// ("in <function>, instruction <pc> (<text>)", then "called from ..." for each caller), popping
/// each frame as it goes. `frames` walks the frames of the failing invocation from the innermost: more(),
/// func_index(), return_pc() and pop().
template <class Frames>
RELAXVM_ALWAYS_INLINE void unwind(error& e, const exec_view& v, std::int64_t pc, Frames frames) {
  bool innermost = true;
  while (frames.more()) {
    if (innermost) {
      const std::int64_t f = frames.func_index();
      e.set_location(f, pc - v.funcs[static_cast<std::size_t>(f)].start);
    }
#if RELAXVM_ERROR_TEXT
    text t(innermost ? "in " : "called from ");
    append_location(t, v, frames.func_index(), pc);
    e.add_context(t.view());
#endif
    pc = frames.return_pc();
    innermost = false;
    frames.pop();
  }
}

/// The error of an If whose condition register `reg` holds `c`, which is neither int64 nor bool.
RELAXVM_NOINLINE inline error if_condition_error(std::int64_t reg, const value& c) {
  return type_error("If: the condition must be an int64 or a bool, but register %", reg, " holds ", c.describe(),
                    "; convert tensors with vm.builtin.read_if_cond");
}

/// The error of invoking `name` (params_count names from params_begin in v.param_names) with
/// `given` arguments instead of num_args.
RELAXVM_NOINLINE inline error arity_error(const exec_view& v, std::string_view name, std::int64_t num_args,
                                          std::int64_t params_begin, std::int64_t params_count, std::int64_t given) {
#if RELAXVM_ERROR_TEXT
  text t;
  t << "Invoking function " << name << " expects " << num_args << " arguments";
  append_param_names(t, v, params_begin, params_count);
  t << ", but " << given << " arguments were provided.";
  return error(error_kind::value, t.view());
#else
  (void)v, (void)num_args, (void)params_begin, (void)params_count, (void)given;
  return value_error(name);
#endif
}

}  // namespace detail
}  // namespace relaxvm

#endif  // RELAXVM_VM_SEMANTICS_HPP
