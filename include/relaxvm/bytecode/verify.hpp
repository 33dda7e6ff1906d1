// SPDX-License-Identifier: Apache-2.0
// The verifier: one constexpr function that checks a whole executable. The builder runs it, build()
// runs it at compile time, and load() runs it on every byte string, so that the interpreter can
// trust what it runs.
#ifndef RELAXVM_BYTECODE_VERIFY_HPP
#define RELAXVM_BYTECODE_VERIFY_HPP

#include <cstdint>
#include <type_traits>  // std::is_constant_evaluated
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/std_parts.hpp"  // std::sort, std::min, ...
#include "../base/checked_math.hpp"
#include "../base/device.hpp"
#include "../base/dtype.hpp"
#include "../base/text_builder.hpp"
#include "../base/trivial_vector.hpp"
#include "instruction.hpp"
#include "layout.hpp"
#include "opcode.hpp"

namespace relaxvm::RELAXVM_ABI {

/// Which rule a program broke. Tests check these; messages explain them.
enum class verify_rule : std::uint8_t {
  ok,
  bad_name,                ///< a name outside the character pool, or empty
  duplicate_name,          ///< two functions with the same name
  bad_params,              ///< parameter names out of range, or their count is not num_args
  bad_func_kind,           ///< a function kind other than packed or vm
  bad_packed_entry,        ///< a packed function with code, registers or an arity
  bad_func_range,          ///< a vm function's instructions are empty or outside the code
  overlapping_functions,   ///< two vm functions share instructions
  bad_num_args,            ///< negative argument count
  bad_register_file_size,  ///< fewer registers than arguments, or more than max_register_file_size
  bad_instruction_stream,  ///< offsets that do not tile the word array
  bad_opcode,              ///< an opcode other than call, ret, goto, if
  bad_constant,            ///< a constant whose kind or data is malformed
  bad_func_index,          ///< a call to a function index outside the table
  bad_destination,         ///< a call destination outside the register file, or %vm
  arity_mismatch,          ///< a vm-to-vm call with the wrong number of arguments
  bad_arg_kind,            ///< an argument word whose kind byte is not 0..3
  bad_register,            ///< a register outside the register file (or a special one where not allowed)
  undefined_register,      ///< a register read before any instruction writes it
  immediate_out_of_range,  ///< an immediate outside +-(2^55-1)
  bad_constant_index,      ///< c[i] outside the constant pool
  bad_function_arg,        ///< f[i] outside the function table
  zero_goto,               ///< goto 0 (an endless loop of one instruction)
  bad_if_offset,           ///< If with false_offset <= 1
  jump_out_of_function,    ///< a goto/If target outside its function
  falls_off_end,           ///< a path that runs past the last instruction without ret
};

constexpr std::string_view to_string(verify_rule r) {
  switch (r) {
    case verify_rule::ok: return "ok";
    case verify_rule::bad_name: return "bad_name";
    case verify_rule::duplicate_name: return "duplicate_name";
    case verify_rule::bad_params: return "bad_params";
    case verify_rule::bad_func_kind: return "bad_func_kind";
    case verify_rule::bad_packed_entry: return "bad_packed_entry";
    case verify_rule::bad_func_range: return "bad_func_range";
    case verify_rule::overlapping_functions: return "overlapping_functions";
    case verify_rule::bad_num_args: return "bad_num_args";
    case verify_rule::bad_register_file_size: return "bad_register_file_size";
    case verify_rule::bad_instruction_stream: return "bad_instruction_stream";
    case verify_rule::bad_opcode: return "bad_opcode";
    case verify_rule::bad_constant: return "bad_constant";
    case verify_rule::bad_func_index: return "bad_func_index";
    case verify_rule::bad_destination: return "bad_destination";
    case verify_rule::arity_mismatch: return "arity_mismatch";
    case verify_rule::bad_arg_kind: return "bad_arg_kind";
    case verify_rule::bad_register: return "bad_register";
    case verify_rule::undefined_register: return "undefined_register";
    case verify_rule::immediate_out_of_range: return "immediate_out_of_range";
    case verify_rule::bad_constant_index: return "bad_constant_index";
    case verify_rule::bad_function_arg: return "bad_function_arg";
    case verify_rule::zero_goto: return "zero_goto";
    case verify_rule::bad_if_offset: return "bad_if_offset";
    case verify_rule::jump_out_of_function: return "jump_out_of_function";
    case verify_rule::falls_off_end: return "falls_off_end";
  }
  return "unknown";
}

enum class warning_kind : std::uint8_t { unused_input, unreachable_instruction };

struct verify_warning {
  warning_kind kind = warning_kind::unused_input;
  std::int64_t func = 0;
  std::int64_t index = 0;  ///< the input's index, or the unreachable instruction's global index
};

struct verify_report {
  verify_rule rule = verify_rule::ok;
  std::int64_t func = -1;   ///< the function at fault, or -1
  std::int64_t instr = -1;  ///< the global instruction index at fault, or -1
  detail::text message;     ///< what is wrong, where, and what to do
  /// The first max_warnings warnings; warnings_dropped counts the rest (a hostile file could
  /// otherwise make the report far larger than itself).
  std::vector<verify_warning> warnings;
  std::int64_t warnings_dropped = 0;
  static constexpr std::size_t max_warnings = 1000;

