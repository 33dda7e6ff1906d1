// SPDX-License-Identifier: Apache-2.0
// Protobuf's wire format, written: enough to make the ONNX messages the tests need (models built
// field by field, packed and unpacked lists, wrong wire types, cut lengths).
#ifndef RELAXVM_TEST_PROTOBUF_WRITER_HPP
#define RELAXVM_TEST_PROTOBUF_WRITER_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace relaxvm_test {

struct pb {
  std::vector<std::byte> out;
  pb& varint(std::uint64_t v) {
    do {
      std::uint8_t b = v & 0x7F;
      v >>= 7;
      if (v) b |= 0x80;
      out.push_back(static_cast<std::byte>(b));
    } while (v);
    return *this;
  }
  pb& key(std::uint32_t field, int wire) { return varint(static_cast<std::uint64_t>(field) << 3 | static_cast<unsigned>(wire)); }
  pb& i(std::uint32_t field, std::int64_t v) { return key(field, 0).varint(static_cast<std::uint64_t>(v)); }
  pb& f32(std::uint32_t field, float v) {
    key(field, 5);
    const auto bits = std::bit_cast<std::uint32_t>(v);
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::byte>(bits >> (8 * k)));
    return *this;
  }
  pb& bytes(std::uint32_t field, const void* p, std::size_t n) {
    key(field, 2).varint(n);
    const auto* b = static_cast<const std::byte*>(p);
    if (n > 0) out.insert(out.end(), b, b + n);
    return *this;
  }
  pb& bytes(std::uint32_t field, const std::vector<std::byte>& b) { return bytes(field, b.data(), b.size()); }
  pb& str(std::uint32_t field, std::string_view s) { return bytes(field, s.data(), s.size()); }
  pb& msg(std::uint32_t field, const pb& m) { return bytes(field, m.out.data(), m.out.size()); }
};

}  // namespace relaxvm_test

#endif  // RELAXVM_TEST_PROTOBUF_WRITER_HPP
