// SPDX-License-Identifier: Apache-2.0
// kernels/data.hpp: the data movement kernels on the cases ONNX's backend data does not reach
// (empty tensors, negative axes, indices and steps, clamping, every dtype of Cast, in-place
// scatters), the variadic registrations, and the errors naming the op and the argument.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <relaxvm.hpp>
#include <relaxvm/kernels/data.hpp>
#include <relaxvm/kernels/register.hpp>
#include <string>
#include <vector>

namespace rv = relaxvm;
namespace k = relaxvm::kernels;
using rv::shape;
using rv::tensor;

namespace {

template <class T>
tensor make(std::vector<double> v, shape s) {
  std::unique_ptr<T[]> typed(new T[v.size() + 1]);  // not std::vector: vector<bool> has no data()
  for (std::size_t i = 0; i < v.size(); ++i) typed[i] = static_cast<T>(v[i]);
  return tensor::from<T>(std::span<const T>(typed.get(), v.size()), s);
}
template <class T>
tensor out(shape s) {
  return tensor::empty(s, rv::dtype_of<T>());
}
template <class T>
std::vector<double> values(const tensor& t) {
  std::vector<double> v;
  const T* p = t.data<const T>();
  for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<double>(p[i]));
  return v;
}
using D = std::vector<double>;
// An int list argument (Slice's, Pad's): a 1-d int64 tensor.
tensor L(std::initializer_list<std::int64_t> v) {
  return tensor::from<std::int64_t>(std::span<const std::int64_t>(v.begin(), v.size()), shape{static_cast<std::int64_t>(v.size())});
}

std::string message(const rv::status& s) { return s.ok() ? std::string() : std::string(s.error().message()); }
bool fails_with(const rv::status& s, const char* a, const char* b = "") {
  const std::string m = message(s);
  return !s.ok() && m.find(a) != std::string::npos && m.find(b) != std::string::npos;
}

}  // namespace

TEST_CASE("Transpose, DepthToSpace and SpaceToDepth") {
  tensor x = make<std::int32_t>({0, 1, 2, 3, 4, 5}, {2, 3});
  tensor y = out<std::int32_t>({3, 2});
  REQUIRE(k::Transpose_out(x, shape{1, 0}, y).ok());
  CHECK(values<std::int32_t>(y) == D{0, 3, 1, 4, 2, 5});
  // 3-d: (2, 1, 3) -> perm (2, 0, 1) -> (3, 2, 1)
  tensor x3 = make<double>({0, 1, 2, 3, 4, 5}, {2, 1, 3});
  tensor y3 = out<double>({3, 2, 1});
  REQUIRE(k::Transpose_out(x3, shape{2, 0, 1}, y3).ok());
  CHECK(values<double>(y3) == D{0, 3, 1, 4, 2, 5});
  // empty and scalar
  tensor e = out<float>({0, 3});
  tensor ey = out<float>({3, 0});
  CHECK(k::Transpose_out(e, shape{1, 0}, ey).ok());
  tensor s = make<std::uint8_t>({7}, shape{});
  tensor sy = out<std::uint8_t>(shape{});
  REQUIRE(k::Transpose_out(s, shape{}, sy).ok());
  CHECK(values<std::uint8_t>(sy) == D{7});
  CHECK(fails_with(k::Transpose_out(x, shape{0, 0}, y), "onnx.Transpose", "perm"));
  CHECK(fails_with(k::Transpose_out(x, shape{1, 0}, out<std::int32_t>({2, 3})), "onnx.Transpose", "shape"));
  CHECK(fails_with(k::Transpose_out(x, shape{1, 0}, out<float>({3, 2})), "onnx.Transpose", "int32"));
  CHECK(fails_with(k::Transpose_out(x, shape{1, 0}, x), "onnx.Transpose"));

  // DepthToSpace of (1, 4, 1, 1) with blocksize 2: DCR puts channel b1*2+b2 at (b1, b2).
  tensor d = make<float>({1, 2, 3, 4}, {1, 4, 1, 1});
  tensor dy = out<float>({1, 1, 2, 2});
  REQUIRE(k::DepthToSpace_out(d, 2, 0, dy).ok());
  CHECK(values<float>(dy) == D{1, 2, 3, 4});
  // (1, 8, 1, 1): DCR takes channels as (b1, b2, c), CRD as (c, b1, b2).
  tensor d8 = make<float>({0, 1, 2, 3, 4, 5, 6, 7}, {1, 8, 1, 1});
  tensor d8y = out<float>({1, 2, 2, 2});
  REQUIRE(k::DepthToSpace_out(d8, 2, 0, d8y).ok());
  CHECK(values<float>(d8y) == D{0, 2, 4, 6, 1, 3, 5, 7});
  REQUIRE(k::DepthToSpace_out(d8, 2, 1, d8y).ok());
  CHECK(values<float>(d8y) == D{0, 1, 2, 3, 4, 5, 6, 7});
  // SpaceToDepth undoes DCR.
  tensor back = out<float>({1, 8, 1, 1});
  REQUIRE(k::DepthToSpace_out(d8, 2, 0, d8y).ok());
  REQUIRE(k::SpaceToDepth_out(d8y, 2, back).ok());
  CHECK(values<float>(back) == values<float>(d8));
  CHECK(fails_with(k::DepthToSpace_out(d, 3, 0, dy), "onnx.DepthToSpace", "blocksize"));
  CHECK(fails_with(k::SpaceToDepth_out(dy, 3, back), "onnx.SpaceToDepth", "blocksize"));
}