  constexpr bool ok() const { return rule == verify_rule::ok; }
};

/// "function 'main': input 1 is never read" / "... instruction 4 (...) can never run".
constexpr void append_warning(detail::text& out, const exec_view& v, const verify_warning& w) {
  if (w.kind == warning_kind::unused_input) {
    out << "function '" << detail::safe_func_name(v, w.func) << "': input " << w.index << " is never read";
    const func_info& f = v.funcs[static_cast<std::size_t>(w.func)];
    if (f.params_count > 0) out << " (" << v.param_name(f, w.index) << ')';
  } else {
    append_location(out, v, w.func, w.index);
    out << " can never run";
  }
}

namespace detail {

class verifier {
 public:
  constexpr explicit verifier(const exec_view& v) : v_(v) {}

  constexpr verify_report run() {
    if (check_functions() && check_stream() && check_constants()) {
      // One register table for all functions, as large as the largest register file (at most
      // max_register_file_size bytes: docs/security.md counts it); each function clears only the
      // entries it set, so that verification takes time in proportion to the code, not to
      // declared register counts.
      std::int64_t largest = 0;
      for (const func_info& f : v_.funcs)
        if (f.kind == func_kind::vm && f.register_file_size > largest) largest = f.register_file_size;
      regs_.resize(static_cast<std::size_t>(largest), 0);
      for (std::size_t f = 0; f < v_.funcs.size(); ++f) {
        if (v_.funcs[f].kind != func_kind::vm) continue;
        if (!check_body(static_cast<std::int64_t>(f)) || !check_paths(static_cast<std::int64_t>(f))) break;
      }
    }
    return std::move(report_);
  }

 private:
  // Records the first failure; returns false so callers can `return fail(...)`.
  constexpr text& fail(verify_rule rule, std::int64_t func = -1, std::int64_t instr = -1) {
    report_.rule = rule;
    report_.func = func;
    report_.instr = instr;
    if (func >= 0 && instr >= 0) {
      append_location(report_.message, v_, func, instr);
      report_.message << ": ";
    } else if (func >= 0) {
      report_.message << "function '" << safe_func_name(v_, func) << "': ";
    }
    return report_.message;
  }

  static constexpr bool ref_ok(std::int64_t offset, std::int64_t size, std::size_t pool) {
    return offset >= 0 && size >= 0 && offset <= static_cast<std::int64_t>(pool) &&
           size <= static_cast<std::int64_t>(pool) - offset;
  }

