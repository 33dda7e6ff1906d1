// SPDX-License-Identifier: Apache-2.0
// What a program's own allocations need, learnt when it links (vm/link.hpp):
//
// - check_constant_views: every vm.builtin.alloc_tensor whose storage register was set once, by a
//   vm.builtin.alloc_storage of constant shape and dtype, and whose offset, shape and dtype are
//   constants too, must fit that storage (and be aligned for its dtype); otherwise it is a link
//   error naming the instruction, instead of an error when the program runs.
// - arena_bytes: an upper bound of the tensor memory one invocation of any function asks the
//   VM's devices for through the program's own allocations (alloc_storage, alloc_shape_heap),
//   each rounded up to alloc_alignment as an arena gives it (a buffer aligned to 64 bytes).
//   Known (not unknown_bytes) only when every such allocation has a constant size, no function
//   jumps back (each instruction runs at most once per call of its function), nothing recurses,
//   no function is passed as a value, and the program calls none of the builtins whose
//   allocations depend on their arguments' values (shape_to_tensor, ensure_zero_offset,
//   to_device). What kernels allocate from the VM's devices themselves is not counted.
// - object_bytes: an upper bound of the object memory (firmware mode's set_object_memory, in
//   blocks of 32 to 512 bytes) that the program's own objects take: the constants static_vm makes
//   when it is created, and the objects one invocation of any vm function makes (storages, tensors,
//   shapes, tuples), as if none were freed before it returns. Known under the same conditions as
//   arena_bytes (no backward jump, no recursion, no function passed as a value), and when the
//   table entry of every function the program calls says what it makes (runtime/table.hpp,
//   object_rule: the builtins' entries do, from their arguments; a typed kernel returning
//   nothing, a number, a dtype or a device makes no object the VM keeps). The builtins are known
//   by their entries, not their names: a table binding a vm.builtin name to a function of its own
//   gets that function's rule. Not counted: objects kernels make themselves (temporaries as well
//   as kept ones), and what the caller makes (its arguments, its allocators).
#ifndef RELAXVM_VM_STORAGE_FACTS_HPP
#define RELAXVM_VM_STORAGE_FACTS_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "../base/checked_math.hpp"
#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/diagnostic.hpp"
#include "../base/dtype.hpp"
#include "../bytecode/facts.hpp"
#include "../bytecode/instruction.hpp"
#include "../bytecode/layout.hpp"
#include "../runtime/allocator.hpp"  // storage_object
#include "../runtime/object_memory.hpp"
#include "../runtime/shape.hpp"
#include "../runtime/string.hpp"
#include "../runtime/tensor.hpp"
#include "../runtime/tuple.hpp"

