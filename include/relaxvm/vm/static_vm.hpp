// SPDX-License-Identifier: Apache-2.0
// static_vm: runs a linked program (link.hpp) in memory the caller provides. No registry, no name
// lookup at call time, no heap of its own: frames live in the caller's buffer (sized by
// Linked::memory_bytes, a constexpr), packed functions are called through the linked program's
// constexpr array, and tensor constants view the program's bytes, in read-only memory, without
// copying. Objects the program makes (shapes, tensors, storage records) come from the object
// allocator (runtime/object.hpp), their data from the allocators in `devices`.
//
//   alignas(relaxvm::value) static std::byte memory[linked::memory_bytes];  // when linked::bounded
//   relaxvm::result<relaxvm::static_vm<linked>> vm = relaxvm::static_vm<linked>::create(memory, devices);
//   relaxvm::result<relaxvm::value> r = vm->invoke("main", args);
#ifndef RELAXVM_VM_STATIC_VM_HPP
#define RELAXVM_VM_STATIC_VM_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/diagnostic.hpp"
#include "../base/error.hpp"
#include "../base/fixed_string.hpp"
#include "../bytecode/instruction.hpp"
#include "../runtime/constant.hpp"
#include "../runtime/context.hpp"
#include "../runtime/adapters.hpp"
#include "../runtime/allocator.hpp"
#include "../runtime/tensor.hpp"
#include "../runtime/value.hpp"
#include "link.hpp"
#include "semantics.hpp"
#include "static_compile.hpp"

namespace relaxvm::RELAXVM_ABI {

namespace detail {
/// A packed closure over entry `fi` of a linked program, for function values (f[i] arguments).
template <class Linked, std::size_t Fi>
bool linked_closure_invoke(const closure_object&, const value* args, std::uint32_t nargs, value& ret,
                           std::optional<error>& err) {
  return Linked::callees[Fi](args, nargs, ret, err);
}
}  // namespace detail

// The arena figure link() computes counts blocks as the arena aligns them.
static_assert(detail::storage_alignment == static_cast<std::int64_t>(alloc_alignment));

// Frames are a header followed by value slots, packed back to back in the VM's memory.
static_assert(sizeof(static_frame) % alignof(value) == 0 && alignof(static_frame) <= alignof(value));

/// How static_vm runs a program.
enum class static_dispatch : std::uint8_t {
  /// A loop over the program's bytecode in read-only memory: the smallest code.
  interpret,
  /// Every instruction turned into code at compile time: a Call is a direct call into its table
  /// entry with its arguments' kinds known, If and Goto are jumps between blocks. About as fast as
  /// calling the kernels by hand; the code grows with the program. Needs Linked::bounded (no
  /// recursion, no vm function passed as a value).
  compile,
};


template <class Linked, static_dispatch Dispatch = static_dispatch::interpret>
class static_vm final : public vm_context {
 public:
  static constexpr exec_view view = Linked::program.view();
  static_assert(Dispatch != static_dispatch::compile || Linked::bounded,
                "relaxvm::static_vm: static_dispatch::compile needs a program without recursion and without vm "
                "functions passed as values (Linked::bounded); run it with static_dispatch::interpret");
  /// The memory create() asks for when Linked::bounded: Linked::memory_bytes when interpreting;
  /// compiled functions keep their registers on the C++ stack, so then only a frame header per
  /// function of the deepest chain (at most one per function, as nothing recurses).
  static constexpr std::size_t memory_bytes = [] {
    if constexpr (Dispatch == static_dispatch::interpret) {
      return Linked::memory_bytes;
    } else {
      std::size_t vm_funcs = 0;
      for (const func_info& f : view.funcs) vm_funcs += f.kind == func_kind::vm;
      return vm_funcs * sizeof(static_frame);
    }
  }();

