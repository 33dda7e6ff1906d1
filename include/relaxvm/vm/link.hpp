// SPDX-License-Identifier: Apache-2.0
// Compile-time linking: a static executable (bytecode/static_executable.hpp) checked against a
// constexpr function table (runtime/table.hpp) by the compiler.
//
//   static constexpr auto prog = relaxvm::build([](relaxvm::exec_builder& b) { ... });
//   static constexpr auto table = relaxvm::make_table(relaxvm::fn<"vm.add">(&add), relaxvm::builtins::table);
//   using linked = decltype(relaxvm::link<prog, table>());
//
// Every packed function the program names must be in the table; every call to a typed entry must
// pass as many arguments as it takes, and each argument whose kind is known without running the
// program (an immediate, a constant, a function, %vm, %void) must be one the parameter accepts.
// A violation is a compile error whose diagnostic names the function, the instruction and the
// argument. An alloc_tensor whose constant view cannot fit the constant storage it views is one
// too (vm/storage_facts.hpp). The linked program calls the table through a constexpr array of
// function pointers, and knows the memory its frames need and, when its allocations are
// constant, the tensor memory they take (static_vm.hpp runs it).
#ifndef RELAXVM_VM_LINK_HPP
#define RELAXVM_VM_LINK_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/diagnostic.hpp"
#include "../bytecode/facts.hpp"
#include "../bytecode/instruction.hpp"
#include "../bytecode/static_executable.hpp"
#include "../runtime/table.hpp"
#include "../runtime/value.hpp"
#include "call_site.hpp"
#include "semantics.hpp"
#include "static_frame.hpp"
#include "storage_facts.hpp"

