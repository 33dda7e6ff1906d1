// SPDX-License-Identifier: Apache-2.0
// Text forms of values, for vm.builtin.print and for messages.
#ifndef RELAXVM_RUNTIME_PRINT_HPP
#define RELAXVM_RUNTIME_PRINT_HPP

#include <string>

#include "../base/text.hpp"
#include "function.hpp"
#include "tensor.hpp"
#include "tuple.hpp"
#include "value.hpp"

namespace relaxvm {
namespace detail {

inline void append_value(text& out, const value& v, bool quote_strings = false) {
  switch (v.kind()) {
    case value_kind::null: out << "null"; break;
    case value_kind::int64: out << v.raw_int(); break;
    case value_kind::float64: append_double(out, v.raw_double()); break;
    case value_kind::boolean: out << (v.raw_int() != 0); break;
    case value_kind::dtype: append_dtype(out, dtype::unpack(v.raw_int())); break;
    case value_kind::device: append_device(out, device::unpack(v.raw_int())); break;
    case value_kind::context: out << "<vm context>"; break;
    case value_kind::shape:
      out << "shape";
      append_shape(out, static_cast<const shape_object*>(v.get_object())
                            ? std::span<const std::int64_t>(static_cast<const shape_object*>(v.get_object())->dims(),
                                                            static_cast<std::size_t>(static_cast<const shape_object*>(v.get_object())->size))
                            : std::span<const std::int64_t>());
      break;
    case value_kind::string:
      if (quote_strings) out << '"' << v.as<std::string_view>() << '"';
      else out << v.as<std::string_view>();
      break;
    case value_kind::tensor: append_tensor(out, v.as<tensor>()); break;
    case value_kind::tuple: {
      const tuple t = v.as<tuple>();
      if (t.tag() != 0) out << "adt" << t.tag();
      out << '(';
      for (std::int64_t i = 0; i < t.size(); ++i) {
        if (i) out << ", ";
        append_value(out, t[i], true);
      }
      out << ')';
      break;
    }
    case value_kind::closure: out << "closure(" << v.as<closure>().name() << ')'; break;
    case value_kind::object: out << "<object " << v.get_object()->type_name() << '>'; break;
  }
}

}  // namespace detail

/// The value as text: "3", "float32", "shape[32, 16]", "tensor([1, 2], shape=[2], ...)", "(1, 2)".
inline std::string to_string(const value& v) {
  detail::text t;
  detail::append_value(t, v);
  return std::string(t.view());
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_PRINT_HPP