  /// `memory` holds the frames: at least memory_bytes when Linked::bounded, aligned for
  /// value. `devices` must outlive the VM; the last is the host.
  static result<static_vm> create(std::span<std::byte> memory, std::span<const device_allocator> devices) {
    if (devices.empty()) return detail::value_error("static_vm: give it at least one device (the host)");
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (!devices[i].allocator.defined()) return detail::value_error("static_vm: device ", i, " has no allocator");
    if (reinterpret_cast<std::uintptr_t>(memory.data()) % alignof(value) != 0)
      return detail::value_error("static_vm: the memory must be aligned to ", alignof(value), " bytes");
    if (Linked::bounded && memory.size() < memory_bytes)
      return detail::value_error("static_vm: the program needs ", memory_bytes, " bytes of memory, but got ",
                                 memory.size());
    // Made in place (no move), its constants and function values made after it.
    const auto make_values = [](static_vm& vm) { return vm.make_values(); };
    return result<static_vm>(std::in_place, make_values, made_by_create(), memory, devices);
  }

  /// The same, with a buffer whose size the compiler checks: when Linked::bounded, one smaller
  /// than memory_bytes does not compile (relaxvm_buffer_too_small says by how much).
  template <std::size_t N>
  static result<static_vm> create(std::byte (&memory)[N], std::span<const device_allocator> devices) {
    if constexpr (Linked::bounded && N < memory_bytes) {
      constexpr detail::diagnostic d = buffer_check("create", "VM memory", N, memory_bytes, "memory_bytes");
      constexpr int failed = detail::relaxvm_buffer_too_small(detail::spelled<d>());
      (void)failed;
    }
    return create(std::span<std::byte>(memory), devices);
  }

  /// An arena allocator over `buffer` for the program's tensors, its size checked when it
  /// compiles against Linked::arena_bytes: what the program's own allocations take in one
  /// invocation (arena_buffer is aligned as the arena's blocks are, so the figure fits exactly).
  /// Needs Linked::arena_known. Not counted: what kernels allocate from the VM's devices
  /// themselves, results the caller keeps from earlier invocations (the arena reuses its memory
  /// only once nothing allocated from it is alive), and invocations nested through a kernel.
  template <std::size_t N>
  static allocator arena(arena_buffer<N>& buffer) {
    static_assert(Linked::arena_known,
                  "relaxvm: static_vm::arena: the program's tensor memory is not known at compile time "
                  "(Linked::arena_known: a size that is not constant, a backward jump, recursion, a function "
                  "passed as a value, or a builtin whose allocation depends on values); size the buffer yourself "
                  "and use relaxvm::allocator::arena");
    if constexpr (N < Linked::arena_bytes) {
      constexpr detail::diagnostic d = buffer_check("arena", "arena", N, Linked::arena_bytes, "arena_bytes");
      constexpr int failed = detail::relaxvm_buffer_too_small(detail::spelled<d>());
      (void)failed;
    }
    return allocator::arena(buffer.span());
  }

#if !RELAXVM_HEAP
  /// Firmware mode: set_object_memory(buffer), its size checked when it compiles against
  /// Linked::object_bytes (the program's constants and one invocation's objects) plus `Caller`,
  /// the bytes of the objects the caller makes itself (its inputs: tensor_view_object_bytes; its
  /// arena: arena_object_bytes; and room for what its kernels make). Needs Linked::objects_known.
  /// Not counted: objects kernels make (temporaries too), results the caller keeps from earlier
  /// invocations, and invocations nested through a kernel.
  template <std::size_t Caller = 0, std::size_t N>
  static void object_memory(object_buffer<N>& buffer) {
    static_assert(Linked::objects_known,
                  "relaxvm: static_vm::object_memory: the program's object memory is not known at compile time "
                  "(Linked::objects_known: a backward jump, recursion, a function passed as a value, or a call "
                  "that may return a new object of a size the program does not fix); size the buffer yourself "
                  "and use relaxvm::set_object_memory");
    if constexpr (N < Linked::object_bytes + Caller) {
      constexpr detail::diagnostic d =
          buffer_check("object_memory", "object", N, Linked::object_bytes + Caller, "object_bytes + Caller");
      constexpr int failed = detail::relaxvm_buffer_too_small(detail::spelled<d>());
      (void)failed;
    }
    set_object_memory(buffer.span());
  }
#endif

  /// create() makes the VM inside its result, and a firmware image that calls it through the
  /// result it keeps (`rv::result<static_vm<L>> vm = create(...); vm->invoke(...)`) links no move:
  /// moving it out (`create(...).value()`) works too. Do not move a VM while one of its calls runs.
  static_vm(static_vm&&) noexcept = default;
  static_vm& operator=(static_vm&&) = delete;
  ~static_vm() = default;

