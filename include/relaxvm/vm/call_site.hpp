// SPDX-License-Identifier: Apache-2.0
// Call sites at link time: what a builtin's specialized version sees of one Call instruction of a
// linked program when it compiles (link.hpp binds it).
//
// A table entry may name a site type S (fn<"name", S>(&f), packed<"name", S>(&f)). For each Call of
// that entry, link() asks S::applies<C>() with C = call_site<prog, pc>; when it says yes, the call
// site calls S::run<C> instead of the entry, with the same calling convention (table_invoke: every
// argument loaded, as for the entry). run<C> reads the arguments that are constants of the program
// from C, as constants of its own code (S::reads<C>(k) says which arguments it reads at run time;
// a constant no running code reads is never made into a value). A specialized version must give
// the results and the errors (kind and message) the entry gives for the same arguments: the
// builtins share their checks and messages between the two (builtins/shape_heap.hpp,
// builtins/memory.hpp), and the tests run every program both ways (link_options::specialize).
#ifndef RELAXVM_VM_CALL_SITE_HPP
#define RELAXVM_VM_CALL_SITE_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/dtype.hpp"
#include "../bytecode/instruction.hpp"
#include "../bytecode/layout.hpp"
#include "../bytecode/opcode.hpp"

namespace relaxvm::RELAXVM_ABI {

/// How link() binds a program's calls.
struct link_options {
  /// Whether calls whose arguments the program fixes are bound to versions specialized for them:
  /// a table entry's site type (call_site.hpp), or, for typed entries, an argument check that
  /// skips the arguments the linker has checked already. false: every call runs the entry as
  /// registered (the general path; the tests compare the two).
  bool specialize = true;
};

/// What every invocation of one function of a program passes it (a caller's guarantee, which
/// static_vm checks when that function is invoked from C++, so it always holds inside): its
/// first `count` arguments are tensors of the dtypes `types` and the shapes in `dims` (argument
/// i's from dims_begin[i] to dims_begin[i + 1]). static_model links its program with the shapes
/// of the model's inputs, so that the program's own checks of its inputs are settled when it
/// compiles (call_site::known_tensor).
template <std::size_t N, std::size_t D>
struct argument_facts {
  std::string_view function;
  std::size_t count = 0;
  std::array<dtype, N> types{};
  std::array<std::size_t, N + 1> dims_begin{};
  std::array<std::int64_t, D> dims{};

