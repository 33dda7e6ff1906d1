// SPDX-License-Identifier: Apache-2.0
// dtype: an element type (DLPack's DLDataType: code, bits, lanes) with names and checks.
#ifndef RELAXVM_BASE_DTYPE_HPP
#define RELAXVM_BASE_DTYPE_HPP

#include <dlpack/dlpack.h>

#include <bit>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "config.hpp"  // RELAXVM_ABI
#include "text_builder.hpp"

namespace relaxvm::RELAXVM_ABI {

struct dtype {
  std::uint8_t code = kDLOpaqueHandle;  // a default dtype is "void": no elements
  std::uint8_t bits = 0;
  std::uint16_t lanes = 0;

  constexpr dtype() = default;
  constexpr dtype(std::uint8_t c, std::uint8_t b, std::uint16_t l = 1) : code(c), bits(b), lanes(l) {}
  constexpr dtype(DLDataType t) : code(t.code), bits(t.bits), lanes(t.lanes) {}  // NOLINT: DLPack interop
  constexpr operator DLDataType() const { return DLDataType{code, bits, lanes}; }

  static constexpr dtype int8() { return {kDLInt, 8}; }
  static constexpr dtype int16() { return {kDLInt, 16}; }
  static constexpr dtype int32() { return {kDLInt, 32}; }
  static constexpr dtype int64() { return {kDLInt, 64}; }
  static constexpr dtype uint8() { return {kDLUInt, 8}; }
  static constexpr dtype uint16() { return {kDLUInt, 16}; }
  static constexpr dtype uint32() { return {kDLUInt, 32}; }
  static constexpr dtype uint64() { return {kDLUInt, 64}; }
  static constexpr dtype float16() { return {kDLFloat, 16}; }
  static constexpr dtype float32() { return {kDLFloat, 32}; }
  static constexpr dtype float64() { return {kDLFloat, 64}; }
  static constexpr dtype bfloat16() { return {kDLBfloat, 16}; }
  /// Booleans as the reference stores them: uint1, one byte per element.
  static constexpr dtype bool_() { return {kDLUInt, 1}; }
  static constexpr dtype handle() { return {kDLOpaqueHandle, 64}; }
  static constexpr dtype void_() { return {}; }

  // One 32-bit comparison, not three (the fields fill the four bytes: no padding).
  friend constexpr bool operator==(const dtype& a, const dtype& b) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  }

  constexpr bool is_void() const { return code == kDLOpaqueHandle && bits == 0 && lanes == 0; }
  constexpr bool is_bool() const { return code == kDLUInt && bits == 1 && lanes == 1; }
  constexpr bool is_float() const { return code == kDLFloat; }
  constexpr bool is_int() const { return code == kDLInt; }
  constexpr bool is_uint() const { return code == kDLUInt; }

  /// Bytes one element occupies in memory (booleans take a byte).
  constexpr std::int64_t bytes() const {
    return (static_cast<std::int64_t>(bits) * lanes + 7) / 8;
  }

  /// The alignment a tensor's data needs for this type: its scalar's bytes rounded up to a power
  /// of two (a vector type's lanes need only their scalar's).
  constexpr std::int64_t scalar_alignment() const {
    std::int64_t a = 1;
    while (a * 8 < bits) a *= 2;
    return a;
  }

  /// The reference's rules for tensor element types: lanes >= 1, bits a power of two and a
  /// multiple of 8 (uint1 allowed for booleans), a known type code.
  /// A type a tensor may hold: bool (uint1), or a power of two of at least 8 bits that its
  /// code allows (int, uint, opaque handle: 8-128; float: 16-64; bfloat: 16; complex: 64, 128).
  constexpr bool valid_for_tensor() const {
    if (lanes < 1 || code > kDLComplex) return false;
    if (is_bool()) return true;
    // Bit 5 * code + k: the code allows 8 << k bits (one word instead of a test per code).
    constexpr std::uint32_t allowed = 0b11111u << (5 * kDLInt) | 0b11111u << (5 * kDLUInt) |
                                      0b01110u << (5 * kDLFloat) | 0b11111u << (5 * kDLOpaqueHandle) |
                                      0b00010u << (5 * kDLBfloat) | 0b11000u << (5 * kDLComplex);
    const int z = std::countr_zero(static_cast<unsigned>(bits));
    return z >= 3 && z <= 7 && bits == (1u << z) && ((allowed >> (5 * code + z - 3)) & 1u) != 0;
  }

