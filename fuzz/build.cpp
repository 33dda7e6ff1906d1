// SPDX-License-Identifier: Apache-2.0
// Fuzz target: turns its input into a *valid* program through exec_builder, then runs it. The
// load and run targets feed bytes to the loader, which almost never makes a program that
// verifies; this one reaches the interpreter and the builtins with programs that do: several
// functions calling each other (recursion, mutual recursion, closures calling themselves), loops
// through backward gotos, values nested deep in loops (tuples in tuples, closures capturing
// closures), huge register files, %vm where it does not belong, constants of every kind.
//
// Each program runs under an instruction budget, a call-depth limit, a stack-slot limit and an
// arena allocator; every VM function is invoked twice (the VM must stay usable after an error).
// The executable is saved and loaded back: the loaded one must save to the same bytes and run
// too. Values returned by the first VM go, as arguments, to the second one, sometimes after the
// first is gone. Every outcome must be a value or an error: a sanitizer report or a failed check
// is a finding.
//
// The input format is in build_input.hpp; every byte string decodes to a program.
//
// -DRELAXVM_FUZZ_AVOID_KNOWN stops generating the patterns of known bugs that are not fixed yet,
// so that fuzzing can go past them; =<mask> (enum known_bug) avoids some only. Each pattern is
// marked where it is generated. The default build generates everything.
// In the environment, RELAXVM_FUZZ_STATS=1 prints at exit how many inputs built a program and how
// the invocations ended; RELAXVM_FUZZ_DUMP=1 prints each program (to see what a finding runs).
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <relaxvm.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "build_input.hpp"

namespace rv = relaxvm;
using rv::builtins::arith_op;
using rv::builtins::make_code;
using relaxvm_fuzz::flag;
using relaxvm_fuzz::stmt;

namespace {

/// Bugs whose patterns RELAXVM_FUZZ_AVOID_KNOWN can stop generating. `all` is 1, the value of a
/// bare -DRELAXVM_FUZZ_AVOID_KNOWN. All of these were fixed in issue 14; the switches stay so that
/// the next open bug's pattern can be added and fuzzing can go past it meanwhile.
enum known_bug : unsigned {
  all = 1,
  deep_values = 2,        ///< values nested ~1e6 deep overflowed the C++ stack when dropped, printed or shared
  closure_recursion = 4,  ///< recursion through invoke_closure overflowed the C++ stack
  escaped_context = 8,    ///< %vm kept in a tuple, closure or register outlived its VM
  huge_frames = 16,       ///< a call's cost ignored its register file: huge ones defeated the budget
  zero_byte_free = 32,    ///< the arena freed zero-byte blocks
  shared_print = 64,      ///< regressions/build/print-shared-tuple-exponential
  system_heap = 128,      ///< regressions/build/alloc-shape-heap-without-vm-oom
};
#ifdef RELAXVM_FUZZ_AVOID_KNOWN
constexpr unsigned avoid_mask = RELAXVM_FUZZ_AVOID_KNOWN;
#else
constexpr unsigned avoid_mask = 0;
#endif
constexpr bool avoid(known_bug b) { return (avoid_mask & (all | b)) != 0; }

constexpr int max_statements = 160;  // per program, statements inside blocks included
constexpr int max_depth = 3;         // if-blocks and loops inside each other
constexpr std::size_t max_pool = 12;  // values kept as arguments for later invocations

// ---- input ---------------------------------------------------------------------------------------

class byte_source {
 public:
  explicit byte_source(std::span<const std::uint8_t> in) : in_(in) {}

  std::uint8_t u8() {
    if (in_.empty()) return 0;
    const std::uint8_t b = in_[0];
    in_ = in_.subspan(1);
    return b;
  }
  std::uint16_t u16() {
    const std::uint16_t lo = u8();
    return static_cast<std::uint16_t>(lo | (u8() << 8));
  }
  std::int64_t i64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(u8()) << (8 * i);
    return static_cast<std::int64_t>(v);
  }
  /// 0 to n-1 (n at most 256).
  std::size_t below(std::size_t n) { return n == 0 ? 0 : u8() % n; }
  /// True for one byte value in n: exhausted input (zeros) takes the common path.
  bool one_in(unsigned n) { return u8() % n == n - 1; }
  /// Mostly small numbers, sometimes the edges where off-by-one and overflow bugs live.
  std::int64_t interesting() {
    static constexpr std::int64_t edges[] = {0, 1, -1, 2, 3, 8, 255, 256, 4096, 65536,
                                             std::numeric_limits<std::int32_t>::max(),
                                             std::numeric_limits<std::int32_t>::min(),
                                             rv::arg_value_max, rv::arg_value_min,
                                             std::numeric_limits<std::int64_t>::max(),
                                             std::numeric_limits<std::int64_t>::min()};
    const std::uint8_t b = u8();
    if (b < 160) return b % 10;
    if (b < 240) return edges[b % std::size(edges)];
    return i64();
  }

 private:
  std::span<const std::uint8_t> in_;
};

// ---- program generation --------------------------------------------------------------------------

/// What a register probably holds, so that builtins get plausible arguments. It is a guess: a loop,
/// a skipped block or a jump can leave something else there, which is fine (an error is an outcome).
enum class kind : std::uint8_t { any, integer, boolean, tuple, closure, shape, tensor, heap, storage, string, dtype, context };

class program_generator {
 public:
  program_generator(byte_source& in, rv::exec_builder& b, const std::vector<std::string_view>& builtins)
      : in_(in), b_(b), builtins_(builtins) {}

  void generate() {
    const std::size_t n = 1 + in_.below(relaxvm_fuzz::max_functions);
    for (std::size_t i = 0; i < n; ++i) {
      function_plan p;
      p.name = "f" + std::to_string(i);
      p.arity = static_cast<std::int64_t>(in_.below(5));
      p.registers = register_hint(in_.u8());
      p.param_names = in_.one_in(4);
      funcs_.push_back(std::move(p));
    }
    for (std::size_t i = 0; i < n; ++i) function(i);
  }

