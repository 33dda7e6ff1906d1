// SPDX-License-Identifier: Apache-2.0
// The instruction set: four opcodes, the 64-bit argument encoding and the special registers.
// Encodings follow the Relax VM so that bytecode written for it keeps its meaning.
#ifndef RELAXVM_BYTECODE_OPCODE_HPP
#define RELAXVM_BYTECODE_OPCODE_HPP

#include <cstdint>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI {

/// Instruction opcodes; 0 is unused. Words in the instruction stream:
///   call: [1, dst, func_idx, num_args, arg_0 .. arg_{n-1}]   (dst and func_idx raw, args encoded)
///   ret:  [2, result_register]
///   goto: [3, pc_offset]                  (relative to the goto itself)
///   if:   [4, cond_register, false_offset] (falls through when cond != 0, else jumps)
enum class opcode : std::int64_t { call = 1, ret = 2, goto_ = 3, if_ = 4 };

/// Number of words an instruction with `num_args` call arguments takes (0 for a bad opcode).
constexpr std::int64_t instruction_words(std::int64_t op, std::int64_t num_args = 0) {
  switch (op) {
    case 1: return 4 + num_args;
    case 2: return 2;
    case 3: return 2;
    case 4: return 3;
    default: return 0;
  }
}

/// What an argument word refers to; the kind lives in the top byte of the word.
enum class arg_kind : std::uint8_t { reg = 0, imm = 1, const_idx = 2, func_idx = 3 };

inline constexpr int arg_value_bits = 56;
inline constexpr std::uint64_t arg_value_mask = (std::uint64_t{1} << arg_value_bits) - 1;
/// Argument values are sign-extended 56-bit integers in a symmetric range, as in the reference.
inline constexpr std::int64_t arg_value_max = (std::int64_t{1} << 55) - 1;
inline constexpr std::int64_t arg_value_min = -arg_value_max;

/// Registers at or above this number are special.
inline constexpr std::int64_t begin_special_register = std::int64_t{1} << 54;
/// Reads as null; as a call destination the result is discarded.
inline constexpr std::int64_t void_register = begin_special_register;
/// Reads as the VM context that builtins taking `ctx` expect as their first argument.
inline constexpr std::int64_t vm_register = begin_special_register + 1;

/// The largest register file a function may declare. It bounds the memory a hostile executable can
/// make the VM reserve per frame.
inline constexpr std::int64_t max_register_file_size = std::int64_t{1} << 20;

/// One encoded argument word.
struct arg {
  std::int64_t data = void_register;

  constexpr std::uint8_t kind_byte() const {
    return static_cast<std::uint8_t>(static_cast<std::uint64_t>(data) >> arg_value_bits);
  }
  constexpr arg_kind kind() const { return static_cast<arg_kind>(kind_byte()); }
  /// The sign-extended 56-bit value.
  constexpr std::int64_t value() const {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(data) << 8) >> 8;
  }

  static constexpr arg make(arg_kind k, std::int64_t v) {
    return arg{static_cast<std::int64_t>((static_cast<std::uint64_t>(k) << arg_value_bits) |
                                         (static_cast<std::uint64_t>(v) & arg_value_mask))};
  }
  static constexpr arg from_data(std::int64_t word) { return arg{word}; }
  static constexpr arg reg(std::int64_t r) { return make(arg_kind::reg, r); }
  static constexpr arg imm(std::int64_t v) { return make(arg_kind::imm, v); }
  static constexpr arg constant(std::int64_t i) { return make(arg_kind::const_idx, i); }
  static constexpr arg func(std::int64_t i) { return make(arg_kind::func_idx, i); }

  friend constexpr bool operator==(const arg&, const arg&) = default;
};

constexpr bool is_special_register(std::int64_t r) { return r >= begin_special_register; }

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_OPCODE_HPP
