// SPDX-License-Identifier: Apache-2.0
// The shape heap (builtins/shape_heap.hpp lists the shape builtins): an int64 host tensor whose
// slots hold symbolic dimensions, opened and checked in place; the argument readers every shape
// builtin shares; alloc_shape_heap, store_shape, load_shape, shape_of, tensor_to_shape and
// shape_to_tensor; and what the prepared and specialized call sites of all of them share.
#ifndef RELAXVM_BUILTINS_SHAPE_HEAP_HEAP_HPP
#define RELAXVM_BUILTINS_SHAPE_HEAP_HEAP_HPP

#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>

#include "../../base/config.hpp"  // RELAXVM_ABI
#include "../../base/checked_math.hpp"
#include "../../base/error.hpp"
#include "../../runtime/context.hpp"
#include "../../runtime/adapters.hpp"
#include "../../runtime/allocator.hpp"
#include "../../runtime/registry.hpp"
#include "../../runtime/shape.hpp"
#include "../../runtime/tensor.hpp"
#include "../../runtime/tuple.hpp"
#include "../../runtime/value.hpp"
#include "../codes.hpp"


namespace relaxvm::RELAXVM_ABI::builtins {

namespace detail {
using relaxvm::detail::cat;
using relaxvm::detail::runtime_error;
using relaxvm::detail::text;
using relaxvm::detail::type_error;
using relaxvm::detail::value_error;

/// The slots of a shape heap, checked: a compact, aligned, 1-d int64 host tensor.
struct heap_view {
  std::int64_t* slots = nullptr;
  std::int64_t size = 0;
  /// Whether `slot` can be read and written.
  bool has(std::int64_t slot) const noexcept { return slots != nullptr && slot >= 0 && slot < size; }
  /// A (code, value) pair of make_shape and shape_arith, `code` use_imm or load_shape: whether it
  /// can be read here, and what it reads (the immediate, or the slot).
  bool can_read(std::int64_t code, std::int64_t v) const noexcept {
    return code == static_cast<std::int64_t>(make_code::use_imm) || has(v);
  }
  std::int64_t read(std::int64_t code, std::int64_t v) const noexcept {
    return code == static_cast<std::int64_t>(make_code::use_imm) ? v : slots[v];
  }
};

// Why `v` is not a usable shape heap (try_open_heap said it is not).
RELAXVM_ERROR_FN error heap_error(std::string_view fn, const value& v) {
#if !RELAXVM_ERROR_TEXT
  // Terse errors keep the kind and the name: which test failed is not needed.
  if (v.kind() != value_kind::tensor) return type_error(fn);
  return value_error(fn);
#else
  if (v.kind() != value_kind::tensor)
    return type_error(fn, ": the shape heap must be a tensor, but got ", v.describe());
  const tensor heap = v.as<tensor>();
  if (heap.ndim() != 1 || heap.dtype() != dtype::int64() || heap.device().device_type != kDLCPU)
    return value_error(fn, ": the shape heap must be a 1-d int64 host tensor, but got ",
                       relaxvm::detail::dims_text{heap.shape().dims()}, " ", heap.dtype(), " on ",
                       heap.device());
  if (!heap.is_contiguous() || reinterpret_cast<std::uintptr_t>(heap.raw_data()) % alignof(std::int64_t) != 0)
    return value_error(fn, ": the shape heap must be compact and 8-byte aligned");
  return value_error(fn, ": the shape heap is read-only");
#endif
}

/// The slots of the shape heap `v` (a compact, aligned, 1-d int64 host tensor, writable if
/// `write`), or false (heap_error says why). Reads the tensor in place without taking a
/// reference: every shape builtin opens the heap, so this is their common path.
RELAXVM_HOT_INLINE bool try_open_heap(const value& v, bool write, heap_view& out) noexcept {
  if (RELAXVM_UNLIKELY(v.kind() != value_kind::tensor)) return false;
  const auto* o = static_cast<const tensor_object*>(v.raw_object());
  const DLTensor& dl = o->dl;
  if (RELAXVM_UNLIKELY(dl.ndim != 1 || dl.dtype.code != kDLInt || dl.dtype.bits != 64 || dl.dtype.lanes != 1 ||
                       dl.device.device_type != kDLCPU || (write && o->read_only)))
    return false;
  const std::int64_t size = o->dims[0];
  if (RELAXVM_UNLIKELY(!o->strides.empty() && size != 1 && o->strides[0] != 1)) return false;  // not compact
  std::int64_t* slots = dl.data ? reinterpret_cast<std::int64_t*>(static_cast<char*>(dl.data) + dl.byte_offset) : nullptr;
  if (RELAXVM_UNLIKELY(reinterpret_cast<std::uintptr_t>(slots) % alignof(std::int64_t) != 0)) return false;
  out = heap_view{slots, size};
  return true;
}

RELAXVM_HOT_INLINE result<heap_view> open_heap(std::string_view fn, const value& v, bool write) {
  heap_view h;
  if (RELAXVM_LIKELY(try_open_heap(v, write, h))) return h;
  return heap_error(fn, v);
}

/// Checks a slot number; `what` and `index` name it in the message ("shape[2]", "index 0"), which
/// is only formatted on failure: the success path allocates nothing.
RELAXVM_ERROR_FN error slot_error(std::string_view fn, std::string_view what, std::int64_t index,
                                  std::int64_t slot, const heap_view& h) {
#if !RELAXVM_ERROR_TEXT
  // Terse errors keep only the builtin's name: nothing else here is formatted.
  (void)what, (void)index, (void)slot, (void)h;
  return value_error(fn);
#else
  text name(what);
  if (index >= 0) {
    if (what == "shape") name << '[' << index << ']';
    else name << ' ' << index;
  }
  if (h.slots == nullptr) return value_error(fn, ": ", name, " reads or writes the shape heap, which is null");
  return value_error(fn, ": ", name, " is slot ", slot, ", outside the shape heap of ", h.size, " slots");
#endif
}
RELAXVM_HOT_INLINE status check_slot(std::string_view fn, std::string_view what, std::int64_t index,
                                               std::int64_t slot, const heap_view& h) {
  if (RELAXVM_LIKELY(h.has(slot))) return {};
  return slot_error(fn, what, index, slot, h);
}

RELAXVM_NOINLINE inline error int_arg_error(std::string_view fn, std::span<const value> args, std::size_t i,
                                            std::string_view what) {
  if (i >= args.size()) return type_error(fn, ": missing ", what, " (argument ", i, ")");
  return type_error(fn, ": ", what, " (argument ", i, ") must be an int64, but got ", args[i].describe());
}
/// What int_arg and context_arg accept: an int64 (or a bool), and a string or null.
RELAXVM_HOT_INLINE bool int_ok(const value& v) noexcept {
  return v.kind() == value_kind::int64 || v.kind() == value_kind::boolean;
}
RELAXVM_HOT_INLINE bool context_ok(const value& v) noexcept { return v.is_null() || v.kind() == value_kind::string; }
RELAXVM_HOT_INLINE result<std::int64_t> int_arg(std::string_view fn, std::span<const value> args,
                                                          std::size_t i, std::string_view what) {
  if (RELAXVM_LIKELY(i < args.size() && int_ok(args[i]))) return args[i].raw_int();
  return int_arg_error(fn, args, i, what);
}

/// The err_ctx argument: a string, or null for none.
inline result<std::string_view> context_arg(std::string_view fn, const value& v) {
  if (v.is_null()) return std::string_view();
  if (!context_ok(v)) return type_error(fn, ": the error context must be a string or null, but got ", v.describe());
  return value_traits<std::string_view>::get(v);
}

/// Where a make_shape instruction keeps its shape: its slot in the running VM, or null (outside
/// a VM, and in static_vm, which keeps nothing).
RELAXVM_HOT_INLINE kept_slot* make_shape_slot() noexcept {
  vm_context* ctx = RELAXVM_HEAP ? running_context() : nullptr;
  return ctx != nullptr ? ctx->instruction_slot() : nullptr;
}
/// How many leading dimensions of the shape kept in `kept` equal dim(0), dim(1), ... (n when it
/// is that shape), or -1 when no shape of n dimensions is kept there.
template <class Dim>
RELAXVM_HOT_INLINE std::int64_t kept_shape_prefix(const kept_slot* kept, std::size_t n, const Dim& dim) {
  if (kept == nullptr || kept->get().kind() != value_kind::shape || kept->get().raw_object() == nullptr) return -1;
  const auto* k = static_cast<const shape_object*>(kept->get().raw_object());
  if (k->size != static_cast<std::int64_t>(n)) return -1;
  std::size_t i = 0;
  while (i < n && k->dims()[i] == dim(i)) ++i;
  return static_cast<std::int64_t>(i);
}

/// The heap argument: a tensor, or null when only immediates are used.
RELAXVM_HOT_INLINE result<heap_view> heap_arg(std::string_view fn, const value& v, bool write) {
  if (v.is_null()) return heap_view{};
  return open_heap(fn, v, write);
}

/// Where an alloc_shape_heap instruction keeps its heap: its slot in VM `ctx`, or null.
RELAXVM_HOT_INLINE kept_slot* heap_slot(vm_context* ctx) noexcept {
  return RELAXVM_HEAP && ctx && ctx->devices().back().allocator.reuses_any_order() ? ctx->instruction_slot() : nullptr;
}
/// A new 1-d host tensor of `n` elements of type `t` (not initialized): from VM `ctx`'s host
/// allocator (its last device), or from the system outside a VM. alloc_shape_heap's,
/// shape_to_tensor's and get_tag_tensor's.
RELAXVM_NOINLINE inline result<tensor> host_vector(vm_context* ctx, std::int64_t n, dtype t) {
  std::int64_t* d = nullptr;
  RELAXVM_TRY_ASSIGN(shape dims, shape::try_uninitialized(1, d));
  d[0] = n;
  if (ctx) {
    const device_allocator& host = ctx->devices().back();
    return empty_tensor(dims, t, host.allocator, host.device);
  }
  return tensor::try_empty(dims, t);
}
/// Whether the heap kept in `kept` is free again and has `size` slots; if so, it is zeroed.
RELAXVM_HOT_INLINE bool reuse_kept_heap(const kept_slot* kept, std::int64_t size) noexcept {
  tensor_object* k = kept_exclusive<tensor_object>(kept);
  if (k == nullptr || k->dl.ndim != 1 || k->dims[0] != size || k->dl.dtype.code != kDLInt || k->dl.dtype.bits != 64 ||
      k->dl.device.device_type != kDLCPU || k->read_only || k->dl.byte_offset != 0 || !k->strides.empty() ||
      !k->owner || k->owner->use_count() != 1)
    return false;
  if (size > 0) std::memset(k->dl.data, 0, static_cast<std::size_t>(size) * sizeof(std::int64_t));
  return true;
}

}  // namespace detail

// ---- the shape heap, stores and loads ---------------------------------------------------------

/// The heap comes from the host device's allocator of the VM (%vm first, or the VM running the
/// call); outside a VM, from the system.
inline result<value> alloc_shape_heap(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.alloc_shape_heap";
  const std::size_t given = args.size();
  vm_context* ctx = take_context(args);
  if (args.size() != 1) return detail::type_error(fn, ": expects ([ctx,] size) but got ", given, " arguments");
  if (args[0].kind() != value_kind::int64)
    return detail::type_error(fn, ": size must be an int64, but got ", args[0].describe());
  const std::int64_t size = args[0].raw_int();
  if (size < 0) return detail::value_error(fn, ": size is ", size, "; it must be 0 or more");
  // The heap this instruction made last time, when nothing else holds it (a heap is private to
  // its frame, so it is free again once that frame has returned).
  kept_slot* kept = detail::heap_slot(ctx);
  if (detail::reuse_kept_heap(kept, size)) return kept->get();
  if (kept != nullptr) drop_kept(*kept);
  RELAXVM_TRY_ASSIGN(tensor heap, detail::host_vector(ctx, size, dtype::int64()));
  if (size > 0) std::memset(heap.raw_data(), 0, static_cast<std::size_t>(size) * sizeof(std::int64_t));
  value made(heap);
  if (kept != nullptr) keep(*kept, made);
  return made;
}

inline status store_shape(const shape& s, const value& heap_value, std::span<const value> indices) {
  constexpr std::string_view fn = "vm.builtin.store_shape";
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::open_heap(fn, heap_value, true));
  if (static_cast<std::int64_t>(indices.size()) != s.size())
    return detail::value_error(fn, ": the shape has ", s.size(), " dimensions but ", indices.size(),
                               " heap indices were given");
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i].kind() != value_kind::int64)
      return detail::type_error(fn, ": index ", i, " must be an int64 slot number, but got ", indices[i].describe());
    RELAXVM_TRY(detail::check_slot(fn, "index", static_cast<std::int64_t>(i), indices[i].raw_int(), heap));
  }
  for (std::size_t i = 0; i < indices.size(); ++i) heap.slots[indices[i].raw_int()] = s[static_cast<std::int64_t>(i)];
  return {};
}

