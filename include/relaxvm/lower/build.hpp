// SPDX-License-Identifier: Apache-2.0
// The pipeline, in the reference's order (docs/lowering.md):
//   check -> rewrite_dataflow_reshape -> to_non_dataflow -> call_tir_rewrite ->
//   static_plan_block_memory -> lower_alloc_tensor -> kill_after_last_use ->
//   lower_runtime_builtin -> shape_lower -> codegen (exec_builder: formalize, verify)
// build(module) gives a verified executable; build_static(lambda) does the same at compile time
// and gives a static executable (a lowering error is a compile error quoting the message).
#ifndef RELAXVM_LOWER_BUILD_HPP
#define RELAXVM_LOWER_BUILD_HPP

#include <utility>

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

/// Every pass of the pipeline up to code generation (usable in constexpr).
constexpr pass_output try_lower(module m, plan_options opt = {}) {
  pass_output out;
  if (!check(m, out.message)) return out;
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
/// The lowered module (before code generation); throws relaxvm::error on failure.
inline module lower(module m, plan_options opt = {}) {
  return detail::to_result(try_lower(static_cast<module&&>(m), opt)).value();
}

/// Lowers `m` and emits it into `b` (which then formalizes and verifies on finish()).
constexpr void emit(module m, exec_builder& b, plan_options opt = {}) {
  pass_output out = try_lower(static_cast<module&&>(m), opt);
  relaxvm::detail::text err;
  if (out.ok()) codegen(out.mod, b, err);
  else err << out.message;
  if (!err.empty()) b.set_error(err.view());
}

/// The verified executable of `m`; try_build gives a result instead of throwing.
template <class E = executable>
result<E> try_build(const module& m, plan_options opt = {}) {
  exec_builder b;
  emit(m, b, opt);
  return b.try_get<E>();
}
template <class E = executable>
E build(const module& m, plan_options opt = {}) {
  return try_build<E>(m, opt).value();
}

/// What one call of a function takes from the VM's device allocators, at most (planned_memory).
struct memory_need {
  bool bounded = false;        ///< false: a size has no upper bound, or lowering failed (message)
  std::int64_t bytes = 0;      ///< when bounded: the most bytes one call holds at once
  std::int64_t storages = 0;   ///< storages one call makes, at most (both branches of an if counted)
  relaxvm::detail::text message;
};

namespace detail {
constexpr std::int64_t round_up(std::int64_t n, std::int64_t to) { return (n + to - 1) / to * to; }

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
/// (after memory planning with `opt`, each tensor left unplanned with its own), at the upper bounds
/// of their sizes, and its shape heap, each rounded up to `alignment` (an arena allocator's, 64),
/// for it and every function it calls, as if nothing were freed before the call returns. Size an
/// arena with it: a call never needs more. Not bounded (bounded false, and why in message) when a
/// size has no upper bound, a function calls itself, or a closure is invoked. Usable in constexpr.
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