  /// Calls function `name` (found in the program's table, a loop over a constexpr array).
  result<value> invoke(std::string_view name, std::span<const value> args) {
    const std::int64_t fi = view.find(name);
    if (fi < 0) return detail::value_error("static_vm: the program has no function '", name, "'");
    return invoke(fi, args);
  }
  result<value> invoke(std::int64_t fi, std::span<const value> args) {
    if (fi < 0 || static_cast<std::size_t>(fi) >= Linked::num_funcs)
      return detail::value_error("static_vm: function index ", fi, " is out of range");
    if (view.funcs[static_cast<std::size_t>(fi)].kind == func_kind::packed)
      return call_packed(Linked::callees[static_cast<std::size_t>(fi)], args);  // never null: linked
    return run_entry(fi, args);
  }

  /// Calls function Name with `args` (each made a value), checked when it compiles: the program
  /// must have a function of that name, and it must take as many arguments as are given;
  /// otherwise the compilation fails in relaxvm_typed_invoke_failed, whose template arguments
  /// say why. vm.invoke<"main">(x).
  template <fixed_string Name, class... Args>
  result<value> invoke(Args&&... args) {
    constexpr detail::diagnostic check = typed_call_check(Name.view(), sizeof...(Args));
    if constexpr (!check.ok) {
      constexpr int failed = detail::relaxvm_typed_invoke_failed(detail::spelled<check>());
      (void)failed;
      return value();
    } else {
      // Borrows and scalars own nothing: kept where nothing destroys them (nothing to check).
      constexpr bool owns_nothing = ((lends<Args> || std::is_arithmetic_v<std::remove_cvref_t<Args>>) && ...);
      std::conditional_t<owns_nothing, lent<sizeof...(Args)>, std::array<value, sizeof...(Args)>> a{
          {lend(std::forward<Args>(args))...}};
      return invoke_values<Name>(std::span<const value, sizeof...(Args)>(a.data(), sizeof...(Args)));
    }
  }

  /// invoke<Name>(args...) with the arguments as values: the same checks when it compiles. Only
  /// the function called is linked: a vm function's call reaches no table entry but those its
  /// code calls (invoke(name, args) links every packed function of the program, as any may be
  /// named at run time).
  template <fixed_string Name, std::size_t N>
  result<value> invoke_values(std::span<const value, N> args) {
    constexpr detail::diagnostic check = typed_call_check(Name.view(), N);
    if constexpr (!check.ok) {
      constexpr int failed = detail::relaxvm_typed_invoke_failed(detail::spelled<check>());
      (void)failed;
      return value();
    } else {
      constexpr std::int64_t fi = view.find(Name.view());
      const std::span<const value> s(args);
      if constexpr (view.funcs[static_cast<std::size_t>(fi)].kind == func_kind::packed) {
        return call_packed(Linked::callees[static_cast<std::size_t>(fi)], s);  // that entry alone
      } else {  // the argument count is checked already when the function's is known
        constexpr bool checked = view.funcs[static_cast<std::size_t>(fi)].num_args == static_cast<std::int64_t>(N);
        return run_entry<!checked>(fi, s);
      }
    }
  }

  /// Whether invoke<name>(args...) with `given` arguments matches the program: ok, or what the
  /// compiler says when it does not.
  static constexpr detail::diagnostic typed_call_check(std::string_view name, std::size_t given) {
    detail::diagnostic d;
    detail::text t = detail::diagnostic_start("invoke_error");
    const std::int64_t fi = view.find(name);
    if (fi < 0) {
      t << "invoke<" << name << ">: the program has no function " << name;
      d.fail(t);
      return d;
    }
    const func_info& f = view.funcs[static_cast<std::size_t>(fi)];
    if (f.kind == func_kind::packed) {  // its table entry knows what it takes (linked: it is there)
      using table_type = typename Linked::table_type;
      const entry_info e = table_type::info(static_cast<std::size_t>(table_type::find(name)));
      if (e.raw || (e.variadic ? given >= e.fixed : given == e.fixed)) return d;
      t << "invoke<" << name << ">: " << name;
      detail::append_entry_arity(t, e, given);
      d.fail(t);
      return d;
    }
    if (f.num_args == unknown_num_args || f.num_args == static_cast<std::int64_t>(given)) return d;
    t << "invoke<" << name << ">: function " << name << " takes " << f.num_args
      << (f.num_args == 1 ? " argument" : " arguments");
    append_param_names(t, view, f.params_begin, f.params_count);
    t << ", but the call passes " << given;
    d.fail(t);
    return d;
  }

