// SPDX-License-Identifier: Apache-2.0
// Text forms of an executable: as_text() and stats() in the reference's layout, and as_cpp(),
// builder code that rebuilds the same executable. The free functions take a verified view (an
// executable's, or one that verify() accepted); for anything else use append_instruction, which
// checks bounds.
#ifndef RELAXVM_IO_TEXT_HPP
#define RELAXVM_IO_TEXT_HPP

#include <bit>
#include <vector>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/std_parts.hpp"  // std::sort, std::min, ...
#include "../base/device.hpp"
#include "../base/dtype.hpp"
#include "../base/text_builder.hpp"
#include "../bytecode/formalize.hpp"
#include "../bytecode/instruction.hpp"
#include "../bytecode/layout.hpp"

namespace relaxvm::RELAXVM_ABI {

/// How stats() shows tensor constants: by shape, as the reference does ("[2, 3]"), or with
/// their kind and dtype ("tensor float32[2, 3]"), so that they cannot be taken for shapes.
enum class constant_style { reference, typed };

namespace detail {

inline std::string to_std_string(const text& t) { return std::string(t.view()); }

/// A C++ string literal for `s`: octal escapes (never greedy like a hex escape) for anything unprintable.
inline void append_cpp_string(text& out, std::string_view s) {
  out << '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') out << '\\' << ch;
    else if (c >= 0x20 && c < 0x7F) out << ch;
    else {
      out << '\\' << static_cast<char>('0' + ((c >> 6) & 7)) << static_cast<char>('0' + ((c >> 3) & 7))
          << static_cast<char>('0' + (c & 7));
    }
  }
  out << '"';
}

inline void append_dims(text& out, const exec_view& v, const const_info& c) {
  for (std::int64_t k = 0; k < c.ndim; ++k) {
    if (k) out << ", ";
    out << v.i64s[static_cast<std::size_t>(c.dims_offset + k)];
  }
}

/// One constant as stats() shows it: tensors by shape ("[2, 3]" or "scalar"; with
/// constant_style::typed, "tensor float32[2, 3]" or "tensor float32 scalar"), shapes as
/// "shapetuple[4, 6]", strings quoted, numbers and dtypes as themselves.
inline void append_constant_summary(text& out, const exec_view& v, const const_info& c, constant_style style) {
  switch (c.kind) {
    case const_kind::int64: out << c.scalar; break;
    case const_kind::float64: append_double(out, std::bit_cast<double>(c.scalar)); break;
    case const_kind::boolean: out << (c.scalar != 0); break;
    case const_kind::dtype: append_dtype(out, dtype::unpack(c.scalar)); break;
    case const_kind::device: append_device(out, device::unpack(c.scalar)); break;
    case const_kind::shape:
      out << "shapetuple[";
      append_dims(out, v, c);
      out << ']';
      break;
    case const_kind::string: out << '"' << v.str({c.data_offset, c.data_size}) << '"'; break;
    case const_kind::tensor:
      if (style == constant_style::typed) {
        out << "tensor ";
        append_dtype(out, dtype::unpack(c.scalar));
        if (c.ndim == 0) out << ' ';
      }
      if (c.ndim == 0) {
        out << "scalar";
      } else {
        out << '[';
        append_dims(out, v, c);
        out << ']';
      }
      break;
  }
}

inline void append_cpp_dtype(text& out, std::int64_t packed) {
  const dtype t = dtype::unpack(packed);
  out << "relaxvm::dtype(" << static_cast<int>(t.code) << ", " << static_cast<int>(t.bits) << ", "
      << static_cast<int>(t.lanes) << ')';
}

inline void append_cpp_double(text& out, double d) {
  if (d != d || d == std::numeric_limits<double>::infinity() || d == -std::numeric_limits<double>::infinity()) {
    out << "std::bit_cast<double>(std::int64_t{" << std::bit_cast<std::int64_t>(d) << "})";
    return;
  }
  text num;
  append_double(num, d);
  out << num;
  // Make it a floating literal: "-0" must not read back as the integer 0.
  if (num.view().find_first_of(".e") == std::string_view::npos) out << ".0";
}

