// SPDX-License-Identifier: Apache-2.0
// relaxvm_compiled (src/meson.build, CMake's relaxvm::compiled): the core's heavy parts, defined
// once for the default configuration. The headers declare them in separate compilation
// (base/config.hpp): the VM's entry points and its loop, the executable's loaders and writers, the
// verifier and lowering at run time, and the registry of every builtin.
#define RELAXVM_DEFINES_CORE 1
#include <relaxvm.hpp>
#include <relaxvm/lower.hpp>

namespace relaxvm::RELAXVM_ABI {

template class basic_exec_builder<void>;
template class basic_executable<void>;
template class detail::basic_vm_impl<void>;
template class basic_vm_function<void>;
template class basic_virtual_machine<void>;

registry::registry() { add_table(builtins::table); }

}  // namespace relaxvm
