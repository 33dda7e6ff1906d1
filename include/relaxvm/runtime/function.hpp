// SPDX-License-Identifier: Apache-2.0
// Functions as values. A closure is either a packed function (C++ code behind one calling
// convention) or a VM function of some executable; both may carry captured arguments, which are
// passed after the call's own (the reference's make_closure order).
//
// The packed calling convention is the hot path of the VM:
//   bool invoke(const closure_object& self, const value* args, uint32_t nargs, value& ret,
//               std::optional<error>& err)
// Arguments are borrowed (no reference counting); on success the result is written to `ret` and
// the function returns true; on failure it stores an error in `err` and returns false, leaving
// `ret` as it was. make_typed() adapts an ordinary C++ callable to it, checking every argument;
// such a function is done with its arguments before it writes `ret` (result_after_args), so the
// VM lets it write straight into a register that an argument came from.
#ifndef RELAXVM_RUNTIME_FUNCTION_HPP
#define RELAXVM_RUNTIME_FUNCTION_HPP

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
#include "../base/text.hpp"
#include "object.hpp"
#include "string.hpp"
#include "value.hpp"

namespace relaxvm::RELAXVM_ABI {

struct closure_object;

using packed_invoke = bool (*)(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                               std::optional<error>& err);
/// A packed function's invoke for one call site of a program, chosen once when a VM is made (see
/// closure_object::prepare).
using packed_prepare = packed_invoke (*)(const value* args, std::uint32_t nargs, std::uint64_t fixed);

struct closure_object : object {
  static constexpr std::string_view type_name = "relaxvm.closure";
  enum class kind_t : std::uint8_t { packed, vm };

  closure_object(kind_t k, relaxvm::string n) noexcept : fn_kind(k), name(std::move(n)) {}
  ~closure_object() {
    for (value& v : bound) v.~value();
  }
  void share_children() noexcept {
    if (auto* s = name.get()) s->share();
    if (target) target->share();
    for (const value& v : bound) v.share();
  }

  /// The packed function that runs (itself, or the closure it was bound from).
  const closure_object& callee() const noexcept { return target ? *target : *this; }

  kind_t fn_kind;
  relaxvm::string name;
  packed_invoke invoke = nullptr;      ///< packed functions
  /// Packed functions: `invoke` reads every argument before it writes `ret`, so `ret` may alias
  /// one of them (true for make_typed; raw functions may interleave, so false for them).
  bool result_after_args = false;
  /// Packed functions, optional: called once for each call site when a VM is made, with the
  /// call's arguments as they will be passed, those the program fixes (immediates, constants,
  /// %vm: bit k of `fixed` for argument k) in place and the others null. It returns an invoke for
  /// that site, which may take the fixed arguments as already checked, or nullptr to keep
  /// `invoke`. The invoke it returns must give exactly the results and errors of `invoke` (the
  /// builtins' call `invoke` for anything but their common case).
  packed_prepare prepare = nullptr;
  object_ref<closure_object> target;   ///< packed functions with bound arguments: what they call
  std::int64_t func_index = -1;        ///< vm functions: index in the function table
  /// vm functions: the executable they belong to, kept alive, so that a closure cannot outlive
  /// its program and be mistaken for a function of another executable at the same address.
  std::shared_ptr<const void> program;
  /// Captured arguments, passed after the call's own. They live in the object's own block, after
  /// it (bind() makes such closures), so capturing makes one allocation, from the object memory.
  std::span<value> bound;
};
static_assert(sizeof(closure_object) % alignof(value) == 0);

namespace detail {
/// For prepare functions: whether argument k is fixed, and whether arguments [from, nargs) all are.
constexpr bool is_fixed(std::uint64_t fixed, std::uint32_t k) noexcept { return (fixed >> k) & 1u; }
constexpr bool all_fixed(std::uint64_t fixed, std::uint32_t nargs, std::uint32_t from) noexcept {
  for (std::uint32_t k = from; k < nargs; ++k)
    if (!is_fixed(fixed, k)) return false;
  return true;
}
/// For prepared invokes: the packed function's own invoke, for what they do not serve.
inline bool invoke_general(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                           std::optional<error>& err) {
  return self.invoke(self, args, nargs, ret, err);
}

// The cold half of invoke_packed: joins the arguments and the captured values.
RELAXVM_NOINLINE inline bool invoke_packed_bound(const closure_object& fn, std::span<const value> args,
                                                 std::span<const value> bound, value& ret, std::optional<error>& err) {
  std::vector<value> all;
  all.reserve(args.size() + bound.size());
  for (const value& v : args) all.push_back(value::borrow(v));
  for (const value& v : bound) all.push_back(value::borrow(v));
  return fn.invoke(fn, all.data(), static_cast<std::uint32_t>(all.size()), ret, err);
}
/// Calls packed function `fn` with `args` followed by `bound` (captured values). The VM's hot path.
RELAXVM_ALWAYS_INLINE bool invoke_packed(const closure_object& fn, std::span<const value> args,
                                         std::span<const value> bound, value& ret, std::optional<error>& err) {
  if (RELAXVM_LIKELY(bound.empty()))
    return fn.invoke(fn, args.data(), static_cast<std::uint32_t>(args.size()), ret, err);
  return invoke_packed_bound(fn, args, bound, ret, err);
}
}  // namespace detail

/// A packed function that owns a callable of type F.
template <class F>
struct typed_closure : closure_object {
  static constexpr std::string_view type_name = "relaxvm.closure";
  typed_closure(std::string_view n, F fn) : closure_object(kind_t::packed, n), f(std::move(fn)) {}
  mutable F f;
};

class closure {
 public:
  using object_type = closure_object;
  static constexpr value_kind kind = value_kind::closure;

