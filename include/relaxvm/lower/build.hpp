// SPDX-License-Identifier: Apache-2.0
// The pipeline, in the reference's order (reference/lowering.md, section 1):
//   check -> to_non_dataflow -> [rewrite_dataflow_reshape: issue 15] -> call_tir_rewrite ->
//   [static_plan_block_memory: issue 15] -> lower_alloc_tensor -> kill_after_last_use ->
//   lower_runtime_builtin -> shape_lower -> codegen (exec_builder: formalize, verify)
// build(module) gives a verified executable; build_static(lambda) does the same at compile time
// and gives a static executable (a lowering error is a compile error quoting the message).
#ifndef RELAXVM_LOWER_BUILD_HPP
#define RELAXVM_LOWER_BUILD_HPP

#include <utility>

#include "../bytecode/builder.hpp"
#include "../bytecode/static_executable.hpp"
#include "builder.hpp"
#include "check.hpp"
#include "codegen.hpp"
#include "passes.hpp"
#include "shape_lower.hpp"

namespace relaxvm::ir {

/// Every pass of the pipeline up to code generation (usable in constexpr).
constexpr pass_output try_lower(module m) {
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
  m = pass::call_tir_rewrite(pass::to_non_dataflow(static_cast<module&&>(m)));
  out = pass::try_lower_alloc_tensor(static_cast<module&&>(m));
  if (!out.ok()) return out;
  out = pass::try_lower_runtime_builtin(pass::kill_after_last_use(static_cast<module&&>(out.mod)));
  if (!out.ok()) return out;
  return pass::try_shape_lower(static_cast<module&&>(out.mod));
}
/// The lowered module (before code generation); throws relaxvm::error on failure.
inline module lower(module m) { return detail::to_result(try_lower(static_cast<module&&>(m))).value(); }

/// Lowers `m` and emits it into `b` (which then formalizes and verifies on finish()).
constexpr void emit(module m, exec_builder& b) {
  pass_output out = try_lower(static_cast<module&&>(m));
  relaxvm::detail::text err;
  if (out.ok()) codegen(out.mod, b, err);
  else err << out.message;
  if (!err.empty()) b.set_error(err.view());
}

/// The verified executable of `m`; try_build gives a result instead of throwing.
template <class E = executable>
result<E> try_build(const module& m) {
  exec_builder b;
  emit(m, b);
  return b.try_get<E>();
}
template <class E = executable>
E build(const module& m) {
  return try_build<E>(m).value();
}

namespace detail {
/// Adapts a lambda over module_builder to relaxvm::build's lambda over exec_builder.
template <class F>
struct ir_program {
  constexpr void operator()(exec_builder& b) const {
    module_builder m;
    F{}(m);
    module_output out = m.finish();
    if (!out.ok()) {
      b.set_error(out.message.view());
      return;
    }
    emit(static_cast<module&&>(out.mod), b);
  }
};
}  // namespace detail

/// Builds, checks, lowers and verifies an IR program at compile time:
///   constexpr auto prog = ir::build_static([](ir::module_builder& m) { ... });
/// `prog` is a static_executable (link it with relaxvm::link, run it on static_vm).
template <class F>
consteval auto build_static(F) {
  return relaxvm::build(detail::ir_program<F>{});
}

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_BUILD_HPP
