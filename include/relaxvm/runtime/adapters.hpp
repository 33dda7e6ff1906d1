// SPDX-License-Identifier: Apache-2.0
// The typed adapters: make_typed() turns an ordinary C++ callable into a packed function
// (runtime/closure.hpp) that checks and converts every argument, and make_packed() one that takes
// its arguments as a span. Function tables (runtime/table.hpp) use the same adapters.
#ifndef RELAXVM_RUNTIME_ADAPTERS_HPP
#define RELAXVM_RUNTIME_ADAPTERS_HPP

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "closure.hpp"
#include "object.hpp"
#include "string.hpp"
#include "value.hpp"

namespace relaxvm::RELAXVM_ABI {

namespace detail {

template <class... T>
struct type_list {};

template <class F>
struct signature : signature<decltype(&std::remove_cvref_t<F>::operator())> {};
template <class R, class... A>
struct signature<R (*)(A...)> {
  using ret = R;
  using args = type_list<A...>;
};
template <class R, class... A>
struct signature<R (*)(A...) noexcept> : signature<R (*)(A...)> {};
template <class R, class... A>
struct signature<R(A...)> : signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct signature<R (C::*)(A...)> : signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct signature<R (C::*)(A...) const> : signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct signature<R (C::*)(A...) noexcept> : signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct signature<R (C::*)(A...) const noexcept> : signature<R (*)(A...)> {};

template <class T>
inline constexpr bool is_result_v = false;
template <class T>
inline constexpr bool is_result_v<result<T>> = true;

/// Whether a function returning R (or result<R>) hands back no object: nothing, a number, a dtype
/// or a device (what the linker's object figure, vm/storage_facts.hpp, needs to know of kernels).
template <class R>
constexpr bool returns_no_object() {
  using D = std::remove_cvref_t<R>;
  if constexpr (is_result_v<D>) {
    return returns_no_object<typename D::value_type>();
  } else {
    return std::is_void_v<D> || std::is_arithmetic_v<D> || std::is_same_v<D, dtype> || std::is_same_v<D, device>;
  }
}

template <class D>
concept convertible_from_value = requires(const value& v) {
  value_traits<D>::check(v);
  value_traits<D>::get(v);
};

/// The kinds a value_traits<D> accepts; any kind when a user's specialization does not say.
template <class D>
constexpr kind_set traits_kinds() {
  if constexpr (requires { value_traits<D>::kinds; }) return value_traits<D>::kinds;
  else return any_kind;
}

/// How one parameter of type P is obtained from a (checked) value.
template <class P>
struct arg_holder {
  using D = std::remove_cvref_t<P>;
  static_assert(convertible_from_value<D>,
                "relaxvm::make_typed: a parameter type has no conversion from relaxvm::value; use an integer, "
                "floating point, bool, dtype, device, shape, string, std::string(_view), tensor, tuple, closure, "
                "value, vm_context& or object_ref<T> parameter, or specialize relaxvm::value_traits");
  static constexpr std::string_view name = value_traits<D>::name;
  static constexpr kind_set kinds = traits_kinds<D>();
  /// Whether check() passes for every value of kind `k` (an integer: of value `x`). Known for
  /// relaxvm's own conversions, whose checks test the kind (and an integer's range); a user's
  /// value_traits is always checked.
  static constexpr bool passes(value_kind k, std::int64_t x) {
    if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool>)
      return k == value_kind::boolean || (k == value_kind::int64 && value_traits<D>::fits(x));
    else if constexpr (std::is_same_v<D, bool> || std::is_floating_point_v<D> || std::is_same_v<D, dtype> ||
                       std::is_same_v<D, device> || std::is_same_v<D, std::string_view> ||
                       std::is_same_v<D, vm_context*>
#if RELAXVM_HEAP
                       || std::is_same_v<D, std::string>
#endif
                       )
      return (kinds & kinds_of(k)) != 0;
    else
      return false;
  }
  RELAXVM_ALWAYS_INLINE static bool check(const value& v) noexcept { return value_traits<D>::check(v); }
  explicit arg_holder(const value& v) : x(value_traits<D>::get(v)) {}
  D x;
  D& get() noexcept { return x; }
};
template <object_handle H>
struct arg_holder_handle {
  static constexpr std::string_view name = to_string(H::kind);
  static constexpr kind_set kinds = kinds_of(H::kind);
  static constexpr bool passes(value_kind k, std::int64_t) { return k == H::kind; }
  static bool check(const value& v) noexcept { return v.kind() == H::kind; }
  explicit arg_holder_handle(const value& v) noexcept : b(v.raw_object()) {}  // check() passed: v is an H
  borrowed<H> b;
  const H& get() const noexcept { return b.get(); }
};
template <object_handle H>
struct arg_holder<H> : arg_holder_handle<H> {
  using arg_holder_handle<H>::arg_holder_handle;
};
template <object_handle H>
struct arg_holder<const H&> : arg_holder_handle<H> {
  using arg_holder_handle<H>::arg_holder_handle;
};
template <object_handle H>
struct arg_holder<const H> : arg_holder_handle<H> {
  using arg_holder_handle<H>::arg_holder_handle;
};
// A `const object_ref<T>&` parameter borrows the argument's object (no reference counting), as
// the handles above do: the reference is made without counting and never dropped.
template <class T>
struct arg_holder<const object_ref<T>&> {
  static constexpr std::string_view name = value_traits<object_ref<T>>::name;
  static constexpr kind_set kinds = value_traits<object_ref<T>>::kinds;
  static constexpr bool passes(value_kind, std::int64_t) { return false; }  // the object's type is checked
  RELAXVM_ALWAYS_INLINE static bool check(const value& v) noexcept { return value_traits<object_ref<T>>::check(v); }
  explicit arg_holder(const value& v) noexcept {
    ::new (static_cast<void*>(&r)) object_ref<T>(borrow, static_cast<T*>(v.raw_object()));
  }
  arg_holder(const arg_holder&) = delete;
  arg_holder& operator=(const arg_holder&) = delete;
  ~arg_holder() {}  // r holds no reference, so it is never destroyed
  const object_ref<T>& get() const noexcept { return r; }
  union {
    object_ref<T> r;
  };
};
template <class V>
  requires std::is_same_v<std::remove_cvref_t<V>, value>
struct arg_holder<V> {
  static constexpr std::string_view name = "any value";
  static constexpr kind_set kinds = any_kind;
  static constexpr bool passes(value_kind, std::int64_t) { return true; }
  static bool check(const value&) noexcept { return true; }
  explicit arg_holder(const value& v) noexcept : p(&v) {}
  const value* p;
  const value& get() const noexcept { return *p; }
};
template <>
struct arg_holder<vm_context&> {
  static constexpr std::string_view name = "the vm context (%vm)";
  static constexpr kind_set kinds = kinds_of(value_kind::context);
  static constexpr bool passes(value_kind k, std::int64_t) { return k == value_kind::context; }
  static bool check(const value& v) noexcept { return v.kind() == value_kind::context; }
  explicit arg_holder(const value& v) noexcept : p(v.raw_context()) {}
  vm_context* p;
  vm_context& get() const noexcept { return *p; }
};

template <class P>
inline constexpr bool is_rest_v = std::is_same_v<std::remove_cvref_t<P>, std::span<const value>>;

template <class R>
bool store_result(R&& r, value& ret, std::optional<error>& err);
#if !RELAXVM_HEAP
// Firmware mode: one copy of store_result for each type a function returns, shared by the
// functions that return it (their thunks only call it).
template <class D>
RELAXVM_NOINLINE bool store_result_out_of_line(D& r, value& ret, std::optional<error>& err) {
  return store_result<D>(std::move(r), ret, err);
}
#endif

/// Writes a C++ result into `ret`, or its error into `err`.
template <class R>
RELAXVM_ALWAYS_INLINE bool store_result(R&& r, value& ret, std::optional<error>& err) {
  using D = std::remove_cvref_t<R>;
#if !RELAXVM_HEAP
  if constexpr (std::is_same_v<R, D&> && is_result_v<D>) {  // from finish_call
    return store_result_out_of_line<D>(r, ret, err);
  } else
#endif
  if constexpr (is_result_v<D>) {
    if (!r.ok()) {
      err.emplace(std::forward<R>(r).error());
      return false;
    }
    if constexpr (std::is_void_v<typename D::value_type>) {
      ret.reset();
      return true;
    } else {
      return store_result(*std::forward<R>(r), ret, err);
    }
  } else {
    ret = value(std::forward<R>(r));
    return true;
  }
}

/// Calls `call` and stores what it returns in `ret` (null for void).
template <class Call>
RELAXVM_ALWAYS_INLINE bool finish_call(Call&& call, value& ret, std::optional<error>& err) {
  if constexpr (std::is_void_v<decltype(call())>) {
    call();
    ret.reset();
    return true;
  } else {
#if !RELAXVM_HEAP
    auto&& r = call();
    return store_result(r, ret, err);  // an lvalue: store_result_out_of_line
#else
    return store_result(call(), ret, err);
#endif
  }
}

/// Runs `body`; with exceptions enabled, what it throws becomes `err`, naming the function
/// (name_of() gives its name), so no exception ever crosses the packed calling convention.
template <class NameOf, class Body>
RELAXVM_ALWAYS_INLINE bool guarded(NameOf name_of, std::optional<error>& err, Body&& body) {
#if RELAXVM_USE_EXCEPTIONS
  try {
    return body();
  } catch (const error& e) {
    err.emplace(e);
  } catch (const std::exception& e) {
    err.emplace(runtime_error(name_of(), ": ", e.what()));
  } catch (...) {
    err.emplace(runtime_error(name_of(), ": an unknown exception was thrown"));
  }
  return false;
#else
  (void)name_of;
  (void)err;
  return body();
#endif
}

// The errors of the typed adapters, out of line: the adapters' hot path only tests and branches.
RELAXVM_NOINLINE inline bool arity_failed(std::string_view name, bool variadic, std::size_t fixed, std::uint32_t nargs,
                                          std::optional<error>& err) {
  err.emplace(type_error(name, ": expects ", variadic ? "at least " : "", fixed, " argument", fixed == 1 ? "" : "s",
                         " but got ", nargs));
  return false;
}
#if RELAXVM_ERROR_TEXT
RELAXVM_NOINLINE inline bool argument_failed(std::string_view name, std::size_t i, std::string_view expected,
                                             const value& got, std::optional<error>& err) {
  err.emplace(type_error(name, ": argument ", i, " expects ", expected, " but got ", got.describe()));
  return false;
}
#else
// Terse errors: what arity_failed and argument_failed both give. The name comes as its
// characters and length (g++ -Os builds a string_view argument on the stack at every call).
RELAXVM_NOINLINE inline bool typed_failed(const char* name, std::size_t size, std::optional<error>& err) {
  err.emplace(terse_error(error_kind::type, name, size));
  return false;
}
RELAXVM_ALWAYS_INLINE bool argument_failed(std::string_view name, std::size_t, std::string_view, const value&,
                                           std::optional<error>& err) {
  return typed_failed(name.data(), name.size(), err);
}
#endif

template <class... P>
constexpr bool last_is_rest() {
  if constexpr (sizeof...(P) == 0) return false;
  else return is_rest_v<std::tuple_element_t<sizeof...(P) - 1, std::tuple<P...>>>;
}

template <class F, class R, class Args>
struct typed_invoker;

/// The packed invoke of a typed_closure<F>: Invoker::run (typed or raw) on its callable, the
/// closure's name for messages.
template <class Invoker, class F>
struct closure_invoker {
  static bool invoke(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                     std::optional<error>& err) {
    auto& fn = static_cast<const typed_closure<F>&>(self);
    return Invoker::run([&self] { return self.name.view(); }, fn.f, args, nargs, ret, err);
  }
};

template <class F, class R, class... P>
struct typed_invoker<F, R, type_list<P...>> : closure_invoker<typed_invoker<F, R, type_list<P...>>, F> {
  static constexpr std::size_t n = sizeof...(P);
  static constexpr bool variadic = last_is_rest<P...>();
  static constexpr std::size_t fixed = variadic ? n - 1 : n;
  static constexpr bool returns_object = !returns_no_object<R>();