  closure() noexcept = default;
  explicit closure(object_ref<closure_object> o) noexcept : obj_(std::move(o)) {}
  closure(detail::borrow_t b, closure_object* o) noexcept : obj_(b, o) {}

  bool defined() const noexcept { return static_cast<bool>(obj_); }
  std::string_view name() const noexcept { return obj_->name.view(); }
  bool is_packed() const noexcept { return obj_->fn_kind == closure_object::kind_t::packed; }
  bool is_vm_function() const noexcept { return obj_->fn_kind == closure_object::kind_t::vm; }
  std::span<const value> bound() const noexcept { return obj_->bound; }

  /// A new closure that calls this one with `captured` appended after the call's arguments
  /// (and after any values this one already captured).
  closure bind(std::span<const value> captured) const { return try_bind(captured).value(); }
  /// The non-throwing form: in firmware mode, an error when the object memory has no room.
  result<closure> try_bind(std::span<const value> captured) const {
    const std::size_t n = obj_->bound.size() + captured.size();
    RELAXVM_TRY_ASSIGN(closure_object * raw,
                       try_make_raw_object_with_tail<closure_object>(n * sizeof(value), obj_->fn_kind, obj_->name));
    auto c = object_ref<closure_object>::adopt(raw);
    c->invoke = obj_->invoke;
    c->result_after_args = obj_->result_after_args;
    c->func_index = obj_->func_index;
    c->program = obj_->program;
    if (is_packed()) c->target = obj_->target ? obj_->target : obj_;
    auto* tail = reinterpret_cast<value*>(raw + 1);
    std::size_t k = 0;
    for (const value& v : obj_->bound) ::new (static_cast<void*>(tail + k++)) value(v);
    for (const value& v : captured) ::new (static_cast<void*>(tail + k++)) value(v);
    c->bound = std::span<value>(tail, n);
    return closure(std::move(c));
  }

  /// Calls a packed function (vm functions are called through their virtual_machine).
  result<value> try_call(std::span<const value> args) const {
    if (!obj_) return detail::value_error("closure: calling an undefined closure");
    if (is_vm_function())
      return detail::value_error("closure '", name(),
                                 "' is a vm function: call it through its virtual_machine (invoke_closure)");
    value ret;
    std::optional<error> err;
    if (!detail::invoke_packed(obj_->callee(), args, obj_->bound, ret, err)) return std::move(*err);
    return ret;
  }
  template <class... Args>
  value operator()(Args&&... args) const {
    std::array<value, sizeof...(Args)> a{value(std::forward<Args>(args))...};
    return try_call(a).value();
  }

  void share() const noexcept {
    if (obj_) obj_->share();
  }
  closure_object* get() const noexcept { return obj_.get(); }
  object* detach() noexcept { return obj_.release(); }
  friend bool operator==(const closure& a, const closure& b) noexcept { return a.obj_ == b.obj_; }

 private:
  object_ref<closure_object> obj_;
};

// ---- typed adapters ----------------------------------------------------------------------

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
  RELAXVM_ALWAYS_INLINE static bool check(const value& v) noexcept { return value_traits<D>::check(v); }
  explicit arg_holder(const value& v) : x(value_traits<D>::get(v)) {}
  D x;
  D& get() noexcept { return x; }
};
template <object_handle H>
struct arg_holder_handle {
  static constexpr std::string_view name = to_string(H::kind);
  static constexpr kind_set kinds = kinds_of(H::kind);
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
  static bool check(const value&) noexcept { return true; }
  explicit arg_holder(const value& v) noexcept : p(&v) {}
  const value* p;
  const value& get() const noexcept { return *p; }
};
template <>
struct arg_holder<vm_context&> {
  static constexpr std::string_view name = "the vm context (%vm)";
  static constexpr kind_set kinds = kinds_of(value_kind::context);
  static bool check(const value& v) noexcept { return v.kind() == value_kind::context; }
  explicit arg_holder(const value& v) noexcept : p(v.raw_context()) {}
  vm_context* p;
  vm_context& get() const noexcept { return *p; }
};

