// SPDX-License-Identifier: Apache-2.0
// Matching and making shapes against the shape heap: match_shape, make_shape, match_prim_value,
// make_prim_value (codes in codes.hpp), with the prepared and specialized call sites of
// match_shape and make_shape.
#ifndef RELAXVM_BUILTINS_SHAPE_HEAP_MATCH_HPP
#define RELAXVM_BUILTINS_SHAPE_HEAP_MATCH_HPP

#include "../../base/config.hpp"  // RELAXVM_ABI
#include "heap.hpp"

namespace relaxvm::RELAXVM_ABI::builtins {

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

// ---- prepared call sites: match_shape, make_shape
namespace detail {
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

}  // namespace detail

// ---- specialized call sites: match_shape, make_shape
namespace detail {
// The constant (code, value) pairs of call site C from argument `first` on.
template <class C, std::size_t N>
constexpr std::array<code_pair, N> site_pairs(std::size_t first) {
  std::array<code_pair, N> p{};
  for (std::size_t i = 0; i < N; ++i) p[i] = {C::int_at(first + 2 * i), C::int_at(first + 2 * i + 1)};
  return p;
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
  // Whether the input is a tensor whose shape the program's callers guarantee
  // (call_site::known_tensor), the heap is %void and every pair passes for that shape without
  // the heap (a constant it equals, or no_op): then nothing is left to match.
  template <class C>
  static constexpr bool settled() {
    if (!C::known_tensor(0) || !C::is_void(1)) return false;
    const std::span<const std::int64_t> dims = C::known_dims(0);
    if (static_cast<std::int64_t>(dims.size()) != C::int_at(2)) return false;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const std::int64_t code = C::int_at(3 + 2 * i), v = C::int_at(4 + 2 * i);
      if (code == static_cast<std::int64_t>(match_code::no_op)) continue;
      if (code != static_cast<std::int64_t>(match_code::assert_equal_to_imm) || v != dims[i]) return false;
    }
    return true;
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k < 2 && !settled<C>();
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    if constexpr (settled<C>()) {
      ret.reset();
      return true;
    } else {
      return unsettled<C>(args, ret, err);
    }
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool unsettled(const value* args, value& ret, std::optional<error>& err) {
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

}  // namespace detail

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_SHAPE_HEAP_MATCH_HPP
