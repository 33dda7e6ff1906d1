// SPDX-License-Identifier: Apache-2.0
// The machine inside virtual_machine (virtual_machine.hpp): the decoded program, the frames and
// the loop, and the members of virtual_machine and vm_function that reach them. Header-only,
// virtual_machine.hpp includes this file; in separate compilation only the compiled library does
// (src/core.cpp), so a user's translation unit neither parses nor compiles the machine.
#ifndef RELAXVM_VM_VM_IMPL_HPP
#define RELAXVM_VM_VM_IMPL_HPP

#include "virtual_machine.hpp"
#include <array>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../base/flat_map.hpp"
#include "../base/hash_index.hpp"
#include "../base/std_parts.hpp"
#include "../base/text_builder.hpp"
#include "../bytecode/instruction.hpp"
#include "../bytecode/layout.hpp"
#include "../bytecode/opcode.hpp"
#include "../io/executable.hpp"
#include "../runtime/constant.hpp"
#include "../runtime/context.hpp"
#include "../runtime/adapters.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/tuple.hpp"
#include "../runtime/value.hpp"
#include "semantics.hpp"
#include "decoded_program.hpp"
#include "options.hpp"
#include "value_stack.hpp"

namespace relaxvm::RELAXVM_ABI {

namespace detail {

// The VM, its functions and the machine inside are class templates (of a parameter nobody sets)
// so that a translation unit which includes relaxvm.hpp but makes no VM does not compile their
// bodies: about 0.6 s of g++ -O0 time per translation unit. Use the names below.
template <class Unused>
class basic_vm_impl final : public vm_context {
 public:
  using program = decoded_program<Unused>;
  using func_entry = typename program::func_entry;
  using step = typename program::step;
  using op = typename program::op;
  using block_reg = typename program::block_reg;

  static result<std::unique_ptr<basic_vm_impl>> create(const executable& exe, const basic_registry& reg, vm_options opts);

  // ---- vm_context ----
  result<value> invoke_vm_closure(const closure& c, std::span<const value> args) override {
    const closure_object& o = *c.get();
    if (o.program != prog_.keep_alive)
      return value_error("invoke_closure: closure '", o.name.view(), "' belongs to another executable than this VM's");
    if (o.func_index < 0 || o.func_index >= static_cast<std::int64_t>(prog_.funcs.size()) ||
        prog_.funcs[static_cast<std::size_t>(o.func_index)].kind != func_kind::vm)
      return value_error("invoke_closure: closure '", o.name.view(), "' names no vm function of this executable");
    return invoke_vm(o.func_index, args, o.bound);
  }

