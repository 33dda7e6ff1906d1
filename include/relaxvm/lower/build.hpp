// SPDX-License-Identifier: Apache-2.0
// The pipeline, in the reference's order (docs/lowering.md):
//   check -> rewrite_dataflow_reshape -> to_non_dataflow -> call_tir_rewrite ->
//   static_plan_block_memory -> lower_alloc_tensor -> kill_after_last_use ->
//   lower_runtime_builtin -> shape_lower -> codegen (exec_builder: formalize, verify)
// build(module) gives a verified executable; build_static(lambda) does the same at compile time
// and gives a static executable (a lowering error is a compile error quoting the message).
#ifndef RELAXVM_LOWER_BUILD_HPP
#define RELAXVM_LOWER_BUILD_HPP

#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>  // std::is_constant_evaluated
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../bytecode/builder.hpp"
#include "../bytecode/static_executable.hpp"
#include "builder.hpp"
#include "check.hpp"
#include "codegen.hpp"
#include "memory_plan.hpp"
#include "passes.hpp"
#include "shape_lower.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

namespace detail {

/// Every pass of the pipeline up to code generation: try_lower's work.
constexpr pass_output lower_passes(module m, plan_options opt) {
  pass_output out;
  if (!ir::check(m, out.message)) return out;
  // Lowering twice would allocate a second shape heap and check everything again.
  for (const function& f : m.funcs)
    for (const block& b : f.body.blocks)
      for (const binding& x : b.bindings)
        if (x.value.kind == expr_kind::vm_alloc_storage || x.value.kind == expr_kind::vm_kill_object ||
            x.value.kind == expr_kind::null_value ||
            (x.value.kind == expr_kind::call_builtin && x.value.callee == "vm.builtin.alloc_shape_heap")) {
          out.message << "function '" << f.nm.view()
                      << "' is already lowered; generate code from it with ir::codegen, or build the module "
                         "before lowering";
          return out;
        }
  m = pass::call_tir_rewrite(pass::to_non_dataflow(pass::rewrite_dataflow_reshape(static_cast<module&&>(m))));
  out = pass::try_static_plan_block_memory(static_cast<module&&>(m), opt);
  if (!out.ok()) return out;
  out = pass::try_lower_alloc_tensor(static_cast<module&&>(out.mod));
  if (!out.ok()) return out;
  out = pass::try_lower_runtime_builtin(pass::kill_after_last_use(static_cast<module&&>(out.mod)));
  if (!out.ok()) return out;
  return pass::try_shape_lower(static_cast<module&&>(out.mod), opt.reuse_shapes, opt.elide_proven_return_check);
}
/// emit()'s work.
constexpr void lower_and_emit(module m, exec_builder& b, plan_options opt) {
  pass_output out = lower_passes(static_cast<module&&>(m), opt);
  relaxvm::detail::text err;
  if (out.ok()) ir::codegen(static_cast<module&&>(out.mod), b, err);  // the lowered copy is ours
  else err << out.message;
  if (!err.empty()) b.set_error(err.view());
}

/// try_lower() and emit() at run time: their own code in separate compilation (src/core.cpp), so a
/// user's translation unit that lowers a module does not compile the passes and code generation.
RELAXVM_DECL pass_output lower_at_run_time(module m, plan_options opt);
RELAXVM_DECL void emit_at_run_time(module m, exec_builder& b, plan_options opt);
#if RELAXVM_DEFINES_CORE
RELAXVM_DECL pass_output lower_at_run_time(module m, plan_options opt) {
  return lower_passes(static_cast<module&&>(m), opt);
}
RELAXVM_DECL void emit_at_run_time(module m, exec_builder& b, plan_options opt) {
  lower_and_emit(static_cast<module&&>(m), b, opt);
}
#endif

}  // namespace detail

