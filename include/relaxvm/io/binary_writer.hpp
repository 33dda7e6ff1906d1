// SPDX-License-Identifier: Apache-2.0
// binary::save: a layout to bytes in the format of docs/format.md (io/binary_format.hpp).
#ifndef RELAXVM_IO_BINARY_WRITER_HPP
#define RELAXVM_IO_BINARY_WRITER_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/device.hpp"
#include "../base/dtype.hpp"
#include "../bytecode/layout.hpp"
#include "binary_format.hpp"
#include "bytes.hpp"

namespace relaxvm::RELAXVM_ABI::binary {
namespace detail {

using writer = relaxvm::detail::byte_writer;

inline void write_dtype(writer& w, std::int64_t packed) {
  const dtype t = dtype::unpack(packed);
  w.u8(t.code);
  w.u8(t.bits);
  w.u16(t.lanes);
}

/// A function's fields after its kind: name, start, end, arguments, registers and parameter
/// names (relaxvm's format and TVM's store them alike).
inline void write_function_fields(writer& w, const exec_view& v, const func_info& f) {
  w.str(v.str(f.name));
  w.i64(f.start);
  w.i64(f.end);
  w.i64(f.num_args);
  w.i64(f.register_file_size);
  w.u64(static_cast<std::uint64_t>(f.params_count));
  for (std::int64_t p = 0; p < f.params_count; ++p) w.str(v.param_name(f, p));
}

inline void write_functions(writer& w, const exec_view& v) {
  w.u64(v.funcs.size());
  for (const func_info& f : v.funcs) {
    w.u8(static_cast<std::uint8_t>(f.kind));
    write_function_fields(w, v, f);
  }
}

inline void write_tags_section(writer& w) {
  w.u32(tag_table_version);
  w.u64(std::size(write_tags));
  for (const tag_entry& t : write_tags) {
    w.u8(t.tag);
    w.str(to_string(t.kind));
  }
}

inline std::uint8_t tag_of(const_kind k) {
  for (const tag_entry& t : write_tags)
    if (t.kind == k) return t.tag;
  return 0;
}

inline void write_constants(writer& w, const exec_view& v) {
  w.u64(v.constants.size());
  for (std::size_t i = 0; i < v.constants.size(); ++i) {
    const const_info c = v.constant(i);
    w.u8(tag_of(c.kind));
    switch (c.kind) {
      case const_kind::int64:
      case const_kind::float64: w.i64(c.scalar); break;
      case const_kind::boolean: w.u8(static_cast<std::uint8_t>(c.scalar)); break;
      case const_kind::dtype: write_dtype(w, c.scalar); break;
      case const_kind::device: {
        const device d = device::unpack(c.scalar);
        w.i32(static_cast<std::int32_t>(d.device_type));
        w.i32(d.device_id);
        break;
      }
      case const_kind::shape:
      case const_kind::tensor:
        if (c.kind == const_kind::tensor) write_dtype(w, c.scalar);
        w.u64(static_cast<std::uint64_t>(c.ndim));
        for (std::int64_t k = 0; k < c.ndim; ++k) w.i64(v.i64s[static_cast<std::size_t>(c.dims_offset + k)]);
        if (c.kind == const_kind::tensor) {
          w.u64(static_cast<std::uint64_t>(c.data_size));
          w.raw(v.bytes.subspan(static_cast<std::size_t>(c.data_offset), static_cast<std::size_t>(c.data_size)));
        }
        break;
      case const_kind::string: w.str(v.str({c.data_offset, c.data_size})); break;
    }
  }
}

inline void write_code(writer& w, const exec_view& v) {
  w.u64(v.instr_offset.size());
  for (std::int64_t x : v.instr_offset) w.i64(x);
  w.u64(v.instr_data.size());
  for (std::int64_t x : v.instr_data) w.i64(x);
}

}  // namespace detail

/// Writes a (verified) layout in the format of docs/format.md.
inline std::vector<std::byte> save(const exec_view& v) {
  detail::writer w;
  for (std::uint8_t b : magic) w.u8(b);
  w.u32(format_major);
  w.u32(format_minor);
  constexpr std::uint32_t ids[] = {functions, constant_tags, constants, code};
  w.u32(std::size(ids));
  w.u32(0);
  const std::size_t table = w.size();
  for (std::uint32_t id : ids) {
    w.u32(id);
    w.u32(section_required);
    w.u64(0);  // offset and size, patched below
    w.u64(0);
  }
  for (std::size_t k = 0; k < std::size(ids); ++k) {
    const std::size_t begin = w.size();
    switch (ids[k]) {
      case functions: detail::write_functions(w, v); break;
      case constant_tags: detail::write_tags_section(w); break;
      case constants: detail::write_constants(w, v); break;
      case code: detail::write_code(w, v); break;
    }
    w.patch_u64(table + k * section_entry_size + 8, begin);
    w.patch_u64(table + k * section_entry_size + 16, w.size() - begin);
  }
  return std::move(w.bytes());
}

}  // namespace relaxvm::binary

#endif  // RELAXVM_IO_BINARY_WRITER_HPP
