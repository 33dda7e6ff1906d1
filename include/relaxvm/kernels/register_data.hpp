// SPDX-License-Identifier: Apache-2.0
// The data movement kernels (kernels/data.hpp), Resize, NonZero, Compress and the shape kernels (kernels/shape.hpp): their registration as packed functions (kernels/register.hpp declares it), the
// entries of kernels::data_table (kernels/table.hpp).
#ifndef RELAXVM_KERNELS_REGISTER_DATA_HPP
#define RELAXVM_KERNELS_REGISTER_DATA_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "register.hpp"
#include "table.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_data(basic_registry& reg) { reg.add_table(data_table); }

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_REGISTER_DATA_HPP
