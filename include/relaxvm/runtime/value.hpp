// SPDX-License-Identifier: Apache-2.0
// value: what a register holds. Scalars inline, everything else as a reference-counted object.
// A value is 16 bytes; copying one that refers to an object adds a reference.
//
// Borrowed values: the VM lends its registers to callees as bit copies marked "borrowed", which
// neither add nor drop a reference. Copying a borrowed value gives an ordinary, owning one, so
// nothing a callee keeps can dangle.
#ifndef RELAXVM_RUNTIME_VALUE_HPP
#define RELAXVM_RUNTIME_VALUE_HPP

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/device.hpp"
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "object.hpp"
#include "shape.hpp"
#include "string.hpp"
#include "tensor.hpp"
#include "value_kind.hpp"

namespace relaxvm::RELAXVM_ABI {

class vm_context;  // runtime/context.hpp

/// A reference-counted handle a value can hold: shape, string, tensor, tuple, closure.
template <class H>
concept object_handle = requires(H h, const H& ch) {
  typename H::object_type;
  { H::kind } -> std::convertible_to<value_kind>;
  { ch.get() } -> std::convertible_to<const object*>;
  { h.detach() } -> std::same_as<object*>;
};

/// A handle that lends an object without owning a reference: the typed adapters pass
/// `const tensor&` parameters this way, at no reference-counting cost.
/// True for handles whose "no object" state is a value of their kind (shape (), tuple ()).
template <class H>
inline constexpr bool empty_is_value = requires { requires H::empty_is_value; };

template <object_handle H>
class borrowed {
 public:
  explicit borrowed(object* o) noexcept {
    ::new (static_cast<void*>(&h_)) H(detail::borrow, static_cast<typename H::object_type*>(o));
  }
  borrowed(const borrowed&) = delete;
  borrowed& operator=(const borrowed&) = delete;
  ~borrowed() {}  // h_ holds no reference, so it is never destroyed
  const H& get() const noexcept { return h_; }

 private:
  union {
    H h_;
  };
};

template <class T>
struct value_traits;  // how a C++ type converts from a value; specializations below and in later headers

class value {
 public:
  value() noexcept = default;
  value(std::nullptr_t) noexcept {}  // NOLINT
  /// Integers are held as int64: an unsigned value above INT64_MAX wraps, as a cast would.
  template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>)
  value(T v) noexcept : kind_(value_kind::int64) {  // NOLINT: implicit, like the reference's Any
    p_.i = static_cast<std::int64_t>(v);
  }
  /// Unscoped enums (kDLCPU, kDLFloat) are their integer values.
  template <class E>
    requires(std::is_enum_v<E> && std::is_convertible_v<E, std::int64_t>)
  value(E v) noexcept : value(static_cast<std::int64_t>(v)) {}  // NOLINT
  value(bool v) noexcept : kind_(value_kind::boolean) { p_.i = v ? 1 : 0; }  // NOLINT
  value(double v) noexcept : kind_(value_kind::float64) { p_.f = v; }       // NOLINT
  value(float v) noexcept : value(static_cast<double>(v)) {}                // NOLINT
  value(dtype v) noexcept : kind_(value_kind::dtype) { p_.i = v.pack(); }   // NOLINT
  value(DLDataType v) noexcept : value(dtype(v)) {}                          // NOLINT
  value(device v) noexcept : kind_(value_kind::device) { p_.i = v.pack(); }  // NOLINT
  value(DLDevice v) noexcept : value(device(v)) {}                           // NOLINT
  value(vm_context* ctx) noexcept : kind_(value_kind::context) { p_.ctx = ctx; }  // NOLINT
  /// A handle without an object (an undefined tensor, a moved-from string) becomes null, so
  /// that a value of an object kind always has its object. The empty shape and the empty tuple
  /// need no object and keep their kind.
  template <object_handle H>
  value(H h) noexcept : kind_(H::kind) {  // NOLINT
    p_.obj = h.detach();
    if (p_.obj == nullptr && !empty_is_value<H>) kind_ = value_kind::null;
  }
  value(std::string_view s) : value(relaxvm::string(s)) {}    // NOLINT
  value(const char* s) : value(relaxvm::string(s)) {}         // NOLINT: not the bool conversion
  value(const std::string& s) : value(relaxvm::string(s)) {}  // NOLINT
  /// Types whose value_traits can make a value (relaxvm/ext/pfr.hpp: reflected structs).
  template <class T>
    requires requires(const T& t) {
      { value_traits<T>::make(t) } -> std::same_as<value>;
    }
  value(const T& t) : value(value_traits<T>::make(t)) {}  // NOLINT
  /// Any other object (kind `object`).
  template <class T>
    requires std::is_base_of_v<object, T>
  value(object_ref<T> o) noexcept : kind_(value_kind::object) {  // NOLINT
    p_.obj = o.release();
    if (p_.obj == nullptr) kind_ = value_kind::null;
  }

