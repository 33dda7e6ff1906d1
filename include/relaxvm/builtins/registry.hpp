// SPDX-License-Identifier: Apache-2.0
// relaxvm::registry: a basic_registry that starts with every vm.builtin.*.
#ifndef RELAXVM_BUILTINS_REGISTRY_HPP
#define RELAXVM_BUILTINS_REGISTRY_HPP

#include "../runtime/registry.hpp"
#include "core.hpp"
#include "shape.hpp"

namespace relaxvm {

class registry : public basic_registry {
 public:
  registry() {
    builtins::register_core(*this);
    builtins::register_shape(*this);
  }
};

}  // namespace relaxvm

#endif  // RELAXVM_BUILTINS_REGISTRY_HPP
