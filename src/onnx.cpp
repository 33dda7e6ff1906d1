// SPDX-License-Identifier: Apache-2.0
// relaxvm_compiled (src/meson.build): onnx::import, onnx::load and onnx::register_kernels,
// defined once.
#include <relaxvm/onnx/load.hpp>
