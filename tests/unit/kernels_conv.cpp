// SPDX-License-Identifier: Apache-2.0
// relaxvm/kernels/conv.hpp and pool.hpp: Conv, ConvTranspose and the pools against naive loops
// over many shapes (every tile path: interior, edge, narrow rows, 1x1, depthwise, output-channel
// remainders; strides, dilations, asymmetric pads, auto_pad, 1-3 spatial dims, float32 and
// float64), the cases ONNX's data does not reach (empty tensors, int8 MaxPool, LpPool), and bad
// arguments giving errors that name the op and the argument.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <relaxvm.hpp>
#include <relaxvm/kernels/conv.hpp>
#include <relaxvm/kernels/pool.hpp>
#include <string>
#include <vector>

#include "../support/random_tensor.hpp"

namespace rv = relaxvm;
namespace k = relaxvm::kernels;

namespace {

using relaxvm_test::dims_t;
using relaxvm_test::random_tensor;
using relaxvm_test::shp;

std::int64_t count(const dims_t& d) {
  std::int64_t n = 1;
  for (std::int64_t x : d) n *= x;
  return n;
}

std::string message(const rv::status& s) { return s.ok() ? std::string() : std::string(s.error().message()); }

// A window's pads, from auto_pad or explicit ones, and its output dim: written out again here.
struct geom {
  dims_t pb, pe, out;
};
geom conv_geom(const dims_t& in, const dims_t& kk, const dims_t& s, const dims_t& d, const dims_t& pads, std::int64_t auto_pad,
               bool ceil = false) {
  geom g;
  const std::size_t n = in.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t ek = (kk[i] - 1) * d[i] + 1;
    if (auto_pad == k::same_upper || auto_pad == k::same_lower) {
      const std::int64_t o = (in[i] + s[i] - 1) / s[i];
      const std::int64_t total = std::max<std::int64_t>(0, (o - 1) * s[i] + ek - in[i]);
      g.pb.push_back(auto_pad == k::same_upper ? total / 2 : (total + 1) / 2);
      g.pe.push_back(total - g.pb.back());
      g.out.push_back(o);
    } else {
      const std::int64_t b = auto_pad == k::valid || pads.empty() ? 0 : pads[i], e = auto_pad == k::valid || pads.empty() ? 0 : pads[i + n];
      g.pb.push_back(b);
      g.pe.push_back(e);
      const std::int64_t span = in[i] + b + e - ek;
      std::int64_t o = (ceil ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
      if (ceil && (o - 1) * s[i] >= in[i] + b) --o;
      g.out.push_back(o);
    }
  }
  return g;
}

// Iterates over every index of `d` (row-major), calling f(index vector).
template <class F>
void each(const dims_t& d, F&& f) {
  dims_t i(d.size(), 0);
  if (count(d) == 0) return;
  for (;;) {
    f(i);
    std::size_t k = d.size();
    while (k > 0) {
      if (++i[k - 1] < d[k - 1]) break;
      i[k - 1] = 0;
      --k;
    }
    if (k == 0) return;
  }
}

std::int64_t flat(const dims_t& d, const dims_t& i) {
  std::int64_t o = 0;
  for (std::size_t k = 0; k < d.size(); ++k) o = o * d[k] + i[k];
  return o;
}

// The naive convolution, in double.
template <class T>
std::vector<double> naive_conv(const rv::tensor& x, const rv::tensor& w, const T* b, std::int64_t group, const dims_t& s, const dims_t& d,
                               const geom& g) {
  const dims_t xd(x.shape().dims().begin(), x.shape().dims().end()), wd(w.shape().dims().begin(), w.shape().dims().end());
  const std::size_t n = xd.size() - 2;
  const dims_t in(xd.begin() + 2, xd.end()), kk(wd.begin() + 2, wd.end());
  const std::int64_t M = wd[0], Cg = wd[1], Mg = M / group;
  dims_t od{xd[0], M};
  od.insert(od.end(), g.out.begin(), g.out.end());
  std::vector<double> y(static_cast<std::size_t>(count(od)));
  each(od, [&](const dims_t& o) {
    const std::int64_t m = o[1], grp = m / Mg;
    double acc = b != nullptr ? static_cast<double>(b[m]) : 0;
    for (std::int64_t c = 0; c < Cg; ++c)
      each(kk, [&](const dims_t& t) {
        dims_t xi{o[0], grp * Cg + c};
        for (std::size_t i = 0; i < n; ++i) {
          const std::int64_t p = o[2 + i] * s[i] - g.pb[i] + t[i] * d[i];
          if (p < 0 || p >= in[i]) return;
          xi.push_back(p);
        }
        dims_t wi{m, c};
        wi.insert(wi.end(), t.begin(), t.end());
        acc += static_cast<double>(x.data<T>()[flat(xd, xi)]) * static_cast<double>(w.data<T>()[flat(wd, wi)]);
      });
    y[static_cast<std::size_t>(flat(od, o))] = acc;
  });
  return y;
}

template <class T>
void check_close(const rv::tensor& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.numel() == static_cast<std::int64_t>(want.size()));
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(got.data<T>()[i]) - want[i]) / (1 + std::fabs(want[i])));
  CHECK(worst <= tol);
}

