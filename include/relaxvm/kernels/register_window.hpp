// SPDX-License-Identifier: Apache-2.0
// Convolution and pooling: their registration as packed functions (kernels/register.hpp declares it), the
// entries of kernels::window_table (kernels/table.hpp).
#ifndef RELAXVM_KERNELS_REGISTER_WINDOW_HPP
#define RELAXVM_KERNELS_REGISTER_WINDOW_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "register.hpp"
#include "table.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_window(basic_registry& reg) { reg.add_table(window_table); }

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_WINDOW_HPP
