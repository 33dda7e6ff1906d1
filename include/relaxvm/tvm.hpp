// SPDX-License-Identifier: Apache-2.0
// relaxvm's readers and writers of Apache TVM's own executable formats (optional; no TVM code or
// library is used). Programs compiled by TVM run on relaxvm's VM once their kernels are registered
// as packed functions: TVM's kernel libraries are not loaded. docs/tvm.md has the formats.
#ifndef RELAXVM_TVM_HPP
#define RELAXVM_TVM_HPP

#include "relaxvm.hpp"
// Relax VM executables (.rxe, format "0.14"): load_relax, save_relax.
#include "relaxvm/tvm/relax.hpp"
// Relay VM executables (Executable::Save, "0.19.0"): relaxvm/tvm/relay.hpp goes here.
#include "relaxvm/tvm/relay.hpp"

#endif  // RELAXVM_TVM_HPP
