// SPDX-License-Identifier: Apache-2.0
// relaxvm_compiled (src/meson.build): kernels::register_linalg, defined once.
#include <relaxvm/kernels/register_linalg.hpp>
