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

namespace relaxvm::RELAXVM_ABI::detail {

inline constexpr std::int64_t unknown_bytes = -1;
/// The arena's alignment of every block (runtime/allocator.hpp's alloc_alignment).
inline constexpr std::int64_t storage_alignment = 64;

/// The bytes of a shape constant `shape_arg` of dtype constant `dtype_arg`; false when either is
/// not a constant of that kind, or the size overflows.
constexpr bool constant_nbytes(const exec_view& v, arg shape_arg, arg dtype_arg, std::int64_t& nbytes,
                               std::int64_t& element) {
  if (shape_arg.kind() != arg_kind::const_idx || dtype_arg.kind() != arg_kind::const_idx) return false;
  const const_info& s = v.constants[static_cast<std::size_t>(shape_arg.value())];
  const const_info& d = v.constants[static_cast<std::size_t>(dtype_arg.value())];
  if (s.kind != const_kind::shape || d.kind != const_kind::dtype) return false;
  const dtype t = dtype::unpack(d.scalar);
  std::int64_t n = 1;
  for (std::int64_t i = 0; i < s.ndim; ++i) {
    const std::int64_t dim = v.i64s[static_cast<std::size_t>(s.dims_offset + i)];
    if (dim < 0 || !checked_mul(n, dim, n)) return false;
  }
  element = (t.bits + 7) / 8;
  return checked_mul(n, t.bytes(), nbytes);
}

constexpr std::string_view callee_name(const exec_view& v, const instruction& in) {
  return v.str(v.funcs[static_cast<std::size_t>(in.func_idx)].name);
}

/// Per register of a vm function: the size of the storage it holds when a single instruction sets
/// it, an alloc_storage of constant size (else -1), and which instruction that is. (Used only in
/// constant evaluation: the vectors never reach run time.)
struct register_storage {
  std::vector<std::int64_t> bytes, made_by;
};

constexpr register_storage storages_of(const exec_view& v, const func_info& f) {
  const auto n = static_cast<std::size_t>(f.register_file_size);
  register_storage out{std::vector<std::int64_t>(n, -1), std::vector<std::int64_t>(n, 0)};
  std::vector<std::int64_t> writes(n, 0);
  for (std::size_t r = 0; r < n && r < static_cast<std::size_t>(f.num_args); ++r) writes[r] = 1;
  for (std::int64_t pc = f.start; pc < f.end; ++pc) {
    const instruction in = decode(v, pc);
    if (in.op != opcode::call || in.dst < 0 || static_cast<std::size_t>(in.dst) >= n) continue;
    const auto r = static_cast<std::size_t>(in.dst);
    ++writes[r];
    std::int64_t nbytes = 0, element = 0;
    if (callee_name(v, in) == "vm.builtin.alloc_storage" && in.num_args >= 4 &&
        constant_nbytes(v, in.arg_at(1), in.arg_at(3), nbytes, element)) {
      out.bytes[r] = nbytes;
      out.made_by[r] = pc;
    }
  }
  for (std::size_t r = 0; r < n; ++r)
    if (writes[r] != 1) out.bytes[r] = -1;
  return out;
}

/// A link error for the first alloc_tensor that cannot fit its constant storage, else ok.
constexpr diagnostic check_constant_views(const exec_view& v) {
  diagnostic d;
  for (std::size_t fi = 0; fi < v.funcs.size(); ++fi) {
    const func_info& f = v.funcs[fi];
    if (f.kind != func_kind::vm) continue;
    const register_storage st = storages_of(v, f);
    for (std::int64_t pc = f.start; pc < f.end; ++pc) {
      const instruction in = decode(v, pc);
      if (in.op != opcode::call || in.num_args < 4 || callee_name(v, in) != "vm.builtin.alloc_tensor") continue;
      const arg storage = in.arg_at(0), offset = in.arg_at(1);
      if (storage.kind() != arg_kind::reg || offset.kind() != arg_kind::imm) continue;
      const std::int64_t r = storage.value();
      if (r < 0 || static_cast<std::size_t>(r) >= st.bytes.size() || st.bytes[static_cast<std::size_t>(r)] < 0) continue;
      std::int64_t nbytes = 0, element = 0, end = 0;
      if (!constant_nbytes(v, in.arg_at(2), in.arg_at(3), nbytes, element)) continue;
      const std::int64_t size = st.bytes[static_cast<std::size_t>(r)], at = offset.value();
      const bool fits = at >= 0 && checked_add(at, nbytes, end) && end <= size;
      const bool aligned = element <= 1 || at % element == 0;
      if (fits && aligned) continue;
      text t = diagnostic_start("link_error");
      t << "in ";
      append_location(t, v, static_cast<std::int64_t>(fi), pc);
      t << ": vm.builtin.alloc_tensor: ";
      if (!fits)
        t << "a view of " << nbytes << " bytes at offset " << at << " does not fit its storage of " << size
          << " bytes";
      else
        t << "offset " << at << " is not aligned for its dtype (" << element << " bytes)";
      t << " (%" << r << ", made by instruction " << (st.made_by[static_cast<std::size_t>(r)] - f.start) << ')';
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

/// The tensor memory the program's own allocations ask for in one invocation of any function
/// (see the top of this file), or unknown_bytes.
template <layout_sizes S>
constexpr std::int64_t arena_bytes(const exec_view& v, const static_program_facts<S>& facts, bool bounded) {
  if (!bounded) return unknown_bytes;
  for (std::size_t f = 0; f < v.funcs.size(); ++f)
    if (facts.funcs[f].used_as_value) return unknown_bytes;
  // need[f]: what one call of f asks for, its callees' included. Nothing recurses, so a function's
  // callees are done before it when each is computed on demand, deepest first.
  std::array<std::int64_t, S.funcs> need{};
  std::array<bool, S.funcs> done{};
  for (std::size_t round = 0; round <= v.funcs.size(); ++round) {
    bool progress = false;
    for (std::size_t fi = 0; fi < v.funcs.size(); ++fi) {
      const func_info& f = v.funcs[fi];
      if (done[fi]) continue;
      if (f.kind != func_kind::vm) {
        done[fi] = true;
        progress = true;
        continue;
      }
      std::int64_t total = 0;
      bool ready = true;
      for (std::int64_t pc = f.start; pc < f.end && ready; ++pc) {
        const instruction in = decode(v, pc);
        if ((in.op == opcode::goto_ || in.op == opcode::if_) && in.offset <= 0) return unknown_bytes;
        if (in.op != opcode::call) continue;
        const auto callee = static_cast<std::size_t>(in.func_idx);
        std::int64_t block = 0;
        if (v.funcs[callee].kind == func_kind::vm) {
          if (!done[callee]) {
            ready = false;
            break;
          }
          block = need[callee];
        } else {
          const std::string_view name = callee_name(v, in);
          std::int64_t nbytes = 0, element = 0;
          if (name == "vm.builtin.alloc_storage") {
            if (in.num_args < 4 || !constant_nbytes(v, in.arg_at(1), in.arg_at(3), nbytes, element) ||
                !arena_block(nbytes, block))
              return unknown_bytes;
          } else if (name == "vm.builtin.alloc_shape_heap") {
            if (in.num_args < 1) return unknown_bytes;
            const arg size = in.arg_at(in.num_args - 1);  // after an optional %vm
            if (size.kind() != arg_kind::imm || size.value() < 0 ||
                !checked_mul(size.value(), std::int64_t{8}, nbytes) || !arena_block(nbytes, block))
              return unknown_bytes;
          } else if (name == "vm.builtin.shape_to_tensor" || name == "vm.builtin.ensure_zero_offset" ||
                     name == "vm.builtin.to_device") {
            return unknown_bytes;
          }
        }
        if (!checked_add(total, block, total)) return unknown_bytes;
      }
      if (!ready) continue;
      need[fi] = total;
      done[fi] = true;
      progress = true;
    }
    if (!progress) break;
  }
  std::int64_t most = 0;
  for (std::size_t fi = 0; fi < v.funcs.size(); ++fi) {
    if (!done[fi]) return unknown_bytes;
    if (need[fi] > most) most = need[fi];
  }
  return most;
}

}  // namespace relaxvm::detail

#endif  // RELAXVM_VM_STORAGE_FACTS_HPP
