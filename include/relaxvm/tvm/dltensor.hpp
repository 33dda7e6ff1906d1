// SPDX-License-Identifier: Apache-2.0
// TVM's NDArray record (SaveDLTensor, include/tvm/runtime/ndarray.h), the tensor layout of its VM
// executables and params files, read into an executable's constant pool and written from it.
// Little-endian:
//
//   u64 0xDD5E40F096B4A13F (magic)   u64 0 (reserved)   i32 device type, i32 device id (cpu 0)
//   i32 ndim   u8 dtype code, u8 bits, u16 lanes   i64 shape[ndim]
//   i64 byte size (element count x ceil(bits / 8))   the bytes, C order
//
// The byte size leaves the lanes out, so the record cannot hold a vector dtype's data: lanes other
// than 1 are refused both ways, as relaxvm/graph's params files do.
#ifndef RELAXVM_TVM_DLTENSOR_HPP
#define RELAXVM_TVM_DLTENSOR_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/checked_math.hpp"
#include "../base/dtype.hpp"
#include "../base/text_builder.hpp"
#include "../bytecode/layout.hpp"
#include "../io/binary_reader.hpp"
#include "../io/binary_writer.hpp"

namespace relaxvm::RELAXVM_ABI::tvm {

inline constexpr std::uint64_t ndarray_magic = 0xDD5E40F096B4A13Full;

namespace detail {

using binary::detail::reader;
using binary::detail::writer;

inline void append_hex(relaxvm::detail::text& out, std::uint64_t v) {
  constexpr char digits[] = "0123456789ABCDEF";
  out << "0x";
  for (int shift = 60; shift >= 0; shift -= 4) out << digits[(v >> shift) & 15];
}

/// `s` for a message: printable ASCII as it is, other bytes as \xHH, at most `max` bytes.
inline void append_quoted(relaxvm::detail::text& out, std::string_view s, std::size_t max = 64) {
  constexpr char digits[] = "0123456789ABCDEF";
  out << '\'';
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\') out << static_cast<char>(c);
    else out << "\\x" << digits[c >> 4] << digits[c & 15];
  }
  if (s.size() > max) out << "...";
  out << '\'';
}

/// Reads one NDArray record into `l` as the tensor constant `c`. False once `r` holds the error.
inline bool read_dltensor(reader& r, exec_layout& l, const_info& c) {
  const std::size_t at = r.position();
  std::uint64_t magic = 0, reserved = 0;
  if (!r.u64(magic)) return false;
  if (magic != ndarray_magic) {
    relaxvm::detail::text& m = r.fail_text();
    m << "starts with ";
    append_hex(m, magic);
    m << " at offset " << at << " where an NDArray has its magic ";
    append_hex(m, ndarray_magic);
    return false;
  }
  if (!r.u64(reserved)) return false;
  if (reserved != 0) {
    r.fail_text() << "has " << reserved << " in the NDArray's reserved field at offset " << (at + 8)
                  << "; TVM writes 0";
    return false;
  }
  std::int32_t device_type = 0, device_id = 0, ndim = 0;
  if (!r.i32(device_type) || !r.i32(device_id)) return false;
  if (device_type != kDLCPU || device_id != 0) {
    r.fail_text() << "is an NDArray on device type " << device_type << " id " << device_id << " (offset "
                  << (at + 16) << "); TVM saves every NDArray as cpu 0 (type 1, id 0)";
    return false;
  }
  if (!r.i32(ndim) || !binary::detail::read_dtype(r, c.scalar)) return false;
  const dtype t = dtype::unpack(c.scalar);
  if (ndim < 0) {
    r.fail_text() << "has ndim " << ndim << " at offset " << (at + 24) << "; it must be 0 or more";
    return false;
  }
  if (t.lanes != 1) {
    r.fail_text() << "has dtype " << t << " (offset " << (at + 28)
                  << "): TVM's NDArray byte size leaves lanes out, so only dtypes of 1 lane are read";
    return false;
  }
  c.dims_offset = static_cast<std::int64_t>(l.i64s.size());
  c.ndim = ndim;
  std::int64_t numel = 1;
  for (std::int32_t k = 0; k < ndim; ++k) {
    const std::size_t dim_at = r.position();
    std::int64_t d = 0;
    if (!r.i64(d)) return false;
    if (d < 0) {
      r.fail_text() << "has dimension " << k << " = " << d << " at offset " << dim_at << "; dimensions are 0 or more";
      return false;
    }
    if (!relaxvm::detail::checked_mul(numel, d, numel)) {
      r.fail_text() << "has dimensions whose product overflows int64 (dimension " << k << " at offset " << dim_at << ')';
      return false;
    }
    l.i64s.push_back(d);
  }
  const std::size_t size_at = r.position();
  std::int64_t nbytes = 0, expected = 0;
  if (!r.i64(nbytes)) return false;
  if (!relaxvm::detail::checked_mul(numel, (t.bits + 7) / 8, expected) || nbytes != expected) {
    r.fail_text() << "says at offset " << size_at << " that its data is " << nbytes << " bytes, but " << numel
                  << " elements of " << t << " are " << expected << " bytes";
    return false;
  }
  std::span<const std::byte> data;
  if (!r.bytes(static_cast<std::uint64_t>(nbytes), data)) return false;
  while (l.bytes.size() % tensor_data_alignment != 0) l.bytes.push_back(0);
  c.data_offset = static_cast<std::int64_t>(l.bytes.size());
  c.data_size = nbytes;
  for (std::byte b : data) l.bytes.push_back(std::to_integer<std::uint8_t>(b));
  return true;
}

/// Writes tensor constant `c` of a verified layout; its dtype has 1 lane and its ndim fits int32
/// (the caller checks both).
inline void write_dltensor(writer& w, const exec_view& v, const const_info& c) {
  w.u64(ndarray_magic);
  w.u64(0);
  w.i32(kDLCPU);
  w.i32(0);
  w.i32(static_cast<std::int32_t>(c.ndim));
  binary::detail::write_dtype(w, c.scalar);
  for (std::int64_t k = 0; k < c.ndim; ++k) w.i64(v.i64s[static_cast<std::size_t>(c.dims_offset + k)]);
  w.i64(c.data_size);
  w.raw(v.bytes.subspan(static_cast<std::size_t>(c.data_offset), static_cast<std::size_t>(c.data_size)));
}

}  // namespace detail
}  // namespace relaxvm::tvm

#endif  // RELAXVM_TVM_DLTENSOR_HPP
