// SPDX-License-Identifier: Apache-2.0
// The shape machinery: the shape heap (an int64 host tensor whose slots hold symbolic dimensions),
// matching and making shapes against it, the struct-info checks, and shape arithmetic.
//
//   vm.builtin.alloc_shape_heap([ctx,] size) -> heap
//   vm.builtin.shape_of(tensor) -> shape
//   vm.builtin.store_shape(shape, heap, idx_0, ..., idx_{n-1})        heap[idx_i] = shape[i]
//   vm.builtin.load_shape(heap, idx_0, ..., idx_{n-1}) -> shape
//   vm.builtin.match_shape(tensor|shape, heap|null, n, code_0, v_0, ..., [err_ctx])
//   vm.builtin.make_shape(heap|null, n, code_0, v_0, ...) -> shape
//   vm.builtin.match_prim_value(int, heap|null, code, v, [err_ctx])
//   vm.builtin.make_prim_value(heap|null, code, v) -> int
//   vm.builtin.check_tensor_info(x, ndim, [dtype,] err_ctx)   check_shape_info(x, ndim, err_ctx)
//   vm.builtin.check_tuple_info(x, size, err_ctx)   check_func_info(x, err_ctx)
//   vm.builtin.check_prim_value_info(x, dtype, err_ctx)
//   vm.builtin.shape_arith(heap, op, dst, code_a, a, code_b, b, ...)   see below
//   vm.builtin.tensor_to_shape(tensor) -> shape     vm.builtin.shape_to_tensor(shape) -> tensor
//
// Codes, as in the reference: match_code {assert_equal_to_imm = 0, store_to_heap = 1, no_op = 2,
// assert_equal_to_load = 3}; make_code {use_imm = 0, load_shape = 1}. err_ctx is a string (the
// reference's "ErrorContext(...) ") or null, and starts every message.
//
// shape_arith computes symbolic dimensions with bytecode alone (the reference generates TIR for
// this). After the heap come groups of six integers, each one operation:
//   op, dst, code_a, a, code_b, b      heap[dst] = A op B
// where A is a (code_a = use_imm) or heap[a] (code_a = load_shape), B likewise, and op is
// add = 0, sub = 1, mul = 2, floordiv = 3, floormod = 4, min = 5, max = 6 (floordiv and floormod
// round toward negative infinity, like Python), and for symbolic conditions eq = 7, ne = 8, lt = 9,
// le = 10, gt = 11, ge = 12, and = 13, or = 14, which give 0 or 1 (and/or read non-zero as true).
// Groups run in order, so one call can compute n * 32 * 4 in two steps. Overflow and division by
// zero are runtime errors. The codes are in codes.hpp.
#ifndef RELAXVM_BUILTINS_SHAPE_HEAP_HPP
#define RELAXVM_BUILTINS_SHAPE_HEAP_HPP

#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/checked_math.hpp"
#include "../base/error.hpp"
#include "../runtime/context.hpp"
#include "../runtime/adapters.hpp"
#include "../runtime/allocator.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/shape.hpp"
#include "../runtime/tensor.hpp"
#include "../runtime/tuple.hpp"
#include "../runtime/value.hpp"
#include "codes.hpp"

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

// ---- match and make ------------------------------------------------------------------------

namespace detail {
/// A (code, value) pair of match_shape and make_shape.
struct code_pair {
  std::int64_t code = 0, v = 0;
};
// match_shape's steps, each a test and its message: shared by the general function and its
// specialized call sites.
/// The dimensions of match_shape's input (a tensor or a shape), read in place; false for another kind.
RELAXVM_HOT_INLINE bool input_dims(const value& input, std::span<const std::int64_t>& dims) {
  if (input.kind() == value_kind::tensor) {
    dims = static_cast<const tensor_object*>(input.raw_object())->dims.dims();
  } else if (input.kind() == value_kind::shape) {
    const auto* s = static_cast<const shape_object*>(input.raw_object());
    dims = s ? std::span<const std::int64_t>(s->dims(), static_cast<std::size_t>(s->size)) : std::span<const std::int64_t>();
  } else {
    return false;
  }
  return true;
}
RELAXVM_ERROR_FN error not_matchable(std::string_view ctx, const value& input) {
  return type_error(ctx, "vm.builtin.match_shape: expects a Tensor or a Shape but got ", input.describe());
}
RELAXVM_ERROR_FN error match_size_mismatch(std::string_view ctx) {
  return runtime_error(ctx, "match_cast shape size mismatch.");
}
enum class match_outcome : std::uint8_t { ok, differs_from_imm, bad_slot, differs_from_load, unknown_code };
/// Dimension `d` against pair `p` (storing it in the heap when p says so).
RELAXVM_HOT_INLINE match_outcome match_one(std::int64_t d, code_pair p, const heap_view& heap) {
  switch (static_cast<match_code>(p.code)) {
    case match_code::assert_equal_to_imm: return d == p.v ? match_outcome::ok : match_outcome::differs_from_imm;
    case match_code::store_to_heap:
      if (!heap.has(p.v)) return match_outcome::bad_slot;
      heap.slots[p.v] = d;
      return match_outcome::ok;
    case match_code::no_op: return match_outcome::ok;
    case match_code::assert_equal_to_load:
      if (!heap.has(p.v)) return match_outcome::bad_slot;
      return d == heap.slots[p.v] ? match_outcome::ok : match_outcome::differs_from_load;
  }
  return match_outcome::unknown_code;
}
/// The error of a match_one that did not give ok, at dimension i.
RELAXVM_ERROR_FN error match_error(match_outcome o, std::string_view ctx, std::int64_t i, std::int64_t d,
                                   code_pair p, const heap_view& heap) {
  constexpr std::string_view fn = "vm.builtin.match_shape";
  switch (o) {
    case match_outcome::differs_from_imm:
      return runtime_error(ctx, "match_cast error,  shape[", i, "] mismatch to specified constant. (", d, " is not ", p.v,
                           ")");
    case match_outcome::differs_from_load:
      return runtime_error(ctx, "match_cast error,  shape[", i, "] mismatch to a previous populated value. (", d,
                           " is not ", heap.slots[p.v], ")");
    case match_outcome::bad_slot: return slot_error(fn, "shape", i, p.v, heap);
    default: return value_error(fn, ": Unknown match shape code: ", p.code);
  }
}
}  // namespace detail

