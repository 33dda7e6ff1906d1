// SPDX-License-Identifier: Apache-2.0
// Functions as values: closure_object and closure. A closure is either a packed function (C++ code behind one calling
// convention) or a VM function of some executable; both may carry captured arguments, which are
// passed after the call's own (the reference's make_closure order).
//
// The packed calling convention is the hot path of the VM:
//   bool invoke(const closure_object& self, const value* args, uint32_t nargs, value& ret,
//               std::optional<error>& err)
// Arguments are borrowed (no reference counting); on success the result is written to `ret` and
// the function returns true; on failure it stores an error in `err` and returns false, leaving
// `ret` as it was. make_typed() (runtime/adapters.hpp) adapts an ordinary C++ callable to it,
// checking every argument; such a function is done with its arguments before it writes `ret`
// (result_after_args), so the VM lets it write straight into a register that an argument came from.
#ifndef RELAXVM_RUNTIME_CLOSURE_HPP
#define RELAXVM_RUNTIME_CLOSURE_HPP

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "object.hpp"
#include "string.hpp"
#include "value.hpp"

namespace relaxvm::RELAXVM_ABI {

struct closure_object;

using packed_invoke = bool (*)(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                               std::optional<error>& err);
/// A packed function's invoke for one call site of a program, chosen once when a VM is made (see
/// closure_object::prepare).
using packed_prepare = packed_invoke (*)(const value* args, std::uint32_t nargs, std::uint64_t fixed);

struct closure_object : object {
  static constexpr std::string_view type_name = "relaxvm.closure";
  enum class kind_t : std::uint8_t { packed, vm };

  closure_object(kind_t k, relaxvm::string n) noexcept : fn_kind(k), name(std::move(n)) {}
  ~closure_object() {
    for (value& v : bound) v.~value();
  }
  void share_children() noexcept {
    if (auto* s = name.get()) s->share();
    if (target) target->share();
    for (const value& v : bound) v.share();
  }

  /// The packed function that runs (itself, or the closure it was bound from).
  const closure_object& callee() const noexcept { return target ? *target : *this; }

  kind_t fn_kind;
  relaxvm::string name;
  packed_invoke invoke = nullptr;      ///< packed functions
  /// Packed functions: `invoke` reads every argument before it writes `ret`, so `ret` may alias
  /// one of them (true for make_typed; raw functions may interleave, so false for them).
  bool result_after_args = false;
  /// Packed functions, optional: called once for each call site when a VM is made, with the
  /// call's arguments as they will be passed, those the program fixes (immediates, constants,
  /// %vm: bit k of `fixed` for argument k) in place and the others null. It returns an invoke for
  /// that site, which may take the fixed arguments as already checked, or nullptr to keep
  /// `invoke`. The invoke it returns must give exactly the results and errors of `invoke` (the
  /// builtins' call `invoke` for anything but their common case).
  packed_prepare prepare = nullptr;
  object_ref<closure_object> target;   ///< packed functions with bound arguments: what they call
  std::int64_t func_index = -1;        ///< vm functions: index in the function table
  /// vm functions: the executable they belong to, kept alive, so that a closure cannot outlive
  /// its program and be mistaken for a function of another executable at the same address.
  std::shared_ptr<const void> program;
  /// Captured arguments, passed after the call's own. They live in the object's own block, after
  /// it (bind() makes such closures), so capturing makes one allocation, from the object memory.
  std::span<value> bound;
};
static_assert(sizeof(closure_object) % alignof(value) == 0);

namespace detail {
/// For prepare functions: whether argument k is fixed, and whether arguments [from, nargs) all are.
constexpr bool is_fixed(std::uint64_t fixed, std::uint32_t k) noexcept { return (fixed >> k) & 1u; }
constexpr bool all_fixed(std::uint64_t fixed, std::uint32_t nargs, std::uint32_t from) noexcept {
  for (std::uint32_t k = from; k < nargs; ++k)
    if (!is_fixed(fixed, k)) return false;
  return true;
}
/// For prepared invokes: the packed function's own invoke, for what they do not serve.
inline bool invoke_general(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                           std::optional<error>& err) {
  return self.invoke(self, args, nargs, ret, err);
}

// The cold half of invoke_packed: joins the arguments and the captured values.
RELAXVM_NOINLINE inline bool invoke_packed_bound(const closure_object& fn, std::span<const value> args,
                                                 std::span<const value> bound, value& ret, std::optional<error>& err) {
  std::vector<value> all;
  all.reserve(args.size() + bound.size());
  for (const value& v : args) all.push_back(value::borrow(v));
  for (const value& v : bound) all.push_back(value::borrow(v));
  return fn.invoke(fn, all.data(), static_cast<std::uint32_t>(all.size()), ret, err);
}
/// The error a packed function reported through `err` (the packed calling convention), taken out
/// of it; an internal error when the function failed without reporting one.
/// The error of a packed function that failed without reporting one (terse: the first part).
inline error unreported_failure() { return internal_error("a packed function failed", " without reporting an error"); }
RELAXVM_NOINLINE inline error take_error(std::optional<error>& err) {
  if (!err) return unreported_failure();
  error e = std::move(*err);
  err.reset();
  return e;
}
/// Calls packed function `fn` with `args` followed by `bound` (captured values). The VM's hot path.
RELAXVM_ALWAYS_INLINE bool invoke_packed(const closure_object& fn, std::span<const value> args,
                                         std::span<const value> bound, value& ret, std::optional<error>& err) {
  if (RELAXVM_LIKELY(bound.empty()))
    return fn.invoke(fn, args.data(), static_cast<std::uint32_t>(args.size()), ret, err);
  return invoke_packed_bound(fn, args, bound, ret, err);
}
}  // namespace detail

/// A packed function that owns a callable of type F.
template <class F>
struct typed_closure : closure_object {
  static constexpr std::string_view type_name = "relaxvm.closure";
  typed_closure(std::string_view n, F fn) : closure_object(kind_t::packed, n), f(std::move(fn)) {}
  mutable F f;
};

class closure : public object_handle_base<closure_object, value_kind::closure> {
 public:

