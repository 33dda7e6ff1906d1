// SPDX-License-Identifier: Apache-2.0
// Protocol Buffers' wire format, read: the fields of one message, one at a time, each checked
// against the bytes that are left before anything is believed. ONNX files are protobuf messages
// (onnx.proto), and this is all of protobuf that reading them needs: no generated code, no
// exceptions, no copies (a length-delimited field is a view of the input). docs/onnx.md says why
// relaxvm reads the wire format itself rather than through a protobuf library.
#ifndef RELAXVM_ONNX_WIRE_HPP
#define RELAXVM_ONNX_WIRE_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../io/bytes.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

/// The wire types (the low 3 bits of a field's key). Groups (3, 4) were deprecated before proto2
/// was published; ONNX never uses them, and they are refused.
enum class wire : std::uint8_t { varint = 0, fixed64 = 1, len = 2, group_start = 3, group_end = 4, fixed32 = 5 };

constexpr std::string_view wire_name(wire w) {
  switch (w) {
    case wire::varint: return "varint";
    case wire::fixed64: return "fixed64";
    case wire::len: return "length-delimited";
    case wire::group_start: return "group start";
    case wire::group_end: return "group end";
    case wire::fixed32: return "fixed32";
  }
  return "unknown";
}

/// One field as it is on the wire: its number and wire type, where its key starts, and its value
/// (the integer of a varint or fixed field, or the bytes of a length-delimited one, in place).
struct field {
  std::uint32_t number = 0;
  wire type = wire::varint;
  std::size_t offset = 0;  // of the key, from the start of the input
  std::uint64_t bits = 0;  // varint, fixed32 and fixed64 values
  std::span<const std::byte> bytes;  // a length-delimited value
  std::size_t bytes_offset = 0;  // where `bytes` starts in the input

  std::string_view text() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
  std::int64_t as_int64() const { return static_cast<std::int64_t>(bits); }
  std::int32_t as_int32() const { return static_cast<std::int32_t>(static_cast<std::uint32_t>(bits)); }
  float as_float() const { return std::bit_cast<float>(static_cast<std::uint32_t>(bits)); }
  double as_double() const { return std::bit_cast<double>(bits); }
};

/// Why a read stopped: what was wrong and at which byte (from the start of the input).
struct wire_failure {
  std::string_view what;
  std::size_t offset = 0;
};

/// Reads a base-128 varint of at most 10 bytes whose value fits 64 bits.
inline bool read_varint(relaxvm::detail::byte_cursor& c, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    std::uint8_t b = 0;
    if (!c.get(b)) return false;
    if (shift == 63 && (b & 0x7E) != 0) return false;  // bits past the 64th
    v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

/// The fields of one message, in order. The input span is the whole file: offsets in errors and
/// fields count from its start, whichever nested message is being read.
class wire_reader {
 public:
  wire_reader(std::span<const std::byte> all, std::size_t begin, std::size_t end) : in_(all, begin, end) {}
  explicit wire_reader(std::span<const std::byte> all) : in_(all) {}
  /// The fields of a length-delimited field's value, read as a message.
  static wire_reader of(std::span<const std::byte> all, const field& f) {
    return wire_reader(all, f.bytes_offset, f.bytes_offset + f.bytes.size());
  }

  /// Reads the next field into `f`: false at the end of the message, or on malformed bytes
  /// (then failed() is true and failure() says what and where).
  bool next(field& f) {
    if (in_.remaining() == 0 || failed_) return false;
    f.offset = in_.position();
    std::uint64_t key = 0;
    if (!read_varint(in_, key)) return fail("a field's key is not a valid varint", f.offset);
    const std::uint64_t number = key >> 3;
    if (number == 0 || number > 0x1FFFFFFF) return fail("a field number is 0 or above 2^29 - 1", f.offset);
    f.number = static_cast<std::uint32_t>(number);
    f.type = static_cast<wire>(key & 7);
    f.bits = 0;
    f.bytes = {};
    switch (f.type) {
      case wire::varint:
        if (!read_varint(in_, f.bits)) return fail("a varint field's value is cut short or longer than 10 bytes", f.offset);
        return true;
      case wire::fixed64: {
        std::uint64_t v = 0;
        if (!in_.get(v)) return fail("a fixed64 field's value is cut short", f.offset);
        f.bits = v;
        return true;
      }
      case wire::fixed32: {
        std::uint32_t v = 0;
        if (!in_.get(v)) return fail("a fixed32 field's value is cut short", f.offset);
        f.bits = v;
        return true;
      }
      case wire::len: {
        std::uint64_t n = 0;
        if (!read_varint(in_, n)) return fail("a length-delimited field's length is not a valid varint", f.offset);
        f.bytes_offset = in_.position();
        if (!in_.bytes(n, f.bytes)) return fail("a length-delimited field runs past the end of its message", f.offset);
        return true;
      }
      case wire::group_start:
      case wire::group_end: return fail("a field uses the deprecated group encoding (wire type 3 or 4)", f.offset);
    }
    return fail("a field has wire type 6 or 7, which protobuf does not define", f.offset);
  }

  bool failed() const { return failed_; }
  const wire_failure& failure() const { return failure_; }
  std::size_t position() const { return in_.position(); }

 private:
  bool fail(std::string_view what, std::size_t offset) {
    failed_ = true;
    failure_ = {what, offset};
    return false;
  }
  relaxvm::detail::byte_cursor in_;
  bool failed_ = false;
  wire_failure failure_;
};

/// The elements of a repeated scalar field, written either way protobuf allows: one element per
/// field (unpacked: ONNX's dims and ints, almost always) or all in one length-delimited field
/// (packed: the typed data fields of a TensorProto). `unit` is 0 for varints, else 4 or 8 bytes.
/// Calls fn(bits) per element; false when the field's wire type fits neither form, or packed
/// bytes do not split into whole elements.
template <class F>
bool for_each_element(const field& f, int unit, F&& fn) {
  const wire single = unit == 0 ? wire::varint : unit == 4 ? wire::fixed32 : wire::fixed64;
  if (f.type == single) {
    fn(f.bits);
    return true;
  }
  if (f.type != wire::len) return false;
  if (unit == 0) {
    relaxvm::detail::byte_cursor c(f.bytes);
    std::uint64_t v = 0;
    while (c.remaining() > 0) {
      if (!read_varint(c, v)) return false;
      fn(v);
    }
    return true;
  }
  if (f.bytes.size() % static_cast<std::size_t>(unit) != 0) return false;
  for (std::size_t i = 0; i < f.bytes.size(); i += static_cast<std::size_t>(unit)) {
    std::uint64_t v = 0;
    for (int k = 0; k < unit; ++k) v |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(f.bytes[i + static_cast<std::size_t>(k)])) << (8 * k);
    fn(v);
  }
  return true;
}

/// How many elements a repeated scalar field holds (a packed one: counted without decoding
/// fixed-width elements). -1 when the field is malformed, as for for_each_element.
inline std::int64_t count_elements(const field& f, int unit) {
  std::int64_t n = 0;
  if (unit != 0 && f.type == wire::len) return f.bytes.size() % static_cast<std::size_t>(unit) == 0 ? static_cast<std::int64_t>(f.bytes.size()) / unit : -1;
  return for_each_element(f, unit, [&](std::uint64_t) { ++n; }) ? n : -1;
}

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_WIRE_HPP
