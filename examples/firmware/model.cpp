// SPDX-License-Identifier: Apache-2.0
// The image tools/mcu.sh builds around a model: model.hpp is what `relaxvm cpp MODEL.onnx --name
// model` wrote (found on the include path the script gives). Reads the input from in.npy and
// writes the output to out.npy through semihosting (files in QEMU's working directory), and prints
// the heap allocations counted from reset (there must be none), the memory the model was given,
// the ticks of the board's timer one inference took (when QEMU runs with -icount shift=0, one
// nanosecond of virtual time per instruction: 40 instructions a tick) and the stack it used. Built and run by
// tools/firmware.sh OUT_DIR model (tools/mcu.sh does it).
#include "board.hpp"
#include "model.hpp"

namespace {

// One float32 input and one output: the files are .npy arrays of their shapes.
static_assert(model::model::inputs.size() == 1 && model::model::outputs.size() == 1,
              "tools/mcu.sh runs models of one input and one output");
static_assert(model::model::inputs[0].type == rv::dtype::float32() && model::model::outputs[0].type == rv::dtype::float32(),
              "tools/mcu.sh runs models of a float32 input and output");
constexpr std::size_t count(const rv::model_tensor& t) {
  std::size_t n = 1;
  for (std::int64_t d : t.dims) n *= static_cast<std::size_t>(d);
  return n;
}
constexpr std::size_t in_count = count(model::model::inputs[0]), out_count = count(model::model::outputs[0]);

rv::arena_buffer<model::arena_bytes> arena;
alignas(rv::value) std::byte frames[model::frame_bytes];
rv::object_buffer<model::object_bytes> objects;
float input[in_count], output[out_count];

// Semihosting's file calls (ARM's semihosting specification: SYS_OPEN, SYS_CLOSE, SYS_WRITE, SYS_READ).
int open_file(const char* name, std::size_t len, bool write) {
  const std::uintptr_t args[] = {reinterpret_cast<std::uintptr_t>(name), write ? 6u : 1u, len};  // "wb" or "rb"
  return semihost(0x01, reinterpret_cast<std::uintptr_t>(args));
}
bool transfer(int op, int handle, void* data, std::size_t n) {
  const std::uintptr_t args[] = {static_cast<std::uintptr_t>(handle), reinterpret_cast<std::uintptr_t>(data), n};
  return semihost(op, reinterpret_cast<std::uintptr_t>(args)) == 0;  // the bytes not transferred
}
void close_file(int handle) {
  const std::uintptr_t args[] = {static_cast<std::uintptr_t>(handle)};
  semihost(0x02, reinterpret_cast<std::uintptr_t>(args));
}

// in.npy: a little-endian float32 array of in_count elements, format 1.0 (a 10-byte preamble).
bool read_input() {
  const int f = open_file("in.npy", 6, false);
  if (f < 0) return false;
  unsigned char head[10];
  bool ok = transfer(0x06, f, head, 10) && head[0] == 0x93 && head[6] == 1;
  const std::size_t header = ok ? static_cast<std::size_t>(head[8] | head[9] << 8) : 0;
  char dict[256];
  ok = ok && header <= sizeof dict && transfer(0x06, f, dict, header);
  ok = ok && std::string_view(dict, header).find("'<f4'") != std::string_view::npos;
  ok = ok && transfer(0x06, f, input, sizeof input);
  close_file(f);
  return ok;
}

// out.npy: the output, of the model's shape ("(12,)", "(1, 12)").
bool write_output() {
  char header[128] = "\x93NUMPY\x01\x00\x00\x00{'descr': '<f4', 'fortran_order': False, 'shape': (";
  std::size_t n = 10 + std::string_view(header + 10).size();
  const auto put = [&](std::string_view s) {
    for (char c : s) header[n++] = c;
  };
  const auto& dims = model::model::outputs[0].dims;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    char digits[12];
    int k = 12;
    auto u = static_cast<std::uint32_t>(dims[i]);
    do {
      digits[--k] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (i > 0) put(", ");
    put(std::string_view(digits + k, static_cast<std::size_t>(12 - k)));
  }
  put(dims.size() == 1 ? ",), }" : "), }");
  while ((n + 1) % 64 != 0) header[n++] = ' ';  // the data starts 64-byte aligned
  header[n++] = '\n';
  header[8] = static_cast<char>((n - 10) & 0xff);
  header[9] = static_cast<char>((n - 10) >> 8);
  const int f = open_file("out.npy", 7, true);
  if (f < 0) return false;
  const bool ok = transfer(0x05, f, header, n) && transfer(0x05, f, output, sizeof output);
  close_file(f);
  return ok;
}

// The CMSDK dual timer of the MPS2 boards (0x40002000), timer 1: 32 bits, free-running at the
// board's 25 MHz clock, counting down. Under -icount shift=0 a tick is 40 instructions.
volatile std::uint32_t* const timer = reinterpret_cast<volatile std::uint32_t*>(0x40002000);
std::uint32_t timer_now() { return timer[1]; }

// The stack: painted from the bottom of the frame of main to a margin below the lowest it reaches, so
// that what the run overwrote is the most it used.
constexpr std::uint32_t paint = 0x5AA5C33Cu;
constexpr std::size_t paint_words = 32768;  // 128 KiB
[[gnu::noinline]] std::uint32_t* paint_stack() {
  std::uint32_t* sp;
  asm volatile("mov %0, sp" : "=r"(sp));
  std::uint32_t* low = sp - paint_words;
  for (std::uint32_t* p = low; p < sp - 16; ++p) *p = paint;
  return low;
}
std::size_t stack_used(const std::uint32_t* low, const std::uint32_t* top) {
  const std::uint32_t* p = low;
  while (p < top && *p == paint) ++p;
  return static_cast<std::size_t>(top - p) * 4;
}

}  // namespace

int main() {
  if (!read_input()) {
    print("cannot read in.npy (a float32 array of the model's input shape)\n");
    return 1;
  }
  timer[2] = 0;            // control: stopped
  timer[0] = 0xFFFFFFFFu;  // load
  timer[2] = 0x80 | 0x02;  // enabled, 32-bit, free-running
  const std::uint32_t* const stack_top = &__stack_top;
  const std::uint32_t* const low = paint_stack();
  const std::uint32_t t0 = timer_now();
  const rv::status s = model::run(arena, frames, objects, input, output);
  const std::uint32_t ticks = t0 - timer_now();
  const std::size_t stack = stack_used(low, stack_top);
  if (!s.ok()) {
    print("relaxvm error: ");
    print(s.error().message());
    print("\n");
    return 1;
  }
  if (!write_output()) {
    print("cannot write out.npy\n");
    return 1;
  }
  print("output[0] = ");
  print_float(output[0]);
  // Ticks of the 25 MHz timer: 40 instructions each when QEMU runs with -icount shift=0.
  print("\ntimer ticks: ");
  print_int(static_cast<std::int32_t>(ticks));
  print("\nmemory: arena ");
  print_int(static_cast<std::int32_t>(model::arena_bytes));
  print(" B, frames ");
  print_int(static_cast<std::int32_t>(model::frame_bytes));
  print(" B, objects ");
  print_int(static_cast<std::int32_t>(model::object_bytes));
  print(" B (constexpr); stack ");
  print_int(static_cast<std::int32_t>(stack));
  print(" B (measured)\nheap allocations: ");
  print_int(static_cast<std::int32_t>(heap_requests));
  print("\n");
  return heap_requests == 0 ? 0 : 1;
}
