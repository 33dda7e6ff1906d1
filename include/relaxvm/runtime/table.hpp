// SPDX-License-Identifier: Apache-2.0
// Constexpr function tables: packed functions named by compile-time strings, with their typed
// C++ signatures. A table is a literal value:
//
//   constexpr auto table = relaxvm::make_table(relaxvm::fn<"vm.add">(&add),
//                                              relaxvm::packed<"vm.sum_all">(&sum_all),
//                                              relaxvm::builtins::table);
//
// fn<Name>(f) adapts f like make_typed (each argument checked and converted); packed<Name>(f)
// takes f(std::span<const value>) like make_packed. Tables nest: make_table flattens them. The
// compile-time linker (vm/link.hpp) checks a static executable against a table and calls its
// entries through a constexpr array of function pointers; registry::add_table registers a table
// at run time.
#ifndef RELAXVM_RUNTIME_TABLE_HPP
#define RELAXVM_RUNTIME_TABLE_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../base/fixed_string.hpp"
#include "adapters.hpp"
#include "value.hpp"

namespace relaxvm::RELAXVM_ABI {

/// The calling convention of table entries: like packed_invoke, without a closure object.
using table_invoke = bool (*)(const value* args, std::uint32_t nargs, value& ret, std::optional<error>& err);

/// What a function makes in firmware mode's object memory on each call, for the linker's object
/// figure (linked::object_bytes, vm/storage_facts.hpp). by_return (what an entry that says
/// nothing gets): decided by what it returns: none for a typed function returning nothing, a
/// number, a dtype or a device (it makes no object the VM keeps), else unknown (objects of a size
/// the program does not fix). The others are said by the function's entry, through its Site type
/// (`static constexpr object_rule objects`; makes<R> says only that): none; one storage record
/// (storage); one tensor object holding the shape it was given (tensor); an int64 tensor with its
/// shape and storage (shape_heap); a shape of as many dimensions as the immediate argument 1
/// (shape_of_count) or as the arguments after the first (shape_of_indices); a tuple of the
/// arguments (tuple_of_args).
enum class object_rule : std::uint8_t {
  by_return,
  unknown,
  none,
  storage,
  tensor,
  shape_heap,
  shape_of_count,
  shape_of_indices,
  tuple_of_args
};
/// A Site for fn<> and packed<> that only says what the function makes:
/// fn<"my.lookup", makes<object_rule::none>>(&lookup) for a function returning a value it was given.
template <object_rule R>
struct makes {
  static constexpr object_rule objects = R;
};

namespace detail {
/// The rule an entry with this Site follows; by_return resolved by `returns_object` (whether what
/// the function returns may be an object).
template <class Site>
constexpr object_rule object_rule_of(bool returns_object) {
  object_rule r = object_rule::by_return;
  if constexpr (requires { Site::objects; }) r = Site::objects;
  if (r != object_rule::by_return) return r;
  return returns_object ? object_rule::unknown : object_rule::none;
}
}  // namespace detail

/// One named function of a table. Raw entries see their arguments as a span. `Site`, when not
/// void, gives versions of the function specialized for the constant arguments of a call site,
/// which link() binds where they apply (vm/call_site.hpp).
template <fixed_string Name, class F, bool Raw, class Site = void>
struct table_entry {
  static_assert(Name.size() > 0, "relaxvm::fn: a function needs a non-empty name");
  using function_type = F;
  using invoker = std::conditional_t<Raw, detail::raw_invoker<F>,
                                     detail::typed_invoker<F, typename detail::signature<F>::ret,
                                                           typename detail::signature<F>::args>>;
  using site = Site;
  static constexpr std::string_view name = Name.view();
  static constexpr bool raw = Raw;

  F f;
  /// An invoke for each call site, chosen when a VM is made (closure_object::prepare), or null.
  packed_prepare prepare = nullptr;