inline status match_shape(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.match_shape";
  if (args.size() < 3) return detail::type_error(fn, ": expects (input, heap, n, code, value, ..., [err_ctx]) but got ", args.size(), " arguments");
  RELAXVM_TRY_ASSIGN(std::int64_t n, detail::int_arg(fn, args, 2, "n"));
  if (n < 0 || static_cast<std::uint64_t>(n) > (args.size() - 3) / 2)
    return detail::type_error(fn, ": n is ", n, " but ", args.size(), " arguments hold ", (args.size() - 3) / 2, " (code, value) pairs");
  const std::size_t expected = 3 + 2 * static_cast<std::size_t>(n);
  if (args.size() != expected && args.size() != expected + 1)
    return detail::type_error(fn, ": ", args.size(), " arguments for n = ", n, "; expected ", expected, " or ", expected + 1);
  std::string_view ctx;
  if (args.size() == expected + 1) {
    RELAXVM_TRY_ASSIGN(ctx, detail::context_arg(fn, args[expected]));
  }
  std::span<const std::int64_t> dims;
  if (!detail::input_dims(args[0], dims)) return detail::not_matchable(ctx, args[0]);
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::heap_arg(fn, args[1], true));
  if (static_cast<std::int64_t>(dims.size()) != n) return detail::match_size_mismatch(ctx);
  // n is bounded by the argument count (checked above): the loop counts in size_t.
  for (std::size_t i = 0; i < dims.size(); ++i) {
    RELAXVM_TRY_ASSIGN(std::int64_t code, detail::int_arg(fn, args, 3 + 2 * i, "a code"));
    RELAXVM_TRY_ASSIGN(std::int64_t v, detail::int_arg(fn, args, 4 + 2 * i, "a value"));
    const std::int64_t d = dims[i];
    if (const detail::match_outcome o = detail::match_one(d, {code, v}, heap); o != detail::match_outcome::ok)
      return detail::match_error(o, ctx, static_cast<std::int64_t>(i), d, {code, v}, heap);
  }
  return {};
}

namespace detail {
/// make_shape once its pairs are checked: the shape of dimensions dim(0), ..., dim(n - 1), or the
/// one the instruction kept when that is it.
template <class Dim>
RELAXVM_HOT_INLINE result<shape> make_dims(std::size_t n, const Dim& dim) {
  // The shape this instruction made last time: shapes are values, so an equal one is handed out
  // again however many hold it; one nothing else holds is rewritten in place.
  kept_slot* kept = n > 0 ? make_shape_slot() : nullptr;
  if (const std::int64_t same = kept_shape_prefix(kept, n, dim); same >= 0) {
    auto* k = static_cast<shape_object*>(kept->get().raw_object());
    if (same == static_cast<std::int64_t>(n)) return value_traits<shape>::get(kept->get());
    if (k->use_count() == 1) {
      for (auto i = static_cast<std::size_t>(same); i < n; ++i) k->dims()[i] = dim(i);
      return value_traits<shape>::get(kept->get());
    }
  }
  std::int64_t* dims = nullptr;
  RELAXVM_TRY_ASSIGN(shape s, shape::try_uninitialized(n, dims));
  for (std::size_t i = 0; i < n; ++i) dims[i] = dim(i);
  if (kept != nullptr) keep(*kept, value(s));
  return s;
}
}  // namespace detail

inline result<shape> make_shape(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.make_shape";
  if (args.size() < 2) return detail::type_error(fn, ": expects (heap, n, code, value, ...) but got ", args.size(), " arguments");
  RELAXVM_TRY_ASSIGN(std::int64_t n, detail::int_arg(fn, args, 1, "n"));
  if (n < 0 || (args.size() - 2) % 2 != 0 || static_cast<std::uint64_t>(n) != (args.size() - 2) / 2)
    return detail::type_error(fn, ": n is ", n, " but ", args.size() - 2, " arguments follow it; expected 2n");
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::heap_arg(fn, args[0], false));
  // Every (code, value) pair is checked before the shape is made, so that filling it cannot fail.
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    RELAXVM_TRY_ASSIGN(std::int64_t code, detail::int_arg(fn, args, 2 + 2 * i, "a code"));
    RELAXVM_TRY_ASSIGN(std::int64_t v, detail::int_arg(fn, args, 3 + 2 * i, "a value"));
    if (code == static_cast<std::int64_t>(make_code::load_shape)) {
      RELAXVM_TRY(detail::check_slot(fn, "dimension", static_cast<std::int64_t>(i), v, heap));
    } else if (RELAXVM_UNLIKELY(code != static_cast<std::int64_t>(make_code::use_imm))) {
      return detail::value_error(fn, ": Unknown make shape code: ", code);
    }
  }
  return detail::make_dims(static_cast<std::size_t>(n),
                           [&](std::size_t i) { return heap.read(args[2 + 2 * i].raw_int(), args[3 + 2 * i].raw_int()); });
}