namespace relaxvm::RELAXVM_ABI::detail {

inline constexpr std::int64_t unknown_bytes = -1;
/// The arena's alignment of every block (runtime/allocator.hpp's alloc_alignment).
inline constexpr std::int64_t storage_alignment = 64;

/// The bytes of a shape constant `shape_arg` of dtype constant `dtype_arg`; false when either is
/// not a constant of that kind, or the size overflows.
constexpr bool constant_nbytes(const exec_view& v, arg shape_arg, arg dtype_arg, std::int64_t& nbytes,
                               std::int64_t& element) {
  if (shape_arg.kind() != arg_kind::const_idx || dtype_arg.kind() != arg_kind::const_idx) return false;
  const const_info s = v.constant(static_cast<std::size_t>(shape_arg.value()));
  const const_info d = v.constant(static_cast<std::size_t>(dtype_arg.value()));
  if (s.kind != const_kind::shape || d.kind != const_kind::dtype) return false;
  const dtype t = dtype::unpack(d.scalar);
  std::int64_t n = 0;
  element = t.scalar_alignment();
  return checked_numel(v.i64s.subspan(static_cast<std::size_t>(s.dims_offset), static_cast<std::size_t>(s.ndim)), n) &&
         checked_mul(n, t.bytes(), nbytes);
}

/// The name of the packed function `in` calls ("" when it calls a vm function, which may have
/// any name).
constexpr std::string_view packed_callee(const exec_view& v, const instruction& in) {
  const func_info& c = v.funcs[static_cast<std::size_t>(in.func_idx)];
  return c.kind == func_kind::packed ? v.str(c.name) : std::string_view();
}

/// A register of a vm function that an alloc_storage of constant size sets: its size, the
/// instruction that sets it, and how many instructions write the register (only one may).
struct storage_register {
  std::int64_t reg, bytes, made_by, writes;
};

/// The registers of `f` set once, by an alloc_storage of constant size. (Only in constant
/// evaluation: the vector never reaches run time. It holds only such registers, so its cost
/// grows with the allocations, not with the register file.)
constexpr std::vector<storage_register> constant_storages(const exec_view& v, const func_info& f) {
  std::vector<storage_register> out;
  for (std::int64_t pc = f.start; pc < f.end; ++pc) {
    const instruction in = decode(v, pc);
    std::int64_t nbytes = 0, element = 0;
    if (in.op == opcode::call && in.dst >= 0 && in.dst < begin_special_register && in.num_args >= 4 &&
        packed_callee(v, in) == "vm.builtin.alloc_storage" &&
        constant_nbytes(v, in.arg_at(1), in.arg_at(3), nbytes, element))
      out.push_back({in.dst, nbytes, pc, 0});
  }
  if (out.empty()) return out;
  for (std::int64_t pc = f.start; pc < f.end; ++pc) {
    const instruction in = decode(v, pc);
    if (in.op != opcode::call) continue;
    for (storage_register& r : out) r.writes += r.reg == in.dst;
  }
  for (storage_register& r : out) r.writes += r.reg < f.num_args;  // a parameter is set on entry
  return out;
}

/// A link error for the first alloc_tensor that cannot fit its constant storage, else ok. An
/// alloc_tensor on a path that never runs counts too: the program is wrong either way.
constexpr diagnostic check_constant_views(const exec_view& v) {
  diagnostic d;
  for (std::size_t fi = 0; fi < v.funcs.size(); ++fi) {
    const func_info& f = v.funcs[fi];
    if (f.kind != func_kind::vm) continue;
    const std::vector<storage_register> storages = constant_storages(v, f);
    if (storages.empty()) continue;
    for (std::int64_t pc = f.start; pc < f.end; ++pc) {
      const instruction in = decode(v, pc);
      if (in.op != opcode::call || in.num_args < 4 || packed_callee(v, in) != "vm.builtin.alloc_tensor") continue;
      const arg storage = in.arg_at(0), offset = in.arg_at(1);
      if (storage.kind() != arg_kind::reg || offset.kind() != arg_kind::imm) continue;
      const storage_register* st = nullptr;
      for (const storage_register& r : storages)
        if (r.reg == storage.value() && r.writes == 1) st = &r;
      std::int64_t nbytes = 0, element = 0, end = 0;
      if (st == nullptr || !constant_nbytes(v, in.arg_at(2), in.arg_at(3), nbytes, element)) continue;
      const std::int64_t at = offset.value();
      const bool fits = at >= 0 && checked_add(at, nbytes, end) && end <= st->bytes;
      const bool aligned = at % element == 0;  // check_view's rule
      if (fits && aligned) continue;
      text t = diagnostic_start("link_error");
      t << "in ";
      append_location(t, v, static_cast<std::int64_t>(fi), pc);
      t << ": vm.builtin.alloc_tensor: ";
      if (!fits)
        t << "a view of " << nbytes << " bytes at offset " << at << " does not fit its storage of " << st->bytes
          << " bytes";
      else
        t << "offset " << at << " is not aligned for its dtype (" << element << " bytes)";
      t << " (%" << st->reg << ", made by instruction " << (st->made_by - f.start) << ')';
      d.fail(t);
      return d;
    }
  }
  return d;
}

/// Bytes an allocation of `nbytes` takes from an arena: rounded up to its alignment.
constexpr bool arena_block(std::int64_t nbytes, std::int64_t& out) {
  if (!checked_add(nbytes, storage_alignment - 1, out)) return false;
  out -= out % storage_alignment;
  return true;
}

inline constexpr std::int64_t not_computed = -2;

/// What one call of vm function f asks an arena for, its callees' calls included, or
/// unknown_bytes; memo[f] keeps it. Depth first, like link's chain_bytes, and only for a program
/// without recursion (the caller checks).
template <layout_sizes S>
constexpr std::int64_t call_arena_bytes(const exec_view& v, const static_program_facts<S>& facts, std::size_t f,
                                        std::int64_t* memo) {
  if (memo[f] != not_computed) return memo[f];
  memo[f] = unknown_bytes;  // until known
  std::int64_t total = 0;
  for (std::int64_t pc = v.funcs[f].start; pc < v.funcs[f].end; ++pc) {
    const instruction in = decode(v, pc);
    if ((in.op == opcode::goto_ || in.op == opcode::if_) && in.offset <= 0) return unknown_bytes;  // a loop
    if (in.op != opcode::call) continue;
    std::int64_t block = 0, nbytes = 0, element = 0;
    if (const std::int64_t callee = facts.instrs[static_cast<std::size_t>(pc)].vm_callee; callee >= 0) {
      block = call_arena_bytes(v, facts, static_cast<std::size_t>(callee), memo);
      if (block == unknown_bytes) return unknown_bytes;
    } else if (const std::string_view name = packed_callee(v, in); name == "vm.builtin.alloc_storage") {
      if (in.num_args < 4 || !constant_nbytes(v, in.arg_at(1), in.arg_at(3), nbytes, element) ||
          !arena_block(nbytes, block))
        return unknown_bytes;
    } else if (name == "vm.builtin.alloc_shape_heap") {
      if (in.num_args < 1) return unknown_bytes;
      const arg size = in.arg_at(in.num_args - 1);  // after an optional %vm
      if (size.kind() != arg_kind::imm || size.value() < 0 || !checked_mul(size.value(), std::int64_t{8}, nbytes) ||
          !arena_block(nbytes, block))
        return unknown_bytes;
    } else if (name == "vm.builtin.shape_to_tensor" || name == "vm.builtin.ensure_zero_offset" ||
               name == "vm.builtin.to_device") {
      return unknown_bytes;
    }
    if (!checked_add(total, block, total)) return unknown_bytes;
  }
  memo[f] = total;
  return total;
}

/// The tensor memory the program's own allocations ask for in one invocation of any function
/// (see the top of this file), or unknown_bytes. `bounded`: no recursion, no vm function passed
/// as a value (link's figure).
template <layout_sizes S>
constexpr std::int64_t arena_bytes(const exec_view& v, const static_program_facts<S>& facts, bool bounded) {
  if (!bounded) return unknown_bytes;
  for (std::size_t f = 0; f < v.funcs.size(); ++f)
    if (facts.funcs[f].used_as_value) return unknown_bytes;  // a closure call allocates what its function does
  std::array<std::int64_t, S.funcs + 1> memo{};
  for (std::int64_t& m : memo) m = not_computed;
  std::int64_t most = 0;
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    if (v.funcs[f].kind != func_kind::vm) continue;
    const std::int64_t b = call_arena_bytes(v, facts, f, memo.data());
    if (b == unknown_bytes) return unknown_bytes;
    most = b > most ? b : most;
  }
  return most;
}

