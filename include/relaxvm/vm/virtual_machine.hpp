// SPDX-License-Identifier: Apache-2.0
// virtual_machine: runs an executable. Packed functions are resolved by name when the VM is made;
// after that a Call is an index into a table, with borrowed arguments and no allocation.
//
// VM-to-VM calls push a frame and continue in the same loop: recursion does not grow the C++
// stack, and its depth is limited by vm_options::max_call_depth. Frames live on a value_stack
// (value_stack.hpp) and are recycled. After any error the frames of the failed call are cleared
// and the VM is ready for the next call.
//
// What the loop runs is the executable decoded when the VM is made (decoded_program.hpp); what
// If and Ret mean, and how an error unwinds, is written once for every machine (semantics.hpp).
#ifndef RELAXVM_VM_VIRTUAL_MACHINE_HPP
#define RELAXVM_VM_VIRTUAL_MACHINE_HPP

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DEFINES_CORE
#include "../base/error.hpp"
#include "../base/flat_map.hpp"
#include "../io/executable.hpp"
#include "../runtime/context.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/tuple.hpp"
#include "../runtime/value.hpp"
#include "options.hpp"

namespace relaxvm::RELAXVM_ABI {

namespace detail {
// The machine inside: vm_impl.hpp defines it, with the members below that reach it. Header-only,
// this header includes that one; in separate compilation only the compiled library does
// (RELAXVM_DEFINES_CORE), so a translation unit that makes and calls a VM parses neither the
// machine nor its loop.
template <class Unused>
class basic_vm_impl;

/// What save_function stores: the function and the arguments bound after the call's own.
struct vm_saved_function {
  std::int64_t index;
  std::vector<value> args;  // bound after the call's own arguments (then a packed callee's own)
  bool include_return;
};
}  // namespace detail

template <class Unused = void>
class basic_virtual_machine;

/// A function of a virtual_machine, found once by name: vm["main"](x, y). It follows its VM
/// when the VM is moved; once the VM is destroyed every use is an error (from try_call a result,
/// from the others a throw or RELAXVM_ON_ERROR), never a use of freed memory. It does not keep
/// the VM alive: the VM's devices and buffers are its owner's to free.
template <class Unused = void>
class basic_vm_function {
  using impl = detail::basic_vm_impl<Unused>;

 public:
  basic_vm_function(std::shared_ptr<impl*> vm, std::int64_t index,
                    std::shared_ptr<const detail::vm_saved_function> saved = nullptr)
      : vm_(vm ? std::move(vm) : no_vm()), index_(index), saved_(std::move(saved)) {}

  result<value> try_call(std::span<const value> args) const;
  template <class... Args>
  value operator()(Args&&... args) const {
    std::array<value, sizeof...(Args)> a{value(std::forward<Args>(args))...};
    return try_call(a).value();
  }
  std::string_view name() const;
  std::int64_t index() const { return index_; }

 private:
  result<impl*> try_vm() const {
    if (*vm_ == nullptr) return destroyed();
    return *vm_;
  }
  // The cell of a handle made without a VM: never set, so that try_call reads a cell always.
  static const std::shared_ptr<impl*>& no_vm() {
    static const std::shared_ptr<impl*> none = std::make_shared<impl*>(nullptr);
    return none;
  }
  RELAXVM_NOINLINE static error destroyed() {
    return detail::value_error("vm_function: its virtual_machine was destroyed");
  }

  std::shared_ptr<impl*> vm_;  // the VM's handle cell (basic_vm_impl::handle), never null
  std::int64_t index_;
  std::shared_ptr<const detail::vm_saved_function> saved_;  // made by save_function, or null
  friend class basic_virtual_machine<Unused>;
};
using vm_function = basic_vm_function<>;

/// Runs an executable: see the top of this file. `virtual_machine` is the name to use.
template <class Unused>
class basic_virtual_machine {
  using impl = detail::basic_vm_impl<Unused>;
  using vm_function = basic_vm_function<Unused>;

