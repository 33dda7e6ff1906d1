// SPDX-License-Identifier: Apache-2.0
// The portable kernels registered as packed functions under "onnx.<OpType>", the names the ONNX
// importer calls. Each takes its inputs, its attributes and its preallocated outputs, in that order
// (relaxvm/kernels/*.hpp documents each signature). One registration function per family, each
// defined in kernels/register_<family>.hpp: header-only, this header includes them; with
// RELAXVM_SEPARATE_COMPILATION, the library built from src/ holds them (base/config.hpp).
#ifndef RELAXVM_KERNELS_REGISTER_HPP
#define RELAXVM_KERNELS_REGISTER_HPP

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_DECL
#include "../runtime/registry.hpp"
#include "base.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

RELAXVM_DECL void register_elementwise(basic_registry& reg);
RELAXVM_DECL void register_reduce(basic_registry& reg);
RELAXVM_DECL void register_linalg(basic_registry& reg);
RELAXVM_DECL void register_window(basic_registry& reg);
RELAXVM_DECL void register_data(basic_registry& reg);

/// Registers every portable kernel in `reg`.
inline void register_all(basic_registry& reg) {
  register_elementwise(reg);
  register_reduce(reg);
  register_linalg(reg);
  register_window(reg);
  register_data(reg);
}

}  // namespace relaxvm::kernels

#ifndef RELAXVM_SEPARATE_COMPILATION
#include "register_elementwise.hpp"
#include "register_reduce.hpp"
#include "register_linalg.hpp"
#include "register_window.hpp"
#include "register_data.hpp"
#endif

#endif  // RELAXVM_KERNELS_REGISTER_HPP
