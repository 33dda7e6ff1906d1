// SPDX-License-Identifier: Apache-2.0
// decoded_program: an executable as virtual_machine runs it, made once when the VM is made. Every
// packed function is resolved in the registry; every instruction of a vm function is decoded into
// an op (indexed by pc, like the bytecode) and every Call argument into an operand: a register,
// or a value of `fixed` (immediates, constants, function values, %vm, %void), so that the loop
// neither decodes argument kinds nor looks functions up.
#ifndef RELAXVM_VM_DECODED_PROGRAM_HPP
#define RELAXVM_VM_DECODED_PROGRAM_HPP

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../base/hash_index.hpp"
#include "../base/text_builder.hpp"
#include "../bytecode/facts.hpp"
#include "../bytecode/instruction.hpp"
#include "../bytecode/layout.hpp"
#include "../bytecode/opcode.hpp"
#include "../io/executable.hpp"
#include "../runtime/closure.hpp"
#include "../runtime/constant.hpp"
#include "../runtime/context.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI::detail {

/// The decoded program of one VM. A class template (of a parameter nobody sets), like the VM, so
/// that a translation unit which makes no VM does not compile it (its types are members, so that
/// not even the vectors of them are instantiated there).
template <class Unused = void>
class decoded_program {
 public:
  /// An entry of the function table, as the loop reads it.
  struct func_entry {
    func_kind kind = func_kind::packed;
    std::string_view name;
    // packed
    const closure_object* callee = nullptr;  // what runs
    std::span<const value> bound;            // captured values of a registered closure
    // vm
    std::int64_t start = 0, num_args = 0, register_file_size = 0;
    std::int64_t frame_slots = 0;  // registers + return slot + argument scratch
    std::int64_t params_begin = 0, params_count = 0;
  };

  /// What the loop does for an instruction: the opcode, with the Calls it can make fast split out.
  // A Call of a packed function without captured values, while no instrument hook is set, runs
  // one of four fast paths: its arguments passed in place when they are registers r, r+1, ...
  // (else borrowed into the frame's argument scratch), and its result written straight into
  // regs[dst] when the callee allows it (result_after_args; else through the return slot).
  enum class step : std::uint8_t {
    packed_call,             ///< arguments borrowed, result through the return slot
    packed_call_args,        ///< arguments in place, result through the return slot
    packed_call_result,      ///< arguments borrowed, result in place
    packed_call_in_place,    ///< arguments and result in place
    call,                    ///< any other Call: a vm function, captured values, or the hook watching
    kill,                    ///< vm.builtin.null_value into a register: the register is cleared
    ret,
    goto_,
    if_,
  };
  /// A register argument of an argument block: block[pos] = regs[reg].
  struct block_reg {
    std::uint32_t pos;
    std::uint32_t reg;
  };
  /// An instruction as the loop runs it, decoded when the VM is made (ops[pc]).
  struct op {
    step what = step::ret;
    bool args_in_place = false;    ///< call: the arguments are registers first, first+1, ...
    bool result_in_place = false;  ///< call: the callee may write its result straight into regs[dst]
    bool kill = false;             ///< call: vm.builtin.null_value with no arguments into a register
    std::uint32_t num_args = 0;
    std::int64_t a = 0;      ///< call: dst; ret, if: the register; goto: the offset
    std::int64_t b = 0;      ///< call: the function index; if: the offset when false
    std::int64_t first = 0;  ///< call with args_in_place: the first argument's register
    const closure_object* callee = nullptr;  ///< a packed function without captured values, or null
    packed_invoke invoke = nullptr;          ///< with a block: callee's invoke, or its prepared one
    const std::int64_t* operands = nullptr;  ///< call: per argument, a register (>= 0) or ~index into fixed
    mutable kept_slot kept;  ///< call: what its callee keeps for its next run (instruction_slot)
    /// Packed calls whose arguments are not in place: an argument array of their own, its fixed
    /// arguments (immediates, constants) written once when the VM is made, so that a run writes
    /// only the registers (`num_regs` pairs of position and register at `regs_at`). `busy` while
    /// the callee runs: a re-entrant run of the same instruction uses the frame's scratch.
    value* block = nullptr;
    const block_reg* regs_at = nullptr;
    std::uint32_t num_regs = 0;
    mutable bool busy = false;
  };