  value(const value& o) noexcept : p_(o.p_), kind_(o.kind_) {
    if (holds_object(kind_) && p_.obj) p_.obj->inc_ref();
  }
  // The interpreter moves, borrows and drops values on every Call: these stay inline.
  RELAXVM_ALWAYS_INLINE value(value&& o) noexcept : p_(o.p_), kind_(o.kind_), borrowed_(o.borrowed_) {
    o.kind_ = value_kind::null;
    o.borrowed_ = false;
  }
  value& operator=(const value& o) noexcept {
    if (holds_object(o.kind_) && o.p_.obj) o.p_.obj->inc_ref();
    drop();
    p_ = o.p_;
    kind_ = o.kind_;
    borrowed_ = false;
    return *this;
  }
  RELAXVM_ALWAYS_INLINE value& operator=(value&& o) noexcept {
    if (this != &o) {
      drop();
      p_ = o.p_;
      kind_ = o.kind_;
      borrowed_ = o.borrowed_;
      o.kind_ = value_kind::null;
      o.borrowed_ = false;
    }
    return *this;
  }
  RELAXVM_ALWAYS_INLINE ~value() { drop(); }

  /// Makes this null, dropping any reference (inline, except in firmware mode: one copy there).
#if RELAXVM_HEAP
  RELAXVM_ALWAYS_INLINE
#else
  RELAXVM_NOINLINE
#endif
  void reset() noexcept {
    drop();
    kind_ = value_kind::null;
    borrowed_ = false;
  }

  value_kind kind() const noexcept { return kind_; }
  bool is_null() const noexcept { return kind_ == value_kind::null; }
  bool is_borrowed() const noexcept { return borrowed_; }
  /// The object this value refers to, or null.
  object* get_object() const noexcept { return holds_object(kind_) ? p_.obj : nullptr; }

  /// True when the value holds exactly a T (no conversion).
  template <class T>
  bool is() const noexcept {
    return value_traits<T>::is(*this);
  }
  /// The value as a T, converting where the conversion is exact (a bool or an int64 to double, an
  /// int64 to a narrower integer that holds it, ...); a type error (kind `type`) otherwise.
  template <class T>
  result<T> try_as() const {
    if (!value_traits<T>::check(*this))
      return detail::type_error("expected ", value_traits<T>::name, " but got ", describe());
    return value_traits<T>::get(*this);
  }
  template <class T>
  T as() const {
    return try_as<T>().value();
  }

  /// For messages: "tensor", or for numbers the kind and value ("int64 3000000000", "float64
  /// 2.5"), written when streamed into a text (so never with terse errors).
  struct description {
    const value& v;
    void write(detail::text& t) const {
      t << to_string(v.kind_);
      if (v.kind_ == value_kind::int64) t << ' ' << v.p_.i;
      if (v.kind_ == value_kind::boolean) t << (v.p_.i ? " true" : " false");
      if (v.kind_ == value_kind::float64) {
        t << ' ';
        detail::append_double(t, v.p_.f);
      }
    }
    friend detail::text& operator<<(detail::text& t, const description& d) {
      d.write(t);
      return t;
    }
  };
  description describe() const noexcept { return {*this}; }

  /// Lets copies of this value be made and dropped on several threads (see object::share).
  void share() const noexcept {
    if (object* o = get_object()) o->share();
  }

  // Unchecked accessors for code that has checked kind() (the interpreter, the adapters).
  std::int64_t raw_int() const noexcept { return p_.i; }
  double raw_double() const noexcept { return p_.f; }
  vm_context* raw_context() const noexcept { return p_.ctx; }
  /// The object of a value whose kind() is an object kind (null for the empty shape and tuple).
  object* raw_object() const noexcept { return p_.obj; }