template <class P>
inline constexpr bool is_rest_v = std::is_same_v<std::remove_cvref_t<P>, std::span<const value>>;

/// Writes a C++ result into `ret`, or its error into `err`.
template <class R>
RELAXVM_ALWAYS_INLINE bool store_result(R&& r, value& ret, std::optional<error>& err) {
  using D = std::remove_cvref_t<R>;
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
    return store_result(call(), ret, err);
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
RELAXVM_NOINLINE inline bool argument_failed(std::string_view name, std::size_t i, std::string_view expected,
                                             const value& got, std::optional<error>& err) {
  err.emplace(type_error(name, ": argument ", i, " expects ", expected, " but got ", got.describe()));
  return false;
}

template <class... P>
constexpr bool last_is_rest() {
  if constexpr (sizeof...(P) == 0) return false;
  else return is_rest_v<std::tuple_element_t<sizeof...(P) - 1, std::tuple<P...>>>;
}

template <class F, class R, class Args>
struct typed_invoker;

template <class F, class R, class... P>
struct typed_invoker<F, R, type_list<P...>> {
  static constexpr std::size_t n = sizeof...(P);
  static constexpr bool variadic = last_is_rest<P...>();
  static constexpr std::size_t fixed = variadic ? n - 1 : n;

  /// What fixed parameter i accepts, and its name, for the compile-time linker.
  static constexpr kind_set param_kinds(std::size_t i) { return kinds_array(std::make_index_sequence<fixed>())[i]; }
  static constexpr std::string_view param_name(std::size_t i) {
    return names_array(std::make_index_sequence<fixed>())[i];
  }
  template <std::size_t... I>
  static constexpr std::array<kind_set, fixed + 1> kinds_array(std::index_sequence<I...>) {
    return {arg_holder<std::tuple_element_t<I, std::tuple<P...>>>::kinds..., 0};
  }
  template <std::size_t... I>
  static constexpr std::array<std::string_view, fixed + 1> names_array(std::index_sequence<I...>) {
    return {arg_holder<std::tuple_element_t<I, std::tuple<P...>>>::name..., ""};
  }
  static bool invoke(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                     std::optional<error>& err) {
    auto& fn = static_cast<const typed_closure<F>&>(self);
    return run([&self] { return self.name.view(); }, fn.f, args, nargs, ret, err);
  }

  /// Checks the arguments, converts them, calls f and stores its result. name_of() gives the
  /// function's name, for messages only.
  template <class NameOf, class G>
  RELAXVM_ALWAYS_INLINE static bool run(NameOf name_of, G& f, const value* args, std::uint32_t nargs, value& ret,
                                        std::optional<error>& err) {
    if (RELAXVM_UNLIKELY(variadic ? nargs < fixed : nargs != fixed))
      return arity_failed(name_of(), variadic, fixed, nargs, err);
    return call(name_of, f, args, nargs, ret, err, std::make_index_sequence<fixed>());
  }

  template <std::size_t I, class NameOf>
  RELAXVM_ALWAYS_INLINE static bool check_one(NameOf name_of, const value* args, std::optional<error>& err) {
    using P_ = std::tuple_element_t<I, std::tuple<P...>>;
    if (RELAXVM_LIKELY(arg_holder<P_>::check(args[I]))) return true;
    return argument_failed(name_of(), I, arg_holder<P_>::name, args[I], err);
  }

  template <class NameOf, class G, std::size_t... I>
  RELAXVM_ALWAYS_INLINE static bool call(NameOf name_of, G& f, const value* args, std::uint32_t nargs, value& ret,
                                         std::optional<error>& err, std::index_sequence<I...>) {
    (void)nargs;
    if (!(check_one<I>(name_of, args, err) && ...)) return false;
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
struct raw_invoker {
  static bool invoke(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                     std::optional<error>& err) {
    auto& fn = static_cast<const typed_closure<F>&>(self);
    return run([&self] { return self.name.view(); }, fn.f, args, nargs, ret, err);
  }
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

#endif  // RELAXVM_RUNTIME_FUNCTION_HPP
