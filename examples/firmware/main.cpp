// SPDX-License-Identifier: Apache-2.0
// relaxvm on a Cortex-M3 (the MPS2 AN385 board, under QEMU): a dense + relu + dense network,
// built and verified at compile time, linked at compile time against its kernels and the
// builtins, its weights constexpr arrays in flash. No exceptions, no RTTI, and no heap: frames
// live in a static buffer sized by a constexpr, objects in the buffer given to
// set_object_memory(), tensor data in an arena. The program prints its result through
// semihosting and exits with success only when the VM's result equals the same network computed
// directly and nothing, not even the error it provokes, touched the heap.
//
// Build: tools/firmware.sh (arm-none-eabi-g++ -mcpu=cortex-m3 -mthumb -Os -fno-exceptions
// -fno-rtti -DRELAXVM_HEAP=0 -Wl,--wrap=_malloc_r ...); run: qemu-system-arm -M mps2-an385 -nographic -semihosting
// -kernel firmware.elf.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace relaxvm {
class error;
}
// Contract violations (a result's value() on an error, object memory exhausted) end up here.
[[noreturn]] void firmware_fatal(const relaxvm::error& e);
#define RELAXVM_ON_ERROR(e) firmware_fatal(e)

#include <relaxvm.hpp>

namespace rv = relaxvm;

// ---- the board: semihosting output and exit, startup -----------------------------------------