/// Every pass of the pipeline up to code generation (usable in constexpr).
RELAXVM_IF_CONSTEVAL_BEGIN
constexpr pass_output try_lower(module m, plan_options opt = {}) {
  RELAXVM_IF_CONSTEVAL { return detail::lower_passes(static_cast<module&&>(m), opt); }
  return detail::lower_at_run_time(static_cast<module&&>(m), opt);
}
RELAXVM_IF_CONSTEVAL_END
/// The lowered module (before code generation); throws relaxvm::error on failure.
inline module lower(module m, plan_options opt = {}) {
  return detail::to_result(try_lower(static_cast<module&&>(m), opt)).value();
}

/// Lowers `m` and emits it into `b` (which then formalizes and verifies on finish()).
RELAXVM_IF_CONSTEVAL_BEGIN
constexpr void emit(module m, exec_builder& b, plan_options opt = {}) {
  RELAXVM_IF_CONSTEVAL {
    detail::lower_and_emit(static_cast<module&&>(m), b, opt);
    return;
  }
  detail::emit_at_run_time(static_cast<module&&>(m), b, opt);
}
RELAXVM_IF_CONSTEVAL_END

/// The verified executable of `m`; try_build gives a result instead of throwing. Given an
/// rvalue, the module's tensor constants are not copied again: each moves into the executable's
/// pool and its IR copy is freed (a model's weights are held once, not three times).
template <class E = executable>
result<E> try_build(const module& m, plan_options opt = {}) {
  exec_builder b;
  emit(m, b, opt);
  return static_cast<exec_builder&&>(b).try_get<E>();
}
template <class E = executable>
result<E> try_build(module&& m, plan_options opt = {}) {
  exec_builder b;
  emit(static_cast<module&&>(m), b, opt);
  return static_cast<exec_builder&&>(b).try_get<E>();
}
template <class E = executable>
E build(const module& m, plan_options opt = {}) {
  return try_build<E>(m, opt).value();
}
template <class E = executable>
E build(module&& m, plan_options opt = {}) {
  return try_build<E>(static_cast<module&&>(m), opt).value();
}

/// What one call of a function takes from the VM's device allocators, at most (planned_memory).
struct memory_need {
  bool bounded = false;        ///< false: a size has no upper bound, or lowering failed (message)
  std::int64_t bytes = 0;      ///< when bounded: the most bytes one call holds at once
  std::int64_t storages = 0;   ///< storages one call makes, at most (both branches of an if counted;
                               ///< vm.builtin.alloc_storage calls included)
  relaxvm::detail::text message;
};