  /// The high-water mark of frame memory, in bytes (size the buffer of a recursive program by it).
  std::size_t peak_memory() const { return peak_; }

  // ---- vm_context ----
  void print(std::string_view text) override {
    if (print_ != nullptr) print_(text);
  }
  std::span<const device_allocator> devices() const override { return devices_; }

  /// Where vm.builtin.print writes (default: nowhere; a firmware build passes its UART writer).
  void set_print(void (*sink)(std::string_view)) { print_ = sink; }

  /// Bytes of C++ stack that re-entrant invocations (a closure through vm.builtin.invoke_closure,
  /// a kernel calling back) may use beyond where the outermost one began; past it the call is
  /// an error, before the stack overflows. Default: 256 KiB with a heap, 2 KiB in firmware mode;
  /// set it from the stack your firmware gives the VM's thread.
  void set_max_native_stack(std::size_t bytes) { max_native_stack_ = bytes; }

  // What only create() has: the constructor is public for result's in-place construction alone.
  class made_by_create {
    friend static_vm;
    made_by_create() = default;
  };
  static_vm(made_by_create, std::span<std::byte> memory, std::span<const device_allocator> devices)
      : devices_(devices) {
    memory_ = memory;
    vm_closures_ = Linked::vm_closures;
  }

 private:
  static constexpr detail::diagnostic buffer_check(std::string_view fn, std::string_view what, std::size_t have,
                                                  std::size_t need, std::string_view figure) {
    detail::diagnostic d;
    detail::text t = detail::diagnostic_start("buffer_error");
    t << "static_vm::" << fn << ": the " << what << " buffer has " << have << " bytes, but the program needs " << need
      << " (linked::" << figure << ')';
    d.fail(t);
    return d;
  }

  // The constants running code reads, and the functions the program passes as values, as
  // values: in firmware mode an error when the object memory has no room for them. Each constant
  // is made by the code for its kind alone, straight into its slot (null: create() runs this
  // once); a constant that only specialized call sites use (Linked::constants_read) is not made.
  status make_values() {
    for (std::size_t i = 0; i < Linked::num_constants; ++i) {
      if (!Linked::constants_read[i]) continue;
      RELAXVM_TRY(make_constant(consts_[i], view.constants[i]));
    }
    if constexpr (any_used_as_value()) return make_funcs(std::make_index_sequence<Linked::num_funcs>());
    else return {};
  }
  // Whether a constant of kind K is made.
  static constexpr bool makes(const_kind k) {
    for (std::size_t i = 0; i < Linked::num_constants; ++i)
      if (Linked::constants_read[i] && view.constant(i).kind == k) return true;
    return false;
  }
  // The constant of word w by the code of its kind (K, then the kinds after it), decoding and
  // making, into `out`; only the kinds the program makes are compiled.
  template <const_kind K, const_kind... Rest>
  static status make_constant(value& out, const_word w) {
    if constexpr (makes(K)) {
      if (static_cast<const_kind>(w & 0xFF) == K)
        return try_materialize_constant_into<K>(out, view, view.checked_constant(K, w), nullptr);
    }
    if constexpr (sizeof...(Rest) > 0) return make_constant<Rest...>(out, w);
    else return {};
  }
  static status make_constant(value& out, const_word w) {
    return make_constant<const_kind::int64, const_kind::float64, const_kind::boolean, const_kind::dtype,
                         const_kind::device, const_kind::shape, const_kind::string, const_kind::tensor>(out, w);
  }

  static constexpr bool any_used_as_value() {
    for (std::size_t i = 0; i < Linked::num_funcs; ++i)
      if (Linked::facts.funcs[i].used_as_value) return true;
    return false;
  }
  static constexpr bool any_constant_read() {
    for (std::size_t i = 0; i < Linked::num_constants; ++i)
      if (Linked::constants_read[i]) return true;
    return false;
  }

  // The program is a constexpr object of static storage: its address identifies it, and a
  // shared_ptr with no control block names it without allocating.
  static const void* program_tag() { return &Linked::program; }