  void print(std::string_view text) override {
    if (opts_.print) {
      opts_.print(text);
    } else {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
  }
  std::span<const device_allocator> devices() const override { return devices_; }
  // The loop's next budget check sees what a builtin charged.
  void charge(std::int64_t units) override { budget_left_ -= units; }
  // Kept views leave their storages' lists before the slots go (see drop_kept); handles learn
  // that the VM is gone.
  ~basic_vm_impl();
  /// What vm_function handles hold: this VM while it lives, null once it is destroyed.
  const std::shared_ptr<basic_vm_impl*>& handle() const { return handle_; }
  void release_kept() noexcept;

  // ---- entry points ----
  std::int64_t find(std::string_view name) const { return prog_.find(name); }

  result<value> invoke_index(std::int64_t fi, std::span<const value> args);

  const func_entry& entry(std::int64_t fi) const { return prog_.funcs[static_cast<std::size_t>(fi)]; }
  /// The executable's record of function `f` (its parameter names).
  const func_info& info(const func_entry& f) const { return view_.funcs[static_cast<std::size_t>(&f - prog_.funcs.data())]; }
  std::string_view param_name(const func_entry& f, std::int64_t i) const {
    return view_.str(view_.param_names[static_cast<std::size_t>(info(f).params_begin + i)]);
  }
  const executable& exec() const { return exe_; }

  // ---- the stateful API's calls (its state is basic_virtual_machine's) ----
  using saved_function = vm_saved_function;

  result<value> invoke_saved(std::shared_ptr<const saved_function> f, std::span<const value> args);

  /// A copy of `v` whose tensors (also inside tuples) live on the first device, as the reference's
  /// set_input and save_function do.
  result<value> to_first_device(const value& v);
  const vm_options& options() const { return opts_; }
  void set_instruction_budget(std::int64_t n) { opts_.max_instructions = n; }
  status set_memory_budget(std::int64_t bytes) {
    if (!meter_ || bytes <= 0)
      return value_error("set_memory_budget: ", !meter_ ? "this VM was made without a memory budget (vm_options::max_memory 0), so "
                                                         "nothing counts its memory; give it one when it is made"
                                                       : "the budget must be positive");
    opts_.max_memory = meter_->limit = bytes;
    return {};
  }
  instrument_fn instrument() const { return instrument_ ? *instrument_ : instrument_fn(); }
  void set_instrument(instrument_fn fn) {
    instrument_ = fn ? std::make_shared<const instrument_fn>(std::move(fn)) : nullptr;
    prog_.set_instrumented(static_cast<bool>(instrument_));
  }
  std::size_t depth() const { return frames_.size(); }

 private:
  // Seven words: the registers, then the return slot of the frame's packed calls (ret()), then
  // the argument scratch of its calls (args()).
  struct frame {
    const func_entry* fn;
    value* regs;
    std::int64_t return_pc;   // the caller's Call instruction, or -1 for an entry frame
    std::int64_t caller_dst;  // where the caller wants the result (program::no_register: nowhere)
    typename value_stack<Unused>::mark stack_mark;  // where its slots begin on stack_
    bool instrumented;        // the hook saw "before" for this frame and expects "after"
    value* ret() const { return regs + fn->register_file_size; }
    value* args() const { return regs + fn->register_file_size + 1; }
  };
  std::int64_t index_of(const frame& fr) const { return fr.fn - prog_.funcs.data(); }

  // A tuple whose tensors all are on the first device is returned as it is. Each tuple object is
  // visited once (`done`): a tuple holding the same tuple twice, 30 times over, is 30 tuples, not
  // 2^30. Deeper tuples than max_depth would take the C++ stack with them (a program can nest
  // values a million deep); no real input nests so.
  /// The tuples to_first_device has copied, each with its copy.
  struct moved_objects {
    std::vector<std::pair<const object*, value>> items;
    hash_index index;
    static std::uint64_t hash(const object* o) { return hash_mix(hash_seed, reinterpret_cast<std::uintptr_t>(o)); }
    const value* find(const object* o) const {
      const std::int64_t i = index.find(hash(o), [&](std::int64_t k) { return items[static_cast<std::size_t>(k)].first == o; });
      return i < 0 ? nullptr : &items[static_cast<std::size_t>(i)].second;
    }
    void add(const object* o, value v) {
      index.insert(hash(o), static_cast<std::int64_t>(items.size()));
      items.emplace_back(o, std::move(v));
    }
  };
  result<value> to_first_device(const value& v, int depth, moved_objects& done) {
    constexpr int max_depth = 256;
    const device_allocator& first = devices_.front();
    if (v.kind() == value_kind::tensor) {
      const tensor t = v.as<tensor>();
      if (t.device() == first.device) return v;
      RELAXVM_TRY_ASSIGN(tensor moved, copy_to(t, first.device, first.allocator));
      return value(moved);
    }
    if (v.kind() != value_kind::tuple || v.get_object() == nullptr) return v;
    if (const value* seen = done.find(v.get_object())) return *seen;
    if (depth >= max_depth)
      return value_error("an argument has tuples nested more than ", max_depth, " deep, too deep to copy to a device");
    const tuple t = v.as<tuple>();
    std::vector<value> fields;
    fields.reserve(static_cast<std::size_t>(t.size()));
    bool changed = false;
    for (const value& f : t) {
      RELAXVM_TRY_ASSIGN(value moved, to_first_device(f, depth + 1, done));
      changed = changed || moved.get_object() != f.get_object();
      fields.push_back(std::move(moved));
    }
    value out = changed ? value(tuple(fields, t.tag())) : v;
    done.add(v.get_object(), out);
    return out;
  }

  basic_vm_impl(const executable& exe, vm_options opts)
      : exe_(exe), view_(exe_.view()), opts_(std::move(opts)), meter_(make_meter(opts_)), devices_(metered(opts_, meter_)) {
    joins_on_heap_ = true;  // a packed closure's captured values are joined on the heap
  }
  // A VM made with a memory budget counts what its devices and its invocations take in a meter
  // (vm_options::max_memory); one made without has none and pays nothing for it.
  static std::shared_ptr<memory_meter> make_meter(const vm_options& o) {
    if (o.max_memory == 0) return nullptr;
    auto m = std::make_shared<memory_meter>();
    m->limit = o.max_memory;
    return m;
  }
  static std::vector<device_allocator> metered(const vm_options& o, const std::shared_ptr<memory_meter>& m) {
    std::vector<device_allocator> out = o.devices;
    if (m)
      for (device_allocator& d : out) d.allocator = allocator(make_object<metered_allocator>(d.allocator.get(), m));
    return out;
  }
  // While an invocation of a metered VM runs, the objects made on its thread count against its
  // budget; an object past it zeroes the instruction budget, so the loop stops at its next
  // instruction and budget_error reports the memory budget instead.
  class meter_scope {
   public:
    meter_scope(memory_meter* m, std::int64_t* budget_left) noexcept
        : m_(m), saved_(object_meter), saved_stop_(m->stop) {
      m_->stop = budget_left;
      m_->object_base = thread_object_bytes;
      m_->over_request = 0;
      object_meter = m_;
    }
    meter_scope(const meter_scope&) = delete;
    meter_scope& operator=(const meter_scope&) = delete;
    ~meter_scope() {
      object_meter = saved_;
      m_->stop = saved_stop_;
    }

   private:
    memory_meter* m_;
    memory_meter* saved_;
    std::int64_t* saved_stop_;
  };

  // ---- frames ----
  status push_frame(std::int64_t fi, std::span<const value> args, std::span<const value> bound,
                    std::int64_t return_pc, std::int64_t caller_dst) {
    const func_entry& f = prog_.funcs[static_cast<std::size_t>(fi)];
    if (static_cast<std::int64_t>(frames_.size()) >= opts_.max_call_depth)
      return runtime_error("call depth limit of ", opts_.max_call_depth, " frames reached calling function '", f.name,
                           "'; raise vm_options::max_call_depth if the recursion is intended");
    const std::int64_t given = static_cast<std::int64_t>(args.size() + bound.size());
    if (given != f.num_args)
      return detail::arity_error(view_, f.name, f.num_args, info(f).params_begin, info(f).params_count, given);
    // Setting up and clearing the registers is work the budget pays for (see max_instructions).
    if (const std::int64_t cost = f.frame_slots >> 3; cost > 0 && (budget_left_ -= cost) < 0) return budget_error();
    if (used_slots_ + f.frame_slots > opts_.max_stack_slots)
      return runtime_error("the VM's stack would need more than ", opts_.max_stack_slots,
                           " register slots calling function '", f.name, "' (", f.frame_slots,
                           " slots); raise vm_options::max_stack_slots if the program is trusted");
    typename value_stack<Unused>::mark at;
    value* slots = stack_.push(static_cast<std::size_t>(f.frame_slots), at);
    if (slots == nullptr)
      return runtime_error("out of memory allocating ", f.frame_slots, " register slots for function '", f.name, "'");
    used_slots_ += f.frame_slots;
    std::size_t k = 0;
    for (const value& a : args) slots[k++] = value::borrow(a);
    for (const value& a : bound) slots[k++] = value::borrow(a);
    frames_.push_back(frame{&f, slots, return_pc, caller_dst, at, false});
    return {};
  }

  void pop_frame() {
    const frame& fr = frames_.back();
    // The registers and the return slot may own references; the argument scratch after them
    // holds only borrowed values (see load).
    const std::int64_t owning = fr.fn->register_file_size + 1;
    for (std::int64_t i = 0; i < owning; ++i) fr.regs[i].reset();
    for (std::int64_t i = owning; i < fr.fn->frame_slots; ++i) value::forget(fr.regs[i]);
    used_slots_ -= fr.fn->frame_slots;
    stack_.pop(fr.stack_mark);
    frames_.pop_back();
  }

  result<value> call_packed(const closure_object& fn, std::span<const value> args, std::span<const value> bound) {
    const running_scope scope(this);
    slot_ = nullptr;  // called from C++: no instruction keeps anything
    value ret;
    if (!invoke_packed(fn, args, bound, ret, err_)) return take_error();
    return ret;
  }

  result<value> invoke_vm(std::int64_t fi, std::span<const value> args, std::span<const value> bound) {
    // A metered VM's outermost invocation counts the objects it makes; the others pay one test.
    if (RELAXVM_UNLIKELY(meter_ != nullptr) && frames_.empty()) {
      const meter_scope metering(meter_.get(), &budget_left_);
      return run_invocation(fi, args, bound);
    }
    return run_invocation(fi, args, bound);
  }
  result<value> run_invocation(std::int64_t fi, std::span<const value> args, std::span<const value> bound) {
    const std::size_t base = frames_.size();
    if (base == 0) {  // a new invocation (re-entrant ones share its budget, memory and C++ stack)
      budget_left_ = opts_.max_instructions > 0 ? opts_.max_instructions : INT64_MAX;
      stack_base_ = native_stack_position();
    } else if (const std::size_t used = native_stack_used(stack_base_); used > opts_.max_native_stack) {
      return native_stack_error(prog_.funcs[static_cast<std::size_t>(fi)].name, used, opts_.max_native_stack,
                                "vm_options::max_native_stack");
    }
    RELAXVM_TRY(push_frame(fi, args, bound, -1, program::no_register));
    const running_scope scope(this);
    result<value> r = run(base);
    if (base == 0 && r.ok() && r->kind() == value_kind::context)
      return context_returned_error(prog_.funcs[static_cast<std::size_t>(fi)].name);
    return r;
  }

  RELAXVM_NOINLINE error budget_error() {
    budget_left_ = 0;  // stays spent until the next invocation
    if (meter_ && meter_->over_request != 0)
      return memory_budget_error(meter_->over_request, "for an object", meter_->over_total, meter_->limit);
    return runtime_error("instruction budget exceeded: this invocation ran ", opts_.max_instructions,
                         " instructions (vm_options::max_instructions; a call also costs one per 8 register slots it "
                         "sets up); the program may loop forever");
  }

  error take_error() { return detail::take_error(err_); }

  // Adds where it happened (the failing instruction, then each caller) and clears the frames of
  // this invocation (detail::unwind).
  RELAXVM_NOINLINE error fail(error e, std::int64_t pc, std::size_t base) {
    struct frames_of_invocation {
      basic_vm_impl& vm;
      std::size_t base;
      bool more() const { return vm.frames_.size() > base; }
      std::int64_t func_index() const { return vm.index_of(vm.frames_.back()); }
      std::int64_t return_pc() const { return vm.frames_.back().return_pc; }
      void pop() { vm.pop_frame(); }
    };
    detail::unwind(e, view_, pc, frames_of_invocation{*this, base});
    return e;
  }

  // Calls the instrument hook; false when it threw (the error is in err_). A hook removed since the
  // "before" call gets no "after" call.
  bool instrument(const call_event& ev, instrument_action& action) {
    const std::shared_ptr<const instrument_fn> hook = instrument_;
    if (!hook) return true;
#if RELAXVM_USE_EXCEPTIONS
    try {
      action = (*hook)(ev);
    } catch (const error& e) {
      err_.emplace(e);
      return false;
    } catch (const std::exception& e) {
      err_.emplace(runtime_error("instrument hook: ", e.what()));
      return false;
    } catch (...) {
      err_.emplace(runtime_error("instrument hook: an unknown exception was thrown"));
      return false;
    }
#else
    action = (*hook)(ev);
#endif
    return true;
  }

  call_event event(const frame& fr, std::int64_t pc, std::int64_t callee, bool before, std::span<const value> args,
                   const value* result) const {
    const func_entry& c = prog_.funcs[static_cast<std::size_t>(callee)];
    return call_event{c.name, callee, c.kind == func_kind::vm, fr.fn->name, pc - fr.fn->start, before, args, result};
  }

  // Runs until the frame at index `base` returns.
  result<value> run(std::size_t base) {
    const op* const code = prog_.ops.data();
    // Held here, not reloaded from prog_ after every call (a callee may write any memory).
    const block_reg* const pairs = prog_.block_regs.data();
    // `regs`, `argv` (the argument scratch of this frame's calls) and `scratch` (the return slot
    // of its packed calls) point into the value stack, whose segments never move. frames_ moves
    // when it grows (a VM call, or a packed function or hook that re-enters the VM), so the frame
    // itself is looked up where it is needed, never kept across a call.
    value* regs = frames_.back().regs;
    value* argv = frames_.back().args();
    value* scratch = frames_.back().ret();
    std::int64_t pc = frames_.back().fn->start;
    for (;;) {
      if (RELAXVM_UNLIKELY(--budget_left_ < 0)) return fail(budget_error(), pc, base);
      const op& o = code[pc];
      // The commonest instruction first, outside the switch: a predictable branch is cheaper
      // than the switch's indirect jump.
      if (RELAXVM_LIKELY(o.what == step::packed_call_in_place)) {
        if (RELAXVM_UNLIKELY((!packed_call<true, true>(o, regs, argv, scratch, pairs)))) return fail(take_error(), pc, base);
        ++pc;
        continue;
      }
      switch (o.what) {
        case step::packed_call:
          if (RELAXVM_UNLIKELY((!packed_call<false, false>(o, regs, argv, scratch, pairs)))) return fail(take_error(), pc, base);
          ++pc;
          break;
        case step::packed_call_args:
          if (RELAXVM_UNLIKELY((!packed_call<true, false>(o, regs, argv, scratch, pairs)))) return fail(take_error(), pc, base);
          ++pc;
          break;
        case step::packed_call_result:
          if (RELAXVM_UNLIKELY((!packed_call<false, true>(o, regs, argv, scratch, pairs)))) return fail(take_error(), pc, base);
          ++pc;
          break;
        case step::packed_call_in_place:
          if (RELAXVM_UNLIKELY((!packed_call<true, true>(o, regs, argv, scratch, pairs)))) return fail(take_error(), pc, base);
          ++pc;
          break;
        case step::call: {
          // VM calls, closures with captured values, and calls the instrument hook watches.
          load_args(o, regs, argv);
          const std::span<const value> args(argv, o.num_args);
          const std::int64_t dst = o.a, fi = o.b;
          const func_entry& callee = prog_.funcs[static_cast<std::size_t>(fi)];
          if (RELAXVM_UNLIKELY(static_cast<bool>(instrument_))) {
            instrument_action action = instrument_action::proceed;
            if (!instrument(event(frames_.back(), pc, fi, true, args, nullptr), action))
              return fail(take_error(), pc, base);
            if (action == instrument_action::skip) {
              if (dst >= 0) regs[dst].reset();
              ++pc;
              break;
            }
            if (callee.kind == func_kind::packed) {
              slot_ = slot_of(o);
              const bool ok = call_with_bound(callee, args, *scratch);
              slot_ = nullptr;
              if (!ok) return fail(take_error(), pc, base);
              if (!instrument(event(frames_.back(), pc, fi, false, args, scratch), action))
                return fail(take_error(), pc, base);
              store(regs, dst, *scratch);
              ++pc;
              break;
            }
          } else if (callee.kind == func_kind::packed) {
            slot_ = slot_of(o);
            const bool ok = call_with_bound(callee, args, *scratch);
            slot_ = nullptr;
            if (RELAXVM_UNLIKELY(!ok)) return fail(take_error(), pc, base);
            store(regs, dst, *scratch);
            ++pc;
            break;
          }
          if (status s = push_frame(fi, args, {}, pc, dst); RELAXVM_UNLIKELY(!s.ok()))
            return fail(std::move(s).error(), pc, base);
          frame& fr = frames_.back();
          fr.instrumented = static_cast<bool>(instrument_);
          regs = fr.regs;
          argv = fr.args();
          scratch = fr.ret();
          pc = callee.start;
          break;
        }
        case step::ret: {
          value result;
          if (o.a >= 0) {
            value& src = regs[o.a];
            result = detail::take_return(src);
          }
          const frame& done = frames_.back();
          const bool instrumented = done.instrumented;
          const std::int64_t dst = done.caller_dst, return_pc = done.return_pc, fi = index_of(done);
          pop_frame();
          if (frames_.size() == base) return result;
          regs = frames_.back().regs;
          argv = frames_.back().args();
          scratch = frames_.back().ret();
          pc = return_pc;
          if (instrumented) {
            // The caller's argument scratch still holds the arguments of this call.
            instrument_action action = instrument_action::proceed;
            const std::span<const value> args(argv, code[pc].num_args);
            if (!instrument(event(frames_.back(), pc, fi, false, args, &result), action))
              return fail(take_error(), pc, base);
          }
          if (dst >= 0) regs[dst] = std::move(result);
          ++pc;
          break;
        }
        case step::kill:
          regs[o.a].reset();
          ++pc;
          break;
        case step::goto_: pc += o.a; break;
        case step::if_: {
          const value& c = regs[o.a];
          if (RELAXVM_UNLIKELY(!detail::valid_condition(c))) return fail(if_condition_error(o.a, c), pc, base);
          pc += detail::if_offset(c, o.b);
          break;
        }
        default: RELAXVM_UNREACHABLE();  // every op has one of the steps above
      }
    }
  }

  // What instruction_slot() gives while `o` runs.
  kept_slot* slot_of(const op& o) const { return opts_.reuse_allocations ? &o.kept : nullptr; }

  // One of the fast paths of a Call (see step).
  template <bool ArgsInPlace, bool ResultInPlace>
  RELAXVM_ALWAYS_INLINE bool packed_call(const op& o, value* regs, value* argv, value* scratch, const block_reg* pairs) {
    const value* args = argv;
    if constexpr (ArgsInPlace) {
      args = regs + o.first;
    } else if (RELAXVM_LIKELY(o.num_args > 0 && !o.busy)) {
      value* const block = o.block;
      for (const block_reg *r = pairs + o.regs_at, *end = r + o.num_regs; r != end; ++r)
        value::borrow_into(block[r->pos], regs[r->reg]);
      value& ret = ResultInPlace ? regs[o.a] : *scratch;
      slot_ = slot_of(o);
      o.busy = true;
      const bool ok = o.invoke(*o.callee, block, o.num_args, ret, err_);
      o.busy = false;
      slot_ = nullptr;  // a callee's slot is its own, only during its call
      if (RELAXVM_UNLIKELY(!ok)) return false;
      if constexpr (!ResultInPlace) store(regs, o.a, ret);
      return true;
    } else if (RELAXVM_UNLIKELY(o.num_args > 0)) {
      load_args(o, regs, argv);  // the block is busy: a re-entrant run
    }
    value& ret = ResultInPlace ? regs[o.a] : *scratch;
    // A re-entrant run of an instruction that is busy keeps nothing (its slot is the outer run's).
    slot_ = o.busy ? nullptr : slot_of(o);
    const bool ok = o.callee->invoke(*o.callee, args, o.num_args, ret, err_);
    slot_ = nullptr;
    if (RELAXVM_UNLIKELY(!ok)) return false;
    if constexpr (!ResultInPlace) store(regs, o.a, ret);
    return true;
  }

  // The arguments of Call `o`, borrowed into the argument scratch `argv`.
  void load_args(const op& o, const value* regs, value* argv) const {
    if (o.args_in_place) {
      for (std::uint32_t k = 0; k < o.num_args; ++k) value::borrow_into(argv[k], regs[o.first + k]);
    } else if (o.num_args == 0) {
    } else if (o.callee == nullptr) {
      for (std::uint32_t k = 0; k < o.num_args; ++k) load(argv[k], o.operands[k], regs);
    } else {
      // The block's fixed arguments, then its registers (the block's own register slots may be
      // an outer run's, or stale: they are overwritten, never read).
      for (std::uint32_t k = 0; k < o.num_args; ++k) value::borrow_into(argv[k], o.block[k]);
      for (const typename program::block_reg *r = prog_.block_regs.data() + o.regs_at, *end = r + o.num_regs; r != end; ++r)
        value::borrow_into(argv[r->pos], regs[r->reg]);
    }
  }
  // Call argument `operand` (see op::operands), borrowed: no reference counting. Argument
  // scratch slots hold only such borrowed values (or null), so nothing is dropped.
  RELAXVM_ALWAYS_INLINE void load(value& slot, std::int32_t operand, const value* regs) const {
    value::borrow_into(slot, operand >= 0 ? regs[operand] : prog_.fixed[static_cast<std::size_t>(~operand)]);
  }
  // A packed call's result, from the return slot into register `dst` (or dropped for %void).
  RELAXVM_ALWAYS_INLINE static void store(value* regs, std::int64_t dst, value& ret) {
    if (dst >= 0) regs[dst] = std::move(ret);
    else ret.reset();
  }

  bool call_with_bound(const func_entry& callee, std::span<const value> args, value& ret) {
    return invoke_packed(*callee.callee, args, callee.bound(), ret, err_);
  }

  executable exe_;
  exec_view view_;
  vm_options opts_;
  const std::shared_ptr<memory_meter> meter_;    // with vm_options::max_memory, else null
  const std::vector<device_allocator> devices_;  // checked in create(); never changes (metered with meter_)
  program prog_;
  std::vector<frame> frames_;
  value_stack<Unused> stack_;
  std::int64_t used_slots_ = 0;  // register slots of the live frames
  std::optional<error> err_;
  std::int64_t budget_left_ = INT64_MAX;  // instructions this invocation may still run
  std::uintptr_t stack_base_ = 0;         // native_stack_position() where the outermost invocation began
  // Shared, so that a hook replacing or removing itself while it runs stays alive until it returns.
  std::shared_ptr<const instrument_fn> instrument_;
  // One cell per VM, made with it: a handle reads the VM through it, so a call costs one more
  // load, and copying a handle one reference count.
  const std::shared_ptr<basic_vm_impl*> handle_ = std::make_shared<basic_vm_impl*>(this);
};

// The entry points a user's code calls, defined outside the class: in separate compilation the
// library's explicit instantiation holds them (and everything they reach, the loop too), so a
// translation unit that makes and calls a VM compiles none of it.
template <class Unused>
result<std::unique_ptr<basic_vm_impl<Unused>>> basic_vm_impl<Unused>::create(const executable& exe,
                                                                         const basic_registry& reg, vm_options opts) {
#if RELAXVM_HEAP
    if (opts.devices.empty()) opts.devices.push_back({device::cpu(), allocator::pooled()});
#else
    if (opts.devices.empty()) opts.devices.push_back({device::cpu(), allocator::naive()});
#endif
    for (std::size_t i = 0; i < opts.devices.size(); ++i) {
      const device_allocator& d = opts.devices[i];
      if (d.device.device_type != kDLCPU)
        return value_error("virtual_machine: device ", i, " is ", d.device,
                           "; relaxvm runs on host (cpu) devices only (any device id)");
      if (!d.allocator.defined()) return value_error("virtual_machine: device ", i, " has no allocator");
    }
    if (opts.max_memory < 0) return value_error("virtual_machine: max_memory is ", opts.max_memory, "; use 0 for no limit");
    std::unique_ptr<basic_vm_impl> vm(new basic_vm_impl(exe, std::move(opts)));
    RELAXVM_TRY(vm->prog_.make(vm->exe_, reg, vm.get(), vm->opts_.prepare_calls, false));
    return vm;
  }

template <class Unused>
basic_vm_impl<Unused>::~basic_vm_impl() {
  *handle_ = nullptr;
  release_kept();
}

template <class Unused>
void basic_vm_impl<Unused>::release_kept() noexcept {
  prog_.release_kept();
}

template <class Unused>
result<value> basic_vm_impl<Unused>::invoke_index(std::int64_t fi, std::span<const value> args) {
  const func_entry& f = prog_.funcs[static_cast<std::size_t>(fi)];
  if (f.kind == func_kind::packed) return call_packed(*f.callee, args, f.bound());
  return invoke_vm(fi, args, {});
}

template <class Unused>
result<value> basic_vm_impl<Unused>::invoke_saved(std::shared_ptr<const saved_function> f, std::span<const value> args) {
  const func_entry& e = prog_.funcs[static_cast<std::size_t>(f->index)];
  result<value> r =
      e.kind == func_kind::packed ? call_packed(*e.callee, args, f->args) : invoke_vm(f->index, args, f->args);
  if (!r.ok() || f->include_return) return r;
  return value();
}

template <class Unused>
result<value> basic_vm_impl<Unused>::to_first_device(const value& v) {
  moved_objects done;
  return to_first_device(v, 0, done);
}

RELAXVM_EXTERN_TEMPLATE(class basic_vm_impl<void>)

}  // namespace detail

// ---- virtual_machine and vm_function: the members that reach the machine ----

template <class Unused>
auto basic_vm_function<Unused>::try_call(std::span<const value> args) const -> result<value> {
    impl* const vm = *vm_;
    if (RELAXVM_UNLIKELY(vm == nullptr)) return destroyed();
    return saved_ ? vm->invoke_saved(saved_, args) : vm->invoke_index(index_, args);
  }

template <class Unused>
auto basic_vm_function<Unused>::name() const -> std::string_view { return try_vm().value()->entry(index_).name; }

template <class Unused>
basic_virtual_machine<Unused>::basic_virtual_machine(const executable& exe, const basic_registry& reg, vm_options opts)
    : impl_(impl::create(exe, reg, std::move(opts)).value()) {}

template <class Unused>
auto basic_virtual_machine<Unused>::create(const executable& exe, const basic_registry& reg, vm_options opts) -> result<basic_virtual_machine> {
    RELAXVM_TRY_ASSIGN(auto made, impl::create(exe, reg, std::move(opts)));
    return basic_virtual_machine(std::move(made));
  }

template <class Unused>
auto basic_virtual_machine<Unused>::try_invoke(std::string_view name, std::span<const value> args) -> result<value> {

    RELAXVM_TRY_ASSIGN(impl* vm, try_vm());
    // The VM itself, not a handle (whose copy would cost a reference count per call).
    if (const auto* saved = saved_.find(name)) return vm->invoke_saved(*saved, args);
    RELAXVM_TRY_ASSIGN(std::int64_t i, find(*vm, name));
    return vm->invoke_index(i, args);
  }

template <class Unused>
auto basic_virtual_machine<Unused>::try_function(std::string_view name) const -> result<basic_vm_function<Unused>> {
    RELAXVM_TRY_ASSIGN(impl* vm, try_vm());
    if (const auto* saved = saved_.find(name)) return vm_function(vm->handle(), (*saved)->index, *saved);
    RELAXVM_TRY_ASSIGN(std::int64_t i, find(*vm, name));
    return vm_function(vm->handle(), i);
  }

template <class Unused>
auto basic_virtual_machine<Unused>::try_invoke_closure(const closure& c, std::span<const value> args) -> result<value> {
    RELAXVM_TRY_ASSIGN(impl* vm, try_vm());
    return vm->invoke_closure(c, args);
  }

template <class Unused>
auto basic_virtual_machine<Unused>::try_function_arity(std::string_view name) const -> result<std::int64_t> {
    RELAXVM_TRY_ASSIGN(vm_function f, try_function(name));
    const auto& e = vm().entry(f.index());
    if (e.kind != func_kind::vm) return detail::value_error("function_arity: '", name, "' is a packed function");
    return e.num_args - saved_count(f);
  }

template <class Unused>
auto basic_virtual_machine<Unused>::try_param_names(std::string_view name) const -> result<std::vector<std::string_view>> {
    RELAXVM_TRY_ASSIGN(vm_function f, try_function(name));
    const auto& e = vm().entry(f.index());
    std::vector<std::string_view> out;
    for (std::int64_t i = 0; i < vm().info(e).params_count - saved_count(f); ++i) out.push_back(vm().param_name(e, i));
    return out;
  }

template <class Unused>
auto basic_virtual_machine<Unused>::try_set_input(std::string_view func, std::span<const value> args) -> status {
    RELAXVM_TRY_ASSIGN(impl* vm, try_vm());
    const std::int64_t i = vm->find(func);
    if (i < 0) return detail::value_error("set_input: Unknown function: ", func);
    const auto& e = vm->entry(i);
    if (e.kind == func_kind::vm && static_cast<std::int64_t>(args.size()) != e.num_args)
      return detail::value_error("set_input: The number of provided parameters doesn't match the number of arguments for ",
                                 func, ": ", args.size(), " given, ", e.num_args, " expected");
    std::vector<value> stored;
    stored.reserve(args.size());
    for (const value& a : args) {
      RELAXVM_TRY_ASSIGN(value moved, vm->to_first_device(a));
      stored.push_back(std::move(moved));
    }
    inputs_[func] = std::make_shared<const std::vector<value>>(std::move(stored));
    return {};
  }

template <class Unused>
auto basic_virtual_machine<Unused>::try_invoke_stateful(std::string_view func) -> status {
    RELAXVM_TRY_ASSIGN(impl* vm, try_vm());
    const std::int64_t i = vm->find(func);
    if (i < 0) return detail::value_error("invoke_stateful: Unknown function: ", func);
    const auto* in = inputs_.find(func);
    if (!in && !(vm->entry(i).kind == func_kind::vm && vm->entry(i).num_args == 0))
      return detail::value_error("invoke_stateful: No inputs set for stateful call of ", func, "; use `set_input` first.");
    std::shared_ptr<const std::vector<value>> args;  // held for the call (see inputs_)
    if (in) args = *in;
    RELAXVM_TRY_ASSIGN(value out, vm->invoke_index(i, args ? std::span<const value>(*args) : std::span<const value>()));
    outputs_[func] = std::move(out);
    return {};
  }

template <class Unused>
auto basic_virtual_machine<Unused>::try_save_function(std::string_view func, std::string_view save_name, bool include_return,
                           std::span<const value> args) -> status {
    RELAXVM_TRY_ASSIGN(impl* vm, try_vm());
    const std::int64_t i = vm->find(func);
    if (i < 0) return detail::value_error("save_function: Unknown function: ", func);
    typename impl::saved_function f{i, {}, include_return};
    for (const value& a : args) {
      RELAXVM_TRY_ASSIGN(value moved, vm->to_first_device(a));
      f.args.push_back(std::move(moved));
    }
    // A registered closure's own captured values come after the saved ones, as in a plain call.
    for (const value& b : vm->entry(i).bound()) f.args.push_back(b);
    saved_.insert_or_assign(save_name, std::make_shared<const typename impl::saved_function>(std::move(f)));
    return {};
  }

template <class Unused>
auto basic_virtual_machine<Unused>::set_instrument(instrument_fn fn) -> void { vm().set_instrument(std::move(fn)); }

template <class Unused>
auto basic_virtual_machine<Unused>::instrument() const -> instrument_fn { return vm().instrument(); }

template <class Unused>
auto basic_virtual_machine<Unused>::set_instruction_budget(std::int64_t n) -> void { vm().set_instruction_budget(n); }

template <class Unused>
auto basic_virtual_machine<Unused>::try_set_memory_budget(std::int64_t bytes) -> status {
    RELAXVM_TRY_ASSIGN(impl* vm, try_vm());
    return vm->set_memory_budget(bytes);
  }

template <class Unused>
auto basic_virtual_machine<Unused>::release_kept() -> void { vm().release_kept(); }

template <class Unused>
auto basic_virtual_machine<Unused>::exec() const -> const executable& { return vm().exec(); }

template <class Unused>
auto basic_virtual_machine<Unused>::options() const -> const vm_options& { return vm().options(); }

template <class Unused>
auto basic_virtual_machine<Unused>::context() -> vm_context& { return vm(); }

template <class Unused>
auto basic_virtual_machine<Unused>::find(const impl& vm, std::string_view name) -> result<std::int64_t> {
    const std::int64_t i = vm.find(name);
    if (i < 0) return detail::value_error("virtual_machine: the executable has no function '", name, "'");
    return i;
  }

template <class Unused>
basic_virtual_machine<Unused>::basic_virtual_machine(basic_virtual_machine&&) noexcept = default;
template <class Unused>
auto basic_virtual_machine<Unused>::operator=(basic_virtual_machine&&) noexcept -> basic_virtual_machine& = default;
template <class Unused>
basic_virtual_machine<Unused>::~basic_virtual_machine() = default;

}  // namespace relaxvm

#endif  // RELAXVM_VM_VM_IMPL_HPP
