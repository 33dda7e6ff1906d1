// SPDX-License-Identifier: Apache-2.0
// Little-endian bytes, written and read: the one byte cursor of every file format relaxvm reads
// and writes (its own executables, io/binary_*.hpp; TVM's, relaxvm/tvm/; params files,
// graph/params.hpp). The formats add their own messages on top: a read that runs out of bytes
// only returns false here, and consumes nothing.
#ifndef RELAXVM_IO_BYTES_HPP
#define RELAXVM_IO_BYTES_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI::detail {

/// Appends little-endian integers and byte runs to a growing buffer.
class byte_writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<std::byte>(v)); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void i32(std::int32_t v) { le(static_cast<std::uint32_t>(v), 4); }
  void i64(std::int64_t v) { le(static_cast<std::uint64_t>(v), 8); }
  /// A u64 length, then the characters.
  void str(std::string_view s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void raw(std::span<const std::uint8_t> b) { raw(b.data(), b.size()); }
  /// Overwrites the u64 at byte `at` (a size known only later).
  void patch_u64(std::size_t at, std::uint64_t v) {
    for (std::size_t i = 0; i < 8; ++i) out_[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
  }
  std::size_t size() const { return out_.size(); }
  std::vector<std::byte>& bytes() { return out_; }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
  }
  std::vector<std::byte> out_;
};

/// A read position in bytes [begin, end) of a span: little-endian integers and byte runs. Each
/// read returns false, and consumes nothing, when fewer bytes remain than it needs.
class byte_cursor {
 public:
  explicit byte_cursor(std::span<const std::byte> all) : byte_cursor(all, 0, all.size()) {}
  byte_cursor(std::span<const std::byte> all, std::size_t begin, std::size_t end) : all_(all), pos_(begin), end_(end) {}

  /// An integer of sizeof(T) bytes.
  template <class T>
  bool get(T& v) {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 8, "byte_cursor::get reads integers");
    if (remaining() < sizeof(T)) return false;
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) x |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(all_[pos_ + i])) << (8 * i);
    pos_ += sizeof(T);
    v = static_cast<T>(x);
    return true;
  }
  /// The next `n` bytes, in place.
  bool bytes(std::uint64_t n, std::span<const std::byte>& out) {
    if (n > remaining()) return false;
    out = std::span<const std::byte>(all_.data() + pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return true;
  }
  std::size_t remaining() const { return end_ - pos_; }
  std::size_t position() const { return pos_; }
  std::size_t end() const { return end_; }

 private:
  std::span<const std::byte> all_;
  std::size_t pos_;
  std::size_t end_;
};

}  // namespace relaxvm::detail

#endif  // RELAXVM_IO_BYTES_HPP