  // Closures only for the functions the program passes as values: nothing else reads funcs_.
  template <std::size_t... I>
  status make_funcs(std::index_sequence<I...>) {
    status s;
    ((s.ok() ? (void)(s = make_func<I>()) : (void)0), ...);
    return s;
  }
  template <std::size_t I>
  status make_func() {
    if constexpr (Linked::facts.funcs[I].used_as_value) {
      constexpr bool is_vm = view.funcs[I].kind == func_kind::vm;
      RELAXVM_TRY_ASSIGN(string name, string::try_make(view.name(I)));
      RELAXVM_TRY_ASSIGN(object_ref<closure_object> c,
                         try_make_object<closure_object>(is_vm ? closure_object::kind_t::vm : closure_object::kind_t::packed,
                                                         std::move(name)));
      if constexpr (is_vm) {
        c->func_index = static_cast<std::int64_t>(I);
        c->program = std::shared_ptr<const void>(std::shared_ptr<const void>(), program_tag());
      } else {
        c->invoke = &detail::linked_closure_invoke<Linked, I>;
      }
      funcs_[I] = value(closure(std::move(c)));
    }
    return {};
  }

  // invoke<Name>'s arguments when none owns anything: never destroyed.
  template <std::size_t N>
  union lent {
    std::array<value, N> values;
    ~lent() {}
    const value* data() const { return values.data(); }
  };
  // An argument of invoke<Name> as the program sees it: handles and values borrowed (the
  // caller's outlive the call, and a result that is one of them is copied as it leaves),
  // anything else made a value.
  template <class A>
  static constexpr bool lends = std::is_same_v<std::remove_cvref_t<A>, value> || object_handle<std::remove_cvref_t<A>>;
  template <class A>
  static value lend(A&& a) {
    if constexpr (lends<A>) return value::borrow(a);
    else return value(std::forward<A>(a));
  }

  // `v` as a result, made in place (value's move is always inlined; result's converting
  // constructor need not be): `v` is then known to be left null, with no drop to check after.
  static result<value> made(value&& v) {
    return result<value>(std::in_place, [](value&) { return status(); }, std::move(v));
  }

  // ---- vm_context: closures over the program's vm functions (invoke_closure) ----
  // A program that passes no vm function as a value has no closure over one of its own:
  // vm_closures_ is false, and invoke_closure says so without calling this.
  result<value> invoke_vm_closure(const closure& c, std::span<const value> args) override {
    if constexpr (Linked::vm_closures) {
      if (c.get()->program.get() != program_tag()) return foreign_closure(c.name());
      const auto run = [&](std::span<const value> a) { return run_entry(c.get()->func_index, a); };
      if (c.bound().empty()) return run(args);
      return call_joined(c, args, run);
    } else {
      (void)c;
      (void)args;
      return made(value());
    }
  }

  // Register slots of a frame of vm function fi: none when compiled (its registers are locals).
  static std::size_t frame_slots(std::int64_t fi) {
    if constexpr (Dispatch == static_dispatch::interpret) return frame_slots_[static_cast<std::size_t>(fi)];
    else return 0;
  }
  // Bytes of a frame of vm function fi: its header and its register slots.
  static std::size_t frame_bytes(std::int64_t fi) { return sizeof(static_frame) + frame_slots(fi) * sizeof(value); }
  // Why push_frame(fi, ...) found no room.
  error frame_error(std::int64_t fi) const {
    return detail::runtime_error("static_vm: calling '", view.name(static_cast<std::size_t>(fi)), "' needs ",
                                 frame_bytes(fi), " bytes of VM memory, but only ", memory_.size() - used_, " of its ",
                                 memory_.size(), " bytes are left");
  }

  // Calls packed function `callee` from C++.
  result<value> call_packed(table_invoke callee, std::span<const value> args) {
    const running_scope running(this);
    value ret;
    std::optional<error> err;
    if (!callee(args.data(), static_cast<std::uint32_t>(args.size()), ret, err)) return detail::take_error(err);
    return ret;
  }

