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
#include "memory.hpp"
#include "value.hpp"

namespace relaxvm {

class vm_context {
 public:
  /// Calls a closure (a vm function of this VM's executable, or a packed function), appending
  /// its captured values to `args`.
  virtual result<value> invoke_closure(const closure& c, std::span<const value> args) = 0;
  /// Writes text where the VM's print output goes (vm_options::print).
  virtual void print(std::string_view text) = 0;
  /// The devices the VM was given, each with its allocator; the last is the host.
  virtual std::span<const device_allocator> devices() const = 0;
  /// The host device: the last device the VM was given (the reference's convention).
  device host_device() const { return devices().back().device; }
  /// Returns every allocator's cached memory to the system (vm.builtin.memory_manager.clear).
  void release_memory() const {
    for (const device_allocator& d : devices()) d.allocator.release();
  }

 protected:
  vm_context() = default;
  vm_context(const vm_context&) = default;
  vm_context& operator=(const vm_context&) = default;
  ~vm_context() = default;
};

/// For builtins whose %vm argument is optional (print, alloc_shape_heap, to_device): the context
/// when args[0] is one, and then `args` without it; else null and `args` unchanged.
inline vm_context* take_context(std::span<const value>& args) noexcept {
  if (args.empty() || args[0].kind() != value_kind::context) return nullptr;
  vm_context* ctx = args[0].raw_context();
  args = args.subspan(1);
  return ctx;
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_CONTEXT_HPP
