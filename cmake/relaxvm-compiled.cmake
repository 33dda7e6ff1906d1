# relaxvm's separate compilation for CMake (docs/configuration.md), included by the top-level
# CMakeLists.txt and by the installed package (relaxvm-config.cmake) with _relaxvm_src set to the
# directory of the sources (src/ of the checkout, <datadir>/relaxvm/src installed). The libraries
# are compiled in the consumer's build, with its compiler and its settings (the ABI macros must
# agree across a program: base/config.hpp), and only when a target links them.
#   relaxvm::compiled_core  the VM's entry points and loop, the loaders, the verifier and lowering
#                           at run time, the builtins' registry
#   relaxvm::compiled       that, the ONNX importer and every kernel's registration
if(NOT TARGET relaxvm_compiled_core)
  add_library(relaxvm_compiled_core STATIC EXCLUDE_FROM_ALL "${_relaxvm_src}/core.cpp")
  target_link_libraries(relaxvm_compiled_core PUBLIC relaxvm::relaxvm)
  target_compile_definitions(relaxvm_compiled_core PUBLIC RELAXVM_SEPARATE_COMPILATION)
  add_library(relaxvm_compiled STATIC EXCLUDE_FROM_ALL
              "${_relaxvm_src}/onnx.cpp" "${_relaxvm_src}/kernels_elementwise.cpp" "${_relaxvm_src}/kernels_reduce.cpp"
              "${_relaxvm_src}/kernels_linalg.cpp" "${_relaxvm_src}/kernels_window.cpp" "${_relaxvm_src}/kernels_data.cpp")
  target_link_libraries(relaxvm_compiled PUBLIC relaxvm_compiled_core)
endif()
if(NOT TARGET relaxvm::compiled_core)
  add_library(relaxvm::compiled_core ALIAS relaxvm_compiled_core)
  add_library(relaxvm::compiled ALIAS relaxvm_compiled)
endif()