struct conv_case {
  dims_t x, w;  // x [N, C, spatial...], w [M, C / group, kernel...]
  std::int64_t group;
  dims_t s, d, pads;
  std::int64_t auto_pad;
  bool bias;
};

template <class T>
void run_conv(const conv_case& c, std::mt19937& rng) {
  CAPTURE(c.x);
  CAPTURE(c.w);
  CAPTURE(c.group);
  CAPTURE(c.s);
  CAPTURE(c.d);
  CAPTURE(c.pads);
  CAPTURE(c.auto_pad);
  const rv::tensor x = random_tensor<T>(c.x, rng), w = random_tensor<T>(c.w, rng);
  const rv::tensor b = c.bias ? random_tensor<T>({c.w[0]}, rng) : rv::tensor();
  const dims_t in(c.x.begin() + 2, c.x.end()), kk(c.w.begin() + 2, c.w.end());
  const dims_t ones(in.size(), 1);
  const dims_t sd = c.s.empty() ? ones : c.s, dl = c.d.empty() ? ones : c.d;
  const geom g = conv_geom(in, kk, sd, dl, c.pads, c.auto_pad);
  dims_t od{c.x[0], c.w[0]};
  od.insert(od.end(), g.out.begin(), g.out.end());
  const rv::tensor y = rv::tensor::empty(shp(od), rv::dtype_of<T>());
  const rv::status st = k::Conv_out(x, w, b, c.auto_pad, c.group, shp(c.s), shp(c.pads), shp(c.d), y);
  REQUIRE_MESSAGE(st.ok(), message(st));
  check_close<T>(y, naive_conv<T>(x, w, c.bias ? b.data<T>() : nullptr, c.group, sd, dl, g), std::is_same_v<T, float> ? 1e-4 : 1e-12);
}

}  // namespace

TEST_CASE("Conv matches the naive convolution: 2-d, every tile path") {
  std::mt19937 rng(1);
  // Widths around the tile widths (4 to 64 lanes), channel counts with every remainder.
  for (std::int64_t width : {1, 3, 7, 15, 16, 17, 31, 33, 56, 70})
    for (std::int64_t m : {1, 3, 8, 13})
      for (std::int64_t pad : {0, 1, 2}) {
        if (width + 2 * pad < 3) continue;
        run_conv<float>({{1, 3, 5, width}, {m, 3, 3, 3}, 1, {1, 1}, {1, 1}, {pad, pad, pad, pad}, k::notset, true}, rng);
      }
  // Strides, dilations, asymmetric pads, no bias, batches.
  run_conv<float>({{2, 4, 9, 40}, {8, 4, 3, 3}, 1, {2, 2}, {1, 1}, {1, 0, 2, 1}, k::notset, false}, rng);
  run_conv<float>({{1, 2, 11, 37}, {9, 2, 3, 2}, 1, {1, 3}, {2, 3}, {2, 1, 0, 3}, k::notset, true}, rng);
  run_conv<float>({{1, 3, 30, 30}, {16, 3, 7, 7}, 1, {2, 2}, {1, 1}, {3, 3, 3, 3}, k::notset, true}, rng);
  run_conv<double>({{2, 3, 8, 20}, {5, 3, 3, 3}, 1, {1, 2}, {1, 1}, {1, 1, 1, 1}, k::notset, true}, rng);
  run_conv<double>({{1, 4, 6, 33}, {12, 4, 1, 1}, 1, {1, 1}, {1, 1}, {}, k::notset, false}, rng);
  // As a product (4 or more output channels per group): more (channel, tap) rows than one panel
  // holds (256), panels of positions spanning several output rows, groups, strides, dilations.
  run_conv<float>({{1, 32, 6, 7}, {10, 32, 3, 3}, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, k::notset, true}, rng);
  run_conv<float>({{2, 8, 9, 10}, {8, 4, 3, 3}, 2, {2, 1}, {2, 2}, {2, 1, 0, 2}, k::notset, true}, rng);
  run_conv<double>({{1, 3, 5, 4, 9}, {6, 3, 2, 2, 3}, 1, {2, 1, 2}, {1, 2, 1}, {1, 1, 0, 0, 1, 2}, k::notset, false}, rng);
  // A window wider than max_segment's stretch (the per-column path).
  run_conv<float>({{1, 1, 3, 300}, {2, 1, 1, 3}, 1, {1, 1}, {1, 120}, {0, 10, 0, 10}, k::notset, true}, rng);
}

