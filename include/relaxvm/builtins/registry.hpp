// SPDX-License-Identifier: Apache-2.0
// relaxvm::registry: a basic_registry that starts with every vm.builtin.*.
#ifndef RELAXVM_BUILTINS_REGISTRY_HPP
#define RELAXVM_BUILTINS_REGISTRY_HPP

#include "../runtime/registry.hpp"
#include "control.hpp"
#include "core.hpp"
#include "data.hpp"
#include "memory.hpp"
#include "shape.hpp"

namespace relaxvm {

class registry : public basic_registry {
 public:
  registry() {
    builtins::register_core(*this);
    builtins::register_shape(*this);
    builtins::register_memory(*this);
    builtins::register_data(*this);
    builtins::register_control(*this);
  }
};

}  // namespace relaxvm

#endif  // RELAXVM_BUILTINS_REGISTRY_HPP