inline result<shape> load_shape(const value& heap_value, std::span<const value> indices) {
  constexpr std::string_view fn = "vm.builtin.load_shape";
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::open_heap(fn, heap_value, false));
  // shape::generate with the dimensions read in place (no result for each).
  std::int64_t* dims = nullptr;
  RELAXVM_TRY_ASSIGN(shape s, shape::try_uninitialized(indices.size(), dims));
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i].kind() != value_kind::int64)
      return detail::type_error(fn, ": index ", i, " must be an int64 slot number, but got ", indices[i].describe());
    RELAXVM_TRY(detail::check_slot(fn, "index", static_cast<std::int64_t>(i), indices[i].raw_int(), heap));
    dims[i] = heap.slots[indices[i].raw_int()];
  }
  return s;
}

// ---- shapes and tensors --------------------------------------------------------------------

/// A 1-d int16/int32/int64 host tensor as a shape (the reference's tensor_to_shape).
inline result<shape> tensor_to_shape(const tensor& t) {
  constexpr std::string_view fn = "vm.builtin.tensor_to_shape";
  const dtype dt = t.dtype();
  const int bits = dt.bits;
  if (t.ndim() != 1 || !dt.is_int() || dt.lanes != 1 || (bits != 16 && bits != 32 && bits != 64))
    return detail::value_error(fn, ": expects a 1-d int16, int32 or int64 tensor, but got ",
                               relaxvm::detail::dims_text{t.shape().dims()}, " ", dt);
  if (!t.is_contiguous()) return detail::value_error(fn, ": the tensor must be compact");
  if (t.device().device_type != kDLCPU)
    return detail::value_error(fn, ": the tensor is on ", t.device(), "; it must be a host (cpu) tensor");
  const auto* p = static_cast<const unsigned char*>(t.raw_data());
  const std::size_t n = static_cast<std::size_t>(t.numel());
  std::int64_t* dims = nullptr;
  RELAXVM_TRY_ASSIGN(shape s, shape::try_uninitialized(n, dims));
  for (std::size_t i = 0; i < n; ++i) {
    if (bits == 16) {
      std::int16_t x;
      std::memcpy(&x, p + 2 * i, 2);
      dims[i] = x;
    } else if (bits == 32) {
      std::int32_t x;
      std::memcpy(&x, p + 4 * i, 4);
      dims[i] = x;
    } else {
      std::memcpy(&dims[i], p + 8 * i, 8);
    }
  }
  return s;
}