namespace relaxvm::RELAXVM_ABI {

namespace detail {

/// The kind of argument `a` when the program alone decides it; false for ordinary registers.
constexpr bool static_kind(const exec_view& v, arg a, value_kind& kind) {
  switch (a.kind()) {
    case arg_kind::reg:
      if (a.value() == vm_register) kind = value_kind::context;
      else if (a.value() == void_register) kind = value_kind::null;
      else return false;
      return true;
    case arg_kind::imm: kind = value_kind::int64; return true;
    case arg_kind::func_idx: kind = value_kind::closure; return true;
    case arg_kind::const_idx:
      switch (v.constant(static_cast<std::size_t>(a.value())).kind) {
        case const_kind::int64: kind = value_kind::int64; break;
        case const_kind::float64: kind = value_kind::float64; break;
        case const_kind::boolean: kind = value_kind::boolean; break;
        case const_kind::dtype: kind = value_kind::dtype; break;
        case const_kind::device: kind = value_kind::device; break;
        case const_kind::shape: kind = value_kind::shape; break;
        case const_kind::string: kind = value_kind::string; break;
        case const_kind::tensor: kind = value_kind::tensor; break;
      }
      return true;
  }
  return false;
}

constexpr void append_arg_description(text& t, const exec_view& v, arg a, value_kind kind) {
  switch (a.kind()) {
    case arg_kind::reg: t << (kind == value_kind::context ? "%vm (the vm context)" : "%void (null)"); return;
    case arg_kind::imm: t << "the immediate " << a.value() << " (int64)"; return;
    case arg_kind::func_idx: t << "the function " << safe_func_name(v, a.value()) << " (closure)"; return;
    case arg_kind::const_idx: t << "constant c[" << a.value() << "] (" << to_string(kind) << ')'; return;
  }
}

constexpr text link_error_start() { return diagnostic_start("link_error"); }

/// Checks a verified layout against table type T; the first problem, or ok.
/// Appends " takes [at least ]N argument(s) (kinds), but the call passes <given>": a call of table
/// entry `e` with the wrong number of arguments.
constexpr void append_entry_arity(text& t, const entry_info& e, std::size_t given) {
  t << " takes " << (e.variadic ? "at least " : "") << e.fixed << " argument" << (e.fixed == 1 ? "" : "s") << " (";
  for (std::size_t i = 0; i < e.fixed; ++i) t << (i ? ", " : "") << e.param_name(i);
  t << "), but the call passes " << given;
}

template <class T>
constexpr diagnostic check_link(const exec_view& v) {
  diagnostic s;
  if (constexpr std::string_view dup = T::duplicate(); !dup.empty()) {
    text t = link_error_start();
    t << "the function table defines '" << dup << "' twice";
    s.fail(t);
    return s;
  }
  // Every instruction that names a packed function: as the callee, or as a function argument.
  // (A function the table lacks and no instruction names is reported after this loop.)
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    const func_info& fi = v.funcs[f];
    if (fi.kind != func_kind::vm) continue;
    for (std::int64_t pc = fi.start; pc < fi.end; ++pc) {
      const instruction in = decode(v, pc);
      if (in.op != opcode::call) continue;
      auto missing = [&](std::int64_t callee) {
        const func_info& c = v.funcs[static_cast<std::size_t>(callee)];
        return c.kind == func_kind::packed && T::find(v.str(c.name)) < 0;
      };
      // "relaxvm: link_error  in function 'f', instruction i (...): ", for the problem to follow.
      auto at_instruction = [&] {
        text t = link_error_start();
        t << "in ";
        append_location(t, v, static_cast<std::int64_t>(f), pc);
        t << ": ";
        return t;
      };
      if (missing(in.func_idx)) {
        text t = at_instruction();
        t << '\'' << safe_func_name(v, in.func_idx) << "' is not in the function table";
        s.fail(t);
        return s;
      }
      for (std::int64_t k = 0; k < in.num_args; ++k) {
        const arg a = in.arg_at(k);
        if (a.kind() == arg_kind::func_idx && missing(a.value())) {
          text t = at_instruction();
          t << "argument " << k << ": '" << safe_func_name(v, a.value()) << "' is not in the function table";
          s.fail(t);
          return s;
        }
      }
      const func_info& callee = v.funcs[static_cast<std::size_t>(in.func_idx)];
      if (callee.kind != func_kind::packed) continue;
      const entry_info e = T::info(static_cast<std::size_t>(T::find(v.str(callee.name))));
      if (e.raw) continue;
      const auto n = static_cast<std::size_t>(in.num_args);
      if (e.variadic ? n < e.fixed : n != e.fixed) {
        text t = at_instruction();
        t << '\'' << e.name << '\'';
        append_entry_arity(t, e, n);
        s.fail(t);
        return s;
      }
      for (std::size_t i = 0; i < e.fixed; ++i) {
        value_kind kind = value_kind::null;
        if (!static_kind(v, in.arg_at(static_cast<std::int64_t>(i)), kind)) continue;
        if ((e.param_kinds(i) & kinds_of(kind)) != 0) continue;
        text t = at_instruction();
        t << "argument " << i << " of '" << e.name << "' expects " << e.param_name(i) << ", but the call passes ";
        append_arg_description(t, v, in.arg_at(static_cast<std::int64_t>(i)), kind);
        s.fail(t);
        return s;
      }
    }
  }
  // A packed function declared but named by no instruction can still be invoked by name.
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    const func_info& fi = v.funcs[f];
    if (fi.kind == func_kind::packed && T::find(v.str(fi.name)) < 0) {
      text t = link_error_start();
      t << "function table entry " << f << " ('" << v.str(fi.name) << "') is not in the function table";
      s.fail(t);
      return s;
    }
  }
  return s;
}

inline constexpr std::int64_t unbounded = -1;

/// Bytes of the deepest chain of frames starting at function f (header and slots), or
/// `unbounded` when f can reach itself. `state`: 0 unvisited, 1 on the path, 2 done.
template <layout_sizes S>
constexpr std::int64_t chain_bytes(const exec_view& v, const static_program_facts<S>& facts, std::size_t f,
                                   std::int64_t* state, std::int64_t* memo) {
  if (state[f] == 2) return memo[f];
  if (state[f] == 1) return unbounded;
  state[f] = 1;
  std::int64_t deepest = 0;
  for (std::int64_t pc = v.funcs[f].start; pc < v.funcs[f].end; ++pc) {
    const std::int64_t c = facts.instrs[static_cast<std::size_t>(pc)].vm_callee;
    if (c < 0) continue;
    const std::int64_t b = chain_bytes(v, facts, static_cast<std::size_t>(c), state, memo);
    if (b == unbounded) return unbounded;
    deepest = b > deepest ? b : deepest;
  }
  state[f] = 2;
  memo[f] = static_cast<std::int64_t>(sizeof(static_frame)) +
            facts.funcs[f].frame_slots * static_cast<std::int64_t>(sizeof(value)) + deepest;
  return memo[f];
}

