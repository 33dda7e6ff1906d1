// SPDX-License-Identifier: Apache-2.0
// The network of the firmware examples, y = dense(relu(dense(x, w1, b1)), w2, b2) for x of shape
// (batch, 4): its weights (constexpr arrays, in flash), its two kernels in destination-passing
// style, the same network in plain C++ for the check, and the run every example makes.
#ifndef RELAXVM_EXAMPLES_FIRMWARE_NETWORK_HPP
#define RELAXVM_EXAMPLES_FIRMWARE_NETWORK_HPP

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "board.hpp"

namespace network {

constexpr std::int64_t in_features = 4, hidden = 8, out_features = 3;

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
constexpr std::array<std::int64_t, 2> w1_shape{hidden, in_features}, w2_shape{out_features, hidden};
constexpr std::array<std::int64_t, 1> b1_shape{hidden}, b2_shape{out_features};

// The kernels, destination-passing as call_tir lowers to: out = x . w^T + b, and relu. They make
// no objects (a shape to compare with would be one), so the object memory the linker counts is
// all the program needs.
inline rv::status dense(const rv::tensor& x, const rv::tensor& w, const rv::tensor& b, const rv::tensor& out) {
  const std::int64_t k = w.shape()[1], n = w.shape()[0];
  if (x.ndim() != 2 || x.shape()[1] != k || b.ndim() != 1 || b.shape()[0] != n || out.ndim() != 2 ||
      out.shape()[0] != x.shape()[0] || out.shape()[1] != n)
    return rv::value_error("fw.dense: shapes do not match");
  const float *px = x.data<const float>(), *pw = w.data<const float>(), *pb = b.data<const float>();
  float* po = out.data<float>();
  for (std::int64_t r = 0; r < x.shape()[0]; ++r)
    for (std::int64_t j = 0; j < n; ++j) {
      float acc = pb[j];
      for (std::int64_t i = 0; i < k; ++i) acc += px[r * k + i] * pw[j * k + i];
      po[r * n + j] = acc;
    }
  return {};
}
inline rv::status relu(const rv::tensor& x, const rv::tensor& out) {
  if (x.shape() != out.shape()) return rv::value_error("fw.relu: shapes do not match");
  for (std::int64_t i = 0; i < x.numel(); ++i) out.data<float>()[i] = x.data<const float>()[i] > 0 ? x.data<const float>()[i] : 0;
  return {};
}

// Inputs: up to 5 rows of 4.
constexpr float input[5 * 4] = {1.0f,  -2.0f, 0.5f, 3.0f,  0.25f, 0.5f,  -1.0f, 2.0f,  -0.5f, 1.5f,
                                2.0f,  -3.0f, 0.0f, 0.75f, 1.25f, -0.25f, 1.0f,  1.0f,  1.0f,  1.0f};

// Row `r` of the network's output, in plain C++.
inline std::array<float, 3> direct(std::int64_t r) {
  std::array<float, 8> h{};
  for (int j = 0; j < 8; ++j) {
    float acc = b1[j];
    for (int i = 0; i < 4; ++i) acc += input[r * 4 + i] * w1[j * 4 + i];
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

inline rv::tensor input_tensor(std::int64_t rows, std::int64_t cols) {
  return rv::tensor::try_view(const_cast<float*>(input), rv::shape{rows, cols}, rv::dtype::float32(), rv::device::cpu(), {},
                              true)
      .value();
}

/// What every example does with its linked program: runs it on `batch` rows three times (the
/// arena and the object memory are reused each time) against the plain C++ network, prints the
/// first row, provokes an error with `wrong` (it comes back as a result, and the VM stays usable),
/// prints the memory used, and exits with success only when all held and nothing touched the heap.
/// `vm_memory` is checked against the program's figure when it compiles (static_vm::create);
/// `tensor_memory` allocates in a buffer of `arena_size` bytes; the object memory has
/// `object_memory_size` bytes.
template <class Linked, std::size_t M>
int run(std::byte (&vm_memory)[M], const rv::allocator& tensor_memory, std::size_t arena_size, std::int64_t batch,
        const rv::tensor& wrong, std::size_t object_memory_size) {
  bool ok = true;
  {
    const rv::device_allocator devices[] = {{rv::device::cpu(), tensor_memory}};
    // Kept in its result, where create() made it (taking it out would move it).
    rv::result<rv::static_vm<Linked>> made = rv::static_vm<Linked>::create(vm_memory, devices);
    if (!made.ok()) return 1;
    rv::static_vm<Linked>& vm = *made;
    const rv::tensor x = input_tensor(batch, in_features);
    for (int run = 0; run < 3; ++run) {
      // invoke<"main">: the name and the argument count are checked when this compiles.
      const rv::tensor y = vm.template invoke<"main">(x).value().template as<rv::tensor>();
      ok = ok && y.ndim() == 2 && y.shape()[0] == batch && y.shape()[1] == out_features;
      for (std::int64_t r = 0; ok && r < batch; ++r) {
        const std::array<float, 3> want = direct(r);
        for (int j = 0; j < 3; ++j) ok = ok && y.data<const float>()[r * 3 + j] == want[static_cast<std::size_t>(j)];
      }
      if (run == 0) {
        print("relaxvm on Cortex-M3: y[0] = [");
        for (int j = 0; j < 3; ++j) {
          print_float(y.data<const float>()[j]);
          print(j < 2 ? ", " : "]\n");
        }
      }
    }
    const rv::result<rv::value> err = vm.template invoke<"main">(wrong);
    ok = ok && !err.ok();
    if (!err.ok()) {
      print("a [");
      print_int(static_cast<std::int32_t>(wrong.shape()[0]));
      print(", ");
      print_int(static_cast<std::int32_t>(wrong.shape()[1]));
      print("] input: ");
      // The first line of the message (no substr: its bounds check can link libstdc++'s throwing
      // code, and with it a heap allocation before main).
      const std::string_view m = err.error().message();
      const std::size_t line = m.find('\n');
      print(std::string_view(m.data(), line == std::string_view::npos ? m.size() : line));
      print("\n");
    }
    ok = ok && vm.template invoke<"main">(x).ok();
    print("memory: VM frames ");
    print_int(static_cast<std::int32_t>(Linked::memory_bytes));
    print(" B (constexpr), objects ");
    print_int(static_cast<std::int32_t>(rv::object_memory_peak()));
    print(" B of ");
    print_int(static_cast<std::int32_t>(object_memory_size));
    print(" B, tensor arena ");
    print_int(static_cast<std::int32_t>(devices[0].allocator.stats().peak_bytes_in_use));
    print(" B of ");
    print_int(static_cast<std::int32_t>(arena_size));
    print("\n");
  }
  print("heap allocations: ");
  print_int(static_cast<std::int32_t>(heap_requests));
  print("\n");
  ok = ok && heap_requests == 0;
  print(ok ? "ok\n" : "FAILED\n");
  return ok ? 0 : 1;
}

}  // namespace network

#endif  // RELAXVM_EXAMPLES_FIRMWARE_NETWORK_HPP
