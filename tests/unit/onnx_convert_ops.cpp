// SPDX-License-Identifier: Apache-2.0
// onnx/convert_resize.hpp, convert_select.hpp and convert_loss.hpp with their kernels where ONNX's
// node data (static shapes, every scale given as a graph input) does not reach: sizes known only
// when the program runs (Resize's scales and sizes as data, NonZero, Compress: output dims bound
// by a match_cast, one executable run at two sizes, a later op using them), constant scales over
// a symbolic batch, rows wider than the Resize kernel's column block, integer nearest,
// tf_crop_and_resize's extrapolation, and the refusals and kernel errors naming the op.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <relaxvm/kernels/resize.hpp>
#include <relaxvm/kernels/select.hpp>
#include <relaxvm/onnx.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "../support/onnx_messages.hpp"

namespace rv = relaxvm;
namespace onnx = relaxvm::onnx;
namespace k = relaxvm::kernels;

namespace {

using relaxvm_test::pb;
using namespace relaxvm_test::onnx_pb;

rv::tensor rs_iota(std::vector<std::int64_t> dims) {
  rv::tensor t = rv::tensor::try_empty(rv::shape(std::span<const std::int64_t>(dims)), rv::dtype::float32()).value();
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}
std::vector<float> rs_values(const rv::tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }
std::string rs_message(const rv::status& s) { return s.ok() ? std::string() : std::string(s.error().message()); }

rv::result<rv::value> rs_run(rv::virtual_machine& vm, std::vector<rv::value> in) { return vm.try_invoke("main", in); }

}  // namespace

TEST_CASE("Resize with scales and with sizes given as data: dims bound when it runs, used by a later op") {
  // y = Resize(x, scales) (nearest, asymmetric, floor); z = y + y; w = Resize(x, sizes=s).
  pb g;
  pb coord = str_attr("coordinate_transformation_mode", "asymmetric"), nm = str_attr("nearest_mode", "floor");
  g.msg(1, node("Resize", {"x", "", "scales"}, {"y"}, {coord, nm}));
  g.msg(1, node("Add", {"y", "y"}, {"z"}));
  g.msg(1, node("Resize", {"x", "", "", "sizes"}, {"w"}, {coord, nm}));
  g.msg(11, tensor_value_info("x", 1, {"1", "1", "2", "2"})).msg(11, tensor_value_info("scales", 1, {"4"})).msg(11, tensor_value_info("sizes", 7, {"4"}));
  const std::vector<std::byte> bytes = model_of(g, {"z", "w"});
  rv::result<rv::executable> exe = onnx::load(bytes);
  INFO((exe.ok() ? std::string() : std::string(exe.error().message())));
  REQUIRE(exe.ok());
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine vm(*exe, reg);
  const rv::tensor x = rs_iota({1, 1, 2, 2});
  struct run {
    std::vector<float> scales;
    std::vector<std::int64_t> sizes;
    rv::shape want_z, want_w;
  };
  for (const run& r : {run{{1, 1, 2, 3}, {1, 1, 3, 1}, rv::shape{1, 1, 4, 6}, rv::shape{1, 1, 3, 1}},
                       run{{1, 1, 1.5f, 1}, {1, 2, 2, 4}, rv::shape{1, 1, 3, 2}, rv::shape{1, 2, 2, 4}}}) {
    const rv::tensor sc = rv::tensor::from<float>(std::span<const float>(r.scales), rv::shape{4});
    const rv::tensor sz = rv::tensor::from<std::int64_t>(std::span<const std::int64_t>(r.sizes), rv::shape{4});
    rv::result<rv::value> out = rs_run(vm, {x, sc, sz});
    INFO((out.ok() ? std::string() : std::string(out.error().message())));
    REQUIRE(out.ok());
    const rv::tuple t = out->as<rv::tuple>();
    const rv::tensor z = t[0].as<rv::tensor>(), w = t[1].as<rv::tensor>();
    CHECK(z.shape() == r.want_z);
    CHECK(w.shape() == r.want_w);
    if (r.scales[3] == 3) {
      // floor(j / 3) along W, floor(i / 2) along H, doubled by the Add.
      CHECK(rs_values(z) == std::vector<float>{0, 0, 0, 2, 2, 2, 0, 0, 0, 2, 2, 2, 4, 4, 4, 6, 6, 6, 4, 4, 4, 6, 6, 6});
      CHECK(rs_values(w) == std::vector<float>{0, 0, 2});
    } else {
      CHECK(rs_values(z) == std::vector<float>{0, 2, 0, 2, 4, 6});
      CHECK(rs_values(w) == std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3});
    }
  }
  // Bad run-time scales: the shape function names the op.
  const std::vector<float> bad{1, 1, -2, 1};
  const std::vector<std::int64_t> sizes{1, 1, 2, 2};
  rv::result<rv::value> out = rs_run(vm, {x, rv::tensor::from<float>(std::span<const float>(bad), rv::shape{4}),
                                          rv::tensor::from<std::int64_t>(std::span<const std::int64_t>(sizes), rv::shape{4})});
  REQUIRE(!out.ok());
  CHECK(std::string(out.error().message()).find("onnx.Resize.shape: scale -2 (axis 2) must be positive") != std::string::npos);
}