  constexpr bool check_functions() {
    const auto nf = static_cast<std::int64_t>(v_.funcs.size());
    const std::int64_t ni = v_.num_instructions();
    for (std::int64_t i = 0; i < nf; ++i) {
      const func_info& f = v_.funcs[static_cast<std::size_t>(i)];
      if (!ref_ok(f.name.offset, f.name.size, v_.chars.size())) {
        fail(verify_rule::bad_name) << "function " << i << " has a name outside the character pool (offset "
                                    << f.name.offset << ", size " << f.name.size << ", pool " << v_.chars.size()
                                    << " characters)";
        return false;
      }
      if (f.name.size == 0) {
        fail(verify_rule::bad_name) << "function " << i << " has an empty name; every function needs a name";
        return false;
      }
      if (f.kind != func_kind::packed && f.kind != func_kind::vm) {
        fail(verify_rule::bad_func_kind, i) << "unknown function kind " << static_cast<std::int64_t>(f.kind)
                                            << "; expected 0 (packed) or 1 (vm)";
        return false;
      }
      if (!ref_ok(f.params_begin, f.params_count, v_.param_names.size())) {
        fail(verify_rule::bad_params, i) << "parameter names [" << f.params_begin << ", +" << f.params_count
                                         << ") lie outside the table of " << v_.param_names.size() << " names";
        return false;
      }
      for (std::int64_t p = 0; p < f.params_count; ++p) {
        const str_ref r = v_.param_names[static_cast<std::size_t>(f.params_begin + p)];
        if (!ref_ok(r.offset, r.size, v_.chars.size())) {
          fail(verify_rule::bad_params, i) << "parameter " << p << " has a name outside the character pool";
          return false;
        }
      }
      if (f.kind == func_kind::packed) {
        if (f.start != 0 || f.end != 0 || (f.num_args != unknown_num_args && f.num_args != 0) ||
            f.register_file_size != 0 || f.params_count != 0) {
          fail(verify_rule::bad_packed_entry, i)
              << "a packed function must have start=0, end=0, num_args=-2 (or 0), no registers and no parameter "
                 "names (it has start="
              << f.start << ", end=" << f.end << ", num_args=" << f.num_args
              << ", registers=" << f.register_file_size << ", parameters=" << f.params_count << ')';
          return false;
        }
        continue;
      }
      if (f.start < 0 || f.end > ni || f.start >= f.end) {
        fail(verify_rule::bad_func_range, i)
            << "covers instructions [" << f.start << ", " << f.end << ") but the executable has " << ni
            << " instructions; a function needs at least one instruction, ending with ret";
        return false;
      }
      if (f.num_args < 0) {
        fail(verify_rule::bad_num_args, i) << "has " << f.num_args << " arguments; expected 0 or more";
        return false;
      }
      if (f.register_file_size < f.num_args || f.register_file_size > max_register_file_size) {
        fail(verify_rule::bad_register_file_size, i)
            << "declares " << f.register_file_size << " registers; it needs at least its " << f.num_args
            << " arguments and at most " << max_register_file_size;
        return false;
      }
      if (f.params_count != 0 && f.params_count != f.num_args) {
        fail(verify_rule::bad_params, i) << "has " << f.params_count << " parameter names for " << f.num_args
                                         << " arguments; give one name per argument, or none";
        return false;
      }
    }
    // Duplicate names and overlapping code, through sorted copies (linear-time checks after).
    std::vector<std::int64_t> order;
    for (std::size_t i = 0; i < v_.funcs.size(); ++i) order.push_back(static_cast<std::int64_t>(i));
    std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      std::string_view na = v_.name(static_cast<std::size_t>(a)), nb = v_.name(static_cast<std::size_t>(b));
      return na < nb || (na == nb && a < b);
    });
    for (std::size_t k = 1; k < order.size(); ++k) {
      if (v_.name(static_cast<std::size_t>(order[k])) == v_.name(static_cast<std::size_t>(order[k - 1]))) {
        fail(verify_rule::duplicate_name, order[k])
            << "has the same name as function " << order[k - 1] << "; function names must be unique";
        return false;
      }
    }
    std::vector<std::int64_t> vm_funcs;
    for (std::int64_t i = 0; i < nf; ++i)
      if (v_.funcs[static_cast<std::size_t>(i)].kind == func_kind::vm) vm_funcs.push_back(i);
    std::sort(vm_funcs.begin(), vm_funcs.end(), by_code_start{&v_});
    for (std::size_t k = 1; k < vm_funcs.size(); ++k) {
      const func_info& prev = v_.funcs[static_cast<std::size_t>(vm_funcs[k - 1])];
      const func_info& cur = v_.funcs[static_cast<std::size_t>(vm_funcs[k])];
      if (cur.start < prev.end) {
        fail(verify_rule::overlapping_functions, vm_funcs[k])
            << "its instructions [" << cur.start << ", " << cur.end << ") overlap those of function '"
            << v_.name(static_cast<std::size_t>(vm_funcs[k - 1])) << "' [" << prev.start << ", " << prev.end << ')';
        return false;
      }
    }
    return true;
  }

