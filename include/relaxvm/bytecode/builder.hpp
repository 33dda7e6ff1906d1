// SPDX-License-Identifier: Apache-2.0
// exec_builder: emits functions, instructions and constants, then formalizes and verifies them.
// Everything here is constexpr, so the same builder code runs at run time (get()) and at compile
// time (build() in static_executable.hpp). Misuse never throws while building: the first error is
// kept and reported by finish(), get() or the compiler, with the file and line of the builder call
// that made it (each call that can fail takes a std::source_location, by default its caller's).
#ifndef RELAXVM_BYTECODE_BUILDER_HPP
#define RELAXVM_BYTECODE_BUILDER_HPP

#include <bit>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/device.hpp"
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "../base/hash_index.hpp"
#include "../base/text_builder.hpp"
#include "formalize.hpp"
#include "instruction.hpp"
#include "layout.hpp"
#include "opcode.hpp"
#include "verify.hpp"

namespace relaxvm::RELAXVM_ABI {

template <class> class basic_executable;
using executable = basic_executable<void>;  // io/executable.hpp; get() names it only when instantiated
template <class Unused = void>
class basic_exec_builder;
/// The builder. A class template only so that a translation unit pays for the members it uses: in
/// separate compilation (base/config.hpp) the compiled library holds the code of
/// basic_exec_builder<void>, and a user's translation unit generates none of it (it still reads
/// the members it calls, as constant evaluation needs them).
using exec_builder = basic_exec_builder<void>;

/// Customization point: how a C++ value becomes a constant. Specialize with
/// `static std::int64_t add(exec_builder&, const T&)`; runtime/constant.hpp does so for values,
/// shapes, strings and tensors.
template <class T>
struct constant_traits;

/// What finish() produces: the formalized layout, the verifier's report, and the first error.
struct build_output {
  exec_layout layout;
  verify_report report;
  detail::text message;  ///< empty when ok
  constexpr bool ok() const { return message.empty(); }
};

template <class Unused>
class basic_exec_builder {
 public:
  /// Ends its function when it goes out of scope.
  class [[nodiscard]] function_scope {
   public:
    constexpr explicit function_scope(basic_exec_builder* b, std::source_location where = std::source_location::current())
        : b_(b), where_(where) {}
    constexpr function_scope(function_scope&& o) noexcept : b_(std::exchange(o.b_, nullptr)), where_(o.where_) {}
    function_scope(const function_scope&) = delete;
    function_scope& operator=(const function_scope&) = delete;
    function_scope& operator=(function_scope&&) = delete;
    constexpr ~function_scope() { end(); }
    /// Ends the function now, before the scope does.
    constexpr void end() {
      if (b_) std::exchange(b_, nullptr)->end_function(where_);
    }

   private:
    basic_exec_builder* b_;
    std::source_location where_;  // of the function() call: an empty function is reported there
  };

  constexpr basic_exec_builder() = default;

  // ---- functions -------------------------------------------------------------------------

  /// Opens function `name` whose first `num_inputs` registers hold its arguments.
  constexpr function_scope function(std::string_view name, std::int64_t num_inputs,
                                    std::initializer_list<std::string_view> param_names = {}, std::source_location where = std::source_location::current()) {
    return function(name, num_inputs, std::span<const std::string_view>(param_names.begin(), param_names.size()), where);
  }
  constexpr function_scope function(std::string_view name, std::int64_t num_inputs,
                                    std::span<const std::string_view> param_names, std::source_location where = std::source_location::current()) {
    begin_function(name, num_inputs, param_names, where);
    return function_scope(this, where);
  }

