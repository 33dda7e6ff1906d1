// SPDX-License-Identifier: Apache-2.0
// Formalize: renumbers each vm function's registers in order of first definition (seed 000), so a
// program may use any register numbers and still gets a dense register file.
#ifndef RELAXVM_BYTECODE_FORMALIZE_HPP
#define RELAXVM_BYTECODE_FORMALIZE_HPP

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "layout.hpp"
#include "opcode.hpp"

namespace relaxvm {

/// Renames registers >= num_args of every vm function, walking instructions in order: a call's
/// destination gets the next free number on its first appearance; reads of renamed registers are
/// rewritten. Inputs and special registers keep their numbers. A register read before any
/// definition keeps its number, so that the verifier reports it as undefined. The layout's
/// instruction stream must be well formed (the builder's always is).
constexpr void formalize(exec_layout& l) {
  for (func_info& f : l.funcs) {
    if (f.kind != func_kind::vm) continue;
    std::vector<std::pair<std::int64_t, std::int64_t>> renamed;  // sorted by old number
    std::int64_t next = f.num_args;
    std::int64_t highest_unrenamed = f.num_args - 1;
    auto lookup = [&](std::int64_t r) -> std::int64_t {
      auto it = std::lower_bound(renamed.begin(), renamed.end(), std::pair{r, std::int64_t{0}},
                                 [](const auto& a, const auto& b) { return a.first < b.first; });
      return (it != renamed.end() && it->first == r) ? it->second : -1;
    };
    auto rename_read = [&](std::int64_t& r) {
      if (r < f.num_args || is_special_register(r)) return;
      std::int64_t m = lookup(r);
      if (m >= 0) r = m;
      else highest_unrenamed = std::max(highest_unrenamed, r);
    };
    for (std::int64_t i = f.start; i < f.end; ++i) {
      std::int64_t* w = l.instr_data.data() + l.instr_offset[static_cast<std::size_t>(i)];
      switch (static_cast<opcode>(w[0])) {
        case opcode::call: {
          for (std::int64_t k = 0; k < w[3]; ++k) {
            arg a = arg::from_data(w[4 + k]);
            if (a.kind() != arg_kind::reg) continue;
            std::int64_t r = a.value();
            rename_read(r);
            w[4 + k] = arg::reg(r).data;
          }
          std::int64_t& dst = w[1];
          if (dst >= f.num_args && !is_special_register(dst)) {
            std::int64_t m = lookup(dst);
            if (m < 0) {
              m = next++;
              auto it = std::lower_bound(renamed.begin(), renamed.end(), std::pair{dst, std::int64_t{0}},
                                         [](const auto& a, const auto& b) { return a.first < b.first; });
              renamed.insert(it, {dst, m});
            }
            dst = m;
          }
          break;
        }
        case opcode::ret: rename_read(w[1]); break;
        case opcode::if_: rename_read(w[1]); break;
        case opcode::goto_: break;
      }
    }
    // Keep undefined reads inside the register file so the verifier names them as undefined rather
    // than out of range, unless the number is absurd anyway.
    f.register_file_size =
        highest_unrenamed < max_register_file_size ? std::max(next, highest_unrenamed + 1) : next;
  }
}

}  // namespace relaxvm

#endif  // RELAXVM_BYTECODE_FORMALIZE_HPP