  constexpr bool check_stream() {
    const auto n = static_cast<std::int64_t>(v_.instr_data.size());
    std::int64_t expected = 0;
    for (std::int64_t i = 0; i < v_.num_instructions(); ++i) {
      const std::int64_t off = v_.instr_offset[static_cast<std::size_t>(i)];
      if (off != expected) {
        fail(verify_rule::bad_instruction_stream)
            << "instruction " << i << " starts at word " << off << " but the previous instruction ends at word "
            << expected << "; instruction offsets must tile the word array";
        return false;
      }
      if (off >= n) {
        fail(verify_rule::bad_instruction_stream)
            << "instruction " << i << " starts at word " << off << ", past the end of the " << n << " code words";
        return false;
      }
      const std::int64_t op = v_.instr_data[static_cast<std::size_t>(off)];
      if (op < 1 || op > 4) {
        fail(verify_rule::bad_opcode) << "instruction " << i << " (word " << off << ") has opcode " << op
                                      << "; the opcodes are 1 (call), 2 (ret), 3 (goto) and 4 (If)";
        return false;
      }
      std::int64_t num_args = 0;
      if (op == 1) {
        if (n - off < 4) {
          fail(verify_rule::bad_instruction_stream)
              << "call instruction " << i << " is cut off: it needs 4 header words from word " << off
              << " but the code has " << n << " words";
          return false;
        }
        num_args = v_.instr_data[static_cast<std::size_t>(off + 3)];
        if (num_args < 0 || num_args > n - off - 4) {
          fail(verify_rule::bad_instruction_stream)
              << "call instruction " << i << " claims " << num_args << " arguments but only " << (n - off - 4)
              << " words follow it";
          return false;
        }
      }
      const std::int64_t words = instruction_words(op, num_args);
      if (words > n - off) {
        fail(verify_rule::bad_instruction_stream) << "instruction " << i << " needs " << words
                                                  << " words from word " << off << " but the code has " << n;
        return false;
      }
      expected = off + words;
    }
    if (expected != n) {
      fail(verify_rule::bad_instruction_stream) << (n - expected) << " code words after word " << expected
                                                << " belong to no instruction";
      return false;
    }
    return true;
  }