  constexpr void begin_function(std::string_view name, std::int64_t num_inputs,
                                std::span<const std::string_view> param_names = {}, std::source_location where = std::source_location::current()) {
    if (failed_) return;
    if (current_ >= 0) {
      fail(where) << "function('" << name << "') opened while function '" << layout_.view().name(current_u())
             << "' is still open; end it first (its scope object ends it)";
      return;
    }
    if (name.empty()) {
      fail(where) << "a function needs a non-empty name";
      return;
    }
    if (num_inputs < 0 || num_inputs > max_register_file_size) {
      fail(where) << "function '" << name << "' has " << num_inputs << " inputs; use 0 to " << max_register_file_size;
      return;
    }
    if (!param_names.empty() && static_cast<std::int64_t>(param_names.size()) != num_inputs) {
      fail(where) << "function '" << name << "' has " << num_inputs << " inputs but " << param_names.size()
             << " parameter names; give one name per input, or none";
      return;
    }
    std::int64_t idx = find_function(name);
    if (idx >= 0 && state_[static_cast<std::size_t>(idx)] != entry_state::referenced) {
      fail(where) << "function '" << name << "' is "
             << (state_[static_cast<std::size_t>(idx)] == entry_state::defined ? "defined twice"
                                                                                 : "already declared as a packed function");
      return;
    }
    if (idx < 0) idx = add_entry(name, entry_state::defined);
    state_[static_cast<std::size_t>(idx)] = entry_state::defined;
    func_info& f = layout_.funcs[static_cast<std::size_t>(idx)];
    f.kind = func_kind::vm;
    f.num_args = num_inputs;
    f.register_file_size = num_inputs;
    f.start = f.end = static_cast<std::int64_t>(layout_.instr_offset.size());
    f.params_begin = static_cast<std::int64_t>(layout_.param_names.size());
    f.params_count = static_cast<std::int64_t>(param_names.size());
    for (std::string_view p : param_names) layout_.param_names.push_back(layout_.add_chars(p));
    current_ = idx;
  }

  constexpr void end_function(std::source_location where = std::source_location::current()) {
    if (failed_) return;
    if (current_ < 0) {
      fail(where) << "end_function() without an open function";
      return;
    }
    func_info& f = layout_.funcs[current_u()];
    f.end = static_cast<std::int64_t>(layout_.instr_offset.size());
    if (f.end == f.start) {
      fail(where) << "function '" << layout_.view().name(current_u()) << "' has no instructions; end it with emit_ret";
      return;
    }
    current_ = -1;
  }

  /// Declares a function without defining it; packed functions are resolved by name from the
  /// registry when a VM is made. Returns its index in the function table.
  constexpr std::int64_t declare_function(std::string_view name, func_kind kind = func_kind::packed, std::source_location where = std::source_location::current()) {
    if (failed_) return 0;
    std::int64_t idx = find_function(name);
    if (kind == func_kind::vm) return idx >= 0 ? idx : add_entry(name, entry_state::referenced);
    if (idx < 0) return add_entry(name, entry_state::packed);
    if (state_[static_cast<std::size_t>(idx)] == entry_state::defined) {
      fail(where) << "function '" << name << "' is already defined as a vm function";
      return idx;
    }
    state_[static_cast<std::size_t>(idx)] = entry_state::packed;
    return idx;
  }

  // ---- arguments -------------------------------------------------------------------------

  /// Register `i` of the current frame.
  constexpr arg r(std::int64_t i, std::source_location where = std::source_location::current()) {
    if (i < 0 || (i >= begin_special_register && i != void_register && i != vm_register)) {
      fail(where) << "register " << i << " is out of range; registers are 0 to 2^54-1";
      return arg::reg(0);
    }
    return arg::reg(i);
  }
  /// An integer immediate (inline constant) in +-(2^55-1).
  constexpr arg imm(std::int64_t v, std::source_location where = std::source_location::current()) {
    if (v < arg_value_min || v > arg_value_max) {
      fail(where) << "immediate " << v << " is outside +-(2^55-1); use add_int() and c() instead";
      return arg::imm(0);
    }
    return arg::imm(v);
  }
  /// Constant `i` of the pool (an index from add_*()).
  constexpr arg c(std::int64_t i, std::source_location where = std::source_location::current()) {
    if (i < 0 || i > arg_value_max) {
      fail(where) << "constant index " << i << " is out of range";
      return arg::constant(0);
    }
    return arg::constant(i);
  }
  /// Function `name` as a value (a closure argument, or the target of emit_call(arg, ...)).
  /// It may be defined later; a name never defined is a packed function.
  constexpr arg f(std::string_view name, std::source_location where = std::source_location::current()) {
    if (name.empty()) {
      fail(where) << "f(\"\"): a function needs a non-empty name";
      return arg::func(0);
    }
    std::int64_t idx = find_function(name);
    if (idx < 0) idx = add_entry(name, entry_state::referenced);
    return arg::func(idx);
  }
  /// The VM context register: the first argument of builtins that take `ctx`.
  constexpr arg vm_state() const { return arg::reg(vm_register); }
  /// The void register: null as an argument, "discard" as a destination.
  constexpr arg void_arg() const { return arg::reg(void_register); }

