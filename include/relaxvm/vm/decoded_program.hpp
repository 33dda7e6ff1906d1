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
  /// An entry of the function table, as the loop reads it. Its counts are 32 bits: the verifier
  /// bounds registers (max_register_file_size) and make() the rest (max_decoded).
  struct func_entry {
    std::string_view name;
    // packed
    const closure_object* callee = nullptr;  // what runs
    const value* bound_at = nullptr;         // captured values of a registered closure (num_bound)
    // vm (its parameter names: the executable's func_info)
    std::int64_t start = 0;
    std::int64_t frame_slots = 0;  // registers + return slot + argument scratch
    std::int32_t num_args = 0, register_file_size = 0;
    std::uint32_t num_bound = 0;
    func_kind kind = func_kind::packed;
    std::span<const value> bound() const { return {bound_at, num_bound}; }
  };
  static_assert(sizeof(void*) != 8 || sizeof(func_entry) == 64);

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
  /// An instruction as the loop runs it, decoded when the VM is made (ops[pc]): 64 bytes, what a
  /// call reads on its fast paths and little more (docs/security.md: the VM's memory per
  /// instruction counts against 4x the file). Registers, offsets and indices are 32 bits, the
  /// verifier bounding registers and make() the number of instructions, functions and arguments
  /// (max_decoded); a destination or Ret register of %void is no_register. What the argument
  /// block's path reads is here, not behind a pointer of its own: a record per Call (56-byte ops)
  /// measured 7% slower in bench_dispatch's tensor case, and indices for both arrays 3%.
  struct op {
    step what = step::ret;
    bool args_in_place = false;  ///< call: the arguments are registers first, first+1, ...
    /// `busy` while a packed callee runs with the argument block: a re-entrant run of the same
    /// instruction uses the frame's scratch (and keeps nothing)
    mutable bool busy = false;
    std::uint32_t num_args = 0;
    std::int32_t a = 0;  ///< call: dst; ret, if: the register; goto: the offset
    std::int32_t b = 0;  ///< call: the function index; if: the offset when false
    union {
      std::uint32_t first = 0;  ///< call with args_in_place: the first argument's register
      std::uint32_t num_regs;   ///< call with a block: how many of its arguments are registers
    };
    std::uint32_t regs_at = 0;               ///< call with a block: its registers, in block_regs
    const closure_object* callee = nullptr;  ///< a packed function without captured values, or null
    packed_invoke invoke = nullptr;          ///< call with a block: callee's invoke, or its prepared one
    /// Calls whose arguments are not in place (with at least one): a packed callee gets an
    /// argument array of its own, its fixed arguments (immediates, constants) written once when
    /// the VM is made, so that a run writes only the registers (num_regs pairs of position and
    /// register, block_regs from regs_at). Other calls (callee null) have their operands: per
    /// argument, a register (>= 0) or ~index into fixed.
    union {
      value* block = nullptr;
      const std::int32_t* operands;
    };
    mutable kept_slot kept;  ///< call: what its callee keeps for its next run (instruction_slot)
  };
  static_assert(sizeof(void*) != 8 || sizeof(op) == 64);
  static constexpr std::int32_t no_register = -1;

  /// Resolves every packed function of `exe` in `reg` and decodes its code for the VM `vm`.
  /// `prepare_calls`: vm_options::prepare_calls; `instrumented`: an instrument hook is set.
  status make(const executable& exe, const basic_registry& reg, vm_context* vm, bool prepare_calls, bool instrumented) {
    view_ = exe.view();
    facts_ = exe.facts();
    vm_ = vm;
    prepare_calls_ = prepare_calls;
    instrumented_ = instrumented;
    keep_alive = exe.keep_alive();
    if (view_.instr_offset.size() > max_decoded || view_.funcs.size() > max_decoded)
      return value_error("virtual_machine: the executable has ", view_.instr_offset.size(), " instructions and ",
                         view_.funcs.size(), " functions; a VM runs at most ", max_decoded, " of either");
    funcs.resize(view_.funcs.size());
    func_values.resize(view_.funcs.size());
    by_name.reserve(view_.funcs.size());
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
        e.bound_at = c->bound().data();
        e.num_bound = static_cast<std::uint32_t>(c->bound().size());
        continue;
      }
      // Verified: 0 <= num_args <= register_file_size <= max_register_file_size.
      e.start = fi.start;
      e.num_args = static_cast<std::int32_t>(fi.num_args);
      e.register_file_size = static_cast<std::int32_t>(fi.register_file_size);
      e.frame_slots = facts_[i].frame_slots;
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
  /// f[i] arguments: registry closures, and closures of the vm functions that some Call passes
  /// (made when the first such Call is decoded: a function nothing passes costs no closure)
  std::vector<value> func_values;
  object_ref<object> const_owner;  ///< keeps the executable's bytes alive under tensor constants
  std::vector<op> ops;                 ///< the instructions, decoded (by pc)
  std::vector<std::int32_t> operands;  ///< the arguments of Calls not in place (op::operands)
  std::vector<value> fixed;               ///< Call arguments that are not registers (borrowed or inline)
  std::vector<value> blocks;              ///< the argument blocks of ops (borrowed values)
  std::vector<block_reg> block_regs;   ///< their register arguments
  hash_index by_name;                     ///< function name -> its index in funcs

 private:
  // The widest call a prepare hook is asked about: its mask of fixed arguments has 64 bits.
  static constexpr std::uint32_t max_prepared_args = 64;
  // The most instructions, functions and Call arguments a VM decodes: what 32 bits index (an
  // executable of more is a file of tens of GiB).
  static constexpr std::size_t max_decoded = INT32_MAX;
  static step call_step(const op& o, bool instrumented) {
    if (!o.callee || instrumented) return step::call;
    // The callee may write its result straight into regs[dst] (result_after_args).
    const bool result_in_place = o.callee->result_after_args && o.a != no_register;
    if (o.num_args == 0 && o.a != no_register && detail::is_null_value(*o.callee)) return step::kill;
    if (o.args_in_place) return result_in_place ? step::packed_call_in_place : step::packed_call_args;
    return result_in_place ? step::packed_call_result : step::packed_call;
  }
  // Whether the arguments of `in` are registers r, r+1, ... (at least one): the call passes them
  // in place.
  static bool consecutive_registers(const instruction& in) {
    if (in.num_args == 0) return false;
    const std::int64_t first = in.arg_at(0).value();
    for (std::int64_t k = 0; k < in.num_args; ++k) {
      const arg x = in.arg_at(k);
      if (x.kind() != arg_kind::reg || x.value() >= begin_special_register || x.value() != first + k) return false;
    }
    return true;
  }
  // A register of the bytecode as an op holds it: verified to be below max_register_file_size, or
  // %void (no_register).
  static std::int32_t reg32(std::int64_t r) {
    return r >= begin_special_register ? no_register : static_cast<std::int32_t>(r);
  }

  // Decodes every instruction of a vm function into ops (indexed by pc, like the bytecode) and
  // every Call argument into an operand: a register, or a value of fixed (immediates, constants,
  // function values, %vm, %void), so that the loop neither decodes argument kinds nor looks
  // functions up. Instructions outside every function are neither verified nor reachable: they
  // are left alone (the fuzzer found that decoding them reads out of bounds).
  status decode_all() {
    ops.resize(view_.instr_offset.size());
    // operands and fixed are reserved at their final sizes (fixed: at most one per argument that
    // is not a register), so that growing by doubling never holds up to 3 times either while it
    // moves (docs/security.md, Memory).
    std::size_t num_operands = 0, num_fixed = 2;
    for_each_call([&](const instruction& in) {
      if (in.num_args == 0 || consecutive_registers(in)) return;
      num_operands += static_cast<std::size_t>(in.num_args);
      for (std::int64_t k = 0; k < in.num_args; ++k) num_fixed += in.arg_at(k).kind() != arg_kind::reg;
    });
    if (num_fixed > max_decoded)
      return value_error("virtual_machine: the executable's calls have ", num_fixed,
                         " arguments that are not registers; a VM decodes at most ", max_decoded);
    operands.reserve(num_operands);
    fixed.reserve(fixed.size() + num_fixed);
    fixed.push_back(value());     // ~0: %void
    fixed.push_back(value(vm_));  // ~1: %vm
    for (const func_info& f : view_.funcs) {
      if (f.kind != func_kind::vm) continue;
      for (auto pc = static_cast<std::size_t>(f.start); pc < static_cast<std::size_t>(f.end); ++pc) decode_one(pc);
    }
    make_blocks();
    const_fixed_ = hash_index();  // only decoding needs it
    return decode_error_ ? status(std::move(*decode_error_)) : status();
  }
  // f(instruction) for each Call of a vm function.
  template <class F>
  void for_each_call(F&& f) const {
    for (const func_info& fi : view_.funcs) {
      if (fi.kind != func_kind::vm) continue;
      for (std::int64_t pc = fi.start; pc < fi.end; ++pc)
        if (const instruction in = decode(view_, pc); in.op == opcode::call) f(in);
    }
  }
  void decode_one(std::size_t pc) {
    const instruction in = decode(view_, static_cast<std::int64_t>(pc));
    op& o = ops[pc];
    switch (in.op) {
      case opcode::call: {
        o.a = reg32(in.dst);
        o.b = static_cast<std::int32_t>(in.func_idx);
        o.num_args = static_cast<std::uint32_t>(in.num_args);
        const func_entry& f = funcs[static_cast<std::size_t>(in.func_idx)];
        if (f.kind == func_kind::packed && f.num_bound == 0) o.callee = f.callee;
        o.args_in_place = consecutive_registers(in);
        if (o.args_in_place) {
          o.first = static_cast<std::uint32_t>(in.arg_at(0).value());
        } else if (in.num_args > 0) {
          // make_blocks() turns a packed callee's operands into its block.
          o.operands = operands.data() + operands.size();  // reserved: operands does not move
          for (std::int64_t k = 0; k < in.num_args; ++k) operands.push_back(operand(in.arg_at(k)));
        }
        o.what = call_step(o, instrumented_);
        break;
      }
      case opcode::ret:
        o.what = step::ret;
        o.a = reg32(in.reg);
        break;
      case opcode::goto_:  // verified to stay in the function: fewer than max_decoded instructions
        o.what = step::goto_;
        o.a = static_cast<std::int32_t>(in.offset);
        break;
      case opcode::if_:
        o.what = step::if_;
        o.a = static_cast<std::int32_t>(in.reg);
        o.b = static_cast<std::int32_t>(in.offset);
        break;
    }
  }
  // The argument blocks of packed calls whose arguments are not in place (see op::block).
  void make_blocks() {
    std::size_t values = 0, regs = 0;
    for (const op& o : ops)
      if (is_call(o) && o.callee && !o.args_in_place && o.num_args > 0) {
        values += o.num_args;
        const std::int32_t* x = o.operands;
        for (std::uint32_t k = 0; k < o.num_args; ++k) regs += x[k] >= 0 ? 1 : 0;
      }
    blocks.resize(values);
    block_regs.resize(regs);
    std::size_t v = 0, r = 0;
    for (op& o : ops) {
      if (!is_call(o) || !o.callee || o.args_in_place || o.num_args == 0) continue;
      const std::int32_t* const operand = o.operands;
      o.block = blocks.data() + v;
      o.regs_at = static_cast<std::uint32_t>(r);  // fewer than operands: below max_decoded
      o.num_regs = 0;
      for (std::uint32_t k = 0; k < o.num_args; ++k, ++v) {
        const std::int32_t x = operand[k];
        if (x >= 0) {
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
          if (operand[k] < 0) fixed_mask |= std::uint64_t{1} << k;
        if (const packed_invoke p = o.callee->prepare(o.block, o.num_args, fixed_mask)) o.invoke = p;
      }
    }
  }
  // A Call argument as an operand: a register (verified below max_register_file_size), or ~ its
  // index in fixed (below max_decoded, checked by decode_all).
  std::int32_t operand(arg a) {
    const std::int64_t v = a.value();
    auto add_fixed = [&](value x) {
      fixed.push_back(std::move(x));
      return ~static_cast<std::int32_t>(fixed.size() - 1);
    };
    switch (a.kind()) {
      case arg_kind::reg:
        if (v < begin_special_register) return static_cast<std::int32_t>(v);
        return v == vm_register ? ~std::int32_t{1} : ~std::int32_t{0};
      case arg_kind::imm: return add_fixed(value(v));
      case arg_kind::const_idx: {
        // A constant becomes a value when the first instruction that uses it is decoded, once:
        // constants nothing uses cost the VM nothing, not even an entry in const_fixed_ (keyed by
        // the constant's index, so equal keys are equal constants). Tensor constants view the
        // executable's bytes.
        const auto key = static_cast<std::uint64_t>(v);
        if (const std::int64_t known = const_fixed_.find(key, [](std::int64_t) { return true; }); known >= 0)
          return ~static_cast<std::int32_t>(known);
        result<value> c = try_materialize_constant(view_, view_.constant(static_cast<std::size_t>(v)), const_owner);
        if (!c.ok() && !decode_error_) decode_error_.emplace(std::move(c).error());
        const std::int32_t code = add_fixed(c.ok() ? std::move(*c) : value());
        const_fixed_.insert(key, ~code);
        return code;
      }
      case arg_kind::func_idx: return add_fixed(value::borrow(func_value(static_cast<std::size_t>(v))));
    }
    return ~std::int32_t{0};
  }
  // func_values[i], made for a vm function the first time a Call passes it.
  const value& func_value(std::size_t i) {
    value& v = func_values[i];
    if (v.is_null() && funcs[i].kind == func_kind::vm) {
      auto clo = make_object<closure_object>(closure_object::kind_t::vm, funcs[i].name);
      clo->func_index = static_cast<std::int64_t>(i);
      clo->program = keep_alive;
      v = value(closure(object_ref<closure_object>(std::move(clo))));
    }
    return v;
  }

  error missing_functions(const std::vector<std::int64_t>& missing) const {
    // Each with the first instruction that needs it, so the user can tell where it comes from.
    text t;
    t << "virtual_machine: " << missing.size() << " packed function" << (missing.size() == 1 ? " is" : "s are")
      << " not in the registry:";
    // The first max_listed only, as the verifier keeps its first 1,000 warnings: the message of a
    // file of many missing names would otherwise be as large as the file, and copied.
    constexpr std::size_t max_listed = 1000;
    for (std::size_t k = 0; k < missing.size() && k < max_listed; ++k) {
      const std::int64_t m = missing[k];
      t << "\n  '" << view_.name(static_cast<std::size_t>(m)) << '\'';
      if (const function_facts& u = facts_[static_cast<std::size_t>(m)]; u.first_use_pc >= 0) {
        t << ", needed by ";
        append_location(t, view_, u.first_use_function, u.first_use_pc);
      }
    }
    if (missing.size() > max_listed) t << "\n  ... and " << (missing.size() - max_listed) << " more";
    t << "\nregister them (registry::def) before making the VM";
    return error(error_kind::value, t.view());
  }

  exec_view view_;                          // views of the executable, which the VM keeps
  std::span<const function_facts> facts_;
  vm_context* vm_ = nullptr;
  bool prepare_calls_ = false, instrumented_ = false;
  hash_index const_fixed_;  // while decoding: constant index -> its position in fixed, for those used so far
  std::optional<error> decode_error_;
};

}  // namespace relaxvm::RELAXVM_ABI::detail

#endif  // RELAXVM_VM_DECODED_PROGRAM_HPP
