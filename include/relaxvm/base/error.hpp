// SPDX-License-Identifier: Apache-2.0
// Errors: relaxvm::error (a std::exception in hosted builds), result<T>, and the hook that the
// throwing API forms call when exceptions are disabled.
#ifndef RELAXVM_BASE_ERROR_HPP
#define RELAXVM_BASE_ERROR_HPP

#include <cstdint>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>


#include "config.hpp"
#if RELAXVM_HEAP
#include <string>  // error messages (firmware mode keeps them in the error itself)
#endif
#include "text_builder.hpp"

#if RELAXVM_HOSTED && RELAXVM_HEAP
#include <exception>
#endif
#if RELAXVM_HOSTED && RELAXVM_HEAP
#include <cstdio>
#include <cstdlib>
#endif

namespace relaxvm::RELAXVM_ABI {

/// The reference's error classes: a wrong kind of object is `type`, a wrong ndim/dtype/size or a
/// malformed input is `value`, a shape value mismatch at run time is `runtime`, a broken invariant
/// of relaxvm itself is `internal`; and `unsupported`: a well-formed input that relaxvm does not
/// implement (an ONNX operator, attribute or dtype without a converter or kernel), so a caller can
/// tell "not yet" from "wrong".
enum class error_kind : std::uint8_t { type, value, runtime, internal, unsupported };

constexpr std::string_view to_string(error_kind k) noexcept {
  switch (k) {
    case error_kind::type: return "TypeError";
    case error_kind::value: return "ValueError";
    case error_kind::runtime: return "RuntimeError";
    case error_kind::internal: return "InternalError";
    case error_kind::unsupported: return "NotImplementedError";
  }
  return "UnknownError";
}

// A std::exception in hosted builds with a heap. In firmware mode it is a plain class: no vtable,
// so no deleting destructor that would link operator delete and the C library's allocator.
#define RELAXVM_ERROR_IS_STD_EXCEPTION (RELAXVM_HOSTED && RELAXVM_HEAP)

/// An error with its kind and a message that says what is wrong, where, and what to do.
class error
#if RELAXVM_ERROR_IS_STD_EXCEPTION
    : public std::exception
#endif
{
 public:
#if RELAXVM_HEAP
  error(error_kind kind, std::string_view message) : kind_(kind), message_(message) {}
#else
  error(error_kind kind, std::string_view message) : kind_(kind) { append(message.data(), message.size()); }
  // Out of line, and copying only the characters in use: errors move through every result.
  RELAXVM_NOINLINE error(const error& o) noexcept : kind_(o.kind_), function_(o.function_), instruction_(o.instruction_) {
    append(o.message_, o.size_);
  }
  RELAXVM_NOINLINE error& operator=(const error& o) noexcept {
    if (this != &o) {
      kind_ = o.kind_;
      function_ = o.function_;
      instruction_ = o.instruction_;
      size_ = 0;
      append(o.message_, o.size_);
    }
    return *this;
  }
#endif

  error_kind kind() const noexcept { return kind_; }
#if RELAXVM_HEAP
  std::string_view message() const noexcept { return message_; }
#else
  std::string_view message() const noexcept { return std::string_view(message_, size_); }
#endif
  const char* what() const noexcept
#if RELAXVM_ERROR_IS_STD_EXCEPTION
      override
#endif
  {
#if RELAXVM_HEAP
    return message_.c_str();
#else
    return message_;
#endif
  }
  /// Where the program of the VM that returned the error was when it failed: the index of the
  /// function in its executable and the instruction's number in that function (the innermost
  /// frame of that VM's invocation; an error from a nested invocation of another VM, through a
  /// kernel, is placed at the kernel's call). -1 when the error did not come from running a
  /// program. Terse builds (RELAXVM_ERROR_TEXT=0) keep only these, not the "in function ..."
  /// lines of the message.
  std::int64_t function_index() const noexcept { return function_; }
  std::int64_t instruction() const noexcept { return instruction_; }
  /// Sets where the error happened (each invocation it leaves sets it again).
  void set_location(std::int64_t function, std::int64_t instruction) noexcept {
    function_ = function;
    instruction_ = instruction;
  }
  /// Adds a line of context (where the error happened) below the message.
  void add_context(std::string_view line) {
#if RELAXVM_HEAP
    message_ += "\n  ";
    message_ += line;
#else
    append("\n  ", 3);
    append(line.data(), line.size());
#endif
  }

 private:
  error_kind kind_;
  std::int64_t function_ = -1, instruction_ = -1;
#if RELAXVM_HEAP
  std::string message_;
#else
  // Firmware mode: the message lives in the error, cut at RELAXVM_TEXT_CAPACITY characters. The
  // text comes as its characters and length (g++ -Os builds a string_view argument on the stack).
  void append(const char* s, std::size_t n) noexcept {
    for (std::size_t k = 0; k < n; ++k) {
      if (size_ == RELAXVM_TEXT_CAPACITY) {  // cut: say so
        for (std::size_t i = size_ - 3; i < size_; ++i) message_[i] = '.';
        break;
      }
      message_[size_++] = s[k];
    }
    message_[size_] = '\0';
  }
  char message_[RELAXVM_TEXT_CAPACITY + 1];  // not zeroed: append() ends what it writes with a NUL
  std::size_t size_ = 0;
#endif
};

namespace detail {

/// A string literal as a string_view of constant length (converting a literal to a string_view,
/// g++ -Os calls strlen).
template <std::size_t N>
constexpr std::string_view literal(const char (&s)[N]) noexcept {
  return std::string_view(s, N - 1);
}

#if RELAXVM_ERROR_TEXT
template <class... Parts>
error make_error(error_kind kind, const Parts&... parts) {
  text t = cat(parts...);
  return error(kind, t.view());
}
#else
// Terse errors: the message is the first part when that is a name (the builtin's, or the program's
// error context; often all the sites of a function then share one error path). The other parts are
// not formatted, and their formatting code is not linked.
// The text goes as its characters and length: g++ -Os builds a string_view argument on the
// stack at every call.
RELAXVM_NOINLINE inline error terse_error(error_kind kind, const char* text, std::size_t size) {
  return error(kind, std::string_view(text, size));
}
template <class First, class... Rest>
error make_error(error_kind kind, const First& first, const Rest&... rest) {
  ((void)rest, ...);
  if constexpr (std::is_array_v<First>) {
    return terse_error(kind, first, literal(first).size());
  } else if constexpr (std::is_convertible_v<const First&, std::string_view>) {
    const std::string_view text(first);
    return terse_error(kind, text.data(), text.size());
  } else {
    return terse_error(kind, nullptr, 0);
  }
}
#endif
/// How a function that only makes an error is declared: out of line with full messages (their
/// formatting, once), inline with terse ones, where what is left (error(kind, first part)) is
/// one call, and a caller whose case is a constant keeps only that case.
#if RELAXVM_ERROR_TEXT
#define RELAXVM_ERROR_FN RELAXVM_NOINLINE inline
#else
#define RELAXVM_ERROR_FN RELAXVM_ALWAYS_INLINE
#endif
template <class... Parts>
error type_error(const Parts&... parts) {
  return make_error(error_kind::type, parts...);
}
template <class... Parts>
error value_error(const Parts&... parts) {
  return make_error(error_kind::value, parts...);
}
template <class... Parts>
error runtime_error(const Parts&... parts) {
  return make_error(error_kind::runtime, parts...);
}
template <class... Parts>
error internal_error(const Parts&... parts) {
  return make_error(error_kind::internal, parts...);
}
template <class... Parts>
error unsupported_error(const Parts&... parts) {
  return make_error(error_kind::unsupported, parts...);
}

#if RELAXVM_HOSTED && RELAXVM_HEAP
[[noreturn]] inline void default_error_handler(const error& e) noexcept {
  std::fprintf(stderr, "relaxvm: unhandled %.*s: %s\n", static_cast<int>(to_string(e.kind()).size()),
               to_string(e.kind()).data(), e.what());
  std::abort();
}
#else
[[noreturn]] inline void default_error_handler(const error&) noexcept { __builtin_trap(); }
#endif

}  // namespace detail

/// Errors for kernels to return (a result<T> or status converts from an error):
///   return rv::value_error("my.kernel: expects ", n, " rows but got ", x.shape()[0]);
/// The parts are written one after another (strings, numbers, dtype, device, shape texts); with
/// RELAXVM_ERROR_TEXT=0 (terse firmware errors) only the first part is kept when it is text, and
/// the rest is not formatted. The kinds are the reference's: type_error (TypeError: wrong kind of
/// argument or arity), value_error (ValueError: a bad value or shape), runtime_error
/// (RuntimeError: a failed check while running), internal_error (InternalError: a bug), and
/// unsupported_error (NotImplementedError: valid input relaxvm does not implement).
using detail::internal_error;
using detail::runtime_error;
using detail::type_error;
using detail::unsupported_error;
using detail::value_error;

}  // namespace relaxvm