  constexpr bool check_constants() {
    for (std::size_t i = 0; i < v_.constants.size(); ++i) {
      const const_info c = v_.constant(i);
      auto bad = [&]() -> text& {
        return fail(verify_rule::bad_constant) << "constant " << static_cast<std::int64_t>(i) << " ("
                                               << to_string(c.kind) << "): ";
      };
      // The word's record (const_word) must lie in i64s, a shape's or tensor's dimensions with it,
      // before anything reads the decoded fields.
      if (static_cast<std::uint8_t>(c.kind) >= 1 && static_cast<std::uint8_t>(c.kind) <= 8) {
        const std::uint64_t head = v_.constants[i] >> detail::const_payload_shift;
        const std::size_t head_size = detail::const_head_size(c.kind);
        if (head_size > 0 && (head > v_.i64s.size() || head_size > v_.i64s.size() - head)) {
          bad() << "its record at " << head << " (" << head_size << " integers) lies outside the pool of "
                << v_.i64s.size() << " integers";
          return false;
        }
        if (detail::has_dims(c.kind)) {
          const std::int64_t ndim = v_.i64s[static_cast<std::size_t>(head)];
          if (ndim < 0 || static_cast<std::uint64_t>(ndim) > head) {
            bad() << "dimensions [" << static_cast<std::int64_t>(head) - ndim << ", +" << ndim
                  << ") lie outside the pool of " << v_.i64s.size() << " integers";
            return false;
          }
        }
      }
      switch (c.kind) {
        case const_kind::int64:
        case const_kind::float64:
        case const_kind::dtype: break;
        case const_kind::boolean:
          if (c.scalar != 0 && c.scalar != 1) {
            bad() << "holds " << c.scalar << "; a bool is 0 or 1";
            return false;
          }
          break;
        case const_kind::device:
          if (!device::valid_packed(c.scalar)) {
            bad() << "device type " << (c.scalar >> 32) << " id " << static_cast<std::int32_t>(c.scalar & 0xFFFFFFFF)
                  << " is not a valid DLPack device";
            return false;
          }
          break;
        case const_kind::string:
          if (!ref_ok(c.data_offset, c.data_size, v_.chars.size())) {
            bad() << "characters [" << c.data_offset << ", +" << c.data_size << ") lie outside the pool of "
                  << v_.chars.size();
            return false;
          }
          break;
        case const_kind::shape:
        case const_kind::tensor: {
          if (c.ndim < 0 || !ref_ok(c.dims_offset, c.ndim, v_.i64s.size())) {
            bad() << "dimensions [" << c.dims_offset << ", +" << c.ndim << ") lie outside the pool of "
                  << v_.i64s.size() << " integers";
            return false;
          }
          std::int64_t numel = 1;
          for (std::int64_t k = 0; k < c.ndim; ++k) {
            const std::int64_t d = v_.i64s[static_cast<std::size_t>(c.dims_offset + k)];
            if (d < 0) {
              bad() << "dimension " << k << " is " << d << "; dimensions are 0 or more";
              return false;
            }
            if (!checked_mul(numel, d, numel)) {
              bad() << "the element count overflows int64";
              return false;
            }
          }
          if (c.kind == const_kind::shape) break;
          const dtype t = dtype::unpack(c.scalar);
          if (!t.valid_for_tensor()) {
            bad() << "dtype " << t << " is not a valid tensor element type";
            return false;
          }
          std::int64_t nbytes = 0;
          if (!checked_mul(numel, t.bytes(), nbytes) || nbytes != c.data_size) {
            bad() << "has " << c.data_size << " data bytes; its shape and dtype need " << numel << " x "
                  << t.bytes();
            return false;
          }
          if (!ref_ok(c.data_offset, c.data_size, v_.bytes.size()) || c.data_offset % tensor_data_alignment != 0) {
            bad() << "data [" << c.data_offset << ", +" << c.data_size << ") lies outside the pool of "
                  << v_.bytes.size() << " bytes or is not " << tensor_data_alignment << "-byte aligned";
            return false;
          }
          break;
        }
        default:
          bad() << "unknown constant kind " << static_cast<std::int64_t>(c.kind);
          return false;
      }
    }
    return true;
  }