 private:
  struct function_plan {
    std::string name;
    std::int64_t arity = 0;
    std::int64_t registers = 0;  // reserve_registers(), 0 for none
    bool param_names = false;
  };
  struct reg_info {
    std::int64_t id;
    kind k;
    std::int64_t need;  // for a closure: the arguments a call must pass, or -1 when unknown
  };
  struct pending_jump {
    std::int64_t at;  // the instruction, within the function
    bool is_if;
    std::uint8_t target;
  };

  // Register files: mostly what formalization computes, sometimes a few more, sometimes huge (the
  // budget must still bound the time of a call, and the stack limit its memory).
  std::int64_t register_hint(std::uint8_t h) {
    std::int64_t n = 0;
    if (h < 192) n = 0;
    else if (h < 224) n = 1 + h % 32;
    else if (h < 250) n = std::int64_t{1} << (6 + (h - 224) % 11);  // 64 to 65536
    else if (h < 254) n = 65536 + in_.u16();
    else n = rv::max_register_file_size;
    if (avoid(huge_frames) && n > 4096) n = 4096;
    return n;
  }

  void function(std::size_t fi) {
    const function_plan& p = funcs_[fi];
    current_ = fi;
    regs_.clear();
    jumps_.clear();
    next_reg_ = p.arity;
    std::vector<std::string> names;
    std::vector<std::string_view> views;
    if (p.param_names) {
      for (std::int64_t i = 0; i < p.arity; ++i) names.push_back("p" + std::to_string(i));
      for (const std::string& s : names) views.push_back(s);
    }
    auto scope = b_.function(p.name, p.arity, std::span<const std::string_view>(views));
    if (p.registers > 0) b_.reserve_registers(p.registers);
    for (std::int64_t i = 0; i < p.arity; ++i) regs_.push_back({i, kind::any, -1});
    const std::size_t count = in_.below(48);
    for (std::size_t i = 0; i < count && statements_left_ > 0; ++i) statement(0);
    b_.emit_ret(ret_operand());
    // Never reached by falling through; it gives every If emitted above a false target at least
    // two instructions ahead (see patch_jumps).
    b_.emit_ret(b_.void_arg());
    patch_jumps();
    scope.end();
  }

  // ---- registers and operands ----

  const reg_info* find_reg(kind want) {
    std::vector<const reg_info*> match;
    for (const reg_info& r : regs_)
      if (r.k == want || (want == kind::tensor && r.k == kind::heap)) match.push_back(&r);
    if (!match.empty()) return match[in_.below(match.size())];
    return nullptr;
  }
  const reg_info* any_reg() { return regs_.empty() ? nullptr : &regs_[in_.u8() % regs_.size()]; }

  /// A register that holds `want` if one does, else any register, else null.
  const reg_info* reg_for(kind want) {
    const reg_info* r = want == kind::any || in_.one_in(8) ? nullptr : find_reg(want);
    return r ? r : any_reg();
  }

  /// A destination: a new register, or sometimes one already written (so loops can grow a value
  /// in place: t = make_tuple(t, x)).
  rv::arg def(kind k, std::int64_t need = -1) {
    const std::uint8_t sel = in_.u8();
    if (sel >= 248) return b_.void_arg();
    if (sel >= 192 && !regs_.empty()) {
      reg_info& r = regs_[sel % regs_.size()];
      r.k = k;
      r.need = need;
      return b_.r(r.id);
    }
    std::int64_t id = next_reg_;
    // Sparse numbers matter without formalization, where they size the register file.
    if (sel == 191) id += in_.u8();
    next_reg_ = id + 1;
    regs_.push_back({id, k, need});
    return b_.r(id);
  }

  /// A call argument: mostly a register that plausibly holds `want`, sometimes a constant, an
  /// immediate, %void or %vm (which builtins that store values must refuse).
  rv::arg operand(kind want = kind::any) {
    const std::uint8_t sel = in_.u8();
    if (sel >= 252) return sel & 1 ? b_.vm_state() : b_.void_arg();
    if (sel >= 216 || regs_.empty()) return b_.c(constant(want));
    if (sel >= 200) return b_.imm(immediate());
    return b_.r(reg_for(want)->id);
  }
  /// Where a builtin takes its context: %vm, or rarely a register (an escaped context, passed in
  /// as an argument by the harness, lands there).
  rv::arg ctx_operand() {
    if (!in_.one_in(16) || regs_.empty()) return b_.vm_state();
    const reg_info* r = find_reg(kind::context);
    return b_.r((r ? r : any_reg())->id);
  }
  /// Small integers in immediates mostly, since they are indices, sizes and codes.
  rv::arg index_operand(std::int64_t range) {
    const std::uint8_t sel = in_.u8();
    if (sel < 224) return b_.imm(static_cast<std::int64_t>(sel) % range);
    if (sel < 240) return b_.imm(immediate());
    return operand(kind::integer);
  }
  std::int64_t immediate() {
    std::int64_t v = in_.interesting();
    if (v > rv::arg_value_max || v < rv::arg_value_min) v = rv::arg_value_max;
    return v;
  }
  /// A condition for If (which cannot take %vm or %void): a register that probably holds a bool
  /// or an int, else a new one from read_if_cond.
  std::int64_t cond_reg() {
    const reg_info* r = find_reg(kind::boolean);
    if (!r) r = find_reg(kind::integer);
    if (!r || in_.one_in(8)) {
      const rv::arg a = operand(kind::integer);
      const std::int64_t id = next_reg_++;
      b_.emit_call("vm.builtin.read_if_cond", {a}, b_.r(id));
      regs_.push_back({id, kind::boolean, -1});
      return id;
    }
    return r->id;
  }
  rv::arg ret_operand() {
    if (regs_.empty() || in_.one_in(16)) return b_.void_arg();
    return b_.r(any_reg()->id);
  }

  // ---- constants (every kind) ----