/// RELAXVM_ON_ERROR (base/config.hpp): what the throwing forms call without exceptions.
#ifndef RELAXVM_ON_ERROR
#define RELAXVM_ON_ERROR(err) ::relaxvm::detail::default_error_handler(err)
#endif

namespace relaxvm::RELAXVM_ABI {
namespace detail {
/// Throws `e`, or hands it to RELAXVM_ON_ERROR when exceptions are disabled.
[[noreturn]] inline void raise(const error& e) {
#if RELAXVM_USE_EXCEPTIONS
  throw e;
#else
  RELAXVM_ON_ERROR(e);
  __builtin_trap();  // RELAXVM_ON_ERROR must not return
#endif
}
}  // namespace detail

/// Either a T or an error. The non-throwing form of every fallible operation returns one.
template <class T>
class [[nodiscard]] result {
  static_assert(!std::is_reference_v<T>, "relaxvm::result<T> holds values, not references");

 public:
  using value_type = T;

  template <class U = T>
    requires std::is_constructible_v<T, U&&> && (!std::is_same_v<std::remove_cvref_t<U>, result>) &&
             (!std::is_same_v<std::remove_cvref_t<U>, relaxvm::error>)
  result(U&& v) : ok_(true) {  // NOLINT(google-explicit-constructor): implicit like std::expected
    ::new (&value_) T(std::forward<U>(v));
  }
  // By reference: an error passed on (RELAXVM_TRY) is copied once, not into a parameter first.
  result(const relaxvm::error& e) : ok_(false) { ::new (&error_) relaxvm::error(e); }
  result(relaxvm::error&& e) : ok_(false) { ::new (&error_) relaxvm::error(std::move(e)); }
  /// A T made in place, T(args...), then checked by `init(T&)` (a status): the result holds the
  /// T, or init's error and no T. For a T that is never moved (static_vm::create): returned as
  /// a prvalue, or by a named result the caller's object is, it is made where it will live.
  template <class Init, class... A>
  result(std::in_place_t, Init&& init, A&&... args) : ok_(true) {
    ::new (&value_) T(std::forward<A>(args)...);
    if (auto s = init(value_); !s.ok()) {
      value_.~T();
      ok_ = false;
      ::new (&error_) relaxvm::error(std::move(s).error());
    }
  }
  result(const result& o) : ok_(o.ok_) {
    if (ok_) ::new (&value_) T(o.value_);
    else ::new (&error_) relaxvm::error(o.error_);
  }
  result(result&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : ok_(o.ok_) {
    if (ok_) ::new (&value_) T(std::move(o.value_));
    else ::new (&error_) relaxvm::error(std::move(o.error_));
  }
  result& operator=(result o) {
    destroy();
    ok_ = o.ok_;
    if (ok_) ::new (&value_) T(std::move(o.value_));
    else ::new (&error_) relaxvm::error(std::move(o.error_));
    return *this;
  }
  ~result() { destroy(); }

  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }

