// SPDX-License-Identifier: Apache-2.0
// Formalize: renumbers each vm function's registers in order of first definition (the reference's Formalize), so a
// program may use any register numbers and still gets a dense register file.
#ifndef RELAXVM_BYTECODE_FORMALIZE_HPP
#define RELAXVM_BYTECODE_FORMALIZE_HPP

#include <cstdint>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/std_parts.hpp"  // std::sort, std::min, ...
#include "../base/hash_index.hpp"
#include "layout.hpp"
#include "opcode.hpp"

namespace relaxvm::RELAXVM_ABI {

/// The register file function `f` needs as written: its inputs and every register it names (special
/// registers and numbers no register file could hold excepted). For a formalized program this is
/// what formalize() computes.
template <class Unused = void>  // instantiated where used
constexpr std::int64_t used_register_file_size(const exec_view& v, const func_info& f) {
  std::int64_t size = f.num_args;
  auto use = [&](std::int64_t r) {
    if (r >= 0 && r < max_register_file_size && r + 1 > size) size = r + 1;
  };
  for (std::int64_t i = f.start; i < f.end; ++i) {
    const std::int64_t* w = v.instr_data.data() + v.instr_offset[static_cast<std::size_t>(i)];
    switch (static_cast<opcode>(w[0])) {
      case opcode::call:
        use(w[1]);
        for (std::int64_t k = 0; k < w[3]; ++k)
          if (arg::from_data(w[4 + k]).kind() == arg_kind::reg) use(arg::from_data(w[4 + k]).value());
        break;
      case opcode::ret:
      case opcode::if_: use(w[1]); break;
      case opcode::goto_: break;
    }
  }
  return size;
}

/// Renames registers >= num_args of every vm function, walking instructions in order: a call's
/// destination gets the next free number on its first appearance; reads of renamed registers are
/// rewritten. Inputs and special registers keep their numbers.
///
/// A register read before any definition is left for the verifier to report as undefined. It keeps
/// its number, unless renaming gave that number to another register; then it moves past every
/// renamed register, so that it can never alias a defined one. (The reference's Formalize lets
/// such reads alias, and its checker then accepts them.) The layout's instruction stream must be
/// well formed (the builder's always is).
template <class Unused = void>  // instantiated where used (the builder's finish(), io/text.hpp)
constexpr void formalize(exec_layout& l) {
  for (func_info& f : l.funcs) {
    if (f.kind != func_kind::vm) continue;
    // renamed[k] is the register that became number num_args + k. A register's new number is
    // found in `near` (indexed by r - num_args) when it is below num_args + near.size(), as
    // programs' registers mostly are, and through `far` (a hash of r -> k) otherwise.
    detail::trivial_vector<std::int64_t> renamed;
    detail::trivial_vector<std::int64_t> near;
    near.resize(static_cast<std::size_t>(2 * (f.end - f.start) + 16), -1);
    const auto near_size = static_cast<std::int64_t>(near.size());
    detail::hash_index far;
    struct unresolved {
      std::int64_t* word;
      bool is_arg;
      std::int64_t reg;
    };
    std::vector<unresolved> early;  // reads before any definition
    auto hash = [](std::int64_t r) { return detail::hash_mix(detail::hash_seed, static_cast<std::uint64_t>(r)); };
    auto lookup = [&](std::int64_t r) -> std::int64_t {
      if (r - f.num_args < near_size) return near[static_cast<std::size_t>(r - f.num_args)];
      const std::int64_t k = far.find(hash(r), [&](std::int64_t p) { return renamed[static_cast<std::size_t>(p)] == r; });
      return k < 0 ? -1 : f.num_args + k;
    };
    auto rename_read = [&](std::int64_t* word, bool is_arg) {
      const std::int64_t r = is_arg ? arg::from_data(*word).value() : *word;
      if (r < f.num_args || is_special_register(r)) return;
      const std::int64_t m = lookup(r);
      if (m < 0) early.push_back({word, is_arg, r});
      else *word = is_arg ? arg::reg(m).data : m;
    };
    for (std::int64_t i = f.start; i < f.end; ++i) {
      std::int64_t* w = l.instr_data.data() + l.instr_offset[static_cast<std::size_t>(i)];
      switch (static_cast<opcode>(w[0])) {
        case opcode::call: {
          for (std::int64_t k = 0; k < w[3]; ++k)
            if (arg::from_data(w[4 + k]).kind() == arg_kind::reg) rename_read(&w[4 + k], true);
          std::int64_t& dst = w[1];
          if (dst >= f.num_args && !is_special_register(dst)) {
            std::int64_t m = lookup(dst);
            if (m < 0) {
              m = f.num_args + static_cast<std::int64_t>(renamed.size());
              if (dst - f.num_args < near_size) near[static_cast<std::size_t>(dst - f.num_args)] = m;
              else far.insert(hash(dst), static_cast<std::int64_t>(renamed.size()));
              renamed.push_back(dst);
            }
            dst = m;
          }
          break;
        }
        case opcode::ret: rename_read(&w[1], false); break;
        case opcode::if_: rename_read(&w[1], false); break;
        case opcode::goto_: break;
      }
    }
    // An early read collides when renaming gave its number to another register; it moves past all
    // of them. Others stay.
    const std::int64_t next = f.num_args + static_cast<std::int64_t>(renamed.size());
    auto collides = [&](std::int64_t r) {
      return r >= f.num_args && r < next && renamed[static_cast<std::size_t>(r - f.num_args)] != r;
    };
    std::int64_t size = next;
    for (const unresolved& u : early)
      if (!collides(u.reg) && u.reg < max_register_file_size) size = std::max(size, u.reg + 1);
    std::vector<std::pair<std::int64_t, std::int64_t>> moved;  // old number -> new, for collisions
    for (const unresolved& u : early) {
      if (!collides(u.reg)) continue;
      std::int64_t m = -1;
      for (const auto& [from, to] : moved)
        if (from == u.reg) m = to;
      if (m < 0) {
        m = size++;
        moved.push_back({u.reg, m});
      }
      *u.word = u.is_arg ? arg::reg(m).data : m;
    }
    // Absurdly large numbers stay out of the register file: the verifier reports them as such.
    f.register_file_size = size;
  }
}

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_FORMALIZE_HPP
