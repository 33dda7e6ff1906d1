// SPDX-License-Identifier: Apache-2.0
// Apache TVM v0.19.0's Relax VM executables (format "0.14": what Executable::SaveToBinary and
// SaveToFile write, the .rxe files), read into a verified relaxvm executable and written back
// byte for byte. relaxvm keeps the Relax VM's instruction words, argument encoding and builtin
// names, so only the container, the function table and the constant pool are re-framed. The
// layout, and what is and is not supported: docs/tvm.md.
#ifndef RELAXVM_TVM_RELAX_HPP
#define RELAXVM_TVM_RELAX_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../bytecode/layout.hpp"
#include "../io/binary_reader.hpp"
#include "../io/binary_writer.hpp"
#include "../io/executable.hpp"
#include "dltensor.hpp"

namespace relaxvm::RELAXVM_ABI::tvm {

/// The magic number TVM's Relax and Relay VM executables start with (kTVMVMBytecodeMagic).
inline constexpr std::uint64_t vm_bytecode_magic = 0xD225DE2F4214151Dull;
/// The Relax executable format version of TVM v0.19.0 (VM_VERSION in relax_vm/executable.cc).
inline constexpr std::string_view relax_format_version = "0.14";

/// TVM's function kinds (relax_vm::VMFuncInfo::FuncKind).
enum class relax_func_kind : std::int32_t { packed = 0, vm = 1, vm_tir = 2 };
/// TVM's constant tags (relax_vm::Executable's ConstantType).
enum class relax_tag : std::int32_t { ndarray = 0, dtype = 1, shape = 2, string = 3, int64 = 4, float64 = 5 };

namespace detail {

inline constexpr std::string_view relax_loader = "load_relax";
// The smallest records: a function (kind, empty name, four i64s, no parameter names) and a
// constant (tag and DLDataType). No count larger than the bytes left allows is believed.
inline constexpr std::size_t relax_min_function = 4 + 8 + 4 * 8 + 8;
inline constexpr std::size_t relax_min_constant = 4 + 4;

inline status read_relax_functions(reader& r, exec_layout& l) {
  std::uint64_t n = 0;
  if (!r.count(n, relax_min_function)) return r.error();
  l.funcs.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    r.item = relaxvm::detail::cat("function ", i, " (offset ", r.position(), ")");
    std::int32_t kind = 0;
    std::string_view name;
    if (!r.i32(kind) || !r.str(name)) return r.error();
    if (kind == static_cast<std::int32_t>(relax_func_kind::vm_tir)) {
      relaxvm::detail::text& m = r.fail_text();
      append_quoted(m << "is ", name);
      m << ", a VM-TIR function (kind 2): its body is TIR compiled by TVM, which relaxvm does not run; "
                       "relaxvm reads packed (0) and VM (1) functions";
      return r.error();
    }
    if (kind != static_cast<std::int32_t>(relax_func_kind::packed) && kind != static_cast<std::int32_t>(relax_func_kind::vm)) {
      r.fail_text() << "has kind " << kind << "; TVM's kinds are 0 (packed), 1 (VM) and 2 (VM-TIR)";
      return r.error();
    }
    func_info f;
    std::uint64_t params = 0;
    if (!r.i64(f.start) || !r.i64(f.end) || !r.i64(f.num_args) || !r.i64(f.register_file_size) || !r.count(params, 8))
      return r.error();
    f.kind = kind == 0 ? func_kind::packed : func_kind::vm;
    if (!binary::detail::add_function(r, l, f, name, params)) return r.error();
  }
  return {};
}

inline status read_relax_constants(reader& r, exec_layout& l) {
  std::uint64_t n = 0;
  if (!r.count(n, relax_min_constant)) return r.error();
  l.constants.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    r.item = relaxvm::detail::cat("constant ", i, " (offset ", r.position(), ")");
    std::int32_t tag = 0;
    if (!r.i32(tag)) return r.error();
    const_info c;
    switch (static_cast<relax_tag>(tag)) {
      case relax_tag::ndarray:
        c.kind = const_kind::tensor;
        if (!read_dltensor(r, l, c)) return r.error();
        break;
      case relax_tag::dtype:
        c.kind = const_kind::dtype;
        if (!binary::detail::read_dtype(r, c.scalar)) return r.error();
        break;
      case relax_tag::shape: {
        c.kind = const_kind::shape;
        if (!binary::detail::read_dims(r, l, c)) return r.error();
        break;
      }
      case relax_tag::string: {
        c.kind = const_kind::string;
        if (!binary::detail::read_string(r, l, c)) return r.error();
        break;
      }
      case relax_tag::int64:
      case relax_tag::float64:
        c.kind = tag == static_cast<std::int32_t>(relax_tag::int64) ? const_kind::int64 : const_kind::float64;
        if (!r.i64(c.scalar)) return r.error();
        break;
      default:
        r.fail_text() << "has tag " << tag
                      << "; TVM v0.19.0's tags are 0 (NDArray), 1 (DLDataType), 2 (ShapeTuple), 3 (String), 4 (int) "
                         "and 5 (float)";
        return r.error();
    }
    l.add_constant(c);
  }
  return {};
}