/// A shape as a 1-d int64 host tensor (what the Relay VM's ShapeOf gives).
inline result<tensor> shape_to_tensor(const shape& s) {
  // From the running VM's host allocator, as its memory is.
  RELAXVM_TRY_ASSIGN(tensor t, detail::host_vector(running_context(), s.size(), dtype::int64()));
  if (s.size() > 0) std::memcpy(t.raw_data(), s.data(), static_cast<std::size_t>(s.size()) * sizeof(std::int64_t));
  return t;
}

inline shape shape_of(const tensor& t) { return t.shape(); }

// ---- prepared call sites (vm_options::prepare_calls) ----------------------------------------
// A VM asks once per call site; the version it gets takes the site's fixed arguments (counts,
// codes, slots, error contexts) as checked, and goes to the general function for anything but the
// common case, so results and errors are the general function's.
namespace detail {
using relaxvm::detail::all_fixed;
using relaxvm::detail::invoke_general;

inline bool alloc_shape_heap_prepared(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                                      std::optional<error>& err) {
  kept_slot* kept = heap_slot(args[0].raw_context());
  if (RELAXVM_LIKELY(reuse_kept_heap(kept, args[1].raw_int()))) {
    ret = kept->get();
    return true;
  }
  return invoke_general(self, args, nargs, ret, err);
}
// alloc_shape_heap(%vm, size), both fixed, the size valid.
inline packed_invoke prepare_alloc_shape_heap(const value* args, std::uint32_t nargs, std::uint64_t fixed) {
  if (!RELAXVM_HEAP || nargs != 2 || fixed != 3 || args[0].kind() != value_kind::context ||
      args[1].kind() != value_kind::int64 || args[1].raw_int() < 0)
    return nullptr;
  return &alloc_shape_heap_prepared;
}

}  // namespace detail