  // Runs vm function fi from C++; CheckArity false when the caller checked the count already.
  template <bool CheckArity = true>
  result<value> run_entry(std::int64_t fi, std::span<const value> args) {
    if constexpr (CheckArity) {
      const func_info& f = view.funcs[static_cast<std::size_t>(fi)];
      if (static_cast<std::int64_t>(args.size()) != f.num_args)
        return detail::arity_error(view, view.name(static_cast<std::size_t>(fi)), f.num_args, f.params_begin,
                                   f.params_count, static_cast<std::int64_t>(args.size()));
    }
    if constexpr (Linked::caller_facts.count > 0) {
      if (fi == facts_function_) RELAXVM_TRY(check_facts(args));
    }
    static_frame* const base = top_;
    if (base == nullptr) {
      stack_base_ = detail::native_stack_position();
    } else if (const std::size_t used = detail::native_stack_used(stack_base_); used > max_native_stack_) {
      return detail::native_stack_error(view.name(static_cast<std::size_t>(fi)), used, max_native_stack_,
                                        "static_vm::set_max_native_stack");
    }
    const running_scope running(this);
    if constexpr (Dispatch == static_dispatch::compile) {
      if (!push_frame(fi, nullptr, 0, -1)) return frame_error(fi);  // the registers are the function's own
      value out;
      if (!compiler::entries[static_cast<std::size_t>(fi)](*this, base, args.data(), out)) return take_failure();
      if (base == nullptr && out.kind() == value_kind::context)
        return detail::context_returned_error(view.name(static_cast<std::size_t>(fi)));
      return out;
    } else {
      if (!push_frame(fi, args.data(), args.size(), -1)) return frame_error(fi);
      return run(base);
    }
  }

  // The function the program was linked with argument facts for (Linked::caller_facts), whose
  // call sites take them as settled: each invocation's arguments are checked against them here.
  static constexpr std::int64_t facts_function_ = view.find(Linked::caller_facts.function);
  static status check_facts(std::span<const value> args) {
    constexpr const auto& facts = Linked::caller_facts;
    for (std::size_t i = 0; i < facts.count && i < args.size(); ++i) {
      const std::span<const std::int64_t> dims = facts.dims_of(i);
      bool same = args[i].kind() == value_kind::tensor;
      if (same) {
        const DLTensor& dl = static_cast<const tensor_object*>(args[i].raw_object())->dl;
        same = dtype(dl.dtype) == facts.types[i] && static_cast<std::size_t>(dl.ndim) == dims.size();
        for (std::size_t d = 0; same && d < dims.size(); ++d) same = dl.shape[d] == dims[d];
      }
      if (!same)
        return detail::value_error("static_vm: argument ", i, " of '", facts.function, "' is not a tensor of ",
                                   facts.types[i], ' ', detail::dims_text{dims},
                                   ", which the program was linked for (linked::caller_facts)");
    }
    return {};
  }

  // Pushes a frame for vm function fi, its first registers borrowing `args`; false when the
  // memory has no room for it (frame_error says so).
  bool push_frame(std::int64_t fi, const value* args, std::size_t nargs, std::int32_t return_pc) {
    const std::size_t bytes = frame_bytes(fi);
    if (used_ + bytes > memory_.size()) return false;
    auto* fr = ::new (memory_.data() + used_) static_frame{top_, static_cast<std::int32_t>(fi), return_pc};
    value* const regs = fr->regs();
    for (std::size_t i = 0, n = frame_slots(fi); i < n; ++i) ::new (regs + i) value();
    for (std::size_t i = 0; i < nargs; ++i) value::borrow_into(regs[i], args[i]);  // null slots: nothing to drop
    used_ += bytes;
    peak_ = used_ > peak_ ? used_ : peak_;
    top_ = fr;
    return true;
  }

  void pop_frame() {
    static_frame* fr = top_;
    value* const regs = fr->regs();
    // Reset, not destroyed: what ~value would drop (reset() is one out-of-line copy in firmware
    // mode); the slots' memory is then reused as it is.
    for (value* v = regs + frame_slots(fr->func_index); v != regs;) (--v)->reset();
    used_ = static_cast<std::size_t>(reinterpret_cast<std::byte*>(fr) - memory_.data());  // frames are a stack
    top_ = fr->caller;
  }