  std::int64_t constant(kind hint) {
    std::uint8_t k = in_.u8();
    // Follow the hint three times in four, so that builtins mostly get the kind they expect.
    if (k < 192) {
      switch (hint) {
        case kind::integer: k = 0; break;
        case kind::boolean: k = 2; break;
        case kind::dtype: k = 3; break;
        case kind::shape: k = 5; break;
        case kind::string: k = 6; break;
        case kind::tensor:
        case kind::heap: k = 7; break;
        default: break;
      }
    }
    switch (k % 8) {
      case 0: return b_.add_int(in_.interesting());
      case 1: {
        static constexpr double floats[] = {0.0, -0.0, 0.5, -2.25, 1e308, -1e-310,
                                            std::numeric_limits<double>::infinity(),
                                            std::numeric_limits<double>::quiet_NaN()};
        return b_.add_float(floats[in_.below(std::size(floats))]);
      }
      case 2: return b_.add_bool(in_.u8() & 1);
      case 3: return b_.add_dtype(some_dtype());
      case 4: {
        static constexpr rv::device devices[] = {rv::device::cpu(0), rv::device::cpu(1), {kDLCUDA, 0},
                                                 {kDLCPU, std::numeric_limits<std::int32_t>::max()}};
        return b_.add_device(devices[in_.below(std::size(devices))]);
      }
      case 5: {
        std::vector<std::int64_t> dims(in_.below(5));
        for (std::int64_t& d : dims) d = in_.one_in(16) ? in_.interesting() & 0xffffff : in_.u8() % 9;
        return b_.add_shape(dims);
      }
      case 6: {
        static constexpr std::string_view strings[] = {"", "global", "ErrorContext(fn=f, loc=param[0])", "local",
                                                       std::string_view("x\0y", 3)};
        return b_.add_string(strings[in_.below(std::size(strings))]);
      }
      default: {
        static constexpr rv::dtype types[] = {rv::dtype::int64(), rv::dtype::int32(), rv::dtype::int16(),
                                              rv::dtype::int8(),  rv::dtype::uint8(), rv::dtype::float32(),
                                              rv::dtype::float64(), rv::dtype::bool_()};
        const rv::dtype t = types[in_.below(std::size(types))];
        std::vector<std::int64_t> dims(in_.below(3));
        std::int64_t numel = 1;
        for (std::int64_t& d : dims) {
          d = in_.u8() % 5;
          numel *= d;
        }
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(numel * t.bytes()));
        for (std::uint8_t& x : bytes) x = t == rv::dtype::bool_() ? in_.u8() & 1 : in_.u8();
        return b_.add_tensor(t, dims, bytes);
      }
    }
  }
  rv::dtype some_dtype() {
    static constexpr rv::dtype types[] = {rv::dtype::int64(),   rv::dtype::uint8(),   rv::dtype::float32(),
                                          rv::dtype::int32(),   rv::dtype::float16(), rv::dtype::bool_(),
                                          rv::dtype::float64(), rv::dtype::bfloat16(), rv::dtype::handle(),
                                          rv::dtype::void_(),   rv::dtype(kDLFloat, 8), rv::dtype(kDLInt, 32, 4)};
    return types[in_.below(std::size(types))];
  }
  rv::arg dtype_operand() { return in_.one_in(16) ? operand() : b_.c(b_.add_dtype(some_dtype())); }
  rv::arg err_ctx_operand() { return in_.one_in(4) ? b_.void_arg() : operand(kind::string); }

  // ---- calls ----

  // The arguments are complete before the destination is chosen: a new destination must not be
  // picked as an argument (it would be read before it is written).
  void emit(std::string_view fn, const std::vector<rv::arg>& args, rv::arg dst) {
    b_.emit_call(fn, std::span<const rv::arg>(args), dst);
  }
  void call(std::string_view fn, const std::vector<rv::arg>& args, kind k, std::int64_t need = -1) {
    emit(fn, args, def(k, need));
  }
  void call_void(std::string_view fn, const std::vector<rv::arg>& args) { emit(fn, args, b_.void_arg()); }
  std::size_t some_function() { return in_.below(funcs_.size()); }
  /// The target of make_closure and call_tir_dyn: often the function being generated itself, so
  /// closures recurse.
  std::size_t closure_target() { return in_.one_in(3) ? current_ : some_function(); }

  // ---- statements ----

  void statement(int depth) {
    if (--statements_left_ < 0) return;
    switch (static_cast<stmt>(in_.u8() % static_cast<std::uint8_t>(stmt::count))) {
      case stmt::constant: {
        const std::int64_t c = constant(kind::any);
        if (!b_.ok()) return;  // a failed builder call returns index 0, which may not exist
        const rv::const_kind ck = b_.layout().view().constant(static_cast<std::size_t>(c)).kind;
        const kind k = ck == rv::const_kind::boolean ? kind::boolean
                       : ck == rv::const_kind::int64 ? kind::integer
                       : ck == rv::const_kind::shape ? kind::shape
                       : ck == rv::const_kind::string ? kind::string
                       : ck == rv::const_kind::tensor ? kind::tensor
                       : ck == rv::const_kind::dtype ? kind::dtype
                                                     : kind::any;
        call("vm.builtin.copy", {b_.c(c)}, k);
        break;
      }
      case stmt::make_tuple: {
        std::vector<rv::arg> fields(in_.below(5));
        for (rv::arg& f : fields) f = operand();
        call("vm.builtin.make_tuple", fields, kind::tuple);
        break;
      }
      case stmt::tuple_getitem: {
        const rv::arg t = operand(kind::tuple);
        call("vm.builtin.tuple_getitem", {t, index_operand(5)}, kind::any);
        break;
      }
      case stmt::tuple_reset_item: {
        const rv::arg t = operand(kind::tuple);
        call("vm.builtin.tuple_reset_item", {t, index_operand(5)}, kind::any);
        break;
      }
      case stmt::make_adt: {
        std::vector<rv::arg> args{index_operand(4)};
        for (std::size_t i = in_.below(4); i > 0; --i) args.push_back(operand());
        call("vm.builtin.make_adt", args, kind::tuple);
        break;
      }
      case stmt::adt_read: {
        const rv::arg t = operand(kind::tuple);
        if (in_.u8() & 1) call("vm.builtin.get_tag", {t}, kind::integer);
        else call("vm.builtin.get_field", {t, index_operand(4)}, kind::any);
        break;
      }
      case stmt::make_closure: make_closure(); break;
      case stmt::invoke_closure: invoke_closure(); break;
      case stmt::call_vm:
      case stmt::call_vm_again: {  // twice the weight: calls between functions are the point
        const function_plan& callee = funcs_[some_function()];
        std::vector<rv::arg> args(static_cast<std::size_t>(callee.arity));
        for (rv::arg& a : args) a = operand();
        call(callee.name, args, kind::any);
        break;
      }
      case stmt::call_tir_dyn: call_tir_dyn(); break;
      case stmt::shape_heap: {
        // Without a context the heap comes from the system heap, not from the VM's arena.
        std::vector<rv::arg> args;
        if (!in_.one_in(4) || avoid(system_heap)) args.push_back(avoid(system_heap) ? b_.vm_state() : ctx_operand());
        args.push_back(in_.one_in(16) ? operand(kind::integer) : b_.imm(static_cast<std::int64_t>(in_.below(9))));
        call("vm.builtin.alloc_shape_heap", args, kind::heap);
        break;
      }
      case stmt::match_shape: {
        const rv::arg input = operand(in_.u8() & 1 ? kind::shape : kind::tensor);
        const rv::arg heap = in_.one_in(4) ? b_.void_arg() : operand(kind::heap);
        const std::size_t n = in_.below(4);
        std::vector<rv::arg> args{input, heap, in_.one_in(16) ? index_operand(5) : b_.imm(static_cast<std::int64_t>(n))};
        for (std::size_t i = 0; i < n; ++i) {
          args.push_back(index_operand(5));  // codes 0-3 are valid
          args.push_back(index_operand(9));
        }
        if (in_.u8() & 1) args.push_back(err_ctx_operand());
        call_void("vm.builtin.match_shape", args);
        break;
      }
      case stmt::make_shape: {
        const std::size_t n = in_.below(4);
        std::vector<rv::arg> args{in_.one_in(4) ? b_.void_arg() : operand(kind::heap), b_.imm(static_cast<std::int64_t>(n))};
        for (std::size_t i = 0; i < n; ++i) {
          args.push_back(index_operand(2));
          args.push_back(index_operand(9));
        }
        call("vm.builtin.make_shape", args, kind::shape);
        break;
      }
      case stmt::shape_arith: {
        std::vector<rv::arg> args{operand(kind::heap)};
        for (std::size_t g = 1 + in_.below(3); g > 0; --g) {
          args.push_back(index_operand(rv::builtins::arith_op_count + 1));
          args.push_back(index_operand(9));  // destination slot
          for (int k = 0; k < 2; ++k) {
            args.push_back(index_operand(2));
            args.push_back(in_.one_in(4) ? b_.imm(immediate()) : index_operand(9));
          }
        }
        call_void("vm.builtin.shape_arith", args);
        break;
      }
      case stmt::store_load_shape: {
        const std::size_t n = in_.below(4);
        if (in_.u8() & 1) {
          std::vector<rv::arg> args{operand(kind::shape), operand(kind::heap)};
          for (std::size_t i = 0; i < n; ++i) args.push_back(index_operand(9));
          call_void("vm.builtin.store_shape", args);
        } else {
          std::vector<rv::arg> args{operand(kind::heap)};
          for (std::size_t i = 0; i < n; ++i) args.push_back(index_operand(9));
          call("vm.builtin.load_shape", args, kind::shape);
        }
        break;
      }
      case stmt::prim_value: {
        const rv::arg heap = in_.one_in(4) ? b_.void_arg() : operand(kind::heap);
        if (in_.u8() & 1) {
          std::vector<rv::arg> args{operand(kind::integer), heap, index_operand(5), index_operand(9)};
          if (in_.u8() & 1) args.push_back(err_ctx_operand());
          call_void("vm.builtin.match_prim_value", args);
        } else {
          call("vm.builtin.make_prim_value", {heap, index_operand(2), index_operand(9)}, kind::integer);
        }
        break;
      }
      case stmt::alloc_storage: {
        std::vector<rv::arg> args{ctx_operand(), alloc_shape(), in_.one_in(8) ? index_operand(3) : b_.imm(in_.u8() & 1 ? -1 : 0),
                                  in_.one_in(4) ? dtype_operand() : b_.c(b_.add_dtype(rv::dtype::uint8()))};
        if (in_.u8() & 1) args.push_back(operand(kind::string));
        call("vm.builtin.alloc_storage", args, kind::storage);
        break;
      }
      case stmt::alloc_tensor: {
        std::vector<rv::arg> args{operand(kind::storage), index_operand(in_.one_in(4) ? 256 : 2), alloc_shape(),
                                  dtype_operand()};
        if (in_.one_in(4)) args.push_back(operand(kind::string));
        call("vm.builtin.alloc_tensor", args, kind::tensor);
        break;
      }
      case stmt::reshape: {
        const rv::arg t = operand(kind::tensor);
        call("vm.builtin.reshape", {t, operand(kind::shape)}, kind::tensor);
        break;
      }
      case stmt::shape_convert: {
        switch (in_.below(5)) {
          case 0: call("vm.builtin.shape_of", {operand(kind::tensor)}, kind::shape); break;
          case 1: call("vm.builtin.tensor_to_shape", {operand(kind::tensor)}, kind::shape); break;
          case 2: call("vm.builtin.shape_to_tensor", {operand(kind::shape)}, kind::tensor); break;
          case 3: call("vm.builtin.ensure_zero_offset", {operand(kind::tensor)}, kind::tensor); break;
          default: {
            std::vector<rv::arg> args;
            if (!in_.one_in(4)) args.push_back(ctx_operand());
            args.push_back(operand(kind::tensor));
            args.push_back(index_operand(3));  // kDLCPU is 1
            args.push_back(index_operand(2));
            call("vm.builtin.to_device", args, kind::tensor);
          }
        }
        break;
      }
      case stmt::check_info: {
        const rv::arg x = operand();
        switch (in_.below(5)) {
          case 0: {
            std::vector<rv::arg> args{x, index_operand(4)};
            if (in_.u8() & 1) args.push_back(dtype_operand());
            args.push_back(err_ctx_operand());
            call_void("vm.builtin.check_tensor_info", args);
            break;
          }
          case 1: call_void("vm.builtin.check_shape_info", {x, index_operand(4), err_ctx_operand()}); break;
          case 2: call_void("vm.builtin.check_tuple_info", {x, index_operand(4), err_ctx_operand()}); break;
          case 3: call_void("vm.builtin.check_func_info", {x, err_ctx_operand()}); break;
          default: call_void("vm.builtin.check_prim_value_info", {x, dtype_operand(), err_ctx_operand()});
        }
        break;
      }
      case stmt::print: {
        // Always with a context first: print without one writes to standard output.
        std::vector<rv::arg> args{ctx_operand()};
        for (std::size_t i = in_.below(4); i > 0; --i) args.push_back(operand());
        call("vm.builtin.print", args, kind::any);
        break;
      }
      case stmt::cond: {
        if (in_.u8() & 1) call("vm.builtin.read_if_cond", {operand(kind::integer)}, kind::boolean);
        else call("vm.builtin.scalar_eq", {operand(kind::integer), operand(kind::integer)}, kind::boolean);
        break;
      }
      case stmt::misc: {
        switch (in_.below(4)) {
          case 0: call("vm.builtin.null_value", {}, kind::any); break;
          case 1: {  // the idiom: call kill_object(%r) -> %r
            const reg_info* r = any_reg();
            if (!r) break;
            const std::int64_t id = r->id;
            emit("vm.builtin.kill_object", {b_.r(id)}, b_.r(id));
            break;
          }
          case 2: {
            std::vector<rv::arg> args;
            if (in_.u8() & 1) args.push_back(ctx_operand());
            call_void("vm.builtin.memory_manager.clear", args);
            break;
          }
          default: call("vm.builtin.copy", {operand()}, kind::any);
        }
        break;
      }
      case stmt::escape_vm: escape_vm(); break;
      case stmt::if_block: if_block(depth); break;
      case stmt::loop: loop(depth); break;
      case stmt::nest_loop: nest_loop(depth); break;
      case stmt::raw_jump: {
        // Patched once the function's length is known: any target, backward gotos included. Most
        // are Ifs (forward only): a backward goto usually loops until the budget runs out.
        const bool is_if = !in_.one_in(4);
        if (is_if) b_.emit_if(b_.r(cond_reg()), 2);
        else b_.emit_goto(1);
        jumps_.push_back({b_.next_instruction() - 1, is_if, in_.u8()});
        break;
      }
      case stmt::early_ret: b_.emit_ret(ret_operand()); break;
      case stmt::any_builtin: {
        // Any registered name with any arguments: the adapters must turn every mismatch into an
        // error. (Names the registry lacks are fuzz_run's business: they only stop the VM.)
        const std::string_view name = builtins_[in_.below(builtins_.size())];
        std::vector<rv::arg> args;
        if (name == "vm.builtin.print" || in_.one_in(3)) args.push_back(ctx_operand());
        for (std::size_t i = in_.below(6); i > 0; --i) args.push_back(operand());
        call(name, args, kind::any);
        break;
      }
      case stmt::count: break;
    }
  }

  /// A shape for alloc_storage and alloc_tensor: small, sometimes empty (zero bytes) or huge.
  rv::arg alloc_shape() {
    const std::uint8_t sel = in_.u8();
    if (sel >= 240) return operand(kind::shape);
    std::vector<std::int64_t> dims(sel % 3);
    for (std::int64_t& d : dims) d = in_.one_in(32) ? in_.interesting() & 0x7fffffffffff : in_.u8() % 17;
    if (avoid(zero_byte_free))
      for (std::int64_t& d : dims)
        if (d == 0) d = 1;
    return b_.c(b_.add_shape(dims));
  }

  void make_closure() {
    rv::arg target;
    std::int64_t need = -1;
    const std::uint8_t sel = in_.u8();
    if (sel < 160) {
      const function_plan& f = funcs_[closure_target()];
      target = b_.f(f.name);
      need = f.arity;
    } else if (sel < 208) {
      target = b_.f(builtins_[in_.below(builtins_.size())]);
    } else {  // a closure of a closure: captures add up
      const reg_info* r = find_reg(kind::closure);
      if (!r) return;
      target = b_.r(r->id);
      need = r->need;
    }
    std::vector<rv::arg> args{target};
    for (std::size_t i = in_.below(4); i > 0; --i) {
      args.push_back(operand(in_.u8() & 1 ? kind::closure : kind::any));
      if (need > 0) --need;
    }
    call("vm.builtin.make_closure", args, kind::closure, need);
  }

  void invoke_closure() {
    rv::arg clo;
    std::int64_t need = -1;
    if (in_.one_in(4)) {  // a function directly, as f[i]
      const function_plan& f = funcs_[closure_target()];
      clo = b_.f(f.name);
      need = f.arity;
    } else {
      const reg_info* r = find_reg(kind::closure);
      if (!r) r = any_reg();
      if (!r) return;
      clo = b_.r(r->id);
      need = r->need;
    }
    std::vector<rv::arg> args{ctx_operand(), clo};
    const std::size_t n = need >= 0 && !in_.one_in(8) ? static_cast<std::size_t>(need) : in_.below(4);
    for (std::size_t i = 0; i < n; ++i) args.push_back(operand());
    call("vm.builtin.invoke_closure", args, kind::any);
  }

  void call_tir_dyn() {
    std::vector<rv::arg> args;
    if (!in_.one_in(8)) args.push_back(ctx_operand());
    std::int64_t arity = 0;
    if (in_.one_in(4)) {
      args.push_back(b_.f(builtins_[in_.below(builtins_.size())]));
      arity = static_cast<std::int64_t>(in_.below(4));
    } else {
      const function_plan& f = funcs_[closure_target()];
      args.push_back(b_.f(f.name));
      arity = f.arity;
    }
    // The shape's dimensions become the last arguments: split the arity between both.
    const std::int64_t dims = std::min<std::int64_t>(arity, static_cast<std::int64_t>(in_.below(3)));
    for (std::int64_t i = 0; i < arity - dims; ++i) args.push_back(operand());
    std::vector<std::int64_t> shape(static_cast<std::size_t>(dims));
    for (std::int64_t& d : shape) d = in_.u8() % 9;
    args.push_back(in_.one_in(8) ? operand(kind::shape) : b_.c(b_.add_shape(shape)));
    call("vm.builtin.call_tir_dyn", args, kind::any);
  }

  /// %vm where builtins store values, or copied into a register that ret returns: however it
  /// leaves the call that received it, a program must not keep its VM's address past the VM (the
  /// harness hands results of the first VM to the second).
  void escape_vm() {
    if (avoid(escaped_context)) return;
    switch (in_.below(4)) {
      case 0: call("vm.builtin.copy", {b_.vm_state()}, kind::context); break;
      case 1: call("vm.builtin.make_tuple", {operand(), b_.vm_state()}, kind::tuple); break;
      case 2: call("vm.builtin.make_closure", {b_.f(funcs_[some_function()].name), b_.vm_state()}, kind::closure); break;
      default: call("vm.builtin.make_adt", {b_.imm(1), b_.vm_state()}, kind::tuple); break;
    }
  }

  void block(int depth) {
    for (std::size_t n = 1 + in_.below(6); n > 0 && statements_left_ > 0; --n) statement(depth + 1);
  }
  // Blocks may emit nothing (no statements left, or a statement that emits nothing); jumps need at
  // least one instruction to jump over.
  void ensure_emitted_since(std::int64_t at) {
    if (b_.next_instruction() == at) call("vm.builtin.null_value", {}, kind::any);
  }

  /// if (c) { ... } [else { ... }]
  void if_block(int depth) {
    if (depth >= max_depth) return;
    const std::int64_t cond = cond_reg();
    const std::int64_t at_if = b_.next_instruction();
    b_.emit_if(b_.r(cond), 2);
    block(depth);
    ensure_emitted_since(at_if + 1);
    if (in_.u8() & 1) {
      const std::int64_t at_goto = b_.next_instruction();
      b_.emit_goto(1);
      b_.patch(at_if, 2, b_.next_instruction() - at_if);
      block(depth);
      ensure_emitted_since(at_goto + 1);
      b_.patch(at_goto, 1, b_.next_instruction() - at_goto);
    } else {
      b_.patch(at_if, 2, b_.next_instruction() - at_if);
    }
  }

  /// A loop counted down in a shape heap (the way lowered code keeps integers), or one that only
  /// the instruction budget ends.
  template <class Body>
  void counted_loop(std::int64_t n, Body body) {
    std::int64_t heap = -1;
    if (n >= 0) {
      heap = next_reg_++;
      b_.emit_call("vm.builtin.alloc_shape_heap", {b_.vm_state(), b_.imm(1)}, b_.r(heap));
      regs_.push_back({heap, kind::heap, -1});
      b_.emit_call("vm.builtin.shape_arith",
                   {b_.r(heap), b_.imm(static_cast<std::int64_t>(arith_op::add)), b_.imm(0),
                    b_.imm(static_cast<std::int64_t>(make_code::use_imm)), b_.imm(n),
                    b_.imm(static_cast<std::int64_t>(make_code::use_imm)), b_.imm(0)});
    }
    const std::int64_t top = b_.next_instruction();
    body();
    ensure_emitted_since(top);
    if (heap >= 0) {
      b_.emit_call("vm.builtin.shape_arith",
                   {b_.r(heap), b_.imm(static_cast<std::int64_t>(arith_op::sub)), b_.imm(0),
                    b_.imm(static_cast<std::int64_t>(make_code::load_shape)), b_.imm(0),
                    b_.imm(static_cast<std::int64_t>(make_code::use_imm)), b_.imm(1)});
      const std::int64_t left = next_reg_++;
      b_.emit_call("vm.builtin.make_prim_value",
                   {b_.r(heap), b_.imm(static_cast<std::int64_t>(make_code::load_shape)), b_.imm(0)}, b_.r(left));
      regs_.push_back({left, kind::integer, -1});
      b_.emit_if(b_.r(left), 2);  // while (left != 0) goto top
    }
    b_.emit_goto(top - b_.next_instruction());
  }
  std::int64_t loop_count() {
    const std::uint8_t sel = in_.u8();
    if (sel >= 248) return -1;  // until the budget runs out
    if (sel >= 224) return std::int64_t{1} << (sel % 21);
    return 1 + sel % 8;
  }

  void loop(int depth) {
    if (depth >= max_depth) return;
    counted_loop(loop_count(), [&] { block(depth); });
  }

  /// Grows one value by a level per iteration: tuples in tuples, ADTs in ADTs, closures capturing
  /// closures. Dropping, printing or sharing such a value must not recurse once per level.
  void nest_loop(int depth) {
    if (depth >= max_depth) return;
    const std::uint8_t how = in_.u8() % 4;
    const kind k = how == 2 ? kind::closure : kind::tuple;
    const reg_info* found = find_reg(k);
    std::int64_t acc = found ? found->id : -1;
    const std::size_t target = closure_target();
    if (acc < 0) {
      acc = next_reg_++;
      if (k == kind::closure) emit("vm.builtin.make_closure", {b_.f(funcs_[target].name)}, b_.r(acc));
      else emit("vm.builtin.make_tuple", {}, b_.r(acc));
      regs_.push_back({acc, k, -1});
    }
    std::int64_t n = loop_count();
    if (avoid(deep_values) && (n < 0 || n > 1000)) n = 1000;
    // A tuple that holds the same tuple twice, nested, comes from a field that is the value
    // itself (make_tuple(t, t) -> t).
    auto field = [&] { return avoid(shared_print) ? b_.c(constant(kind::any)) : operand(); };
    counted_loop(n, [&] {
      switch (how) {
        case 0: emit("vm.builtin.make_tuple", {b_.r(acc), field()}, b_.r(acc)); break;
        case 1: emit("vm.builtin.make_adt", {index_operand(3), field(), b_.r(acc)}, b_.r(acc)); break;
        case 2: emit("vm.builtin.make_closure", {b_.f(funcs_[target].name), b_.r(acc)}, b_.r(acc)); break;
        default: emit("vm.builtin.make_tuple", {b_.r(acc), avoid(shared_print) ? field() : b_.r(acc)}, b_.r(acc)); break;
      }
      if (in_.one_in(4)) block(depth);
    });
  }

  /// Gives each raw jump its target now that the function's length is known. The function ends
  /// with two rets, so an If (at most third from the end) always has a target >= 2 ahead.
  void patch_jumps() {
    const std::int64_t n = b_.next_instruction();
    for (const pending_jump& j : jumps_) {
      if (j.is_if) {
        b_.patch(j.at, 2, 2 + j.target % (n - j.at - 2));
      } else {
        std::int64_t t = j.target % n;
        if (t == j.at) ++t;
        b_.patch(j.at, 1, t - j.at);
      }
    }
  }

  byte_source& in_;
  rv::exec_builder& b_;
  const std::vector<std::string_view>& builtins_;
  std::vector<function_plan> funcs_;
  std::size_t current_ = 0;
  std::vector<reg_info> regs_;  // registers written so far, in instruction order (what the verifier checks)
  std::int64_t next_reg_ = 0;
  std::vector<pending_jump> jumps_;
  int statements_left_ = max_statements;
};

