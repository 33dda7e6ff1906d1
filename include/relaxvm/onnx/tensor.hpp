// SPDX-License-Identifier: Apache-2.0
// ONNX tensors (TensorProto) made into relaxvm tensors: the element types, the data from raw_data
// or from the typed repeated fields, sizes checked against the data present before anything is
// allocated (a 100-byte file cannot ask for gigabytes).
#ifndef RELAXVM_ONNX_TENSOR_HPP
#define RELAXVM_ONNX_TENSOR_HPP

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "../base/checked_math.hpp"
#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "../runtime/tensor.hpp"
#include "model.hpp"

namespace relaxvm::RELAXVM_ABI::onnx {

// ONNX stores data little-endian; relaxvm copies it as it is.
static_assert(std::endian::native == std::endian::little, "relaxvm's ONNX reader assumes a little-endian host");

/// The relaxvm dtype of an ONNX element type. STRING and UNDEFINED have none.
inline result<dtype> to_dtype(std::int32_t t) {
  switch (static_cast<data_type>(t)) {
    case data_type::float32: return dtype::float32();
    case data_type::uint8: return dtype::uint8();
    case data_type::int8: return dtype::int8();
    case data_type::uint16: return dtype::uint16();
    case data_type::int16: return dtype::int16();
    case data_type::int32: return dtype::int32();
    case data_type::int64: return dtype::int64();
    case data_type::boolean: return dtype::bool_();
    case data_type::float16: return dtype::float16();
    case data_type::float64: return dtype::float64();
    case data_type::uint32: return dtype::uint32();
    case data_type::uint64: return dtype::uint64();
    case data_type::complex64: return dtype(kDLComplex, 64);
    case data_type::complex128: return dtype(kDLComplex, 128);
    case data_type::bfloat16: return dtype::bfloat16();
    case data_type::string: return unsupported_error("onnx: STRING tensors are not supported (relaxvm's tensors hold numbers)");
    case data_type::undefined: break;
  }
  return value_error("onnx: element type ", t, " is not one of ONNX's data types (1-16)");
}

/// The ONNX element type of a relaxvm dtype, or 0 (UNDEFINED) when ONNX has none.
inline std::int32_t from_dtype(dtype t) {
  for (std::int32_t k = 1; k <= 16; ++k) {
    result<dtype> d = to_dtype(k);
    if (d.ok() && *d == t) return k;
  }
  return 0;
}

namespace detail {

// Which typed field holds an element type, and how many of the field's elements one tensor
// element takes (complex numbers: two).
struct typed_storage {
  std::uint32_t field;
  int per_element;
};
inline typed_storage storage_of(data_type t) {
  switch (t) {
    case data_type::float32: return {4, 1};
    case data_type::complex64: return {4, 2};
    case data_type::float64: return {10, 1};
    case data_type::complex128: return {10, 2};
    case data_type::int64: return {7, 1};
    case data_type::uint32:
    case data_type::uint64: return {11, 1};
    case data_type::string: return {6, 1};
    default: return {5, 1};  // int32_data holds every narrower integer, bool, float16 and bfloat16
  }
}

}  // namespace detail

/// The element count of a tensor's dims, checked: every dim at least 0, the product within int64.
inline result<std::int64_t> element_count(const tensor_info& t) {
  std::int64_t n = 1;
  for (std::int64_t d : t.dims) {
    if (d < 0) return value_error("onnx: tensor '", t.name, "' has a negative dimension (", d, ")");
    if (!relaxvm::detail::checked_mul(n, d, n)) return value_error("onnx: tensor '", t.name, "' has more elements than fit in 64 bits");
  }
  return n;
}

/// The bytes of a tensor's data (its element count times the dtype's size), checked against the
/// data present: raw_data's bytes (or `raw`, external data the caller read, when `use_raw`), or
/// the elements of the typed field its element type uses. The one size check: everything that
/// allocates for a tensor calls it first, so a 100-byte file cannot ask for gigabytes.
inline result<std::int64_t> data_nbytes(const tensor_info& t, std::span<const std::byte> raw = {}, bool use_raw = false) {
  RELAXVM_TRY_ASSIGN(const dtype dt, to_dtype(t.data_type));
  RELAXVM_TRY_ASSIGN(const std::int64_t numel, element_count(t));
  std::int64_t have = 0, per = 0, want = 0;
  const bool raw_bytes = use_raw || t.has_raw_data;
  if (raw_bytes) {
    have = static_cast<std::int64_t>(use_raw ? raw.size() : t.raw_data.size());
    per = dt.bytes();
  } else {
    if (t.external) {
      std::string_view location = "(no location given)";
      for (const auto& [key, value] : t.external_data)
        if (key == "location") location = value.substr(0, 256);
      return unsupported_error("onnx: tensor '", t.name, "' keeps its data in the external file '", location,
                               "', which relaxvm does not read: save the model with its weights inside it "
                               "(onnx.save_model(model, path, save_as_external_data=False))");
    }
    const detail::typed_storage s = detail::storage_of(static_cast<data_type>(t.data_type));
    if (t.typed_field != 0 && t.typed_field != s.field)
      return value_error("onnx: tensor '", t.name, "' of ", data_type_name(t.data_type), " holds its data in ",
                         detail::parser::typed_name(t.typed_field), ", not ", detail::parser::typed_name(s.field));
    have = t.typed_count;
    per = s.per_element;
  }
  if (!relaxvm::detail::checked_mul(numel, per, want) || want != have)
    return value_error("onnx: tensor '", t.name, "' has ", have, raw_bytes ? " bytes" : " elements",
                       " of data, but its dims need ", numel, " elements of ", data_type_name(t.data_type));
  return numel * dt.bytes();  // fits: at most 16 bytes per element of data that is in memory
}

/// Writes the tensor's data into `out`, which must hold exactly data_nbytes(t) bytes. The data
/// must be in the file (raw_data or a typed field): external data is read by the caller, which
/// passes those bytes as `raw` instead.
inline status copy_data(const tensor_info& t, std::span<std::byte> out, std::span<const std::byte> raw = {},
                        bool use_raw = false) {
  RELAXVM_TRY_ASSIGN(const std::int64_t nbytes, data_nbytes(t, raw, use_raw));
  if (static_cast<std::int64_t>(out.size()) != nbytes)
    return internal_error("onnx::copy_data: the destination holds ", out.size(), " bytes, not ", nbytes);
  if (nbytes == 0) return {};
  if (use_raw || t.has_raw_data) {
    std::memcpy(out.data(), (use_raw ? raw : t.raw_data).data(), static_cast<std::size_t>(nbytes));
    return {};
  }
  // Read the typed field again, element by element, straight into `out`.
  const dtype dt = to_dtype(t.data_type).value();  // checked by data_nbytes
  const detail::typed_storage s = detail::storage_of(static_cast<data_type>(t.data_type));
  const int unit = s.field == 4 ? 4 : s.field == 10 ? 8 : 0;
  const auto width = static_cast<std::size_t>(dt.bytes()) / static_cast<std::size_t>(s.per_element);
  std::size_t at = 0;
  bool ok = true;
  detail::wire_reader r(t.message);
  detail::field f;
  while (ok && r.next(f)) {
    if (f.number != s.field) continue;
    ok = detail::for_each_element(f, unit, [&](std::uint64_t bits) {
      if (at + width > out.size()) return;  // counted already; cannot happen
      if (dt.is_bool()) bits = bits != 0 ? 1 : 0;
      // Little-endian: the low `width` bytes of the element are its value (int32_data's narrower
      // integers, float16 and bfloat16 bit patterns; float_data's float32 bits).
      std::memcpy(out.data() + at, &bits, width);
      at += width;
    });
  }
  if (!ok || r.failed() || at != out.size())
    return value_error("onnx: tensor '", t.name, "': its ", detail::parser::typed_name(s.field), " could not be read again");
  return {};
}

/// A new host tensor holding a TensorProto's data.
inline result<tensor> make_tensor(const tensor_info& t) {
  RELAXVM_TRY(data_nbytes(t));  // before anything is allocated
  RELAXVM_TRY_ASSIGN(relaxvm::shape s, relaxvm::shape::try_make(t.dims));
  RELAXVM_TRY_ASSIGN(tensor out, tensor::try_empty(s, to_dtype(t.data_type).value()));
  RELAXVM_TRY(copy_data(t, std::span<std::byte>(static_cast<std::byte*>(out.raw_data()), static_cast<std::size_t>(out.nbytes()))));
  return out;
}

/// Reads a serialized TensorProto (a .pb file of ONNX's test data) into a new host tensor.
inline result<tensor> read_tensor(std::span<const std::byte> bytes) {
  RELAXVM_TRY_ASSIGN(tensor_info t, parse_tensor(bytes));
  return make_tensor(t);
}

}  // namespace relaxvm::onnx

#endif  // RELAXVM_ONNX_TENSOR_HPP