inline void write_relax_constant(writer& w, const exec_view& v, const const_info& c) {
  switch (c.kind) {
    case const_kind::tensor:
      w.i32(static_cast<std::int32_t>(relax_tag::ndarray));
      write_dltensor(w, v, c);
      break;
    case const_kind::dtype:
      w.i32(static_cast<std::int32_t>(relax_tag::dtype));
      binary::detail::write_dtype(w, c.scalar);
      break;
    case const_kind::shape:
      w.i32(static_cast<std::int32_t>(relax_tag::shape));
      w.u64(static_cast<std::uint64_t>(c.ndim));
      for (std::int64_t k = 0; k < c.ndim; ++k) w.i64(v.i64s[static_cast<std::size_t>(c.dims_offset + k)]);
      break;
    case const_kind::string:
      w.i32(static_cast<std::int32_t>(relax_tag::string));
      w.str(v.str({c.data_offset, c.data_size}));
      break;
    case const_kind::int64:
    case const_kind::float64:
      w.i32(static_cast<std::int32_t>(c.kind == const_kind::int64 ? relax_tag::int64 : relax_tag::float64));
      w.i64(c.scalar);
      break;
    case const_kind::boolean:
    case const_kind::device: break;  // refused by save_relax before anything is written
  }
}

}  // namespace detail

/// Reads a TVM v0.19.0 Relax VM executable (the bytes of a .rxe file) into a verified executable.
/// Every malformed, truncated or hostile input is an error (kind value) naming what is wrong and
/// its offset; VM-TIR functions, which hold TVM-compiled code, are refused by name.
inline result<executable> load_relax(std::span<const std::byte> bytes) {
  using relaxvm::detail::value_error;
  using detail::reader;
  if (bytes.size() < 8)
    return value_error("load_relax: ", bytes.size(),
                       " bytes are too few for a TVM Relax executable, which starts with an 8-byte length");
  reader outer(bytes, 0, bytes.size(), "length", detail::relax_loader);
  std::uint64_t length = 0;
  (void)outer.u64(length);
  if (length == vm_bytecode_magic)
    return value_error("load_relax: the file starts with the VM bytecode magic where a Relax executable has its "
                       "length: it is a Relay VM executable (Executable::Save), not a Relax one");
  const std::size_t end = bytes.size();
  if (length > end - 8)
    return value_error("load_relax: the length at offset 0 says ", length, " bytes follow, but the file has ", end - 8,
                       " (it is cut off)");
  if (length < end - 8)
    return value_error("load_relax: ", end - 8 - length, " bytes at offset ", 8 + length,
                       " follow the executable that the length at offset 0 delimits");

  exec_layout l;
  reader header(bytes, 8, end, "header", detail::relax_loader);
  std::uint64_t magic = 0;
  std::string_view version;
  if (!header.u64(magic)) return header.error();
  if (magic != vm_bytecode_magic) {
    relaxvm::detail::text& m = header.fail_text();
    m << "has magic ";
    detail::append_hex(m, magic);
    m << " at offset 8, not TVM's VM bytecode magic ";
    detail::append_hex(m, vm_bytecode_magic);
    m << ": this is not a TVM Relax executable";
    return header.error();
  }
  if (!header.str(version)) return header.error();
  if (version != relax_format_version) {
    relaxvm::detail::text& m = header.fail_text();
    m << "has format version ";
    detail::append_quoted(m, version);
    m << " at offset 16; this reader reads TVM v0.19.0's Relax format '" << relax_format_version << '\'';
    return header.error();
  }
  reader functions(bytes, header.position(), end, "function table", detail::relax_loader);
  RELAXVM_TRY(detail::read_relax_functions(functions, l));
  reader constants(bytes, functions.position(), end, "constant pool", detail::relax_loader);
  RELAXVM_TRY(detail::read_relax_constants(constants, l));
  reader code(bytes, constants.position(), end, "code", detail::relax_loader);
  RELAXVM_TRY(binary::detail::read_code(code, l));  // offsets, words, and nothing after them

  result<executable> exe = executable::from_layout(std::move(l));
  if (!exe.ok()) return value_error("load_relax: ", exe.error().message());
  return exe;
}

/// Writes `exe` as TVM v0.19.0 writes a Relax VM executable. Constants TVM's format cannot hold
/// (bool, device, tensors of vector dtypes) are an error naming the constant.
inline result<std::vector<std::byte>> save_relax(const executable& exe) {
  using relaxvm::detail::value_error;
  const exec_view v = exe.view();
  for (std::size_t i = 0; i < v.constants.size(); ++i) {
    const const_info c = v.constant(i);
    if (c.kind == const_kind::boolean || c.kind == const_kind::device)
      return value_error("save_relax: constant ", i, " (", to_string(c.kind),
                         ") has no TVM counterpart: TVM v0.19.0's Relax format holds NDArray, DLDataType, "
                         "ShapeTuple, String, int and float constants");
    if (c.kind == const_kind::tensor && dtype::unpack(c.scalar).lanes != 1)
      return value_error("save_relax: constant ", i, " (tensor of ", dtype::unpack(c.scalar),
                         ") cannot be written: TVM's NDArray byte size leaves lanes out, so it holds dtypes of 1 "
                         "lane only");
    if (c.kind == const_kind::tensor && c.ndim > std::numeric_limits<std::int32_t>::max())
      return value_error("save_relax: constant ", i, " (tensor) has ", c.ndim,
                         " dimensions, more than TVM's int32 ndim holds");
  }
  detail::writer w;
  w.u64(0);  // the length of what follows, patched at the end
  w.u64(vm_bytecode_magic);
  w.str(relax_format_version);
  w.u64(v.funcs.size());
  for (const func_info& f : v.funcs) {
    w.i32(static_cast<std::int32_t>(f.kind == func_kind::packed ? relax_func_kind::packed : relax_func_kind::vm));
    binary::detail::write_function_fields(w, v, f);
  }
  w.u64(v.constants.size());
  for (std::size_t i = 0; i < v.constants.size(); ++i) detail::write_relax_constant(w, v, v.constant(i));
  binary::detail::write_code(w, v);
  w.patch_u64(0, w.size() - 8);
  return std::move(w.bytes());
}

}  // namespace relaxvm::tvm

#endif  // RELAXVM_TVM_RELAX_HPP