inline status match_prim_value(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.match_prim_value";
  if (args.size() != 4 && args.size() != 5)
    return detail::type_error(fn, ": expects (value, heap, code, v, [err_ctx]) but got ", args.size(), " arguments");
  std::string_view ctx;
  if (args.size() == 5) {
    RELAXVM_TRY_ASSIGN(ctx, detail::context_arg(fn, args[4]));
  }
  if (args[0].kind() != value_kind::int64 && args[0].kind() != value_kind::boolean)
    return detail::type_error(ctx, fn, ": expects an integer value but got ", args[0].describe());
  const std::int64_t x = args[0].raw_int();
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::heap_arg(fn, args[1], true));
  RELAXVM_TRY_ASSIGN(std::int64_t code, detail::int_arg(fn, args, 2, "the code"));
  RELAXVM_TRY_ASSIGN(std::int64_t v, detail::int_arg(fn, args, 3, "the value"));
  // The two codes that use a slot check it first (one check for both).
  if (code == static_cast<std::int64_t>(match_code::store_to_heap) ||
      code == static_cast<std::int64_t>(match_code::assert_equal_to_load))
    RELAXVM_TRY(detail::check_slot(fn, "the value", -1, v, heap));
  switch (static_cast<match_code>(code)) {
    case match_code::assert_equal_to_imm:
      if (x != v) return detail::runtime_error(ctx, "PrimValue mismatch to specified constant. (", x, " is not ", v, ")");
      return {};
    case match_code::store_to_heap:
      heap.slots[v] = x;
      return {};
    case match_code::no_op: return {};
    case match_code::assert_equal_to_load:
      if (x != heap.slots[v])
        return detail::runtime_error(ctx, "PrimValue mismatch to a previous populated value. (", x, " is not ",
                                     heap.slots[v], ")");
      return {};
  }
  return detail::value_error(fn, ": Unknown match shape code: ", code);
}

inline result<std::int64_t> make_prim_value(const value& heap_value, std::int64_t code, std::int64_t v) {
  constexpr std::string_view fn = "vm.builtin.make_prim_value";
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::heap_arg(fn, heap_value, false));
  switch (static_cast<make_code>(code)) {
    case make_code::use_imm: return v;
    case make_code::load_shape:
      RELAXVM_TRY(detail::check_slot(fn, "the value", -1, v, heap));
      return heap.slots[v];
  }
  return detail::value_error(fn, ": Invalid shape code: ", code);
}

// ---- struct-info checks --------------------------------------------------------------------

namespace detail {
// check_tensor_info's checks of x, each a test and its message: shared by the general function
// and its specialized call sites.
RELAXVM_ERROR_FN error not_a_tensor(std::string_view ctx, const value& x) {
  return type_error(ctx, "expect a Tensor but get ", to_string(x.kind()));
}
RELAXVM_ERROR_FN error wrong_ndim(std::string_view ctx, std::int64_t ndim, std::int64_t got) {
  return value_error(ctx, "expect Tensor with ndim ", ndim, " but get ", got);
}
RELAXVM_ERROR_FN error wrong_dtype(std::string_view ctx, dtype want, dtype got) {
  return value_error(ctx, "expect Tensor with dtype ", want, " but get ", got);
}
RELAXVM_HOT_INLINE bool ndim_ok(const DLTensor& dl, std::int64_t ndim) { return ndim == -1 || dl.ndim == ndim; }
RELAXVM_HOT_INLINE bool dtype_ok(const DLTensor& dl, dtype want) { return want.is_void() || want == dtype(dl.dtype); }
}  // namespace detail

inline status check_tensor_info(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.check_tensor_info";
  if (args.size() != 3 && args.size() != 4)
    return detail::type_error(fn, ": expects (x, ndim, [dtype,] err_ctx) but got ", args.size(), " arguments");
  RELAXVM_TRY_ASSIGN(std::string_view ctx, detail::context_arg(fn, args.back()));
  if (args[0].kind() != value_kind::tensor) return detail::not_a_tensor(ctx, args[0]);
  const DLTensor& dl = static_cast<const tensor_object*>(args[0].raw_object())->dl;
  RELAXVM_TRY_ASSIGN(std::int64_t ndim, detail::int_arg(fn, args, 1, "ndim"));
  if (!detail::ndim_ok(dl, ndim)) return detail::wrong_ndim(ctx, ndim, dl.ndim);
  if (args.size() == 4) {
    if (args[2].kind() != value_kind::dtype)
      return detail::type_error(fn, ": dtype (argument 2) must be a dtype, but got ", args[2].describe());
    const dtype want = value_traits<dtype>::get(args[2]);  // its kind was checked
    if (!detail::dtype_ok(dl, want)) return detail::wrong_dtype(ctx, want, dtype(dl.dtype));
  }
  return {};
}

inline status check_shape_info(const value& x, std::int64_t ndim, const value& err_ctx) {
  constexpr std::string_view fn = "vm.builtin.check_shape_info";
  RELAXVM_TRY_ASSIGN(std::string_view ctx, detail::context_arg(fn, err_ctx));
  if (x.kind() != value_kind::shape) return detail::type_error(ctx, "expect a Shape but get ", to_string(x.kind()));
  // Its kind was checked: the size is read in place, without a reference.
  const auto* o = static_cast<const shape_object*>(x.raw_object());
  const std::int64_t size = o ? o->size : 0;
  if (ndim != -1 && size != ndim) return detail::value_error(ctx, "expect Shape with ndim ", ndim, " but get ", size);
  return {};
}