// ---- running ---------------------------------------------------------------------------------------

struct counters {
  std::uint64_t inputs = 0, built = 0, vms = 0, invocations = 0, values = 0, errors = 0;
};
counters stats;
bool dump = false;  // RELAXVM_FUZZ_DUMP

void print_stats() {
  std::fprintf(stderr,
               "fuzz_build: %llu inputs, %llu built a program (%.1f%%), %llu VMs, %llu invocations: %llu values, "
               "%llu errors\n",
               static_cast<unsigned long long>(stats.inputs), static_cast<unsigned long long>(stats.built),
               stats.inputs ? 100.0 * static_cast<double>(stats.built) / static_cast<double>(stats.inputs) : 0.0,
               static_cast<unsigned long long>(stats.vms), static_cast<unsigned long long>(stats.invocations),
               static_cast<unsigned long long>(stats.values), static_cast<unsigned long long>(stats.errors));
}

/// A failed check: abort, so that libFuzzer records the input.
void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_build: check failed: %s\n", what);
  std::abort();
}

/// Limits from the input: mostly small; rarely large enough for values nested tens of thousands
/// deep, or closure recursion thousands of C++ frames deep, which the small ones cannot reach.
rv::vm_options vm_limits(std::uint8_t sel, std::span<std::byte> arena) {
  rv::vm_options o;
  o.max_instructions = (sel & relaxvm_fuzz::big_budget) == relaxvm_fuzz::big_budget ? std::int64_t{1} << 18 : 20000;
  o.max_call_depth = (sel & relaxvm_fuzz::deep_calls) == relaxvm_fuzz::deep_calls ? 1 << 14 : 256;
  if (avoid(closure_recursion)) o.max_call_depth = 256;
  o.max_stack_slots = std::int64_t{1} << 18;
  o.print = [](std::string_view) {};
  o.devices = {{rv::device::cpu(), rv::allocator::arena(arena)}};
  return o;
}

