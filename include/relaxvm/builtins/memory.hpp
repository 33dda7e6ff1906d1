// SPDX-License-Identifier: Apache-2.0
// Storage and tensors, with the reference's names and argument order:
//   vm.builtin.alloc_storage(ctx, shape, device_index, dtype_hint, [scope]) -> storage
//       prod(shape) x sizeof(dtype_hint) bytes from device `device_index`'s allocator (-1: the host,
//       the last device); codegen passes a byte count with dtype_hint uint8
//   vm.builtin.alloc_tensor(storage, offset, shape, dtype, [scope]) -> tensor   a view at `offset`
//   vm.builtin.kill_object(x) -> null       `call kill_object(%r) -> %r` drops %r's reference
//   vm.builtin.reshape(tensor, shape) -> tensor                                 a view, no copy
//   vm.builtin.ensure_zero_offset(tensor) -> tensor             offset 0: the same, a view or a copy
//   vm.builtin.to_device([ctx,] tensor, device_type, device_id, [scope]) -> tensor   a copy
//   vm.builtin.memory_manager.clear([ctx])   returns cached memory to the system: the VM's
//       allocators' with %vm, every pooled allocator's without (as the reference's global one)
// Memory scopes: "" and "global" only (as on the reference's CPU).
#ifndef RELAXVM_BUILTINS_MEMORY_HPP
#define RELAXVM_BUILTINS_MEMORY_HPP