namespace {

int semihost(int op, std::uintptr_t arg) {
  register int r0 asm("r0") = op;
  register std::uintptr_t r1 asm("r1") = arg;
  asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void print(std::string_view s) {
  char buf[65];
  while (!s.empty()) {
    const std::size_t n = s.size() < 64 ? s.size() : 64;
    for (std::size_t i = 0; i < n; ++i) buf[i] = s[i];
    buf[n] = '\0';
    semihost(0x04, reinterpret_cast<std::uintptr_t>(buf));  // SYS_WRITE0
    s.remove_prefix(n);
  }
}

void print_int(std::int64_t v) {
  char digits[21];
  int n = 21;
  const bool negative = v < 0;
  std::uint64_t u = negative ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  do {
    digits[--n] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative) print("-");
  print(std::string_view(digits + n, static_cast<std::size_t>(21 - n)));
}

// Four decimals, rounded; enough to read the result.
void print_float(float f) {
  if (f < 0) {
    print("-");
    f = -f;
  }
  const auto scaled = static_cast<std::int64_t>(static_cast<double>(f) * 10000.0 + 0.5);
  print_int(scaled / 10000);
  char frac[6] = {'.', '0', '0', '0', '0', '\0'};
  std::int64_t r = scaled % 10000;
  for (int i = 4; i >= 1; --i, r /= 10) frac[i] = static_cast<char>('0' + r % 10);
  print(frac);
}

[[noreturn]] void exit_with(bool ok) {
  // SYS_EXIT: ApplicationExit makes QEMU exit with 0; RunTimeErrorUnknown with 1.
  semihost(0x18, ok ? 0x20026 : 0x20023);
  for (;;) {
  }
}

// Heap allocations: the build wraps newlib's allocation entry points (-Wl,--wrap=_malloc_r and
// the others, see tools/firmware.sh), so each one is counted. The program must make none.
// (libstdc++ allocates its emergency exception pool before main; main starts counting at zero.)
std::size_t heap_requests = 0;

}  // namespace

[[noreturn]] void firmware_fatal(const relaxvm::error& e) {
  print("relaxvm error: ");
  print(e.message());
  print("\n");
  exit_with(false);
}

extern "C" {
extern std::uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
extern std::byte __heap_start, __heap_end;
extern void (*__init_array_start[])(), (*__init_array_end[])();
void* __dso_handle = nullptr;  // static destructors are never run: the program ends by semihosting
int main();

struct _reent;
void* __real__malloc_r(_reent*, std::size_t);
void* __real__calloc_r(_reent*, std::size_t, std::size_t);
void* __real__realloc_r(_reent*, void*, std::size_t);
void* __real__memalign_r(_reent*, std::size_t, std::size_t);
void* __wrap__malloc_r(_reent* r, std::size_t n) {
  ++heap_requests;
  return __real__malloc_r(r, n);
}
void* __wrap__calloc_r(_reent* r, std::size_t n, std::size_t size) {
  ++heap_requests;
  return __real__calloc_r(r, n, size);
}
void* __wrap__realloc_r(_reent* r, void* p, std::size_t n) {
  ++heap_requests;
  return __real__realloc_r(r, p, n);
}
void* __wrap__memalign_r(_reent* r, std::size_t align, std::size_t n) {
  ++heap_requests;
  return __real__memalign_r(r, align, n);
}
void* _sbrk(std::ptrdiff_t increment) {
  static std::byte* top = &__heap_start;
  if (increment > &__heap_end - top || increment < &__heap_start - top) return reinterpret_cast<void*>(-1);
  std::byte* old = top;
  top += increment;
  return old;
}
[[noreturn]] void _exit(int code) { exit_with(code == 0); }

[[noreturn]] void reset_handler() {
  for (std::uint32_t *src = &__data_load, *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (std::uint32_t* p = &__bss_start; p < &__bss_end;) *p++ = 0;
  for (auto f = __init_array_start; f < __init_array_end; ++f) (*f)();
  exit_with(main() == 0);
}
[[noreturn]] void fault_handler() {
  print("fault\n");
  exit_with(false);
}

// Initial stack pointer, reset, then the fault handlers of the Cortex-M3.
__attribute__((section(".vectors"), used)) const void* const vector_table[] = {
    &__stack_top,
    reinterpret_cast<const void*>(&reset_handler),
    reinterpret_cast<const void*>(&fault_handler),  // NMI
    reinterpret_cast<const void*>(&fault_handler),  // hard fault
    reinterpret_cast<const void*>(&fault_handler),  // memory management
    reinterpret_cast<const void*>(&fault_handler),  // bus fault
    reinterpret_cast<const void*>(&fault_handler),  // usage fault
};
}

// ---- the network ---------------------------------------------------------------------------

namespace {

constexpr std::array<float, 8 * 4> w1 = {0.5f,  -0.25f, 0.75f, 0.1f,  -0.5f, 0.3f,  0.2f,  0.9f,
                                         0.05f, 0.6f,   -0.4f, 0.25f, 0.7f,  -0.1f, 0.35f, -0.6f,
                                         -0.2f, 0.45f,  0.15f, 0.8f,  0.3f,  0.3f,  -0.7f, 0.1f,
                                         0.65f, -0.35f, 0.5f,  -0.15f, 0.4f, 0.2f,  0.6f,  -0.45f};
constexpr std::array<float, 8> b1 = {0.1f, -0.2f, 0.05f, 0.0f, 0.3f, -0.1f, 0.2f, -0.05f};
constexpr std::array<float, 3 * 8> w2 = {0.3f,  -0.6f, 0.2f,  0.5f,  -0.1f, 0.4f,  0.25f, -0.3f,
                                         -0.4f, 0.1f,  0.55f, -0.2f, 0.35f, 0.15f, -0.5f, 0.6f,
                                         0.2f,  0.45f, -0.3f, 0.1f,  0.5f,  -0.25f, 0.3f, 0.05f};
constexpr std::array<float, 3> b2 = {0.05f, -0.1f, 0.2f};

template <std::size_t N>
constexpr std::array<std::uint8_t, N * 4> bytes_of(const std::array<float, N>& a) {
  return std::bit_cast<std::array<std::uint8_t, N * 4>>(a);
}
constexpr auto w1_bytes = bytes_of(w1);
constexpr auto b1_bytes = bytes_of(b1);
constexpr auto w2_bytes = bytes_of(w2);
constexpr auto b2_bytes = bytes_of(b2);
constexpr std::array<std::int64_t, 2> w1_shape{8, 4}, w2_shape{3, 8};
constexpr std::array<std::int64_t, 1> b1_shape{8}, b2_shape{3};

// The kernels, destination-passing as call_tir lowers to: out = x . w^T + b, and relu in place.
rv::status dense(const rv::tensor& x, const rv::tensor& w, const rv::tensor& b, const rv::tensor& out) {
  const std::int64_t k = w.shape()[1], n = w.shape()[0];
  if (x.shape() != rv::shape{1, k} || b.shape() != rv::shape{n} || out.shape() != rv::shape{1, n})
    return rv::detail::value_error("fw.dense: shapes do not match");
  const float *px = x.data<const float>(), *pw = w.data<const float>(), *pb = b.data<const float>();
  float* po = out.data<float>();
  for (std::int64_t j = 0; j < n; ++j) {
    float acc = pb[j];
    for (std::int64_t i = 0; i < k; ++i) acc += px[i] * pw[j * k + i];
    po[j] = acc;
  }
  return {};
}
rv::status relu(const rv::tensor& x, const rv::tensor& out) {
  if (x.shape() != out.shape()) return rv::detail::value_error("fw.relu: shapes do not match");
  for (std::int64_t i = 0; i < x.numel(); ++i) out.data<float>()[i] = x.data<const float>()[i] > 0 ? x.data<const float>()[i] : 0;
  return {};
}

// main(x): check x is float32 [1, 4], then h = relu(dense(x, w1, b1)), y = dense(h, w2, b2).
constexpr auto program = rv::build([](rv::exec_builder& b) {
  const rv::dtype f32 = rv::dtype::float32();
  auto fn = b.function("main", 1, {"x"});
  b.emit_call("vm.builtin.check_tensor_info", {b.r(0), b.imm(2), b.c(b.add_dtype(f32)), b.c(b.add_string("x: "))});
  // match_shape(x, no heap, 2 dims, assert_equal_to_imm 1, assert_equal_to_imm 4, err_ctx)
  b.emit_call("vm.builtin.match_shape",
              {b.r(0), b.void_arg(), b.imm(2), b.imm(0), b.imm(1), b.imm(0), b.imm(4), b.c(b.add_string("x: "))});
  b.emit_call("vm.builtin.alloc_storage",
              {b.vm_state(), b.c(b.add_shape({128})), b.imm(-1), b.c(b.add_dtype(rv::dtype::uint8()))}, b.r(1));
  b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(0), b.c(b.add_shape({1, 8})), b.c(b.add_dtype(f32))}, b.r(2));
  b.emit_call("fw.dense", {b.r(0), b.c(b.add_tensor(f32, w1_shape, w1_bytes)), b.c(b.add_tensor(f32, b1_shape, b1_bytes)),
                           b.r(2)});
  b.emit_call("fw.relu", {b.r(2), b.r(2)});
  b.emit_call("vm.builtin.alloc_tensor", {b.r(1), b.imm(64), b.c(b.add_shape({1, 3})), b.c(b.add_dtype(f32))}, b.r(3));
  b.emit_call("fw.dense", {b.r(2), b.c(b.add_tensor(f32, w2_shape, w2_bytes)), b.c(b.add_tensor(f32, b2_shape, b2_bytes)),
                           b.r(3)});
  b.emit_call("vm.builtin.kill_object", {b.r(2)}, b.r(2));
  b.emit_ret(b.r(3));
});
constexpr auto table = rv::make_table(rv::fn<"fw.dense">(&dense), rv::fn<"fw.relu">(&relu), rv::builtins::shape_table,
                                      rv::builtins::memory_table);
using linked = decltype(rv::link<program, table>());

// Memory, all static: the VM's frames (sized at compile time), objects, and tensor data.
alignas(rv::value) std::byte vm_memory[linked::memory_bytes];
alignas(64) std::byte object_memory[8192];
alignas(64) std::byte arena_memory[256];

constexpr float input[4] = {1.0f, -2.0f, 0.5f, 3.0f};

// The same network in plain C++, for the check.
std::array<float, 3> direct() {
  std::array<float, 8> h{};
  for (int j = 0; j < 8; ++j) {
    float acc = b1[j];
    for (int i = 0; i < 4; ++i) acc += input[i] * w1[j * 4 + i];
    h[j] = acc > 0 ? acc : 0;
  }
  std::array<float, 3> y{};
  for (int j = 0; j < 3; ++j) {
    float acc = b2[j];
    for (int i = 0; i < 8; ++i) acc += h[i] * w2[j * 8 + i];
    y[j] = acc;
  }
  return y;
}

}  // namespace

