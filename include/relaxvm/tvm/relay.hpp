// SPDX-License-Identifier: Apache-2.0
// Apache TVM v0.19.0's Relay VM executables (the bytes of vm::Executable::Save, the .ro files),
// read and translated at load time into relaxvm bytecode: each of the 21 Relay opcodes becomes
// Call/Ret/If/Goto and vm.builtin.* calls, so the result is an ordinary verified executable. The
// layout and the opcode mapping: docs/tvm.md, section "Relay".
#ifndef RELAXVM_TVM_RELAY_HPP
#define RELAXVM_TVM_RELAY_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../bytecode/builder.hpp"
#include "../bytecode/layout.hpp"
#include "../graph/params.hpp"
#include "../io/binary_reader.hpp"
#include "../io/binary_writer.hpp"
#include "../io/executable.hpp"
#include "../runtime/constant.hpp"
#include "../runtime/allocator.hpp"  // alloc_alignment
#include "dltensor.hpp"
#include "relax.hpp"  // vm_bytecode_magic, shared by both formats

namespace relaxvm::RELAXVM_ABI::tvm {

/// TVM_VERSION of v0.19.0: a Relay executable's header holds it and TVM's loader insists on it.
inline constexpr std::string_view relay_format_version = "0.19.0";

/// TVM's Relay VM opcodes (include/tvm/runtime/vm/bytecode.h), with their numbers in the file.
enum class relay_opcode : std::int64_t {
  move = 0, ret = 1, invoke = 2, invoke_closure = 3, invoke_packed = 4, alloc_tensor = 5, alloc_tensor_reg = 6,
  alloc_adt = 7, alloc_closure = 8, get_field = 9, if_ = 10, load_const = 11, go_to = 12, get_tag = 13,
  load_consti = 14, fatal = 15, alloc_storage = 16, shape_of = 17, reshape_tensor = 18, device_copy = 19,
  kill_register = 20,
};

/// The hash TVM stores ahead of each instruction and checks on load: dmlc::HashCombine folded over
/// the fields, starting from the opcode.
constexpr std::uint64_t relay_instruction_hash(std::int64_t opcode, std::span<const std::int64_t> fields) {
  auto key = static_cast<std::uint64_t>(opcode);
  for (std::int64_t f : fields) key ^= static_cast<std::uint64_t>(f) + 0x9e3779b9u + (key << 6) + (key >> 2);
  return key;
}

namespace detail {

inline constexpr std::string_view relay_loader = "load_relay";
inline constexpr std::string_view relay_opcode_names[] = {
    "Move", "Ret", "Invoke", "InvokeClosure", "InvokePacked", "AllocTensor", "AllocTensorReg",
    "AllocADT", "AllocClosure", "GetField", "If", "LoadConst", "Goto", "GetTag",
    "LoadConsti", "Fatal", "AllocStorage", "ShapeOf", "ReshapeTensor", "DeviceCopy", "KillRegister"};
// Fields after the opcode: the fixed ones, and which field (if any) counts the trailing ones.
struct relay_shape {
  std::size_t fixed;
  int count_field;  // -1: none
};
inline constexpr relay_shape relay_fields[] = {
    {2, -1}, {1, -1}, {3, 1}, {3, 1}, {3, 1}, {7, 5}, {7, -1}, {3, 1}, {3, 1}, {3, -1}, {4, -1},
    {3, -1}, {1, -1}, {2, -1}, {2, -1}, {0, -1}, {8, 6}, {2, -1}, {3, -1}, {4, -1}, {1, -1}};

// A DLDevice and a scope string; a constant's tag and a name's length; a function's
// three strings, params and device indexes; an instruction's count, hash and opcode.
inline constexpr std::size_t relay_min_device = 8 + 8;
inline constexpr std::size_t relay_min_constant = 4 + 8;
inline constexpr std::size_t relay_min_function = 8 + 3 * 8 + 8 + 8;
inline constexpr std::size_t relay_min_instruction = 3 * 8;

struct relay_constant {
  bool late_bound = false;
  std::string_view name;  // late-bound
  const_info info;        // inline: in relay_program::pool
  std::int64_t device_index = 0;
};
struct relay_function {
  std::string_view name;
  std::int64_t registers = 0;
  std::vector<std::string_view> params;
  std::vector<std::vector<std::int64_t>> code;  // opcode, fields...
  std::vector<std::size_t> offsets;             // of each instruction, for messages
};
struct relay_program {
  std::vector<device> devices;
  std::vector<std::string_view> globals;
  std::unordered_map<std::string_view, std::size_t> global_index;  // name -> index in globals
  std::vector<relay_constant> constants;
  exec_layout pool;  // the inline constants' dimensions and bytes
  std::vector<std::string_view> primitives;
  std::vector<relay_function> funcs;  // in global index order
};

/// A decimal string TVM writes with std::to_string, in [0, max].
inline bool parse_decimal(std::string_view s, std::int64_t max, std::int64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > max) return false;
  out = v;
  return true;
}

inline status read_relay_header(reader& r, relay_program& p) {
  std::uint64_t magic = 0;
  std::string_view version;
  if (!r.u64(magic)) return r.error();
  if (magic != vm_bytecode_magic) {
    relaxvm::detail::text& m = r.fail_text();
    m << "has magic ";
    append_hex(m, magic);
    m << " at offset 0, not TVM's VM bytecode magic ";
    append_hex(m, vm_bytecode_magic);
    m << ": this is not a TVM Relay executable (Executable::Save)";
    return r.error();
  }
  if (!r.str(version)) return r.error();
  if (version != relay_format_version) {
    relaxvm::detail::text& m = r.fail_text();
    append_quoted(m << "has TVM version ", version);
    m << " at offset 8; this reader reads TVM v0.19.0's Relay executables ('" << relay_format_version << "')";
    return r.error();
  }
  std::uint64_t n = 0;
  if (!r.count(n, relay_min_device)) return r.error();
  for (std::uint64_t i = 0; i < n; ++i) {
    r.item = relaxvm::detail::cat("virtual device ", i, " (offset ", r.position(), ")");
    std::int32_t type = 0, id = 0;
    std::string_view scope;
    if (!r.i32(type) || !r.i32(id) || !r.str(scope)) return r.error();
    if (type != kDLCPU || id < 0) {
      r.fail_text() << "is device type " << type << " id " << id
                    << "; relaxvm runs Relay executables on CPU devices (type 1) only";
      return r.error();
    }
    if (!scope.empty() && scope != "global") {
      relaxvm::detail::text& m = r.fail_text();
      append_quoted(m << "has memory scope ", scope);
      m << "; relaxvm has 'global' only";
      return r.error();
    }
    p.devices.push_back(device::cpu(id));
  }
  r.item.clear();
  std::int32_t host = 0;
  const std::size_t host_at = r.position();
  if (!r.i32(host)) return r.error();
  if (host < 0 || static_cast<std::size_t>(host) >= p.devices.size()) {
    r.fail_text() << "has host device index " << host << " at offset " << host_at << " but " << p.devices.size()
                  << " virtual devices";
    return r.error();
  }
  return {};
}

inline status read_relay_tables(reader& r, relay_program& p) {
  std::uint64_t n = 0;
  r.item = relaxvm::detail::cat("the global names");
  if (!r.count(n, 8)) return r.error();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string_view g;
    if (!r.str(g)) return r.error();
    r.item = relaxvm::detail::cat("global ", i);
    if (g.empty() || g.starts_with("vm.builtin.")) {
      relaxvm::detail::text& m = r.fail_text();
      append_quoted(m << "is named ", g);
      m << "; a Relay function needs a name, and vm.builtin.* names are relaxvm's builtins";
      return r.error();
    }
    if (!p.global_index.emplace(g, p.globals.size()).second) {
      append_quoted(r.fail_text() << "repeats the name ", g);
      return r.error();
    }
    p.globals.push_back(g);
  }
  r.item = relaxvm::detail::cat("the constant count");
  if (!r.count(n, relay_min_constant)) return r.error();
  for (std::uint64_t i = 0; i < n; ++i) {
    r.item = relaxvm::detail::cat("constant ", i, " (offset ", r.position(), ")");
    std::uint32_t tag = 0;
    relay_constant c;
    if (!r.u32(tag)) return r.error();
    if (tag == 0) {
      c.info.kind = const_kind::tensor;
      if (!read_dltensor(r, p.pool, c.info)) return r.error();
    } else if (tag == 1) {
      c.late_bound = true;
      if (!r.str(c.name)) return r.error();
    } else {
      r.fail_text() << "has tag " << tag << "; TVM's are 0 (an NDArray) and 1 (late-bound, by name)";
      return r.error();
    }
    p.constants.push_back(c);
  }
  r.item = relaxvm::detail::cat("the constants' device indexes");
  if (!r.count(n, 8)) return r.error();
  if (n != p.constants.size()) {
    r.fail_text() << "has " << n << " entries for " << p.constants.size() << " constants";
    return r.error();
  }
  for (relay_constant& c : p.constants) {
    if (!r.i64(c.device_index)) return r.error();
    if (c.device_index < 0 || static_cast<std::uint64_t>(c.device_index) >= p.devices.size()) {
      r.fail_text() << "has device index " << c.device_index << " but " << p.devices.size() << " virtual devices";
      return r.error();
    }
  }
  r.item = relaxvm::detail::cat("the primitive names");
  if (!r.count(n, 8)) return r.error();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string_view s;
    if (!r.str(s)) return r.error();
    r.item = relaxvm::detail::cat("primitive ", i);
    if (s.empty() || s.starts_with("vm.builtin.")) {
      relaxvm::detail::text& m = r.fail_text();
      append_quoted(m << "is named ", s);
      m << "; a primitive needs a name, and vm.builtin.* names are relaxvm's builtins";
      return r.error();
    }
    if (p.global_index.contains(s)) {
      append_quoted(r.fail_text() << "has the name of a Relay function, ", s);
      return r.error();
    }
    p.primitives.push_back(s);
  }
  // Op attributes (map<u64, map<string, string>>): read, then unused; relaxvm keeps no op attributes.
  r.item = relaxvm::detail::cat("the op attributes");
  if (!r.count(n, 16)) return r.error();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t key = 0, m = 0;
    if (!r.u64(key) || !r.count(m, 16)) return r.error();
    for (std::uint64_t k = 0; k < m; ++k) {
      std::string_view a, b;
      if (!r.str(a) || !r.str(b)) return r.error();
    }
  }
  r.item.clear();
  return {};
}