/// Bytes of the deepest chain of frames of any function, or `unbounded` (recursion, or a vm
/// function passed as a value).
template <layout_sizes S>
constexpr std::int64_t max_chain_bytes(const exec_view& v, const static_program_facts<S>& facts) {
  if (facts.calls_indirectly(v)) return unbounded;
  std::array<std::int64_t, S.funcs + 1> state{}, memo{};
  std::int64_t most = 0;
  for (std::size_t f = 0; f < S.funcs; ++f) {
    if (v.funcs[f].kind != func_kind::vm) continue;
    const std::int64_t b = chain_bytes(v, facts, f, state.data(), memo.data());
    if (b == unbounded) return unbounded;
    most = b > most ? b : most;
  }
  return most;
}

/// The parameters of typed entry `e` whose checks the Call `in` passes whatever the program
/// runs with (bit i: parameter i): arguments whose kind (and integer value) the program fixes.
constexpr std::uint64_t known_params(const exec_view& v, const instruction& in, const entry_info& e) {
  std::uint64_t known = 0;
  for (std::size_t i = 0; i < e.fixed && i < 64; ++i) {
    const arg a = in.arg_at(static_cast<std::int64_t>(i));
    value_kind kind = value_kind::null;
    if (!static_kind(v, a, kind)) continue;
    std::int64_t x = 0;
    if (a.kind() == arg_kind::imm) x = a.value();
    else if (a.kind() == arg_kind::const_idx) x = v.constant(static_cast<std::size_t>(a.value())).scalar;
    if (e.param_passes(i, kind, x)) known |= std::uint64_t{1} << i;
  }
  return known;
}

/// What link() returns for a program that does not link (after the compilation failed).
struct link_failed {};

template <class Entry, class Site>
concept site_applies = requires { typename Entry::site; } && !std::is_void_v<typename Entry::site> &&
                       Entry::site::template applies<Site>();

}  // namespace detail

/// A static executable linked against a function table, both constexpr objects with static
/// storage. Everything here is known at compile time. `Facts` (an argument_facts object of
/// static storage, call_site.hpp): what every invocation of one of its functions passes it,
/// which its call sites may take as settled; static_vm checks it when that function is invoked.
template <const auto& Prog, const auto& Table, link_options Options = link_options{},
          const auto& Facts = no_argument_facts>
struct linked_program {
  using table_type = std::remove_cvref_t<decltype(Table)>;
  static_assert(detail::check_built(Prog).ok && detail::check_link<table_type>(Prog.view()).ok &&
                    detail::check_constant_views(Prog.view()).ok,
                "relaxvm: the program does not link against the table; use relaxvm::link<prog, table>() for the reason");
  static constexpr const auto& program = Prog;
  static constexpr const auto& table = Table;
  static constexpr link_options options = Options;
  static constexpr const auto& caller_facts = Facts;
  static constexpr std::size_t num_funcs = std::remove_cvref_t<decltype(Prog)>::sizes.funcs;
  static constexpr std::size_t num_constants = std::remove_cvref_t<decltype(Prog)>::sizes.constants;
  /// What the program says of each function and instruction (frame slots, functions passed as
  /// values, block leaders, vm-to-vm calls): learned once, here.
  static constexpr static_program_facts<std::remove_cvref_t<decltype(Prog)>::sizes> facts =
      facts_of<std::remove_cvref_t<decltype(Prog)>::sizes>(Prog.view());

