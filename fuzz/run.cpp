// SPDX-License-Identifier: Apache-2.0
// Fuzz target: load arbitrary bytes as an executable, then run each of its VM functions with
// arguments drawn from the input, under an instruction budget and small memory limits. Every
// outcome must be a value or an error; the VM must stay usable.
//
// Input: byte 0 = how many argument bytes follow (0-255), then the argument bytes, then the
// executable. Each argument takes one byte of kind and up to 8 bytes of payload.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <relaxvm.hpp>
#include <vector>

namespace rv = relaxvm;

namespace {

rv::value next_arg(std::span<const std::uint8_t>& in) {
  if (in.empty()) return rv::value();
  const std::uint8_t kind = in[0];
  in = in.subspan(1);
  std::int64_t payload = 0;
  const std::size_t n = in.size() < 8 ? in.size() : 8;
  std::memcpy(&payload, in.data(), n);
  in = in.subspan(n);
  switch (kind % 7) {
    case 0: return rv::value();
    case 1: return rv::value(payload);
    case 2: return rv::value((payload & 1) != 0);
    case 3: return rv::value(static_cast<double>(payload % 1000) / 7.0);
    case 4: {  // a small int64 tensor, e.g. a shape heap
      const std::int64_t len = (payload & 0xff) % 9;
      return rv::value(rv::tensor::from<std::int64_t>(std::vector<std::int64_t>(static_cast<std::size_t>(len), payload >> 8),
                                                      {len}));
    }
    case 5: {  // a small float32 tensor
      const std::int64_t rows = (payload & 0x3) + 1, cols = ((payload >> 2) & 0x7) + 1;
      return rv::value(rv::tensor::from<float>(std::vector<float>(static_cast<std::size_t>(rows * cols), 0.5f), {rows, cols}));
    }
    default: return rv::value(rv::shape{payload & 0xf, (payload >> 4) & 0xf});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t arg_bytes = data[0] < size - 1 ? data[0] : size - 1;
  std::span<const std::uint8_t> args_in(data + 1, arg_bytes);
  const std::span<const std::byte> exe_bytes(reinterpret_cast<const std::byte*>(data + 1 + arg_bytes), size - 1 - arg_bytes);
  rv::result<rv::executable> exe = rv::executable::try_load(exe_bytes);
  if (!exe.ok()) return 0;
  static const rv::registry reg;  // the builtins
  static std::array<std::byte, 1 << 16> arena_memory;
  rv::vm_options opts;
  opts.max_instructions = 10000;
  opts.max_call_depth = 64;
  opts.max_stack_slots = 1 << 14;
  opts.print = [](std::string_view) {};
  opts.devices = {{rv::device::cpu(), rv::allocator::arena(arena_memory)}};
  rv::result<rv::virtual_machine> vm = rv::virtual_machine::create(*exe, reg, opts);
  if (!vm.ok()) return 0;
  std::vector<rv::value> args;
  for (int i = 0; i < 8; ++i) args.push_back(next_arg(args_in));
  const rv::exec_view v = exe->view();
  for (std::size_t f = 0; f < v.funcs.size(); ++f) {
    if (v.funcs[f].kind != rv::func_kind::vm) continue;
    const auto n = static_cast<std::size_t>(v.funcs[f].num_args);
    if (n > args.size()) continue;
    (void)vm->try_invoke(v.name(f), std::span<const rv::value>(args.data(), n));
    (void)vm->try_invoke(v.name(f), std::span<const rv::value>(args.data(), n));  // usable after an error
  }
  return 0;
}