TEST_CASE("Conv: 1x1 as a matrix product, groups, depthwise") {
  std::mt19937 rng(2);
  for (std::int64_t hw : {1, 5, 16, 49, 67}) {
    run_conv<float>({{1, 24, 1, hw}, {19, 24, 1, 1}, 1, {}, {}, {}, k::notset, true}, rng);
    run_conv<float>({{2, 8, hw, 3}, {8, 4, 1, 1}, 2, {}, {}, {}, k::notset, true}, rng);
  }
  // Depthwise (with a multiplier), strided, padded.
  run_conv<float>({{1, 6, 13, 29}, {6, 1, 3, 3}, 6, {1, 1}, {1, 1}, {1, 1, 1, 1}, k::notset, true}, rng);
  run_conv<float>({{1, 6, 13, 29}, {12, 1, 3, 3}, 6, {2, 2}, {1, 1}, {1, 1, 1, 1}, k::notset, true}, rng);
  run_conv<double>({{2, 4, 7, 18}, {4, 1, 3, 3}, 4, {1, 1}, {2, 2}, {2, 2, 2, 2}, k::notset, false}, rng);
  // Groups with a few channels each.
  run_conv<float>({{1, 6, 8, 21}, {9, 2, 3, 2}, 3, {1, 1}, {1, 1}, {0, 1, 1, 0}, k::notset, true}, rng);
}

TEST_CASE("Conv: 1-d and 3-d, auto_pad") {
  std::mt19937 rng(3);
  run_conv<float>({{2, 3, 40}, {5, 3, 4}, 1, {3}, {2}, {2, 1}, k::notset, true}, rng);
  run_conv<float>({{1, 2, 5, 6, 20}, {4, 2, 2, 3, 3}, 1, {1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}, k::notset, true}, rng);
  run_conv<double>({{1, 2, 4, 5, 6}, {3, 2, 3, 3, 3}, 1, {1, 1, 1}, {1, 1, 1}, {}, k::same_upper, false}, rng);
  for (std::int64_t ap : {k::same_upper, k::same_lower, k::valid})
    for (std::int64_t s : {1, 2, 3}) run_conv<float>({{1, 2, 10, 19}, {3, 2, 4, 3}, 1, {s, s}, {1, 1}, {1, 1, 1, 1}, ap, true}, rng);
}

TEST_CASE("Conv: empty tensors") {
  std::mt19937 rng(4);
  run_conv<float>({{0, 3, 5, 5}, {4, 3, 3, 3}, 1, {}, {}, {}, k::notset, true}, rng);
  run_conv<float>({{1, 3, 5, 5}, {0, 3, 3, 3}, 1, {}, {}, {}, k::notset, false}, rng);
  // No input channels: the output is the bias.
  run_conv<float>({{1, 0, 5, 5}, {2, 0, 3, 3}, 1, {}, {}, {1, 1, 1, 1}, k::notset, true}, rng);
}

TEST_CASE("Conv: bad arguments name the op and the argument") {
  std::mt19937 rng(5);
  const rv::tensor x = random_tensor<float>({1, 4, 6, 6}, rng), w = random_tensor<float>({2, 4, 3, 3}, rng);
  const rv::tensor y = rv::tensor::empty(rv::shape{1, 2, 4, 4}, rv::dtype::float32());
  const rv::shape none;
  CHECK(k::Conv_out(x, w, rv::tensor(), k::notset, 1, none, none, none, y).ok());
  CHECK(message(k::Conv_out(x, w, rv::tensor(), k::notset, 2, none, none, none, y)).find("onnx.Conv: the input has 4 channels") == 0);
  const rv::tensor y_bad = rv::tensor::empty(rv::shape{1, 2, 5, 4}, rv::dtype::float32());
  CHECK(message(k::Conv_out(x, w, rv::tensor(), k::notset, 1, none, none, none, y_bad)).find("onnx.Conv: the output (argument 8) has shape") == 0);
  const rv::tensor xi = rv::tensor::empty(rv::shape{1, 4, 6, 6}, rv::dtype::int32());
  CHECK(message(k::Conv_out(xi, w, rv::tensor(), k::notset, 1, none, none, none, y)).find("onnx.Conv: argument 0 has dtype int32") == 0);
  const rv::tensor wd = random_tensor<double>({2, 4, 3, 3}, rng);
  CHECK(message(k::Conv_out(x, wd, rv::tensor(), k::notset, 1, none, none, none, y)).find("onnx.Conv: argument 1 is float64") == 0);
  CHECK(message(k::Conv_out(x, w, random_tensor<float>({3}, rng), k::notset, 1, none, none, none, y)).find("bias has 3 values") != std::string::npos);
  CHECK(message(k::Conv_out(x, w, rv::tensor(), k::notset, 1, rv::shape{1}, none, none, y)).find("onnx.Conv: strides has 1 values for 2") == 0);
  CHECK(message(k::Conv_out(x, w, rv::tensor(), k::notset, 1, rv::shape{0, 1}, none, none, y)).find("strides has 0") != std::string::npos);
  CHECK(message(k::Conv_out(x, w, rv::tensor(), k::notset, 1, none, rv::shape{1, 1}, none, y)).find("pads has 2 values") != std::string::npos);
  CHECK(message(k::Conv_out(x, w, rv::tensor(), 7, 1, none, none, none, y)).find("auto_pad is 7") != std::string::npos);
  CHECK(message(k::Conv_out(x, w, rv::tensor(), k::notset, 0, none, none, none, y)).find("group is 0") != std::string::npos);
  const rv::tensor w_big = random_tensor<float>({2, 4, 7, 3}, rng);
  CHECK(message(k::Conv_out(x, w_big, rv::tensor(), k::notset, 1, none, none, none, y)).find("larger than the padded input") != std::string::npos);
  // The output may not overlap an input.
  const rv::tensor same = rv::tensor::empty(rv::shape{1, 4, 6, 6}, rv::dtype::float32());
  const rv::tensor w1 = random_tensor<float>({4, 4, 1, 1}, rng);
  CHECK(message(k::Conv_out(same, w1, rv::tensor(), k::notset, 1, none, none, none, same)).find("onnx.Conv: the output overlaps argument 0") == 0);
  const rv::tensor x2 = random_tensor<float>({1, 4, 6}, rng);
  CHECK(message(k::Conv_out(x2, w, rv::tensor(), k::notset, 1, none, none, none, y)).find("the weights have 4 dimensions but the input 3") != std::string::npos);
}

