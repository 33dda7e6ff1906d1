// SPDX-License-Identifier: Apache-2.0
// tuple: a fixed-size sequence of values with a tag. Tuples have tag 0; the Relay VM's algebraic
// data types (constructors) are tuples with the constructor's tag.
#ifndef RELAXVM_RUNTIME_TUPLE_HPP
#define RELAXVM_RUNTIME_TUPLE_HPP

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "object.hpp"
#include "value.hpp"
#include "value_kind.hpp"

namespace relaxvm::RELAXVM_ABI {

struct tuple_object : object {
  static constexpr std::string_view type_name = "relaxvm.tuple";
  tuple_object(std::int64_t n, std::int32_t t) : size(n), tag(t) {}
  ~tuple_object() {
    for (std::int64_t i = 0; i < size; ++i) fields()[i].~value();
  }
  void share_children() noexcept {
    for (std::int64_t i = 0; i < size; ++i) fields()[i].share();
  }
  std::int64_t size;
  std::int32_t tag;
  value* fields() noexcept { return reinterpret_cast<value*>(this + 1); }
  const value* fields() const noexcept { return reinterpret_cast<const value*>(this + 1); }
};
static_assert(sizeof(tuple_object) % alignof(value) == 0);

class tuple : public object_handle_base<tuple_object, value_kind::tuple> {
 public:
  static constexpr bool empty_is_value = true;  // no object: the empty tuple

  /// The empty tuple (no allocation).
  tuple() noexcept = default;
  tuple(std::initializer_list<value> fields) : tuple(std::span<const value>(fields.begin(), fields.size())) {}
  explicit tuple(std::span<const value> fields, std::int32_t tag = 0) : tuple(try_make(fields, tag).value()) {}
  /// The non-throwing form: in firmware mode, an error when the object memory has no room.
  static result<tuple> try_make(std::span<const value> fields, std::int32_t tag = 0) {
    tuple t;
    if (fields.empty() && tag == 0) return t;
    RELAXVM_TRY_ASSIGN(tuple_object * o, try_make_raw_object_with_tail<tuple_object>(
                                             fields.size() * sizeof(value), static_cast<std::int64_t>(fields.size()), tag));
    for (std::size_t i = 0; i < fields.size(); ++i) ::new (static_cast<void*>(o->fields() + i)) value(fields[i]);
    t.obj_ = object_ref<tuple_object>::adopt(o);
    return t;
  }
  tuple(detail::borrow_t b, tuple_object* o) noexcept : object_handle_base(b, o) {}

  /// An algebraic data type value: constructor `tag` with these fields.
  static tuple adt(std::int32_t tag, std::span<const value> fields) { return tuple(fields, tag); }

  std::int64_t size() const noexcept { return obj_ ? obj_->size : 0; }
  bool empty() const noexcept { return size() == 0; }
  std::int32_t tag() const noexcept { return obj_ ? obj_->tag : 0; }
  /// Field i; i must be in [0, size()).
  const value& operator[](std::int64_t i) const noexcept { return obj_->fields()[i]; }
  const value* begin() const noexcept { return obj_ ? obj_->fields() : nullptr; }
  const value* end() const noexcept { return begin() + size(); }
  std::span<const value> fields() const noexcept { return {begin(), static_cast<std::size_t>(size())}; }

  /// Replaces field i in place: every handle to this tuple sees it (vm.builtin.tuple_reset_item).
  void set(std::int64_t i, value v) const noexcept { obj_->fields()[i] = std::move(v); }

  // == compares tags and fields: runtime/compare.hpp (t.get() tells the same object).
};

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_TUPLE_HPP
