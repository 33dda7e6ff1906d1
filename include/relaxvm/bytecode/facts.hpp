// SPDX-License-Identifier: Apache-2.0
// Program facts: what the machines running a verified program need to know about it, learned in
// one pass over its instructions (constexpr). link() keeps them for static_vm at compile time; an
// executable computes them once when it is made, and every virtual_machine made from it reads them.
#ifndef RELAXVM_BYTECODE_FACTS_HPP
#define RELAXVM_BYTECODE_FACTS_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "instruction.hpp"
#include "layout.hpp"
#include "opcode.hpp"

namespace relaxvm::RELAXVM_ABI {

/// What the program says of one function (an entry of the function table).
struct function_facts {
  /// A vm function's frame, in value slots: its registers, the return slot of the Calls it makes
  /// and their argument scratch (as many as its widest Call's arguments). 0 for packed functions.
  std::int64_t frame_slots = 0;
  /// The widest Call the function makes (vm functions).
  std::int64_t max_call_args = 0;
  /// Some instruction passes the function as a value (a closure over it can be made).
  bool used_as_value = false;
  /// The first instruction that names the function, as callee or as an argument (function,
  /// instruction), or -1, -1: which error messages quote.
  std::int64_t first_use_function = -1, first_use_pc = -1;
};

/// What the program says of one instruction.
struct instruction_facts {
  /// It starts a block: a function's first instruction, a jump target, or the one after a Ret, Goto or If.
  bool leader = false;
  /// A Call of a vm function: its index; else -1.
  std::int64_t vm_callee = -1;
};

/// One pass over every instruction of every vm function of `v` (verified). `funcs` has an entry
/// per function; `instrs` one per instruction, or is empty when the caller needs no per
/// instruction facts (the VM). Instructions outside every function stay default.
constexpr void collect_facts(const exec_view& v, std::span<function_facts> funcs, std::span<instruction_facts> instrs) {
  const bool per_instruction = !instrs.empty();
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    const func_info& fi = v.funcs[f];
    if (fi.kind != func_kind::vm) continue;
    function_facts& self = funcs[f];
    if (per_instruction && fi.start < fi.end) instrs[static_cast<std::size_t>(fi.start)].leader = true;
    for (std::int64_t pc = fi.start; pc < fi.end; ++pc) {
      const instruction in = decode(v, pc);
      if (in.op != opcode::call) {
        if (!per_instruction) continue;
        if (pc + 1 < fi.end) instrs[static_cast<std::size_t>(pc + 1)].leader = true;
        if (in.op == opcode::goto_ || in.op == opcode::if_) instrs[static_cast<std::size_t>(pc + in.offset)].leader = true;
        continue;
      }
      if (in.num_args > self.max_call_args) self.max_call_args = in.num_args;
      auto named = [&](std::int64_t callee) -> function_facts& {
        function_facts& c = funcs[static_cast<std::size_t>(callee)];
        if (c.first_use_pc < 0) {
          c.first_use_function = static_cast<std::int64_t>(f);
          c.first_use_pc = pc;
        }
        return c;
      };
      named(in.func_idx);
      if (per_instruction && v.funcs[static_cast<std::size_t>(in.func_idx)].kind == func_kind::vm)
        instrs[static_cast<std::size_t>(pc)].vm_callee = in.func_idx;
      for (std::int64_t k = 0; k < in.num_args; ++k)
        if (const arg a = in.arg_at(k); a.kind() == arg_kind::func_idx) named(a.value()).used_as_value = true;
    }
    self.frame_slots = fi.register_file_size + 1 + self.max_call_args;
  }
}

/// The facts of a program of sizes S, in arrays: link() keeps them as a constexpr member.
template <layout_sizes S>
struct static_program_facts {
  std::array<function_facts, S.funcs> funcs{};
  std::array<instruction_facts, S.instr_offset> instrs{};

  /// The program may call a vm function indirectly: it passes one as a value (the only way a
  /// closure over one is made). Then the depth of its calls is not known statically.
  constexpr bool calls_indirectly(const exec_view& v) const {
    for (std::size_t f = 0; f < S.funcs; ++f)
      if (funcs[f].used_as_value && v.funcs[f].kind == func_kind::vm) return true;
    return false;
  }
};

template <layout_sizes S>
constexpr static_program_facts<S> facts_of(const exec_view& v) {
  static_program_facts<S> p;
  collect_facts(v, p.funcs, p.instrs);
  return p;
}

}  // namespace relaxvm::RELAXVM_ABI

#endif  // RELAXVM_BYTECODE_FACTS_HPP