  /// What fixed parameter i accepts, and its name, for the compile-time linker.
  static constexpr kind_set param_kinds(std::size_t i) { return kinds_array(std::make_index_sequence<fixed>())[i]; }
  static constexpr std::string_view param_name(std::size_t i) {
    return names_array(std::make_index_sequence<fixed>())[i];
  }
  static constexpr bool param_passes(std::size_t i, value_kind k, std::int64_t x) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      bool r = false;
      ((I == i ? (void)(r = arg_holder<std::tuple_element_t<I, std::tuple<P...>>>::passes(k, x)) : (void)0), ...);
      return r;
    }(std::make_index_sequence<fixed>());
  }
  template <std::size_t... I>
  static constexpr std::array<kind_set, fixed + 1> kinds_array(std::index_sequence<I...>) {
    return {arg_holder<std::tuple_element_t<I, std::tuple<P...>>>::kinds..., 0};
  }
  template <std::size_t... I>
  static constexpr std::array<std::string_view, fixed + 1> names_array(std::index_sequence<I...>) {
    return {arg_holder<std::tuple_element_t<I, std::tuple<P...>>>::name..., ""};
  }
  /// Checks the arguments, converts them, calls f and stores its result. name_of() gives the
  /// function's name, for messages only.
  template <class NameOf, class G>
  RELAXVM_ALWAYS_INLINE static bool run(NameOf name_of, G& f, const value* args, std::uint32_t nargs, value& ret,
                                        std::optional<error>& err) {
#if RELAXVM_ERROR_TEXT
    if (RELAXVM_UNLIKELY(variadic ? nargs < fixed : nargs != fixed))
      return arity_failed(name_of(), variadic, fixed, nargs, err);
    return call<0>(name_of, f, args, nargs, ret, err, std::make_index_sequence<fixed>());
#else
    // Terse errors: a wrong count gives the argument checks' error (the function's name), so
    // call() tests the count with them, on their one failure path.
    return call<0, true>(name_of, f, args, nargs, ret, err, std::make_index_sequence<fixed>());
#endif
  }
  /// The same at a call site the linker checked: the argument count is right, and the
  /// parameters in the mask Known (bit i: parameter i) pass their checks (param_passes).
  template <std::uint64_t Known, class NameOf, class G>
  RELAXVM_ALWAYS_INLINE static bool run_known(NameOf name_of, G& f, const value* args, std::uint32_t nargs, value& ret,
                                              std::optional<error>& err) {
    return call<Known>(name_of, f, args, nargs, ret, err, std::make_index_sequence<fixed>());
  }

  /// Whether argument I passes its check; if not, `bad` is I.
  template <std::size_t I, std::uint64_t Known>
  RELAXVM_ALWAYS_INLINE static bool check_one(const value* args, std::size_t& bad) {
    using P_ = std::tuple_element_t<I, std::tuple<P...>>;
    if constexpr (I < 64) {
      if constexpr (((Known >> (I < 64 ? I : 0)) & 1) != 0) return true;
    }
    if (RELAXVM_LIKELY(arg_holder<P_>::check(args[I]))) return true;
    bad = I;
    return false;
  }

  /// Checks the arguments (and with CheckCount their count first), calls f, stores its result.
  template <std::uint64_t Known, bool CheckCount = false, class NameOf, class G, std::size_t... I>
  RELAXVM_ALWAYS_INLINE static bool call(NameOf name_of, G& f, const value* args, std::uint32_t nargs, value& ret,
                                         std::optional<error>& err, std::index_sequence<I...>) {
    (void)nargs;
    // One failure path for all the checks: the one that failed is found by its index.
    if constexpr (sizeof...(I) > 0 || CheckCount) {
      std::size_t bad = 0;
      const bool count_ok = !CheckCount || (variadic ? nargs >= fixed : nargs == fixed);
      if (RELAXVM_UNLIKELY(!count_ok || !(check_one<I, Known>(args, bad) && ...))) {
#if RELAXVM_ERROR_TEXT
        static constexpr std::array<std::string_view, fixed + 1> names = names_array(std::make_index_sequence<fixed>());
        return argument_failed(name_of(), bad, names[bad], args[bad], err);
#else
        return typed_failed(name_of().data(), name_of().size(), err);  // the message is the function's name
#endif
      }
    }
    // Returns by value: the argument holders are temporaries of this call, so a reference the
    // function returns into one of them is copied before they go.
    using V = std::conditional_t<std::is_void_v<R>, void, std::remove_cvref_t<R>>;
    return guarded(name_of, err, [&]() RELAXVM_LAMBDA_INLINE {
      return finish_call(
          [&]() RELAXVM_LAMBDA_INLINE -> V {
            if constexpr (variadic)
              return f(arg_holder<std::tuple_element_t<I, std::tuple<P...>>>(args[I]).get()...,
                       std::span<const value>(args + fixed, nargs - fixed));
            else
              return f(arg_holder<std::tuple_element_t<I, std::tuple<P...>>>(args[I]).get()...);
          },
          ret, err);
    });
  }
};

