// SPDX-License-Identifier: Apache-2.0
// The header static_vm keeps for each live frame (vm/static_vm.hpp), on its own: link() sizes the
// memory a program needs from it (vm/link.hpp) before any static_vm exists.
#ifndef RELAXVM_VM_STATIC_FRAME_HPP
#define RELAXVM_VM_STATIC_FRAME_HPP

#include <cstdint>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../runtime/value.hpp"

namespace relaxvm::RELAXVM_ABI {

/// The header static_vm keeps for each live frame; its registers follow it in the VM's memory.
struct static_frame {
  static_frame* caller;
  std::int64_t func_index;
  value* regs;
  std::int64_t return_pc;   ///< the caller's Call instruction, or -1 for an entry frame
  std::int64_t caller_dst;  ///< where the caller wants the result
};

}  // namespace relaxvm

#endif  // RELAXVM_VM_STATIC_FRAME_HPP