  // ---- instructions ----------------------------------------------------------------------

  /// call `func`(args...) -> dst. `func` is a packed function, or a vm function (then the VM
  /// pushes a frame: recursion works). No destination, or void_arg(), discards the result.
  constexpr void emit_call(std::string_view func, std::initializer_list<arg> args = {},
                           arg dst = arg::reg(void_register), std::source_location where = std::source_location::current()) {
    emit_call(func, std::span<const arg>(args.begin(), args.size()), dst, where);
  }
  constexpr void emit_call(std::string_view func, std::span<const arg> args, arg dst = arg::reg(void_register),
                           std::source_location where = std::source_location::current()) {
    if (!in_function("emit_call", where)) return;
    emit_call(f(func, where), args, dst, where);
  }
  constexpr void emit_call(arg func, std::initializer_list<arg> args, arg dst = arg::reg(void_register),
                           std::source_location where = std::source_location::current()) {
    emit_call(func, std::span<const arg>(args.begin(), args.size()), dst, where);
  }
  constexpr void emit_call(arg func, std::span<const arg> args, arg dst = arg::reg(void_register),
                           std::source_location where = std::source_location::current()) {
    if (!in_function("emit_call", where)) return;
    if (func.kind() != arg_kind::func_idx) {
      fail_here(where) << "emit_call: the callee must be a function (f(name)), not another kind of argument";
      return;
    }
    if (dst.kind() != arg_kind::reg) {
      fail_here(where) << "emit_call: the destination must be a register (r(i) or void_arg())";
      return;
    }
    // One append for the header and a push per argument: at compile time every constexpr step
    // counts (clang's default budget, 1,048,576, is for the whole program).
    const std::int64_t header[4] = {static_cast<std::int64_t>(opcode::call), dst.value(), func.value(),
                                    static_cast<std::int64_t>(args.size())};
    layout_.instr_offset.push_back(static_cast<std::int64_t>(layout_.instr_data.size()));
    layout_.instr_data.append(header, 4);
    for (const arg& a : args) layout_.instr_data.push_back(a.data);
  }
  /// ret result
  constexpr void emit_ret(arg result, std::source_location where = std::source_location::current()) {
    if (!in_function("emit_ret", where)) return;
    if (result.kind() != arg_kind::reg) {
      fail_here(where) << "emit_ret: the result must be a register; copy a constant into one with vm.builtin.copy";
      return;
    }
    begin_instruction();
    push(static_cast<std::int64_t>(opcode::ret));
    push(result.value());
  }
  /// goto: pc += pc_offset (relative to this instruction).
  constexpr void emit_goto(std::int64_t pc_offset, std::source_location where = std::source_location::current()) {
    if (!in_function("emit_goto", where)) return;
    begin_instruction();
    push(static_cast<std::int64_t>(opcode::goto_));
    push(pc_offset);
  }
  /// If cond != 0 fall through, else pc += false_offset (relative to this instruction).
  constexpr void emit_if(arg cond, std::int64_t false_offset, std::source_location where = std::source_location::current()) {
    if (!in_function("emit_if", where)) return;
    if (cond.kind() != arg_kind::reg) {
      fail_here(where) << "emit_if: the condition must be a register";
      return;
    }
    begin_instruction();
    push(static_cast<std::int64_t>(opcode::if_));
    push(cond.value());
    push(false_offset);
  }

