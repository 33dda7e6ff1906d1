// SPDX-License-Identifier: Apache-2.0
// `relaxvm embed` output compiles into a compile-time program: embedded_weights.hpp is what the
// tool wrote from the .npy files of tests/cli/make_npy.py (float32 with infinities, -0 and a
// denormal, int64's extremes, bool, an empty array, a float64 scalar, uint8). The arrays are
// checked at compile time, then added with add_tensor to a program built by rv::build, which runs
// and returns them.
#include <cmath>
#include <cstdio>
#include <limits>
#include <relaxvm.hpp>
#include <span>

#include "embedded_weights.hpp"

namespace rv = relaxvm;
namespace w = test::w;

static_assert(w::dense_1_weight_shape == std::array<std::int64_t, 2>{2, 3});
static_assert(w::dense_1_weight_data[0] == 1.5f && w::dense_1_weight_data[2] == std::numeric_limits<float>::infinity());
static_assert(std::bit_cast<std::uint32_t>(w::dense_1_weight_data[1]) == 0x80000000u);  // -0, not 0
static_assert(std::bit_cast<std::uint32_t>(w::dense_1_weight_data[4]) == 1u);           // the smallest denormal
static_assert(w::dense_1_weight_data[5] == std::numeric_limits<float>::max());
static_assert(w::positions_data[2] == std::numeric_limits<std::int64_t>::min());
static_assert(w::positions_data[3] == std::numeric_limits<std::int64_t>::max());
static_assert(w::mask_data == std::array<bool, 4>{true, false, false, true});
static_assert(w::empty_shape == std::array<std::int64_t, 2>{0, 3} && w::empty_data.empty());
static_assert(w::t2scale_shape.empty() && w::t2scale_data[0] == 0.1);  // a scalar; "2scale" is no identifier
static_assert(w::bytes_data[2] == 255);
static_assert(std::bit_cast<std::uint32_t>(w::nan_data[0]) == 0x7FC00001u);  // a NaN keeps its payload
static_assert(std::bit_cast<std::uint32_t>(w::nan_data[1]) == 0xFFC00000u);  // and its sign
static_assert(std::string_view(w::dense_1_weight_dtype) == "float32" && std::string_view(w::mask_dtype) == "bool");

constexpr auto program = rv::build([](rv::exec_builder& b) {
  auto fn = b.function("main", 0);
  b.emit_call("vm.builtin.make_tuple",
              {b.c(b.add_tensor(std::span<const float>(w::dense_1_weight_data), w::dense_1_weight_shape)),
               b.c(b.add_tensor(std::span<const std::int64_t>(w::positions_data), w::positions_shape)),
               b.c(b.add_tensor(std::span<const bool>(w::mask_data), w::mask_shape)),
               b.c(b.add_tensor(std::span<const float>(w::empty_data), w::empty_shape)),
               b.c(b.add_tensor(std::span<const double>(w::t2scale_data), w::t2scale_shape)),
               b.c(b.add_tensor(std::span<const std::uint8_t>(w::bytes_data), w::bytes_shape))},
              b.r(0));
  b.emit_ret(b.r(0));
});

int main() {
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "embed_check: %s\n", what);
      ++failures;
    }
  };
  rv::registry reg;
  rv::virtual_machine vm(program, reg);
  const rv::tuple t = vm.invoke("main", {}).as<rv::tuple>();
  const rv::tensor dense = t[0].as<rv::tensor>();
  expect(dense.shape() == rv::shape{2, 3} && dense.dtype() == rv::dtype::float32(), "dense_1_weight: shape and dtype");
  const float* d = dense.data<const float>();
  expect(d[0] == 1.5f && std::signbit(d[1]) && d[1] == 0.0f && d[3] == -std::numeric_limits<float>::infinity() &&
             d[4] == std::numeric_limits<float>::denorm_min(),
         "dense_1_weight: values");
  const rv::tensor pos = t[1].as<rv::tensor>();
  expect(pos.dtype() == rv::dtype::int64() && pos.data<const std::int64_t>()[1] == -1 &&
             pos.data<const std::int64_t>()[2] == std::numeric_limits<std::int64_t>::min(),
         "positions");
  const rv::tensor mask = t[2].as<rv::tensor>();
  const auto* m = static_cast<const std::uint8_t*>(mask.raw_data());
  expect(mask.dtype() == rv::dtype::bool_() && mask.shape() == rv::shape{2, 2} && m[0] == 1 && m[1] == 0 && m[3] == 1,
         "mask");
  const rv::tensor empty = t[3].as<rv::tensor>();
  expect(empty.shape() == rv::shape{0, 3} && empty.numel() == 0, "empty");
  const rv::tensor scale = t[4].as<rv::tensor>();
  expect(scale.ndim() == 0 && scale.dtype() == rv::dtype::float64() && scale.data<const double>()[0] == 0.1, "the scalar");
  expect(t[5].as<rv::tensor>().data<const std::uint8_t>()[1] == 128, "bytes");
  if (failures == 0) std::printf("embed_check: the embedded weights run in a compile-time program\n");
  return failures == 0 ? 0 : 1;
}
