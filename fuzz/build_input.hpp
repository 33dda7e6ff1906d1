// SPDX-License-Identifier: Apache-2.0
// The input format of fuzz/build.cpp, shared with fuzz/make_corpus.cpp, which writes its seeds.
//
// An input is read front to back; reading past the end gives zeros, and zeros choose the common
// paths, so every byte string decodes to a program:
//   byte 0        flags (enum flag)
//   byte 1        limits: (b & 7) == 7 gives a budget of 2^18 instructions instead of 20000,
//                 ((b >> 3) & 7) == 7 a call depth of 2^14 frames instead of 256
//   byte 2        number of functions: 1 + b % max_functions
//   3 bytes each  arity (b % 5), register-file hint (see program_generator::register_hint),
//                 parameter names (b % 4 == 3)
//   per function  a statement count (b % 48), then statements: one byte chooses what to emit
//                 (b % stmt::count), the bytes after it its operands (see build.cpp)
//   the rest      the arguments of the invocations and the choices made while running
#ifndef RELAXVM_FUZZ_BUILD_INPUT_HPP
#define RELAXVM_FUZZ_BUILD_INPUT_HPP

#include <cstdint>

namespace relaxvm_fuzz {

inline constexpr unsigned max_functions = 6;

/// What a statement emits. New kinds go before `count`; a new kind changes what most inputs
/// decode to (the statement byte is taken modulo `count`), so check the seeds then.
enum class stmt : std::uint8_t {
  constant, make_tuple, tuple_getitem, tuple_reset_item, make_adt, adt_read, make_closure, invoke_closure,
  call_vm, call_vm_again, call_tir_dyn, shape_heap, match_shape, make_shape, shape_arith, store_load_shape,
  prim_value, alloc_storage, alloc_tensor, reshape, shape_convert, check_info, print, cond, misc,
  escape_vm, if_block, loop, nest_loop, raw_jump, early_ret, any_builtin, count
};

/// Byte 0 of an input: how the program is built and run.
enum flag : std::uint8_t {
  no_formalize = 1,       ///< registers keep their numbers (as_cpp's mode)
  no_dedup = 2,           ///< equal constants get their own entries
  outlive_vm = 4,         ///< the first VM dies before the second runs; its results are kept
  instrument = 8,         ///< the second VM has an instrument hook that skips some calls
  stateful = 16,          ///< set_input / invoke_stateful / get_output / save_function
  share_results = 32,     ///< results are made shareable between threads (which walks them)
  wrong_arity = 64,       ///< invocations sometimes pass one argument too many or too few
  closures_from_c = 128,  ///< closures among the results are invoked from C++ as well
};

/// Byte 1 of an input.
inline constexpr std::uint8_t big_budget = 7;
inline constexpr std::uint8_t deep_calls = 7 << 3;

}  // namespace relaxvm_fuzz

#endif  // RELAXVM_FUZZ_BUILD_INPUT_HPP