 private:
  template <std::size_t I>
  static constexpr table_invoke callee_of() {
    constexpr exec_view v = Prog.view();
    if constexpr (v.funcs[I].kind == func_kind::packed) {
      constexpr std::int64_t e = table_type::find(v.name(I));
      if constexpr (e >= 0) return &detail::table_thunk<Table, static_cast<std::size_t>(e)>;
      else return nullptr;
    } else {
      return nullptr;
    }
  }
  template <std::size_t... I>
  static constexpr std::array<table_invoke, sizeof...(I)> make_callees(std::index_sequence<I...>) {
    return {callee_of<I>()...};
  }
  // The table entry a Call of a packed function at Pc calls, or -1.
  static constexpr std::int64_t entry_at(std::int64_t pc) {
    constexpr exec_view v = Prog.view();
    const instruction in = decode(v, pc);
    if (in.op != opcode::call || v.funcs[static_cast<std::size_t>(in.func_idx)].kind != func_kind::packed) return -1;
    return table_type::find(v.name(static_cast<std::size_t>(in.func_idx)));
  }
  // The first Call that the Call at pc is the same site as (pc itself when there is none before
  // it): the same function and the same arguments but for the registers they read. The
  // interpreter loads every argument into the call's slots before the call, so a version
  // specialized for a site cannot tell which register an argument came from: such sites share
  // one version (a program that makes the same view in twenty places links one function for it).
  static constexpr std::int64_t first_same_site(std::int64_t pc) {
    constexpr exec_view v = Prog.view();
    const instruction in = decode(v, pc);
    // (Not when the caller's facts describe what one reads and not the other: call_site::known_tensor.)
    const auto plain_register = [](arg a) { return a.kind() == arg_kind::reg && !is_special_register(a.value()); };
    const auto fact = [&](std::int64_t at, std::int64_t k) {
      return detail::fact_register(v, Facts, at, static_cast<std::size_t>(k));
    };
    for (std::int64_t other = 0; other < pc; ++other) {
      const instruction o = decode(v, other);
      if (o.op != opcode::call || o.func_idx != in.func_idx || o.num_args != in.num_args) continue;
      bool same = true;
      for (std::int64_t k = 0; same && k < in.num_args; ++k) {
        const arg a = in.arg_at(k), b = o.arg_at(k);
        same = (a == b || (plain_register(a) && plain_register(b))) && fact(pc, k) == fact(other, k);
      }
      if (same) return other;
    }
    return pc;
  }
  template <std::size_t Pc>
  static constexpr table_invoke site_of() {
    constexpr std::int64_t e = entry_at(static_cast<std::int64_t>(Pc));
    if constexpr (e < 0) {
      return nullptr;
    } else {
      using entry = std::remove_cvref_t<decltype(Table.template get<static_cast<std::size_t>(e)>())>;
      using site = call_site<Prog, static_cast<std::int64_t>(Pc), Facts>;
      if constexpr (!Options.specialize) {
        return &detail::table_thunk<Table, static_cast<std::size_t>(e)>;
      } else if constexpr (detail::site_applies<entry, site>) {
        return &detail::site_thunk<entry, call_site<Prog, first_same_site(static_cast<std::int64_t>(Pc)), Facts>>;
      } else if constexpr (entry::raw) {
        return &detail::table_thunk<Table, static_cast<std::size_t>(e)>;
      } else {
        constexpr std::uint64_t known =
            detail::known_params(Prog.view(), site::in, table_type::info(static_cast<std::size_t>(e)));
        // Nothing known: the entry itself, one function for all its sites and for callees.
        if constexpr (known == 0) return &detail::table_thunk<Table, static_cast<std::size_t>(e)>;
        else return &detail::table_thunk_known<Table, static_cast<std::size_t>(e), known>;
      }
    }
  }
  template <std::size_t... Pc>
  static constexpr std::array<table_invoke, sizeof...(Pc)> make_sites(std::index_sequence<Pc...>) {
    return {site_of<Pc>()...};
  }
  // The arguments the Call at Pc reads at run time (bit k: argument k; a specialized site may
  // leave constants out); all for other instructions.
  template <std::size_t Pc>
  static constexpr std::uint64_t args_read() {
    constexpr std::int64_t e = entry_at(static_cast<std::int64_t>(Pc));
    if constexpr (e < 0 || !Options.specialize) {
      return ~std::uint64_t{0};
    } else {
      using entry = std::remove_cvref_t<decltype(Table.template get<static_cast<std::size_t>(e)>())>;
      using site = call_site<Prog, static_cast<std::int64_t>(Pc), Facts>;
      if constexpr (detail::site_applies<entry, site>) {
        std::uint64_t mask = 0;
        for (std::size_t k = 0; k < site::num_args && k < 64; ++k)
          if (entry::site::template reads<site>(k)) mask |= std::uint64_t{1} << k;
        return site::num_args > 64 ? mask | ~std::uint64_t{0} << 63 : mask;  // past 64: read
      } else {
        return ~std::uint64_t{0};
      }
    }
  }
  template <std::size_t... Pc>
  static constexpr auto make_constants_read(std::index_sequence<Pc...>) {
    constexpr exec_view v = Prog.view();
    constexpr std::uint64_t masks[] = {args_read<Pc>()..., 0};
    std::array<bool, num_constants + 1> read{};
    for (std::size_t pc = 0; pc < sizeof...(Pc); ++pc) {
      const instruction in = decode(v, static_cast<std::int64_t>(pc));
      if (in.op != opcode::call) continue;
      for (std::int64_t k = 0; k < in.num_args; ++k)
        if (in.arg_at(k).kind() == arg_kind::const_idx && ((masks[pc] >> (k < 63 ? k : 63)) & 1) != 0)
          read[static_cast<std::size_t>(in.arg_at(k).value())] = true;
    }
    return read;
  }
  static constexpr std::int64_t deepest_chain = detail::max_chain_bytes(Prog.view(), facts);