/// Arguments drawn from the input, and results of earlier invocations (closures, tuples, values
/// that hold a VM's memory) so that they meet other functions and other VMs.
class value_pool {
 public:
  value_pool(byte_source& in, const rv::basic_registry& reg, const std::vector<std::string_view>& builtins) : in_(in) {
    for (int i = 0; i < 6; ++i) values_.push_back(decode(reg, builtins));
  }
  void add(rv::value v) {
    if (values_.size() < max_pool) values_.push_back(std::move(v));
    else values_[in_.below(values_.size())] = std::move(v);
  }
  std::vector<rv::value> pick(std::size_t n) {
    std::vector<rv::value> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(values_[(in_.u8() + i) % values_.size()]);
    return out;
  }
  const std::vector<rv::value>& values() const { return values_; }

 private:
  rv::value decode(const rv::basic_registry& reg, const std::vector<std::string_view>& builtins) {
    const std::uint8_t k = in_.u8();
    switch (k % 10) {
      case 0: return rv::value();
      case 1: return rv::value(in_.interesting());
      case 2: return rv::value((k & 0x10) != 0);
      case 3: return rv::value(static_cast<double>(in_.interesting()) / 3.0);
      case 4: {  // an int64 tensor: a shape heap, an index, a condition
        const std::int64_t len = in_.below(5);
        return rv::value(rv::tensor::from<std::int64_t>(
            std::vector<std::int64_t>(static_cast<std::size_t>(len), in_.interesting()), {len}));
      }
      case 5: {
        const std::int64_t rows = 1 + in_.below(3), cols = in_.below(4);
        return rv::value(rv::tensor::from<float>(std::vector<float>(static_cast<std::size_t>(rows * cols), 0.5f), {rows, cols}));
      }
      case 6: return rv::value(rv::shape{in_.u8() % 9, in_.u8() % 9});
      case 7: return rv::value(std::string_view(k & 0x10 ? "global" : "ErrorContext(arg)"));
      case 8: {
        const std::vector<rv::value> fields{rv::value(std::int64_t{1}), rv::value(rv::shape{2})};
        return rv::value(rv::tuple(fields));
      }
      default: return rv::value(*reg.find(builtins[in_.below(builtins.size())]));  // a builtin as a closure
    }
  }