  /// Index, within the open function, of the next instruction emitted: use it to compute jump
  /// offsets, or to patch() a jump once its target is known.
  constexpr std::int64_t next_instruction() const {
    if (current_ < 0) return 0;
    return static_cast<std::int64_t>(layout_.instr_offset.size()) - layout_.funcs[current_u()].start;
  }
  /// Sets word `word` of instruction `instr` (relative to the open function) to `value`, e.g. the
  /// offset of a goto (word 1) or an If (word 2) emitted before its target was known.
  constexpr void patch(std::int64_t instr, std::int64_t word, std::int64_t value, std::source_location where = std::source_location::current()) {
    if (!in_function("patch", where)) return;
    const std::int64_t global = layout_.funcs[current_u()].start + instr;
    if (instr < 0 || global >= static_cast<std::int64_t>(layout_.instr_offset.size())) {
      fail_here(where) << "patch: instruction " << instr << " does not exist in this function";
      return;
    }
    const std::int64_t off = layout_.instr_offset[static_cast<std::size_t>(global)];
    const std::int64_t end = global + 1 < static_cast<std::int64_t>(layout_.instr_offset.size())
                                 ? layout_.instr_offset[static_cast<std::size_t>(global + 1)]
                                 : static_cast<std::int64_t>(layout_.instr_data.size());
    if (word < 1 || word >= end - off) {
      fail_here(where) << "patch: instruction " << instr << " has no word " << word
                  << " (word 0 is the opcode and cannot be patched)";
      return;
    }
    if (layout_.instr_data[static_cast<std::size_t>(off)] == static_cast<std::int64_t>(opcode::call) && word == 3) {
      // The argument count fixes the instruction's length; the stream must stay well formed.
      fail_here(where) << "patch: word 3 of a call is its argument count, which cannot be patched";
      return;
    }
    layout_.instr_data[static_cast<std::size_t>(off + word)] = value;
  }

  // ---- constants (equal constants share one index) ---------------------------------------

  constexpr std::int64_t add_int(std::int64_t v) { return add_scalar(const_kind::int64, v); }
  constexpr std::int64_t add_float(double v) { return add_scalar(const_kind::float64, std::bit_cast<std::int64_t>(v)); }
  constexpr std::int64_t add_bool(bool v) { return add_scalar(const_kind::boolean, v ? 1 : 0); }
  constexpr std::int64_t add_dtype(dtype t) { return add_scalar(const_kind::dtype, t.pack()); }
  constexpr std::int64_t add_device(device d) { return add_scalar(const_kind::device, d.pack()); }

  constexpr std::int64_t add_shape(std::initializer_list<std::int64_t> dims) {
    return add_shape(std::span<const std::int64_t>(dims.begin(), dims.size()));
  }
  constexpr std::int64_t add_shape(std::span<const std::int64_t> dims) {
    const pool_marks m = marks();
    const_info c{const_kind::shape};
    c.dims_offset = add_dims(dims);
    c.ndim = static_cast<std::int64_t>(dims.size());
    return intern(c, m);
  }

  constexpr std::int64_t add_string(std::string_view s) {
    const pool_marks m = marks();
    const str_ref r = layout_.add_chars(s);
    const_info c{const_kind::string};
    c.data_offset = r.offset;
    c.data_size = r.size;
    return intern(c, m);
  }