  /// Packs the three fields into one integer (used by the executable's constant pool).
  constexpr std::int64_t pack() const {
    return static_cast<std::int64_t>(code) | (static_cast<std::int64_t>(bits) << 8) |
           (static_cast<std::int64_t>(lanes) << 16);
  }
  static constexpr dtype unpack(std::int64_t v) {
    return dtype(static_cast<std::uint8_t>(v & 0xFF), static_cast<std::uint8_t>((v >> 8) & 0xFF),
                 static_cast<std::uint16_t>((v >> 16) & 0xFFFF));
  }
};

/// The dtype of a C++ element type: dtype_of<float>() == dtype::float32().
template <class T>
constexpr dtype dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return dtype::bool_();
  else if constexpr (std::is_same_v<T, float>) return dtype::float32();
  else if constexpr (std::is_same_v<T, double>) return dtype::float64();
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return dtype(kDLInt, static_cast<std::uint8_t>(sizeof(T) * 8));
  else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>)
    return dtype(kDLUInt, static_cast<std::uint8_t>(sizeof(T) * 8));
  else static_assert(sizeof(T) == 0, "relaxvm::dtype_of<T>: T must be bool, float, double or an integer type");
}

namespace detail {
constexpr void append_dtype(text& out, dtype t) {
  if (t.is_void()) {
    out << "void";
    return;
  }
  if (t.is_bool()) {
    out << "bool";
    return;
  }
  switch (t.code) {
    case kDLInt: out << "int"; break;
    case kDLUInt: out << "uint"; break;
    case kDLFloat: out << "float"; break;
    case kDLBfloat: out << "bfloat"; break;
    case kDLComplex: out << "complex"; break;
    case kDLOpaqueHandle: out << "handle"; break;
    default: out << "code" << static_cast<int>(t.code) << "_"; break;
  }
  out << static_cast<int>(t.bits);
  if (t.lanes != 1) out << "x" << static_cast<int>(t.lanes);
}
}  // namespace detail

/// "float32", "int64", "bool", "float32x4", "void".
inline detail::text to_text(dtype t) {
  detail::text out;
  detail::append_dtype(out, t);
  return out;
}

/// Writes to_text(t) into a text (for messages: formatted only when the text is).
constexpr detail::text& operator<<(detail::text& out, dtype t) {
  detail::append_dtype(out, t);
  return out;
}

/// Parses the names to_text() writes; returns false for anything else.
constexpr bool parse_dtype(std::string_view s, dtype& out) {
  if (s == "void") {
    out = dtype::void_();
    return true;
  }
  if (s == "bool") {
    out = dtype::bool_();
    return true;
  }
  struct prefix {
    std::string_view name;
    std::uint8_t code;
  };
  constexpr prefix prefixes[] = {{"bfloat", kDLBfloat}, {"float", kDLFloat}, {"uint", kDLUInt},
                                 {"int", kDLInt},       {"complex", kDLComplex}, {"handle", kDLOpaqueHandle}};
  for (const auto& p : prefixes) {
    if (!s.starts_with(p.name)) continue;
    std::string_view rest = s.substr(p.name.size());
    auto read_number = [](std::string_view& r, std::int64_t limit, std::int64_t& v) {
      v = 0;
      std::size_t i = 0;
      while (i < r.size() && r[i] >= '0' && r[i] <= '9') {
        v = v * 10 + (r[i] - '0');
        if (v > limit) return false;
        ++i;
      }
      if (i == 0) return false;
      r = r.substr(i);
      return true;
    };
    std::int64_t bits = 0, lanes = 1;
    if (!read_number(rest, 255, bits)) return false;
    if (!rest.empty()) {
      if (rest[0] != 'x') return false;
      rest = rest.substr(1);
      if (!read_number(rest, 65535, lanes) || !rest.empty()) return false;
    }
    out = dtype(p.code, static_cast<std::uint8_t>(bits), static_cast<std::uint16_t>(lanes));
    return true;
  }
  return false;
}

}  // namespace relaxvm

#endif  // RELAXVM_BASE_DTYPE_HPP