/// Raw packed functions: f(std::span<const value>) returning value, result<value> or void.
template <class F>
struct raw_invoker : closure_invoker<raw_invoker<F>, F> {
  template <class NameOf, class G>
  RELAXVM_ALWAYS_INLINE static bool run(NameOf name_of, G& f, const value* args, std::uint32_t nargs, value& ret,
                                        std::optional<error>& err) {
    const std::span<const value> a(args, nargs);
    return guarded(name_of, err, [&]() RELAXVM_LAMBDA_INLINE {
      return finish_call([&]() RELAXVM_LAMBDA_INLINE -> decltype(auto) { return f(a); }, ret, err);
    });
  }
};

}  // namespace detail

namespace detail {
/// vm.builtin.null_value (builtins/core.hpp registers it): defined here so that the VM can know
/// it by its address and clear the destination register instead of calling it (the lowering's
/// kills are calls of it).
inline value null_value() { return value(); }
/// Whether `c` is null_value as make_typed wraps it (not another function of the same name).
inline bool is_null_value(const closure_object& c) noexcept {
  using F = value (*)();
  return c.invoke == &typed_invoker<F, value, type_list<>>::invoke && static_cast<const typed_closure<F>&>(c).f == &null_value;
}
}  // namespace detail

/// A packed function that checks and converts each argument to the parameter types of `f`
/// (integers, floating point, bool, dtype, device, shape, string, std::string(_view), tensor,
/// tuple, closure, value, vm_context&, object_ref<T>; a trailing std::span<const value> takes the
/// remaining arguments). `f` returns void, a value-convertible type, or result<T>.
template <class F>
closure make_typed(std::string_view name, F f) {
  using sig = detail::signature<F>;
  auto c = make_object<typed_closure<F>>(name, std::move(f));
  c->invoke = &detail::typed_invoker<F, typename sig::ret, typename sig::args>::invoke;
  c->result_after_args = true;
  return closure(object_ref<closure_object>(c));
}

/// A packed function that sees its arguments as they are: f(std::span<const value>).
template <class F>
closure make_packed(std::string_view name, F f) {
  auto c = make_object<typed_closure<F>>(name, std::move(f));
  c->invoke = &detail::raw_invoker<F>::invoke;
  return closure(object_ref<closure_object>(c));
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_ADAPTERS_HPP