  /// A bit copy that neither adds nor drops a reference; valid while `o` is.
  RELAXVM_ALWAYS_INLINE static value borrow(const value& o) noexcept {
    value v;
    v.p_ = o.p_;
    v.kind_ = o.kind_;
    v.borrowed_ = holds_object(o.kind_);
    return v;
  }
  /// A borrow of handle `h`'s object, the value value(h) would be without its reference; valid
  /// while `h` is (static_vm::invoke<Name> passes its caller's handles so).
  template <object_handle H>
  RELAXVM_ALWAYS_INLINE static value borrow(const H& h) noexcept {
    value v;
    v.p_.obj = h.get();
    v.kind_ = v.p_.obj == nullptr && !empty_is_value<H> ? value_kind::null : H::kind;
    v.borrowed_ = v.p_.obj != nullptr;
    return v;
  }
  /// Makes `slot`, which owns no reference (null, a scalar or borrowed), a borrow of `o`, without
  /// the check a move assignment makes (the interpreters' argument scratch).
  RELAXVM_ALWAYS_INLINE static void borrow_into(value& slot, const value& o) noexcept {
    slot.p_ = o.p_;
    slot.kind_ = o.kind_;
    slot.borrowed_ = holds_object(o.kind_);
  }
  /// Moves `v` into `slot`, which owns no reference (null, a scalar or borrowed), without the
  /// check a move assignment makes (a static_vm's constants, made into null slots).
  RELAXVM_ALWAYS_INLINE static void move_into(value& slot, value&& v) noexcept {
    slot.p_ = v.p_;
    slot.kind_ = v.kind_;
    slot.borrowed_ = v.borrowed_;
    forget(v);
  }
  /// Makes `slot`, which owns no reference (null, a scalar or borrowed), null without the check
  /// reset() makes (the interpreters clear their argument scratch with it).
  RELAXVM_ALWAYS_INLINE static void forget(value& slot) noexcept {
    slot.kind_ = value_kind::null;
    slot.borrowed_ = false;
  }

 private:
  RELAXVM_ALWAYS_INLINE void drop() noexcept {
    if (holds_object(kind_) && !borrowed_ && p_.obj) p_.obj->dec_ref();
  }

  union payload {
    std::int64_t i;
    double f;
    vm_context* ctx;
    object* obj;
  };
  payload p_{0};
  value_kind kind_ = value_kind::null;
  bool borrowed_ = false;
};
static_assert(sizeof(value) == 16);

// ---- value_traits: is / check / get / name ---------------------------------------------

template <>
struct value_traits<value> {
  static constexpr std::string_view name = "any value";
  static constexpr kind_set kinds = any_kind;
  static bool is(const value&) noexcept { return true; }
  static bool check(const value&) noexcept { return true; }
  static value get(const value& v) { return v; }
};

template <std::integral T>
  requires(!std::same_as<T, bool>)
struct value_traits<T> {
  static constexpr std::string_view name = std::is_signed_v<T>
                                               ? (sizeof(T) == 1 ? "int8" : sizeof(T) == 2 ? "int16" : sizeof(T) == 4 ? "int32" : "int64")
                                               : (sizeof(T) == 1 ? "uint8" : sizeof(T) == 2 ? "uint16" : sizeof(T) == 4 ? "uint32" : "uint64");
  static constexpr kind_set kinds = kinds_of(value_kind::int64, value_kind::boolean);
  static bool is(const value& v) noexcept { return v.kind() == value_kind::int64 && fits(v.raw_int()); }
  // bools convert to integers, as in the reference.
  RELAXVM_ALWAYS_INLINE static bool check(const value& v) noexcept {
    return (v.kind() == value_kind::int64 && fits(v.raw_int())) || v.kind() == value_kind::boolean;
  }
  RELAXVM_ALWAYS_INLINE static T get(const value& v) noexcept { return static_cast<T>(v.raw_int()); }
  RELAXVM_ALWAYS_INLINE static constexpr bool fits(std::int64_t x) noexcept {
    if constexpr (std::is_same_v<T, std::uint64_t> || std::is_same_v<T, unsigned long> ||
                  std::is_same_v<T, unsigned long long>)
      return x >= 0;
    else
      return x >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
             x <= static_cast<std::int64_t>(std::numeric_limits<T>::max());
  }
};