  /// The value; throws (or calls RELAXVM_ON_ERROR) when this holds an error.
  T& value() & {
    if (!ok_) detail::raise(error_);
    return value_;
  }
  const T& value() const& {
    if (!ok_) detail::raise(error_);
    return value_;
  }
  T&& value() && {
    if (!ok_) detail::raise(error_);
    return std::move(value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The value of a result known to hold one (RELAXVM_TRY_ASSIGN tested ok()): no test.
  T&& checked_value() && noexcept { return std::move(value_); }
  const T& checked_value() const& noexcept { return value_; }

  /// The error; only meaningful when !ok().
  const relaxvm::error& error() const& noexcept { return error_; }
  relaxvm::error&& error() && noexcept { return std::move(error_); }

 private:
  void destroy() noexcept {
    if (ok_) value_.~T();
    else error_.~error();
  }
  union {
    T value_;
    relaxvm::error error_;
  };
  bool ok_;
};

/// The result of an operation that returns nothing.
template <>
class [[nodiscard]] result<void> {
 public:
  using value_type = void;
  result() noexcept {}
  result(const relaxvm::error& e) : has_error_(true) { ::new (&error_) relaxvm::error(e); }
  result(relaxvm::error&& e) : has_error_(true) { ::new (&error_) relaxvm::error(std::move(e)); }
  result(const result& o) : has_error_(o.has_error_) {
    if (has_error_) ::new (&error_) relaxvm::error(o.error_);
  }
  result(result&& o) noexcept : has_error_(o.has_error_) {
    if (has_error_) ::new (&error_) relaxvm::error(std::move(o.error_));
  }
  result& operator=(result o) {
    destroy();
    has_error_ = o.has_error_;
    if (has_error_) ::new (&error_) relaxvm::error(std::move(o.error_));
    return *this;
  }
  ~result() { destroy(); }

  bool ok() const noexcept { return !has_error_; }
  explicit operator bool() const noexcept { return !has_error_; }
  void value() const {
    if (has_error_) detail::raise(error_);
  }
  const relaxvm::error& error() const& noexcept { return error_; }
  relaxvm::error&& error() && noexcept { return std::move(error_); }

 private:
  void destroy() noexcept {
    if (has_error_) error_.~error();
  }
  union {
    char unused_ = 0;
    relaxvm::error error_;
  };
  bool has_error_ = false;
};

using status = result<void>;

}  // namespace relaxvm

/// Inside a function returning result<U> or status: evaluates a status expression and returns
/// its error, if any, from the enclosing function.
#define RELAXVM_TRY(...)                                                         \
  do {                                                                           \
    auto&& relaxvm_try_status_ = (__VA_ARGS__);                                  \
    if (!relaxvm_try_status_.ok()) return std::move(relaxvm_try_status_).error(); \
  } while (false)

/// Inside a function returning result<U> or status: `RELAXVM_TRY_ASSIGN(auto x, f());` declares
/// x from f()'s value, or returns f()'s error from the enclosing function.
#define RELAXVM_TRY_ASSIGN(decl, ...)                                                          \
  auto&& RELAXVM_DETAIL_CONCAT(relaxvm_try_, __LINE__) = (__VA_ARGS__);                        \
  if (!RELAXVM_DETAIL_CONCAT(relaxvm_try_, __LINE__).ok())                                     \
    return std::move(RELAXVM_DETAIL_CONCAT(relaxvm_try_, __LINE__)).error();                   \
  decl = std::move(RELAXVM_DETAIL_CONCAT(relaxvm_try_, __LINE__)).checked_value()

#endif  // RELAXVM_BASE_ERROR_HPP
