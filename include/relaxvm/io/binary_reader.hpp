// SPDX-License-Identifier: Apache-2.0
// binary::read: bytes in the format of docs/format.md (io/binary_format.hpp) back into a layout,
// with every size and offset checked; verifying the result is the caller's step. Its section
// reader also serves TVM's formats (relaxvm/tvm/).
#ifndef RELAXVM_IO_BINARY_READER_HPP
#define RELAXVM_IO_BINARY_READER_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/device.hpp"
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "../bytecode/layout.hpp"
#include "binary_format.hpp"
#include "bytes.hpp"

namespace relaxvm::RELAXVM_ABI::binary {
namespace detail {

/// Reads little-endian fields from one section, naming the section and the item on failure.
/// `caller` starts every message (the TVM readers of relaxvm/tvm/ use this cursor too).
class reader {
 public:
  reader(std::span<const std::byte> all, std::size_t begin, std::size_t end, std::string_view section,
         std::string_view caller = "load")
      : in_(all, begin, end), section_(section), caller_(caller) {}

  /// What is being read, for messages ("constant 3's shape").
  relaxvm::detail::text item;

  bool u8(std::uint8_t& v) { return get(v); }
  bool u16(std::uint16_t& v) { return get(v); }
  bool u32(std::uint32_t& v) { return get(v); }
  bool u64(std::uint64_t& v) { return get(v); }
  bool i32(std::int32_t& v) { return get(v); }
  bool i64(std::int64_t& v) { return get(v); }
  /// A count of items of at least `min_item_size` bytes each: never more than the bytes left.
  bool count(std::uint64_t& n, std::size_t min_item_size) {
    if (!u64(n)) return false;
    if (min_item_size > 0 && n > remaining() / min_item_size) {
      fail_text() << "claims " << n << " entries of at least " << min_item_size << " bytes, but only "
                  << remaining() << " bytes remain";
      return false;
    }
    return true;
  }
  bool bytes(std::uint64_t n, std::span<const std::byte>& out) { return in_.bytes(n, out) || cut(n); }
  bool str(std::string_view& s) {
    std::uint64_t n = 0;
    std::span<const std::byte> b;
    if (!u64(n) || !bytes(n, b)) return false;
    s = std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
    return true;
  }
  std::size_t remaining() const { return in_.remaining(); }
  std::size_t position() const { return in_.position(); }
  bool at_end() {
    if (remaining() == 0) return true;
    item.clear();
    fail_text() << "has " << remaining() << " bytes at offset " << position() << " after its last entry";
    return false;
  }

  /// Starts a failure message naming the section and the item; returns the text to complete.
  relaxvm::detail::text& fail_text() {
    if (!failed_) {
      failed_ = true;
      message_ << caller_ << ": the " << section_ << " section";
      if (!item.empty()) message_ << ", reading " << item << ',';
      message_ << ' ';
      return message_;
    }
    dropped_.clear();
    return dropped_;
  }
  relaxvm::error error() const { return relaxvm::error(error_kind::value, message_.view()); }

 private:
  template <class T>
  bool get(T& v) {
    return in_.get(v) || cut(sizeof(T));
  }
  bool cut(std::uint64_t needed) {
    fail_text() << "is cut off: it needs " << needed << " bytes at offset " << position()
                << " but the section ends at " << in_.end();
    return false;
  }