inline void append_cpp_int(text& out, std::int64_t x) {
  if (x == std::numeric_limits<std::int64_t>::min()) out << "std::numeric_limits<std::int64_t>::min()";
  else out << x;
}

inline void append_cpp_constant(text& out, const exec_view& v, const const_info& c) {
  switch (c.kind) {
    case const_kind::int64:
      out << "b.add_int(";
      append_cpp_int(out, c.scalar);
      out << ')';
      break;
    case const_kind::float64:
      out << "b.add_float(";
      append_cpp_double(out, std::bit_cast<double>(c.scalar));
      out << ')';
      break;
    case const_kind::boolean: out << "b.add_bool(" << (c.scalar != 0) << ')'; break;
    case const_kind::dtype:
      out << "b.add_dtype(";
      append_cpp_dtype(out, c.scalar);
      out << ')';
      break;
    case const_kind::device: {
      const device d = device::unpack(c.scalar);
      out << "b.add_device(relaxvm::device(static_cast<DLDeviceType>(" << static_cast<std::int64_t>(d.device_type)
          << "), " << d.device_id << "))";
      break;
    }
    case const_kind::shape:
      out << "b.add_shape({";
      append_dims(out, v, c);
      out << "})";
      break;
    case const_kind::string: {
      std::string_view s = v.str({c.data_offset, c.data_size});
      out << "b.add_string(";
      if (s.find('\0') != std::string_view::npos) {
        out << "std::string_view(";
        append_cpp_string(out, s);
        out << ", " << s.size() << ')';
      } else {
        append_cpp_string(out, s);
      }
      out << ')';
      break;
    }
    case const_kind::tensor: {
      out << "b.add_tensor(";
      append_cpp_dtype(out, c.scalar);
      out << ", {";
      append_dims(out, v, c);
      out << "}, {";
      constexpr char hex[] = "0123456789abcdef";
      for (std::int64_t k = 0; k < c.data_size; ++k) {
        if (k) out << ((k % 16 == 0) ? ",\n      " : ", ");
        const std::uint8_t x = v.bytes[static_cast<std::size_t>(c.data_offset + k)];
        out << "0x" << hex[x >> 4] << hex[x & 15];
      }
      out << "})";
      break;
    }
  }
}

inline void append_cpp_register(text& out, std::int64_t r) {
  if (r == void_register) out << "b.void_arg()";
  else if (r == vm_register) out << "b.vm_state()";
  else out << "b.r(" << r << ')';
}

inline void append_cpp_arg(text& out, const exec_view& v, arg a) {
  switch (a.kind()) {
    case arg_kind::reg: append_cpp_register(out, a.value()); break;
    case arg_kind::imm: out << "b.imm(" << a.value() << ')'; break;
    case arg_kind::const_idx: out << "b.c(" << a.value() << ')'; break;
    case arg_kind::func_idx:
      out << "b.f(";
      append_cpp_string(out, v.name(static_cast<std::size_t>(a.value())));
      out << ')';
      break;
  }
}

}  // namespace detail

/// The reference's text form: "@main:" then one line per instruction, packed functions as
/// "@name packed_func;".
inline std::string as_text(const exec_view& v) {
  detail::text out;
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    const func_info& fn = v.funcs[f];
    if (fn.kind == func_kind::packed) {
      out << '@' << v.name(f) << " packed_func;\n\n";
      continue;
    }
    out << '@' << v.name(f) << ":\n";
    for (std::int64_t i = fn.start; i < fn.end; ++i) {
      out << "  ";
      append_instruction(out, v, i, true);
      out << '\n';
    }
    out << '\n';
  }
  return detail::to_std_string(out);
}

/// The reference's statistics: the constant pool and the function table. The reference shows a
/// tensor constant by its shape alone, as "[2, 3]", which reads like a shape: constant_style::typed
/// shows "tensor float32[2, 3]" (the command-line tool's `info` does).
inline std::string stats(const exec_view& v, constant_style style = constant_style::reference) {
  detail::text out;
  out << "Relax VM executable statistics:\n";
  out << "  Constant pool (# " << v.constants.size() << "): [";
  for (std::size_t i = 0; i < v.constants.size(); ++i) {
    if (i) out << ", ";
    detail::append_constant_summary(out, v, v.constant(i), style);
  }
  out << "]\n";
  out << "  Globals (#" << v.funcs.size() << "): [";
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    if (f) out << ", ";
    out << v.name(f);
  }
  out << "]\n";
  return detail::to_std_string(out);
}

