// SPDX-License-Identifier: Apache-2.0
// Tuples and the Relay VM's algebraic data types (tuples with a constructor tag):
//   vm.builtin.make_tuple(values...) -> tuple
//   vm.builtin.tuple_getitem(tuple, i) -> value          bounds-checked (the reference is not)
//   vm.builtin.tuple_reset_item(tuple, i)                 sets item i to null, in place
//   vm.builtin.make_adt(tag, fields...) -> tuple with tag (Relay AllocADT)
//   vm.builtin.get_tag(adt) -> int64                      the tag as an int (relaxvm's programs)
//   vm.builtin.get_tag_tensor(adt) -> tensor              Relay GetTag as TVM's VM gives it: an int32
//                                                         host tensor of shape [1]
//   vm.builtin.get_field(adt, i) -> value                 (Relay GetField)
#ifndef RELAXVM_BUILTINS_DATA_HPP
#define RELAXVM_BUILTINS_DATA_HPP

#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../runtime/context.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/tuple.hpp"
#include "../runtime/value.hpp"
#include "shape_heap.hpp"  // detail::host_vector

namespace relaxvm::RELAXVM_ABI::builtins {

namespace detail {
inline status check_index(std::string_view fn, const tuple& t, std::int64_t i) {
  if (i < 0 || i >= t.size())
    return relaxvm::detail::value_error(fn, ": index ", i, " is out of range for a tuple of ", t.size(), " items");
  return {};
}
}  // namespace detail

inline result<tuple> make_tuple(std::span<const value> fields) {
  RELAXVM_TRY(check_no_context("vm.builtin.make_tuple", "field", fields));
  return tuple::try_make(fields);
}

inline result<value> tuple_getitem(const tuple& t, std::int64_t i) {
  RELAXVM_TRY(detail::check_index("vm.builtin.tuple_getitem", t, i));
  return t[i];
}

inline status tuple_reset_item(const tuple& t, std::int64_t i) {
  RELAXVM_TRY(detail::check_index("vm.builtin.tuple_reset_item", t, i));
  t.set(i, value());
  return {};
}

inline result<tuple> make_adt(std::int64_t tag, std::span<const value> fields) {
  if (tag < std::numeric_limits<std::int32_t>::min() || tag > std::numeric_limits<std::int32_t>::max())
    return relaxvm::detail::value_error("vm.builtin.make_adt: tag ", tag, " does not fit int32");
  RELAXVM_TRY(check_no_context("vm.builtin.make_adt", "field", fields));
  return tuple::try_make(fields, static_cast<std::int32_t>(tag));
}

inline std::int64_t get_tag(const tuple& t) { return t.tag(); }

inline result<tensor> get_tag_tensor(const tuple& t) {
  // From the running VM's host allocator, as shape_to_tensor's tensors are.
  RELAXVM_TRY_ASSIGN(tensor out, detail::host_vector(running_context(), 1, dtype::int32()));
  const std::int32_t tag = t.tag();
  std::memcpy(out.raw_data(), &tag, sizeof tag);
  return out;
}

inline result<value> get_field(const tuple& t, std::int64_t i) {
  RELAXVM_TRY(detail::check_index("vm.builtin.get_field", t, i));
  return t[i];
}

inline constexpr auto data_table =
    make_table(packed<"vm.builtin.make_tuple", makes<object_rule::tuple_of_args>>(&make_tuple),
               fn<"vm.builtin.tuple_getitem", makes<object_rule::none>>(&tuple_getitem), fn<"vm.builtin.tuple_reset_item">(&tuple_reset_item),
               fn<"vm.builtin.make_adt">(&make_adt), fn<"vm.builtin.get_tag">(&get_tag),
               fn<"vm.builtin.get_tag_tensor">(&get_tag_tensor),
               fn<"vm.builtin.get_field", makes<object_rule::none>>(&get_field));

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_DATA_HPP