inline status read_relay_code(reader& r, relay_program& p) {
  std::uint64_t n = 0;
  if (!r.count(n, relay_min_function)) return r.error();
  if (n != p.globals.size()) {
    r.fail_text() << "has " << n << " functions for " << p.globals.size() << " global names";
    return r.error();
  }
  p.funcs.resize(static_cast<std::size_t>(n));
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::size_t at = r.position();
    r.item = relaxvm::detail::cat("function ", i, " (offset ", at, ")");
    std::uint64_t strings = 0;
    if (!r.count(strings, 8)) return r.error();
    if (strings != 3) {
      r.fail_text() << "starts with " << strings << " strings; TVM writes 3 (name, register file size, instruction count)";
      return r.error();
    }
    std::string_view name, regs, count;
    if (!r.str(name) || !r.str(regs) || !r.str(count)) return r.error();
    const auto found = p.global_index.find(name);
    const std::size_t index = found == p.global_index.end() ? p.globals.size() : found->second;
    if (index == p.globals.size() || seen[index]) {
      relaxvm::detail::text& m = r.fail_text();
      append_quoted(m << "is named ", name);
      m << (index == p.globals.size() ? ", which no global has" : ", as an earlier function is");
      return r.error();
    }
    seen[index] = true;
    relay_function& f = p.funcs[index];
    f.name = name;
    std::int64_t instructions = 0;
    if (!parse_decimal(regs, max_register_file_size - 2, f.registers)) {
      relaxvm::detail::text& m = r.fail_text();
      append_quoted(m << "has register file size ", regs);
      m << "; expected a decimal number up to " << (max_register_file_size - 2);
      return r.error();
    }
    if (!parse_decimal(count, static_cast<std::int64_t>(r.remaining() / relay_min_instruction), instructions)) {
      relaxvm::detail::text& m = r.fail_text();
      append_quoted(m << "has instruction count ", count);
      m << ", not a decimal number that the " << r.remaining() << " bytes left can hold";
      return r.error();
    }
    r.item = relaxvm::detail::cat("function '", name.substr(0, 64), "'");
    std::uint64_t np = 0;
    if (!r.count(np, 8)) return r.error();
    if (static_cast<std::int64_t>(np) > f.registers) {
      r.fail_text() << "has " << np << " parameters but " << f.registers << " registers";
      return r.error();
    }
    for (std::uint64_t k = 0; k < np; ++k) {
      std::string_view s;
      if (!r.str(s)) return r.error();
      f.params.push_back(s);
    }
    std::uint64_t nd = 0;
    if (!r.count(nd, 8)) return r.error();
    if (nd != np) {
      r.fail_text() << "has " << nd << " parameter device indexes for " << np << " parameters";
      return r.error();
    }
    for (std::uint64_t k = 0; k < nd; ++k) {
      std::int64_t d = 0;
      if (!r.i64(d)) return r.error();
      if (d < 0 || static_cast<std::uint64_t>(d) >= p.devices.size()) {
        r.fail_text() << "has device index " << d << " for parameter " << k << " but " << p.devices.size()
                      << " virtual devices";
        return r.error();
      }
    }
    for (std::int64_t pc = 0; pc < instructions; ++pc) {
      const std::size_t iat = r.position();
      r.item = relaxvm::detail::cat("function '", name.substr(0, 64), "' instruction ", pc, " (offset ", iat, ")");
      std::uint64_t words = 0;
      if (!r.count(words, 8)) return r.error();
      if (words < 2) {
        r.fail_text() << "has " << words << " words; an instruction has its hash and opcode at least";
        return r.error();
      }
      std::int64_t hash = 0;
      std::vector<std::int64_t> code(static_cast<std::size_t>(words - 1));
      if (!r.i64(hash)) return r.error();
      for (std::int64_t& w : code)
        if (!r.i64(w)) return r.error();
      const std::int64_t op = code[0];
      if (op < 0 || op > static_cast<std::int64_t>(relay_opcode::kill_register)) {
        r.fail_text() << "has opcode " << op << "; TVM v0.19.0's are 0 to 20";
        return r.error();
      }
      const std::span<const std::int64_t> fields = std::span<const std::int64_t>(code).subspan(1);
      const std::uint64_t expected = relay_instruction_hash(op, fields);
      if (static_cast<std::uint64_t>(hash) != expected) {
        r.fail_text() << "(" << relay_opcode_names[op] << ") has hash " << static_cast<std::uint64_t>(hash)
                      << " but its fields hash to " << expected;
        return r.error();
      }
      // The fixed fields, then as many as the count field says (InvokePacked's arity covers inputs
      // and outputs; AllocTensor's and AllocStorage's ndim counts the shape).
      const relay_shape s = relay_fields[op];
      if (fields.size() < s.fixed) {
        r.fail_text() << "(" << relay_opcode_names[op] << ") has " << fields.size() << " fields; it needs " << s.fixed
                      << " at least";
        return r.error();
      }
      if (s.count_field >= 0) {
        const std::int64_t extra = fields[static_cast<std::size_t>(s.count_field)];
        if (extra < 0 || static_cast<std::uint64_t>(extra) != fields.size() - s.fixed) {
          r.fail_text() << "(" << relay_opcode_names[op] << ") says its field " << s.count_field << " counts " << extra
                        << " trailing fields, but it has " << (fields.size() - s.fixed);
          return r.error();
        }
      } else if (fields.size() != s.fixed) {
        r.fail_text() << "(" << relay_opcode_names[op] << ") has " << fields.size() << " fields; it has " << s.fixed;
        return r.error();
      }
      f.code.push_back(std::move(code));
      f.offsets.push_back(iat);
    }
  }
  r.item.clear();
  if (!r.at_end()) return r.error();
  return {};
}