/// Builder code that rebuilds this executable: a lambda taking an exec_builder, to run on one
/// (then get()) or to pass to relaxvm::build() for a compile-time executable. The function table,
/// the constant pool and the code come out in the same order, so the rebuilt executable saves to
/// the same bytes. (Instructions outside every function cannot be expressed and are left out.)
inline std::string as_cpp(const exec_view& v) {
  detail::text out;
  out << "// relaxvm builder code (executable::as_cpp)\n";
  out << "[](relaxvm::exec_builder& b) {\n";
  {
    // Registers not in the order formalize() gives must keep their numbers.
    exec_layout copy = to_layout(v);
    formalize(copy);
    if (!std::equal(copy.instr_data.begin(), copy.instr_data.end(), v.instr_data.begin(), v.instr_data.end()))
      out << "  b.set_formalize(false);\n";
  }
  bool duplicates = false;
  for (std::size_t i = 0; i < v.constants.size() && !duplicates; ++i)
    for (std::size_t j = 0; j < i && !duplicates; ++j) duplicates = same_constant(v, v.constant(i), v, v.constant(j));
  if (duplicates) out << "  b.set_constant_dedup(false);\n";
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    out << "  b.declare_function(";
    detail::append_cpp_string(out, v.name(f));
    if (v.funcs[f].kind == func_kind::vm) out << ", relaxvm::func_kind::vm";
    out << ");\n";
  }
  for (std::size_t i = 0; i < v.constants.size(); ++i) {
    out << "  ";
    detail::append_cpp_constant(out, v, v.constant(i));
    out << ";  // c[" << i << "]\n";
  }
  // Bodies in code order (the table order is fixed by the declarations above).
  std::vector<std::int64_t> bodies;
  for (std::size_t f = 0; f < v.funcs.size(); ++f)
    if (v.funcs[f].kind == func_kind::vm) bodies.push_back(static_cast<std::int64_t>(f));
  std::sort(bodies.begin(), bodies.end(), by_code_start{&v});
  for (const std::int64_t body : bodies) {
    const auto f = static_cast<std::size_t>(body);
    const func_info& fn = v.funcs[f];
    out << "  {\n    auto fn = b.function(";
    detail::append_cpp_string(out, v.name(f));
    out << ", " << fn.num_args;
    if (fn.params_count > 0) {
      out << ", {";
      for (std::int64_t p = 0; p < fn.params_count; ++p) {
        if (p) out << ", ";
        detail::append_cpp_string(out, v.param_name(fn, p));
      }
      out << '}';
    }
    out << ");\n";
    if (fn.register_file_size > used_register_file_size(v, fn))
      out << "    b.reserve_registers(" << fn.register_file_size << ");\n";
    for (std::int64_t i = fn.start; i < fn.end; ++i) {
      const instruction in = decode(v, i);
      out << "    ";
      switch (in.op) {
        case opcode::call:
          out << "b.emit_call(";
          detail::append_cpp_string(out, v.name(static_cast<std::size_t>(in.func_idx)));
          out << ", {";
          for (std::int64_t k = 0; k < in.num_args; ++k) {
            if (k) out << ", ";
            detail::append_cpp_arg(out, v, in.arg_at(k));
          }
          out << '}';
          if (in.dst != void_register) {
            out << ", ";
            detail::append_cpp_register(out, in.dst);
          }
          out << ");\n";
          break;
        case opcode::ret:
          out << "b.emit_ret(";
          detail::append_cpp_register(out, in.reg);
          out << ");\n";
          break;
        case opcode::goto_: out << "b.emit_goto(" << in.offset << ");\n"; break;
        case opcode::if_:
          out << "b.emit_if(";
          detail::append_cpp_register(out, in.reg);
          out << ", " << in.offset << ");\n";
          break;
      }
    }
    out << "  }\n";
  }
  out << "}\n";
  return detail::to_std_string(out);
}

}  // namespace relaxvm

#endif  // RELAXVM_IO_TEXT_HPP