  relaxvm::detail::byte_cursor in_;
  std::string_view section_;
  std::string_view caller_;
  bool failed_ = false;
  relaxvm::detail::text message_;
  relaxvm::detail::text dropped_;
};

/// Adds function `f`, called `name`, with its `params` parameter names read from `r`, to `l`
/// (relaxvm's format and TVM's store a function's fields in the same order after its kind).
inline bool add_function(reader& r, exec_layout& l, func_info f, std::string_view name, std::uint64_t params) {
  f.name = l.add_chars(name);
  f.params_begin = static_cast<std::int64_t>(l.param_names.size());
  f.params_count = static_cast<std::int64_t>(params);
  for (std::uint64_t p = 0; p < params; ++p) {
    std::string_view pn;
    if (!r.str(pn)) return false;
    l.param_names.push_back(l.add_chars(pn));
  }
  l.funcs.push_back(f);
  return true;
}

/// A shape's dimensions (a u64 count, then int64s) into `l`, for constant `c` (relaxvm's format
/// and TVM's store shapes alike).
inline bool read_dims(reader& r, exec_layout& l, const_info& c) {
  std::uint64_t ndim = 0;
  if (!r.count(ndim, 8)) return false;
  c.dims_offset = static_cast<std::int64_t>(l.i64s.size());
  c.ndim = static_cast<std::int64_t>(ndim);
  for (std::uint64_t k = 0; k < ndim; ++k) {
    std::int64_t d = 0;
    if (!r.i64(d)) return false;
    l.i64s.push_back(d);
  }
  return true;
}

/// A string constant's characters (a u64 length, then the bytes) into `l`, for constant `c`.
inline bool read_string(reader& r, exec_layout& l, const_info& c) {
  std::string_view s;
  if (!r.str(s)) return false;
  const str_ref ref = l.add_chars(s);
  c.data_offset = ref.offset;
  c.data_size = ref.size;
  return true;
}

inline status read_functions(reader& r, exec_layout& l) {
  std::uint64_t n = 0;
  if (!r.count(n, 1 + 8 + 4 * 8 + 8)) return r.error();
  l.funcs.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    r.item = relaxvm::detail::cat("function ", i);
    std::uint8_t kind = 0;
    std::string_view name;
    func_info f;
    std::uint64_t params = 0;
    if (!r.u8(kind) || !r.str(name) || !r.i64(f.start) || !r.i64(f.end) || !r.i64(f.num_args) ||
        !r.i64(f.register_file_size) || !r.count(params, 8))
      return r.error();
    if (kind > 1) {
      r.fail_text() << "has kind " << static_cast<int>(kind) << "; expected 0 (packed) or 1 (vm)";
      return r.error();
    }
    f.kind = static_cast<func_kind>(kind);
    if (!add_function(r, l, f, name, params)) return r.error();
  }
  r.item.clear();
  if (!r.at_end()) return r.error();
  return {};
}

struct tag_map {
  std::array<std::uint8_t, 256> kind{};  // 0: unknown tag; else the const_kind's number
  std::array<std::uint8_t, 256> listed{};
};

inline result<tag_map> read_tags(reader& r) {
  tag_map m;
  std::uint32_t version = 0;
  if (!r.u32(version)) return r.error();
  if (version != tag_table_version) {
    r.fail_text() << "has table version " << version << "; this relaxvm reads version " << tag_table_version;
    return r.error();
  }
  std::uint64_t n = 0;
  if (!r.count(n, 1 + 8)) return r.error();
  for (std::uint64_t i = 0; i < n; ++i) {
    r.item = relaxvm::detail::cat("tag entry ", i);
    std::uint8_t tag = 0;
    std::string_view name;
    if (!r.u8(tag) || !r.str(name)) return r.error();
    if (m.listed[tag]) {
      r.fail_text() << "lists tag " << static_cast<int>(tag) << " twice";
      return r.error();
    }
    m.listed[tag] = 1;
    for (const tag_entry& t : write_tags)
      if (to_string(t.kind) == name) m.kind[tag] = static_cast<std::uint8_t>(t.kind);
  }
  r.item.clear();
  if (!r.at_end()) return r.error();
  return m;
}

inline bool read_dtype(reader& r, std::int64_t& packed) {
  dtype t;
  if (!r.u8(t.code) || !r.u8(t.bits) || !r.u16(t.lanes)) return false;
  packed = t.pack();
  return true;
}

/// What the constants section adds to the pools.
struct pool_sizes {
  std::uint64_t constants = 0, i64s = 0, chars = 0, bytes = 0;
};

// Reads the constants section into `l`, or, with `sizes`, only counts what it would add (and
// checks it). read() does both, counting first so that each pool is reserved once at its final
// size: growing by doubling would hold up to 3 times a pool while it moves (docs/security.md,
// "Time and memory to load").
inline status read_constants(reader& r, const tag_map& tags, exec_layout& l, pool_sizes* sizes = nullptr) {
  std::uint64_t n = 0;
  if (!r.count(n, 1 + 1)) return r.error();
  if (sizes) sizes->constants = n;
  for (std::uint64_t i = 0; i < n; ++i) {
    r.item = relaxvm::detail::cat("constant ", i);
    std::uint8_t tag = 0;
    if (!r.u8(tag)) return r.error();
    if (!tags.listed[tag]) {
      r.fail_text() << "has tag " << static_cast<int>(tag) << ", which the constant tags section does not list";
      return r.error();
    }
    if (tags.kind[tag] == 0) {
      r.fail_text() << "has tag " << static_cast<int>(tag)
                    << ", a kind of constant this relaxvm does not support (written by a newer version?)";
      return r.error();
    }
    const_info c{static_cast<const_kind>(tags.kind[tag])};
    switch (c.kind) {
      case const_kind::int64:
      case const_kind::float64:
        if (!r.i64(c.scalar)) return r.error();
        break;
      case const_kind::boolean: {
        std::uint8_t b = 0;
        if (!r.u8(b)) return r.error();
        c.scalar = b;
        break;
      }
      case const_kind::dtype:
        if (!read_dtype(r, c.scalar)) return r.error();
        break;
      case const_kind::device: {
        std::int32_t type = 0, id = 0;
        if (!r.i32(type) || !r.i32(id)) return r.error();
        if (!is_known_device_type(type) || id < 0) {
          r.fail_text() << "device type " << type << " id " << id << " is not a valid DLPack device";
          return r.error();
        }
        c.scalar = device(static_cast<DLDeviceType>(type), id).pack();
        break;
      }
      case const_kind::shape:
      case const_kind::tensor: {
        if (c.kind == const_kind::tensor && !read_dtype(r, c.scalar)) return r.error();
        if (sizes) {
          std::uint64_t ndim = 0;
          std::span<const std::byte> dims;
          if (!r.count(ndim, 8) || !r.bytes(ndim * 8, dims)) return r.error();
          sizes->i64s += ndim;
        } else if (!read_dims(r, l, c)) {
          return r.error();
        }
        if (c.kind == const_kind::tensor) {
          std::uint64_t nbytes = 0;
          std::span<const std::byte> data;
          if (!r.u64(nbytes) || !r.bytes(nbytes, data)) return r.error();
          if (sizes) {
            sizes->bytes = (sizes->bytes + tensor_data_alignment - 1) / tensor_data_alignment * tensor_data_alignment + nbytes;
            break;
          }
          l.bytes.resize((l.bytes.size() + tensor_data_alignment - 1) / tensor_data_alignment * tensor_data_alignment);
          c.data_offset = static_cast<std::int64_t>(l.bytes.size());
          c.data_size = static_cast<std::int64_t>(nbytes);
          l.bytes.append(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
        }
        break;
      }
      case const_kind::string: {
        if (sizes) {
          std::string_view s;
          if (!r.str(s)) return r.error();
          sizes->chars += s.size();
        } else if (!read_string(r, l, c)) {
          return r.error();
        }
        break;
      }
    }
    if (sizes)
      sizes->i64s += relaxvm::detail::const_head_size(c.kind);
    else
      l.add_constant(c);
  }
  r.item.clear();
  if (!r.at_end()) return r.error();
  return {};
}

// A u64 count, then that many i64s.
inline bool read_i64s(reader& r, relaxvm::detail::trivial_vector<std::int64_t>& out) {
  std::uint64_t n = 0;
  if (!r.count(n, 8)) return false;
  out.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    std::int64_t x = 0;
    if (!r.i64(x)) return false;
    out.push_back(x);
  }
  return true;
}

inline status read_code(reader& r, exec_layout& l) {
  r.item = relaxvm::detail::text("the instruction offsets");
  if (!read_i64s(r, l.instr_offset)) return r.error();
  r.item = relaxvm::detail::text("the instruction words");
  if (!read_i64s(r, l.instr_data)) return r.error();
  r.item.clear();
  if (!r.at_end()) return r.error();
  return {};
}

}  // namespace detail