  bool call(const value* args, std::uint32_t nargs, value& ret, std::optional<error>& err) const {
    return invoker::run([] { return name; }, f, args, nargs, ret, err);
  }
};

/// A typed function: fn<"vm.add">(&add), or a captureless lambda.
/// With `prepare`, the VM asks it for an invoke of each call site (closure_object::prepare);
/// with a `Site` type, link() binds its specialized versions (vm/call_site.hpp).
template <fixed_string Name, class Site = void, class F>
constexpr table_entry<Name, F, false, Site> fn(F f, packed_prepare prepare = nullptr) {
  return {f, prepare};
}
/// A raw packed function: f(std::span<const value>) returning value, result<value>, or void.
template <fixed_string Name, class Site = void, class F>
constexpr table_entry<Name, F, true, Site> packed(F f, packed_prepare prepare = nullptr) {
  return {f, prepare};
}

template <class... E>
struct fn_table;

namespace detail {
template <class T>
inline constexpr bool is_table_entry_v = false;
template <fixed_string N, class F, bool R, class S>
inline constexpr bool is_table_entry_v<table_entry<N, F, R, S>> = true;
template <class T>
inline constexpr bool is_fn_table_v = false;
template <class... E>
inline constexpr bool is_fn_table_v<fn_table<E...>> = true;

// A table's entries: one base per entry, found by its index. A flat layout, not std::tuple's
// recursive one: a table of the ~60 builtins is a constant in every translation unit that
// includes relaxvm.hpp, and std::tuple (with tuple_cat and apply) made it cost about a second
// of compile time there.
template <std::size_t I, class E>
struct table_slot {
  E entry;
};
template <class Indices, class... E>
struct table_slots;
template <std::size_t... I, class... E>
struct table_slots<std::index_sequence<I...>, E...> : table_slot<I, E>... {
  constexpr explicit table_slots(const E&... e) : table_slot<I, E>{e}... {}
};
template <std::size_t I, class E>
constexpr const E& slot(const table_slot<I, E>& s) {
  return s.entry;
}
}  // namespace detail

/// What the linker needs to know of one entry, without its type.
struct entry_info {
  std::string_view name;
  bool raw = false;
  bool variadic = false;  ///< typed, with a trailing std::span<const value>
  std::size_t fixed = 0;  ///< typed: the parameters before the span
  kind_set (*param_kinds)(std::size_t) = nullptr;
  std::string_view (*param_name)(std::size_t) = nullptr;
  /// typed: whether parameter i's check passes for every value of `kind` (and, for an integer,
  /// `scalar`): the linker then leaves it out of that call site's checks.
  bool (*param_passes)(std::size_t, value_kind, std::int64_t) = nullptr;
  /// What it makes in object memory (object_rule; by_return resolved: a typed function's return
  /// type decides, runtime/adapters.hpp's returns_no_object, and a raw one's is unknown).
  object_rule objects = object_rule::unknown;
};

/// A table of named functions, each a literal value (a function pointer or a captureless lambda).
template <class... E>
struct fn_table {
  detail::table_slots<std::index_sequence_for<E...>, E...> entries;

  static constexpr std::size_t size = sizeof...(E);

  constexpr explicit fn_table(const E&... e) : entries(e...) {}

  /// Entry I.
  template <std::size_t I>
  constexpr const auto& get() const {
    return detail::slot<I>(entries);
  }
  /// Calls f(entry) for each entry, in order.
  template <class F>
  constexpr void for_each(F&& f) const {
    [&]<std::size_t... I>(std::index_sequence<I...>) { (f(detail::slot<I>(entries)), ...); }(
        std::index_sequence_for<E...>{});
  }

  /// Index of the entry called `name`, or -1.
  static constexpr std::int64_t find(std::string_view name) {
    constexpr std::string_view names[] = {E::name..., ""};
    for (std::size_t i = 0; i < size; ++i)
      if (names[i] == name) return static_cast<std::int64_t>(i);
    return -1;
  }
  static constexpr entry_info info(std::size_t i) {
    constexpr entry_info all[] = {describe<E>()..., entry_info{}};
    return all[i];
  }
  /// The first name that appears twice, or "" when every name is unique.
  static constexpr std::string_view duplicate() {
    constexpr std::string_view names[] = {E::name..., ""};
    for (std::size_t i = 0; i < size; ++i)
      for (std::size_t j = i + 1; j < size; ++j)
        if (names[i] == names[j]) return names[i];
    return {};
  }