namespace detail {
constexpr std::int64_t round_up(std::int64_t n, std::int64_t to) { return (n + to - 1) / to * to; }

/// What a call of a library builtin takes from the VM's device allocators. Kernels (any other
/// name) are trusted code, outside the program: what they allocate is theirs to bound.
enum class allocation : std::uint8_t {
  none,          // nothing (a view, a check, a shape, an object)
  storage,       // alloc_storage: prod(shape) x dtype bytes
  copy,          // a copy of its first argument (to_device; ensure_zero_offset when misaligned)
  shape_tensor,  // shape_to_tensor: 8 bytes per dimension
  shape_heap,    // alloc_shape_heap: 8 bytes per slot
  unknown,       // it runs other code (call_tir_dyn), or is an unknown vm.builtin
};
constexpr allocation builtin_allocation(std::string_view fn) {
  constexpr std::string_view prefix = "vm.builtin.";
  if (fn.substr(0, prefix.size()) != prefix) return allocation::none;
  const std::string_view n = fn.substr(prefix.size());
  if (n == "alloc_storage") return allocation::storage;
  if (n == "to_device" || n == "ensure_zero_offset") return allocation::copy;
  if (n == "shape_to_tensor") return allocation::shape_tensor;
  if (n == "alloc_shape_heap") return allocation::shape_heap;
  constexpr std::string_view none[] = {
      "alloc_tensor", "check_func_info", "check_prim_value_info", "check_shape_info", "check_tensor_info",
      "check_tuple_info", "check_upper_bound", "copy", "fatal", "get_field", "get_tag", "kill_object", "load_shape",
      "make_adt", "make_closure", "make_prim_value", "make_shape", "make_tuple", "match_prim_value", "match_shape",
      "memory_manager.clear", "null_value", "print", "read_if_cond", "reshape", "scalar_eq", "shape_arith",
      "shape_of", "store_shape", "tensor_to_shape", "tuple_getitem", "tuple_reset_item"};
  for (std::string_view x : none)
    if (n == x) return allocation::none;
  return allocation::unknown;  // invoke_closure and call_tir_dyn run other code
}
/// The dimensions of a shape argument (a shape leaf, or a variable of known shape).
constexpr bool shape_dims(const function& f, const leaf& l, std::vector<sym_ref>& dims) {
  if (l.kind == leaf_kind::shape) {
    dims = l.dims;
    return true;
  }
  if (!l.is_var() || f.var(l.index).info.kind != info_kind::shape || !f.var(l.index).info.known) return false;
  dims = f.var(l.index).info.dims;
  return true;
}
/// The number of dimensions of a shape argument, or -1.
constexpr std::int64_t shape_ndim(const function& f, const leaf& l) {
  if (l.kind == leaf_kind::shape) return static_cast<std::int64_t>(l.dims.size());
  if (!l.is_var() || f.var(l.index).info.kind != info_kind::shape) return -1;
  return f.var(l.index).info.ndim;
}
/// The dtype and shape of a tensor argument (a variable's struct info, checked at run time, or a
/// constant); false when either is not known.
constexpr bool tensor_layout(const module& m, const function& f, const leaf& l, relaxvm::dtype& dt,
                             std::vector<sym_ref>& dims) {
  if (l.kind == leaf_kind::constant && l.index >= 0 && static_cast<std::size_t>(l.index) < m.constants.size()) {
    const constant& c = m.constants[static_cast<std::size_t>(l.index)];
    dt = c.dt;
    for (std::int64_t d : c.dims) dims.push_back(sym_ref::constant(d));
    return true;
  }
  if (!l.is_var()) return false;
  const struct_info& info = f.var(l.index).info;
  if (info.kind != info_kind::tensor || !info.known || info.dt.is_void()) return false;
  dt = info.dt;
  dims = info.dims;
  return true;
}

// The storages and shape heaps of each function of a lowered module, and whom it calls.
class memory_counter {
 public:
  constexpr memory_counter(const module& planned, const module& lowered, std::int64_t alignment)
      : planned_(planned), lowered_(lowered), align_(alignment) {}

  constexpr memory_need of(std::int64_t fi) {
    state_.assign(planned_.funcs.size(), 0);
    memory_need need;
    need.bounded = visit(fi, need);
    return need;
  }

