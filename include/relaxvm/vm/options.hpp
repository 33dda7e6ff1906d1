// SPDX-License-Identifier: Apache-2.0
// What a virtual_machine is made with (vm_options: limits, devices, allocation and call-site
// settings, where print writes) and the instrument hook's types (call_event, instrument_fn).
#ifndef RELAXVM_VM_OPTIONS_HPP
#define RELAXVM_VM_OPTIONS_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/std_parts.hpp"
#include "../runtime/allocator.hpp"
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI {

/// What the instrument hook is told about one Call.
struct call_event {
  std::string_view callee;      ///< the called function's name
  std::int64_t callee_index;    ///< its index in the function table
  bool callee_is_vm_function;   ///< bytecode (true) or packed (false)
  std::string_view caller;      ///< the function making the call
  std::int64_t instruction;     ///< the Call's index within the caller
  bool before;                  ///< true before the call, false after it
  std::span<const value> args;  ///< the arguments (valid during the hook only)
  const value* result;          ///< after the call: its result; before: nullptr
};

enum class instrument_action { proceed, skip };

/// Called before and after every Call. Returning skip from the "before" call skips the callee
/// (and the "after" call); the destination register then receives null.
using instrument_fn = std::function<instrument_action(const call_event&)>;

struct vm_options {
  /// Frames (VM function calls) alive at once, across re-entrant invocations.
  std::int64_t max_call_depth = 4096;
  /// Register slots (16 bytes each) all live frames may use together: 2^24 slots is 256 MiB. It
  /// bounds what an untrusted program can make the VM allocate.
  std::int64_t max_stack_slots = std::int64_t{1} << 24;
  /// Instructions one invocation may run, re-entrant calls from its kernels included; 0: no
  /// limit. Running past it is an error (with where the VM was), and the VM stays usable: it
  /// stops untrusted programs that would loop forever. set_instruction_budget changes it. A call
  /// of a VM function also costs one instruction per 8 register slots it sets up (and clears
  /// when it returns), so a budget bounds the time of programs with huge register files too.
  std::int64_t max_instructions = 0;
  /// Bytes of C++ stack that re-entrant invocations may use beyond where the outermost one
  /// began: a closure called through vm.builtin.invoke_closure or a kernel calling back into
  /// the VM runs on the C++ stack (calls between VM functions do not). Past it the call is an
  /// error, before the stack can overflow. The default suits threads with 1 MiB of stack or more
  /// (under AddressSanitizer, 4 MiB); lower it for smaller ones.
  std::size_t max_native_stack = std::size_t{256} << 10;
  /// Bytes the VM's allocations may hold at once: tensors and storages from its devices (all of
  /// them, kept allocations included; counted as requested, until freed, wherever they went) and
  /// the objects (tuples, closures, shapes, tensor records) its running invocation has made
  /// and not freed; 0: no limit. A storage that would go past it is an error naming the request
  /// before the device's allocator is asked; an object that goes past it stops the invocation at
  /// its next instruction with the same error. The VM stays usable. set_memory_budget changes it
  /// for a VM made with one (a VM made without has nothing counting its memory, and costs nothing).
  std::int64_t max_memory = 0;
  /// Let the allocation builtins keep what each Call instruction made (a storage, a tensor, a
  /// shape, the shape heap) for that instruction's next run, and hand it out again when the program no
  /// longer holds it: a program run again with the same shapes then allocates nothing. The cost
  /// is that the VM holds the last allocation of each such instruction until its next run (one
  /// of another size is given back first); release_kept() gives them all back. Nothing is kept
  /// from an arena (allocator::reuses_any_order). False: each run allocates afresh and frees
  /// everything it does not return.
  bool reuse_allocations = true;
  /// Ask each packed function that can (closure_object::prepare; the shape and memory builtins
  /// do) for a version of each of its call sites that takes the program's fixed arguments
  /// (immediates, constants) as checked, once, when the VM is made. Results and errors are the
  /// same either way; false runs every call through the general path (for tests and comparisons).
  bool prepare_calls = true;
  /// Where vm.builtin.print writes; standard output when empty.
  std::function<void(std::string_view)> print;
  /// The devices, each with its allocator; the last is the host (shape heaps live there), the
  /// first is where set_input puts arguments. Empty: one host device, cpu:0, with a pooled
  /// allocator of its own. Every device must be a host (cpu) device; ids may differ.
  std::vector<device_allocator> devices;
};

}  // namespace relaxvm

#endif  // RELAXVM_VM_OPTIONS_HPP
