// SPDX-License-Identifier: Apache-2.0
// Declarations of relaxvm's main types without their definitions, for a header of yours that only
// names them, and for a RELAXVM_ON_ERROR handler declared before relaxvm.hpp:
//
//   #include <relaxvm/fwd.hpp>
//   [[noreturn]] void my_fatal(const relaxvm::error& e);
//   #define RELAXVM_ON_ERROR(e) my_fatal(e)
//   #include <relaxvm.hpp>
//
// Declare them through this header, not with `namespace relaxvm { class error; }`: the library
// lives in an inline namespace that depends on the configuration (docs/configuration.md), and a
// declaration outside it names another class.
#ifndef RELAXVM_FWD_HPP
#define RELAXVM_FWD_HPP

#include "relaxvm/base/config.hpp"

namespace relaxvm::RELAXVM_ABI {
class error;
class value;
class shape;
class tensor;
class tuple;
class closure;
template <class> class basic_executable;
using executable = basic_executable<void>;
class basic_registry;
class registry;
}  // namespace relaxvm::RELAXVM_ABI

#endif  // RELAXVM_FWD_HPP
