// SPDX-License-Identifier: Apache-2.0
// vm_context: what a builtin that takes `ctx` (the %vm register) can ask of the VM running it.
// A context value is valid during the call that received it; do not keep it past that call (the
// builtins that store values refuse it: check_no_context).
#ifndef RELAXVM_RUNTIME_CONTEXT_HPP
#define RELAXVM_RUNTIME_CONTEXT_HPP

#include <new>
#include <optional>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/device.hpp"
#include "../base/error.hpp"
#include "adapters.hpp"
#include "allocator.hpp"
#include "value.hpp"

namespace relaxvm::RELAXVM_ABI {

class kept_slot;
void drop_kept(kept_slot& slot) noexcept;
void keep(kept_slot& slot, value made) noexcept;

/// What a Call instruction keeps from one run to the next (vm_context::instruction_slot). Anyone
/// reads it; only keep() and drop_kept() write it, so that a storage's list of the views kept
/// for it (see below) stays true whichever builtin wrote the slot before.
class kept_slot {
 public:
  const value& get() const noexcept { return v_; }

 private:
  friend void drop_kept(kept_slot& slot) noexcept;
  friend void keep(kept_slot& slot, value made) noexcept;
  value v_;
};

// Every VM overrides the virtual functions; they are not pure so that no vtable refers to
// __cxa_pure_virtual, which links the C++ runtime's exception support into firmware.
class vm_context {
 public:
  /// Calls a closure (a vm function of this VM's executable, or a packed function), appending
  /// its captured values to `args`. Not virtual: the code that calls a packed closure is linked
  /// only into programs that call closures (a firmware image without any pays nothing for it).
  result<value> invoke_closure(const closure& c, std::span<const value> args);
  /// Writes text where the VM's print output goes (vm_options::print).
  virtual void print(std::string_view text) { (void)text; }
  /// The devices the VM was given, each with its allocator; the last is the host.
  virtual std::span<const device_allocator> devices() const { return {}; }
  /// The host device: the last device the VM was given (the reference's convention).
  device host_device() const { return devices().back().device; }
  /// Counts `units` of work a builtin did against the running invocation's instruction budget
  /// (vm_options::max_instructions), as if it had run that many instructions: a builtin whose
  /// work grows with its arguments (vm.builtin.print) calls it. Without a budget, nothing happens.
  virtual void charge(std::int64_t units) { (void)units; }
  /// A value the VM keeps for the Call instruction running now, from one run of that instruction
  /// to the next; null outside a Call of a VM function, in static_vm, or when the VM does not
  /// reuse allocations (vm_options::reuse_allocations). The allocation builtins keep what they
  /// made in it and hand it out again on the next run when nothing else holds it any more (see
  /// kept_exclusive), so that a program run again and again allocates nothing. Read it before
  /// calling anything that may run VM code.
  kept_slot* instruction_slot() const noexcept { return slot_; }
  /// Returns every allocator's cached memory to the system (vm.builtin.memory_manager.clear).
  void release_memory() const {
    for (const device_allocator& d : devices()) d.allocator.release();
  }