 private:
  template <class Entry>
  static constexpr entry_info describe() {
    if constexpr (Entry::raw) {
      return entry_info{Entry::name, true, false, 0, nullptr, nullptr, nullptr,
                        detail::object_rule_of<typename Entry::site>(true)};
    } else {
      using inv = typename Entry::invoker;
      return entry_info{Entry::name, false, inv::variadic, inv::fixed, &inv::param_kinds, &inv::param_name,
                        &inv::param_passes, detail::object_rule_of<typename Entry::site>(inv::returns_object)};
    }
  }
};

namespace detail {
template <class T>
constexpr auto as_table(const T& x) {
  if constexpr (is_fn_table_v<T>) return x;
  else return fn_table<T>(x);
}
template <class... T>
struct joined;
template <class... E>
struct joined<fn_table<E...>> {
  using type = fn_table<E...>;
};
template <class... A, class... B, class... Rest>
struct joined<fn_table<A...>, fn_table<B...>, Rest...> : joined<fn_table<A..., B...>, Rest...> {};

template <std::size_t P, class T, class... Rest>
constexpr const auto& nth(const T& first, const Rest&... rest) {
  if constexpr (P == 0) return first;
  else return nth<P - 1>(rest...);
}
struct slot_at {
  std::size_t part = 0, index = 0;
};
/// The tables `t...` as one, in order.
template <class... T>
constexpr auto join(const T&... t) {
  constexpr std::size_t n = (T::size + ...);
  constexpr auto where = [] {
    std::array<slot_at, n> w{};
    std::size_t k = 0, p = 0;
    ((void)[&] {
       for (std::size_t i = 0; i < T::size; ++i) w[k++] = {p, i};
       ++p;
     }(), ...);
    return w;
  }();
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    return typename joined<T...>::type(nth<where[K].part>(t...).template get<where[K].index>()...);
  }(std::make_index_sequence<n>{});
}
}  // namespace detail

/// A table of entries and other tables (flattened), in order.
template <class... T>
constexpr auto make_table(const T&... parts) {
  static_assert(((detail::is_table_entry_v<T> || detail::is_fn_table_v<T>) && ...),
                "relaxvm::make_table takes fn<Name>(f), packed<Name>(f) and other tables");
  if constexpr (sizeof...(T) == 0) return fn_table<>();
  else if constexpr ((detail::is_table_entry_v<T> && ...)) return fn_table<T...>(parts...);
  else return detail::join(detail::as_table(parts)...);
}

namespace detail {
/// The table_invoke of entry I of the table `T` (a constexpr object with static storage).
/// The entry's function is a constant here, so the call is direct and the table object itself
/// is never read at run time (a firmware image keeps only the entries a program calls).
template <const auto& T, std::size_t I>
bool table_thunk(const value* args, std::uint32_t nargs, value& ret, std::optional<error>& err) {
  using entry = std::remove_cvref_t<decltype(T.template get<I>())>;
  static constexpr typename entry::function_type f = T.template get<I>().f;
  return entry::invoker::run([] { return entry::name; }, f, args, nargs, ret, err);
}
/// Entry's version for call site C (vm/call_site.hpp), with the entry's guard: with exceptions
/// enabled, what it throws becomes the call's error, as for the entry itself.
template <class Entry, class C>
bool site_thunk(const value* args, std::uint32_t nargs, value& ret, std::optional<error>& err) {
  return guarded([] { return Entry::name; }, err, [&]() RELAXVM_LAMBDA_INLINE {
    return Entry::site::template run<C>(args, nargs, ret, err);
  });
}
/// The same for a call site whose argument count the linker checked and whose parameters in
/// the mask `Known` (bit i: parameter i) pass their checks whatever the program runs with.
template <const auto& T, std::size_t I, std::uint64_t Known>
bool table_thunk_known(const value* args, std::uint32_t nargs, value& ret, std::optional<error>& err) {
  using entry = std::remove_cvref_t<decltype(T.template get<I>())>;
  static constexpr typename entry::function_type f = T.template get<I>().f;
  return entry::invoker::template run_known<Known>([] { return entry::name; }, f, args, nargs, ret, err);
}
}  // namespace detail

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_TABLE_HPP
