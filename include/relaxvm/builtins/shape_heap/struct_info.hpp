// SPDX-License-Identifier: Apache-2.0
// The struct-info checks: check_tensor_info, check_shape_info, check_tuple_info, check_func_info,
// check_prim_value_info and check_upper_bound, with the prepared and specialized call sites of
// check_tensor_info.
#ifndef RELAXVM_BUILTINS_SHAPE_HEAP_STRUCT_INFO_HPP
#define RELAXVM_BUILTINS_SHAPE_HEAP_STRUCT_INFO_HPP

#include "../../base/config.hpp"  // RELAXVM_ABI
#include "../../bytecode/layout.hpp"  // const_kind
#include "heap.hpp"

namespace relaxvm::RELAXVM_ABI::builtins {

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

// ---- prepared call sites: check_tensor_info
namespace detail {
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

// ---- specialized call sites: check_tensor_info
namespace detail {
/// check_tensor_info(x, ndim, [dtype,] err_ctx) with ndim, the dtype and err_ctx fixed.
struct check_tensor_info_site {
  static constexpr object_rule objects = object_rule::none;  // for linked::object_bytes
  template <class C>
  static constexpr bool applies() {
    const std::size_t n = C::num_args;
    return (n == 3 || n == 4) && C::is_int(1) && C::is_text(n - 1) && (n == 3 || C::is_const(2, const_kind::dtype));
  }
  // Whether x is a tensor whose dtype and shape the program's callers guarantee
  // (call_site::known_tensor) and the check passes for it: then nothing is left to check.
  template <class C>
  static constexpr bool settled() {
    if (!C::known_tensor(0)) return false;
    const std::int64_t ndim = C::int_at(1);
    const dtype want = C::num_args == 4 ? C::dtype_at(2) : dtype::void_();
    return (ndim == -1 || ndim == static_cast<std::int64_t>(C::known_dims(0).size())) &&
           (want.is_void() || want == C::known_dtype(0));
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k == 0 && !settled<C>();
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    if constexpr (settled<C>()) {
      ret.reset();
      return true;
    } else {
      static constexpr std::string_view ctx = C::text_at(C::num_args - 1);
      constexpr std::int64_t ndim = C::int_at(1);
      // Without a dtype argument, void: any dtype (as dtype_ok reads it).
      constexpr dtype want = C::num_args == 4 ? C::dtype_at(2) : dtype::void_();
      if constexpr (C::callee_sites == 1) return check(args[0], ndim, want, ctx, ret, err);
      else return checked(args[0], ndim, want, ctx, ret, err);
    }
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

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_SHAPE_HEAP_STRUCT_INFO_HPP