/// Reads bytes written by save() into a layout, checking every size and offset; it does not run
/// the verifier (executable::try_load does).
inline result<exec_layout> read(std::span<const std::byte> bytes) {
  using relaxvm::detail::value_error;
  if (bytes.size() < header_size)
    return value_error("load: ", bytes.size(), " bytes are too few for an executable (the header alone is ",
                       header_size, " bytes)");
  for (std::size_t i = 0; i < magic.size(); ++i)
    if (std::to_integer<std::uint8_t>(bytes[i]) != magic[i])
      return value_error("load: not a relaxvm executable (wrong magic bytes)");
  detail::reader h(bytes, magic.size(), bytes.size(), "header");
  std::uint32_t major = 0, minor = 0, count = 0, reserved = 0;
  if (!h.u32(major) || !h.u32(minor) || !h.u32(count) || !h.u32(reserved)) return h.error();
  if (reserved != 0) return value_error("load: the header's reserved field is ", reserved, "; it must be 0");
  if (major != format_major)
    return value_error("load: format version ", major, ".", minor, " is not supported; this relaxvm reads version ",
                       format_major, ".x");
  if (count > (bytes.size() - header_size) / section_entry_size)
    return value_error("load: the header lists ", count, " sections but the file is too short for their table");
  std::vector<detail::section> sections;
  std::uint64_t expected = header_size + std::uint64_t{count} * section_entry_size;
  for (std::uint32_t k = 0; k < count; ++k) {
    detail::section s;
    if (!h.u32(s.id) || !h.u32(s.flags) || !h.u64(s.offset) || !h.u64(s.size)) return h.error();
    if (s.offset != expected)
      return value_error("load: section ", k, " (", detail::section_name(s.id), ") starts at offset ", s.offset,
                         " but must follow the previous one at ", expected);
    if (s.size > bytes.size() - s.offset)
      return value_error("load: section ", k, " (", detail::section_name(s.id), ") needs ", s.size,
                         " bytes from offset ", s.offset, " but the file has ", bytes.size(), " bytes");
    expected = s.offset + s.size;
    sections.push_back(s);
  }
  if (expected != bytes.size())
    return value_error("load: ", bytes.size() - expected, " bytes after the last section belong to no section");

  const detail::section* found[5] = {};
  for (const detail::section& s : sections) {
    if (s.id >= functions && s.id <= code) {
      if (found[s.id])
        return value_error("load: the ", detail::section_name(s.id), " section appears twice");
      found[s.id] = &s;
    } else if (s.flags & section_required) {
      return value_error("load: section id ", s.id, " is required but unknown to this relaxvm (written by a newer version?)");
    }
  }
  for (std::uint32_t id = functions; id <= code; ++id)
    if (!found[id]) return value_error("load: the ", detail::section_name(id), " section is missing");

  auto reader_for = [&](std::uint32_t id) {
    const detail::section& s = *found[id];
    return detail::reader(bytes, static_cast<std::size_t>(s.offset), static_cast<std::size_t>(s.offset + s.size),
                          detail::section_name(id));
  };
  exec_layout l;
  {
    detail::reader r = reader_for(functions);
    RELAXVM_TRY(detail::read_functions(r, l));
  }
  detail::tag_map tags;
  {
    detail::reader r = reader_for(constant_tags);
    RELAXVM_TRY_ASSIGN(tags, detail::read_tags(r));
  }
  {
    detail::pool_sizes sizes;
    detail::reader counter = reader_for(constants);
    RELAXVM_TRY(detail::read_constants(counter, tags, l, &sizes));
    l.constants.reserve(static_cast<std::size_t>(sizes.constants));
    l.i64s.reserve(static_cast<std::size_t>(sizes.i64s));
    l.chars.reserve(l.chars.size() + static_cast<std::size_t>(sizes.chars));
    l.bytes.reserve(static_cast<std::size_t>(sizes.bytes));
    detail::reader r = reader_for(constants);
    RELAXVM_TRY(detail::read_constants(r, tags, l));
  }
  {
    detail::reader r = reader_for(code);
    RELAXVM_TRY(detail::read_code(r, l));
  }
  return l;
}

}  // namespace relaxvm::binary

#endif  // RELAXVM_IO_BINARY_READER_HPP
