// SPDX-License-Identifier: Apache-2.0
// string: an immutable, reference-counted string (NUL-terminated for C interop).
#ifndef RELAXVM_RUNTIME_STRING_HPP
#define RELAXVM_RUNTIME_STRING_HPP

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "object.hpp"
#include "value_kind.hpp"

namespace relaxvm::RELAXVM_ABI {

struct string_object : object {
  static constexpr std::string_view type_name = "relaxvm.string";
  explicit string_object(std::size_t n) : size(n) {}
  std::size_t size;
  char* chars() noexcept { return reinterpret_cast<char*>(this + 1); }
  const char* chars() const noexcept { return reinterpret_cast<const char*>(this + 1); }
};

class string : public object_handle_base<string_object, value_kind::string> {
 public:

  string() : string(std::string_view()) {}
  string(std::string_view s) : string(try_make(s).value()) {}  // NOLINT: implicit, like std::string from a literal
  /// The non-throwing form: in firmware mode, an error when the object memory has no room.
  static result<string> try_make(std::string_view s) {
    RELAXVM_TRY_ASSIGN(string_object * o, try_make_raw_object_with_tail<string_object>(s.size() + 1, s.size()));
    if (!s.empty()) std::memcpy(o->chars(), s.data(), s.size());
    o->chars()[s.size()] = '\0';
    return string(object_ref<string_object>::adopt(o));
  }
  string(const char* s) : string(std::string_view(s)) {}        // NOLINT
  string(const std::string& s) : string(std::string_view(s)) {}  // NOLINT
  string(detail::borrow_t b, string_object* o) noexcept : object_handle_base(b, o) {}

  std::string_view view() const noexcept { return {obj_->chars(), obj_->size}; }
  const char* c_str() const noexcept { return obj_->chars(); }
  std::size_t size() const noexcept { return obj_->size; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT
  std::string str() const { return std::string(view()); }

  friend bool operator==(const string& a, std::string_view b) noexcept { return a.view() == b; }


 private:
  explicit string(object_ref<string_object> o) noexcept : object_handle_base(std::move(o)) {}
};

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_STRING_HPP
