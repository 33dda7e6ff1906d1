// SPDX-License-Identifier: Apache-2.0
// The reductions, the softmax family, TopK, the normalizations and the losses: their registration as packed functions (kernels/register.hpp declares it), the
// entries of kernels::reduce_table (kernels/table.hpp).
#ifndef RELAXVM_KERNELS_REGISTER_REDUCE_HPP
#define RELAXVM_KERNELS_REGISTER_REDUCE_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "register.hpp"
#include "table.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_reduce(basic_registry& reg) { reg.add_table(reduce_table); }

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_REDUCE_HPP
