// SPDX-License-Identifier: Apache-2.0
// Constants between the two worlds: runtime values into an exec_builder's constant pool
// (constant_traits), and an executable's constants back into values (materialize_constant).
#ifndef RELAXVM_RUNTIME_CONSTANT_HPP
#define RELAXVM_RUNTIME_CONSTANT_HPP

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../bytecode/builder.hpp"
#include "../bytecode/layout.hpp"
#include "object.hpp"
#include "shape.hpp"
#include "string.hpp"
#include "tensor.hpp"
#include "value.hpp"

namespace relaxvm::RELAXVM_ABI {

template <>
struct constant_traits<shape> {
  static std::int64_t add(exec_builder& b, const shape& s) { return b.add_shape(s.dims()); }
};
template <>
struct constant_traits<string> {
  static std::int64_t add(exec_builder& b, const string& s) { return b.add_string(s.view()); }
};
template <>
struct constant_traits<std::string> {
  static std::int64_t add(exec_builder& b, const std::string& s) { return b.add_string(s); }
};
/// The tensor's data is copied into the executable; it must be a compact host tensor.
template <>
struct constant_traits<tensor> {
  static std::int64_t add(exec_builder& b, const tensor& t) {
    if (!t.defined() || t.device().device_type != kDLCPU || !t.is_contiguous()) {
      b.reject_constant(!t.defined() ? "an undefined tensor" : "a tensor that is not a compact host tensor");
      return 0;
    }
    const auto* p = static_cast<const std::uint8_t*>(t.raw_data());
    return b.add_tensor(t.dtype(), t.shape().dims(), std::span<const std::uint8_t>(p, static_cast<std::size_t>(t.nbytes())));
  }
};
/// Values of the kinds an executable can hold: int64, float64, bool, dtype, device, shape, string,
/// tensor. Any other kind is a builder error.
template <>
struct constant_traits<value> {
  static std::int64_t add(exec_builder& b, const value& v) {
    switch (v.kind()) {
      case value_kind::int64: return b.add_int(v.raw_int());
      case value_kind::float64: return b.add_float(v.raw_double());
      case value_kind::boolean: return b.add_bool(v.raw_int() != 0);
      case value_kind::dtype: return b.add_dtype(dtype::unpack(v.raw_int()));
      case value_kind::device: return b.add_device(device::unpack(v.raw_int()));
      case value_kind::shape: return constant_traits<shape>::add(b, v.as<shape>());
      case value_kind::string: return b.add_string(v.as<std::string_view>());
      case value_kind::tensor: return constant_traits<tensor>::add(b, v.as<tensor>());
      default: b.reject_constant(to_string(v.kind())); return 0;
    }
  }
};

/// Constant `c` of a verified layout, of kind K, written to `out`, which owns no reference (null,
/// as a new static_vm's slots are: it writes each constant into its slot, with no result<value> in
/// between). A program linked at compile time makes each constant with the code for its kind
/// only. `owner` (may be null) gains a reference for a tensor constant, whose bytes it keeps.
template <const_kind K>
status try_materialize_constant_into(value& out, const exec_view& v, const const_info& c, object* owner) {
  const auto put = [&out](value made) RELAXVM_LAMBDA_INLINE { value::move_into(out, std::move(made)); };
  if constexpr (K == const_kind::int64) {
    put(c.scalar);
  } else if constexpr (K == const_kind::float64) {
    put(std::bit_cast<double>(c.scalar));
  } else if constexpr (K == const_kind::boolean) {
    put(c.scalar != 0);
  } else if constexpr (K == const_kind::dtype) {
    put(dtype::unpack(c.scalar));
  } else if constexpr (K == const_kind::device) {
    put(device::unpack(c.scalar));
  } else if constexpr (K == const_kind::string) {
    RELAXVM_TRY_ASSIGN(string s, string::try_make(v.str({c.data_offset, c.data_size})));
    put(std::move(s));
  } else {
    const std::span<const std::int64_t> dims(v.i64s.data() + c.dims_offset, static_cast<std::size_t>(c.ndim));
    RELAXVM_TRY_ASSIGN(shape s, shape::try_make(dims));
    if constexpr (K == const_kind::shape) {
      put(std::move(s));
    } else {
      void* data = const_cast<std::uint8_t*>(v.bytes.data() + c.data_offset);
      std::int64_t numel = 1;  // the verifier checked the layout: no overflow, data for every element
      for (std::int64_t d : dims) numel *= d;
      RELAXVM_TRY_ASSIGN(tensor t,
                         tensor::try_view_checked(data, s, dtype::unpack(c.scalar), device::cpu(), owner, true, numel));
      put(std::move(t));
    }
  }
  return {};
}

/// Constant `c` of a verified layout, of kind K, as a value.
template <const_kind K>
result<value> try_materialize_constant_of(const exec_view& v, const const_info& c, const object_ref<object>& owner) {
  value out;
  RELAXVM_TRY(try_materialize_constant_into<K>(out, v, c, owner.get()));
  return out;
}

/// Constant `c` of a verified layout as a value. Tensor constants view the layout's bytes without
/// copying and are read-only; `owner` keeps those bytes alive. The verifier checked every kind,
/// shape and size, so the one possible error is firmware mode's object memory running out.
inline result<value> try_materialize_constant(const exec_view& v, const const_info& c, const object_ref<object>& owner) {
  switch (c.kind) {
    case const_kind::int64: return try_materialize_constant_of<const_kind::int64>(v, c, owner);
    case const_kind::float64: return try_materialize_constant_of<const_kind::float64>(v, c, owner);
    case const_kind::boolean: return try_materialize_constant_of<const_kind::boolean>(v, c, owner);
    case const_kind::dtype: return try_materialize_constant_of<const_kind::dtype>(v, c, owner);
    case const_kind::device: return try_materialize_constant_of<const_kind::device>(v, c, owner);
    case const_kind::shape: return try_materialize_constant_of<const_kind::shape>(v, c, owner);
    case const_kind::string: return try_materialize_constant_of<const_kind::string>(v, c, owner);
    case const_kind::tensor: return try_materialize_constant_of<const_kind::tensor>(v, c, owner);
  }
  return value();
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_CONSTANT_HPP