inline status check_tuple_info(const value& x, std::int64_t size, const value& err_ctx) {
  constexpr std::string_view fn = "vm.builtin.check_tuple_info";
  RELAXVM_TRY_ASSIGN(std::string_view ctx, detail::context_arg(fn, err_ctx));
  if (x.kind() != value_kind::tuple) return detail::type_error(ctx, "expect a Tuple but get ", to_string(x.kind()));
  // Its kind was checked: the size is read in place, without a reference.
  const auto* o = static_cast<const tuple_object*>(x.raw_object());
  const std::int64_t got = o ? o->size : 0;
  if (got != size)
    return detail::value_error(ctx, "expect a Tuple with ", size, " elements,  but get a Tuple with ", got, " elements.");
  return {};
}

inline status check_func_info(const value& x, const value& err_ctx) {
  constexpr std::string_view fn = "vm.builtin.check_func_info";
  RELAXVM_TRY_ASSIGN(std::string_view ctx, detail::context_arg(fn, err_ctx));
  if (x.kind() != value_kind::closure) return detail::type_error(ctx, "expect a Function but get ", to_string(x.kind()));
  return {};
}

inline status check_prim_value_info(const value& x, dtype t, const value& err_ctx) {
  constexpr std::string_view fn = "vm.builtin.check_prim_value_info";
  RELAXVM_TRY_ASSIGN(std::string_view ctx, detail::context_arg(fn, err_ctx));
  if (holds_object(x.kind()))
    return detail::type_error(ctx, ", expected dtype ", t, ", but received ObjectRef of type ", to_string(x.kind()));
  bool ok = false;
  if (t.is_bool()) ok = x.kind() == value_kind::boolean || x.kind() == value_kind::int64;
  else if (t.is_int() || t.is_uint()) ok = x.kind() == value_kind::int64 || x.kind() == value_kind::boolean;
  else if (t.is_float()) ok = x.kind() == value_kind::float64 || x.kind() == value_kind::int64;
  else if (t.code == kDLOpaqueHandle && !t.is_void()) ok = x.kind() == value_kind::null || x.kind() == value_kind::context;
  else return detail::type_error(ctx, ", unsupported dtype ", t);
  if (!ok) return detail::type_error(ctx, ", expected dtype ", t, ", but received ", x.describe());
  return {};
}

/// Checks that heap[slot], the value of symbolic variable `var` (a string), lies in [0, bound]:
/// the upper bound a function declares for it (ir::function_builder::upper_bound), which memory
/// planning sized storages by. Lowering calls it right after the parameters are matched.
inline status check_upper_bound(const value& heap_value, std::int64_t slot, std::int64_t bound, const value& var,
                                const value& err_ctx) {
  constexpr std::string_view fn = "vm.builtin.check_upper_bound";
  RELAXVM_TRY_ASSIGN(std::string_view ctx, detail::context_arg(fn, err_ctx));
  if (var.kind() != value_kind::string)
    return detail::type_error(fn, ": the variable's name (argument 3) must be a string, but got ", var.describe());
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::open_heap(fn, heap_value, false));
  RELAXVM_TRY(detail::check_slot(fn, "the variable", -1, slot, heap));
  const std::int64_t x = heap.slots[slot];
  const std::string_view name = value_traits<std::string_view>::get(var);  // its kind was checked
  if (x > bound)
    return detail::value_error(ctx, "symbolic variable ", name, " is ", x, ", larger than its upper bound ", bound);
  if (x < 0)
    return detail::value_error(ctx, "symbolic variable ", name, " is ", x, "; a variable with an upper bound (", bound,
                               ") must be 0 or more");
  return {};
}

// ---- arithmetic on the heap ----------------------------------------------------------------

namespace detail {
inline std::string_view op_symbol(arith_op op) {
  switch (op) {
    case arith_op::add: return "+";
    case arith_op::sub: return "-";
    case arith_op::mul: return "*";
    case arith_op::floordiv: return "//";
    case arith_op::floormod: return "%";
    case arith_op::min: return "min";
    case arith_op::max: return "max";
    case arith_op::eq: return "==";
    case arith_op::ne: return "!=";
    case arith_op::lt: return "<";
    case arith_op::le: return "<=";
    case arith_op::gt: return ">";
    case arith_op::ge: return ">=";
    case arith_op::and_: return "and";
    case arith_op::or_: return "or";
  }
  return "?";
}

enum class arith_outcome : std::uint8_t { ok, overflows, divides_by_zero, unknown_op };
/// r = a op b.
RELAXVM_HOT_INLINE arith_outcome apply(arith_op op, std::int64_t a, std::int64_t b, std::int64_t& r) noexcept {
  bool ok = true;
  switch (op) {
    case arith_op::add: ok = relaxvm::detail::checked_add(a, b, r); break;
    case arith_op::sub: ok = relaxvm::detail::checked_sub(a, b, r); break;
    case arith_op::mul: ok = relaxvm::detail::checked_mul(a, b, r); break;
    case arith_op::floordiv:
    case arith_op::floormod: {
      if (b == 0) return arith_outcome::divides_by_zero;
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
        ok = op == arith_op::floormod;  // the quotient overflows; the remainder is 0
        r = 0;
        break;
      }
      std::int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) {
        q -= 1;
        m += b;
      }
      r = op == arith_op::floordiv ? q : m;
      break;
    }
    case arith_op::min: r = a < b ? a : b; break;
    case arith_op::max: r = a < b ? b : a; break;
    case arith_op::eq: r = a == b; break;
    case arith_op::ne: r = a != b; break;
    case arith_op::lt: r = a < b; break;
    case arith_op::le: r = a <= b; break;
    case arith_op::gt: r = a > b; break;
    case arith_op::ge: r = a >= b; break;
    case arith_op::and_: r = a != 0 && b != 0; break;
    case arith_op::or_: r = a != 0 || b != 0; break;
    default: return arith_outcome::unknown_op;
  }
  return ok ? arith_outcome::ok : arith_outcome::overflows;
}
}  // namespace detail