TEST_CASE("Resize with constant scales over a symbolic batch: whole scales stay symbolic, others bound at run time") {
  pb g;
  g.msg(1, node("Resize", {"x", "", "s2"}, {"y"}, {str_attr("mode", "linear")}));
  g.msg(1, node("Resize", {"x", "", "s_half"}, {"h"}, {str_attr("mode", "linear")}));
  g.msg(5, float_tensor("s2", {1, 1, 2, 2})).msg(5, float_tensor("s_half", {1, 1, 0.5f, 1}));
  g.msg(11, tensor_value_info("x", 1, {"1", "1", "n", "2"}));
  const std::vector<std::byte> bytes = model_of(g, {"y", "h"});
  rv::result<rv::executable> exe = onnx::load(bytes);
  INFO((exe.ok() ? std::string() : std::string(exe.error().message())));
  REQUIRE(exe.ok());
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine vm(*exe, reg);
  for (std::int64_t n : {2, 5}) {
    CAPTURE(n);
    rv::result<rv::value> out = rs_run(vm, {rs_iota({1, 1, n, 2})});
    INFO((out.ok() ? std::string() : std::string(out.error().message())));
    REQUIRE(out.ok());
    const rv::tuple t = out->as<rv::tuple>();
    CHECK(t[0].as<rv::tensor>().shape() == rv::shape{1, 1, 2 * n, 4});
    CHECK(t[1].as<rv::tensor>().shape() == rv::shape{1, 1, n / 2, 2});
  }
}

TEST_CASE("Resize and the losses: bad attributes and inputs are refused at import, naming the node") {
  auto load_error = [](pb g, std::int64_t opset = 13) {
    g.msg(11, tensor_value_info("x", 1, {"1", "1", "2", "2"}));
    const std::vector<std::byte> bytes = model_of(g, {"y"}, opset);
    rv::result<rv::executable> exe = onnx::load(bytes);
    return exe.ok() ? std::string() : std::string(exe.error().message());
  };
  pb g1;
  g1.msg(1, node("Resize", {"x", "", "s"}, {"y"}, {str_attr("mode", "area")})).msg(5, float_tensor("s", {1, 1, 2, 2}));
  CHECK(load_error(g1) == "onnx: node 0 (Resize) is not supported: mode 'area' (relaxvm takes nearest, linear, bilinear, cubic)");
  pb g2;
  g2.msg(1, node("Resize", {"x"}, {"y"}));
  CHECK(load_error(g2) == "onnx: node 0 (Resize): exactly one of scales and sizes must be given");
  pb g3;
  g3.msg(1, node("Resize", {"x", "", "s"}, {"y"})).msg(5, float_tensor("s", {1, 2, 2}));
  CHECK(load_error(g3) == "onnx: node 0 (Resize): there are 3 scales or sizes for an input of 4 dims");
  pb g4;
  g4.msg(1, node("Resize", {"x", "", "s"}, {"y"})).msg(5, float_tensor("s", {1, 1, 0, 2}));
  CHECK(load_error(g4) == "onnx: node 0 (Resize): scale 0 (axis 2) must be positive and finite");
  pb g5;
  g5.msg(1, node("Resize", {"x", "s"}, {"y"}, {str_attr("mode", "cubic")})).msg(5, float_tensor("s", {1, 1, 2, 2}));
  CHECK(load_error(g5, 10) == "onnx: node 0 (Resize): mode 'cubic' needs Resize from opset 11");
  pb g6;
  g6.msg(1, node("NegativeLogLikelihoodLoss", {"x", "t"}, {"y"}, {str_attr("reduction", "max")}));
  g6.msg(11, tensor_value_info("t", 7, {"1", "2", "2"}));
  CHECK(load_error(g6) == "onnx: node 0 (NegativeLogLikelihoodLoss): reduction is 'max'; it must be none, sum or mean");
  pb g7;
  g7.msg(1, node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"y"}));
  g7.msg(11, tensor_value_info("t", 7, {"1", "3", "2"}));
  CHECK(load_error(g7) == "onnx: node 0 (SoftmaxCrossEntropyLoss): the target's dim 1 is 3 but the input's is 2");
  pb g8;
  g8.msg(1, node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"y"}));
  g8.msg(11, tensor_value_info("t", 1, {"1", "2", "2"}));
  CHECK(load_error(g8) == "onnx: node 0 (SoftmaxCrossEntropyLoss): the target (input 1) is float32; it must be int32 or int64");
}

