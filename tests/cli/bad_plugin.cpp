// SPDX-License-Identifier: Apache-2.0
// Kernel libraries the tool must refuse (tests/cli/check_cli.py): built as is, one whose
// registration fails (it defines ops.add, which the tool has); with -DNOT_A_PLUGIN, a shared
// library without RELAXVM_PLUGIN's functions.
#include <relaxvm/plugin.hpp>

namespace rv = relaxvm;

#ifdef NOT_A_PLUGIN
extern "C" RELAXVM_PLUGIN_EXPORT int some_other_function() { return 7; }
#else
RELAXVM_PLUGIN(reg) {
  return reg.try_add("ops.add", rv::make_typed("ops.add", [](std::int64_t x) { return x; }));
}
#endif