  // What reads a register, for messages: "argument 2", "ret", "the If condition". Made into text
  // only when a check fails: a verifier that formats a name per argument costs a compile-time
  // build of a large program most of its constexpr steps.
  struct operand {
    const char* what;  // not a string_view: see in_function() in builder.hpp
    std::int64_t index = -1;  // the argument's index, or -1
    friend constexpr text& operator<<(text& t, const operand& o) {
      t << o.what;
      if (o.index >= 0) t << ' ' << o.index;
      return t;
    }
  };

  // Checks one register read; `allow_special` admits %void and %vm (call arguments).
  constexpr bool check_read(std::int64_t func, std::int64_t instr, std::int64_t r, bool allow_special,
                            operand what) {
    const func_info& f = v_.funcs[static_cast<std::size_t>(func)];
    if (r == void_register || r == vm_register) {
      if (allow_special) return true;
      fail(verify_rule::bad_register, func, instr) << what << " cannot be " << (r == void_register ? "%void" : "%vm")
                                                   << "; use a register that holds a value";
      return false;
    }
    if (r < 0 || r >= f.register_file_size) {
      fail(verify_rule::bad_register, func, instr)
          << what << " reads register " << r << " but the function has " << f.register_file_size
          << " registers (%0 to %" << (f.register_file_size - 1) << ')';
      return false;
    }
    if (r >= f.num_args && !(regs_[static_cast<std::size_t>(r)] & reg_defined)) {
      fail(verify_rule::undefined_register, func, instr)
          << what << " reads register %" << r
          << " before any instruction writes it; registers past the inputs must be written (as a call "
             "destination) earlier in the function";
      return false;
    }
    if (r < f.num_args) mark(r, reg_used);
    return true;
  }

  constexpr bool check_jump(std::int64_t func, std::int64_t instr, std::int64_t offset, const char* what) {
    const func_info& f = v_.funcs[static_cast<std::size_t>(func)];
    std::int64_t target = 0;
    if (!checked_add(instr, offset, target) || target < f.start || target >= f.end) {
      fail(verify_rule::jump_out_of_function, func, instr)
          << what << " offset " << offset << " leads outside the function, which has instructions 0 to "
          << (f.end - f.start - 1) << "; offsets count from the jumping instruction itself";
      return false;
    }
    return true;
  }

