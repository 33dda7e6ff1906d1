// SPDX-License-Identifier: Apache-2.0
// The board of the firmware examples: the MPS2 AN385 (Cortex-M3) or AN386 (Cortex-M4) under QEMU. Semihosting output
// and exit, the startup code and vector table, and counters on newlib's heap entry points (each
// example is linked with -Wl,--wrap=_malloc_r and the others, see tools/firmware.sh), so an
// example can prove it made no heap allocation. Included by one translation unit per image.
#ifndef RELAXVM_EXAMPLES_FIRMWARE_BOARD_HPP
#define RELAXVM_EXAMPLES_FIRMWARE_BOARD_HPP

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <relaxvm/fwd.hpp>
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

// 32-bit arithmetic only: a Cortex-M3 has no 64-bit division, and the values printed are small.
void print_int(std::int32_t v) {
  char digits[11];
  int n = 11;
  std::uint32_t u = v < 0 ? 0u - static_cast<std::uint32_t>(v) : static_cast<std::uint32_t>(v);
  do {
    digits[--n] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) print("-");
  print(std::string_view(digits + n, static_cast<std::size_t>(11 - n)));
}

// Four decimals, rounded; enough to read the result.
void print_float(float f) {
  if (f < 0) {
    print("-");
    f = -f;
  }
  const auto scaled = static_cast<std::int32_t>(f * 10000.0f + 0.5f);
  print_int(scaled / 10000);
  char frac[6] = {'.', '0', '0', '0', '0', '\0'};
  std::int32_t r = scaled % 10000;
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
// the others, see tools/firmware.sh), so each one is counted, from reset on: static constructors
// run after .bss is zeroed, so one that allocates (libstdc++'s emergency exception pool, when
// anything links the code that throws) is counted too. The program must make none.
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
#if defined(__ARM_FP)
  // A Cortex-M4 built for its FPU: coprocessors 10 and 11 (the FPU) on before any float code.
  *reinterpret_cast<volatile std::uint32_t*>(0xE000ED88) |= 0xFu << 20;  // CPACR
  asm volatile("dsb\n\tisb" ::: "memory");
#endif
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

#endif  // RELAXVM_EXAMPLES_FIRMWARE_BOARD_HPP