TEST_CASE("Concat and Split, also through the registry") {
  tensor a = make<std::int64_t>({1, 2, 3, 4}, {2, 2});
  tensor b = make<std::int64_t>({5, 6}, {2, 1});
  tensor e = out<std::int64_t>({2, 0});
  tensor y = out<std::int64_t>({2, 3});
  const tensor in[] = {a, e, b};
  REQUIRE(k::Concat_out(in, -1, y).ok());
  CHECK(values<std::int64_t>(y) == D{1, 2, 5, 3, 4, 6});
  CHECK(fails_with(k::Concat_out(in, 0, y), "onnx.Concat", "input 1"));
  CHECK(fails_with(k::Concat_out(in, 2, y), "onnx.Concat", "axis 2"));
  const tensor mixed[] = {a, make<float>({5, 6}, {2, 1})};
  CHECK(fails_with(k::Concat_out(mixed, 1, y), "onnx.Concat", "argument 1"));

  tensor p = out<std::int64_t>({2, 1}), q = out<std::int64_t>({2, 0}), r = out<std::int64_t>({2, 2});
  const tensor parts[] = {p, q, r};
  REQUIRE(k::Split_out(y, 1, parts).ok());
  CHECK(values<std::int64_t>(p) == D{1, 3});
  CHECK(values<std::int64_t>(r) == D{2, 5, 4, 6});
  const tensor short_parts[] = {p, r};
  CHECK(fails_with(k::Split_out(a, 1, short_parts), "onnx.Split", "add up"));

  rv::basic_registry reg;
  k::register_all(reg);
  tensor y2 = out<std::int64_t>({4, 2});
  const rv::value args[] = {a, a, rv::value(std::int64_t{0}), y2};
  REQUIRE(reg.get("onnx.Concat").try_call(args).ok());
  CHECK(values<std::int64_t>(y2) == D{1, 2, 3, 4, 1, 2, 3, 4});
  tensor h1 = out<std::int64_t>({2, 2}), h2 = out<std::int64_t>({2, 2});
  const rv::value split_args[] = {y2, rv::value(std::int64_t{0}), h1, h2};
  REQUIRE(reg.get("onnx.Split").try_call(split_args).ok());
  CHECK(values<std::int64_t>(h2) == D{1, 2, 3, 4});
  const rv::value bad[] = {a, rv::value(std::int64_t{0})};
  CHECK(!reg.get("onnx.Concat").try_call(bad).ok());
}

