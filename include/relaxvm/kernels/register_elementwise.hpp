// SPDX-License-Identifier: Apache-2.0
// The elementwise kernels (maps, broadcasting binary ops, comparisons, logic, Where, Clip): their registration as packed functions (kernels/register.hpp declares it), the
// entries of kernels::elementwise_table (kernels/table.hpp).
#ifndef RELAXVM_KERNELS_REGISTER_ELEMENTWISE_HPP
#define RELAXVM_KERNELS_REGISTER_ELEMENTWISE_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "register.hpp"
#include "table.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_elementwise(basic_registry& reg) { reg.add_table(elementwise_table); }

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_ELEMENTWISE_HPP
