// SPDX-License-Identifier: Apache-2.0
// A bytecode program of a given number of instructions, written with exec_builder the way a
// hand-written or generated program of real size is: tools/build_compile_time.py builds it with
// relaxvm::build at compile time, and tests/compile_time/ checks that 1,000 instructions compile
// at both compilers' default constexpr limits.
//
// For `instructions` = N: N / 100 vm functions (at least one) of about 100 instructions each.
// Each takes two inputs and runs a chain of calls to 16 packed functions whose arguments mix
// registers, immediates and constants (a new shape and one of 10 ints every 5 instructions, one
// of 8 strings, a dtype), a call of the previous vm function every 20 instructions, and an If
// with both branches (If, call, goto, call) every 25, then returns. At N = 1,000: 10 functions,
// 188 constants (169 shapes, 10 ints, 8 strings, 1 dtype).
#ifndef RELAXVM_BENCH_BIG_PROGRAM_HPP
#define RELAXVM_BENCH_BIG_PROGRAM_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#if __has_include(<relaxvm/bytecode/builder.hpp>)
#include <relaxvm/bytecode/builder.hpp>
#else
#include <relaxvm.hpp>  // the single header (tests/ builds static_build.cpp against it too)
#endif

namespace bench {

/// "f<k>", written into `buf`.
constexpr std::string_view function_name(std::int64_t k, char (&buf)[24]) {
  char digits[20]{};
  std::int64_t d = 0;
  for (std::int64_t v = k < 0 ? 0 : k; d == 0 || v != 0; v /= 10) digits[d++] = static_cast<char>('0' + v % 10);
  buf[0] = 'f';
  std::size_t len = 1;
  while (d > 0) buf[len++] = digits[--d];
  return std::string_view(buf, len);
}

/// Adds vm functions "f0", "f1", ... of `instructions` instructions in all to `b` (constexpr).
constexpr void big_program(relaxvm::exec_builder& b, std::int64_t instructions) {
  constexpr std::string_view packed[16] = {
      "ops.add",          "ops.multiply",           "ops.relu",
      "ops.dense",        "ops.softmax",            "ops.sum",
      "ops.reshape",      "ops.max",                "vm.builtin.copy",
      "vm.builtin.make_shape", "vm.builtin.match_shape", "vm.builtin.alloc_storage",
      "vm.builtin.alloc_tensor", "vm.builtin.tuple_getitem", "vm.builtin.make_tuple",
      "vm.builtin.null_value"};
  constexpr std::string_view names[8] = {"x", "weight", "bias", "ErrorContext(fn=main)", "hidden", "out",
                                         "scale", "offset"};
  const std::int64_t functions = instructions >= 200 ? instructions / 100 : 1;
  std::int64_t left = instructions;
  std::int64_t call_index = 0;
  for (std::int64_t k = 0; k < functions; ++k) {
    std::int64_t n = k + 1 == functions ? left : instructions / functions;
    left -= n;
    char name[24]{}, prev_name[24]{};
    const std::string_view fname = function_name(k, name);
    const std::string_view previous = function_name(k - 1, prev_name);  // used when k > 0

    auto scope = b.function(fname, 2, {"x", "y"});
    std::int64_t last = 0;      // the register the chain continues from
    std::int64_t next_reg = 10;  // register numbers are free: formalization renumbers them
    std::int64_t emitted = 0;
    while (emitted < n - 1) {
      const std::int64_t i = emitted;
      if (i % 25 == 24 && n - 1 - emitted >= 4) {
        // if (last) { r = a(last) } else { r = b(last) }
        const std::int64_t r = next_reg++;
        b.emit_if(b.r(last), 3);
        b.emit_call(packed[call_index++ % 16], {b.r(last), b.imm(i)}, b.r(r));
        b.emit_goto(2);
        b.emit_call(packed[call_index++ % 16], {b.r(last), b.r(1)}, b.r(r));
        last = r;
        emitted += 4;
        continue;
      }
      const std::int64_t dst = next_reg++;
      if (k > 0 && i % 20 == 19) {
        b.emit_call(previous, {b.r(last), b.r(1)}, b.r(dst));
      } else {
        switch (i % 5) {
          case 0:
            b.emit_call(packed[call_index++ % 16],
                        {b.r(last), b.r(0), b.c(b.add_shape({i, 4, k + 1})), b.c(b.add_int(i % 50))}, b.r(dst));
            break;
          case 1: b.emit_call(packed[call_index++ % 16], {b.r(last), b.imm(i), b.vm_state()}, b.r(dst)); break;
          case 2: b.emit_call(packed[call_index++ % 16], {b.r(last), b.c(b.add_string(names[i % 8]))}, b.r(dst)); break;
          case 3:
            b.emit_call(packed[call_index++ % 16], {b.r(last), b.c(b.add_dtype(relaxvm::dtype::float32()))},
                        b.r(dst));
            break;
          default: b.emit_call(packed[call_index++ % 16], {b.r(last), b.r(1), b.r(0)}, b.r(dst)); break;
        }
      }
      last = dst;
      ++emitted;
    }
    b.emit_ret(b.r(last));
  }
}

}  // namespace bench

#endif  // RELAXVM_BENCH_BIG_PROGRAM_HPP
