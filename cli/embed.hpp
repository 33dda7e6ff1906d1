// SPDX-License-Identifier: Apache-2.0
// `relaxvm embed`: tensors (read from .npy files) written as a C++ header of constexpr arrays,
// for add_tensor in a compile-time program or for a firmware table. Each tensor NAME gives
//   inline constexpr std::array<T, N> NAME_data     its elements, C order (T: the C++ element type)
//   inline constexpr std::array<std::int64_t, R> NAME_shape
//   inline constexpr char NAME_dtype[]              "float32", "int64", "bool", ...
// so that `b.add_tensor(std::span<const T>(ns::NAME_data), ns::NAME_shape)` adds it. Every
// value is written so that it reads back bit for bit (NaN payloads excepted: a NaN is NaN).
#ifndef RELAXVM_CLI_EMBED_HPP
#define RELAXVM_CLI_EMBED_HPP

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <relaxvm.hpp>

namespace relaxvm::cli {

/// A C++ identifier made from a file name: its stem (no folders, no .npy), each character that
/// cannot be in an identifier replaced by '_', runs of '_' made one ("__" is reserved), and a 't'
/// in front when it does not start with a letter (a digit cannot start one, "_W" is reserved).
inline std::string identifier_of(std::string_view path) {
  if (const std::size_t slash = path.find_last_of("/\\"); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  if (path.ends_with(".npy")) path.remove_suffix(4);
  std::string out;
  for (char c : path) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) out += c;
    else if (out.empty() || out.back() != '_') out += '_';
  }
  if (out.empty() || !((out[0] >= 'a' && out[0] <= 'z') || (out[0] >= 'A' && out[0] <= 'Z'))) out.insert(0, "t");
  return out;
}

/// Whether `ns` is a namespace name this header can open: identifiers joined by "::".
/// Whether `word` is a C++20 keyword (or an alternative token), which cannot name a namespace.
inline bool is_cpp_keyword(std::string_view word) {
  static constexpr std::string_view keywords[] = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
      "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
      "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq"};
  for (std::string_view k : keywords)
    if (word == k) return true;
  return false;
}

/// Whether `ns` names a namespace of the user's: identifiers joined by ::, none a keyword or
/// reserved (a double underscore, an underscore and a capital), and not std or relaxvm (whose
/// contents are not the user's to add to).
inline bool valid_namespace(std::string_view ns) {
  if (ns.empty()) return false;
  const std::string_view first = ns.substr(0, ns.find("::"));
  if (first == "std" || first == "relaxvm") return false;
  for (;;) {
    const std::size_t sep = ns.find("::");
    const std::string_view part = ns.substr(0, sep);
    if (part.empty() || (part[0] >= '0' && part[0] <= '9') || part.find("__") != std::string_view::npos ||
        (part.size() > 1 && part[0] == '_' && part[1] >= 'A' && part[1] <= 'Z') || is_cpp_keyword(part))
      return false;
    for (char c : part)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
    if (sep == std::string_view::npos) return true;
    ns.remove_prefix(sep + 2);
  }
}