 public:
  /// Resolves every packed function of `exe` in `reg`; throws relaxvm::error (kind value)
  /// naming each one that is missing and the instruction that needs it.
  basic_virtual_machine(const executable& exe, const basic_registry& reg, vm_options opts = {});
  /// The non-throwing form of the constructor.
  static result<basic_virtual_machine> create(const executable& exe, const basic_registry& reg, vm_options opts = {});

  /// Calls function `name` (a vm function, or a packed function of the executable).
  result<value> try_invoke(std::string_view name, std::span<const value> args);
  value invoke(std::string_view name, std::span<const value> args) { return try_invoke(name, args).value(); }
  value invoke(std::string_view name, std::initializer_list<value> args) {
    return try_invoke(name, std::span<const value>(args.begin(), args.size())).value();
  }

  /// Function `name`: a saved function (save_function) if one has that name, else the
  /// executable's.
  result<vm_function> try_function(std::string_view name) const;
  vm_function function(std::string_view name) const { return try_function(name).value(); }
  vm_function operator[](std::string_view name) const { return function(name); }

  /// Calls a closure made by this VM's program (or any packed closure).
  result<value> try_invoke_closure(const closure& c, std::span<const value> args);
  value invoke_closure(const closure& c, std::span<const value> args) { return try_invoke_closure(c, args).value(); }

  /// Number of arguments of vm function `name`, or of a saved function: those its caller passes
  /// (the reference returns the number of parameter names instead, 0 for functions built without
  /// them).
  result<std::int64_t> try_function_arity(std::string_view name) const;
  std::int64_t function_arity(std::string_view name) const { return try_function_arity(name).value(); }
  /// The parameter names of vm function `name` (empty when it was built without them); for a
  /// saved function, those its caller passes.
  result<std::vector<std::string_view>> try_param_names(std::string_view name) const;
  std::vector<std::string_view> param_names(std::string_view name) const {
    return try_param_names(name).value();
  }

  // ---- the stateful API, like the reference's ----------------------------------------------

  /// Stores the arguments for invoke_stateful(func). Tensors not on the first device are copied
  /// there (also inside tuples).
  status try_set_input(std::string_view func, std::span<const value> args);
  void set_input(std::string_view func, std::span<const value> args) { try_set_input(func, args).value(); }
  void set_input(std::string_view func, std::initializer_list<value> args) {
    set_input(func, std::span<const value>(args.begin(), args.size()));
  }

  /// Calls func with the arguments set_input stored (a function without parameters needs none)
  /// and keeps its result for get_output. The inputs stay, so the call can be repeated.
  status try_invoke_stateful(std::string_view func);
  void invoke_stateful(std::string_view func) { try_invoke_stateful(func).value(); }

  /// The result of the last invoke_stateful(func); `index` walks into nested tuples.
  result<value> try_get_output(std::string_view func, std::span<const std::int64_t> index = {}) const {
    RELAXVM_TRY_ASSIGN(const value* v, saved_output(func, index));
    return *v;
  }
  value get_output(std::string_view func, std::initializer_list<std::int64_t> index = {}) const {
    return try_get_output(func, std::span<const std::int64_t>(index.begin(), index.size())).value();
  }
  /// The number of items of the output (or of the tuple `index` leads to); -1 when it is not a tuple.
  result<std::int64_t> try_get_output_arity(std::string_view func, std::span<const std::int64_t> index = {}) const {
    RELAXVM_TRY_ASSIGN(const value* v, saved_output(func, index));
    return v->kind() == value_kind::tuple ? v->as<tuple>().size() : std::int64_t{-1};
  }
  std::int64_t get_output_arity(std::string_view func, std::initializer_list<std::int64_t> index = {}) const {
    return try_get_output_arity(func, std::span<const std::int64_t>(index.begin(), index.size())).value();
  }

  /// Makes `save_name` call `func` with `args` appended after the call's own arguments (all of
  /// them, usually: a ready-made call for benchmarks). The saved name shadows a function of the
  /// executable with that name. Without include_return the call returns null.
  status try_save_function(std::string_view func, std::string_view save_name, bool include_return,
                           std::span<const value> args);
  void save_function(std::string_view func, std::string_view save_name, bool include_return,
                     std::initializer_list<value> args) {
    try_save_function(func, save_name, include_return, std::span<const value>(args.begin(), args.size())).value();
  }