  closure() noexcept = default;
  explicit closure(object_ref<closure_object> o) noexcept : object_handle_base(std::move(o)) {}
  closure(detail::borrow_t b, closure_object* o) noexcept : object_handle_base(b, o) {}

  bool defined() const noexcept { return static_cast<bool>(obj_); }
  std::string_view name() const noexcept { return obj_->name.view(); }
  bool is_packed() const noexcept { return obj_->fn_kind == closure_object::kind_t::packed; }
  bool is_vm_function() const noexcept { return obj_->fn_kind == closure_object::kind_t::vm; }
  std::span<const value> bound() const noexcept { return obj_->bound; }

  /// A new closure that calls this one with `captured` appended after the call's arguments
  /// (and after any values this one already captured).
  closure bind(std::span<const value> captured) const { return try_bind(captured).value(); }
  /// The non-throwing form: in firmware mode, an error when the object memory has no room.
  result<closure> try_bind(std::span<const value> captured) const {
    const std::size_t n = obj_->bound.size() + captured.size();
    RELAXVM_TRY_ASSIGN(closure_object * raw,
                       try_make_raw_object_with_tail<closure_object>(n * sizeof(value), obj_->fn_kind, obj_->name));
    auto c = object_ref<closure_object>::adopt(raw);
    c->invoke = obj_->invoke;
    c->result_after_args = obj_->result_after_args;
    c->func_index = obj_->func_index;
    c->program = obj_->program;
    if (is_packed()) c->target = obj_->target ? obj_->target : obj_;
    auto* tail = reinterpret_cast<value*>(raw + 1);
    std::size_t k = 0;
    for (const value& v : obj_->bound) ::new (static_cast<void*>(tail + k++)) value(v);
    for (const value& v : captured) ::new (static_cast<void*>(tail + k++)) value(v);
    c->bound = std::span<value>(tail, n);
    return closure(std::move(c));
  }

  /// Calls a packed function (vm functions are called through their virtual_machine).
  result<value> try_call(std::span<const value> args) const {
    if (!obj_) return detail::value_error("closure: calling an undefined closure");
    if (is_vm_function())
      return detail::value_error("closure '", name(),
                                 "' is a vm function: call it through its virtual_machine (invoke_closure)");
    value ret;
    std::optional<error> err;
    if (!detail::invoke_packed(obj_->callee(), args, obj_->bound, ret, err)) return std::move(*err);
    return ret;
  }
  template <class... Args>
  value operator()(Args&&... args) const {
    std::array<value, sizeof...(Args)> a{value(std::forward<Args>(args))...};
    return try_call(a).value();
  }

  friend bool operator==(const closure& a, const closure& b) noexcept { return a.obj_ == b.obj_; }
};

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_CLOSURE_HPP