namespace detail {
// The C++ element type and dtype name of a tensor's dtype, or empty when there is none.
inline std::string_view cpp_type_of(dtype t) {
  if (t.lanes != 1) return {};
  if (t.is_bool()) return "bool";
  if (t.is_float()) return t.bits == 32 ? "float" : t.bits == 64 ? "double" : "";
  if (t.is_int() || t.is_uint()) {
    switch (t.bits) {
      case 8: return t.is_int() ? "std::int8_t" : "std::uint8_t";
      case 16: return t.is_int() ? "std::int16_t" : "std::uint16_t";
      case 32: return t.is_int() ? "std::int32_t" : "std::uint32_t";
      case 64: return t.is_int() ? "std::int64_t" : "std::uint64_t";
      default: return {};
    }
  }
  return {};
}

// A floating-point value as a literal of its type that reads back to the same bits (the
// shortest such text, as std::to_chars gives it).
template <class F>
std::string float_literal(F v) {
  constexpr std::string_view type = sizeof(F) == 4 ? "float" : "double";
  if (std::isnan(v)) {  // its sign and payload kept: the bits themselves
    using bits_t = std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>;
    char hex[24];
    const auto r = std::to_chars(hex, hex + sizeof hex, std::bit_cast<bits_t>(v), 16);
    return "std::bit_cast<" + std::string(type) + ">(std::uint" + std::to_string(8 * sizeof(F)) + "_t{0x" + std::string(hex, r.ptr) +
           (sizeof(F) == 4 ? "u" : "ull") + "})";
  }
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + "std::numeric_limits<" + std::string(type) + ">::infinity()";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return sizeof(F) == 4 ? s + "f" : s;
}

// Element i of t's data as a C++ literal of its element type.
inline std::string literal_at(const tensor& t, std::int64_t i) {
  const dtype d = t.dtype();
  const auto* p = static_cast<const unsigned char*>(t.raw_data()) + i * d.bytes();
  auto get = [&](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  if (d.is_bool()) return get(std::uint8_t{}) != 0 ? "true" : "false";
  if (d.is_float()) return d.bits == 32 ? float_literal(get(float{})) : float_literal(get(double{}));
  if (d.is_uint()) {
    const std::uint64_t v = d.bits == 8    ? get(std::uint8_t{})
                            : d.bits == 16 ? get(std::uint16_t{})
                            : d.bits == 32 ? get(std::uint32_t{})
                                           : get(std::uint64_t{});
    return std::to_string(v) + "u";
  }
  const std::int64_t v = d.bits == 8    ? get(std::int8_t{})
                         : d.bits == 16 ? get(std::int16_t{})
                         : d.bits == 32 ? get(std::int32_t{})
                                        : get(std::int64_t{});
  // -9223372036854775808 is the negation of a literal no signed type holds.
  if (v == INT64_MIN) return "(-9223372036854775807 - 1)";
  return std::to_string(v);
}
}  // namespace detail

struct embedded {
  std::string file;  // where it came from, for the comment and errors
  tensor value;
};

/// The header text for `tensors` in namespace `ns`; an error for a name two files share, a
/// dtype with no C++ element type, or a bad namespace.
inline result<std::string> embed_header(const std::vector<embedded>& tensors, std::string_view ns) {
  if (!valid_namespace(ns))
    return value_error("embed: --namespace '", ns, "' is not a C++ namespace name (identifiers joined by ::)");
  std::vector<std::string> names;
  for (const embedded& e : tensors) {
    std::string name = identifier_of(e.file);
    for (std::size_t j = 0; j < names.size(); ++j)
      if (names[j] == name)
        return value_error("embed: '", tensors[j].file, "' and '", e.file, "' both give the name '", name,
                           "'; rename one of the files");
    if (detail::cpp_type_of(e.value.dtype()).empty())
      return value_error("embed: '", e.file, "' holds ", e.value.dtype(),
                         ", which has no C++ element type (bool, int8-64, uint8-64, float32 and float64 are embedded)");
    names.push_back(std::move(name));
  }
  std::string out =
      "// Generated by relaxvm embed; do not edit. Each tensor NAME is NAME_data (its elements in C\n"
      "// order), NAME_shape and NAME_dtype; add one to a program with\n"
      "//   b.add_tensor(std::span<const T>(NS::NAME_data), NS::NAME_shape)\n"
      "#pragma once\n\n#include <array>\n#include <bit>\n#include <cstdint>\n#include <limits>\n\n";
  out += "namespace " + std::string(ns) + " {\n";
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const tensor& t = tensors[k].value;
    const std::string& name = names[k];
    const std::string type(detail::cpp_type_of(t.dtype()));
    std::string dims;
    for (std::int64_t i = 0; i < t.ndim(); ++i) dims += (i ? ", " : "") + std::to_string(t.shape()[i]);
    const std::string dtype_name = to_string(value(t.dtype()));
    std::string from = tensors[k].file;  // a line comment: a file name cannot end it early
    for (char& c : from)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    out += "\n// " + from + ": " + dtype_name + " [" + dims + "]\n";
    out += "inline constexpr std::array<std::int64_t, " + std::to_string(t.ndim()) + "> " + name + "_shape{" + dims + "};\n";
    out += "inline constexpr char " + name + "_dtype[] = \"" + dtype_name + "\";\n";
    out += "inline constexpr std::array<" + type + ", " + std::to_string(t.numel()) + "> " + name + "_data{";
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      out += i % 8 == 0 ? "\n    " : " ";
      out += detail::literal_at(t, i);
      out += ',';
    }
    out += t.numel() > 0 ? "\n};\n" : "};\n";
  }
  out += "\n}  // namespace " + std::string(ns) + "\n";
  return out;
}

}  // namespace relaxvm::cli

#endif  // RELAXVM_CLI_EMBED_HPP