TEST_CASE("Slice: negative starts and steps, clamping, empty results") {
  tensor x = make<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10});
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  tensor y = out<float>({3});
  REQUIRE(k::Slice_out(x, L({-3}), L({big}), L({0}), L({1}), y).ok());
  CHECK(values<float>(y) == D{7, 8, 9});
  tensor r = out<float>({4});
  REQUIRE(k::Slice_out(x, L({big}), L({-big}), L({-1}), L({-3}), r).ok());  // 9, 6, 3, 0
  CHECK(values<float>(r) == D{9, 6, 3, 0});
  tensor none = out<float>({0});
  CHECK(k::Slice_out(x, L({5}), L({2}), L({0}), L({1}), none).ok());
  tensor m = make<std::int16_t>({0, 1, 2, 3, 4, 5}, {2, 3});
  tensor my = out<std::int16_t>({2, 2});
  REQUIRE(k::Slice_out(m, make<std::int32_t>({-1}, {1}), L({0}), make<std::int32_t>({1}, {1}), L({-1}), my).ok());
  CHECK(values<std::int16_t>(my) == D{2, 1, 5, 4});
  CHECK(fails_with(k::Slice_out(x, L({0}), L({3}), L({0}), L({0}), y), "onnx.Slice", "step"));
  CHECK(fails_with(k::Slice_out(x, L({0}), L({3}), L({1}), L({1}), y), "onnx.Slice", "axis"));
  CHECK(fails_with(k::Slice_out(x, L({0}), L({4}), L({0}), L({1}), y), "onnx.Slice", "shape"));
  CHECK(fails_with(k::Slice_out(m, L({0, 0}), L({1, 1}), L({1, -1}), L({1, 1}), my), "onnx.Slice", "twice"));
  CHECK(fails_with(k::Slice_out(x, L({0}), L({1, 2}), L({0}), L({1}), y), "onnx.Slice", "argument 2"));
  CHECK(fails_with(k::Slice_out(m, L({0, 0}), L({1}), L({0, 1}), L({1, 1}), my), "onnx.Slice", "one length"));
  CHECK(fails_with(k::Slice_out(x, make<float>({0}, {1}), L({3}), L({0}), L({1}), y), "onnx.Slice", "argument 1"));
}

TEST_CASE("Pad: constant, reflect, edge, negative pads") {
  tensor x = make<std::int32_t>({1, 2, 3}, {3});
  tensor y = out<std::int32_t>({7});
  REQUIRE(k::Pad_out(x, L({2, 2}), 0, tensor(), y).ok());
  CHECK(values<std::int32_t>(y) == D{0, 0, 1, 2, 3, 0, 0});
  REQUIRE(k::Pad_out(x, L({2, 2}), 0, make<std::int32_t>({9}, shape{}), y).ok());
  CHECK(values<std::int32_t>(y) == D{9, 9, 1, 2, 3, 9, 9});
  REQUIRE(k::Pad_out(x, L({2, 2}), 1, tensor(), y).ok());
  CHECK(values<std::int32_t>(y) == D{3, 2, 1, 2, 3, 2, 1});
  REQUIRE(k::Pad_out(x, L({2, 2}), 2, tensor(), y).ok());
  CHECK(values<std::int32_t>(y) == D{1, 1, 1, 2, 3, 3, 3});
  tensor crop = out<std::int32_t>({2});
  REQUIRE(k::Pad_out(x, L({-1, 0}), 0, tensor(), crop).ok());
  CHECK(values<std::int32_t>(crop) == D{2, 3});
  // Crops and pads at once: the row's copied middle and its padded ends.
  tensor four = out<std::int32_t>({4});
  REQUIRE(k::Pad_out(x, L({-2, 3}), 0, tensor(), four).ok());
  CHECK(values<std::int32_t>(four) == D{3, 0, 0, 0});
  REQUIRE(k::Pad_out(x, L({-2, 3}), 1, tensor(), four).ok());
  CHECK(values<std::int32_t>(four) == D{3, 2, 1, 2});
  REQUIRE(k::Pad_out(x, L({-2, 3}), 2, tensor(), four).ok());
  CHECK(values<std::int32_t>(four) == D{3, 3, 3, 3});
  tensor two = out<std::int32_t>({2});
  REQUIRE(k::Pad_out(x, L({1, -2}), 1, tensor(), two).ok());
  CHECK(values<std::int32_t>(two) == D{2, 1});
  tensor one = out<std::int32_t>({1});
  REQUIRE(k::Pad_out(x, L({-3, 1}), 2, tensor(), one).ok());
  CHECK(values<std::int32_t>(one) == D{3});
  REQUIRE(k::Pad_out(x, L({-3, 1}), 0, tensor(), one).ok());
  CHECK(values<std::int32_t>(one) == D{0});
  // 2-d reflect over both axes.
  tensor m = make<float>({1, 2, 3, 4}, {2, 2});
  tensor my = out<float>({4, 3});
  REQUIRE(k::Pad_out(m, L({1, 1, 1, 0}), 1, tensor(), my).ok());
  CHECK(values<float>(my) == D{4, 3, 4, 2, 1, 2, 4, 3, 4, 2, 1, 2});
  REQUIRE(k::Pad_out(m, L({1, 0, 1, 1}), 0, make<float>({-1}, shape{}), my).ok());
  CHECK(values<float>(my) == D{-1, -1, -1, 1, 2, -1, 3, 4, -1, -1, -1, -1});
  CHECK(fails_with(k::Pad_out(x, L({1}), 0, tensor(), y), "onnx.Pad", "pads"));
  CHECK(fails_with(k::Pad_out(x, L({2, 2}), 0, make<float>({1}, shape{}), y), "onnx.Pad", "argument 3"));
  CHECK(fails_with(k::Pad_out(out<std::int32_t>({0}), L({1, 1}), 2, tensor(), out<std::int32_t>({2})), "onnx.Pad", "empty"));
}