namespace detail {
/// One group of shape_arith: heap[w[1]] = A w[0] B, with A from (w[2], w[3]) and B from (w[4], w[5]).
RELAXVM_HOT_INLINE status arith_group(const heap_view& heap, const std::int64_t (&w)[6]) {
  constexpr std::string_view fn = "vm.builtin.shape_arith";
  std::int64_t operand[2];
  // The operands, then the destination: one slot check for the three.
  for (int k = 0; k < 3; ++k) {
    std::int64_t slot = w[1];
    if (k < 2) {
      const std::int64_t code = w[2 + 2 * k], v = w[3 + 2 * k];
      if (code == static_cast<std::int64_t>(make_code::use_imm)) {
        operand[k] = v;
        continue;
      }
      if (code != static_cast<std::int64_t>(make_code::load_shape))
        return value_error(fn, ": Unknown make shape code: ", code);
      slot = v;
    }
    RELAXVM_TRY(check_slot(fn, k < 2 ? "an operand" : "the destination", -1, slot, heap));
    if (k < 2) operand[k] = heap.slots[slot];
  }
  const auto op = static_cast<arith_op>(w[0]);
  const std::int64_t a = operand[0], b = operand[1];
  std::int64_t r = 0;
  switch (apply(op, a, b, r)) {
    case arith_outcome::ok: break;
    case arith_outcome::divides_by_zero:
      return runtime_error(fn, ": heap[", w[1], "] = ", a, " ", op_symbol(op), " 0 divides by zero");
    case arith_outcome::overflows:
      return runtime_error(fn, ": heap[", w[1], "] = ", a, " ", op_symbol(op), " ", b, " overflows int64");
    case arith_outcome::unknown_op:
      return value_error(fn, ": unknown operation ", w[0], "; expected 0 (add) to 14 (or)");
  }
  heap.slots[w[1]] = r;
  return {};
}
}  // namespace detail

inline status shape_arith(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.shape_arith";
  if (args.empty() || (args.size() - 1) % 6 != 0)
    return detail::type_error(fn, ": expects (heap, then groups of op, dst, code_a, a, code_b, b) but got ", args.size(),
                              " arguments");
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::open_heap(fn, args[0], true));
  for (std::size_t g = 1; g < args.size(); g += 6) {
    std::int64_t w[6];
    for (std::size_t k = 0; k < 6; ++k) {
      RELAXVM_TRY_ASSIGN(w[k], detail::int_arg(fn, args, g + k, "an operand"));
    }
    RELAXVM_TRY(detail::arith_group(heap, w));
  }
  return {};
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

inline bool match_shape_prepared(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                                 std::optional<error>& err) {
  const auto n = static_cast<std::size_t>(args[2].raw_int());
  const std::int64_t* dims = nullptr;
  std::size_t ndims = 0;
  if (args[0].kind() == value_kind::tensor) {
    const auto d = static_cast<const tensor_object*>(args[0].raw_object())->dims.dims();
    dims = d.data();
    ndims = d.size();
  } else if (args[0].kind() == value_kind::shape && args[0].raw_object() != nullptr) {
    const auto* o = static_cast<const shape_object*>(args[0].raw_object());
    dims = o->dims();
    ndims = static_cast<std::size_t>(o->size);
  } else {
    return invoke_general(self, args, nargs, ret, err);
  }
  heap_view heap;
  if (ndims != n || (!args[1].is_null() && !try_open_heap(args[1], true, heap))) return invoke_general(self, args, nargs, ret, err);
  // A mismatch goes to the general function, which repeats what this did so far (stores of the
  // same values: prepare_match_shape allows no store to a slot this call has named before) and
  // fails where this stopped.
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t v = args[4 + 2 * i].raw_int();
    switch (static_cast<match_code>(args[3 + 2 * i].raw_int())) {
      case match_code::assert_equal_to_imm:
        if (dims[i] != v) return invoke_general(self, args, nargs, ret, err);
        break;
      case match_code::store_to_heap:
        if (!heap.has(v)) return invoke_general(self, args, nargs, ret, err);
        heap.slots[v] = dims[i];
        break;
      case match_code::no_op: break;
      case match_code::assert_equal_to_load:
        if (!heap.has(v) || dims[i] != heap.slots[v]) return invoke_general(self, args, nargs, ret, err);
        break;
    }
  }
  ret.reset();
  return true;
}
// match_shape(input, heap, n, code, value, ..., [err_ctx]): all but the input and the heap fixed
// and valid, and no store to a slot named earlier in the same call.
inline packed_invoke prepare_match_shape(const value* args, std::uint32_t nargs, std::uint64_t fixed) {
  if (nargs < 3 || !all_fixed(fixed, nargs, 2) || !int_ok(args[2]) || args[2].raw_int() < 0 || args[2].raw_int() > 32)
    return nullptr;
  const auto n = static_cast<std::uint32_t>(args[2].raw_int());
  if (nargs != 3 + 2 * n && !(nargs == 4 + 2 * n && context_ok(args[nargs - 1]))) return nullptr;
  const auto names_slot = [&](std::uint32_t j) {
    const std::int64_t c = args[3 + 2 * j].raw_int();
    return c == static_cast<std::int64_t>(match_code::store_to_heap) ||
           c == static_cast<std::int64_t>(match_code::assert_equal_to_load);
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    const value &code = args[3 + 2 * i], &v = args[4 + 2 * i];
    if (!int_ok(code) || !int_ok(v) || code.raw_int() < 0 || code.raw_int() > 3) return nullptr;
    if (code.raw_int() == static_cast<std::int64_t>(match_code::store_to_heap))
      for (std::uint32_t j = 0; j < i; ++j)
        if (names_slot(j) && args[4 + 2 * j].raw_int() == v.raw_int()) return nullptr;
  }
  return &match_shape_prepared;
}

