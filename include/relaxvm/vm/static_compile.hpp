// SPDX-License-Identifier: Apache-2.0
// static_dispatch::compile: every instruction of a linked program turned into code at compile
// time, for static_vm (static_vm.hpp).
//
// Each vm function is one C++ function, whose registers are its own locals (its frame in the VM's
// memory is only a header, for the error's call chain). Its blocks (bytecode/facts.hpp: leaders)
// are inlined into a loop that picks the block starting at pc; a block is its instructions' code
// one after another (a fold over their pcs) and gives the next pc, or `returned` / `failed`. A Call
// is a direct call into its table entry with its arguments' kinds known; If and Goto are jumps
// between blocks. A failure has already unwound the frames (VM::failure) and left its error in
// the VM's failure_.
#ifndef RELAXVM_VM_STATIC_COMPILE_HPP
#define RELAXVM_VM_STATIC_COMPILE_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../bytecode/instruction.hpp"
#include "../runtime/adapters.hpp"
#include "../runtime/value.hpp"
#include "link.hpp"
#include "semantics.hpp"
#include "static_frame.hpp"

namespace relaxvm::RELAXVM_ABI::detail {

/// The compiled functions of static_vm `VM` running `Linked` (VM befriends it).
template <class VM, class Linked>
struct static_compiler {
  static constexpr exec_view view = Linked::program.view();
  static constexpr std::int64_t returned = -1, failed = -2;
  using entry_fn = bool (*)(VM&, static_frame*, const value*, value&);
  static constexpr bool leader(std::int64_t pc) { return Linked::facts.instrs[static_cast<std::size_t>(pc)].leader; }

  // The first pcs of function Fi's blocks.
  template <std::size_t Fi>
  static constexpr std::size_t num_blocks = [] {
    std::size_t n = 0;
    for (std::int64_t pc = view.funcs[Fi].start; pc < view.funcs[Fi].end; ++pc) n += leader(pc);
    return n;
  }();
  template <std::size_t Fi>
  static constexpr std::array<std::int64_t, num_blocks<Fi>> blocks_of = [] {
    std::array<std::int64_t, num_blocks<Fi>> b{};
    std::size_t n = 0;
    for (std::int64_t pc = view.funcs[Fi].start; pc < view.funcs[Fi].end; ++pc)
      if (leader(pc)) b[n++] = pc;
    return b;
  }();

  // Runs vm function Fi with `args`; its frame header is on top. On success its result is in
  // `out` and the header is gone.
  template <std::size_t Fi>
  static bool run_compiled(VM& vm, static_frame* base, const value* args, value& out) {
    value regs[static_cast<std::size_t>(Linked::facts.funcs[Fi].frame_slots)];  // registers, return slot, argument scratch
    for (std::size_t k = 0; k < static_cast<std::size_t>(view.funcs[Fi].num_args); ++k) value::borrow_into(regs[k], args[k]);
    std::int64_t pc = view.funcs[Fi].start;
    while (pc >= 0) pc = run_block_at<Fi, 0>(vm, regs, base, out, pc);
    return pc == returned;
  }
  // Folds expand in chunks of at most fold_chunk terms: clang refuses folds nested deeper than 256.
  static constexpr std::size_t fold_chunk = 128;
  static constexpr std::size_t chunk(std::size_t left) { return left < fold_chunk ? left : fold_chunk; }
  // Runs the block that starts at pc, looking among blocks First, First + 1, ...
  template <std::size_t Fi, std::size_t First>
  RELAXVM_ALWAYS_INLINE static std::int64_t run_block_at(VM& vm, value* const regs, static_frame* const base,
                                                         value& out, std::int64_t pc) {
    bool found = false;
    [&]<std::size_t... B>(std::index_sequence<B...>) RELAXVM_LAMBDA_INLINE {
      (void)((pc == blocks_of<Fi>[First + B]
                  ? (pc = run_block<Fi, blocks_of<Fi>[First + B]>(vm, regs, base, out), found = true)
                  : false) ||
             ...);
    }(std::make_index_sequence<chunk(num_blocks<Fi> - First)>());
    if constexpr (First + fold_chunk < num_blocks<Fi>) {
      if (!found) return run_block_at<Fi, First + fold_chunk>(vm, regs, base, out, pc);
    }
    return pc;
  }
  // The instructions from Start up to and including the first Ret, Goto or If, or up to the next
  // block.
  template <std::size_t Fi>
  static constexpr std::int64_t block_size(std::int64_t start) {
    const std::int64_t end = view.funcs[Fi].end;
    std::int64_t pc = start;
    while (true) {
      const bool control = decode(view, pc).op != opcode::call;
      ++pc;
      if (control || pc == end || leader(pc)) return pc - start;
    }
  }
  template <std::size_t Fi, std::int64_t Start>
  RELAXVM_ALWAYS_INLINE static std::int64_t run_block(VM& vm, value* const regs, static_frame* const base,
                                                      value& out) {
    return run_steps<Fi, Start, static_cast<std::size_t>(block_size<Fi>(Start))>(vm, regs, base, out);
  }
  // Runs Count instructions from Start, each returning the pc after it when it falls through;
  // anything else ends the block.
  template <std::size_t Fi, std::int64_t Start, std::size_t Count>
  RELAXVM_ALWAYS_INLINE static std::int64_t run_steps(VM& vm, value* const regs, static_frame* const base,
                                                      value& out) {
    std::int64_t next = Start;
    [&]<std::size_t... I>(std::index_sequence<I...>) RELAXVM_LAMBDA_INLINE {
      (void)((next = step<Fi, Start + static_cast<std::int64_t>(I)>(vm, regs, base, out),
              next == Start + static_cast<std::int64_t>(I) + 1) &&
             ...);
    }(std::make_index_sequence<chunk(Count)>());
    if constexpr (Count > fold_chunk) {
      if (next == Start + static_cast<std::int64_t>(fold_chunk))
        return run_steps<Fi, Start + static_cast<std::int64_t>(fold_chunk), Count - fold_chunk>(vm, regs, base, out);
    }
    return next;
  }