 protected:
  /// Runs a closure over a vm function of this VM's program (when vm_closures_; c is one).
  virtual result<value> invoke_vm_closure(const closure& c, std::span<const value> args) {
    (void)c;
    (void)args;
    return value();
  }
  /// call(joined): `args` followed by the values `c` captured, joined in the memory the VM lends
  /// (memory_ from used_ on: static_vm's frame memory, below the callee's frame), or on the heap
  /// when the VM joins there (joins_on_heap_: the dynamic VM).
  template <class Call>
  result<value> call_joined(const closure& c, std::span<const value> args, Call&& call) {
    const std::span<const value> bound = c.bound();
    const std::size_t n = args.size() + bound.size(), bytes = n * sizeof(value);
    const bool lent = memory_.size() - used_ >= bytes;
    value* joined = nullptr;
    if (lent) {
      joined = reinterpret_cast<value*>(memory_.data() + used_);
      used_ += bytes;
    } else {
#if RELAXVM_HEAP
      if (joins_on_heap_) joined = static_cast<value*>(::operator new(bytes, std::nothrow));
#endif
      if (joined == nullptr)
        return detail::runtime_error("invoke_closure: calling '", c.name(), "' needs ", bytes,
                                     " bytes of VM memory, but only ", memory_.size() - used_, " of its ",
                                     memory_.size(), " bytes are left");
    }
    // Given back however `call` ends: a hand-made closure's invoke may throw (table entries and
    // make_packed catch; a closure_object's raw invoke need not), and the VM stays usable.
    struct joined_memory {
      vm_context& vm;
      value* values;
      std::size_t count, bytes;
      bool lent;
      ~joined_memory() {
        for (std::size_t i = 0; i < count; ++i) values[i].~value();
        if (lent) vm.used_ -= bytes;
#if RELAXVM_HEAP
        else ::operator delete(values);
#endif
      }
    } held{*this, joined, 0, bytes, lent};
    for (const value& a : args) ::new (static_cast<void*>(joined + held.count++)) value(value::borrow(a));
    for (const value& a : bound) ::new (static_cast<void*>(joined + held.count++)) value(value::borrow(a));
    return call(std::span<const value>(joined, n));
  }

  vm_context() = default;
  vm_context(const vm_context&) = default;
  vm_context& operator=(const vm_context&) = default;
  ~vm_context() = default;

  /// What instruction_slot() gives: the VM sets it around each Call of a packed function.
  kept_slot* slot_ = nullptr;
  /// The error of calling closure `name` over a vm function of another program.
  RELAXVM_NOINLINE static error foreign_closure(std::string_view name) {
    return detail::value_error("invoke_closure: closure '", name, "' belongs to another program than this VM's");
  }

  /// The memory the VM lends for joined arguments (call_joined), and how much of it is in use.
  std::span<std::byte> memory_;
  std::size_t used_ = 0;
  bool joins_on_heap_ = false;
  /// Whether closures over vm functions run here (invoke_vm_closure); a VM whose program passes
  /// no vm function as a value has none of its own, and says a vm closure is another program's.
  bool vm_closures_ = true;
};

/// The object of type T kept in an instruction slot (vm_context::instruction_slot), when nothing
/// but the slot holds it, so that it may be changed and handed out again; else null.
template <class T>
T* kept_exclusive(const kept_slot* slot) noexcept {
  if (slot == nullptr) return nullptr;
  object* o = slot->get().get_object();
  return o != nullptr && o->template is<T>() && o->use_count() == 1 ? static_cast<T*>(o) : nullptr;
}

// Kept tensors pin their storage: a view that alloc_tensor keeps for its next run holds a
// reference to the storage that alloc_storage keeps, so the storage is never held by its slot
// alone. The storage therefore lists the views that its own VM's slots keep (at most
// storage_object::max_kept_views; one more is kept unlisted, which only stops reuse), and is free
// when nothing holds it but its slot and those views, each held only by its slot. A slot that
// keeps a listed view is emptied (drop_kept) or overwritten (keep) only after the view is taken
// off the list: a kernel may call several allocating builtins in one Call, each writing the same
// slot.

/// Empties an instruction slot (vm_context::instruction_slot).
inline void drop_kept(kept_slot& slot) noexcept {
#if RELAXVM_HEAP
  value& v = slot.v_;
  if (v.kind() == value_kind::tensor && v.raw_object() != nullptr) {
    auto* t = static_cast<tensor_object*>(v.raw_object());
    if (storage_object* s = t->kept_in; s != nullptr) {
      for (std::uint8_t i = 0; i < s->num_kept_views; ++i) {
        if (s->kept_views[i] != t) continue;
        s->kept_views[i] = s->kept_views[--s->num_kept_views];
        s->kept_views[s->num_kept_views] = nullptr;
        break;
      }
      t->kept_in = nullptr;
    }
  }
#endif
  slot.v_.reset();
}

/// Keeps `made` in an instruction slot, replacing what it kept: the one way a slot is written.
inline void keep(kept_slot& slot, value made) noexcept {
  drop_kept(slot);
  slot.v_ = std::move(made);
}

#if RELAXVM_HEAP
/// Keeps `view`, a tensor over `st` that the instruction of `slot` made, in that slot (replacing
/// what it kept), listed in `st` when `ctx`'s slot keeps `st` too.
inline void keep_view(kept_slot& slot, const tensor& view, storage_object& st, const vm_context* ctx) noexcept {
  keep(slot, value(view));
  if (st.keeper == ctx && st.num_kept_views < storage_object::max_kept_views) {
    st.kept_views[st.num_kept_views++] = view.get();
    view.get()->kept_in = &st;
  }
}

/// The storage kept in `slot`, when the program no longer uses it (see above); else null.
inline storage_object* kept_free_storage(const kept_slot* slot) noexcept {
  if (slot == nullptr) return nullptr;
  object* o = slot->get().get_object();
  if (o == nullptr || !o->is<storage_object>()) return nullptr;
  auto* s = static_cast<storage_object*>(o);
  if (s->use_count() != 1u + s->num_kept_views) return nullptr;
  for (std::uint8_t i = 0; i < s->num_kept_views; ++i)
    if (s->kept_views[i]->use_count() != 1) return nullptr;
  return s;
}
#endif

/// A context value lives only as long as the call that received it, so it must never be kept in
/// a tuple or closure, which may outlive its VM (a program could otherwise hand its VM's address
/// to a second VM). `fn` names the builtin that would store the values, `what` what they are.
inline status check_no_context(std::string_view fn, std::string_view what, std::span<const value> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i].kind() == value_kind::context)
      return detail::type_error(fn, ": ", what, ' ', i, " is the vm context (%vm), which is valid only during the call "
                                "that receives it and cannot be stored");
  return {};
}