TEST_CASE("Resize kernel: rows wider than a column block, integer nearest, extrapolation, bad arguments") {
  // Width 150 -> 300, linear, half_pixel: the three column blocks against the formula.
  const rv::tensor x = rs_iota({2, 150});
  rv::tensor y = rv::tensor::try_empty(rv::shape{2, 300}, rv::dtype::float32()).value();
  REQUIRE(k::Resize_out(x, rv::tensor(), rv::tensor(), k::resize_linear, k::coord_half_pixel, 0, -0.75, 0, 0, y).ok());
  for (std::int64_t r = 0; r < 2; ++r)
    for (std::int64_t j = 0; j < 300; ++j) {
      double src = (static_cast<double>(j) + 0.5) / 2 - 0.5;
      src = src < 0 ? 0 : src > 149 ? 149 : src;
      CHECK(y.data<float>()[r * 300 + j] == doctest::Approx(static_cast<double>(r * 150) + src));
    }
  // int64 nearest copies exactly (no float round trip).
  rv::tensor xi = rv::tensor::try_empty(rv::shape{1, 3}, rv::dtype::int64()).value();
  const std::int64_t big = (std::int64_t{1} << 60) + 1;
  for (int i = 0; i < 3; ++i) xi.data<std::int64_t>()[i] = big + i;
  rv::tensor yi = rv::tensor::try_empty(rv::shape{1, 6}, rv::dtype::int64()).value();
  REQUIRE(k::Resize_out(xi, rv::tensor(), rv::tensor(), k::resize_nearest, k::coord_asymmetric, k::nearest_floor, -0.75, 0, 0, yi).ok());
  CHECK(yi.data<std::int64_t>()[5] == big + 2);
  CHECK(yi.data<std::int64_t>()[2] == big + 1);
  // tf_crop_and_resize: a region past the input's end is the extrapolation value.
  const std::vector<float> roi{0, 0, 1, 2};
  rv::tensor yc = rv::tensor::try_empty(rv::shape{1, 3}, rv::dtype::float32()).value();
  REQUIRE(k::Resize_out(rs_iota({1, 3}), rv::tensor::from<float>(std::span<const float>(roi), rv::shape{4}), rv::tensor(), k::resize_linear,
                        k::coord_tf_crop_and_resize, 0, -0.75, 0, -7.0, yc)
              .ok());
  CHECK(rs_values(yc) == std::vector<float>{0, 2, -7});
  // Errors.
  CHECK(rs_message(k::Resize_out(rs_iota({1, 3}), rv::tensor(), rv::tensor(), k::resize_linear, k::coord_tf_crop_and_resize, 0, -0.75, 0, 0,
                                 yc)) == "onnx.Resize: tf_crop_and_resize needs the roi (argument 1)");
  CHECK(rs_message(k::Resize_out(xi, rv::tensor(), rv::tensor(), k::resize_linear, 0, 0, -0.75, 0, 0, yi))
            .find("onnx.Resize: argument 0 has dtype int64") == 0);
  const std::vector<float> sc{1, 3};
  CHECK(rs_message(k::Resize_out(rs_iota({1, 3}), rv::tensor(), rv::tensor::from<float>(std::span<const float>(sc), rv::shape{2}),
                                 k::resize_linear, 0, 0, -0.75, 0, 0, yc)) == "onnx.Resize: the output's dim 1 is 3 but floor(3 * 3) is 9");
  CHECK(rs_message(k::Resize_out(rs_iota({1, 3}), rv::tensor(), rv::tensor(), 5, 0, 0, -0.75, 0, 0, yc)) ==
        "onnx.Resize: mode 5 must be 0 (nearest), 1 (linear) or 2 (cubic)");
  rv::tensor y0 = rv::tensor::try_empty(rv::shape{1, 2}, rv::dtype::float32()).value();
  CHECK(rs_message(k::Resize_out(rv::tensor::try_empty(rv::shape{1, 0}, rv::dtype::float32()).value(), rv::tensor(), rv::tensor(),
                                 k::resize_nearest, 0, 0, -0.75, 0, 0, y0)) == "onnx.Resize: axis 1 is empty and cannot be resized to 2");
}