  // Records in `e` where it happened (the instruction at pc) and unwinds the frames of the
  // invocation that began above `base`.
  void unwind(error& e, std::int64_t pc, static_frame* base) {
    struct frames_of_invocation {
      static_vm& vm;
      static_frame* base;
      bool more() const { return vm.top_ != base; }
      std::int64_t func_index() const { return vm.top_->func_index; }
      std::int64_t return_pc() const { return vm.top_->return_pc; }
      void pop() { vm.pop_frame(); }
    };
    detail::unwind(e, view, pc, frames_of_invocation{*this, base});
  }
  // The instruction at pc failed with the error in `err` (none: a packed function that failed
  // without saying why): the invocation's result.
  RELAXVM_NOINLINE result<value> fail(std::optional<error>& err, std::int32_t pc, static_frame* base) {
    if (!err) err.emplace(detail::unreported_failure());
    unwind(*err, pc, base);
    return *err;
  }

  // Moves `from` into register `to` (another value), dropping what `to` held through reset(), one
  // out-of-line copy in firmware mode, where a move assignment would drop it inline.
  RELAXVM_ALWAYS_INLINE static void store(value& to, value& from) {
    to.reset();
    ::new (&to) value(std::move(from));
  }

  // Words of the verified instruction stream as the loop reads them, 32 bits at a time: the low
  // half holds every register, index, count and offset (and, when immediates_fit_, immediate);
  // the high half of a register is 0 but for the special ones (%void, %vm).
  static constexpr std::int32_t low(std::int64_t word) { return static_cast<std::int32_t>(word); }
  static constexpr bool special(std::int64_t reg) { return static_cast<std::uint64_t>(reg) >> 32 != 0; }
  static const std::int64_t* words(std::int32_t pc) {
    return view.instr_data.data() + low(view.instr_offset[static_cast<std::size_t>(pc)]);
  }
  static constexpr bool immediates_fit_ = [] {
    for (std::size_t pc = 0; pc < Linked::num_instructions; ++pc) {
      const instruction in = decode(view, static_cast<std::int64_t>(pc));
      for (std::int64_t k = 0; in.op == opcode::call && k < in.num_args; ++k)
        if (in.arg_at(k).kind() == arg_kind::imm && in.arg_at(k).value() != low(in.arg_at(k).value())) return false;
    }
    return true;
  }();

  // Runs until the frame above `base` returns. Instruction numbers and argument counts are 32-bit
  // here (64-bit arithmetic costs twice the code on a 32-bit core).
  static_assert(Linked::num_instructions < std::size_t{1} << 31,
                "relaxvm: static_vm runs programs of fewer than 2^31 instructions");
  result<value> run(static_frame* base) {
    std::int32_t pc = low(view.funcs[static_cast<std::size_t>(top_->func_index)].start);
    for (;;) {
      const std::int64_t* const w = words(pc);
      value* const regs = top_->regs();
      switch (static_cast<opcode>(low(w[0]))) {
        case opcode::call: {  // [call, dst, func_idx, num_args, args...]
          const std::int32_t fi = low(w[2]), n = low(w[3]);
          value* const argv =
              regs + low(view.funcs[static_cast<std::size_t>(top_->func_index)].register_file_size) + 1;
          value& ret = argv[-1];
          // The argument scratch owns no reference (null, scalars, borrows): written over.
          for (std::int32_t k = 0; k < n; ++k)
            detail::load_arg<Linked::arg_kinds, immediates_fit_>(argv[k], arg::from_data(w[4 + k]), regs, this,
                                                                 consts_.data(), funcs_.data());
          const table_invoke callee = Linked::sites_differ ? Linked::sites[static_cast<std::size_t>(pc)]
                                                           : Linked::callees[static_cast<std::size_t>(fi)];
          if (!Linked::calls_vm || callee) {  // a packed function (all are, when no vm function is called)
            std::optional<error> err;
            if (!callee(argv, static_cast<std::uint32_t>(n), ret, err)) return fail(err, pc, base);
            if (!special(w[1])) store(regs[low(w[1])], ret);
            else ret.reset();
            ++pc;
          } else {
            if (!push_frame(fi, argv, static_cast<std::size_t>(n), pc)) {
              std::optional<error> err(frame_error(fi));
              return fail(err, pc, base);
            }
            pc = low(view.funcs[static_cast<std::size_t>(fi)].start);
          }
          break;
        }
        case opcode::ret: {  // [ret, reg]
          value out;
          if (!special(w[1])) out = detail::take_return(regs[low(w[1])]);
          const std::int32_t fi = top_->func_index, return_pc = top_->return_pc;
          pop_frame();
          if (!Linked::calls_vm || top_ == base) {
            if (base == nullptr && out.kind() == value_kind::context)
              return detail::context_returned_error(view.name(static_cast<std::size_t>(fi)));
            return made(std::move(out));
          }
          // The result goes where the caller's Call says.
          if (const std::int64_t dst = words(return_pc)[1]; !special(dst)) store(top_->regs()[low(dst)], out);
          pc = return_pc + 1;
          break;
        }
        // (A program without Goto or If has no code for them.)
        case opcode::goto_:  // [goto, offset]
          if constexpr (Linked::uses_goto) pc += low(w[1]);
          break;
        case opcode::if_:  // [if, reg, false offset]
          if constexpr (Linked::uses_if) {
            const value& c = regs[low(w[1])];
            if (!detail::valid_condition(c)) {
              std::optional<error> err(detail::if_condition_error(low(w[1]), c));
              return fail(err, pc, base);
            }
            pc += low(detail::if_offset(c, w[2]));
          }
          break;
      }
    }
  }

