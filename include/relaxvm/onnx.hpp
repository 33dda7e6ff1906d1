// SPDX-License-Identifier: Apache-2.0
// ONNX models into relaxvm (optional; hosted; needs xtensor for the kernels): read an .onnx file,
// import its graph into the IR, lower and plan it into an executable, and run it on the VM with
// the kernels register_kernels() adds. docs/onnx.md has what is supported.
//
//   namespace onnx = relaxvm::onnx;
//   rv::result<rv::executable> exe = onnx::load(bytes);           // std::span<const std::byte>
//   rv::result<rv::executable> exe = onnx::load_file("model.onnx");
//   rv::registry reg; onnx::register_kernels(reg);
//   rv::virtual_machine vm(exe.value(), reg);
//   rv::value y = vm["main"](x);
//
// Header-only by default. With RELAXVM_SEPARATE_COMPILATION (base/config.hpp) this header only
// declares the functions below and the library built from src/ defines them (meson:
// relaxvm_compiled_dep): a translation unit that includes it then compiles in seconds, not a minute.
#ifndef RELAXVM_ONNX_HPP
#define RELAXVM_ONNX_HPP

#include <cstddef>
#include <span>
#include <string>

#include "relaxvm.hpp"
#include "relaxvm/lower.hpp"
#include "relaxvm/onnx/file.hpp"
#include "relaxvm/onnx/model.hpp"
#include "relaxvm/onnx/options.hpp"
#include "relaxvm/onnx/tensor.hpp"

namespace relaxvm::RELAXVM_ABI::onnx {

/// Registers every kernel an imported program may call.
RELAXVM_DECL void register_kernels(basic_registry& reg);

/// Imports a parsed model into an IR module with one function, "main".
RELAXVM_DECL result<ir::module> import(const model_info& m, const options& opt = {});

/// Reads and imports an .onnx file's bytes (kept alive by the caller during the call only).
RELAXVM_DECL result<ir::module> import(std::span<const std::byte> bytes, const options& opt = {});

/// How load() lowers and plans an imported module (each symbolic shape made once; no check of a
/// result the function allocated itself).
inline constexpr ir::plan_options plan{.reuse_shapes = true, .elide_proven_return_check = true};

/// Imports, lowers and plans a model into a verified executable.
RELAXVM_DECL result<executable> load(std::span<const std::byte> bytes, const options& opt = {});

/// load() of the .onnx file at `path`, mapped rather than read where the system has mmap: each
/// weight's pages go back to the system once the weight is copied into the program, so loading
/// holds the weights about once (ResNet-18, a 46.7 MB file: docs/onnx.md has the peak).
RELAXVM_DECL result<executable> load_file(const std::string& path, const options& opt = {});

/// load_file() of a file already mapped (mapped_file::open, onnx/file.hpp): for a caller that
/// looks at the bytes first (the command-line tool tells a model from an executable by them).
RELAXVM_DECL result<executable> load_mapped(const mapped_file& file, const options& opt = {});

}  // namespace relaxvm::onnx

#ifndef RELAXVM_SEPARATE_COMPILATION
#include "relaxvm/onnx/load.hpp"
#endif

#endif  // RELAXVM_ONNX_HPP