  // Whether the Call at Pc passes registers r, r+1, ... (so that they can be passed in place).
  static constexpr bool consecutive_registers(std::int64_t pc) {
    const instruction in = decode(view, pc);
    if (in.num_args == 0) return false;
    for (std::int64_t k = 0; k < in.num_args; ++k) {
      const arg a = in.arg_at(k);
      if (a.kind() != arg_kind::reg || a.value() >= begin_special_register || a.value() != in.arg_at(0).value() + k)
        return false;
    }
    return true;
  }

  template <std::size_t Fi, std::int64_t Pc>
  RELAXVM_ALWAYS_INLINE static std::int64_t step(VM& vm, value* const regs, static_frame* base, value& out) {
    constexpr instruction in = decode(view, Pc);
    if constexpr (in.op == opcode::call) {
      constexpr std::size_t callee = static_cast<std::size_t>(in.func_idx);
      constexpr std::int64_t rf = view.funcs[Fi].register_file_size;
      constexpr auto n = static_cast<std::uint32_t>(in.num_args);
      value* const argv = regs + rf + 1;
      const value* args = argv;
      if constexpr (consecutive_registers(Pc)) {
        args = regs + in.arg_at(0).value();
      } else {
        // The arguments' kinds are constants here, so load_arg's switch folds away.
        for (std::int64_t k = 0; k < in.num_args; ++k)
          load_arg(argv[k], in.arg_at(k), regs, &vm, vm.consts_.data(), vm.funcs_.data());
      }
      if constexpr (view.funcs[callee].kind == func_kind::packed) {
        using table_type = typename Linked::table_type;
        constexpr auto e = static_cast<std::size_t>(table_type::find(view.name(callee)));
        using entry = std::remove_cvref_t<decltype(Linked::table.template get<e>())>;
        static constexpr typename entry::function_type f = Linked::table.template get<e>().f;
        using site = call_site<Linked::program, Pc, Linked::caller_facts>;
        // The entry's version for this site (link_options::specialize), as Linked::sites binds it.
        constexpr bool specialized = Linked::options.specialize && site_applies<entry, site>;
        // A typed entry reads its arguments before it writes its result: straight into the register.
        constexpr bool in_place = !entry::raw && !specialized && in.dst != void_register;
        value& ret = in_place ? regs[in.dst] : regs[rf];
        bool ok;
        if constexpr (specialized) {
          ok = site_thunk<entry, site>(args, n, ret, vm.failure_);
        } else if constexpr (Linked::options.specialize && !entry::raw) {
          constexpr std::uint64_t known = known_params(view, in, table_type::info(e));
          ok = entry::invoker::template run_known<known>([] { return entry::name; }, f, args, n, ret, vm.failure_);
        } else {
          ok = entry::invoker::run([] { return entry::name; }, f, args, n, ret, vm.failure_);
        }
        if (RELAXVM_UNLIKELY(!ok)) return vm.failure(Pc, base);
        if constexpr (!in_place) {
          if constexpr (in.dst != void_register) regs[in.dst] = std::move(ret);
          else ret.reset();
        }
      } else {
        if (RELAXVM_UNLIKELY(!vm.push_frame(in.func_idx, nullptr, 0, static_cast<std::int32_t>(Pc)))) {
          vm.failure_.emplace(vm.frame_error(in.func_idx));
          return vm.failure(Pc, base);
        }
        value r;
        if (!run_compiled<callee>(vm, base, args, r)) return failed;
        if constexpr (in.dst != void_register) regs[in.dst] = std::move(r);
      }
      return Pc + 1;
    } else if constexpr (in.op == opcode::ret) {
      if constexpr (in.reg != void_register) {
        value& src = regs[in.reg];
        out = take_return(src);
      } else {
        out.reset();
      }
      vm.pop_frame();
      return returned;
    } else if constexpr (in.op == opcode::goto_) {
      return Pc + in.offset;
    } else {
      const value& c = regs[in.reg];
      if (RELAXVM_UNLIKELY(!valid_condition(c))) {
        vm.failure_.emplace(if_condition_error(in.reg, c));
        return vm.failure(Pc, base);
      }
      return Pc + if_offset(c, in.offset);
    }
  }
  template <std::size_t Fi>
  static constexpr entry_fn entry_of() {
    if constexpr (view.funcs[Fi].kind == func_kind::vm) return &run_compiled<Fi>;
    else return nullptr;
  }
  /// Per function index: the compiled function of a vm function, or null.
  static constexpr std::array<entry_fn, Linked::num_funcs> entries = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<entry_fn, sizeof...(I)>{entry_of<I>()...};
  }(std::make_index_sequence<Linked::num_funcs>());
};

}  // namespace relaxvm::RELAXVM_ABI::detail

#endif  // RELAXVM_VM_STATIC_COMPILE_HPP