  // ---- static_dispatch::compile (static_compile.hpp) ------------------------------------
  using compiler = detail::static_compiler<static_vm, Linked>;
  friend compiler;

  error take_failure() {
    return detail::take_error(failure_);
  }
  // The instruction at pc failed with the error in failure_: add where, unwind the frames.
  RELAXVM_NOINLINE std::int64_t failure(std::int64_t pc, static_frame* base) {
    error e = take_failure();
    unwind(e, pc, base);
    failure_.emplace(std::move(e));
    return compiler::failed;
  }

  // Register slots each interpreted frame has in the VM's memory (frame_slots); an array of its
  // own, so that the program's facts stay out of the binary, of the narrowest unsigned type that
  // holds them (a frame of 2^32 registers could not be placed anyway).
  static constexpr std::int64_t most_frame_slots_ = [] {
    std::int64_t most = 0;
    for (std::size_t f = 0; f < Linked::num_funcs; ++f)
      most = Linked::facts.funcs[f].frame_slots > most ? Linked::facts.funcs[f].frame_slots : most;
    return most;
  }();
  static_assert(most_frame_slots_ <= 0xffffffffLL,
                "relaxvm: static_vm runs functions of fewer than 2^32 register slots");
  using slot_count = std::conditional_t<most_frame_slots_ <= 0xff, std::uint8_t,
                                        std::conditional_t<most_frame_slots_ <= 0xffff, std::uint16_t, std::uint32_t>>;
  static constexpr std::array<slot_count, Linked::num_funcs> frame_slots_ = [] {
    std::array<slot_count, Linked::num_funcs> s{};
    for (std::size_t f = 0; f < Linked::num_funcs; ++f)
      if (view.funcs[f].kind == func_kind::vm) s[f] = static_cast<slot_count>(Linked::facts.funcs[f].frame_slots);
    return s;
  }();

  std::span<const device_allocator> devices_;
  std::array<value, Linked::num_constants> consts_{};
  // Functions passed as values (make_funcs): none when the program passes none.
  static constexpr std::size_t num_func_values_ = [] {
    for (std::size_t i = 0; i < Linked::num_funcs; ++i)
      if (Linked::facts.funcs[i].used_as_value) return Linked::num_funcs;
    return std::size_t{0};
  }();
  std::array<value, num_func_values_> funcs_{};
  static_frame* top_ = nullptr;
  std::size_t peak_ = 0;  // frames, in memory_ (vm_context's), up to used_
  std::uintptr_t stack_base_ = 0;  // native_stack_position() where the outermost invocation began
  std::size_t max_native_stack_ = RELAXVM_HEAP ? std::size_t{256} << 10 : std::size_t{2} << 10;
  void (*print_)(std::string_view) = nullptr;
  // static_dispatch::compile: the error of a failed call, until returned (no room for one when
  // interpreting).
  struct no_failure {};
  [[no_unique_address]] std::conditional_t<Dispatch == static_dispatch::compile, std::optional<error>, no_failure>
      failure_;
};

}  // namespace relaxvm

#endif  // RELAXVM_VM_STATIC_VM_HPP
