// SPDX-License-Identifier: Apache-2.0
// NumPy's .npy files (format versions 1.0, 2.0 and 3.0; C order; little-endian or one-byte
// dtypes), read into and written from relaxvm tensors: how weights and inputs saved with
// numpy.save get in (the command-line tool reads its .npy inputs and `relaxvm embed` its weights
// through here) and how results get out. Hosted builds only (it allocates and formats text).
//
//   rv::tensor w = rv::npy::read(bytes, "w.npy").value();       // bytes: the whole file
//   std::vector<std::byte> out = rv::npy::write(w).value();
//
// Every file may be hostile: the header's shape is checked against the bytes the file holds
// before anything is allocated for it, and every malformed header is an error naming the file.
#ifndef RELAXVM_IO_NPY_HPP
#define RELAXVM_IO_NPY_HPP

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../base/config.hpp"
#if !RELAXVM_HOSTED || !RELAXVM_HEAP
#error "relaxvm/io/npy.hpp needs a hosted build with a heap"
#endif
#include "../base/error.hpp"
#include "../runtime/tensor.hpp"

namespace relaxvm::RELAXVM_ABI::npy {

namespace detail {
inline constexpr char npy_magic[] = "\x93NUMPY";

// The dtype of a NumPy descr ("<f4", "|u1", "|b1", ...), or false.
inline bool dtype_of_descr(std::string_view d, dtype& out) {
  if (d.size() < 3 || (d[0] != '<' && d[0] != '|' && d[0] != '=')) return false;
  const char kind = d[1];
  const std::string_view size = d.substr(2);
  int bytes = 0;
  for (char c : size) {
    if (c < '0' || c > '9' || bytes > 100) return false;
    bytes = bytes * 10 + (c - '0');
  }
  const auto bits = static_cast<std::uint8_t>(8 * bytes);
  if (kind == 'b' && bytes == 1) out = dtype::bool_();
  else if (kind == 'f' && (bytes == 2 || bytes == 4 || bytes == 8)) out = dtype(kDLFloat, bits);
  else if (kind == 'i' && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)) out = dtype(kDLInt, bits);
  else if (kind == 'u' && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)) out = dtype(kDLUInt, bits);
  else return false;
  return true;
}

inline std::string descr_of(dtype t) {
  if (t.is_bool()) return "|b1";
  const int bytes = t.bits / 8;
  const char kind = t.is_float() ? 'f' : t.is_int() ? 'i' : 'u';
  return std::string(bytes == 1 ? "|" : "<") + kind + std::to_string(bytes);
}

// The value of `key` in the header dict: the text after "'key':" up to the next ',' at depth 0.
inline std::string_view dict_value(std::string_view h, std::string_view key) {
  const std::string quoted = "'" + std::string(key) + "'";
  std::size_t p = h.find(quoted);
  if (p == std::string_view::npos) return {};
  p = h.find(':', p + quoted.size());
  if (p == std::string_view::npos) return {};
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  int depth = 0;
  std::size_t end = p;
  for (; end < h.size(); ++end) {
    if (h[end] == '(') ++depth;
    else if (h[end] == ')') --depth;
    else if ((h[end] == ',' || h[end] == '}') && depth == 0) break;
  }
  return h.substr(p, end - p);
}
}  // namespace detail