  constexpr bool check_body(std::int64_t func) {
    const func_info& f = v_.funcs[static_cast<std::size_t>(func)];
    // Leaves regs_ all clear for the next function, however this one ends.
    struct clear_on_exit {
      verifier& v;
      constexpr ~clear_on_exit() {
        for (std::int64_t r : v.touched_) v.regs_[static_cast<std::size_t>(r)] = 0;
        v.touched_.clear();
        v.inputs_read_ = 0;
      }
    } clear{*this};
    const auto nf = static_cast<std::int64_t>(v_.funcs.size());
    const auto nc = static_cast<std::int64_t>(v_.constants.size());
    const std::uint8_t* regs = regs_.data();
    for (std::int64_t i = f.start; i < f.end; ++i) {
      const instruction in = decode(v_, i);
      switch (in.op) {
        case opcode::call: {
          if (in.func_idx < 0 || in.func_idx >= nf) {
            fail(verify_rule::bad_func_index, func, i)
                << "calls function index " << in.func_idx << " but the function table has " << nf << " entries";
            return false;
          }
          const func_info& callee = v_.funcs[static_cast<std::size_t>(in.func_idx)];
          if (callee.kind == func_kind::vm && in.num_args != callee.num_args) {
            fail(verify_rule::arity_mismatch, func, i)
                << "passes " << in.num_args << " arguments but function '" << v_.name(static_cast<std::size_t>(in.func_idx))
                << "' takes " << callee.num_args;
            return false;
          }
          for (std::int64_t k = 0; k < in.num_args; ++k) {
            // The common cases first, in one condition (constexpr steps count statements): a
            // register this function wrote earlier, an immediate, a constant in the pool.
            const std::int64_t word = in.args[k];
            const auto kind = static_cast<std::uint8_t>(static_cast<std::uint64_t>(word) >> arg_value_bits);
            const std::int64_t value = static_cast<std::int64_t>(static_cast<std::uint64_t>(word) << 8) >> 8;
            if (kind == static_cast<std::uint8_t>(arg_kind::reg)
                    ? value >= f.num_args && value < f.register_file_size && (regs[value] & reg_defined)
                    : (kind == static_cast<std::uint8_t>(arg_kind::imm) && value >= arg_value_min) ||
                          (kind == static_cast<std::uint8_t>(arg_kind::const_idx) && value >= 0 && value < nc))
              continue;
            const arg a = arg::from_data(word);
            const operand what{"argument", k};
            switch (a.kind_byte()) {
              case static_cast<std::uint8_t>(arg_kind::reg):
                if (!check_read(func, i, a.value(), true, what)) return false;
                break;
              case static_cast<std::uint8_t>(arg_kind::imm):
                if (a.value() < arg_value_min) {
                  fail(verify_rule::immediate_out_of_range, func, i)
                      << what << " is the immediate " << a.value() << ", outside +-(2^55-1); put it in a constant";
                  return false;
                }
                break;
              case static_cast<std::uint8_t>(arg_kind::const_idx):
                if (a.value() < 0 || a.value() >= static_cast<std::int64_t>(v_.constants.size())) {
                  fail(verify_rule::bad_constant_index, func, i) << what << " names constant " << a.value()
                                                                 << " but the pool has " << v_.constants.size();
                  return false;
                }
                break;
              case static_cast<std::uint8_t>(arg_kind::func_idx):
                if (a.value() < 0 || a.value() >= nf) {
                  fail(verify_rule::bad_function_arg, func, i)
                      << what << " names function " << a.value() << " but the table has " << nf;
                  return false;
                }
                break;
              default:
                fail(verify_rule::bad_arg_kind, func, i)
                    << what << " has kind " << static_cast<int>(a.kind_byte())
                    << "; argument kinds are 0 (register), 1 (immediate), 2 (constant), 3 (function)";
                return false;
            }
          }
          if (in.dst == vm_register || (in.dst != void_register && (in.dst < 0 || in.dst >= f.register_file_size))) {
            fail(verify_rule::bad_destination, func, i)
                << "writes register " << in.dst << " but the function has " << f.register_file_size
                << " registers; a destination is a register or %void";
            return false;
          }
          if (in.dst != void_register) mark(in.dst, reg_defined);
          break;
        }
        case opcode::ret:
          if (in.reg != void_register && !check_read(func, i, in.reg, false, {"ret"})) return false;
          break;
        case opcode::goto_:
          if (in.offset == 0) {
            fail(verify_rule::zero_goto, func, i) << "goto 0 would loop on itself forever";
            return false;
          }
          if (!check_jump(func, i, in.offset, "goto")) return false;
          break;
        case opcode::if_:
          if (!check_read(func, i, in.reg, false, {"the If condition"})) return false;
          if (in.offset <= 1) {
            fail(verify_rule::bad_if_offset, func, i)
                << "false offset " << in.offset
                << " must be 2 or more: 1 is the true branch itself, and smaller offsets jump backwards";
            return false;
          }
          if (!check_jump(func, i, in.offset, "If false")) return false;
          break;
      }
    }
    // Inputs never read. The walk passes the inputs read (each read by an instruction) and
    // those it reports, then stops: its length follows the code, not the declared count.
    std::int64_t unused = f.num_args - inputs_read_;
    for (std::int64_t r = 0; unused > 0; ++r) {
      if (regs_[static_cast<std::size_t>(r)] & reg_used) continue;
      if (report_.warnings.size() >= verify_report::max_warnings) {
        report_.warnings_dropped += unused;
        break;
      }
      report_.warnings.push_back({warning_kind::unused_input, func, r});
      --unused;
    }
    return true;
  }

