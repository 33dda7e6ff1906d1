// SPDX-License-Identifier: Apache-2.0
// relaxvm_compiled (src/meson.build): kernels::register_data, defined once.
#include <relaxvm/kernels/register_data.hpp>
