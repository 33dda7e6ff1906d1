// SPDX-License-Identifier: Apache-2.0
// Text forms of values, for vm.builtin.print and for messages.
#ifndef RELAXVM_RUNTIME_PRINT_HPP
#define RELAXVM_RUNTIME_PRINT_HPP

#include <concepts>
#include <string>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/text_builder.hpp"
#include "adapters.hpp"
#include "tensor.hpp"
#include "tuple.hpp"
#include "value.hpp"

namespace relaxvm::RELAXVM_ABI {
namespace detail {

/// Tuples nested deeper than this print as "(...)": the text of a value nested a million deep
/// stays short, and printing it takes bounded stack.
inline constexpr int max_print_depth = 32;
/// At most this many values (of one tuple tree, or one vm.builtin.print call) are written, the
/// rest as "...": a tuple holding the same tuple twice, 30 times over, has 2^30 leaves, though a
/// program makes it in 30 steps.
inline constexpr std::int64_t max_print_values = 1000;

inline void append_value_limited(text& out, const value& v, bool quote_strings, int depth, std::int64_t& left) {
  --left;
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
      if (depth >= max_print_depth && !t.empty()) {
        out << "(...)";
        break;
      }
      out << '(';
      for (std::int64_t i = 0; i < t.size(); ++i) {
        if (i) out << ", ";
        if (left <= 0) {
          out << "...";
          break;
        }
        append_value_limited(out, t[i], true, depth + 1, left);
      }
      out << ')';
      break;
    }
    case value_kind::closure: out << "closure(" << v.as<closure>().name() << ')'; break;
    case value_kind::object: out << "<object " << v.get_object()->type_name() << '>'; break;
  }
}

inline void append_value(text& out, const value& v, bool quote_strings = false) {
  std::int64_t left = max_print_values;
  append_value_limited(out, v, quote_strings, 0, left);
}

}  // namespace detail

/// The value as text: "3", "float32", "shape[32, 16]", "tensor([1, 2], shape=[2], ...)", "(1, 2)";
/// tuples deeper than detail::max_print_depth as "(...)", and past detail::max_print_values
/// values, "...".
inline std::string to_string(const value& v) {
  detail::text t;
  detail::append_value(t, v);
  return std::string(t.view());
}

/// What relaxvm's values print to: anything that takes `<< std::string_view` (std::ostream,
/// and so doctest's and GoogleTest's messages).
template <class S>
concept text_sink = !std::same_as<S, detail::text> && requires(S& s, std::string_view v) { s << v; };

/// The types `<<` prints, each exactly (no conversions: `os << 5` is never a relaxvm value).
template <class T>
concept printable = std::same_as<T, value> || std::same_as<T, tensor> || std::same_as<T, shape> ||
                    std::same_as<T, tuple> || std::same_as<T, closure> || std::same_as<T, string> ||
                    std::same_as<T, dtype> || std::same_as<T, device>;

/// `os << v` writes v as to_string does, strings quoted: "3", "float32", "cpu:0", "\"abc\"",
/// "shape[32, 16]", "tensor([1, 2], shape=[2], dtype=float32, device=cpu:0)" (at most 64
/// elements), "(1, 2)".
template <text_sink S, printable T>
S& operator<<(S& s, const T& v) {
  detail::text t;
  detail::append_value(t, value(v), true);
  s << t.view();
  return s;
}

/// `os << e` writes "ValueError: the message".
template <text_sink S, std::same_as<error> E>
S& operator<<(S& s, const E& e) {
  s << to_string(e.kind()) << std::string_view(": ") << e.message();
  return s;
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_PRINT_HPP
