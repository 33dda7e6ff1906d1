// SPDX-License-Identifier: Apache-2.0
// Facts of a verified program that the machines running it need, each computed by one function
// (constexpr, so that link() and static_vm compute them at compile time and virtual_machine when
// it is made): the register slots of a function's frame, and which functions are passed as values.
#ifndef RELAXVM_BYTECODE_FACTS_HPP
#define RELAXVM_BYTECODE_FACTS_HPP

#include <array>
#include <cstddef>
#include <cstdint>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "instruction.hpp"
#include "layout.hpp"
#include "opcode.hpp"

namespace relaxvm::RELAXVM_ABI::detail {

/// Register slots of a frame of function f: its registers, the return slot of the calls it makes
/// and their argument scratch (the layout of a frame in virtual_machine and static_vm).
constexpr std::int64_t frame_slots(const exec_view& v, std::size_t f) {
  const func_info& fi = v.funcs[f];
  std::int64_t max_args = 0;
  for (std::int64_t pc = fi.start; pc < fi.end; ++pc) {
    const instruction in = decode(v, pc);
    if (in.op == opcode::call && in.num_args > max_args) max_args = in.num_args;
  }
  return fi.register_file_size + 1 + max_args;
}

/// Per function index: whether some instruction passes the function as a value (f[i]).
template <std::size_t N>
constexpr std::array<bool, N> functions_used_as_values(const exec_view& v) {
  std::array<bool, N> used{};
  for (const func_info& fi : v.funcs) {
    if (fi.kind != func_kind::vm) continue;
    for (std::int64_t pc = fi.start; pc < fi.end; ++pc) {
      const instruction in = decode(v, pc);
      if (in.op != opcode::call) continue;
      for (std::int64_t k = 0; k < in.num_args; ++k)
        if (const arg a = in.arg_at(k); a.kind() == arg_kind::func_idx) used[static_cast<std::size_t>(a.value())] = true;
    }
  }
  return used;
}

}  // namespace relaxvm::detail

#endif  // RELAXVM_BYTECODE_FACTS_HPP