 private:
  // Adds function fi's needs (and its callees') to `need`; false when one is unbounded.
  constexpr bool visit(std::int64_t fi, memory_need& need) {
    const function& f = planned_.funcs[static_cast<std::size_t>(fi)];
    if (state_[static_cast<std::size_t>(fi)] == 1) {
      need.message << "function '" << f.nm.view() << "' calls itself, directly or not: its memory has no bound";
      return false;
    }
    state_[static_cast<std::size_t>(fi)] = 1;
    const std::vector<sym_range> ranges = variable_ranges(planned_, f);
    bool ok = true;
    const auto add = [&](std::int64_t bytes) {
      ok = ok && relaxvm::detail::checked_add(need.bytes, round_up(bytes, align_), need.bytes);
      if (!ok && need.message.empty()) need.message << "function '" << f.nm.view() << "' needs more than 2^63 bytes";
    };
    // The most bytes of `dims` x `dt`, or why there is no bound.
    const auto add_bytes = [&](const binding& b, std::string_view what, relaxvm::dtype dt,
                               const std::vector<sym_ref>& dims) {
      std::int64_t bytes = dt.bytes();
      for (const sym_ref& d : dims) {
        const sym_range r = planned_.syms.range(d, ranges);
        if (!r.has_hi) {
          need.message << "function '" << f.nm.view() << "': the size of " << what << " '" << f.var(b.var).nm.view()
                       << "' has no upper bound (its dimension ";
          planned_.syms.print(need.message, d);
          need.message << "); give its variables one (function_builder::upper_bound)";
          ok = false;
          return;
        }
        if (!relaxvm::detail::checked_mul(bytes, r.hi > 0 ? r.hi : 0, bytes)) {
          need.message << "function '" << f.nm.view() << "' needs more than 2^63 bytes";
          ok = false;
          return;
        }
      }
      add(bytes);
    };
    const auto unknown = [&](const binding& b, std::string_view why) {
      need.message << "function '" << f.nm.view() << "': " << b.value.callee.view() << " (making '"
                   << f.var(b.var).nm.view() << "') " << why;
      ok = false;
    };
    for_each_binding(f.body, [&](const binding& b) {
      if (!ok) return;
      const expr& e = b.value;
      if (e.kind == expr_kind::mem_alloc_storage) {
        ++need.storages;
        const sym_range r = planned_.syms.range(e.args[0].dims[0], ranges);
        if (!r.has_hi) {
          need.message << "function '" << f.nm.view() << "': the size of storage '" << f.var(b.var).nm.view() << "', ";
          planned_.syms.print(need.message, e.args[0].dims[0]);
          need.message << " bytes, has no upper bound; give its variables one (function_builder::upper_bound)";
          ok = false;
          return;
        }
        add(r.hi > 0 ? r.hi : 0);
      } else if (e.kind == expr_kind::call_func) {
        const std::int64_t callee = planned_.find(e.callee.view());
        ok = callee >= 0 && visit(callee, need);
      } else if (e.kind == expr_kind::invoke_closure) {
        need.message << "function '" << f.nm.view() << "' invokes a closure: its memory is not known here";
        ok = false;
      } else if (e.kind == expr_kind::call_packed || e.kind == expr_kind::call_builtin) {
        // A builtin the program calls itself (%vm, when it takes one, is not among args).
        switch (builtin_allocation(e.callee.view())) {
          case allocation::none: return;
          case allocation::storage: {  // alloc_storage(shape, device_index, dtype, [scope])
            ++need.storages;
            std::vector<sym_ref> dims;
            if (e.args.size() < 3 || e.args[2].kind != leaf_kind::dtype || !shape_dims(f, e.args[0], dims))
              return unknown(b, "has no shape of known values and dtype: its size is not known");
            return add_bytes(b, "storage", e.args[2].dt, dims);
          }
          case allocation::copy: {  // a copy of the tensor args[0]
            relaxvm::dtype dt;
            std::vector<sym_ref> dims;
            if (e.args.empty() || !tensor_layout(planned_, f, e.args[0], dt, dims))
              return unknown(b, "copies a tensor whose dtype and shape are not known: its size is not known");
            return add_bytes(b, "the copy", dt, dims);
          }
          case allocation::shape_tensor: {  // an int64 vector of args[0]'s dimensions
            const std::int64_t ndim = e.args.empty() ? -1 : shape_ndim(f, e.args[0]);
            if (ndim < 0) return unknown(b, "converts a shape of unknown length: its size is not known");
            return add(ndim * 8);
          }
          case allocation::shape_heap: {  // args[0] int64 slots
            if (e.args.empty() || e.args[0].kind != leaf_kind::prim || !e.args[0].value.is_const() ||
                e.args[0].value.value < 0 || e.args[0].value.value > std::numeric_limits<std::int64_t>::max() / 8)
              return unknown(b, "has a size that is not a constant");
            return add(e.args[0].value.value * 8);
          }
          case allocation::unknown:
            return unknown(b, "may allocate memory that is not known here (it calls a function, or is not a builtin "
                              "of this library)");
        }
      }
    });
    // The shape heap (alloc_shape_heap's slot count, from the fully lowered function).
    const function& lf = lowered_.funcs[static_cast<std::size_t>(fi)];
    if (ok && !lf.body.blocks.empty() && !lf.body.blocks[0].bindings.empty()) {
      const binding& first = lf.body.blocks[0].bindings[0];
      if (first.value.kind == expr_kind::call_builtin && first.value.callee == "vm.builtin.alloc_shape_heap")
        add(first.value.args[0].value.value * 8);
    }
    state_[static_cast<std::size_t>(fi)] = 2;
    return ok;
  }