/// Translates one Relay program into relaxvm bytecode.
class relay_translator {
 public:
  relay_translator(relay_program& p, std::span<const graph::named_tensor> params) : p_(p), params_(params) {
    // One constant per LoadConsti / AllocTensor: comparing each with all before it would make
    // loading quadratic in the file.
    b_.set_constant_dedup(false);
  }

  result<executable> run() {
    RELAXVM_TRY(add_constants());
    for (std::size_t i = 0; i < p_.funcs.size(); ++i) RELAXVM_TRY(function(p_.funcs[i]));
    // Building the executable is when loading takes the most memory: the program read from the
    // file is no longer needed then.
    p_ = relay_program();
    f_ = nullptr;
    consts_ = std::vector<std::int64_t>();
    jumps_ = std::vector<jump_fix>();
    result<executable> exe = b_.try_get<executable>();
    if (!exe.ok()) return relaxvm::detail::value_error(relay_loader, ": ", exe.error().message());
    return exe;
  }

 private:
  status add_constants() {
    // Late-bound constants by name through a hash table (the last of a repeated name, as before),
    // and each parameter added once however many constants name it: a scan of the params per
    // constant was quadratic, and a copy per constant multiplied a large parameter's bytes.
    std::unordered_map<std::string_view, std::size_t> by_name;
    by_name.reserve(params_.size());
    for (std::size_t k = 0; k < params_.size(); ++k) by_name.insert_or_assign(std::string_view(params_[k].name), k);
    std::vector<std::int64_t> added(params_.size(), -1);  // the constant made for each parameter
    for (std::size_t i = 0; i < p_.constants.size(); ++i) {
      const relay_constant& c = p_.constants[i];
      if (!c.late_bound) {
        const exec_view v = p_.pool.view();
        const auto dims = v.i64s.subspan(static_cast<std::size_t>(c.info.dims_offset), static_cast<std::size_t>(c.info.ndim));
        const auto data = v.bytes.subspan(static_cast<std::size_t>(c.info.data_offset), static_cast<std::size_t>(c.info.data_size));
        consts_.push_back(b_.add_tensor(dtype::unpack(c.info.scalar), dims, data));
        continue;
      }
      const auto found = by_name.find(c.name);
      if (found == by_name.end())
        return relaxvm::detail::value_error(relay_loader, ": constant ", i, " is late-bound as '", c.name.substr(0, 64), "', and ",
                                            params_.empty() ? "no params file was given"
                                                            : "the params file given does not hold it",
                                            " (load_relay(bytes, params_bytes) with the file TVM's "
                                            "MoveLateBoundConstantsToFile wrote)");
      std::int64_t& made = added[found->second];
      if (made < 0) made = constant_traits<tensor>::add(b_, params_[found->second].value);
      consts_.push_back(made);
    }
    return {};
  }