inline bool make_shape_prepared(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                                std::optional<error>& err) {
  heap_view heap;
  if (!args[0].is_null() && !try_open_heap(args[0], false, heap)) return invoke_general(self, args, nargs, ret, err);
  const std::size_t n = (nargs - 2) / 2;
  for (std::size_t i = 0; i < n; ++i)
    if (!heap.can_read(args[2 + 2 * i].raw_int(), args[3 + 2 * i].raw_int()))
      return invoke_general(self, args, nargs, ret, err);
  const auto dim = [&](std::size_t i) { return heap.read(args[2 + 2 * i].raw_int(), args[3 + 2 * i].raw_int()); };
  kept_slot* kept = make_shape_slot();
  if (RELAXVM_LIKELY(kept_shape_prefix(kept, n, dim) == static_cast<std::int64_t>(n))) {
    ret = kept->get();
    return true;
  }
  return invoke_general(self, args, nargs, ret, err);
}
// make_shape(heap, n, code, value, ...): all but the heap fixed and valid, n > 0. (Without a heap
// nothing is kept, and the prepared version would serve nothing.)
inline packed_invoke prepare_make_shape(const value* args, std::uint32_t nargs, std::uint64_t fixed) {
  if (!RELAXVM_HEAP || nargs < 4 || nargs % 2 != 0 || !all_fixed(fixed, nargs, 1) || !int_ok(args[1]) ||
      args[1].raw_int() != static_cast<std::int64_t>((nargs - 2) / 2))
    return nullptr;
  for (std::uint32_t k = 2; k < nargs; k += 2)
    if (!int_ok(args[k]) || !int_ok(args[k + 1]) ||
        (args[k].raw_int() != static_cast<std::int64_t>(make_code::use_imm) &&
         args[k].raw_int() != static_cast<std::int64_t>(make_code::load_shape)))
      return nullptr;
  return &make_shape_prepared;
}

inline bool shape_arith_prepared(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                                 std::optional<error>& err) {
  heap_view heap;
  if (!try_open_heap(args[0], true, heap)) return invoke_general(self, args, nargs, ret, err);
  // Anything unusual goes to the general function, which repeats the groups done so far with the
  // same results (prepare_shape_arith accepts only groups whose reads a re-run finds unchanged or
  // computes again) and fails where this stopped.
  for (std::uint32_t g = 1; g < nargs; g += 6) {
    const value* w = args + g;
    const std::int64_t dst = w[1].raw_int(), code_a = w[2].raw_int(), a = w[3].raw_int(), code_b = w[4].raw_int(),
                       b = w[5].raw_int();
    std::int64_t r = 0;
    if (!heap.can_read(code_a, a) || !heap.can_read(code_b, b) || !heap.has(dst) ||
        apply(static_cast<arith_op>(w[0].raw_int()), heap.read(code_a, a), heap.read(code_b, b), r) != arith_outcome::ok)
      return invoke_general(self, args, nargs, ret, err);
    heap.slots[dst] = r;
  }
  ret.reset();
  return true;
}
// shape_arith(heap, op, dst, code_a, a, code_b, b, ...): all but the heap fixed and valid, and
// each slot a group reads is written by an earlier group (a re-run computes it again from the same
// inputs) or by no group from this one on (a re-run finds it as it was).
inline packed_invoke prepare_shape_arith(const value* args, std::uint32_t nargs, std::uint64_t fixed) {
  if (nargs < 7 || (nargs - 1) % 6 != 0 || !all_fixed(fixed, nargs, 1)) return nullptr;
  for (std::uint32_t k = 1; k < nargs; ++k)
    if (!int_ok(args[k])) return nullptr;
  for (std::uint32_t g = 1; g < nargs; g += 6) {
    if (args[g].raw_int() < 0 || args[g].raw_int() > static_cast<std::int64_t>(arith_op::or_)) return nullptr;
    for (std::uint32_t k = 0; k < 2; ++k) {
      const std::int64_t code = args[g + 2 + 2 * k].raw_int();
      if (code == static_cast<std::int64_t>(make_code::use_imm)) continue;
      if (code != static_cast<std::int64_t>(make_code::load_shape)) return nullptr;
      const std::int64_t slot = args[g + 3 + 2 * k].raw_int();
      const auto written_in = [&](std::uint32_t from, std::uint32_t to) {
        for (std::uint32_t h = from; h < to; h += 6)
          if (args[h + 1].raw_int() == slot) return true;
        return false;
      };
      if (!written_in(1, g) && written_in(g, nargs)) return nullptr;
    }
  }
  return &shape_arith_prepared;
}

