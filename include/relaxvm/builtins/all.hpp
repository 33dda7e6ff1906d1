// SPDX-License-Identifier: Apache-2.0
// relaxvm::registry: a basic_registry that starts with every vm.builtin.*.
#ifndef RELAXVM_BUILTINS_ALL_HPP
#define RELAXVM_BUILTINS_ALL_HPP

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../runtime/registry.hpp"
#include "control.hpp"
#include "core.hpp"
#include "data.hpp"
#include "memory.hpp"
#include "shape_heap.hpp"

namespace relaxvm::RELAXVM_ABI {

namespace builtins {
/// Every vm.builtin.*, as a constexpr table (for the compile-time linker, vm/link.hpp).
inline constexpr auto table = make_table(core_table, shape_table, memory_table, data_table, control_table);
static_assert(table.duplicate().empty(), "relaxvm: a builtin is defined twice");
}  // namespace builtins

class registry : public basic_registry {
 public:
#ifdef RELAXVM_SEPARATE_COMPILATION
  // Defined in the compiled library (src/core.cpp): the adapters of every builtin are compiled there.
  registry();
#else
  // A template, so that a translation unit which makes no registry does not instantiate the
  // adapters of every builtin (about half a second of compile time per translation unit).
  template <class Table = decltype(builtins::table)>
  registry() {
    add_table(static_cast<const Table&>(builtins::table));
  }
#endif
};

}  // namespace relaxvm

#endif  // RELAXVM_BUILTINS_ALL_HPP