  template <class... Parts>
  error fail(const Parts&... parts) const {
    return relaxvm::detail::value_error(relay_loader, ": function '", f_->name.substr(0, 64), "' instruction ", pc_, " (",
                                        relay_opcode_names[op_], ", offset ", f_->offsets[static_cast<std::size_t>(pc_)],
                                        "): ", parts...);
  }
  result<arg> reg(std::int64_t r, std::string_view what) const {
    if (r < 0 || r >= f_->registers) return fail(what, " register ", r, " is out of the register file (", f_->registers, ")");
    return arg::reg(r);
  }
  result<std::int64_t> index(std::int64_t i, std::size_t n, std::string_view what) const {
    if (i < 0 || static_cast<std::uint64_t>(i) >= n) return fail(what, " index ", i, " is out of range (", n, ")");
    return i;
  }
  result<std::vector<arg>> regs(std::span<const std::int64_t> rs, std::string_view what) const {
    std::vector<arg> out;
    out.reserve(rs.size());
    for (std::int64_t r : rs) {
      RELAXVM_TRY_ASSIGN(arg a, reg(r, what));
      out.push_back(a);
    }
    return out;
  }
  arg dtype_const(std::int64_t code, std::int64_t bits, std::int64_t lanes) {
    return b_.c(b_.add_dtype(dtype(static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits),
                                   static_cast<std::uint16_t>(lanes))));
  }
  result<arg> checked_dtype(std::int64_t code, std::int64_t bits, std::int64_t lanes) {
    if (code < 0 || code > 255 || bits < 1 || bits > 255 || lanes < 1 || lanes > 65535 ||
        !dtype(static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), static_cast<std::uint16_t>(lanes)).valid_for_tensor())
      return fail("dtype (code ", code, ", bits ", bits, ", lanes ", lanes, ") is not a tensor element type");
    return dtype_const(code, bits, lanes);
  }
  result<arg> checked_shape(std::span<const std::int64_t> dims) {
    for (std::int64_t d : dims)
      if (d < 0) return fail("the shape has dimension ", d);
    return b_.c(b_.add_shape(dims));
  }
  result<arg> checked_device(std::int64_t i) {
    RELAXVM_TRY(index(i, p_.devices.size(), "virtual device"));
    return arg::imm(-1);  // every virtual device is a CPU: the VM's host device
  }
  void jump(std::int64_t word, std::int64_t relay_offset) {
    jumps_.push_back({b_.next_instruction() - 1, word, pc_ + relay_offset, pc_});
  }

  status function(const relay_function& f) {
    f_ = &f;
    const std::int64_t n = static_cast<std::int64_t>(f.code.size());
    scratch_ = arg::reg(f.registers);
    scratch2_ = arg::reg(f.registers + 1);
    b_.begin_function(f.name, static_cast<std::int64_t>(f.params.size()), f.params);
    std::vector<std::int64_t> start(static_cast<std::size_t>(n));
    jumps_.clear();
    for (pc_ = 0; pc_ < n; ++pc_) {
      start[static_cast<std::size_t>(pc_)] = b_.next_instruction();
      const std::vector<std::int64_t>& code = f.code[static_cast<std::size_t>(pc_)];
      op_ = code[0];
      RELAXVM_TRY(instruction(std::span<const std::int64_t>(code).subspan(1)));
    }
    for (const jump_fix& j : jumps_) {
      if (j.target < 0 || j.target >= n) {
        pc_ = j.relay_pc;
        op_ = f.code[static_cast<std::size_t>(pc_)][0];
        return fail("jumps to instruction ", j.target, ", outside the function's ", n, " instructions");
      }
      b_.patch(j.instr, j.word, start[static_cast<std::size_t>(j.target)] - j.instr);
    }
    b_.end_function();
    return {};
  }

  status instruction(std::span<const std::int64_t> x) {
    const auto rest = [&](std::size_t from) { return x.subspan(from); };
    switch (static_cast<relay_opcode>(op_)) {
      case relay_opcode::move: {  // from, dst
        RELAXVM_TRY_ASSIGN(arg from, reg(x[0], "the source"));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[1], "the destination"));
        b_.emit_call("vm.builtin.copy", {from}, dst);
        break;
      }
      case relay_opcode::ret: {  // result
        RELAXVM_TRY_ASSIGN(arg r, reg(x[0], "the result"));
        b_.emit_ret(r);
        break;
      }
      case relay_opcode::invoke: {  // func_index, num_args, dst, args...
        RELAXVM_TRY_ASSIGN(std::int64_t fi, index(x[0], p_.funcs.size(), "function"));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[2], "the destination"));
        RELAXVM_TRY_ASSIGN(std::vector<arg> args, regs(rest(3), "an argument"));
        const relay_function& callee = p_.funcs[static_cast<std::size_t>(fi)];
        if (args.size() != callee.params.size())
          return fail("calls '", callee.name.substr(0, 64), "' with ", args.size(), " arguments; it takes ", callee.params.size());
        b_.emit_call(callee.name, args, dst);
        break;
      }
      case relay_opcode::invoke_closure: {  // closure, num_args, dst, args...
        RELAXVM_TRY_ASSIGN(arg clo, reg(x[0], "the closure"));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[2], "the destination"));
        RELAXVM_TRY_ASSIGN(std::vector<arg> args, regs(rest(3), "an argument"));
        args.insert(args.begin(), {b_.vm_state(), clo});
        b_.emit_call("vm.builtin.invoke_closure", args, dst);
        break;
      }
      case relay_opcode::invoke_packed: {  // packed_index, arity, output_size, args (inputs, then outputs)
        RELAXVM_TRY_ASSIGN(std::int64_t pi, index(x[0], p_.primitives.size(), "primitive"));
        if (x[2] < 0 || x[2] > x[1]) return fail("output count ", x[2], " is not within its arity ", x[1]);
        RELAXVM_TRY_ASSIGN(std::vector<arg> args, regs(rest(3), "an argument"));
        // Through vm.builtin.invoke_packed, which passes a tuple's fields in its place, as TVM's VM
        // does: the arity counts registers, and whether one holds a tuple is known only when run.
        args.insert(args.begin(), {b_.vm_state(), b_.f(p_.primitives[static_cast<std::size_t>(pi)]), b_.imm(x[2])});
        b_.emit_call("vm.builtin.invoke_packed", args, b_.void_arg());
        break;
      }
      case relay_opcode::alloc_tensor: {  // storage, offset, code, bits, lanes, ndim, dst, shape...
        RELAXVM_TRY_ASSIGN(arg st, reg(x[0], "the storage"));
        RELAXVM_TRY_ASSIGN(arg off, reg(x[1], "the offset"));
        RELAXVM_TRY_ASSIGN(arg t, checked_dtype(x[2], x[3], x[4]));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[6], "the destination"));
        RELAXVM_TRY_ASSIGN(arg s, checked_shape(rest(7)));
        b_.emit_call("vm.builtin.make_prim_value", {off, b_.imm(1), b_.imm(0)}, scratch_);
        b_.emit_call("vm.builtin.alloc_tensor", {st, scratch_, s, t}, dst);
        break;
      }
      case relay_opcode::alloc_tensor_reg: {  // storage, offset, shape register, code, bits, lanes, dst
        RELAXVM_TRY_ASSIGN(arg st, reg(x[0], "the storage"));
        RELAXVM_TRY_ASSIGN(arg off, reg(x[1], "the offset"));
        RELAXVM_TRY_ASSIGN(arg sr, reg(x[2], "the shape"));
        RELAXVM_TRY_ASSIGN(arg t, checked_dtype(x[3], x[4], x[5]));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[6], "the destination"));
        b_.emit_call("vm.builtin.make_prim_value", {off, b_.imm(1), b_.imm(0)}, scratch_);
        b_.emit_call("vm.builtin.tensor_to_shape", {sr}, scratch2_);
        b_.emit_call("vm.builtin.alloc_tensor", {st, scratch_, scratch2_, t}, dst);
        break;
      }
      case relay_opcode::alloc_adt: {  // tag, num_fields, dst, fields...
        if (x[0] < INT32_MIN || x[0] > INT32_MAX) return fail("constructor tag ", x[0], " does not fit int32");
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[2], "the destination"));
        RELAXVM_TRY_ASSIGN(std::vector<arg> args, regs(rest(3), "a field"));
        args.insert(args.begin(), b_.imm(x[0]));
        b_.emit_call("vm.builtin.make_adt", args, dst);
        break;
      }
      case relay_opcode::alloc_closure: {  // func_index, num_free_vars, dst, free vars...
        RELAXVM_TRY_ASSIGN(std::int64_t fi, index(x[0], p_.funcs.size(), "function"));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[2], "the destination"));
        RELAXVM_TRY_ASSIGN(std::vector<arg> args, regs(rest(3), "a captured"));
        const relay_function& callee = p_.funcs[static_cast<std::size_t>(fi)];
        if (args.size() > callee.params.size())
          return fail("captures ", args.size(), " values for '", callee.name.substr(0, 64), "', which has ",
                      callee.params.size(), " parameters");
        if (args.empty()) {
          b_.emit_call("vm.builtin.make_closure", {b_.f(callee.name)}, dst);
          break;
        }
        // Relay passes captured values first, make_closure's closures last: the closure calls
        // vm.builtin.call_captured_first, which puts them first. (A function per callee and
        // captured count did this before: as large as the callee's parameters, for each count.)
        const std::int64_t k = static_cast<std::int64_t>(args.size());
        args.insert(args.begin(), b_.f("vm.builtin.call_captured_first"));
        args.push_back(b_.f(callee.name));
        args.push_back(b_.imm(k));
        b_.emit_call("vm.builtin.make_closure", args, dst);
        break;
      }
      case relay_opcode::get_field: {  // object, field_index, dst
        RELAXVM_TRY_ASSIGN(arg obj, reg(x[0], "the object"));
        if (x[1] < 0 || x[1] > INT32_MAX) return fail("field index ", x[1], " is out of range");
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[2], "the destination"));
        b_.emit_call("vm.builtin.get_field", {obj, b_.imm(x[1])}, dst);
        break;
      }
      case relay_opcode::if_: {  // test, target, true_offset, false_offset
        RELAXVM_TRY_ASSIGN(arg test, reg(x[0], "the test"));
        RELAXVM_TRY_ASSIGN(arg target, reg(x[1], "the target"));
        if (!offset_ok(x[2]) || !offset_ok(x[3])) return fail("offsets ", x[2], " and ", x[3], " leave the function");
        b_.emit_call("vm.builtin.scalar_eq", {test, target}, scratch_);
        b_.emit_if(scratch_, 1);
        jump(2, x[3]);
        if (x[2] != 1) {  // the true branch is usually the next instruction: no goto then
          b_.emit_goto(1);
          jump(1, x[2]);
        }
        break;
      }
      case relay_opcode::go_to: {  // pc_offset
        if (!offset_ok(x[0])) return fail("offset ", x[0], " leaves the function");
        b_.emit_goto(1);
        jump(1, x[0]);
        break;
      }
      case relay_opcode::load_const: {  // const_index, device_index, dst
        RELAXVM_TRY_ASSIGN(std::int64_t ci, index(x[0], consts_.size(), "constant"));
        RELAXVM_TRY(checked_device(x[1]));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[2], "the destination"));
        b_.emit_call("vm.builtin.copy", {b_.c(consts_[static_cast<std::size_t>(ci)])}, dst);
        break;
      }
      case relay_opcode::get_tag: {  // object, dst
        RELAXVM_TRY_ASSIGN(arg obj, reg(x[0], "the object"));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[1], "the destination"));
        b_.emit_call("vm.builtin.get_tag_tensor", {obj}, dst);  // an int32 tensor [1], as TVM's
        break;
      }
      case relay_opcode::load_consti: {  // value, dst: an int64 tensor of one element, as TVM's is a tensor
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[1], "the destination"));
        const std::int64_t v = x[0];
        b_.emit_call("vm.builtin.copy", {b_.c(b_.add_tensor<std::int64_t>({v}, {1}))}, dst);
        break;
      }
      case relay_opcode::fatal:
        b_.emit_call("vm.builtin.fatal", {});
        b_.emit_ret(b_.void_arg());  // never reached; ends the block for the verifier
        break;
      case relay_opcode::alloc_storage: {  // size, alignment, code, bits, lanes, device, ndim, dst, shape...
        if (x[1] < 1 || x[1] > static_cast<std::int64_t>(alloc_alignment) || (x[1] & (x[1] - 1)) != 0)
          return fail("alignment ", x[1], " is not a power of two up to relaxvm's ", alloc_alignment);
        RELAXVM_TRY_ASSIGN(arg t, checked_dtype(x[2], x[3], x[4]));
        RELAXVM_TRY_ASSIGN(arg dev, checked_device(x[5]));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[7], "the destination"));
        if (x[6] > 0) {  // a static shape; field 0 is then whatever TVM's union held (ignored)
          RELAXVM_TRY_ASSIGN(arg s, checked_shape(rest(8)));
          b_.emit_call("vm.builtin.alloc_storage", {b_.vm_state(), s, dev, t}, dst);
        } else {  // a byte count in a register
          RELAXVM_TRY_ASSIGN(arg size, reg(x[0], "the size"));
          b_.emit_call("vm.builtin.tensor_to_shape", {size}, scratch_);
          b_.emit_call("vm.builtin.alloc_storage", {b_.vm_state(), scratch_, dev, dtype_const(kDLUInt, 8, 1)}, dst);
        }
        break;
      }
      case relay_opcode::shape_of: {  // tensor, dst: an int64 tensor, as TVM's
        RELAXVM_TRY_ASSIGN(arg t, reg(x[0], "the tensor"));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[1], "the destination"));
        b_.emit_call("vm.builtin.shape_of", {t}, scratch_);
        b_.emit_call("vm.builtin.shape_to_tensor", {scratch_}, dst);
        break;
      }
      case relay_opcode::reshape_tensor: {  // tensor, newshape, dst
        RELAXVM_TRY_ASSIGN(arg t, reg(x[0], "the tensor"));
        RELAXVM_TRY_ASSIGN(arg s, reg(x[1], "the new shape"));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[2], "the destination"));
        b_.emit_call("vm.builtin.tensor_to_shape", {s}, scratch_);
        b_.emit_call("vm.builtin.reshape", {t, scratch_}, dst);
        break;
      }
      case relay_opcode::device_copy: {  // src, src_device_index, dst_device_index, dst
        RELAXVM_TRY_ASSIGN(arg src, reg(x[0], "the source"));
        RELAXVM_TRY(checked_device(x[1]));
        RELAXVM_TRY(checked_device(x[2]));
        RELAXVM_TRY_ASSIGN(arg dst, reg(x[3], "the destination"));
        // Every virtual device is a CPU, and the VM's host is one: copy there.
        b_.emit_call("vm.builtin.to_device", {b_.vm_state(), src, b_.imm(kDLCPU), b_.imm(0)}, dst);
        break;
      }
      case relay_opcode::kill_register: {  // dst
        RELAXVM_TRY_ASSIGN(arg r, reg(x[0], "the killed"));
        b_.emit_call("vm.builtin.null_value", {}, r);
        break;
      }
    }
    if (!b_.ok()) return fail(b_.finish().message.view());
    return {};
  }

  bool offset_ok(std::int64_t off) const {
    const auto n = static_cast<std::int64_t>(f_->code.size());
    return off > -n - 1 && off < n + 1;  // then pc + off cannot overflow; range is checked when patching
  }

  struct jump_fix {
    std::int64_t instr, word, target, relay_pc = 0;
  };
  relay_program& p_;  // emptied once translated
  std::span<const graph::named_tensor> params_;
  exec_builder b_;
  std::vector<std::int64_t> consts_;
  std::vector<jump_fix> jumps_;
  const relay_function* f_ = nullptr;
  std::int64_t pc_ = 0, op_ = 0;
  arg scratch_, scratch2_;
};