namespace detail {
inline RELAXVM_THREAD_LOCAL vm_context* running = nullptr;
}  // namespace detail

/// The VM running a call on this thread (the innermost, when one VM's kernel runs another), or
/// null outside every VM. The interpreters set it for each invocation (running_scope).
inline vm_context* running_context() noexcept { return detail::running; }

/// Makes `ctx` the running context until the scope ends.
class running_scope {
 public:
  explicit running_scope(vm_context* ctx) noexcept : saved_(detail::running) { detail::running = ctx; }
  running_scope(const running_scope&) = delete;
  running_scope& operator=(const running_scope&) = delete;
  ~running_scope() { detail::running = saved_; }

 private:
  vm_context* saved_;
};

inline result<value> vm_context::invoke_closure(const closure& c, std::span<const value> args) {
  if (!c.defined()) return detail::value_error("invoke_closure: the closure is undefined");
  if (c.is_vm_function()) {
    if (!vm_closures_) return foreign_closure(c.name());
    return invoke_vm_closure(c, args);
  }
  const running_scope scope(this);
  slot_ = nullptr;  // called from C++: no instruction keeps anything
  const closure_object& fn = c.get()->callee();
  const auto call = [&fn](std::span<const value> a) -> result<value> {
    value ret;
    std::optional<error> err;
    if (!fn.invoke(fn, a.data(), static_cast<std::uint32_t>(a.size()), ret, err)) return detail::take_error(err);
    return ret;
  };
  if (c.bound().empty()) return call(args);
  return call_joined(c, args, call);
}

/// For builtins whose %vm argument is optional (print, alloc_shape_heap, to_device, call_tir_dyn):
/// the context when args[0] is one, and then `args` without it. Else the VM running the call, so
/// that a program cannot reach the system heap or standard output by leaving %vm out (an arena,
/// a print sink hold either way); null when called from C++ outside every VM.
inline vm_context* take_context(std::span<const value>& args) noexcept {
  if (args.empty() || args[0].kind() != value_kind::context) return running_context();
  vm_context* ctx = args[0].raw_context();
  args = args.subspan(1);
  return ctx;
}

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_CONTEXT_HPP
