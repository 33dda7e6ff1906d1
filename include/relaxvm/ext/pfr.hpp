// SPDX-License-Identifier: Apache-2.0
// Optional: plain structs as packed-function arguments and results, through Boost.PFR. A struct
// that opts in converts from a tuple value whose fields convert to its members (checked one by
// one), and to such a tuple when a function returns it.
//
//   struct conv_params { std::int64_t stride; std::int64_t padding; relaxvm::dtype out_type; };
//   template <> inline constexpr bool relaxvm::reflect_as_tuple<conv_params> = true;
//   reg.def("my.conv", [](const relaxvm::tensor& x, const conv_params& p) { ... });
//
// Requires Boost 1.75 or newer (Debian: libboost1.81-dev). Not included by <relaxvm.hpp>.
#ifndef RELAXVM_EXT_PFR_HPP
#define RELAXVM_EXT_PFR_HPP

#include "../base/config.hpp"
#if !RELAXVM_HOSTED
#error "relaxvm/ext/pfr.hpp needs a hosted build (Boost.PFR)"
#endif

#include <boost/pfr.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

#include "../runtime/tuple.hpp"
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI {

/// Specialize as true for an aggregate struct to pass it as a tuple of its fields.
template <class T>
inline constexpr bool reflect_as_tuple = false;

template <class T>
  requires(std::is_aggregate_v<T> && reflect_as_tuple<T>)
struct value_traits<T> {
  static constexpr std::size_t fields = boost::pfr::tuple_size_v<T>;
  static constexpr std::string_view name = "a tuple of a reflected struct's fields";
  static constexpr kind_set kinds = kinds_of(value_kind::tuple);

  template <std::size_t I>
  using field_t = std::remove_cvref_t<boost::pfr::tuple_element_t<I, T>>;

  static bool is(const value& v) noexcept { return check_with(v, [](auto tr, const value& f) { return tr.is(f); }); }
  static bool check(const value& v) noexcept {
    return check_with(v, [](auto tr, const value& f) { return tr.check(f); });
  }
  static T get(const value& v) { return get_impl(v.as<tuple>(), std::make_index_sequence<fields>()); }
  static value make(const T& t) { return make_impl(t, std::make_index_sequence<fields>()); }

 private:
  template <class F>
  static bool check_with(const value& v, F f) noexcept {
    if (v.kind() != value_kind::tuple) return false;
    const tuple t = v.as<tuple>();
    if (t.size() != static_cast<std::int64_t>(fields)) return false;
    return check_fields(t, f, std::make_index_sequence<fields>());
  }
  template <class F, std::size_t... I>
  static bool check_fields(const tuple& t, F f, std::index_sequence<I...>) noexcept {
    return (f(value_traits<field_t<I>>{}, t[static_cast<std::int64_t>(I)]) && ...);
  }
  template <std::size_t... I>
  static T get_impl(const tuple& t, std::index_sequence<I...>) {
    return T{value_traits<field_t<I>>::get(t[static_cast<std::int64_t>(I)])...};
  }
  template <std::size_t... I>
  static value make_impl(const T& s, std::index_sequence<I...>) {
    return value(tuple{value(boost::pfr::get<I>(s))...});
  }
};

}  // namespace relaxvm

#endif  // RELAXVM_EXT_PFR_HPP
