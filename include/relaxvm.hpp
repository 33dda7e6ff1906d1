// SPDX-License-Identifier: Apache-2.0
// relaxvm: a register-based tensor virtual machine. This header is the whole core: base,
// bytecode, io, runtime, vm and builtins. Optional parts (relaxvm/ext/...) are included separately.
// single_include/relaxvm.hpp is the same library in one file, with the same spelling.
#ifndef RELAXVM_HPP
#define RELAXVM_HPP

#include "relaxvm/base/config.hpp"
#include "relaxvm/base/error.hpp"
#include "relaxvm/base/fixed_string.hpp"
#include "relaxvm/base/dtype.hpp"
#include "relaxvm/base/device.hpp"
#include "relaxvm/bytecode/opcode.hpp"
#include "relaxvm/bytecode/layout.hpp"
#include "relaxvm/bytecode/instruction.hpp"
#include "relaxvm/bytecode/verify.hpp"
#include "relaxvm/bytecode/formalize.hpp"
#include "relaxvm/bytecode/builder.hpp"
#include "relaxvm/bytecode/static_executable.hpp"
#include "relaxvm/io/binary_format.hpp"
#include "relaxvm/io/binary_reader.hpp"
#include "relaxvm/io/binary_writer.hpp"
#include "relaxvm/io/text.hpp"
#include "relaxvm/io/executable.hpp"
#include "relaxvm/runtime/object.hpp"
#include "relaxvm/runtime/value.hpp"
#include "relaxvm/runtime/tuple.hpp"
#include "relaxvm/runtime/closure.hpp"
#include "relaxvm/runtime/adapters.hpp"
#include "relaxvm/runtime/context.hpp"
#include "relaxvm/runtime/table.hpp"
#include "relaxvm/runtime/registry.hpp"
#include "relaxvm/runtime/constant.hpp"
#include "relaxvm/runtime/allocator.hpp"
#include "relaxvm/runtime/print.hpp"
#include "relaxvm/runtime/compare.hpp"
#include "relaxvm/vm/virtual_machine.hpp"
#include "relaxvm/vm/link.hpp"
#include "relaxvm/vm/static_vm.hpp"
#include "relaxvm/builtins/core.hpp"
#include "relaxvm/builtins/shape_heap.hpp"
#include "relaxvm/builtins/memory.hpp"
#include "relaxvm/builtins/data.hpp"
#include "relaxvm/builtins/control.hpp"
#include "relaxvm/builtins/all.hpp"

#endif  // RELAXVM_HPP