TEST_CASE("NonZero and Compress: sizes from the data, bound when the program runs, used by a later op") {
  // n = NonZero(x); c = Compress(x, cond, axis 1); f = Compress(x, cond) (flattened); s = c + c.
  pb g;
  pb axis;
  axis.str(1, "axis").i(20, 2).i(3, 1);
  g.msg(1, node("NonZero", {"x"}, {"n"}));
  g.msg(1, node("Compress", {"x", "cond"}, {"c"}, {axis}));
  g.msg(1, node("Compress", {"x", "cond"}, {"f"}));
  g.msg(1, node("Add", {"c", "c"}, {"s"}));
  g.msg(11, tensor_value_info("x", 1, {"b", "3"})).msg(11, tensor_value_info("cond", 9, {"k"}));
  const std::vector<std::byte> bytes = model_of(g, {"n", "s", "f"});
  rv::result<rv::executable> exe = onnx::load(bytes);
  INFO((exe.ok() ? std::string() : std::string(exe.error().message())));
  REQUIRE(exe.ok());
  rv::registry reg;
  onnx::register_kernels(reg);
  rv::virtual_machine vm(*exe, reg);
  const std::vector<float> xv{0, 1, 0, 2, 0, 3};
  const rv::tensor x = rv::tensor::from<float>(std::span<const float>(xv), rv::shape{2, 3});
  rv::tensor cond = rv::tensor::try_empty(rv::shape{2}, rv::dtype::bool_()).value();
  static_cast<std::uint8_t*>(cond.raw_data())[0] = 0;
  static_cast<std::uint8_t*>(cond.raw_data())[1] = 1;
  rv::result<rv::value> out = rs_run(vm, {x, cond});
  INFO((out.ok() ? std::string() : std::string(out.error().message())));
  REQUIRE(out.ok());
  rv::tuple t = out->as<rv::tuple>();
  const rv::tensor n = t[0].as<rv::tensor>();
  CHECK(n.shape() == rv::shape{2, 3});
  CHECK(std::vector<std::int64_t>(n.data<std::int64_t>(), n.data<std::int64_t>() + 6) == std::vector<std::int64_t>{0, 1, 1, 1, 0, 2});
  CHECK(t[1].as<rv::tensor>().shape() == rv::shape{2, 1});
  CHECK(rs_values(t[1].as<rv::tensor>()) == std::vector<float>{2, 0});
  CHECK(rs_values(t[2].as<rv::tensor>()) == std::vector<float>{1});
  // All false: empty results; a condition longer than the axis names the op.
  static_cast<std::uint8_t*>(cond.raw_data())[1] = 0;
  out = rs_run(vm, {x, cond});
  REQUIRE(out.ok());
  t = out->as<rv::tuple>();
  CHECK(t[1].as<rv::tensor>().shape() == rv::shape{2, 0});
  CHECK(t[2].as<rv::tensor>().shape() == rv::shape{0});
  rv::tensor long_cond = rv::tensor::try_empty(rv::shape{4}, rv::dtype::bool_()).value();
  for (int i = 0; i < 4; ++i) static_cast<std::uint8_t*>(long_cond.raw_data())[i] = 1;
  out = rs_run(vm, {x, long_cond});
  REQUIRE(!out.ok());
  CHECK(std::string(out.error().message()).find("onnx.Compress.shape: the condition has 4 elements, more than the 3 it selects from") !=
        std::string::npos);
  // A bool stored as any byte but 0 is true.
  rv::tensor odd = rv::tensor::try_empty(rv::shape{2, 2}, rv::dtype::bool_()).value();
  const std::uint8_t bytes4[4] = {0, 7, 0, 1};
  std::memcpy(odd.raw_data(), bytes4, 4);
  rv::tensor nz = rv::tensor::try_empty(rv::shape{2, 2}, rv::dtype::int64()).value();
  REQUIRE(k::NonZero_out(odd, nz).ok());
  CHECK(std::vector<std::int64_t>(nz.data<std::int64_t>(), nz.data<std::int64_t>() + 4) == std::vector<std::int64_t>{0, 1, 1, 1});
  rv::tensor wrong = rv::tensor::try_empty(rv::shape{2, 3}, rv::dtype::int64()).value();
  CHECK(rs_message(k::NonZero_out(odd, wrong)).find("onnx.NonZero: the output (argument 1) has shape [2, 3] but the result has shape [2, 2]") == 0);
}