inline bool check_tensor_info_prepared(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                                       std::optional<error>& err) {
  if (args[0].kind() == value_kind::tensor) {
    const DLTensor& dl = static_cast<const tensor_object*>(args[0].raw_object())->dl;
    const std::int64_t ndim = args[1].raw_int();
    const dtype want = nargs == 4 ? value_traits<dtype>::get(args[2]) : dtype::void_();
    if ((ndim == -1 || dl.ndim == ndim) && (want.is_void() || want == dtype(dl.dtype))) {
      ret.reset();
      return true;
    }
  }
  return invoke_general(self, args, nargs, ret, err);
}
// check_tensor_info(x, ndim, [dtype,] err_ctx): all but x fixed and valid.
inline packed_invoke prepare_check_tensor_info(const value* args, std::uint32_t nargs, std::uint64_t fixed) {
  if ((nargs != 3 && nargs != 4) || !all_fixed(fixed, nargs, 1) || !int_ok(args[1]) || !context_ok(args[nargs - 1]) ||
      (nargs == 4 && args[2].kind() != value_kind::dtype))
    return nullptr;
  return &check_tensor_info_prepared;
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
// The constant (code, value) pairs of call site C from argument `first` on.
template <class C, std::size_t N>
constexpr std::array<code_pair, N> site_pairs(std::size_t first) {
  std::array<code_pair, N> p{};
  for (std::size_t i = 0; i < N; ++i) p[i] = {C::int_at(first + 2 * i), C::int_at(first + 2 * i + 1)};
  return p;
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

/// match_shape(input, heap, n, code, value, ..., [err_ctx]) with n, the pairs and err_ctx fixed.
struct match_shape_site {
  static constexpr object_rule objects = object_rule::none;  // for linked::object_bytes
  template <class C>
  static constexpr bool applies() {
    const std::size_t n = C::num_args;
    if (n < 3 || !C::is_int(2) || C::int_at(2) < 0 || static_cast<std::uint64_t>(C::int_at(2)) > (n - 3) / 2)
      return false;
    const std::size_t expected = 3 + 2 * static_cast<std::size_t>(C::int_at(2));
    if (n != expected && !(n == expected + 1 && C::is_text(expected))) return false;
    if (!site_ints<C>(3, expected)) return false;
    for (std::size_t k = 3; k < expected; k += 2)
      if (C::int_at(k) < 0 || C::int_at(k) > static_cast<std::int64_t>(match_code::assert_equal_to_load)) return false;
    return true;
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k < 2;
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    constexpr std::size_t n = static_cast<std::size_t>(C::int_at(2));
    static constexpr std::array<code_pair, n> pairs = site_pairs<C, n>(3);
    static constexpr std::string_view ctx = C::num_args > 3 + 2 * n ? C::text_at(3 + 2 * n) : std::string_view();
    if constexpr (C::callee_sites == 1 && n <= 16) {
      // The program's one match_shape: each dimension's step is its code's case of match_one
      // alone, and a %void heap has no code at all.
      std::span<const std::int64_t> dims;
      if (RELAXVM_UNLIKELY(!input_dims(args[0], dims))) return argument_error(not_matchable(ctx, args[0]), err);
      heap_view heap;
      if constexpr (!C::is_void(1)) {
        if (!site_heap("vm.builtin.match_shape", args[1], true, heap, err)) return false;
      }
      if (RELAXVM_UNLIKELY(dims.size() != n)) return argument_error(match_size_mismatch(ctx), err);
      const auto step = [&](auto i) RELAXVM_LAMBDA_INLINE {
        const match_outcome o = match_one(dims[i], pairs[i], heap);
        if (RELAXVM_LIKELY(o == match_outcome::ok)) return true;
        return argument_error(match_error(o, ctx, static_cast<std::int64_t>(i), dims[i], pairs[i], heap), err);
      };
      if (![&]<std::size_t... I>(std::index_sequence<I...>) RELAXVM_LAMBDA_INLINE {
            return (step(std::integral_constant<std::size_t, I>()) && ...);
          }(std::make_index_sequence<n>()))
        return false;
      ret.reset();
      return true;
    } else {
      return matched(args, pairs.data(), n, ctx, ret, err);
    }
  }
  RELAXVM_NOINLINE static bool matched(const value* args, const code_pair* pairs, std::size_t n, std::string_view ctx,
                                       value& ret, std::optional<error>& err) {
    std::span<const std::int64_t> dims;
    if (RELAXVM_UNLIKELY(!input_dims(args[0], dims))) return argument_error(not_matchable(ctx, args[0]), err);
    heap_view heap;
    if (!site_heap("vm.builtin.match_shape", args[1], true, heap, err)) return false;
    if (RELAXVM_UNLIKELY(dims.size() != n)) return argument_error(match_size_mismatch(ctx), err);
    for (std::size_t i = 0; i < n; ++i) {
      if (const match_outcome o = match_one(dims[i], pairs[i], heap); RELAXVM_UNLIKELY(o != match_outcome::ok))
        return argument_error(match_error(o, ctx, static_cast<std::int64_t>(i), dims[i], pairs[i], heap), err);
    }
    ret.reset();
    return true;
  }
};

/// make_shape(heap, n, code, value, ...) with n and the pairs fixed.
struct make_shape_site {
  static constexpr object_rule objects = object_rule::shape_of_count;  // for linked::object_bytes
  template <class C>
  static constexpr bool applies() {
    const std::size_t n = C::num_args;
    if (n < 2 || (n - 2) % 2 != 0 || !C::is_int(1) || C::int_at(1) < 0 ||
        static_cast<std::uint64_t>(C::int_at(1)) != (n - 2) / 2)
      return false;
    if (!site_ints<C>(2, n)) return false;
    for (std::size_t k = 2; k < n; k += 2)
      if (C::int_at(k) != static_cast<std::int64_t>(make_code::use_imm) &&
          C::int_at(k) != static_cast<std::int64_t>(make_code::load_shape))
        return false;
    return true;
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k == 0;
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    constexpr std::size_t n = static_cast<std::size_t>(C::int_at(1));
    static constexpr std::array<code_pair, n> pairs = site_pairs<C, n>(2);
    return made(args, pairs.data(), n, ret, err);
  }
  RELAXVM_NOINLINE static bool made(const value* args, const code_pair* pairs, std::size_t n, value& ret,
                                    std::optional<error>& err) {
    heap_view heap;
    if (!site_heap("vm.builtin.make_shape", args[0], false, heap, err)) return false;
    // The slots the pairs read, in the general function's order (the codes are valid).
    for (std::size_t i = 0; i < n; ++i)
      if (pairs[i].code == static_cast<std::int64_t>(make_code::load_shape) && RELAXVM_UNLIKELY(!heap.has(pairs[i].v)))
        return argument_error(slot_error("vm.builtin.make_shape", "dimension", static_cast<std::int64_t>(i), pairs[i].v, heap),
                              err);
    result<shape> s = make_dims(n, [&](std::size_t i) { return heap.read(pairs[i].code, pairs[i].v); });
    if (RELAXVM_UNLIKELY(!s.ok())) return argument_error(std::move(s).error(), err);
    ret = value(std::move(*s));
    return true;
  }
};

/// shape_arith(heap, op, dst, code_a, a, code_b, b, ...) with every group fixed.
struct shape_arith_site {
  static constexpr object_rule objects = object_rule::none;  // for linked::object_bytes
  struct group {
    std::int64_t w[6];
  };
  template <class C>
  static constexpr bool applies() {
    const std::size_t n = C::num_args;
    return n >= 7 && (n - 1) % 6 == 0 && site_ints<C>(1, n);
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k == 0;
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    static constexpr auto groups = [] {
      std::array<group, (C::num_args - 1) / 6> g{};
      for (std::size_t i = 0; i < g.size(); ++i)
        for (std::size_t k = 0; k < 6; ++k) g[i].w[k] = C::int_at(1 + 6 * i + k);
      return g;
    }();
    return computed(args, groups.data(), groups.size(), ret, err);
  }
  RELAXVM_NOINLINE static bool computed(const value* args, const group* groups, std::size_t n, value& ret,
                                        std::optional<error>& err) {
    heap_view heap;
    if (RELAXVM_UNLIKELY(!try_open_heap(args[0], true, heap)))
      return argument_error(heap_error("vm.builtin.shape_arith", args[0]), err);
    for (std::size_t i = 0; i < n; ++i) {
      if (status s = arith_group(heap, groups[i].w); RELAXVM_UNLIKELY(!s.ok()))
        return argument_error(std::move(s).error(), err);
    }
    ret.reset();
    return true;
  }
};

/// check_tensor_info(x, ndim, [dtype,] err_ctx) with ndim, the dtype and err_ctx fixed.
struct check_tensor_info_site {
  static constexpr object_rule objects = object_rule::none;  // for linked::object_bytes
  template <class C>
  static constexpr bool applies() {
    const std::size_t n = C::num_args;
    return (n == 3 || n == 4) && C::is_int(1) && C::is_text(n - 1) && (n == 3 || C::is_const(2, const_kind::dtype));
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k == 0;
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    static constexpr std::string_view ctx = C::text_at(C::num_args - 1);
    constexpr std::int64_t ndim = C::int_at(1);
    // Without a dtype argument, void: any dtype (as dtype_ok reads it).
    constexpr dtype want = C::num_args == 4 ? C::dtype_at(2) : dtype::void_();
    if constexpr (C::callee_sites == 1) return check(args[0], ndim, want, ctx, ret, err);
    else return checked(args[0], ndim, want, ctx, ret, err);
  }
  RELAXVM_NOINLINE static bool checked(const value& x, std::int64_t ndim, dtype want, std::string_view ctx, value& ret,
                                       std::optional<error>& err) {
    return check(x, ndim, want, ctx, ret, err);
  }
  RELAXVM_ALWAYS_INLINE static bool check(const value& x, std::int64_t ndim, dtype want, std::string_view ctx,
                                          value& ret, std::optional<error>& err) {
    if (RELAXVM_UNLIKELY(x.kind() != value_kind::tensor)) return argument_error(not_a_tensor(ctx, x), err);
    const DLTensor& dl = static_cast<const tensor_object*>(x.raw_object())->dl;
    if (RELAXVM_UNLIKELY(!ndim_ok(dl, ndim))) return argument_error(wrong_ndim(ctx, ndim, dl.ndim), err);
    if (RELAXVM_UNLIKELY(!dtype_ok(dl, want))) return argument_error(wrong_dtype(ctx, want, dtype(dl.dtype)), err);
    ret.reset();
    return true;
  }
};
}  // namespace detail

inline constexpr auto shape_table = make_table(
    packed<"vm.builtin.alloc_shape_heap", makes<object_rule::shape_heap>>(&alloc_shape_heap, detail::prepare_alloc_shape_heap),
    fn<"vm.builtin.shape_of", makes<object_rule::none>>(&shape_of), fn<"vm.builtin.store_shape">(&store_shape),
    fn<"vm.builtin.load_shape", makes<object_rule::shape_of_indices>>(&load_shape), packed<"vm.builtin.match_shape", detail::match_shape_site>(&match_shape, detail::prepare_match_shape),
    packed<"vm.builtin.make_shape", detail::make_shape_site>(&make_shape, detail::prepare_make_shape),
    packed<"vm.builtin.match_prim_value", makes<object_rule::none>>(&match_prim_value), fn<"vm.builtin.make_prim_value">(&make_prim_value),
    packed<"vm.builtin.check_tensor_info", detail::check_tensor_info_site>(&check_tensor_info,
                                                                           detail::prepare_check_tensor_info),
    fn<"vm.builtin.check_shape_info">(&check_shape_info),
    fn<"vm.builtin.check_tuple_info">(&check_tuple_info), fn<"vm.builtin.check_func_info">(&check_func_info),
    fn<"vm.builtin.check_prim_value_info">(&check_prim_value_info), fn<"vm.builtin.check_upper_bound">(&check_upper_bound),
    packed<"vm.builtin.shape_arith", detail::shape_arith_site>(&shape_arith, detail::prepare_shape_arith),
    fn<"vm.builtin.tensor_to_shape">(&tensor_to_shape), fn<"vm.builtin.shape_to_tensor">(&shape_to_tensor));

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_SHAPE_HEAP_HPP