 public:
  static constexpr std::size_t num_instructions = std::remove_cvref_t<decltype(Prog)>::sizes.instr_offset;
  /// Per function index: the table entry a packed function calls; null for vm functions.
  static constexpr std::array<table_invoke, num_funcs> callees = make_callees(std::make_index_sequence<num_funcs>());
  /// Per instruction: what a Call of a packed function calls there (the entry, or its version
  /// for that site's constant arguments: link_options::specialize); null for other instructions.
  static constexpr std::array<table_invoke, num_instructions> sites =
      make_sites(std::make_index_sequence<num_instructions>());
  /// What the program's instructions use, so that the interpreter leaves out the rest: the kinds
  /// of Call arguments (detail::arg_use bits), If, Goto, and Calls of vm functions.
  static constexpr unsigned arg_kinds = detail::arg_kinds_used(Prog.view());
  static constexpr bool uses_if = [] {
    for (std::size_t pc = 0; pc < num_instructions; ++pc)
      if (decode(Prog.view(), static_cast<std::int64_t>(pc)).op == opcode::if_) return true;
    return false;
  }();
  static constexpr bool uses_goto = [] {
    for (std::size_t pc = 0; pc < num_instructions; ++pc)
      if (decode(Prog.view(), static_cast<std::int64_t>(pc)).op == opcode::goto_) return true;
    return false;
  }();
  static constexpr bool calls_vm = [] {
    for (std::size_t pc = 0; pc < num_instructions; ++pc)
      if (facts.instrs[pc].vm_callee >= 0) return true;
    return false;
  }();
  /// Whether any Call is bound to something other than its function's entry (`callees`): only
  /// then does the interpreter look its callee up per instruction (the `sites` array).
  static constexpr bool sites_differ = [] {
    for (std::size_t pc = 0; pc < num_instructions; ++pc) {
      const instruction in = decode(Prog.view(), static_cast<std::int64_t>(pc));
      if (in.op == opcode::call && sites[pc] != callees[static_cast<std::size_t>(in.func_idx)]) return true;
    }
    return false;
  }();
  /// Per constant: whether code that runs reads it as a value (an argument of a Call that is
  /// not specialized for it); static_vm makes values of these only.
  static constexpr std::array<bool, num_constants + 1> constants_read =
      make_constants_read(std::make_index_sequence<num_instructions>());

  /// The largest register file of any function.
  static constexpr std::int64_t max_registers = [] {
    std::int64_t m = 0;
    for (const func_info& f : Prog.view().funcs) m = f.register_file_size > m ? f.register_file_size : m;
    return m;
  }();
  /// The largest frame, in bytes of static_vm memory.
  static constexpr std::size_t max_frame_bytes = [] {
    std::int64_t m = 0;
    for (std::size_t f = 0; f < num_funcs; ++f)
      if (Prog.view().funcs[f].kind == func_kind::vm) {
        const std::int64_t b = static_cast<std::int64_t>(sizeof(static_frame)) +
                               facts.funcs[f].frame_slots * static_cast<std::int64_t>(sizeof(value));
        m = b > m ? b : m;
      }
    return static_cast<std::size_t>(m);
  }();
  /// Whether the deepest chain of calls is known: no recursion, no vm function passed as a value.
  static constexpr bool bounded = deepest_chain != detail::unbounded;
  /// The memory static_vm needs to run any function of the program (when bounded; else give it
  /// max_frame_bytes per frame of the deepest recursion you allow). A kernel that re-enters the
  /// VM (vm.invoke during a call) needs more; without enough, the call fails cleanly.
  static constexpr std::size_t memory_bytes =
      bounded ? static_cast<std::size_t>(deepest_chain) : 0;
  /// Whether the program passes a vm function as a value: only then can a closure over one of
  /// its vm functions exist (static_vm makes them when it is created), so only then does
  /// static_vm link the code that runs one when a closure is invoked; closures over packed
  /// functions are called either way.
  static constexpr bool vm_closures = [] {
    for (std::size_t f = 0; f < num_funcs; ++f)
      if (facts.funcs[f].used_as_value && Prog.view().funcs[f].kind == func_kind::vm) return true;
    return false;
  }();
 private:
  static constexpr std::int64_t arena_figure = detail::arena_bytes(Prog.view(), facts, bounded);

