// SPDX-License-Identifier: Apache-2.0
// Core builtins: vm.builtin.print, vm.builtin.copy, vm.builtin.null_value.
#ifndef RELAXVM_BUILTINS_CORE_HPP
#define RELAXVM_BUILTINS_CORE_HPP

#include <cstdio>
#include <span>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/text_builder.hpp"
#include "../runtime/context.hpp"
#include "../runtime/print.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI::builtins {

/// vm.builtin.print([ctx,] values...): writes the values separated by spaces and a newline, where
/// vm_options::print says (%vm first, or the VM running the call); outside a VM, to standard output.
inline value print(std::span<const value> args) {
  vm_context* ctx = take_context(args);
  detail::text t;
  std::int64_t left = detail::max_print_values;  // for the whole call
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i) t << ' ';
    if (left <= 0) {
      t << "...";
      break;
    }
    detail::append_value_limited(t, args[i], false, 0, left);
  }
  t << '\n';
  if (ctx) {
    // Each value written counts as an instruction: printing a 1,000-value tuple in a loop costs
    // the budget what it costs in time.
    ctx->charge(detail::max_print_values - left);
    ctx->print(t.view());
  } else {
    std::fwrite(t.view().data(), 1, t.size(), stdout);
    std::fflush(stdout);
  }
  return value();
}

/// Identity: materializes immediates and constants into registers; copies the reference, not data.
inline value copy(const value& v) { return v; }
using relaxvm::detail::null_value;  // null; the VM clears the register without calling it

inline constexpr auto core_table = make_table(packed<"vm.builtin.print">(&print), fn<"vm.builtin.copy", makes<object_rule::none>>(&copy),
                                              fn<"vm.builtin.null_value", makes<object_rule::none>>(&null_value));

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_CORE_HPP