  /// Resolves every packed function of `exe` in `reg` and decodes its code for the VM `vm`.
  /// `prepare_calls`: vm_options::prepare_calls; `instrumented`: an instrument hook is set.
  status make(const executable& exe, const basic_registry& reg, vm_context* vm, bool prepare_calls, bool instrumented) {
    view_ = exe.view();
    facts_ = exe.facts();
    vm_ = vm;
    prepare_calls_ = prepare_calls;
    instrumented_ = instrumented;
    keep_alive = exe.keep_alive();
    funcs.resize(view_.funcs.size());
    func_values.resize(view_.funcs.size());
    std::vector<std::int64_t> missing;
    for (std::size_t i = 0; i < view_.funcs.size(); ++i) {
      const func_info& fi = view_.funcs[i];
      func_entry& e = funcs[i];
      e.kind = fi.kind;
      e.name = view_.name(i);
      by_name.insert(hash_chars(hash_seed, e.name), static_cast<std::int64_t>(i));
      if (fi.kind == func_kind::packed) {
        const closure* c = reg.find(e.name);
        if (!c) {
          missing.push_back(static_cast<std::int64_t>(i));
          continue;
        }
        func_values[i] = value(*c);
        e.callee = &c->get()->callee();
        e.bound = c->bound();
        continue;
      }
      e.start = fi.start;
      e.num_args = fi.num_args;
      e.register_file_size = fi.register_file_size;
      e.params_begin = fi.params_begin;
      e.params_count = fi.params_count;
      e.frame_slots = facts_[i].frame_slots;
      auto clo = make_object<closure_object>(closure_object::kind_t::vm, e.name);
      clo->func_index = static_cast<std::int64_t>(i);
      clo->program = keep_alive;
      func_values[i] = value(closure(object_ref<closure_object>(std::move(clo))));
    }
    if (!missing.empty()) return missing_functions(missing);
    const_owner = make_object<keep_alive_owner>(keep_alive);
    return decode_all();
  }

  /// Index of function `name`, or -1.
  std::int64_t find(std::string_view name) const {
    return by_name.find(hash_chars(hash_seed, name),
                        [&](std::int64_t i) { return funcs[static_cast<std::size_t>(i)].name == name; });
  }

  static bool is_call(const op& o) { return o.what <= step::kill; }
  /// Chooses each Call's step again: the fast paths need a plain packed callee and no hook.
  void set_instrumented(bool on) {
    instrumented_ = on;
    for (op& o : ops)
      if (is_call(o)) o.what = call_step(o, on);
  }
  /// Kept views leave their storages' lists before the slots go (see drop_kept).
  void release_kept() noexcept {
    for (op& o : ops) drop_kept(o.kept);
  }

  std::shared_ptr<const void> keep_alive;  ///< the executable's layout
  std::vector<func_entry> funcs;        ///< the function table
  std::vector<value> func_values;  ///< f[i] arguments: closures of vm functions, registry closures
  object_ref<object> const_owner;  ///< keeps the executable's bytes alive under tensor constants
  std::vector<op> ops;                 ///< the instructions, decoded (by pc)
  std::vector<std::int64_t> operands;     ///< the Call arguments of ops
  std::vector<value> fixed;               ///< Call arguments that are not registers (borrowed or inline)
  std::vector<value> blocks;              ///< the argument blocks of op::block (borrowed values)
  std::vector<block_reg> block_regs;   ///< their register arguments
  hash_index by_name;                     ///< function name -> its index in funcs

 private:
  // The widest call a prepare hook is asked about: its mask of fixed arguments has 64 bits.
  static constexpr std::uint32_t max_prepared_args = 64;
  static step call_step(const op& o, bool instrumented) {
    if (!o.callee || instrumented) return step::call;
    if (o.kill) return step::kill;
    if (o.args_in_place) return o.result_in_place ? step::packed_call_in_place : step::packed_call_args;
    return o.result_in_place ? step::packed_call_result : step::packed_call;
  }