  /// A tensor constant from raw little-endian bytes; bytes.size() must match shape and dtype.
  constexpr std::int64_t add_tensor(dtype t, std::span<const std::int64_t> shape, std::span<const std::uint8_t> bytes,
                                    std::source_location where = std::source_location::current()) {
    if (failed_) return 0;
    std::int64_t numel = 1;
    for (std::int64_t d : shape) {
      if (d < 0 || !detail::checked_mul(numel, d, numel)) {
        fail(where) << "add_tensor: dimensions must be 0 or more and their product must fit in int64";
        return 0;
      }
    }
    std::int64_t nbytes = 0;
    if (!t.valid_for_tensor() || !detail::checked_mul(numel, t.bytes(), nbytes) ||
        nbytes != static_cast<std::int64_t>(bytes.size())) {
      fail(where) << "add_tensor: " << bytes.size() << " bytes do not hold a tensor of " << numel << " "
             << t << " elements";
      return 0;
    }
    const pool_marks m = marks();
    const_info c{const_kind::tensor};
    c.scalar = t.pack();
    c.dims_offset = add_dims(shape);
    c.ndim = static_cast<std::int64_t>(shape.size());
    while (layout_.bytes.size() % tensor_data_alignment != 0) layout_.bytes.push_back(0);
    c.data_offset = static_cast<std::int64_t>(layout_.bytes.size());
    c.data_size = nbytes;
    layout_.bytes.insert(layout_.bytes.end(), bytes.data(), bytes.data() + bytes.size());
    return intern(c, m);
  }
  constexpr std::int64_t add_tensor(dtype t, std::initializer_list<std::int64_t> shape,
                                    std::initializer_list<std::uint8_t> bytes, std::source_location where = std::source_location::current()) {
    return add_tensor(t, std::span<const std::int64_t>(shape.begin(), shape.size()),
                      std::span<const std::uint8_t>(bytes.begin(), bytes.size()), where);
  }
  /// A tensor constant from typed elements: add_tensor<float>({1, 2, 3, 4}, {2, 2}).
  template <class T>
    requires std::is_arithmetic_v<T>
  constexpr std::int64_t add_tensor(std::span<const T> data, std::span<const std::int64_t> shape, std::source_location where = std::source_location::current()) {
    std::vector<std::uint8_t> bytes;
    bytes.reserve(data.size() * sizeof(T));
    for (const T& x : data) {
      if constexpr (std::is_same_v<T, bool>) {
        bytes.push_back(x ? 1 : 0);
      } else {
        auto raw = std::bit_cast<std::array<std::uint8_t, sizeof(T)>>(x);
        if constexpr (std::endian::native == std::endian::big)
          for (std::size_t i = sizeof(T); i-- > 0;) bytes.push_back(raw[i]);
        else
          bytes.insert(bytes.end(), raw.begin(), raw.end());
      }
    }
    return add_tensor(dtype_of<T>(), shape, bytes, where);
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  constexpr std::int64_t add_tensor(std::initializer_list<T> data, std::initializer_list<std::int64_t> shape,
                                    std::source_location where = std::source_location::current()) {
    return add_tensor(std::span<const T>(data.begin(), data.size()),
                      std::span<const std::int64_t>(shape.begin(), shape.size()), where);
  }

  /// Adds any value that has a constant_traits specialization (integers, floating point, bool,
  /// dtype, device, strings here; rv::value, rv::shape and rv::tensor in runtime/constant.hpp).
  template <class T>
  constexpr std::int64_t add_constant(const T& v) {
    return constant_traits<std::remove_cvref_t<T>>::add(*this, v);
  }

  /// Records that a value could not become a constant (constant_traits for runtime values calls
  /// this); get() then reports it.
  constexpr void reject_constant(std::string_view what) {
    fail() << "add_constant: " << what
           << " cannot be a constant; constants are int64, float64, bool, dtype, device, shape, string or "
              "compact host tensors";
  }

  /// Records a failure found by code that drives the builder (the lowering layer): the builder
  /// stops, and finish() / get() / the compiler report `message`.
  constexpr void set_error(std::string_view message) { fail() << message; }

  /// Equal constants share one index unless this is switched off (as_cpp() does so to rebuild
  /// executables that contain duplicates).
  constexpr void set_constant_dedup(bool on) { dedup_ = on; }
  /// With formalization off, registers keep the numbers the program gives them and each register
  /// file is as large as the highest number used (as_cpp() uses this to rebuild executables whose
  /// registers are not in formalized order).
  constexpr void set_formalize(bool on) { formalize_ = on; }
  /// Gives the open function at least `n` registers, whatever formalization computes.
  constexpr void reserve_registers(std::int64_t n, std::source_location where = std::source_location::current()) {
    if (!in_function("reserve_registers", where)) return;
    reserved_registers_[current_u()] = n;
  }

  // ---- finishing -------------------------------------------------------------------------

  /// Formalizes and verifies a copy of what was built; from an rvalue builder, what was built
  /// itself (its constant pool is not copied).
  constexpr build_output finish() const& {
    build_output out;
    if (unfinished(out)) return out;
    out.layout = formalized();
    return verified(static_cast<build_output&&>(out));
  }
  constexpr build_output finish() && {
    build_output out;
    if (unfinished(out)) return out;
    out.layout = static_cast<basic_exec_builder&&>(*this).formalized();
    return verified(static_cast<build_output&&>(out));
  }

  /// What finish() verifies: a formalized copy of what was built, with register file sizes set,
  /// and no checks. build() takes its second run of a builder lambda from here, since the first
  /// verified the same program (each check costs compile time).
  constexpr exec_layout formalized() const& { return formalize_layout(exec_layout(layout_)); }
  constexpr exec_layout formalized() && { return formalize_layout(static_cast<exec_layout&&>(layout_)); }

  /// Makes room for `n` more bytes of tensor data in the constant pool, so that adding large
  /// tensors one by one does not grow (and copy) it again and again.
  constexpr void reserve_tensor_bytes(std::size_t n) { layout_.bytes.reserve(layout_.bytes.size() + n); }

  /// The finished executable; throws relaxvm::error (kind value) when building or verification
  /// failed (or calls RELAXVM_ON_ERROR without exceptions).
  template <class E = executable>
  E get() const& {
    return try_get<E>().value();
  }
  template <class E = executable>
  E get() && {
    return static_cast<basic_exec_builder&&>(*this).template try_get<E>().value();
  }
  /// The non-throwing form of get().
  template <class E = executable>
  result<E> try_get() const& {
    return to_result<E>(finish());
  }
  template <class E = executable>
  result<E> try_get() && {
    return to_result<E>(static_cast<basic_exec_builder&&>(*this).finish());
  }

 private:
  constexpr bool unfinished(build_output& out) const {
    if (failed_) {
      out.message << "exec_builder";
      // The call that failed, where one was given (a default-constructed location has no file).
      if (error_at_.line() != 0) out.message << " at " << error_at_.file_name() << ':' << error_at_.line();
      out.message << ": " << error_;
    } else if (current_ >= 0) {
      out.message << "exec_builder: function '" << layout_.view().name(current_u())
                  << "' is still open; end it (its scope object does) before finishing";
    }
    return !out.message.empty();
  }
  static constexpr build_output verified(build_output&& out) {
    out.report = verify(out.layout.view());
    if (!out.report.ok()) out.message << "invalid executable: " << out.report.message;
    return static_cast<build_output&&>(out);
  }
  template <class E>
  static result<E> to_result(build_output&& out) {
    if (!out.ok()) return error(error_kind::value, out.message.view());
    return E(std::move(out));
  }
  constexpr exec_layout formalize_layout(exec_layout&& l) const {
    if (formalize_) {
      formalize(l);
    } else {
      for (func_info& f : l.funcs)
        if (f.kind == func_kind::vm) f.register_file_size = used_register_file_size(l.view(), f);
    }
    for (std::size_t i = 0; i < l.funcs.size(); ++i)
      if (reserved_registers_[i] > l.funcs[i].register_file_size) l.funcs[i].register_file_size = reserved_registers_[i];
    return static_cast<exec_layout&&>(l);
  }

 public:
  /// False once a builder call has failed; finish() reports the first failure.
  constexpr bool ok() const { return !failed_; }
  /// What was built so far, before formalization.
  constexpr const exec_layout& layout() const { return layout_; }

 private:
  enum class entry_state : std::uint8_t { referenced, packed, defined };

  constexpr std::size_t current_u() const { return static_cast<std::size_t>(current_); }

  // The first failure is kept; later ones are written to a scratch text and dropped.
  constexpr detail::text& fail(std::source_location where = {}) {
    if (!failed_) {
      failed_ = true;
      error_at_ = where;
      return error_;
    }
    dropped_.clear();
    return dropped_;
  }
  // Names the function and instruction being emitted.
  constexpr detail::text& fail_here(std::source_location where) {
    detail::text& t = fail(where);
    t << "function '" << layout_.view().name(current_u()) << "', instruction " << next_instruction() << ": ";
    return t;
  }
  // (`what` is a const char*, not a string_view: making a string_view of a literal counts its
  // characters, a few constexpr steps each, on every instruction emitted.)
  constexpr bool in_function(const char* what, std::source_location where) {
    if (failed_) return false;
    if (current_ < 0) {
      fail(where) << what << " outside a function; open one with function(name, num_inputs) first";
      return false;
    }
    return true;
  }

  constexpr std::string_view chars_of(str_ref r) const {
    return std::string_view(layout_.chars.data() + r.offset, static_cast<std::size_t>(r.size));
  }
  constexpr std::int64_t find_function(std::string_view name) const {
    return functions_.find(detail::hash_chars(detail::hash_seed, name), [&](std::int64_t i) {
      return detail::same_chars(chars_of(layout_.funcs[static_cast<std::size_t>(i)].name), name);
    });
  }
  constexpr std::int64_t add_entry(std::string_view name, entry_state s) {
    // Hashed first: `name` may point into the character pool, which add_chars() may move.
    const std::uint64_t h = detail::hash_chars(detail::hash_seed, name);
    func_info f;
    f.name = layout_.add_chars(name);
    layout_.funcs.push_back(f);
    state_.push_back(s);
    reserved_registers_.push_back(0);
    const auto idx = static_cast<std::int64_t>(layout_.funcs.size()) - 1;
    functions_.insert(h, idx);
    return idx;
  }

  constexpr void begin_instruction() {
    layout_.instr_offset.push_back(static_cast<std::int64_t>(layout_.instr_data.size()));
  }
  constexpr void push(std::int64_t w) { layout_.instr_data.push_back(w); }


  constexpr std::int64_t add_scalar(const_kind k, std::int64_t v) {
    const_info c{k};
    c.scalar = v;
    return intern(c, marks());
  }
  struct pool_marks {
    std::size_t chars, i64s, bytes;
  };
  constexpr pool_marks marks() const { return {layout_.chars.size(), layout_.i64s.size(), layout_.bytes.size()}; }
  // A hash of what same_constant() compares.
  constexpr std::uint64_t hash_of(const const_info& c) const {
    std::uint64_t h = detail::hash_mix(detail::hash_seed, static_cast<std::uint64_t>(c.kind));
    h = detail::hash_mix(h, static_cast<std::uint64_t>(c.scalar));
    if (c.ndim == 0 && c.data_size == 0) return h;  // scalars
    h = detail::hash_mix(h, static_cast<std::uint64_t>(c.ndim));
    const std::int64_t* i64s = layout_.i64s.data();
    for (std::int64_t k = 0; k < c.ndim; ++k) h = detail::hash_mix(h, static_cast<std::uint64_t>(i64s[c.dims_offset + k]));
    if (c.kind == const_kind::string) return detail::hash_chars(h, chars_of({c.data_offset, c.data_size}));
    const std::uint8_t* bytes = layout_.bytes.data();
    for (std::int64_t k = 0; k < c.data_size; ++k) h = detail::hash_mix(h, bytes[c.data_offset + k]);
    return h;
  }
  // Adds `c`, whose data was just appended to the pools after `m`; if an equal constant exists,
  // the pools go back to `m` and the existing index is returned.
  // same_constant() within this layout.
  constexpr bool same_as(const const_info& a, const const_info& b) const {
    if (a.kind != b.kind || a.scalar != b.scalar || a.ndim != b.ndim || a.data_size != b.data_size) return false;
    const std::int64_t* i64s = layout_.i64s.data();
    for (std::int64_t k = 0; k < a.ndim; ++k)
      if (i64s[a.dims_offset + k] != i64s[b.dims_offset + k]) return false;
    if (a.kind == const_kind::string)
      return detail::same_chars(chars_of({a.data_offset, a.data_size}), chars_of({b.data_offset, b.data_size}));
    const std::uint8_t* bytes = layout_.bytes.data();
    for (std::int64_t k = 0; k < a.data_size; ++k)
      if (bytes[a.data_offset + k] != bytes[b.data_offset + k]) return false;
    return true;
  }
  constexpr std::int64_t intern(const const_info& c, pool_marks m) {
    const std::uint64_t h = hash_of(c);
    if (dedup_) {
      const std::int64_t i = constants_.find(
          h, [&](std::int64_t k) { return same_as(layout_.view().constant(static_cast<std::size_t>(k)), c); });
      if (i >= 0) {
        layout_.chars.resize(m.chars);
        layout_.i64s.resize(m.i64s);
        layout_.bytes.resize(m.bytes);
        return i;
      }
    }
    const std::int64_t i = layout_.add_constant(c);
    // Indexed only when shared: without dedup, equal constants (a Relay file's LoadConsti 1, again
    // and again) would pile up under one hash, and each insert would probe past all of them.
    if (dedup_) constants_.insert(h, i);
    return i;
  }
  constexpr std::int64_t add_dims(std::span<const std::int64_t> dims) {
    const auto off = static_cast<std::int64_t>(layout_.i64s.size());
    layout_.i64s.insert(layout_.i64s.end(), dims.data(), dims.data() + dims.size());
    return off;
  }
  exec_layout layout_;
  std::vector<entry_state> state_;              // parallel to layout_.funcs
  std::vector<std::int64_t> reserved_registers_;  // parallel to layout_.funcs
  detail::hash_index functions_;                 // layout_.funcs by name
  detail::hash_index constants_;                 // layout_.constants by value
  bool dedup_ = true;
  bool formalize_ = true;
  std::int64_t current_ = -1;       // the open function, or -1
  bool failed_ = false;             // a call has failed (error_ says how): a flag, as text::empty() costs constexpr steps
  detail::text error_;              // the first failure
  std::source_location error_at_;   // the builder call that made it
  detail::text dropped_;            // later failures
};

RELAXVM_EXTERN_TEMPLATE(class basic_exec_builder<void>)

// ---- constant_traits for the types the bytecode layer knows ----------------------------------

template <std::integral T>
  requires(!std::same_as<T, bool>)
struct constant_traits<T> {
  static constexpr std::int64_t add(exec_builder& b, T v) { return b.add_int(static_cast<std::int64_t>(v)); }
};
template <std::floating_point T>
struct constant_traits<T> {
  static constexpr std::int64_t add(exec_builder& b, T v) { return b.add_float(static_cast<double>(v)); }
};
template <>
struct constant_traits<bool> {
  static constexpr std::int64_t add(exec_builder& b, bool v) { return b.add_bool(v); }
};
template <>
struct constant_traits<dtype> {
  static constexpr std::int64_t add(exec_builder& b, dtype v) { return b.add_dtype(v); }
};
template <>
struct constant_traits<device> {
  static constexpr std::int64_t add(exec_builder& b, device v) { return b.add_device(v); }
};
template <>
struct constant_traits<std::string_view> {
  static constexpr std::int64_t add(exec_builder& b, std::string_view v) { return b.add_string(v); }
};
template <std::size_t N>
struct constant_traits<char[N]> {
  static constexpr std::int64_t add(exec_builder& b, const char (&v)[N]) {
    return b.add_string(std::string_view(v, N - 1));
  }
};

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_BUILDER_HPP
