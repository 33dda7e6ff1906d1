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
/// 32-bit numbers (static_vm runs programs of fewer than 2^31 instructions): a smaller frame,
/// and no 64-bit arithmetic on a 32-bit core.
struct alignas(value) static_frame {
  static_frame* caller;
  std::int32_t func_index;
  std::int32_t return_pc;  ///< the caller's Call instruction (where the result goes), or -1 for an entry frame

  value* regs() noexcept { return reinterpret_cast<value*>(this + 1); }
};

}  // namespace relaxvm

#endif  // RELAXVM_VM_STATIC_FRAME_HPP