// ---- call sites specialized at link time (vm/call_site.hpp) ---------------------------------
// A Call whose counts, codes, slots and error context are constants of the program runs with
// them as constants: only the input (and the heap) are read at run time. Each site is a small
// function that passes its constants (in read-only memory) to one body per builtin, so that many
// sites cost little more than one. The tests and messages are the general function's
// (match_one, make_dims, arith_group, ndim_ok, ...), so results and errors are the same; a site
// whose constants the general function would reject is not specialized (it runs the general
// function and gets its error).
namespace detail {
// A specialized site's error.
RELAXVM_NOINLINE inline bool argument_error(error e, std::optional<error>& err) {
  err.emplace(std::move(e));
  return false;
}
template <class C>
constexpr bool site_ints(std::size_t from, std::size_t to) {
  for (std::size_t k = from; k < to; ++k)
    if (!C::is_int(k)) return false;
  return true;
}
// The heap argument as heap_arg reads it (null: no heap), or false with the error in `err`.
RELAXVM_HOT_INLINE bool site_heap(std::string_view fn, const value& v, bool write, heap_view& heap,
                                  std::optional<error>& err) {
  if (v.is_null() || RELAXVM_LIKELY(try_open_heap(v, write, heap))) return true;
  return argument_error(heap_error(fn, v), err);
}

}  // namespace detail

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_SHAPE_HEAP_HEAP_HPP