/// Blocks of the object memory, counted by size class, or unknown.
struct object_blocks {
  std::int64_t count[size_classes] = {};
  bool known = true;

  /// One object of `bytes` (an object too large for any block cannot be made: unknown).
  constexpr void add(std::size_t bytes) {
    const std::uint32_t c = size_class_of(bytes);
    if (c == uncached_class) known = false;
    else ++count[c];
  }
  constexpr void add(const object_blocks& o) {
    known = known && o.known;
    for (std::uint32_t c = 0; c < size_classes; ++c) count[c] += o.count[c];
  }
  /// Per class, the larger count: enough for either.
  constexpr void cover(const object_blocks& o) {
    known = known && o.known;
    for (std::uint32_t c = 0; c < size_classes; ++c) count[c] = o.count[c] > count[c] ? o.count[c] : count[c];
  }
  constexpr std::int64_t bytes() const {
    std::int64_t total = 0;
    for (std::uint32_t c = 0; c < size_classes; ++c) total += count[c] * (std::int64_t{32} << c);
    return total;
  }
};

/// The bytes of a shape object of `ndim` dimensions (the empty shape has none).
constexpr void add_shape_object(object_blocks& b, std::int64_t ndim) {
  if (ndim > 0) b.add(sizeof(shape_object) + static_cast<std::size_t>(ndim) * sizeof(std::int64_t));
}