  /// Installs (or with an empty function, removes) the hook called around every Call.
  void set_instrument(instrument_fn fn);
  /// The hook set_instrument installed (empty when none).
  instrument_fn instrument() const;
  /// Instructions each invocation may run from now on (vm_options::max_instructions); 0: no limit.
  void set_instruction_budget(std::int64_t n);
  /// The bytes the VM's allocations may hold at once from now on (vm_options::max_memory), for
  /// a VM made with a budget; an error for one made without (nothing counts its memory) or for
  /// a budget that is not positive.
  status try_set_memory_budget(std::int64_t bytes);
  void set_memory_budget(std::int64_t bytes) { try_set_memory_budget(bytes).value(); }
  /// Drops what the allocation builtins kept for the next run (vm_options::reuse_allocations):
  /// storages the program no longer uses go back to their allocators.
  void release_kept();

  const executable& exec() const;
  /// The options the VM was made with (its devices and limits do not change, except the
  /// instruction budget).
  const vm_options& options() const;
  /// The context builtins see (for calling builtins directly from C++).
  vm_context& context();

  // Declared here, defined where the machine is (vm_impl.hpp): destroying the machine needs it.
  basic_virtual_machine(basic_virtual_machine&&) noexcept;
  basic_virtual_machine& operator=(basic_virtual_machine&&) noexcept;
  ~basic_virtual_machine();

 private:
  explicit basic_virtual_machine(std::unique_ptr<impl> made) : impl_(std::move(made)) {}

  // A moved-from virtual_machine has no implementation: every use is an error (from try_ forms
  // a result, from the others a throw or RELAXVM_ON_ERROR), never a null dereference.
  result<impl*> try_vm() const {
    if (!impl_) return detail::value_error("virtual_machine: this VM was moved from; use the one it was moved to");
    return impl_.get();
  }
  impl& vm() const { return *try_vm().value(); }
  /// The index of the executable's function `name` in `vm`.
  static result<std::int64_t> find(const impl& vm, std::string_view name);

  /// How many arguments a saved function supplies itself (0 for a function of the executable).
  static std::int64_t saved_count(const vm_function& f) { return f.saved_ ? static_cast<std::int64_t>(f.saved_->args.size()) : 0; }

  result<const value*> saved_output(std::string_view func, std::span<const std::int64_t> index) const {
    RELAXVM_TRY(try_vm());  // a moved-from VM has no state
    const value* v = outputs_.find(func);
    if (!v)
      return detail::value_error("get_output: No output saved for call of \"", func,
                                 "\"; use `invoke_stateful` to call it first.");
    for (std::int64_t i : index) {
      if (v->kind() != value_kind::tuple)
        return detail::value_error("get_output: Attempted to index into an object that is not a tuple.");
      const tuple_object* o = static_cast<const tuple_object*>(v->get_object());
      const std::int64_t n = o ? o->size : 0;
      if (i < 0 || i >= n) return detail::value_error("get_output: index ", i, " is out of range for a tuple of ", n, " items");
      v = &o->fields()[i];
    }
    return v;
  }
  std::unique_ptr<impl> impl_;
  // The stateful API's state. Held by shared_ptr, and each call holds its own reference: a kernel
  // that replaces a saved function or an input while a call uses it cannot free the arguments
  // under that call.
  detail::flat_map<std::string, std::shared_ptr<const detail::vm_saved_function>> saved_;
  detail::flat_map<std::string, std::shared_ptr<const std::vector<value>>> inputs_;
  detail::flat_map<std::string, value> outputs_;
};
using virtual_machine = basic_virtual_machine<>;
RELAXVM_EXTERN_TEMPLATE(class basic_vm_function<void>)
RELAXVM_EXTERN_TEMPLATE(class basic_virtual_machine<void>)

}  // namespace relaxvm

#if RELAXVM_DEFINES_CORE
#include "vm_impl.hpp"
#endif

#endif  // RELAXVM_VM_VIRTUAL_MACHINE_HPP