  // Decodes every instruction of a vm function into ops (indexed by pc, like the bytecode) and
  // every Call argument into an operand: a register, or a value of fixed (immediates, constants,
  // function values, %vm, %void), so that the loop neither decodes argument kinds nor looks
  // functions up. Instructions outside every function are neither verified nor reachable: they
  // are left alone (the fuzzer found that decoding them reads out of bounds).
  status decode_all() {
    const std::size_t n = view_.instr_offset.size();
    ops.resize(n);
    std::vector<std::size_t> first_operand(n, 0);
    const_fixed_.assign(view_.constants.size(), 0);
    fixed.push_back(value());     // ~0: %void
    fixed.push_back(value(vm_));  // ~1: %vm
    for (const func_info& f : view_.funcs) {
      if (f.kind != func_kind::vm) continue;
      for (auto pc = static_cast<std::size_t>(f.start); pc < static_cast<std::size_t>(f.end); ++pc) decode_one(pc, first_operand);
    }
    for (std::size_t pc = 0; pc < n; ++pc)
      if (is_call(ops[pc])) ops[pc].operands = operands.data() + first_operand[pc];
    make_blocks();
    const_fixed_ = std::vector<std::int64_t>();  // only decoding needs it
    return decode_error_ ? status(std::move(*decode_error_)) : status();
  }
  void decode_one(std::size_t pc, std::vector<std::size_t>& first_operand) {
    const instruction in = decode(view_, static_cast<std::int64_t>(pc));
    op& o = ops[pc];
    switch (in.op) {
      case opcode::call: {
        o.a = in.dst;
        o.b = in.func_idx;
        o.num_args = static_cast<std::uint32_t>(in.num_args);
        const func_entry& f = funcs[static_cast<std::size_t>(in.func_idx)];
        if (f.kind == func_kind::packed && f.bound.empty()) {
          o.callee = f.callee;
          o.result_in_place = f.callee->result_after_args && in.dst != void_register;
          o.kill = in.num_args == 0 && in.dst != void_register && detail::is_null_value(*f.callee);
        }
        first_operand[pc] = operands.size();
        bool consecutive = in.num_args > 0;
        for (std::int64_t k = 0; k < in.num_args; ++k) {
          const std::int64_t code = operand(in.arg_at(k));
          operands.push_back(code);
          consecutive = consecutive && code >= 0 && code == operands[first_operand[pc]] + k;
        }
        o.args_in_place = consecutive;
        if (consecutive) o.first = operands[first_operand[pc]];
        o.what = call_step(o, instrumented_);
        break;
      }
      case opcode::ret:
        o.what = step::ret;
        o.a = in.reg;
        break;
      case opcode::goto_:
        o.what = step::goto_;
        o.a = in.offset;
        break;
      case opcode::if_:
        o.what = step::if_;
        o.a = in.reg;
        o.b = in.offset;
        break;
    }
  }
  // The argument blocks of packed calls whose arguments are not in place (see op::block).
  void make_blocks() {
    std::size_t values = 0, regs = 0;
    for (const op& o : ops)
      if (is_call(o) && o.callee && !o.args_in_place && o.num_args > 0) {
        values += o.num_args;
        for (std::uint32_t k = 0; k < o.num_args; ++k) regs += o.operands[k] >= 0 ? 1 : 0;
      }
    blocks.resize(values);
    block_regs.resize(regs);
    std::size_t v = 0, r = 0;
    for (op& o : ops) {
      if (!is_call(o) || !o.callee || o.args_in_place || o.num_args == 0) continue;
      o.block = blocks.data() + v;
      o.regs_at = block_regs.data() + r;
      for (std::uint32_t k = 0; k < o.num_args; ++k, ++v) {
        const std::int64_t x = o.operands[k];
        if (x >= 0) {  // registers are below max_register_file_size (verify), so 32 bits hold them
          block_regs[r++] = block_reg{k, static_cast<std::uint32_t>(x)};
          ++o.num_regs;
        } else {
          blocks[v] = value::borrow(fixed[static_cast<std::size_t>(~x)]);
        }
      }
      // The callee's version for this site (its register arguments are still null here).
      o.invoke = o.callee->invoke;
      if (prepare_calls_ && o.callee->prepare && o.num_args <= max_prepared_args) {
        std::uint64_t fixed_mask = 0;
        for (std::uint32_t k = 0; k < o.num_args; ++k)
          if (o.operands[k] < 0) fixed_mask |= std::uint64_t{1} << k;
        if (const packed_invoke p = o.callee->prepare(o.block, o.num_args, fixed_mask)) o.invoke = p;
      }
    }
  }
  std::int64_t operand(arg a) {
    const std::int64_t v = a.value();
    auto add_fixed = [&](value x) {
      fixed.push_back(std::move(x));
      return ~static_cast<std::int64_t>(fixed.size() - 1);
    };
    switch (a.kind()) {
      case arg_kind::reg:
        if (v < begin_special_register) return v;
        return v == vm_register ? ~std::int64_t{1} : ~std::int64_t{0};
      case arg_kind::imm: return add_fixed(value(v));
      case arg_kind::const_idx: {
        // A constant becomes a value when the first instruction that uses it is decoded, once:
        // constants nothing uses cost the VM nothing. Tensor constants view the executable's bytes.
        std::int64_t& known = const_fixed_[static_cast<std::size_t>(v)];
        if (known != 0) return known;
        result<value> c = try_materialize_constant(view_, view_.constants[static_cast<std::size_t>(v)], const_owner);
        if (!c.ok() && !decode_error_) decode_error_.emplace(std::move(c).error());
        known = add_fixed(c.ok() ? std::move(*c) : value());
        return known;
      }
      case arg_kind::func_idx: return add_fixed(value::borrow(func_values[static_cast<std::size_t>(v)]));
    }
    return ~std::int64_t{0};
  }

  error missing_functions(const std::vector<std::int64_t>& missing) const {
    // Each with the first instruction that needs it, so the user can tell where it comes from.
    text t;
    t << "virtual_machine: " << missing.size() << " packed function" << (missing.size() == 1 ? " is" : "s are")
      << " not in the registry:";
    for (std::int64_t m : missing) {
      t << "\n  '" << view_.name(static_cast<std::size_t>(m)) << '\'';
      if (const function_facts& u = facts_[static_cast<std::size_t>(m)]; u.first_use_pc >= 0) {
        t << ", needed by ";
        append_location(t, view_, u.first_use_function, u.first_use_pc);
      }
    }
    t << "\nregister them (registry::def) before making the VM";
    return error(error_kind::value, t.view());
  }

  exec_view view_;                          // views of the executable, which the VM keeps
  std::span<const function_facts> facts_;
  vm_context* vm_ = nullptr;
  bool prepare_calls_ = false, instrumented_ = false;
  std::vector<std::int64_t> const_fixed_;  // while decoding: constant -> its operand (0: not yet used)
  std::optional<error> decode_error_;
};

}  // namespace relaxvm::RELAXVM_ABI::detail

#endif  // RELAXVM_VM_DECODED_PROGRAM_HPP
