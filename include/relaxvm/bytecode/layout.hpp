// SPDX-License-Identifier: Apache-2.0
// The executable's layout: function table, constant pool and instruction stream, held in pools
// of plain data so that the same layout lives in vectors (built at run time or loaded) or in
// fixed-size arrays (built at compile time, placed in read-only memory).
#ifndef RELAXVM_BYTECODE_LAYOUT_HPP
#define RELAXVM_BYTECODE_LAYOUT_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/hash_index.hpp"
#include "../base/trivial_vector.hpp"

namespace relaxvm::RELAXVM_ABI {

/// A range of characters in the layout's character pool.
struct str_ref {
  std::int64_t offset = 0;
  std::int64_t size = 0;
  friend constexpr bool operator==(const str_ref&, const str_ref&) = default;
};

/// packed: resolved by name from the registry when the VM is made. vm: interpreted bytecode.
enum class func_kind : std::int32_t { packed = 0, vm = 1 };

/// Packed functions keep num_args = -2 ("not known"), as in the reference. 0 is accepted too: a
/// TVM executable whose function table was filled in without TVM's builder has 0 there, and
/// relaxvm/tvm keeps it so that such a file is written back byte for byte.
inline constexpr std::int64_t unknown_num_args = -2;

struct func_info {
  func_kind kind = func_kind::packed;
  str_ref name;
  std::int64_t start = 0;  ///< first instruction (vm functions)
  std::int64_t end = 0;    ///< one past the last instruction
  std::int64_t num_args = unknown_num_args;
  std::int64_t register_file_size = 0;
  std::int64_t params_begin = 0;  ///< into param_names
  std::int64_t params_count = 0;  ///< 0, or num_args
  friend constexpr bool operator==(const func_info&, const func_info&) = default;
};

/// Kinds of constants. The numbers are this library's in-memory tags; the binary format writes
/// its own tag table (see io/binary_format.hpp), so they may change without breaking saved files.
enum class const_kind : std::uint8_t { int64 = 1, float64, boolean, dtype, device, shape, string, tensor };

constexpr std::string_view to_string(const_kind k) {
  switch (k) {
    case const_kind::int64: return "int64";
    case const_kind::float64: return "float64";
    case const_kind::boolean: return "bool";
    case const_kind::dtype: return "dtype";
    case const_kind::device: return "device";
    case const_kind::shape: return "shape";
    case const_kind::string: return "string";
    case const_kind::tensor: return "tensor";
  }
  return "unknown";
}

/// Tensor data in the byte pool starts at multiples of this.
inline constexpr std::int64_t tensor_data_alignment = 64;

struct const_info {
  const_kind kind = const_kind::int64;
  /// int64: the value; float64: its bits; bool: 0/1; dtype/device: packed; tensor: packed dtype.
  std::int64_t scalar = 0;
  std::int64_t dims_offset = 0;  ///< shape, tensor: into i64s
  std::int64_t ndim = 0;
  std::int64_t data_offset = 0;  ///< string: into chars; tensor: into bytes
  std::int64_t data_size = 0;
  friend constexpr bool operator==(const const_info&, const const_info&) = default;
};

/// A constant in the pool: one word, 4 times the format's smallest record (a bool: tag and byte),
/// so that a file of small constants loads in a few times its size (docs/security.md). Its low 8
/// bits are the kind. A bool or a dtype is held in the word (from bit 8); every other kind keeps a
/// record in i64s, whose head's index the word holds (from bit 8):
///
///   int64, float64, device   [value]                           (float64: its bits)
///   string                   [offset, size]                    characters in chars
///   shape                    dims..., [ndim]
///   tensor                   dims..., [ndim, dtype, offset, size]   data in bytes
///
/// A shape's or tensor's dimensions lie just before its head, so a reader that has just appended
/// them adds the head and copies nothing. exec_view::constant() decodes a word into a const_info;
/// exec_layout::add_constant() encodes one.
using const_word = std::uint64_t;

namespace detail {
inline constexpr unsigned const_payload_shift = 8;
/// Words in the head of a constant's record in i64s (0: held in the word).
constexpr std::size_t const_head_size(const_kind k) {
  switch (k) {
    case const_kind::boolean:
    case const_kind::dtype: return 0;
    case const_kind::string: return 2;
    case const_kind::tensor: return 4;
    default: return 1;
  }
}
constexpr bool has_dims(const_kind k) { return k == const_kind::shape || k == const_kind::tensor; }
}  // namespace detail

/// A read-only view of a layout; everything that reads executables works on this.
struct exec_view {
  std::span<const func_info> funcs;
  std::span<const str_ref> param_names;
  std::span<const char> chars;
  std::span<const const_word> constants;  ///< one word per constant: read them with constant()
  std::span<const std::int64_t> i64s;
  std::span<const std::uint8_t> bytes;
  std::span<const std::int64_t> instr_offset;
  std::span<const std::int64_t> instr_data;

