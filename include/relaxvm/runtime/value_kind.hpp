// SPDX-License-Identifier: Apache-2.0
// The kinds of value a register can hold.
#ifndef RELAXVM_RUNTIME_VALUE_KIND_HPP
#define RELAXVM_RUNTIME_VALUE_KIND_HPP

#include <cstdint>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI

namespace relaxvm::RELAXVM_ABI {

/// Kinds up to `context` are held inline; the others refer to a reference-counted object.
enum class value_kind : std::uint8_t {
  null,
  int64,
  float64,
  boolean,
  dtype,
  device,
  context,  ///< the VM context (%vm), passed to builtins that take ctx
  shape,
  string,
  tensor,
  tuple,
  closure,
  object,  ///< any other object (make_object<T>)
};

constexpr bool holds_object(value_kind k) { return k >= value_kind::shape; }

/// A set of kinds, one bit each: what a parameter type accepts, known at compile time (the
/// compile-time linker checks arguments against it).
using kind_set = std::uint32_t;
constexpr kind_set kinds_of(value_kind k) { return kind_set{1} << static_cast<unsigned>(k); }
template <class... K>
constexpr kind_set kinds_of(value_kind k, K... more) { return (kinds_of(k) | ... | kinds_of(more)); }
inline constexpr kind_set any_kind = ~kind_set{0};

constexpr std::string_view to_string(value_kind k) {
  switch (k) {
    case value_kind::null: return "null";
    case value_kind::int64: return "int64";
    case value_kind::float64: return "float64";
    case value_kind::boolean: return "bool";
    case value_kind::dtype: return "dtype";
    case value_kind::device: return "device";
    case value_kind::context: return "vm context";
    case value_kind::shape: return "shape";
    case value_kind::string: return "string";
    case value_kind::tensor: return "tensor";
    case value_kind::tuple: return "tuple";
    case value_kind::closure: return "closure";
    case value_kind::object: return "object";
  }
  return "unknown";
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_VALUE_KIND_HPP
