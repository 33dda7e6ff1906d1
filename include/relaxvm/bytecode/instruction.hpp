// SPDX-License-Identifier: Apache-2.0
// Decoding instructions from the word stream, and their text form (the reference's layout).
#ifndef RELAXVM_BYTECODE_INSTRUCTION_HPP
#define RELAXVM_BYTECODE_INSTRUCTION_HPP

#include <cstdint>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/text_builder.hpp"
#include "layout.hpp"
#include "opcode.hpp"

namespace relaxvm::RELAXVM_ABI {

/// A decoded instruction. `args` points into the word stream: decoding copies nothing.
struct instruction {
  opcode op = opcode::ret;
  std::int64_t dst = void_register;  ///< call
  std::int64_t func_idx = 0;         ///< call
  std::int64_t num_args = 0;         ///< call
  const std::int64_t* args = nullptr;
  std::int64_t reg = void_register;  ///< ret: result; if: condition
  std::int64_t offset = 0;           ///< goto: pc offset; if: false offset

  constexpr arg arg_at(std::int64_t i) const { return arg::from_data(args[i]); }
};

/// Decodes instruction `i` of a verified layout.
constexpr instruction decode(const exec_view& v, std::int64_t i) {
  const std::int64_t* w = v.instr_data.data() + v.instr_offset[static_cast<std::size_t>(i)];
  instruction in;
  in.op = static_cast<opcode>(w[0]);
  switch (in.op) {
    case opcode::call:
      in.dst = w[1];
      in.func_idx = w[2];
      in.num_args = w[3];
      in.args = w + 4;
      break;
    case opcode::ret: in.reg = w[1]; break;
    case opcode::goto_: in.offset = w[1]; break;
    case opcode::if_:
      in.reg = w[1];
      in.offset = w[2];
      break;
  }
  return in;
}

namespace detail {

/// The name of function `i`, or "" when the index or its name is out of range (unverified input).
constexpr std::string_view safe_func_name(const exec_view& v, std::int64_t i) {
  if (i < 0 || static_cast<std::uint64_t>(i) >= v.funcs.size()) return {};
  const str_ref r = v.funcs[static_cast<std::size_t>(i)].name;
  if (r.offset < 0 || r.size < 0 || r.offset > static_cast<std::int64_t>(v.chars.size()) ||
      r.size > static_cast<std::int64_t>(v.chars.size()) - r.offset)
    return {};
  return v.str(r);
}

constexpr void append_register(text& out, std::int64_t r) {
  if (r == void_register) out << "%void";
  else if (r == vm_register) out << "%vm";
  else out << '%' << r;
}

constexpr void append_func_ref(text& out, const exec_view& v, std::int64_t i) {
  std::string_view name = safe_func_name(v, i);
  if (name.empty()) out << "unknown_func_index(" << i << ')';
  else out << name;
}

constexpr void append_arg(text& out, const exec_view& v, arg a) {
  switch (a.kind_byte()) {
    case static_cast<std::uint8_t>(arg_kind::reg): append_register(out, a.value()); break;
    case static_cast<std::uint8_t>(arg_kind::imm): out << 'i' << a.value(); break;
    case static_cast<std::uint8_t>(arg_kind::const_idx): out << "c[" << a.value() << ']'; break;
    case static_cast<std::uint8_t>(arg_kind::func_idx):
      out << "f[";
      append_func_ref(out, v, a.value());
      out << ']';
      break;
    default: out << "bad_arg(kind=" << static_cast<int>(a.kind_byte()) << ", value=" << a.value() << ')'; break;
  }
}

/// True when instruction `i`'s words lie inside the stream (so decode() is safe).
constexpr bool instruction_in_bounds(const exec_view& v, std::int64_t i) {
  if (i < 0 || i >= v.num_instructions()) return false;
  const std::int64_t off = v.instr_offset[static_cast<std::size_t>(i)];
  const auto n = static_cast<std::int64_t>(v.instr_data.size());
  if (off < 0 || off >= n) return false;
  const std::int64_t op = v.instr_data[static_cast<std::size_t>(off)];
  if (op == 1 && off + 3 >= n) return false;
  std::int64_t num_args = op == 1 ? v.instr_data[static_cast<std::size_t>(off + 3)] : 0;
  if (num_args < 0 || num_args > n) return false;
  std::int64_t words = instruction_words(op, num_args);
  return words > 0 && words <= n - off;
}

}  // namespace detail

/// Appends instruction `i` as text. `aligned` gives the reference's as_text columns
/// ("call  vm.op.add        in: %0, %1       dst: %2"); otherwise single spaces.
constexpr void append_instruction(detail::text& out, const exec_view& v, std::int64_t i, bool aligned = true) {
  if (!detail::instruction_in_bounds(v, i)) {
    out << "<malformed instruction>";
    return;
  }
  const instruction in = decode(v, i);
  const std::size_t base = out.size();
  auto column = [&](std::size_t width) {
    if (aligned) out.pad_to(base + width);
    else out << ' ';
  };
  switch (in.op) {
    case opcode::call: {
      out << "call";
      column(6);
      std::size_t name_start = out.size();
      detail::append_func_ref(out, v, in.func_idx);
      if (aligned) out.pad_to(name_start + 16);
      out << " in: ";
      std::size_t args_start = out.size();
      for (std::int64_t k = 0; k < in.num_args; ++k) {
        if (k) out << ", ";
        detail::append_arg(out, v, in.arg_at(k));
      }
      if (aligned) out.pad_to(args_start + 12);
      out << " dst: ";
      detail::append_register(out, in.dst);
      break;
    }
    case opcode::ret:
      out << "ret";
      column(6);
      detail::append_register(out, in.reg);
      break;
    case opcode::goto_:
      out << "goto";
      column(6);
      out << in.offset;
      break;
    case opcode::if_:
      out << "If";
      column(6);
      detail::append_register(out, in.reg);
      out << ", " << in.offset;
      break;
  }
}

/// Appends " (x, y)": the names of `count` parameters from `begin` in v.param_names (nothing
/// when the function names none).
constexpr void append_param_names(detail::text& out, const exec_view& v, std::int64_t begin, std::int64_t count) {
  if (count <= 0) return;
  out << " (";
  for (std::int64_t i = 0; i < count; ++i)
    out << (i ? ", " : "") << v.str(v.param_names[static_cast<std::size_t>(begin + i)]);
  out << ')';
}

/// Appends "function 'main', instruction 3 (goto 7)"; `instr` is a global index, printed relative to
/// the start of function `func`.
constexpr void append_location(detail::text& out, const exec_view& v, std::int64_t func, std::int64_t instr) {
  out << "function '" << detail::safe_func_name(v, func) << "', instruction ";
  std::int64_t start = (func >= 0 && static_cast<std::uint64_t>(func) < v.funcs.size())
                           ? v.funcs[static_cast<std::size_t>(func)].start
                           : 0;
  out << (instr - start);
#if !RELAXVM_ERROR_TEXT
  if (!std::is_constant_evaluated()) return;  // the disassembler stays out of the image
#endif
  out << " (";
  append_instruction(out, v, instr, false);
  out << ')';
}

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_INSTRUCTION_HPP