  byte_source& in_;
  std::vector<rv::value> values_;
};

void observe(const rv::result<rv::value>& r, value_pool& pool, std::uint8_t flags) {
  ++stats.invocations;
  if (!r.ok()) {
    ++stats.errors;
    check(!r.error().message().empty(), "an error without a message");
    return;
  }
  ++stats.values;
  // Printing walks the value (as vm.builtin.print does); so does share().
  (void)rv::to_string(*r);
  if (flags & flag::share_results) r->share();
  pool.add(*r);
}

/// Every VM function twice: the second call checks that the VM is usable after the first,
/// whatever it did.
void invoke_all(rv::virtual_machine& vm, const rv::executable& exe, value_pool& pool, byte_source& in,
                std::uint8_t flags, int times = 2) {
  const rv::exec_view v = exe.view();
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    if (v.funcs[f].kind != rv::func_kind::vm) continue;
    check(vm.try_function_arity(v.name(f)).ok() && vm.try_param_names(v.name(f)).ok(), "a VM function has no arity");
    std::size_t n = static_cast<std::size_t>(v.funcs[f].num_args);
    if ((flags & flag::wrong_arity) && in.one_in(4)) n = in.u8() & 1 ? n + 1 : (n ? n - 1 : 1);
    const std::vector<rv::value> args = pool.pick(n);
    for (int k = 0; k < times; ++k) observe(vm.try_invoke(v.name(f), args), pool, flags);
  }
}