template <>
struct value_traits<bool> {
  static constexpr std::string_view name = "bool";
  static constexpr kind_set kinds = kinds_of(value_kind::boolean, value_kind::int64);
  static bool is(const value& v) noexcept { return v.kind() == value_kind::boolean; }
  static bool check(const value& v) noexcept {
    return v.kind() == value_kind::boolean || v.kind() == value_kind::int64;
  }
  static bool get(const value& v) noexcept { return v.raw_int() != 0; }
};

template <std::floating_point T>
struct value_traits<T> {
  static constexpr std::string_view name = "float64";
  static constexpr kind_set kinds = kinds_of(value_kind::float64, value_kind::int64);
  static bool is(const value& v) noexcept { return v.kind() == value_kind::float64; }
  static bool check(const value& v) noexcept {
    return v.kind() == value_kind::float64 || v.kind() == value_kind::int64;
  }
  static T get(const value& v) noexcept {
    return static_cast<T>(v.kind() == value_kind::float64 ? v.raw_double() : static_cast<double>(v.raw_int()));
  }
};

template <>
struct value_traits<dtype> {
  static constexpr std::string_view name = "dtype";
  static constexpr kind_set kinds = kinds_of(value_kind::dtype);
  static bool is(const value& v) noexcept { return v.kind() == value_kind::dtype; }
  static bool check(const value& v) noexcept { return is(v); }
  static dtype get(const value& v) noexcept { return dtype::unpack(v.raw_int()); }
};

template <>
struct value_traits<device> {
  static constexpr std::string_view name = "device";
  static constexpr kind_set kinds = kinds_of(value_kind::device);
  static bool is(const value& v) noexcept { return v.kind() == value_kind::device; }
  static bool check(const value& v) noexcept { return is(v); }
  static device get(const value& v) noexcept { return device::unpack(v.raw_int()); }
};

/// Handles (shape, string, tensor, tuple, closure): get() adds a reference; borrow() does not.
template <object_handle H>
struct value_traits<H> {
  static constexpr std::string_view name = to_string(H::kind);
  static constexpr kind_set kinds = kinds_of(H::kind);
  static bool is(const value& v) noexcept { return v.kind() == H::kind; }
  static bool check(const value& v) noexcept { return is(v); }
  static H get(const value& v) noexcept { return borrowed<H>(v.get_object()).get(); }
};

template <>
struct value_traits<std::string> {
  static constexpr std::string_view name = "string";
  static constexpr kind_set kinds = kinds_of(value_kind::string);
  static bool is(const value& v) noexcept { return v.kind() == value_kind::string; }
  static bool check(const value& v) noexcept { return is(v); }
  static std::string get(const value& v) {
    return std::string(static_cast<const string_object*>(v.get_object())->chars(),
                       static_cast<const string_object*>(v.get_object())->size);
  }
};

template <>
struct value_traits<std::string_view> {
  static constexpr std::string_view name = "string";
  static constexpr kind_set kinds = kinds_of(value_kind::string);
  static bool is(const value& v) noexcept { return v.kind() == value_kind::string; }
  static bool check(const value& v) noexcept { return is(v); }
  /// Valid while the value (or another reference to its string) lives.
  static std::string_view get(const value& v) noexcept {
    const auto* s = static_cast<const string_object*>(v.get_object());
    return {s->chars(), s->size};
  }
};

template <>
struct value_traits<vm_context*> {
  static constexpr std::string_view name = "the vm context (%vm)";
  static constexpr kind_set kinds = kinds_of(value_kind::context);
  static bool is(const value& v) noexcept { return v.kind() == value_kind::context; }
  static bool check(const value& v) noexcept { return is(v); }
  static vm_context* get(const value& v) noexcept { return v.raw_context(); }
};

/// Any other object type T: the value must hold an object of exactly that type.
template <class T>
  requires std::is_base_of_v<object, T>
struct value_traits<object_ref<T>> {
  static constexpr std::string_view name = T::type_name;
  static constexpr kind_set kinds = kinds_of(value_kind::object);
  static bool is(const value& v) noexcept {
    return v.kind() == value_kind::object && v.get_object() && v.get_object()->template is<T>();
  }
  static bool check(const value& v) noexcept { return is(v); }
  static object_ref<T> get(const value& v) noexcept { return object_ref<T>::retain(static_cast<T*>(v.get_object())); }
};

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_VALUE_HPP