  const module& planned_;
  const module& lowered_;
  std::int64_t align_;
  std::vector<char> state_;
};
}  // namespace detail

/// The most memory one call of function `fn` takes from the VM's device allocators: its storages
/// (after memory planning with `opt`, each tensor left unplanned with its own), its shape heap,
/// and what the builtins it calls itself allocate (vm.builtin.alloc_storage, the copies of
/// to_device and ensure_zero_offset, shape_to_tensor, alloc_shape_heap), at the upper bounds of
/// their sizes, each rounded up to `alignment` (an arena allocator's, 64), for it and every
/// function it calls, as if nothing were freed before the call returns. Size an arena with it: a
/// call never needs more. Kernels are trusted code, and what they allocate is not counted. Not
/// bounded (bounded false, and why in message) when a size has no upper bound or is not known, a
/// function calls itself, a closure is invoked, or a builtin that runs other code
/// (call_tir_dyn) or that this library does not have (an unknown vm.builtin.*) is called.
/// Usable in constexpr.
constexpr memory_need planned_memory(module m, std::string_view fn, plan_options opt = {}, std::int64_t alignment = 64) {
  memory_need need;
  const std::int64_t fi = m.find(fn);
  if (fi < 0) {
    need.message << "planned_memory: the module has no function '" << fn << "'";
    return need;
  }
  if (!check(m, need.message)) return need;
  m = pass::call_tir_rewrite(pass::to_non_dataflow(pass::rewrite_dataflow_reshape(static_cast<module&&>(m))));
  pass_output planned = pass::try_static_plan_block_memory(static_cast<module&&>(m), opt);
  if (planned.ok()) planned = pass::try_lower_alloc_tensor(static_cast<module&&>(planned.mod));
  if (!planned.ok()) {
    need.message << planned.message;
    return need;
  }
  pass_output lowered = pass::try_lower_runtime_builtin(pass::kill_after_last_use(planned.mod));
  if (lowered.ok()) lowered = pass::try_shape_lower(static_cast<module&&>(lowered.mod), opt.reuse_shapes, opt.elide_proven_return_check);
  if (!lowered.ok()) {
    need.message << lowered.message;
    return need;
  }
  return detail::memory_counter(planned.mod, lowered.mod, alignment).of(fi);
}
/// planned_memory(...).bytes, or -1 when it is not bounded.
constexpr std::int64_t planned_bytes(const module& m, std::string_view fn, plan_options opt = {}, std::int64_t alignment = 64) {
  const memory_need need = planned_memory(m, fn, opt, alignment);
  return need.bounded ? need.bytes : -1;
}
/// The same for a module built by `make(module_builder&)` (the lambda build_static takes), at
/// compile time: constexpr std::int64_t arena = ir::planned_bytes(model, "main");
template <class F>
  requires requires(F f, module_builder& b) { f(b); }
constexpr std::int64_t planned_bytes(F make, std::string_view fn, plan_options opt = {}, std::int64_t alignment = 64) {
  module_builder b;
  make(b);
  const module_output out = b.finish();
  return out.ok() ? planned_bytes(out.mod, fn, opt, alignment) : -1;
}

namespace detail {
/// Adapts a lambda over module_builder to relaxvm::build's lambda over exec_builder.
template <class F, plan_options Opt>
struct ir_program {
  constexpr void operator()(exec_builder& b) const {
    module_builder m;
    F{}(m);
    module_output out = m.finish();
    if (!out.ok()) {
      b.set_error(out.message.view());
      return;
    }
    emit(static_cast<module&&>(out.mod), b, Opt);
  }
};
}  // namespace detail

/// Builds, checks, lowers and verifies an IR program at compile time:
///   constexpr auto prog = ir::build_static([](ir::module_builder& m) { ... });
/// `prog` is a static_executable (link it with relaxvm::link, run it on static_vm). Options:
///   ir::build_static<ir::plan_options{.hoist_constant_storage = true}>([](...) { ... })
template <plan_options Opt = plan_options{}, class F>
consteval auto build_static(F) {
  return relaxvm::build(detail::ir_program<F, Opt>{});
}

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_BUILD_HPP