  constexpr std::span<const std::int64_t> dims_of(std::size_t i) const {
    return std::span<const std::int64_t>(dims.data() + dims_begin[i], dims_begin[i + 1] - dims_begin[i]);
  }
};
/// No facts: what link() uses.
inline constexpr argument_facts<0, 0> no_argument_facts{};

namespace detail {
/// The described argument of `facts`' function that argument k of the Call at pc reads, when
/// that is known there: -1 unless argument k is one of that function's described parameters,
/// read in that function, which no instruction writes, and the function is entered only from
/// C++ (no Call names it, and it is never passed as a value), where static_vm checks the facts.
template <class Facts>
constexpr std::int64_t fact_register(const exec_view& view, const Facts& facts, std::int64_t pc, std::size_t k) {
  if (facts.count == 0) return -1;
  const instruction in = decode(view, pc);
  if (in.op != opcode::call || k >= static_cast<std::size_t>(in.num_args)) return -1;
  const arg a = in.arg_at(static_cast<std::int64_t>(k));
  const std::int64_t fi = view.find(facts.function);
  if (a.kind() != arg_kind::reg || fi < 0 || view.funcs[static_cast<std::size_t>(fi)].kind != func_kind::vm) return -1;
  const func_info& f = view.funcs[static_cast<std::size_t>(fi)];
  const std::int64_t r = a.value();
  if (pc < f.start || pc >= f.end || r < 0 || r >= f.num_args || r >= static_cast<std::int64_t>(facts.count)) return -1;
  for (std::size_t i = 0; i < view.instr_offset.size(); ++i) {
    const instruction other = decode(view, static_cast<std::int64_t>(i));
    if (other.op != opcode::call) continue;
    if (other.func_idx == fi) return -1;
    const bool in_f = static_cast<std::int64_t>(i) >= f.start && static_cast<std::int64_t>(i) < f.end;
    if (in_f && other.dst == r) return -1;
    for (std::int64_t j = 0; j < other.num_args; ++j)
      if (other.arg_at(j).kind() == arg_kind::func_idx && other.arg_at(j).value() == fi) return -1;
  }
  return r;
}
}  // namespace detail

/// Call instruction `Pc` of the static executable `Prog`, as a specialization reads it in
/// constant expressions; `Facts` (argument_facts) what the program's callers guarantee.
template <const auto& Prog, std::int64_t Pc, const auto& Facts = no_argument_facts>
struct call_site {
  static constexpr exec_view view = Prog.view();
  static constexpr instruction in = decode(view, Pc);
  static constexpr std::int64_t pc = Pc;
  static constexpr std::size_t num_args = static_cast<std::size_t>(in.num_args);
  /// How many Calls of the program call the same function: a specialization may inline its body
  /// into a site that is the only one, and share one body among many.
  static constexpr std::size_t callee_sites = [] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < view.instr_offset.size(); ++i) {
      const instruction other = decode(view, static_cast<std::int64_t>(i));
      n += other.op == opcode::call && other.func_idx == in.func_idx;
    }
    return n;
  }();

  static constexpr arg at(std::size_t k) { return in.arg_at(static_cast<std::int64_t>(k)); }
  /// Argument k's constant; of kind 0 (none) when the argument is not a constant.
  static constexpr const_info constant(std::size_t k) {
    return at(k).kind() == arg_kind::const_idx ? view.constant(static_cast<std::size_t>(at(k).value()))
                                               : const_info{static_cast<const_kind>(0)};
  }
  static constexpr bool is_const(std::size_t k, const_kind kind) { return k < num_args && constant(k).kind == kind; }
  /// %void (null).
  static constexpr bool is_void(std::size_t k) {
    return k < num_args && at(k).kind() == arg_kind::reg && at(k).value() == void_register;
  }
  /// %vm (the VM context).
  static constexpr bool is_vm(std::size_t k) {
    return k < num_args && at(k).kind() == arg_kind::reg && at(k).value() == vm_register;
  }
  /// An integer the program fixes: an immediate, or an int64 or bool constant.
  static constexpr bool is_int(std::size_t k) {
    return k < num_args && (at(k).kind() == arg_kind::imm || is_const(k, const_kind::int64) ||
                            is_const(k, const_kind::boolean));
  }
  static constexpr std::int64_t int_at(std::size_t k) {
    return at(k).kind() == arg_kind::imm ? at(k).value() : constant(k).scalar;
  }
  static constexpr dtype dtype_at(std::size_t k) { return dtype::unpack(constant(k).scalar); }
  /// A string constant's characters: they live in the program, which is in read-only memory.
  static constexpr std::string_view string_at(std::size_t k) {
    return view.str({constant(k).data_offset, constant(k).data_size});
  }
  /// A string constant, or %void read as the empty string (the builtins' err_ctx).
  static constexpr bool is_text(std::size_t k) { return is_void(k) || is_const(k, const_kind::string); }
  static constexpr std::string_view text_at(std::size_t k) { return is_void(k) ? std::string_view() : string_at(k); }
  /// A shape constant's dimensions.
  static constexpr std::span<const std::int64_t> shape_at(std::size_t k) {
    return view.i64s.subspan(static_cast<std::size_t>(constant(k).dims_offset), static_cast<std::size_t>(constant(k).ndim));
  }

  /// The described argument of Facts' function that argument k reads, or -1 (detail::fact_register).
  static constexpr std::int64_t fact_index(std::size_t k) { return detail::fact_register(view, Facts, Pc, k); }
  /// Whether argument k is a tensor the facts describe (its dtype: known_dtype, its shape: known_dims).
  static constexpr bool known_tensor(std::size_t k) { return fact_index(k) >= 0; }
  static constexpr dtype known_dtype(std::size_t k) { return Facts.types[static_cast<std::size_t>(fact_index(k))]; }
  static constexpr std::span<const std::int64_t> known_dims(std::size_t k) {
    return Facts.dims_of(static_cast<std::size_t>(fact_index(k)));
  }
};

}  // namespace relaxvm

#endif  // RELAXVM_VM_CALL_SITE_HPP
