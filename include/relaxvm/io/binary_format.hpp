// SPDX-License-Identifier: Apache-2.0
// The binary executable format (docs/format.md): its magic, versions, sections and constant tags.
// io/binary_writer.hpp writes it (binary::save), io/binary_reader.hpp reads it (binary::read).
#ifndef RELAXVM_IO_BINARY_FORMAT_HPP
#define RELAXVM_IO_BINARY_FORMAT_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../bytecode/layout.hpp"

namespace relaxvm::RELAXVM_ABI::binary {

inline constexpr std::array<std::uint8_t, 8> magic = {0x89, 'R', 'V', 'M', 0x0D, 0x0A, 0x1A, 0x0A};
inline constexpr std::uint32_t format_major = 1;
inline constexpr std::uint32_t format_minor = 0;
inline constexpr std::uint32_t tag_table_version = 1;

enum section_id : std::uint32_t { functions = 1, constant_tags = 2, constants = 3, code = 4 };
inline constexpr std::uint32_t section_required = 1;
inline constexpr std::size_t header_size = 24;
inline constexpr std::size_t section_entry_size = 24;

/// The tags this writer uses, and the kind names that give them meaning.
struct tag_entry {
  std::uint8_t tag;
  const_kind kind;
};
inline constexpr tag_entry write_tags[] = {
    {1, const_kind::int64}, {2, const_kind::float64}, {3, const_kind::boolean}, {4, const_kind::dtype},
    {5, const_kind::device}, {6, const_kind::shape}, {7, const_kind::string}, {8, const_kind::tensor},
};

namespace detail {

struct section {
  std::uint32_t id = 0;
  std::uint32_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

inline std::string_view section_name(std::uint32_t id) {
  switch (id) {
    case functions: return "functions";
    case constant_tags: return "constant tags";
    case constants: return "constants";
    case code: return "code";
    default: return "unknown";
  }
}

}  // namespace detail
}  // namespace relaxvm::binary

#endif  // RELAXVM_IO_BINARY_FORMAT_HPP