 public:
  /// Whether arena_bytes is known (vm/storage_facts.hpp says when).
  static constexpr bool arena_known = arena_figure != detail::unknown_bytes;
  /// The tensor memory the program's own allocations (alloc_storage, alloc_shape_heap) take from
  /// an arena aligned to 64 bytes in one invocation of any function, at most: size an arena by it
  /// (static_vm::arena checks a buffer against it when it compiles). 0 when not arena_known.
  static constexpr std::size_t arena_bytes = arena_known ? static_cast<std::size_t>(arena_figure) : 0;

 private:
  // Per function: what the table entry a packed function calls says of the objects it makes.
  static constexpr std::array<object_rule, num_funcs + 1> object_rules = [] {
    std::array<object_rule, num_funcs + 1> out{};
    for (std::size_t f = 0; f < num_funcs; ++f) {
      if (Prog.view().funcs[f].kind != func_kind::packed) continue;
      const std::int64_t e = table_type::find(Prog.view().name(f));
      out[f] = e < 0 ? object_rule::unknown : table_type::info(static_cast<std::size_t>(e)).objects;
    }
    return out;
  }();
  static constexpr std::int64_t object_figure =
      detail::object_bytes(Prog.view(), facts, bounded, constants_read.data(), object_rules.data());

 public:
  /// Whether object_bytes is known (vm/storage_facts.hpp says when).
  static constexpr bool objects_known = object_figure != detail::unknown_bytes;
  /// The object memory (firmware mode's set_object_memory) that the program's constants and the
  /// objects of one invocation of any vm function take, at most: add the caller's own objects
  /// (tensor_view_object_bytes, arena_object_bytes) and size the buffer by it
  /// (static_vm::object_memory checks it when it compiles). 0 when not objects_known.
  static constexpr std::size_t object_bytes = objects_known ? static_cast<std::size_t>(object_figure) : 0;
};

/// Links `Prog` (a static_executable) against `Table` (an fn_table) at compile time; see the top
/// of this file. Both must be constexpr objects with static storage duration.
template <const auto& Prog, const auto& Table, link_options Options = link_options{}>
consteval auto link() {
  using table_type = std::remove_cvref_t<decltype(Table)>;
  // Each check a constant of its own (its own constexpr step budget), the next only when the one
  // before passed: the program as build() verified it, then against the table, then the views of
  // constant storages.
  constexpr detail::diagnostic built = detail::check_built(Prog);
  constexpr detail::diagnostic d = built.ok ? detail::check_link<table_type>(Prog.view()) : detail::diagnostic{};
  constexpr detail::diagnostic views = built.ok && d.ok ? detail::check_constant_views(Prog.view()) : detail::diagnostic{};
  if constexpr (!built.ok || !d.ok || !views.ok) {
    // Evaluated while the template is instantiated, so that decltype(link<...>()) fails too; no
    // linked_program is made, so its own check does not repeat the failure.
    constexpr detail::diagnostic failure = !built.ok ? built : !d.ok ? d : views;
    constexpr int failed = detail::relaxvm_program_failed_to_link(detail::spelled<failure>());
    (void)failed;
    return detail::link_failed{};
  } else {
    return linked_program<Prog, Table, Options>{};
  }
}

}  // namespace relaxvm

#endif  // RELAXVM_VM_LINK_HPP