namespace {

// The naive transpose: every input element scattered by every tap.
template <class T>
std::vector<double> naive_conv_transpose(const rv::tensor& x, const rv::tensor& w, const T* b, std::int64_t group, const dims_t& s,
                                         const dims_t& d, const dims_t& pb, const dims_t& out) {
  const dims_t xd(x.shape().dims().begin(), x.shape().dims().end()), wd(w.shape().dims().begin(), w.shape().dims().end());
  const std::size_t n = xd.size() - 2;
  const std::int64_t Cg = xd[1] / group, Mg = wd[1], M = Mg * group;
  dims_t od{xd[0], M};
  od.insert(od.end(), out.begin(), out.end());
  std::vector<double> y(static_cast<std::size_t>(count(od)));
  each(od, [&](const dims_t& o) { y[static_cast<std::size_t>(flat(od, o))] = b != nullptr ? static_cast<double>(b[o[1]]) : 0; });
  const dims_t kk(wd.begin() + 2, wd.end());
  each(xd, [&](const dims_t& xi) {
    const std::int64_t c = xi[1], grp = c / Cg;
    for (std::int64_t m = 0; m < Mg; ++m)
      each(kk, [&](const dims_t& t) {
        dims_t oi{xi[0], grp * Mg + m};
        for (std::size_t i = 0; i < n; ++i) {
          const std::int64_t p = xi[2 + i] * s[i] - pb[i] + t[i] * d[i];
          if (p < 0 || p >= out[i]) return;
          oi.push_back(p);
        }
        dims_t wi{c, m};
        wi.insert(wi.end(), t.begin(), t.end());
        y[static_cast<std::size_t>(flat(od, oi))] += static_cast<double>(x.data<T>()[flat(xd, xi)]) * static_cast<double>(w.data<T>()[flat(wd, wi)]);
      });
  });
  return y;
}

}  // namespace