/// A tensor read from the bytes of a .npy file; `name` names the file in errors.
inline result<tensor> read(std::span<const std::byte> bytes, std::string_view name) {
  auto fail = [&](std::string_view why) { return value_error(name, ": not a .npy file relaxvm reads: ", why); };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), detail::npy_magic, 6) != 0) return fail("no NumPy magic");
  const auto u8 = [&](std::size_t i) { return std::to_integer<std::uint32_t>(bytes[i]); };
  const std::uint32_t major = u8(6);
  std::size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = u8(8) | (u8(9) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("the header is cut");
    header_len = u8(8) | (u8(9) << 8) | (u8(10) << 16) | (u8(11) << 24);
    start = 12;
  } else {
    return fail("format version " + std::to_string(major) + " (1, 2 and 3 are known)");
  }
  if (header_len > bytes.size() - start) return fail("the header is cut");
  const std::string_view h(reinterpret_cast<const char*>(bytes.data()) + start, header_len);
  std::string_view descr = detail::dict_value(h, "descr");
  if (descr.size() < 2 || descr.front() != '\'' || descr.back() != '\'') return fail("no descr");
  descr = descr.substr(1, descr.size() - 2);
  dtype t;
  if (!detail::dtype_of_descr(descr, t))
    return fail("dtype '" + std::string(descr) + "' (bool, int, uint and float, little-endian, are read)");
  if (detail::dict_value(h, "fortran_order") != "False") return fail("Fortran order (only C order is read)");
  std::string_view shape_text = detail::dict_value(h, "shape");
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')') return fail("no shape");
  shape_text = shape_text.substr(1, shape_text.size() - 2);
  std::vector<std::int64_t> dims;
  std::int64_t cur = -1;
  for (char c : shape_text) {
    if (c >= '0' && c <= '9') {
      if (cur > (INT64_MAX - 9) / 10) return fail("a dimension overflows int64");
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
    } else if (c == ',') {
      if (cur < 0) return fail("a bad shape");
      dims.push_back(cur);
      cur = -1;
    } else if (c != ' ' && c != 'L') {
      return fail("a bad shape");
    }
  }
  if (cur >= 0) dims.push_back(cur);
  // The header may claim any shape: its size is checked against the bytes the file holds before
  // anything is allocated for it (saturating: a product past 2^64 is no file's size).
  const std::size_t data_bytes = bytes.size() - (start + header_len);
  std::uint64_t need = static_cast<std::uint64_t>(t.bytes());
  for (std::int64_t d : dims)
    need = d == 0 ? 0 : need > UINT64_MAX / static_cast<std::uint64_t>(d) ? UINT64_MAX : need * static_cast<std::uint64_t>(d);
  if (data_bytes != need)
    return fail("the data is " + std::to_string(data_bytes) + " bytes, not the " +
                (need == UINT64_MAX ? std::string("more than 2^64") : std::to_string(need)) + " its shape and dtype need");
  RELAXVM_TRY_ASSIGN(tensor out, tensor::try_empty(shape(std::span<const std::int64_t>(dims)), t));
  if (data_bytes > 0) std::memcpy(out.raw_data(), bytes.data() + start + header_len, data_bytes);
  return out;
}

/// The bytes of a .npy file holding `t`, a compact host tensor of a NumPy dtype: format 1.0, or
/// 2.0 (a 4-byte header length) when the header passes 1.0's 65,535 bytes (thousands of dimensions).
inline result<std::vector<std::byte>> write(const tensor& t) {
  const dtype d = t.dtype();
  if (!(d.is_bool() || ((d.is_float() || d.is_int() || d.is_uint()) && d.lanes == 1 && d.bits % 8 == 0 && d.bits <= 64)))
    return value_error("npy::write: ", d, " has no NumPy dtype");
  if (t.device().device_type != kDLCPU || !t.is_contiguous())
    return value_error("npy::write: the tensor must be a compact host tensor");
  std::string header = "{'descr': '" + detail::descr_of(d) + "', 'fortran_order': False, 'shape': (";
  for (std::int64_t i = 0; i < t.ndim(); ++i) header += std::to_string(t.shape()[i]) + (t.ndim() == 1 ? "," : i + 1 < t.ndim() ? ", " : "");
  header += "), }";
  // NumPy pads the header with spaces and a newline so that the data starts 64-byte aligned.
  const auto padded = [&](std::size_t preamble) { return header.size() + 1 + (64 - (preamble + header.size() + 1) % 64) % 64; };
  const std::size_t preamble = padded(10) <= 0xffff ? 10 : 12;
  if (padded(preamble) > 0xffffffffu) return value_error("npy::write: the header of ", t.ndim(), " dimensions is over 4 GiB");
  header.resize(padded(preamble) - 1, ' ');
  header += '\n';
  std::vector<std::byte> out(preamble + header.size() + static_cast<std::size_t>(t.nbytes()));
  std::memcpy(out.data(), detail::npy_magic, 6);
  out[6] = std::byte{preamble == 10 ? std::uint8_t{1} : std::uint8_t{2}};
  out[7] = std::byte{0};
  for (std::size_t i = 0; i + 8 < preamble; ++i) out[8 + i] = static_cast<std::byte>((header.size() >> (8 * i)) & 0xff);
  std::memcpy(out.data() + preamble, header.data(), header.size());
  if (t.nbytes() > 0) std::memcpy(out.data() + preamble + header.size(), t.raw_data(), static_cast<std::size_t>(t.nbytes()));
  return out;
}

}  // namespace relaxvm::RELAXVM_ABI::npy

#endif  // RELAXVM_IO_NPY_HPP