#include <cstdint>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/std_parts.hpp"  // std::sort, std::min, ...
#include "../base/checked_math.hpp"
#include "../base/error.hpp"
#include "../runtime/context.hpp"
#include "../runtime/allocator.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/shape.hpp"
#include "../runtime/tensor.hpp"
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI::builtins {

namespace detail {
// The optional memory scope after a builtin's arguments: none, "" or "global".
inline bool scope_ok(std::span<const value> rest) noexcept {
  if (rest.empty()) return true;
  if (rest.size() > 1 || rest[0].kind() != value_kind::string) return false;
  const std::string_view scope = value_traits<std::string_view>::get(rest[0]);
  return scope.empty() || scope == relaxvm::detail::literal("global");
}
inline status check_scope(std::string_view fn, std::span<const value> rest) {
  if (RELAXVM_LIKELY(scope_ok(rest))) return {};
  if (rest.size() > 1) return relaxvm::detail::type_error(fn, ": too many arguments");
  if (rest[0].kind() != value_kind::string)
    return relaxvm::detail::type_error(fn, ": the memory scope must be a string, but got ", rest[0].describe());
  return relaxvm::detail::value_error(fn, ": memory scope '", value_traits<std::string_view>::get(rest[0]),
                                      "' is not supported; use \"global\"");
}
// What alloc_storage(ctx, shape, device_index, dtype) asks for: `nbytes` from `device` (index -1:
// the host, the last). What is wrong when it cannot be asked (alloc_storage says it in words).
enum class storage_problem : std::uint8_t { none, device_index, size, too_large };
struct storage_request {
  const device_allocator* device = nullptr;
  std::int64_t device_index = 0;
  std::int64_t nbytes = 0;
};
RELAXVM_HOT_INLINE storage_problem request_storage(std::span<const device_allocator> devices, const shape& s,
                                                   std::int64_t device_index, dtype t, storage_request& out) noexcept {
  const auto count = static_cast<std::int64_t>(devices.size());
  out.device_index = device_index == -1 ? count - 1 : device_index;
  if (out.device_index < 0 || out.device_index >= count) return storage_problem::device_index;
  out.device = &devices[static_cast<std::size_t>(out.device_index)];
  std::int64_t numel = 0;
  if (!s.numel(numel) || !relaxvm::detail::checked_mul(numel, t.bytes(), out.nbytes)) return storage_problem::size;
  if (!relaxvm::detail::servable(out.nbytes)) return storage_problem::too_large;
  return storage_problem::none;
}
#if RELAXVM_HEAP
// Whether the storage an alloc_storage instruction kept (`kept`, its slot) is free again and is
// what it would allocate now: `size` bytes from device allocator `d`.
RELAXVM_HOT_INLINE bool kept_storage_fits(const kept_slot* kept, std::size_t size, const device_allocator& d) noexcept {
  const storage_object* k = kept_free_storage(kept);
  return k != nullptr && k->size == size && k->alignment == alloc_alignment && k->dev == d.device &&
         k->alloc.get() == d.allocator.get();
}
// Whether the view an alloc_tensor instruction kept is free again and is the view it would make
// now: the same view of the same storage (whose size and data never change), checked when it
// was made, so valid now.
RELAXVM_HOT_INLINE bool kept_view_fits(const kept_slot* kept, const storage_object& st, std::int64_t offset, const shape& s,
                                       dtype t) noexcept {
  const tensor_object* k = kept_exclusive<tensor_object>(kept);
  return k != nullptr && k->owner.get() == &st && k->dl.data == st.data && offset >= 0 &&
         k->dl.byte_offset == static_cast<std::uint64_t>(offset) && dtype(k->dl.dtype) == t && !k->read_only &&
         k->strides.empty() && (k->dims.get() == s.get() || std::equal(k->dims.dims().begin(), k->dims.dims().end(), s.dims().begin(), s.dims().end()));
}
#endif
}  // namespace detail

namespace detail {
RELAXVM_ERROR_FN error device_index_error(std::int64_t index, std::size_t devices) {
  // The builtin's name first: all that a terse error keeps.
  return relaxvm::detail::value_error("vm.builtin.alloc_storage", ": device index ", index,
                                      " is out of the VM's ", devices, " devices (use -1 for the host)");
}
/// alloc_storage once its arguments are checked: `size` bytes (servable) from device allocator `d`.
#if RELAXVM_HEAP
RELAXVM_HOT_INLINE result<value> allocate_storage(vm_context& ctx, const device_allocator& d, std::size_t size) {
  // The storage this instruction made last time, when the program no longer uses it and it fits
  // exactly; otherwise it goes back to its allocator before the new one is made.
  kept_slot* kept = d.allocator.reuses_any_order() ? ctx.instruction_slot() : nullptr;
  if (kept_storage_fits(kept, size, d)) return kept->get();
  if (kept != nullptr) drop_kept(*kept);
  RELAXVM_TRY_ASSIGN(object_ref<storage_object> st,
                     relaxvm::detail::storage_of(d.allocator.allocate_checked(size, alloc_alignment), d.allocator, size,
                                                 alloc_alignment, d.device));
  if (kept != nullptr) st->keeper = &ctx;
  value made(std::move(st));
  if (kept != nullptr) keep(*kept, made);
  return made;
}
#else  // nothing is kept: the storage itself
RELAXVM_HOT_INLINE result<object_ref<storage_object>> allocate_storage(vm_context&, const device_allocator& d,
                                                                       std::size_t size) {
  return relaxvm::detail::storage_of(d.allocator.allocate_checked(size, alloc_alignment), d.allocator, size,
                                     alloc_alignment, d.device);
}
#endif
}  // namespace detail

inline result<value> alloc_storage(vm_context& ctx, const shape& buffer_shape, std::int64_t device_index,
                                   dtype dtype_hint, std::span<const value> scope) {
  constexpr std::string_view fn = "vm.builtin.alloc_storage";
  RELAXVM_TRY(detail::check_scope(fn, scope));
  const auto devices = ctx.devices();
  detail::storage_request req;
  const detail::storage_problem problem = detail::request_storage(devices, buffer_shape, device_index, dtype_hint, req);
  if (problem == detail::storage_problem::device_index) return detail::device_index_error(req.device_index, devices.size());
  if (!dtype_hint.valid_for_tensor())
    return relaxvm::detail::value_error(fn, ": ", dtype_hint, " is not a valid element type");
  if (problem == detail::storage_problem::size)
    return relaxvm::detail::value_error(fn, ": the size of shape ", relaxvm::detail::dims_text{buffer_shape.dims()},
                                        " x ", dtype_hint, " is negative or overflows int64");
  // to_size's test and message, with the test request_storage made already.
  if (problem == detail::storage_problem::too_large)
    return relaxvm::detail::runtime_error(fn, ": cannot allocate ", req.nbytes, " bytes");
  RELAXVM_TRY_ASSIGN(value made, detail::allocate_storage(ctx, *req.device, static_cast<std::size_t>(req.nbytes)));
  return made;
}

inline result<tensor> alloc_tensor(const object_ref<storage_object>& st, std::int64_t offset, const shape& s, dtype t,
                                   std::span<const value> scope) {
  constexpr std::string_view fn = "vm.builtin.alloc_tensor";
  RELAXVM_TRY(detail::check_scope(fn, scope));
#if RELAXVM_HEAP
  // The view this instruction made last time, when nothing else holds it and it is the same view
  // of the same storage (whose size and data never change): checked then, so valid now.
  // Nothing is kept over an arena's storage (it would hold the arena's memory past its run).
  vm_context* ctx = st->alloc.reuses_any_order() ? running_context() : nullptr;
  if (kept_slot* kept = ctx != nullptr ? ctx->instruction_slot() : nullptr; kept != nullptr) {
    if (detail::kept_view_fits(kept, *st.get(), offset, s, t)) return value_traits<tensor>::get(kept->get());
    RELAXVM_TRY_ASSIGN(tensor made, view_storage(st, offset, s, t, fn));
    keep_view(*kept, made, *st.get(), ctx);
    return made;
  }
#endif
  return view_storage(st, offset, s, t, fn);
}

// ---- prepared call sites (vm_options::prepare_calls) ----------------------------------------
// A VM asks once per call site; the version it gets takes the site's fixed arguments as checked
// and serves the common case of a program run again with the same shapes (what the instruction
// kept fits); anything else goes to the general function, so results and errors are its own.
namespace detail {
using relaxvm::detail::all_fixed;
using relaxvm::detail::invoke_general;
using relaxvm::detail::is_fixed;
// The arguments from `from` on are fixed and a valid optional scope.
inline bool fixed_scope_ok(const value* args, std::uint32_t nargs, std::uint64_t fixed, std::uint32_t from) {
  return all_fixed(fixed, nargs, from) && scope_ok(std::span<const value>(args + from, nargs - from));
}

#if RELAXVM_HEAP
inline bool alloc_storage_prepared(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                                   std::optional<error>& err) {
  if (RELAXVM_LIKELY(args[0].kind() == value_kind::context && args[1].kind() == value_kind::shape)) {
    vm_context& ctx = *args[0].raw_context();
    storage_request req;
    if (request_storage(ctx.devices(), borrowed<shape>(args[1].raw_object()).get(),
                        value_traits<std::int64_t>::get(args[2]), value_traits<dtype>::get(args[3]),
                        req) == storage_problem::none) {
      kept_slot* kept = req.device->allocator.reuses_any_order() ? ctx.instruction_slot() : nullptr;
      if (kept_storage_fits(kept, static_cast<std::size_t>(req.nbytes), *req.device)) {
        ret = kept->get();
        return true;
      }
    }
  }
  return invoke_general(self, args, nargs, ret, err);
}
// alloc_storage(ctx, shape, device_index, dtype_hint, [scope]): the last three fixed and valid.
inline packed_invoke prepare_alloc_storage(const value* args, std::uint32_t nargs, std::uint64_t fixed) {
  if (nargs < 4 || !is_fixed(fixed, 2) || !is_fixed(fixed, 3) || !value_traits<std::int64_t>::check(args[2]) ||
      !value_traits<dtype>::check(args[3]) || !value_traits<dtype>::get(args[3]).valid_for_tensor() ||
      !fixed_scope_ok(args, nargs, fixed, 4))
    return nullptr;
  return &alloc_storage_prepared;
}

inline bool alloc_tensor_prepared(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                                  std::optional<error>& err) {
  if (RELAXVM_LIKELY(value_traits<object_ref<storage_object>>::check(args[0]) && args[2].kind() == value_kind::shape)) {
    const auto& st = *static_cast<const storage_object*>(args[0].raw_object());
    vm_context* ctx = st.alloc.reuses_any_order() ? running_context() : nullptr;
    if (kept_slot* kept = ctx != nullptr ? ctx->instruction_slot() : nullptr;
        kept_view_fits(kept, st, value_traits<std::int64_t>::get(args[1]), borrowed<shape>(args[2].raw_object()).get(),
                       value_traits<dtype>::get(args[3]))) {
      ret = kept->get();
      return true;
    }
  }
  return invoke_general(self, args, nargs, ret, err);
}
// alloc_tensor(storage, offset, shape, dtype, [scope]): offset, dtype and scope fixed and valid.
inline packed_invoke prepare_alloc_tensor(const value* args, std::uint32_t nargs, std::uint64_t fixed) {
  if (nargs < 4 || !is_fixed(fixed, 1) || !is_fixed(fixed, 3) || !value_traits<std::int64_t>::check(args[1]) ||
      !value_traits<dtype>::check(args[3]) || !fixed_scope_ok(args, nargs, fixed, 4))
    return nullptr;
  return &alloc_tensor_prepared;
}
#else
inline constexpr packed_prepare prepare_alloc_storage = nullptr;  // nothing is kept: nothing to serve
inline constexpr packed_prepare prepare_alloc_tensor = nullptr;
#endif
}  // namespace detail

/// A view with another shape; the source must be compact, and the view no larger (as in the
/// reference, where a smaller view of a larger buffer is allowed).
inline result<tensor> reshape(const tensor& t, const shape& s) {
  constexpr std::string_view fn = "vm.builtin.reshape";
  if (!t.is_contiguous()) return relaxvm::detail::value_error(fn, ": the tensor must be compact");
  std::int64_t numel = 0;
  if (!s.numel(numel))
    return relaxvm::detail::value_error(fn, ": shape ", relaxvm::detail::dims_text{s.dims()},
                                        " has a negative dimension or overflows int64");
  if (numel > t.numel())
    return relaxvm::detail::value_error(fn, ": View with shape ", relaxvm::detail::dims_text{s.dims()}, " would have a size of ",
                                        numel, " elements, but the tensor has ", t.numel());
  RELAXVM_TRY_ASSIGN(tensor v, tensor::try_view(t.dl().data, s, t.dtype(), t.device(), object_ref<object>::retain(t.get()),
                                               t.read_only()));
  v.get()->dl.byte_offset = t.byte_offset();
  return v;
}

/// The tensor itself when its byte_offset is 0; a view with the offset folded into the data
/// pointer when that stays 64-byte aligned; otherwise a copy (the reference's signature has no VM
/// context: the copy comes from the running VM's allocator, or the system's outside a VM).
namespace detail {
/// The allocator VM `ctx` has for device `d`; null when it has none, or outside a VM.
inline const allocator* allocator_for(vm_context* ctx, device d) noexcept {
  if (ctx)
    for (const device_allocator& a : ctx->devices())
      if (a.device == d) return &a.allocator;
  return nullptr;
}
/// The system's allocator, for a copy made outside a VM's devices. Firmware mode has no heap: an
/// error naming `fn` (and no allocator object made in the object memory only to fail).
inline result<allocator> system_allocator(std::string_view fn) {
#if RELAXVM_HEAP
  (void)fn;
  return allocator::naive();
#else
  return relaxvm::detail::runtime_error(fn, ": cannot copy outside the VM's devices", relaxvm::detail::no_heap_note);
#endif
}
}  // namespace detail

inline result<tensor> ensure_zero_offset(const tensor& t) {
  if (t.byte_offset() == 0) return t;
  if (!t.is_contiguous()) return relaxvm::detail::value_error("vm.builtin.ensure_zero_offset: the tensor must be compact");
  if (reinterpret_cast<std::uintptr_t>(t.raw_data()) % alloc_alignment == 0)
    return tensor::try_view(t.raw_data(), t.shape(), t.dtype(), t.device(), object_ref<object>::retain(t.get()),
                            t.read_only());
  // The copy comes from the running VM's allocator for that device, as the VM's memory does
  // (otherwise the system's): one copy_to call.
  const allocator* from = detail::allocator_for(running_context(), t.device());
  allocator system;
  if (from == nullptr) {
    RELAXVM_TRY_ASSIGN(system, detail::system_allocator("vm.builtin.ensure_zero_offset"));
    from = &system;
  }
  return copy_to(t, t.device(), *from);
}

/// A copy of the tensor on device (type, id), allocated from that device's allocator in the VM
/// (%vm, or the VM running the call; it must have the device); outside a VM, from the system.
inline result<value> to_device(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.to_device";
  vm_context* ctx = take_context(args);
  if (args.size() != 3 && args.size() != 4)
    return relaxvm::detail::type_error(fn, ": expects ([ctx,] tensor, device_type, device_id, [scope])");
  if (args[0].kind() != value_kind::tensor)
    return relaxvm::detail::type_error(fn, ": argument 0 expects tensor but got ", args[0].describe());
  if (args[1].kind() != value_kind::int64 || args[2].kind() != value_kind::int64)
    return relaxvm::detail::type_error(fn, ": the device type and id must be int64");
  RELAXVM_TRY(detail::check_scope(fn, args.subspan(3)));
  if (!is_known_device_type(args[1].raw_int()) || args[2].raw_int() < 0 || args[2].raw_int() > INT32_MAX)
    return relaxvm::detail::value_error(fn, ": device type ", args[1].raw_int(), " id ", args[2].raw_int(),
                                        " is not a DLPack device");
  const device target(static_cast<DLDeviceType>(args[1].raw_int()), static_cast<int>(args[2].raw_int()));
  const borrowed<tensor> src(args[0].raw_object());
  // One copy_to call, with the device's allocator in the VM or (outside a VM) the system's.
  const allocator* from = detail::allocator_for(ctx, target);
  allocator system;
  if (from == nullptr) {
    if (ctx) return relaxvm::detail::value_error(fn, ": the VM has no device ", target);
    RELAXVM_TRY_ASSIGN(system, detail::system_allocator(fn));
    from = &system;
  }
  RELAXVM_TRY_ASSIGN(tensor out, copy_to(src.get(), target, *from));
  return value(std::move(out));
}

/// Drops the register's reference: the call's result (null: it returns nothing) overwrites it.
inline void kill_object(const value&) {}

inline result<value> memory_manager_clear(std::span<const value> args) {
  if (args.size() > 1 || (args.size() == 1 && args[0].kind() != value_kind::context))
    return relaxvm::detail::type_error("vm.builtin.memory_manager.clear: expects ([ctx])");
  if (args.size() == 1) args[0].raw_context()->release_memory();
#if RELAXVM_HEAP  // without a heap no pooled allocator holds memory
  else relaxvm::detail::pooled_allocator::release_all();
#endif
  return value();
}

namespace detail {
/// alloc_storage(%vm, shape, device_index, dtype_hint, [scope]) at a call site that fixes all but
/// %vm (vm/call_site.hpp): its byte count is a constant of the code; only the device is looked up
/// at run time (the general function's first check, with its message).
struct alloc_storage_site {
  static constexpr object_rule objects = object_rule::storage;  // for linked::object_bytes
  template <class C>
  static constexpr std::int64_t nbytes() {
    std::int64_t numel = 0, n = -1;
    if (!relaxvm::detail::checked_numel(C::shape_at(1), numel) ||
        !relaxvm::detail::checked_mul(numel, C::dtype_at(3).bytes(), n) || !relaxvm::detail::servable(n))
      return -1;
    return n;
  }
  template <class C>
  static constexpr bool applies() {
    const std::size_t n = C::num_args;
    if ((n != 4 && n != 5) || !C::is_vm(0) || !C::is_const(1, const_kind::shape) || !C::is_int(2) ||
        !C::is_const(3, const_kind::dtype) || !C::dtype_at(3).valid_for_tensor())
      return false;
    if (n == 5 && !(C::is_const(4, const_kind::string) && (C::string_at(4).empty() || C::string_at(4) == "global")))
      return false;
    return nbytes<C>() >= 0;
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k == 0;
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    constexpr std::int64_t device_index = C::int_at(2);
    constexpr auto size = static_cast<std::size_t>(nbytes<C>());
    if constexpr (C::callee_sites == 1) return allocate(args, device_index, size, ret, err);
    else return allocated(args, device_index, size, ret, err);
  }
  // The sites' one body (a program's only site has it inline): their constants come as arguments.
  RELAXVM_NOINLINE static bool allocated(const value* args, std::int64_t fixed_index, std::size_t size, value& ret,
                                         std::optional<error>& err) {
    return allocate(args, fixed_index, size, ret, err);
  }
  RELAXVM_ALWAYS_INLINE static bool allocate(const value* args, std::int64_t fixed_index, std::size_t size,
                                             value& ret, std::optional<error>& err) {
    vm_context& ctx = *args[0].raw_context();
    const std::span<const device_allocator> devices = ctx.devices();
    const std::int64_t index = fixed_index == -1 ? static_cast<std::int64_t>(devices.size()) - 1 : fixed_index;
    if (RELAXVM_UNLIKELY(index < 0 || index >= static_cast<std::int64_t>(devices.size()))) {
      err.emplace(device_index_error(index, devices.size()));
      return false;
    }
    const device_allocator& d = devices[static_cast<std::size_t>(index)];
#if RELAXVM_HEAP
    auto made = allocate_storage(ctx, d, size);
    if (RELAXVM_UNLIKELY(!made.ok())) {
      err.emplace(std::move(made).error());
      return false;
    }
    ret = value(std::move(*made));
#else  // allocate_storage's steps, without a result for the storage
    result<void*> data = d.allocator.allocate_checked(size, alloc_alignment);
    if (RELAXVM_UNLIKELY(!data.ok())) {
      err.emplace(std::move(data).error());
      return false;
    }
    storage_object* st =
        relaxvm::detail::storage_object_for(data.checked_value(), d.allocator, size, alloc_alignment, d.device);
    if (RELAXVM_UNLIKELY(st == nullptr)) {
      err.emplace(relaxvm::detail::object_memory_error(sizeof(storage_object)));
      return false;
    }
    ret = value(object_ref<storage_object>::adopt(st));
#endif
    return true;
  }
};

/// alloc_tensor(storage, offset, shape, dtype, [scope]) at a call site that fixes all but the
/// storage, in firmware mode (with a heap, the general function keeps views for reuse; sites
/// there check only the storage argument, link.hpp). The view's size and alignment are constants
/// of the code: at run time only the storage's kind and size are tested, and when a test fails
/// the general function's checks (the adapter's argument error, check_view) give the error.
struct alloc_tensor_site {
  static constexpr object_rule objects = object_rule::tensor;  // for linked::object_bytes
  template <class C>
  static constexpr bool applies() {
    const std::size_t n = C::num_args;
    if (RELAXVM_HEAP || (n != 4 && n != 5) || !C::is_int(1) || !C::is_const(2, const_kind::shape) ||
        !C::is_const(3, const_kind::dtype) || !C::dtype_at(3).valid_for_tensor())
      return false;
    if (n == 5 && !(C::is_const(4, const_kind::string) && (C::string_at(4).empty() || C::string_at(4) == "global")))
      return false;
    std::int64_t numel = 0, nbytes = 0, end = 0;
    const std::int64_t offset = C::int_at(1);
    return relaxvm::detail::checked_numel(C::shape_at(2), numel) &&
           relaxvm::detail::checked_mul(numel, C::dtype_at(3).bytes(), nbytes) && offset >= 0 &&
           relaxvm::detail::checked_add(offset, nbytes, end) && (offset & (C::dtype_at(3).scalar_alignment() - 1)) == 0;
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k == 0 || k == 2;  // the storage, and the shape (the tensor holds it)
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    constexpr std::int64_t numel = [] {
      std::int64_t n = 0;
      relaxvm::detail::checked_numel(C::shape_at(2), n);
      return n;
    }();
    constexpr std::int64_t offset = C::int_at(1);
    constexpr dtype t = C::dtype_at(3);
    constexpr std::int64_t nbytes = numel * t.bytes();  // checked by applies()
    if constexpr (C::callee_sites == 1) return view(args, offset, t, numel, nbytes, ret, err);
    else return view_fixed(args, offset, t, numel, nbytes, ret, err);
  }
  // The sites' one body (a program's only site has it inline): their constants come as arguments.
  RELAXVM_NOINLINE static bool view_fixed(const value* args, std::int64_t offset, dtype t, std::int64_t numel,
                                          std::int64_t nbytes, value& ret, std::optional<error>& err) {
    return view(args, offset, t, numel, nbytes, ret, err);
  }
  RELAXVM_ALWAYS_INLINE static bool view(const value* args, std::int64_t offset, dtype t, std::int64_t numel,
                                         std::int64_t nbytes, value& ret, std::optional<error>& err) {
    constexpr std::string_view fn = "vm.builtin.alloc_tensor";
    using storage_arg = value_traits<object_ref<storage_object>>;
    if (RELAXVM_UNLIKELY(!storage_arg::check(args[0])))
      return relaxvm::detail::argument_failed(fn, 0, storage_arg::name, args[0], err);
    const relaxvm::detail::arg_holder<const object_ref<storage_object>&> st(args[0]);
    const borrowed<shape> s(args[2].raw_object());
    // check_view's test, the rest of it being constants that applies() checked (offset and
    // nbytes are not negative, their sum does not overflow, the offset is aligned).
    if (RELAXVM_UNLIKELY(static_cast<std::uint64_t>(offset + nbytes) > st.get()->size)) {
      err.emplace(relaxvm::detail::view_outside_storage(fn, nbytes, offset, st.get()->size));
      return false;
    }
    // view_checked_storage's steps, the view made in its one result.
    const storage_object& so = *st.get().get();
    if (RELAXVM_UNLIKELY(so.data == nullptr && nbytes > 0)) {
      err.emplace(relaxvm::detail::null_storage_data(nbytes));
      return false;
    }
    result<tensor> made = tensor::try_view_checked(so.data, s.get(), t, so.dev, st.get().get(), false, numel,
                                                   static_cast<std::uint64_t>(offset));
    if (RELAXVM_UNLIKELY(!made.ok())) {
      err.emplace(std::move(made).error());
      return false;
    }
    ret = value(std::move(made).checked_value());
    return true;
  }
};
}  // namespace detail

inline constexpr auto memory_table = make_table(
    fn<"vm.builtin.alloc_storage", detail::alloc_storage_site>(&alloc_storage, detail::prepare_alloc_storage),
    fn<"vm.builtin.alloc_tensor", detail::alloc_tensor_site>(&alloc_tensor, detail::prepare_alloc_tensor),
    fn<"vm.builtin.kill_object", makes<object_rule::none>>(&kill_object), fn<"vm.builtin.reshape", makes<object_rule::tensor>>(&reshape),
    fn<"vm.builtin.ensure_zero_offset">(&ensure_zero_offset), packed<"vm.builtin.to_device">(&to_device),
    packed<"vm.builtin.memory_manager.clear", makes<object_rule::none>>(&memory_manager_clear));

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_MEMORY_HPP