/// The stateful API over the second VM: inputs set, outputs read by tuple index, saved calls.
void exercise_stateful(rv::virtual_machine& vm, const rv::executable& exe, value_pool& pool, byte_source& in) {
  const rv::exec_view v = exe.view();
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    if (v.funcs[f].kind != rv::func_kind::vm) continue;
    const std::string_view name = v.name(f);
    const std::vector<rv::value> args = pool.pick(static_cast<std::size_t>(v.funcs[f].num_args));
    if (!vm.try_set_input(name, args).ok()) continue;
    (void)vm.try_invoke_stateful(name);
    const std::int64_t index[] = {static_cast<std::int64_t>(in.below(3)), static_cast<std::int64_t>(in.below(3))};
    (void)vm.try_get_output_arity(name);
    const std::size_t depth = in.below(3);
    const rv::result<rv::value> out = vm.try_get_output(name, std::span<const std::int64_t>(index, depth));
    if (out.ok()) pool.add(*out);
    if (vm.try_save_function(name, "saved", in.u8() & 1, args).ok())
      observe(vm.try_invoke("saved", {}), pool, 0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // vm.builtin.print without a context writes to standard output; libFuzzer reports on stderr.
  if (!std::freopen("/dev/null", "w", stdout)) return 0;
  auto on = [](const char* name) {
    const char* s = std::getenv(name);
    return s && *s && *s != '0';
  };
  if (on("RELAXVM_FUZZ_STATS")) std::atexit(print_stats);
  dump = on("RELAXVM_FUZZ_DUMP");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const rv::registry reg;
  // The builtins that programs call with any arguments, pass to call_tir_dyn and wrap in closures
  // (which call them without a context).
  static const std::vector<std::string_view> builtins = [] {
    std::vector<std::string_view> names = reg.names();
    if (avoid(system_heap)) std::erase(names, std::string_view("vm.builtin.alloc_shape_heap"));
    return names;
  }();
  // One buffer per VM: a value of the first may still use its memory while the second runs.
  alignas(64) static std::array<std::byte, 1 << 18> arena_memory[2];
  ++stats.inputs;

  byte_source in(std::span<const std::uint8_t>(data, size));
  const std::uint8_t flags = in.u8();
  const std::uint8_t limits = in.u8();
  rv::exec_builder b;
  b.set_formalize(!(flags & flag::no_formalize));
  b.set_constant_dedup(!(flags & flag::no_dedup));
  program_generator(in, b, builtins).generate();
  rv::result<rv::executable> built = b.try_get();
  if (dump) std::fprintf(stderr, "fuzz_build: flags %u, limits %u\n%s\n", flags, limits,
                         built.ok() ? built->as_text().c_str() : std::string(built.error().message()).c_str());
  if (!built.ok()) return 0;
  ++stats.built;
  const rv::executable& exe = *built;

  // save() and try_load() must round-trip every program the builder accepts.
  const std::vector<std::byte> bytes = exe.save();
  rv::result<rv::executable> loaded = rv::executable::try_load(bytes);
  check(loaded.ok(), "a built executable does not load back");
  check(loaded->save() == bytes, "a loaded executable saves to other bytes");
  check(loaded->as_text() == exe.as_text(), "a loaded executable prints differently");
  (void)exe.stats();
  (void)exe.as_cpp();

  value_pool pool(in, reg, builtins);  // outlives both VMs: results may hold their memory and closures
  std::optional<rv::virtual_machine> first;
  {
    rv::result<rv::virtual_machine> vm = rv::virtual_machine::create(exe, reg, vm_limits(limits, arena_memory[0]));
    const bool made = vm.ok();
    check(made == rv::virtual_machine::create(*loaded, reg, vm_limits(limits, arena_memory[1])).ok(),
          "a loaded executable makes a VM where the original does not, or the reverse");
    if (dump && !made) std::fprintf(stderr, "fuzz_build: no VM: %s\n", std::string(vm.error().message()).c_str());
    if (!made) return 0;
    first.emplace(std::move(*vm));
  }
  ++stats.vms;
  invoke_all(*first, exe, pool, in, flags);
  if (flags & flag::outlive_vm) first.reset();

  rv::result<rv::virtual_machine> second = rv::virtual_machine::create(*loaded, reg, vm_limits(limits, arena_memory[1]));
  check(second.ok(), "a loaded executable makes no VM");
  ++stats.vms;
  rv::virtual_machine& vm = *second;
  if (flags & flag::instrument) {
    const std::uint8_t every = static_cast<std::uint8_t>(2 + in.below(5));
    vm.set_instrument([every, calls = 0](const rv::call_event& e) mutable {
      return e.before && ++calls % every == 0 ? rv::instrument_action::skip : rv::instrument_action::proceed;
    });
  }
  invoke_all(vm, *loaded, pool, in, flags);
  if (flags & flag::closures_from_c) {
    const std::vector<rv::value> values = pool.values();  // invoking adds results to the pool
    for (const rv::value& v : values)
      if (v.kind() == rv::value_kind::closure)
        observe(vm.try_invoke_closure(v.as<rv::closure>(), pool.pick(in.below(4))), pool, flags);
  }
  if (flags & flag::stateful) exercise_stateful(vm, *loaded, pool, in);
  if (first) invoke_all(*first, exe, pool, in, flags, 1);  // the first VM again, after the second ran
  return 0;
}
