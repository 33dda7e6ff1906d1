// SPDX-License-Identifier: Apache-2.0
// relaxvm::ir: the lowering layer. A dataflow IR with symbolic shapes (sym, struct_info, module),
// its builder, checker and printer, and the reference's VM pipeline of passes down to verified
// bytecode (ir::build, ir::build_static). See docs/lowering.md.
#ifndef RELAXVM_LOWER_HPP
#define RELAXVM_LOWER_HPP

#include "base/config.hpp"  // RELAXVM_ABI
#include "relaxvm/lower/sym.hpp"
#include "relaxvm/lower/struct_info.hpp"
#include "relaxvm/lower/ir.hpp"
#include "relaxvm/lower/check.hpp"
#include "relaxvm/lower/builder.hpp"
#include "relaxvm/lower/print.hpp"
#include "relaxvm/lower/passes.hpp"
#include "relaxvm/lower/memory_plan.hpp"
#include "relaxvm/lower/shape_lower.hpp"
#include "relaxvm/lower/codegen.hpp"
#include "relaxvm/lower/build.hpp"

#include "relaxvm/base/config.hpp"

#if RELAXVM_HOSTED
#include <string>

namespace relaxvm::RELAXVM_ABI::ir {

/// The module in TVMScript's style (print.hpp), as a std::string.
inline std::string to_text(const module& m) {
  relaxvm::detail::text t;
  print(m, t);
  return std::string(t.view());
}

}  // namespace relaxvm::ir
#endif

#endif  // RELAXVM_LOWER_HPP