TEST_CASE("Expand and Tile") {
  tensor x = make<std::uint16_t>({1, 2, 3}, {3, 1});
  tensor y = out<std::uint16_t>({2, 3, 2});
  REQUIRE(k::Expand_out(x, y).ok());
  CHECK(values<std::uint16_t>(y) == D{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  CHECK(fails_with(k::Expand_out(x, out<std::uint16_t>({2, 2})), "onnx.Expand", "broadcast"));
  tensor t = make<bool>({1, 0}, {1, 2});
  tensor ty = out<bool>({2, 4});
  REQUIRE(k::Tile_out(t, shape{2, 2}, ty).ok());
  CHECK(values<bool>(ty) == D{1, 0, 1, 0, 1, 0, 1, 0});
  tensor t0 = out<bool>({0, 2});
  CHECK(k::Tile_out(t, shape{0, 1}, t0).ok());
  CHECK(fails_with(k::Tile_out(t, shape{2}, ty), "onnx.Tile", "repeats"));
}

TEST_CASE("Gather, GatherElements, GatherND") {
  tensor data = make<float>({0, 1, 2, 3, 4, 5}, {3, 2});
  tensor idx = make<std::int32_t>({-1, 0}, {2});
  tensor y = out<float>({2, 2});
  REQUIRE(k::Gather_out(data, idx, 0, y).ok());
  CHECK(values<float>(y) == D{4, 5, 0, 1});
  tensor y1 = out<float>({3, 2});
  REQUIRE(k::Gather_out(data, make<std::int64_t>({1, -2}, {2}), -1, y1).ok());
  CHECK(values<float>(y1) == D{1, 0, 3, 2, 5, 4});
  tensor s = out<float>({2});  // a scalar index drops the axis
  REQUIRE(k::Gather_out(data, make<std::int64_t>({2}, shape{}), 0, s).ok());
  CHECK(values<float>(s) == D{4, 5});
  CHECK(fails_with(k::Gather_out(data, make<std::int64_t>({3}, {1}), 0, out<float>({1, 2})), "onnx.Gather", "index 3"));
  CHECK(fails_with(k::Gather_out(data, make<float>({0}, {1}), 0, out<float>({1, 2})), "onnx.Gather", "argument 1"));

  tensor ge = out<float>({3, 1});
  REQUIRE(k::GatherElements_out(data, make<std::int64_t>({1, -2, -1}, {3, 1}), 1, ge).ok());
  CHECK(values<float>(ge) == D{1, 2, 5});
  CHECK(fails_with(k::GatherElements_out(data, make<std::int64_t>({2}, {1, 1}), 1, out<float>({1, 1})), "onnx.GatherElements", "index 2"));

  // GatherND with batch_dims 1: data (2, 2, 2), indices (2, 1) -> (2, 2)
  tensor d3 = make<std::int8_t>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  tensor nd = out<std::int8_t>({2, 2});
  REQUIRE(k::GatherND_out(d3, make<std::int64_t>({1, 0}, {2, 1}), 1, nd).ok());
  CHECK(values<std::int8_t>(nd) == D{2, 3, 4, 5});
  tensor nd0 = out<std::int8_t>({2});
  REQUIRE(k::GatherND_out(d3, make<std::int64_t>({1, -1, 0, 0, 1, 1}, {2, 3}), 0, nd0).ok());
  CHECK(values<std::int8_t>(nd0) == D{6, 3});
  CHECK(fails_with(k::GatherND_out(d3, make<std::int64_t>({2}, {1, 1}), 0, out<std::int8_t>({1, 2, 2})), "onnx.GatherND", "index 2"));
}

TEST_CASE("ScatterElements and ScatterND with reductions, in place") {
  tensor data = make<float>({1, 1, 1, 1}, {2, 2});
  tensor y = out<float>({2, 2});
  tensor idx = make<std::int64_t>({1, 1, -1, 0}, {2, 2});
  tensor up = make<float>({2, 3, 4, 5}, {2, 2});
  REQUIRE(k::ScatterElements_out(data, idx, up, 1, 1, y).ok());  // add, duplicates accumulate
  CHECK(values<float>(y) == D{1, 6, 6, 5});
  REQUIRE(k::ScatterElements_out(data, idx, up, 1, 2, y).ok());  // mul
  CHECK(values<float>(y) == D{1, 6, 5, 4});
  REQUIRE(k::ScatterElements_out(data, idx, up, -1, 0, data).ok());  // none, in place
  CHECK(values<float>(data) == D{1, 3, 5, 4});
  CHECK(fails_with(k::ScatterElements_out(data, idx, up, 1, 7, y), "onnx.ScatterElements", "reduction"));
  CHECK(fails_with(k::ScatterElements_out(data, make<std::int64_t>({2, 0, 0, 0}, {2, 2}), up, 1, 0, y), "onnx.ScatterElements", "index 2"));

  tensor d = make<std::int32_t>({1, 2, 3, 4}, {4});
  tensor nd = out<std::int32_t>({4});
  REQUIRE(k::ScatterND_out(d, make<std::int64_t>({-1, 0, 3}, {3, 1}), make<std::int32_t>({10, 20, 30}, {3}), 1, nd).ok());
  CHECK(values<std::int32_t>(nd) == D{21, 2, 3, 44});
  CHECK(fails_with(k::ScatterND_out(d, make<std::int64_t>({0}, {1, 1}), make<std::int32_t>({1, 2}, {2}), 0, nd), "onnx.ScatterND", "updates"));

  // Integer reductions wrap, as ONNX's integers do (a signed overflow in C++ is undefined: UBSan
  // stops the clang build at one).
  constexpr double max32 = std::numeric_limits<std::int32_t>::max();
  tensor w = out<std::int32_t>({2});
  REQUIRE(k::ScatterElements_out(make<std::int32_t>({max32, 65536}, {2}), make<std::int64_t>({0, 1}, {2}),
                                 make<std::int32_t>({1, 65536}, {2}), 0, 1, w).ok());  // add
  CHECK(values<std::int32_t>(w) == D{static_cast<double>(std::numeric_limits<std::int32_t>::min()), 65536 * 2});
  REQUIRE(k::ScatterElements_out(make<std::int32_t>({max32, 65536}, {2}), make<std::int64_t>({0, 1}, {2}),
                                 make<std::int32_t>({2, 65536}, {2}), 0, 2, w).ok());  // mul: 2^32 wraps to 0
  CHECK(values<std::int32_t>(w) == D{-2, 0});
}

TEST_CASE("Cast: every kind of pair") {
  tensor f = make<float>({-1.7, 0, 2.9, 300}, {4});
  tensor i8 = out<std::int8_t>({4});
  REQUIRE(k::Cast_out(f, i8).ok());
  CHECK(values<std::int8_t>(i8) == D{-1, 0, 2, 127});  // truncation; out of range saturates
  tensor b = out<bool>({4});
  REQUIRE(k::Cast_out(f, b).ok());
  CHECK(values<bool>(b) == D{1, 0, 1, 1});
  tensor back = out<double>({4});
  REQUIRE(k::Cast_out(b, back).ok());
  CHECK(values<double>(back) == D{1, 0, 1, 1});
  tensor nan = make<double>({std::nan(""), 1e300, -1e300}, {3});
  tensor i64 = out<std::int64_t>({3});
  REQUIRE(k::Cast_out(nan, i64).ok());
  CHECK(values<std::int64_t>(i64)[0] == 0);
  tensor f32 = out<float>({3});
  REQUIRE(k::Cast_out(nan, f32).ok());
  CHECK(std::isinf(values<float>(f32)[1]));
  tensor big = make<std::int64_t>({257, -1}, {2});
  tensor u8 = out<std::uint8_t>({2});
  REQUIRE(k::Cast_out(big, u8).ok());
  CHECK(values<std::uint8_t>(u8) == D{1, 255});  // integers wrap, as NumPy's astype
  tensor same = out<std::int64_t>({2});
  REQUIRE(k::Cast_out(big, same).ok());
  CHECK(values<std::int64_t>(same) == D{257, -1});
  CHECK(k::Cast_out(big, big).ok());
  CHECK(fails_with(k::Cast_out(big, out<float>({3})), "onnx.Cast", "shape"));
  CHECK(fails_with(k::Cast_out(big, tensor::empty({2}, rv::dtype::bfloat16())), "onnx.Cast", "bfloat16"));

  // float16, as its bits: rounding to nearest even, overflow to inf, subnormals, and back.
  tensor fs = make<float>({1, 65504, 65520, 1e-8f, 6e-8f, -2.5, 0.1f, std::numeric_limits<float>::infinity()}, {8});
  tensor h = tensor::empty({8}, rv::dtype::float16());
  REQUIRE(k::Cast_out(fs, h).ok());
  const auto* hbits = static_cast<const std::uint16_t*>(h.raw_data());
  CHECK(std::vector<double>(hbits, hbits + 8) == D{0x3C00, 0x7BFF, 0x7C00, 0, 1, 0xC100, 0x2E66, 0x7C00});
  tensor hd = out<double>({8});
  REQUIRE(k::Cast_out(h, hd).ok());
  CHECK(values<double>(hd)[1] == 65504);
  CHECK(values<double>(hd)[4] == std::ldexp(1.0, -24));
  CHECK(values<double>(hd)[5] == -2.5);
  CHECK(std::isinf(values<double>(hd)[7]));
  tensor hb = out<bool>({8});
  REQUIRE(k::Cast_out(h, hb).ok());
  CHECK(values<bool>(hb) == D{1, 1, 1, 0, 1, 1, 1, 1});
  tensor hi = out<std::int32_t>({8});
  REQUIRE(k::Cast_out(h, hi).ok());
  CHECK(values<std::int32_t>(hi)[5] == -2);
}

TEST_CASE("CumSum, Trilu, OneHot, EyeLike") {
  tensor x = make<std::int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  tensor y = out<std::int32_t>({2, 3});
  REQUIRE(k::CumSum_out(x, make<std::int32_t>({-1}, shape{}), 0, 0, y).ok());
  CHECK(values<std::int32_t>(y) == D{1, 3, 6, 4, 9, 15});
  REQUIRE(k::CumSum_out(x, make<std::int64_t>({1}, {1}), 1, 1, y).ok());
  CHECK(values<std::int32_t>(y) == D{5, 3, 0, 11, 6, 0});
  REQUIRE(k::CumSum_out(x, make<std::int64_t>({0}, {1}), 0, 0, x).ok());  // in place
  CHECK(values<std::int32_t>(x) == D{1, 2, 3, 5, 7, 9});
  CHECK(fails_with(k::CumSum_out(x, make<std::int64_t>({2}, {1}), 0, 0, y), "onnx.CumSum", "axis 2"));
  CHECK(fails_with(k::CumSum_out(x, make<float>({0}, {1}), 0, 0, y), "onnx.CumSum", "argument 1"));
  tensor c = out<std::int32_t>({3});  // integer running sums wrap
  REQUIRE(k::CumSum_out(make<std::int32_t>({std::numeric_limits<std::int32_t>::max(), 1, 1}, {3}), make<std::int64_t>({0}, {1}), 0, 0, c).ok());
  CHECK(values<std::int32_t>(c) == D{std::numeric_limits<std::int32_t>::max(), -2147483648.0, -2147483647.0});

  tensor m = make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  tensor t = out<float>({3, 3});
  REQUIRE(k::Trilu_out(m, tensor(), 1, t).ok());
  CHECK(values<float>(t) == D{1, 2, 3, 0, 5, 6, 0, 0, 9});
  REQUIRE(k::Trilu_out(m, make<std::int64_t>({-1}, shape{}), 0, t).ok());
  CHECK(values<float>(t) == D{0, 0, 0, 4, 0, 0, 7, 8, 0});
  CHECK(fails_with(k::Trilu_out(make<float>({1}, {1}), tensor(), 1, out<float>({1})), "onnx.Trilu", "2 dims"));

  tensor oh = out<std::int64_t>({3, 2});  // axis 0: depth 3 along the new first axis
  REQUIRE(k::OneHot_out(make<float>({-1, 1.9}, {2}), make<std::int64_t>({0, 5}, {2}), 0, oh).ok());
  CHECK(values<std::int64_t>(oh) == D{0, 0, 0, 5, 5, 0});
  CHECK(fails_with(k::OneHot_out(make<float>({0}, {1}), make<std::int64_t>({0}, {1}), 0, out<std::int64_t>({3, 1})), "onnx.OneHot", "values"));

  tensor eye = out<bool>({2, 3});
  REQUIRE(k::EyeLike_out(make<std::int32_t>({0, 0, 0, 0, 0, 0}, {2, 3}), 1, eye).ok());
  CHECK(values<bool>(eye) == D{0, 1, 0, 0, 0, 1});
}

TEST_CASE("Range, ConstantOfShape, Size") {
  tensor r = out<std::int32_t>({2});
  REQUIRE(k::Range_out(make<std::int32_t>({10}, shape{}), make<std::int32_t>({4}, shape{}), make<std::int32_t>({-3}, shape{}), r).ok());
  CHECK(values<std::int32_t>(r) == D{10, 7});
  tensor rf = out<float>({4});
  REQUIRE(k::Range_out(make<float>({1}, shape{}), make<float>({3}, shape{}), make<float>({0.5}, shape{}), rf).ok());
  CHECK(values<float>(rf) == D{1, 1.5, 2, 2.5});
  CHECK(fails_with(k::Range_out(make<float>({1}, shape{}), make<float>({3}, shape{}), make<float>({0}, shape{}), rf), "onnx.Range", "delta"));
  CHECK(k::range_count<std::int64_t>(0, 10, 3) == 4);
  CHECK(k::range_count<std::int64_t>(0, -10, 3) == 0);
  // The distance of two int64 values does not fit int64; a float count may be infinite or NaN.
  constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  CHECK(k::range_count<std::int64_t>(lo, hi, hi) == 3);
  CHECK(k::range_count<std::int64_t>(hi, lo, lo) == 2);
  CHECK(k::range_count<std::int64_t>(lo, hi, 1) == -2);
  CHECK(k::range_count<std::uint64_t>(0, ~std::uint64_t{0}, 1) == -2);
  CHECK(k::range_count<std::int8_t>(-128, 127, 1) == 255);
  CHECK(k::range_count<double>(0, std::numeric_limits<double>::infinity(), 1) == -2);
  CHECK(k::range_count<float>(0, std::numeric_limits<float>::quiet_NaN(), 1) == -2);
  CHECK(k::range_count<std::int32_t>(1, 5, 0) == -1);
  const auto scalar64 = [](std::int64_t v) { return tensor::from<std::int64_t>(std::span<const std::int64_t>(&v, 1), shape{}); };
  CHECK(fails_with(k::Range_out(scalar64(lo), scalar64(hi), scalar64(1), out<std::int64_t>({2})), "onnx.Range", "too long"));
  {
    // A range wider than int64's positive half: i * delta passes INT64_MAX, start + i * delta does not.
    tensor r = out<std::int64_t>({4});
    REQUIRE(k::Range_out(scalar64(lo), scalar64(hi), scalar64(std::int64_t{1} << 62), r).ok());
    CHECK(r.data<std::int64_t>()[3] == (std::int64_t{1} << 62));  // -2^63 + 3 * 2^62
    tensor down = out<std::int64_t>({4});
    REQUIRE(k::Range_out(scalar64(hi), scalar64(lo), scalar64(-(std::int64_t{1} << 62)), down).ok());
    CHECK(down.data<std::int64_t>()[3] == -(std::int64_t{1} << 62) - 1);  // 2^63 - 1 - 3 * 2^62
  }
  {
    tensor r8 = out<std::int8_t>({255});
    REQUIRE(k::Range_out(make<std::int8_t>({-128}, shape{}), make<std::int8_t>({127}, shape{}), make<std::int8_t>({1}, shape{}), r8).ok());
    CHECK(r8.data<std::int8_t>()[254] == 126);
  }

  tensor c = out<std::int64_t>({2, 2});
  REQUIRE(k::ConstantOfShape_out(make<std::int64_t>({-5}, {1}), c).ok());
  CHECK(values<std::int64_t>(c) == D{-5, -5, -5, -5});
  CHECK(k::ConstantOfShape_out(make<std::int64_t>({1}, {1}), out<std::int64_t>({0})).ok());
  CHECK(fails_with(k::ConstantOfShape_out(make<std::int64_t>({1}, {1}), out<float>({2})), "onnx.ConstantOfShape", "float32"));

  tensor n = out<std::int64_t>(shape{});
  REQUIRE(k::Size_out(out<float>({3, 0, 2}), n).ok());
  CHECK(values<std::int64_t>(n) == D{0});
  REQUIRE(k::Size_out(out<float>({3, 2}), n).ok());
  CHECK(values<std::int64_t>(n) == D{6});
}

TEST_CASE("Transpose's fast paths (whole rows, 16 x 16 tiles) against the plain index arithmetic") {
  const std::int64_t d[3] = {5, 37, 19};
  std::vector<double> v(5 * 37 * 19);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 251);
  const std::int64_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& p : perms) {
    CAPTURE(p[0] * 100 + p[1] * 10 + p[2]);
    const shape os{d[p[0]], d[p[1]], d[p[2]]};
    const std::int64_t xs[3] = {37 * 19, 19, 1};
    D want;
    for (std::int64_t i = 0; i < os.dims()[0]; ++i)
      for (std::int64_t j = 0; j < os.dims()[1]; ++j)
        for (std::int64_t l = 0; l < os.dims()[2]; ++l) want.push_back(v[static_cast<std::size_t>(i * xs[p[0]] + j * xs[p[1]] + l * xs[p[2]])]);
    tensor f = out<float>(os);
    REQUIRE(k::Transpose_out(make<float>(v, {5, 37, 19}), shape{p[0], p[1], p[2]}, f).ok());
    CHECK(values<float>(f) == want);
    tensor b = out<std::uint8_t>(os);
    REQUIRE(k::Transpose_out(make<std::uint8_t>(v, {5, 37, 19}), shape{p[0], p[1], p[2]}, b).ok());
    CHECK(values<std::uint8_t>(b) == want);
    tensor w = out<std::int64_t>(os);
    REQUIRE(k::Transpose_out(make<std::int64_t>(v, {5, 37, 19}), shape{p[0], p[1], p[2]}, w).ok());
    CHECK(values<std::int64_t>(w) == want);
  }
  // A slice backwards along the inner dim and every other row: strided reads on both.
  tensor x = make<float>(v, {5, 37, 19});
  tensor s = out<float>({5, 19, 19});
  REQUIRE(k::Slice_out(x, L({0, -1}), L({37, -100}), L({1, 2}), L({2, -1}), s).ok());
  const std::vector<double> got = values<float>(s);
  CHECK(got[0] == v[18]);
  CHECK(got[19] == v[2 * 19 + 18]);
  CHECK(got.back() == v[4 * 37 * 19 + 36 * 19]);
}