int main() {
  heap_requests = 0;
  rv::set_object_memory(object_memory);
  bool ok = true;
  {
    const rv::device_allocator devices[] = {{rv::device::cpu(), rv::allocator::arena(arena_memory)}};
    rv::static_vm<linked> vm = rv::static_vm<linked>::create(vm_memory, devices).value();
    const rv::tensor x =
        rv::tensor::try_view(const_cast<float*>(input), rv::shape{1, 4}, rv::dtype::float32(), rv::device::cpu(), {}, true)
            .value();
    const rv::value args[] = {x};
    for (int run = 0; run < 3; ++run) {  // the arena and the object memory are reused each time
      const rv::tensor y = vm.invoke("main", args).value().as<rv::tensor>();
      const std::array<float, 3> want = direct();
      for (int j = 0; j < 3; ++j) ok = ok && y.data<const float>()[j] == want[j];
      if (run == 0) {
        print("relaxvm on Cortex-M3: y = [");
        for (int j = 0; j < 3; ++j) {
          print_float(y.data<const float>()[j]);
          print(j < 2 ? ", " : "]\n");
        }
      }
    }
    // An error comes back as a result, its message in the error itself, and the VM stays usable.
    const rv::tensor wrong =
        rv::tensor::try_view(const_cast<float*>(input), rv::shape{2, 2}, rv::dtype::float32(), rv::device::cpu(), {}, true)
            .value();
    const rv::value bad[] = {wrong};
    const rv::result<rv::value> err = vm.invoke("main", bad);
    ok = ok && !err.ok();
    if (!err.ok()) {
      print("a [2, 2] input: ");
      const std::string_view m = err.error().message();
      print(m.substr(0, m.find('\n')));
      print("\n");
    }
    ok = ok && vm.invoke("main", args).ok();
    print("memory: VM frames ");
    print_int(static_cast<std::int64_t>(linked::memory_bytes));
    print(" B (constexpr), objects ");
    print_int(static_cast<std::int64_t>(rv::object_memory_peak()));
    print(" B, tensor arena ");
    print_int(devices[0].allocator.stats().peak_bytes_in_use);
    print(" B\n");
  }
  print("heap allocations: ");
  print_int(static_cast<std::int64_t>(heap_requests));
  print("\n");
  ok = ok && heap_requests == 0;
  print(ok ? "ok\n" : "FAILED\n");
  return ok ? 0 : 1;
}
