// SPDX-License-Identifier: Apache-2.0
// The reference's params file: named tensors in one byte blob (relay.save_param_dict /
// tvm.runtime.load_param_dict; SaveParams/LoadParams). A file written by the reference loads
// unchanged, and save_params writes the same bytes. Layout, little-endian:
//
//   u64 0xF7E58D4F05049CB7 (list magic)   u64 0 (reserved)
//   u64 N   N x { u64 length, name bytes }
//   u64 N   N x tensor:
//     u64 0xDD5E40F096B4A13F (tensor magic)   u64 0 (reserved)
//     i32 device type (1: CPU)   i32 device id (0)   i32 ndim
//     u8 dtype code   u8 bits   u16 lanes   i64 shape[ndim]
//     i64 data bytes (= element count x ceil(bits / 8))   data, C order
//
// The reference leaves lanes out of the byte count, so a vector dtype's data would be cut short;
// relaxvm refuses lanes other than 1 on both sides instead of writing such a file.
#ifndef RELAXVM_GRAPH_PARAMS_HPP
#define RELAXVM_GRAPH_PARAMS_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/checked_math.hpp"
#include "../base/error.hpp"
#include "../io/bytes.hpp"
#include "../runtime/tensor.hpp"

namespace relaxvm::RELAXVM_ABI::graph {

/// A tensor and its name, as a params file holds them.
struct named_tensor {
  std::string name;
  tensor value;
};

namespace detail {
using relaxvm::detail::value_error;

inline constexpr std::uint64_t params_list_magic = 0xF7E58D4F05049CB7ull;
inline constexpr std::uint64_t params_tensor_magic = 0xDD5E40F096B4A13Full;
/// More dimensions than any tensor of a real model has; a larger count is a corrupt file.
inline constexpr std::int32_t params_max_ndim = 64;

using relaxvm::detail::byte_cursor;
using relaxvm::detail::byte_writer;

/// A little-endian T from `in`; an error naming `what` and the offset when the bytes run out.
template <class T>
result<T> get(byte_cursor& in, std::string_view what) {
  T v{};
  if (!in.get(v))
    return value_error("load_params: the file ends at byte ", in.end(), " in ", what, " (at byte ", in.position(), ")");
  return v;
}
inline result<std::span<const std::byte>> get_bytes(byte_cursor& in, std::uint64_t n, std::string_view what) {
  std::span<const std::byte> out;
  if (!in.bytes(n, out))
    return value_error("load_params: the file ends at byte ", in.end(), " in ", what, " (at byte ", in.position(), ")");
  return out;
}

inline result<tensor> read_tensor(byte_cursor& in, std::string_view name) {
  RELAXVM_TRY_ASSIGN(std::uint64_t magic, get<std::uint64_t>(in, "a tensor's magic number"));
  if (magic != params_tensor_magic)
    return value_error("load_params: tensor '", name, "' does not start with the tensor magic number (byte ",
                       in.position() - 8, ")");
  RELAXVM_TRY(get<std::uint64_t>(in, "a tensor's reserved field"));
  RELAXVM_TRY_ASSIGN(std::int32_t device_type, get<std::int32_t>(in, "a tensor's device"));
  RELAXVM_TRY_ASSIGN(std::int32_t device_id, get<std::int32_t>(in, "a tensor's device"));
  if (device_type != kDLCPU || device_id != 0)
    return value_error("load_params: tensor '", name, "' is on device type ", device_type, " id ", device_id,
                       "; params files hold cpu:0 tensors");
  RELAXVM_TRY_ASSIGN(std::int32_t ndim, get<std::int32_t>(in, "a tensor's ndim"));
  if (ndim < 0 || ndim > params_max_ndim)
    return value_error("load_params: tensor '", name, "' has ", ndim, " dimensions (0 to ", params_max_ndim, " expected)");
  RELAXVM_TRY_ASSIGN(std::uint8_t code, get<std::uint8_t>(in, "a tensor's dtype"));
  RELAXVM_TRY_ASSIGN(std::uint8_t bits, get<std::uint8_t>(in, "a tensor's dtype"));
  RELAXVM_TRY_ASSIGN(std::uint16_t lanes, get<std::uint16_t>(in, "a tensor's dtype"));
  const dtype t(code, bits, lanes);
  if (lanes != 1)
    return value_error("load_params: tensor '", name, "' has dtype ", t, "; params files hold scalar dtypes only");
  std::int64_t dims[params_max_ndim];
  for (std::int32_t i = 0; i < ndim; ++i) {
    RELAXVM_TRY_ASSIGN(dims[i], get<std::int64_t>(in, "a tensor's shape"));
  }
  const shape s(std::span<const std::int64_t>(dims, static_cast<std::size_t>(ndim)));
  std::int64_t numel = 0, nbytes = 0;
  relaxvm::detail::text what("load_params: tensor '");
  what << name << "'";
  RELAXVM_TRY(relaxvm::detail::check_tensor_layout(s.dims(), t, numel, nbytes, what.view()));
  RELAXVM_TRY_ASSIGN(std::int64_t stored, get<std::int64_t>(in, "a tensor's byte count"));
  if (stored != nbytes)
    return value_error("load_params: tensor '", name, "' says it has ", stored, " data bytes, but ", relaxvm::detail::dims_text{s.dims()},
                       " x ", t, " is ", nbytes, " bytes");
  RELAXVM_TRY_ASSIGN(std::span<const std::byte> data, get_bytes(in, static_cast<std::uint64_t>(nbytes), "a tensor's data"));
  RELAXVM_TRY_ASSIGN(tensor out, tensor::try_empty(s, t));
  if (nbytes > 0) std::memcpy(out.raw_data(), data.data(), data.size());
  return out;
}
}  // namespace detail

/// The named tensors of a params file, in the file's order.
inline result<std::vector<named_tensor>> load_params(std::span<const std::byte> bytes) {
  detail::byte_cursor in(bytes);
  RELAXVM_TRY_ASSIGN(std::uint64_t magic, detail::get<std::uint64_t>(in, "the header"));
  if (magic != detail::params_list_magic)
    return detail::value_error("load_params: not a params file (the first 8 bytes are not the list magic number)");
  RELAXVM_TRY(detail::get<std::uint64_t>(in, "the header"));
  RELAXVM_TRY_ASSIGN(std::uint64_t count, detail::get<std::uint64_t>(in, "the name count"));
  // Each name takes at least 8 bytes: a count beyond that is corrupt, and must not size a vector.
  if (count > in.remaining() / 8)
    return detail::value_error("load_params: the file says it has ", count, " names, more than its ", bytes.size(),
                               " bytes can hold");
  std::vector<named_tensor> out(static_cast<std::size_t>(count));
  for (named_tensor& p : out) {
    RELAXVM_TRY_ASSIGN(std::uint64_t len, detail::get<std::uint64_t>(in, "a name's length"));
    RELAXVM_TRY_ASSIGN(std::span<const std::byte> name, detail::get_bytes(in, len, "a name"));
    p.name.assign(reinterpret_cast<const char*>(name.data()), name.size());
  }
  RELAXVM_TRY_ASSIGN(std::uint64_t arrays, detail::get<std::uint64_t>(in, "the tensor count"));
  if (arrays != count)
    return detail::value_error("load_params: the file has ", count, " names but ", arrays, " tensors");
  for (named_tensor& p : out) {
    RELAXVM_TRY_ASSIGN(p.value, detail::read_tensor(in, p.name));
  }
  if (in.remaining() != 0)
    return detail::value_error("load_params: ", in.remaining(), " bytes follow the last tensor (at byte ", in.position(), ")");
  return out;
}

/// The params file of `params`, byte for byte what the reference writes for them in this order.
inline result<std::vector<std::byte>> save_params(std::span<const named_tensor> params) {
  detail::byte_writer out;
  out.u64(detail::params_list_magic);
  out.u64(0);
  out.u64(params.size());
  for (const named_tensor& p : params) {
    out.u64(p.name.size());
    out.raw(p.name.data(), p.name.size());
  }
  out.u64(params.size());
  for (const named_tensor& p : params) {
    const tensor& t = p.value;
    if (!t.defined()) return detail::value_error("save_params: '", p.name, "' is an undefined tensor");
    if (t.device().device_type != kDLCPU)
      return detail::value_error("save_params: '", p.name, "' is on ", t.device(), "; copy it to the host first");
    if (!t.is_contiguous()) return detail::value_error("save_params: '", p.name, "' is strided; save a compact copy");
    if (t.dtype().lanes != 1)
      return detail::value_error("save_params: '", p.name, "' has dtype ", t.dtype(), "; params files hold scalar dtypes only");
    out.u64(detail::params_tensor_magic);
    out.u64(0);
    out.i32(kDLCPU);
    out.i32(0);
    out.i32(static_cast<std::int32_t>(t.ndim()));
    out.u8(t.dtype().code);
    out.u8(t.dtype().bits);
    out.u16(t.dtype().lanes);
    for (std::int64_t d : t.shape().dims()) out.i64(d);
    out.i64(t.nbytes());
    if (t.nbytes() > 0) out.raw(t.raw_data(), static_cast<std::size_t>(t.nbytes()));
  }
  return out.take();
}

}  // namespace relaxvm::graph

#endif  // RELAXVM_GRAPH_PARAMS_HPP
