// SPDX-License-Identifier: Apache-2.0
// vm_context: what a builtin that takes `ctx` (the %vm register) can ask of the VM running it.
// A context value is valid during the call that received it; do not keep it past that call.
#ifndef RELAXVM_RUNTIME_CONTEXT_HPP
#define RELAXVM_RUNTIME_CONTEXT_HPP

#include <span>
#include <string_view>

#include "../base/device.hpp"
#include "../base/error.hpp"
#include "function.hpp"
#include "value.hpp"

namespace relaxvm {

class vm_context {
 public:
  /// Calls a closure (a vm function of this VM's executable, or a packed function), appending
  /// its captured values to `args`.
  virtual result<value> invoke_closure(const closure& c, std::span<const value> args) = 0;
  /// Writes text where the VM's print output goes (vm_options::print).
  virtual void print(std::string_view text) = 0;
  /// The host device: the last device the VM was given (the reference's convention).
  virtual device host_device() const = 0;

 protected:
  vm_context() = default;
  vm_context(const vm_context&) = default;
  vm_context& operator=(const vm_context&) = default;
  ~vm_context() = default;
};

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_CONTEXT_HPP