  // Every path from the entry must end in ret; code no path reaches is reported as a warning.
  constexpr bool check_paths(std::int64_t func) {
    const func_info& f = v_.funcs[static_cast<std::size_t>(func)];
    const std::int64_t n = f.end - f.start;
    trivial_vector<std::uint8_t> seen;
    seen.resize(static_cast<std::size_t>(n), 0);
    trivial_vector<std::int64_t> work{f.start};
    seen[0] = 1;
    // check_body() has kept every jump inside the function; only a fall-through can leave it.
    std::uint8_t* visited = seen.data();  // indexed by instruction - f.start
    const std::int64_t* words = v_.instr_data.data();
    const std::int64_t* offsets = v_.instr_offset.data();
    while (!work.empty()) {
      std::int64_t i = work.back();
      work.pop_back();
      // Follows one path until it returns or meets code already seen; the false targets of Ifs
      // wait on `work`. (Straight-line code costs few constexpr steps this way.)
      for (;;) {
        const std::int64_t* w = words + offsets[i];
        std::int64_t next = i + 1;
        if (w[0] == static_cast<std::int64_t>(opcode::ret)) break;
        if (w[0] == static_cast<std::int64_t>(opcode::goto_)) {
          next = i + w[1];
        } else if (w[0] == static_cast<std::int64_t>(opcode::if_) && !visited[i + w[2] - f.start]) {
          visited[i + w[2] - f.start] = 1;
          work.push_back(i + w[2]);
        }
        if (next >= f.end) {
          fail(verify_rule::falls_off_end, func, i)
              << "execution can run past the last instruction of the function; end every path with ret";
          return false;
        }
        if (visited[next - f.start]) break;
        visited[next - f.start] = 1;
        i = next;
      }
    }
    for (std::int64_t k = 0; k < n; ++k)
      if (!seen[static_cast<std::size_t>(k)]) warn({warning_kind::unreachable_instruction, func, f.start + k});
    return true;
  }

  constexpr void warn(const verify_warning& w) {
    if (report_.warnings.size() < verify_report::max_warnings) report_.warnings.push_back(w);
    else ++report_.warnings_dropped;
  }
  constexpr void mark(std::int64_t r, std::uint8_t bit) {
    std::uint8_t& e = regs_[static_cast<std::size_t>(r)];
    if (e & bit) return;
    if (e == 0) touched_.push_back(r);
    e = static_cast<std::uint8_t>(e | bit);
    if (bit == reg_used) ++inputs_read_;
  }

  static constexpr std::uint8_t reg_defined = 1;  // written by an earlier call of this function
  static constexpr std::uint8_t reg_used = 2;     // an input read by this function
  const exec_view& v_;
  verify_report report_;
  trivial_vector<std::uint8_t> regs_;     // one byte per register: reg_defined | reg_used
  trivial_vector<std::int64_t> touched_;  // the entries of regs_ this function set
  std::int64_t inputs_read_ = 0;          // this function's inputs with reg_used
};

/// verify() at run time: its own code in separate compilation (src/core.cpp), so a user's
/// translation unit that builds or loads programs does not compile the verifier.
RELAXVM_DECL verify_report verify_at_run_time(const exec_view& v);
#if RELAXVM_DEFINES_CORE
RELAXVM_DECL verify_report verify_at_run_time(const exec_view& v) { return verifier(v).run(); }
#endif

}  // namespace detail

/// Checks everything the interpreter relies on. See verify_rule for the rules.
RELAXVM_IF_CONSTEVAL_BEGIN
constexpr verify_report verify(const exec_view& v) {
  RELAXVM_IF_CONSTEVAL { return detail::verifier(v).run(); }
  return detail::verify_at_run_time(v);
}
RELAXVM_IF_CONSTEVAL_END

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_VERIFY_HPP