  /// The characters of `r`; the verifier has checked that it is inside the pool.
  constexpr std::string_view str(str_ref r) const {
    return std::string_view(chars.data() + r.offset, static_cast<std::size_t>(r.size));
  }
  constexpr std::string_view name(std::size_t func) const { return str(funcs[func].name); }
  constexpr std::string_view param_name(const func_info& f, std::int64_t i) const {
    return str(param_names[static_cast<std::size_t>(f.params_begin + i)]);
  }
  constexpr std::int64_t num_instructions() const {
    return static_cast<std::int64_t>(instr_offset.size());
  }
  /// Constant `i`, decoded. A record that does not fit in i64s (possible only before the verifier
  /// has run, which rejects it) gives the kind with every other field 0.
  constexpr const_info constant(std::size_t i) const {
    const const_word w = constants[i];
    const auto kind = static_cast<const_kind>(w & 0xFF);
    const std::uint64_t payload = w >> detail::const_payload_shift;
    const std::size_t head_size = detail::const_head_size(kind);
    if (head_size != 0) {
      if (payload > i64s.size() || head_size > i64s.size() - payload) return const_info{kind};
      const std::int64_t ndim = i64s[payload];
      if (detail::has_dims(kind) && (ndim < 0 || static_cast<std::uint64_t>(ndim) > payload)) return const_info{kind};
    }
    return checked_constant(kind, w);
  }
  /// Word `w` of kind `k` decoded, its record known to lie in i64s (constant() checks it; a
  /// verified layout has). Called with `k` a constant, only that kind's code is compiled: static_vm
  /// makes a constant from its word with the code of the kinds its program holds.
  constexpr const_info checked_constant(const_kind k, const_word w) const {
    const_info c{k};
    const std::uint64_t payload = w >> detail::const_payload_shift;
    if (detail::const_head_size(k) == 0) {
      c.scalar = static_cast<std::int64_t>(payload);
      return c;
    }
    const std::int64_t* head = i64s.data() + payload;
    switch (k) {
      case const_kind::string:
        c.data_offset = head[0];
        c.data_size = head[1];
        return c;
      case const_kind::shape:
      case const_kind::tensor:
        c.ndim = head[0];
        c.dims_offset = static_cast<std::int64_t>(payload) - c.ndim;
        if (k == const_kind::tensor) {
          c.scalar = head[1];
          c.data_offset = head[2];
          c.data_size = head[3];
        }
        return c;
      default: c.scalar = head[0]; return c;
    }
  }
  /// Index of the function called `name`, or -1.
  constexpr std::int64_t find(std::string_view name_) const {
    for (std::size_t i = 0; i < funcs.size(); ++i)
      if (str(funcs[i].name) == name_) return static_cast<std::int64_t>(i);
    return -1;
  }
};

/// Orders function indexes by where their code starts (std::sort's comparator wherever functions
/// are put in code order: one instantiation for all).
struct by_code_start {
  const exec_view* v;
  constexpr bool operator()(std::int64_t a, std::int64_t b) const {
    return v->funcs[static_cast<std::size_t>(a)].start < v->funcs[static_cast<std::size_t>(b)].start;
  }
};

/// True when two constants (of the same or different layouts) hold the same value.
constexpr bool same_constant(const exec_view& va, const const_info& a, const exec_view& vb, const const_info& b) {
  if (a.kind != b.kind || a.scalar != b.scalar || a.ndim != b.ndim || a.data_size != b.data_size) return false;
  for (std::int64_t k = 0; k < a.ndim; ++k)
    if (va.i64s[static_cast<std::size_t>(a.dims_offset + k)] != vb.i64s[static_cast<std::size_t>(b.dims_offset + k)])
      return false;
  for (std::int64_t k = 0; k < a.data_size; ++k) {
    if (a.kind == const_kind::string) {
      if (va.chars[static_cast<std::size_t>(a.data_offset + k)] != vb.chars[static_cast<std::size_t>(b.data_offset + k)])
        return false;
    } else if (va.bytes[static_cast<std::size_t>(a.data_offset + k)] != vb.bytes[static_cast<std::size_t>(b.data_offset + k)]) {
      return false;
    }
  }
  return true;
}

/// A 32-bit digest of what the verifier checks in `v`: every pool but the tensor data (whose
/// bytes cannot make a program unsafe; their sizes are covered). build() records it for the
/// program it verified, so that executable::from_static can tell that program from a copy whose
/// public pools were changed since (verified again): a change goes unnoticed once in 2^32. It
/// guards against mistakes, not against code that sets `digest` to match its own changes.
constexpr std::uint32_t layout_digest(const exec_view& v) {
  std::uint64_t h = detail::hash_seed;
  // FNV's multiply carries a change only upward; the xor-shift brings the high bits back down,
  // so that changes in the top bits of two words do not cancel.
  auto mix = [&h](std::int64_t w) {
    h = detail::hash_mix(h, static_cast<std::uint64_t>(w));
    h ^= h >> 32;
  };
  auto words = [&](std::span<const std::int64_t> s) {
    mix(static_cast<std::int64_t>(s.size()));
    for (const std::int64_t w : s) mix(w);
  };
  mix(static_cast<std::int64_t>(v.funcs.size()));
  for (const func_info& f : v.funcs) {
    mix(static_cast<std::int64_t>(f.kind));
    mix(f.name.offset);
    mix(f.name.size);
    mix(f.start);
    mix(f.end);
    mix(f.num_args);
    mix(f.register_file_size);
    mix(f.params_begin);
    mix(f.params_count);
  }
  mix(static_cast<std::int64_t>(v.param_names.size()));
  for (const str_ref& r : v.param_names) {
    mix(r.offset);
    mix(r.size);
  }
  h = detail::hash_chars(h, std::string_view(v.chars.data(), v.chars.size()));
  mix(static_cast<std::int64_t>(v.constants.size()));
  for (const const_word w : v.constants) mix(static_cast<std::int64_t>(w));
  words(v.i64s);
  mix(static_cast<std::int64_t>(v.bytes.size()));
  words(v.instr_offset);
  words(v.instr_data);
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

/// A layout in vectors: what the builder makes and the loader reads. The vectors are
/// trivial_vector, which the builder fills at compile time for a fraction of std::vector's
/// constexpr steps.
struct exec_layout {
  detail::trivial_vector<func_info> funcs;
  detail::trivial_vector<str_ref> param_names;
  detail::trivial_vector<char> chars;
  detail::trivial_vector<const_word> constants;
  detail::trivial_vector<std::int64_t> i64s;
  detail::trivial_vector<std::uint8_t, tensor_data_alignment> bytes;  ///< 64-byte aligned, as tensor data needs
  detail::trivial_vector<std::int64_t> instr_offset;
  detail::trivial_vector<std::int64_t> instr_data;

  constexpr exec_view view() const {
    return {funcs, param_names, chars, constants, i64s, bytes, instr_offset, instr_data};
  }
  constexpr str_ref add_chars(std::string_view s) {
    str_ref r{static_cast<std::int64_t>(chars.size()), static_cast<std::int64_t>(s.size())};
    chars.insert(chars.end(), s.begin(), s.end());
    return r;
  }
  /// Appends constant `c` (see const_word) and returns its index. A shape's or tensor's
  /// dimensions are i64s[c.dims_offset, +c.ndim): when they are the last of i64s (a reader that
  /// has just appended them) they stay where they are, else they are copied to its end.
  constexpr std::int64_t add_constant(const const_info& c) {
    const auto kind = static_cast<const_word>(static_cast<std::uint8_t>(c.kind));
    const std::size_t head_size = detail::const_head_size(c.kind);
    if (head_size == 0) {
      constants.push_back(kind | static_cast<const_word>(c.scalar) << detail::const_payload_shift);
    } else {
      if (detail::has_dims(c.kind) && static_cast<std::size_t>(c.dims_offset + c.ndim) != i64s.size()) {
        for (std::int64_t k = 0; k < c.ndim; ++k) {
          const std::int64_t d = i64s[static_cast<std::size_t>(c.dims_offset + k)];  // not a reference: push may move i64s
          i64s.push_back(d);
        }
      }
      const auto head = static_cast<const_word>(i64s.size());
      switch (c.kind) {
        case const_kind::string:
          i64s.push_back(c.data_offset);
          i64s.push_back(c.data_size);
          break;
        case const_kind::shape: i64s.push_back(c.ndim); break;
        case const_kind::tensor:
          i64s.push_back(c.ndim);
          i64s.push_back(c.scalar);
          i64s.push_back(c.data_offset);
          i64s.push_back(c.data_size);
          break;
        default: i64s.push_back(c.scalar); break;
      }
      constants.push_back(kind | head << detail::const_payload_shift);
    }
    return static_cast<std::int64_t>(constants.size()) - 1;
  }
};

/// Sizes of each pool: the shape of a static layout.
struct layout_sizes {
  std::size_t funcs = 0, param_names = 0, chars = 0, constants = 0, i64s = 0, bytes = 0, instr_offset = 0,
              instr_data = 0;
  friend constexpr bool operator==(const layout_sizes&, const layout_sizes&) = default;
};

constexpr layout_sizes sizes_of(const exec_layout& l) {
  return {l.funcs.size(), l.param_names.size(), l.chars.size(),        l.constants.size(),
          l.i64s.size(),  l.bytes.size(),       l.instr_offset.size(), l.instr_data.size()};
}

/// A layout in fixed-size arrays: a literal type, so it can be a constexpr variable in flash.
template <layout_sizes S>
struct static_layout {
  std::array<func_info, S.funcs> funcs{};
  std::array<str_ref, S.param_names> param_names{};
  std::array<char, S.chars> chars{};
  std::array<const_word, S.constants> constants{};
  std::array<std::int64_t, S.i64s> i64s{};
  alignas(tensor_data_alignment) std::array<std::uint8_t, S.bytes> bytes{};
  std::array<std::int64_t, S.instr_offset> instr_offset{};
  std::array<std::int64_t, S.instr_data> instr_data{};

  constexpr exec_view view() const {
    return {funcs, param_names, chars, constants, i64s, bytes, instr_offset, instr_data};
  }
};

namespace detail {
template <class T, std::size_t N, std::size_t A>
constexpr void copy_into(std::array<T, N>& out, const trivial_vector<T, A>& in) {
  for (std::size_t i = 0; i < N; ++i) out[i] = in[i];
}
}  // namespace detail

template <layout_sizes S>
constexpr static_layout<S> to_static_layout(const exec_layout& l) {
  static_layout<S> s;
  detail::copy_into(s.funcs, l.funcs);
  detail::copy_into(s.param_names, l.param_names);
  detail::copy_into(s.chars, l.chars);
  detail::copy_into(s.constants, l.constants);
  detail::copy_into(s.i64s, l.i64s);
  detail::copy_into(s.bytes, l.bytes);
  detail::copy_into(s.instr_offset, l.instr_offset);
  detail::copy_into(s.instr_data, l.instr_data);
  return s;
}

/// Copies any layout view into vectors.
constexpr exec_layout to_layout(const exec_view& v) {
  // From pointers, not span iterators: trivial_vector::assign is instantiated for pointers anyway.
  exec_layout l;
  l.funcs.assign(v.funcs.data(), v.funcs.data() + v.funcs.size());
  l.param_names.assign(v.param_names.data(), v.param_names.data() + v.param_names.size());
  l.chars.assign(v.chars.data(), v.chars.data() + v.chars.size());
  l.constants.assign(v.constants.data(), v.constants.data() + v.constants.size());
  l.i64s.assign(v.i64s.data(), v.i64s.data() + v.i64s.size());
  l.bytes.assign(v.bytes.data(), v.bytes.data() + v.bytes.size());
  l.instr_offset.assign(v.instr_offset.data(), v.instr_offset.data() + v.instr_offset.size());
  l.instr_data.assign(v.instr_data.data(), v.instr_data.data() + v.instr_data.size());
  return l;
}

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_LAYOUT_HPP