/// The objects the Call `in` of a packed function whose table entry says `rule` makes
/// (entry_info::objects, runtime/table.hpp).
constexpr object_blocks call_objects(const instruction& in, object_rule rule) {
  object_blocks b;
  switch (rule) {
    case object_rule::by_return:  // (resolved in entry_info)
    case object_rule::unknown: b.known = false; break;
    case object_rule::none: break;
    case object_rule::storage: b.add(sizeof(storage_object)); break;
    case object_rule::tensor: b.add(sizeof(tensor_object)); break;  // it holds the shape it was given
    case object_rule::shape_heap:  // an int64 tensor of (size,): its shape, storage and tensor
      add_shape_object(b, 1);
      b.add(sizeof(storage_object));
      b.add(sizeof(tensor_object));
      break;
    case object_rule::shape_of_count: {  // (heap, n, ...)
      const arg n = in.num_args >= 2 ? in.arg_at(1) : arg();
      if (n.kind() != arg_kind::imm || n.value() < 0 || n.value() > 4096) b.known = false;
      else add_shape_object(b, n.value());  // too many dimensions for a block: unknown (add)
      break;
    }
    case object_rule::shape_of_indices: add_shape_object(b, in.num_args - 1); break;  // (heap, idx_0, ...)
    case object_rule::tuple_of_args:
      if (in.num_args > 0) b.add(sizeof(tuple_object) + static_cast<std::size_t>(in.num_args) * sizeof(value));
      break;
  }
  return b;
}

/// The objects one call of vm function f makes, its callees' included (memo[f] keeps them,
/// state[f]: 0 not yet, 1 done). Only for a program without recursion (the caller checks).
template <layout_sizes S>
constexpr object_blocks call_objects_of(const exec_view& v, const static_program_facts<S>& facts,
                                        const object_rule* rules, std::size_t f, object_blocks* memo, bool* done) {
  if (done[f]) return memo[f];
  object_blocks total;
  for (std::int64_t pc = v.funcs[f].start; pc < v.funcs[f].end && total.known; ++pc) {
    const instruction in = decode(v, pc);
    if ((in.op == opcode::goto_ || in.op == opcode::if_) && in.offset <= 0) total.known = false;  // a loop
    if (in.op != opcode::call) continue;
    if (const std::int64_t callee = facts.instrs[static_cast<std::size_t>(pc)].vm_callee; callee >= 0)
      total.add(call_objects_of(v, facts, rules, static_cast<std::size_t>(callee), memo, done));
    else
      total.add(call_objects(in, rules[static_cast<std::size_t>(in.func_idx)]));
  }
  memo[f] = total;
  done[f] = true;
  return total;
}

/// The object memory of the program's constants (those made: `made[i]`) and of one invocation of
/// any of its vm functions (see the top of this file), or unknown_bytes. `rules[f]`: what the
/// table entry packed function f calls says of its objects.
template <layout_sizes S>
constexpr std::int64_t object_bytes(const exec_view& v, const static_program_facts<S>& facts, bool bounded,
                                    const bool* made, const object_rule* rules) {
  if (!bounded) return unknown_bytes;
  for (std::size_t f = 0; f < v.funcs.size(); ++f)
    if (facts.funcs[f].used_as_value) return unknown_bytes;  // closures, and what their calls make
  object_blocks constants;
  for (std::size_t i = 0; i < v.constants.size(); ++i) {
    if (!made[i]) continue;
    const const_info c = v.constant(i);
    if (c.kind == const_kind::shape) {
      add_shape_object(constants, c.ndim);
    } else if (c.kind == const_kind::string) {
      constants.add(sizeof(string_object) + static_cast<std::size_t>(c.data_size) + 1);
    } else if (c.kind == const_kind::tensor) {
      constants.add(sizeof(tensor_object));
      add_shape_object(constants, c.ndim);
    }
  }
  std::array<object_blocks, S.funcs + 1> memo{};
  std::array<bool, S.funcs + 1> done{};
  object_blocks most;
  for (std::size_t f = 0; f < v.funcs.size(); ++f)
    if (v.funcs[f].kind == func_kind::vm)
      most.cover(call_objects_of(v, facts, rules, f, memo.data(), done.data()));
  constants.add(most);
  return constants.known ? constants.bytes() : unknown_bytes;
}

}  // namespace relaxvm::detail

#endif  // RELAXVM_VM_STORAGE_FACTS_HPP