TEST_CASE("ConvTranspose matches the naive scatter") {
  std::mt19937 rng(6);
  struct tc {
    dims_t x, w;
    std::int64_t group;
    dims_t s, d, pads, out_pad, out_shape;
    std::int64_t auto_pad;
    dims_t want_pb, want_out;
  };
  const tc cases[] = {
      {{1, 2, 4, 5}, {2, 3, 3, 3}, 1, {2, 3}, {1, 1}, {1, 0, 1, 2}, {1, 2}, {}, k::notset, {1, 0}, {2 * 3 + 1 + 3 - 2, 3 * 4 + 2 + 3 - 2}},
      {{2, 4, 3, 3}, {4, 2, 2, 2}, 2, {1, 1}, {2, 2}, {}, {}, {}, k::notset, {0, 0}, {5, 5}},
      // output_shape: pads from the total, the rest zeros at the end.
      {{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {1, 1}, {}, {}, {10, 8}, k::notset, {0, 0}, {10, 8}},
      {{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {2, 2}, {1, 1}, {}, {}, {5, 6}, k::notset, {1, 1}, {5, 6}},
      // SAME_UPPER / SAME_LOWER: the output is in * stride.
      {{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {2, 2}, {1, 1}, {}, {}, {}, k::same_upper, {0, 0}, {6, 6}},
      {{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {2, 2}, {1, 1}, {}, {}, {}, k::same_lower, {1, 1}, {6, 6}},
      // 1-d and 3-d.
      {{1, 2, 7}, {2, 3, 4}, 1, {3}, {2}, {1, 2}, {2}, {}, k::notset, {1}, {3 * 6 + 2 + 7 - 3}},
      {{1, 1, 2, 3, 2}, {1, 2, 2, 2, 3}, 1, {1, 2, 1}, {1, 1, 1}, {}, {}, {}, k::notset, {0, 0, 0}, {3, 6, 4}},
  };
  for (const tc& c : cases) {
    CAPTURE(c.x);
    CAPTURE(c.out_shape);
    for (bool bias : {false, true}) {
      const rv::tensor x = random_tensor<double>(c.x, rng), w = random_tensor<double>(c.w, rng);
      const rv::tensor b = bias ? random_tensor<double>({c.w[1] * c.group}, rng) : rv::tensor();
      dims_t od{c.x[0], c.w[1] * c.group};
      od.insert(od.end(), c.want_out.begin(), c.want_out.end());
      const rv::tensor y = rv::tensor::empty(shp(od), rv::dtype::float64());
      const rv::status st = k::ConvTranspose_out(x, w, b, c.auto_pad, c.group, shp(c.s), shp(c.pads), shp(c.d), shp(c.out_pad), shp(c.out_shape), y);
      REQUIRE_MESSAGE(st.ok(), message(st));
      check_close<double>(y, naive_conv_transpose<double>(x, w, bias ? b.data<double>() : nullptr, c.group, c.s, c.d, c.want_pb, c.want_out), 1e-12);
    }
  }
  // float32 too.
  const rv::tensor x = random_tensor<float>({1, 3, 5, 6}, rng), w = random_tensor<float>({3, 4, 3, 3}, rng);
  const rv::tensor y = rv::tensor::empty(rv::shape{1, 4, 11, 13}, rv::dtype::float32());
  REQUIRE(k::ConvTranspose_out(x, w, rv::tensor(), k::notset, 1, rv::shape{2, 2}, rv::shape{0, 0, 0, 0}, rv::shape(), rv::shape(), rv::shape(), y).ok());
  check_close<float>(y, naive_conv_transpose<float>(x, w, nullptr, 1, {2, 2}, {1, 1}, {0, 0}, {11, 13}), 1e-5);
  // Errors.
  const rv::tensor bad = rv::tensor::empty(rv::shape{1, 4, 11, 12}, rv::dtype::float32());
  CHECK(message(k::ConvTranspose_out(x, w, rv::tensor(), k::notset, 1, rv::shape{2, 2}, rv::shape(), rv::shape(), rv::shape(), rv::shape(), bad))
            .find("onnx.ConvTranspose: the output (argument 10) has shape") == 0);
  CHECK(message(k::ConvTranspose_out(x, w, rv::tensor(), k::notset, 1, rv::shape{2, 2}, rv::shape(), rv::shape(), rv::shape{2, 2}, rv::shape(), y))
            .find("output_padding 2 must be less than the stride or the dilation") != std::string::npos);
  CHECK(message(k::ConvTranspose_out(x, w, rv::tensor(), k::notset, 2, rv::shape{2, 2}, rv::shape(), rv::shape(), rv::shape(), rv::shape(), y))
            .find("3 input channels do not split into 2 groups") != std::string::npos);
}

namespace {

// Naive pooling over a window: calls f(values inside the input, padded count) per output.
struct pool_case {
  dims_t x, kernel, s, d, pads;
  std::int64_t auto_pad, ceil;
};

template <class T, class F>
std::vector<double> naive_pool(const rv::tensor& x, const pool_case& c, const geom& g, F&& f) {
  const dims_t xd(x.shape().dims().begin(), x.shape().dims().end());
  const std::size_t n = xd.size() - 2;
  dims_t od{xd[0], xd[1]};
  od.insert(od.end(), g.out.begin(), g.out.end());
  std::vector<double> y;
  each(od, [&](const dims_t& o) {
    std::vector<std::pair<double, std::int64_t>> vals;
    std::int64_t padded = 0;
    each(c.kernel, [&](const dims_t& t) {
      dims_t xi{o[0], o[1]};
      bool inside = true, in_pad = true;
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t p = o[2 + i] * c.s[i] - g.pb[i] + t[i] * c.d[i];
        inside = inside && p >= 0 && p < xd[2 + i];
        in_pad = in_pad && p >= -g.pb[i] && p < xd[2 + i] + g.pe[i];
        xi.push_back(p);
      }
      padded += in_pad ? 1 : 0;
      if (inside) vals.push_back({static_cast<double>(x.data<T>()[flat(xd, xi)]), flat(xd, xi)});
    });
    y.push_back(f(vals, padded));
  });
  return y;
}

}  // namespace

TEST_CASE("MaxPool, AveragePool and LpPool match naive pooling") {
  std::mt19937 rng(7);
  const pool_case cases[] = {
      {{1, 2, 9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, k::notset, 0},
      {{2, 1, 9, 11}, {3, 2}, {2, 3}, {1, 1}, {0, 1, 2, 0}, k::notset, 1},
      {{1, 2, 10, 10}, {2, 3}, {3, 2}, {2, 2}, {1, 1, 1, 1}, k::notset, 1},
      {{1, 1, 7, 8}, {3, 3}, {2, 2}, {1, 1}, {}, k::same_upper, 0},
      {{1, 1, 7, 8}, {2, 2}, {1, 1}, {1, 1}, {}, k::same_lower, 0},
      {{1, 1, 7, 8}, {2, 3}, {2, 2}, {1, 1}, {5, 5, 5, 5}, k::valid, 0},
      {{1, 3, 20}, {4}, {3}, {2}, {2, 1}, k::notset, 1},
      {{1, 2, 4, 5, 6}, {2, 2, 3}, {1, 2, 2}, {1, 1, 1}, {1, 0, 1, 0, 1, 1}, k::notset, 0},
  };
  for (const pool_case& c : cases) {
    CAPTURE(c.x);
    CAPTURE(c.kernel);
    const dims_t in(c.x.begin() + 2, c.x.end());
    const geom g = conv_geom(in, c.kernel, c.s, c.d, c.pads, c.auto_pad, c.ceil != 0);
    dims_t od{c.x[0], c.x[1]};
    od.insert(od.end(), g.out.begin(), g.out.end());
    const rv::tensor x = random_tensor<float>(c.x, rng);
    const rv::tensor y = rv::tensor::empty(shp(od), rv::dtype::float32());
    const rv::tensor idx = rv::tensor::empty(shp(od), rv::dtype::int64());
    REQUIRE(k::MaxPool_out(x, c.auto_pad, c.ceil, 0, shp(c.kernel), shp(c.s), shp(c.pads), shp(c.d), y, idx).ok());
    check_close<float>(y, naive_pool<float>(x, c, g, [](const auto& v, std::int64_t) {
                         double m = -INFINITY;
                         for (const auto& p : v) m = std::max(m, p.first);
                         return m;
                       }), 0);
    const std::vector<double> want_idx = naive_pool<float>(x, c, g, [](const auto& v, std::int64_t) {
      double m = -INFINITY;
      std::int64_t at = 0;
      for (const auto& p : v)
        if (p.first > m) m = p.first, at = p.second;
      return static_cast<double>(at);
    });
    for (std::size_t i = 0; i < want_idx.size(); ++i) CHECK(idx.data<std::int64_t>()[i] == static_cast<std::int64_t>(want_idx[i]));
    const rv::tensor y_alone = rv::tensor::empty(shp(od), rv::dtype::float32());  // without indices: its own loop
    REQUIRE(k::MaxPool_out(x, c.auto_pad, c.ceil, 0, shp(c.kernel), shp(c.s), shp(c.pads), shp(c.d), y_alone, rv::tensor()).ok());
    CHECK(std::memcmp(y_alone.raw_data(), y.raw_data(), static_cast<std::size_t>(y.numel()) * sizeof(float)) == 0);
    for (std::int64_t include : {0, 1}) {
      REQUIRE(k::AveragePool_out(x, c.auto_pad, c.ceil, include, shp(c.kernel), shp(c.s), shp(c.pads), shp(c.d), y).ok());
      check_close<float>(y, naive_pool<float>(x, c, g, [&](const auto& v, std::int64_t padded) {
                           double sum = 0;
                           for (const auto& p : v) sum += p.first;
                           return sum / static_cast<double>(include != 0 ? padded : static_cast<std::int64_t>(v.size()));
                         }), 1e-5);
    }
    REQUIRE(k::LpPool_out(x, c.auto_pad, c.ceil, 3.0, shp(c.kernel), shp(c.s), shp(c.pads), shp(c.d), y).ok());
    check_close<float>(y, naive_pool<float>(x, c, g, [](const auto& v, std::int64_t) {
                         double sum = 0;
                         for (const auto& p : v) sum += std::pow(std::fabs(p.first), 3.0);
                         return std::cbrt(sum);
                       }), 1e-5);
  }
}

TEST_CASE("MaxPool: integer types, column-major indices, errors") {
  rv::tensor x = rv::tensor::empty(rv::shape{1, 1, 3, 4}, rv::dtype::int8());
  for (int i = 0; i < 12; ++i) x.data<std::int8_t>()[i] = static_cast<std::int8_t>(i % 2 == 0 ? -i : i);
  rv::tensor y = rv::tensor::empty(rv::shape{1, 1, 2, 2}, rv::dtype::int8());
  rv::tensor idx = rv::tensor::empty(rv::shape{1, 1, 2, 2}, rv::dtype::int64());
  // Windows 2x2 at stride (1, 2): rows {0,1},{1,2}; columns {0,1},{2,3}.
  REQUIRE(k::MaxPool_out(x, k::notset, 0, 1, rv::shape{2, 2}, rv::shape{1, 2}, rv::shape(), rv::shape(), y, idx).ok());
  // x = [0 1 -2 3; -4 5 -6 7; -8 9 -10 11]
  CHECK(y.data<std::int8_t>()[0] == 5);
  CHECK(y.data<std::int8_t>()[1] == 7);
  CHECK(y.data<std::int8_t>()[2] == 9);
  CHECK(y.data<std::int8_t>()[3] == 11);
  // Column-major: (h, w) -> w * 3 + h.
  CHECK(idx.data<std::int64_t>()[0] == 1 * 3 + 1);
  CHECK(idx.data<std::int64_t>()[1] == 3 * 3 + 1);
  CHECK(idx.data<std::int64_t>()[2] == 1 * 3 + 2);
  CHECK(idx.data<std::int64_t>()[3] == 3 * 3 + 2);
  // Without indices.
  REQUIRE(k::MaxPool_out(x, k::notset, 0, 0, rv::shape{2, 2}, rv::shape{1, 2}, rv::shape(), rv::shape(), y, rv::tensor()).ok());
  // uint16 too.
  rv::tensor xu = rv::tensor::empty(rv::shape{1, 1, 2}, rv::dtype::uint16());
  xu.data<std::uint16_t>()[0] = 7, xu.data<std::uint16_t>()[1] = 65535;
  rv::tensor yu = rv::tensor::empty(rv::shape{1, 1, 1}, rv::dtype::uint16());
  REQUIRE(k::MaxPool_out(xu, k::notset, 0, 0, rv::shape{2}, rv::shape(), rv::shape(), rv::shape(), yu, rv::tensor()).ok());
  CHECK(yu.data<std::uint16_t>()[0] == 65535);
  // Errors.
  CHECK(message(k::MaxPool_out(x, k::notset, 0, 2, rv::shape{2, 2}, rv::shape{1, 2}, rv::shape(), rv::shape(), y, idx)).find("onnx.MaxPool: storage_order is 2") == 0);
  rv::tensor idx32 = rv::tensor::empty(rv::shape{1, 1, 2, 2}, rv::dtype::int32());
  CHECK(message(k::MaxPool_out(x, k::notset, 0, 0, rv::shape{2, 2}, rv::shape{1, 2}, rv::shape(), rv::shape(), y, idx32)).find("onnx.MaxPool: the output (argument 9) is int32") == 0);
  CHECK(message(k::MaxPool_out(x, k::notset, 0, 0, rv::shape{2}, rv::shape{1, 2}, rv::shape(), rv::shape(), y, idx)).find("kernel_shape has 1 values for 2") != std::string::npos);
  CHECK(message(k::MaxPool_out(x, k::notset, 0, 0, rv::shape{2, 0}, rv::shape(), rv::shape(), rv::shape(), y, idx)).find("kernel's dimension 1 is 0") != std::string::npos);
  rv::tensor xb = rv::tensor::empty(rv::shape{1, 1, 2, 2}, rv::dtype::bool_());
  CHECK(message(k::MaxPool_out(xb, k::notset, 0, 0, rv::shape{1, 1}, rv::shape(), rv::shape(), rv::shape(), y, idx)).find("onnx.MaxPool: argument 0 has dtype bool") == 0);
  CHECK(message(k::AveragePool_out(x, k::notset, 0, 0, rv::shape{2, 2}, rv::shape(), rv::shape(), rv::shape(), y)).find("onnx.AveragePool: argument 0 has dtype int8") == 0);
  CHECK(message(k::LpPool_out(x, k::notset, 0, 0.0, rv::shape{2, 2}, rv::shape(), rv::shape(), rv::shape(), y)).find("onnx.LpPool: p must be positive") == 0);
  rv::tensor x2 = rv::tensor::empty(rv::shape{1, 4}, rv::dtype::float32());
  CHECK(message(k::AveragePool_out(x2, k::notset, 0, 0, rv::shape{2}, rv::shape(), rv::shape(), rv::shape(), y)).find("the input has 2 dimensions") != std::string::npos);
  // Windows whose sizes would overflow int64 in the offsets and tap counts (undefined in C++) are
  // refused: every kernel dim, stride, dilation and pad is at most 2^30.
  constexpr std::int64_t t40 = std::int64_t{1} << 40, t41 = std::int64_t{1} << 41;
  rv::tensor x5 = rv::tensor::empty(rv::shape{1, 1, 1, 1, 1}, rv::dtype::float32());
  rv::tensor y5 = rv::tensor::empty(rv::shape{1, 1, 1, 1, 1}, rv::dtype::float32());
  CHECK(message(k::MaxPool_out(x5, k::notset, 0, 0, rv::shape{1, t40, t40}, rv::shape{1, t41, t41}, rv::shape{0, t40, t40, 0, t40, t40},
                               rv::shape(), y5, rv::tensor()))
            .find("onnx.MaxPool: the kernel's dimension 1 is 1099511627776; it must be at most 1073741824") == 0);
  CHECK(message(k::MaxPool_out(x5, k::notset, 0, 0, rv::shape{1, 1, 1}, rv::shape{1, t41, 1}, rv::shape(), rv::shape(), y5, rv::tensor()))
            .find("strides has 2199023255552; each must be at most 1073741824") != std::string::npos);
  CHECK(message(k::AveragePool_out(x5, k::notset, 0, 0, rv::shape{1, 1, 1}, rv::shape(), rv::shape{0, 0, t40, 0, 0, 0}, rv::shape(), y5))
            .find("pads has a value over 1073741824") != std::string::npos);
}

TEST_CASE("Pools: empty tensors") {
  rv::tensor x = rv::tensor::empty(rv::shape{0, 3, 4, 4}, rv::dtype::float32());
  rv::tensor y = rv::tensor::empty(rv::shape{0, 3, 2, 2}, rv::dtype::float32());
  CHECK(k::MaxPool_out(x, k::notset, 0, 0, rv::shape{2, 2}, rv::shape{2, 2}, rv::shape(), rv::shape(), y, rv::tensor()).ok());
  CHECK(k::AveragePool_out(x, k::notset, 0, 0, rv::shape{2, 2}, rv::shape{2, 2}, rv::shape(), rv::shape(), y).ok());
  rv::tensor g = rv::tensor::empty(rv::shape{0, 3, 1, 1}, rv::dtype::float32());
  CHECK(k::GlobalAveragePool_out(x, g).ok());
}

TEST_CASE("Global pools") {
  std::mt19937 rng(8);
  for (const dims_t& d : {dims_t{2, 3, 5}, dims_t{1, 2, 3, 4}, dims_t{1, 2, 2, 3, 2}}) {
    const rv::tensor x = random_tensor<double>(d, rng);
    dims_t od{d[0], d[1]};
    od.resize(d.size(), 1);
    const rv::tensor y = rv::tensor::empty(shp(od), rv::dtype::float64());
    const std::int64_t plane = count(d) / (d[0] * d[1]);
    REQUIRE(k::GlobalAveragePool_out(x, y).ok());
    for (std::int64_t p = 0; p < d[0] * d[1]; ++p) {
      double sum = 0;
      for (std::int64_t i = 0; i < plane; ++i) sum += x.data<double>()[p * plane + i];
      CHECK(y.data<double>()[p] == doctest::Approx(sum / static_cast<double>(plane)));
    }
    REQUIRE(k::GlobalMaxPool_out(x, y).ok());
    for (std::int64_t p = 0; p < d[0] * d[1]; ++p) {
      double m = -INFINITY;
      for (std::int64_t i = 0; i < plane; ++i) m = std::max(m, x.data<double>()[p * plane + i]);
      CHECK(y.data<double>()[p] == m);
    }
    REQUIRE(k::GlobalLpPool_out(x, 2.0, y).ok());
    for (std::int64_t p = 0; p < d[0] * d[1]; ++p) {
      double sum = 0;
      for (std::int64_t i = 0; i < plane; ++i) sum += x.data<double>()[p * plane + i] * x.data<double>()[p * plane + i];
      CHECK(y.data<double>()[p] == doctest::Approx(std::sqrt(sum)));
    }
  }
  // GlobalMaxPool of uint8; errors.
  rv::tensor xu = rv::tensor::empty(rv::shape{1, 1, 3}, rv::dtype::uint8());
  xu.data<std::uint8_t>()[0] = 3, xu.data<std::uint8_t>()[1] = 200, xu.data<std::uint8_t>()[2] = 1;
  rv::tensor yu = rv::tensor::empty(rv::shape{1, 1, 1}, rv::dtype::uint8());
  REQUIRE(k::GlobalMaxPool_out(xu, yu).ok());
  CHECK(yu.data<std::uint8_t>()[0] == 200);
  rv::tensor yf = rv::tensor::empty(rv::shape{1, 1, 1}, rv::dtype::float32());
  CHECK(message(k::GlobalAveragePool_out(xu, yf)).find("onnx.GlobalAveragePool: argument 0 has dtype uint8") == 0);
  rv::tensor y_bad = rv::tensor::empty(rv::shape{1, 1}, rv::dtype::uint8());
  CHECK(message(k::GlobalMaxPool_out(xu, y_bad)).find("onnx.GlobalMaxPool: the output (argument 1) has shape") == 0);
  CHECK(message(k::GlobalLpPool_out(xu, -1.0, yu)).find("onnx.GlobalLpPool: p must be positive") == 0);
}