inline result<executable> load_relay_impl(std::span<const std::byte> bytes, std::span<const graph::named_tensor> params) {
  relay_program p;
  const std::size_t end = bytes.size();
  reader header(bytes, 0, end, "header", relay_loader);
  RELAXVM_TRY(read_relay_header(header, p));
  reader tables(bytes, header.position(), end, "tables", relay_loader);
  RELAXVM_TRY(read_relay_tables(tables, p));
  reader code(bytes, tables.position(), end, "code", relay_loader);
  RELAXVM_TRY(read_relay_code(code, p));
  return relay_translator(p, params).run();
}

}  // namespace detail

/// Reads a TVM v0.19.0 Relay VM executable (the bytes Executable::Save wrote) and translates it into
/// a verified relaxvm executable. Every malformed, truncated or hostile input is an error (kind
/// value) naming what and where; a late-bound constant is an error naming it (use the overload with
/// the params file).
inline result<executable> load_relay(std::span<const std::byte> bytes) { return detail::load_relay_impl(bytes, {}); }

/// The same, with the late-bound constants of `params_bytes` (the params file TVM's
/// MoveLateBoundConstantsToFile wrote; relaxvm/graph/params.hpp reads it).
inline result<executable> load_relay(std::span<const std::byte> bytes, std::span<const std::byte> params_bytes) {
  result<std::vector<graph::named_tensor>> params = graph::load_params(params_bytes);
  if (!params.ok()) return relaxvm::detail::value_error("load_relay: the late-bound constants: ", params.error().message());
  return detail::load_relay_impl(bytes, *params);
}

}  // namespace relaxvm::tvm

#endif  // RELAXVM_TVM_RELAY_HPP
