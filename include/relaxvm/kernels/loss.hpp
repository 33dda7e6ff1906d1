// SPDX-License-Identifier: Apache-2.0
// The losses with ONNX's semantics: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over
// x (N, C, d1, ..., dk) and integer targets (N, d1, ..., dk), with optional per-class weights, an
// optional ignore_index and the reductions none, sum and mean. As ONNX's reference: a weighted
// (or ignoring) mean divides by the sum of the weights taken, so a mean over targets that are all
// ignored is 0 / 0, NaN. Sums are accumulated in double; plain loops, no heap.
#ifndef RELAXVM_KERNELS_LOSS_HPP
#define RELAXVM_KERNELS_LOSS_HPP

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "base.hpp"

namespace relaxvm::RELAXVM_ABI::kernels {

/// A loss's reduction, as the int64 attribute the kernels take.
enum loss_reduction : std::int64_t { reduce_none = 0, reduce_sum = 1, reduce_mean = 2 };

namespace detail {

/// The geometry of a loss: x is (n, c, d) once its trailing dims are flattened.
struct loss_shape {
  std::int64_t n = 0, c = 0, d = 1;
};

/// Checks x, the targets, the weights (undefined when absent), the reduction and the loss output.
inline status check_loss(std::string_view fn, const tensor& x, const tensor& target, const tensor& weight, std::int64_t reduction,
                         const tensor& out, std::size_t out_index, loss_shape& g) {
  RELAXVM_TRY(check_in(fn, x, 0, floats));
  RELAXVM_TRY(check_in(fn, target, 1, signed_ints));
  if (target.dtype().bits != 32 && target.dtype().bits != 64) return bad_type(fn, 1, target.dtype());
  const std::span<const std::int64_t> xs = x.shape().dims(), ts = target.shape().dims();
  if (xs.size() < 2) return value_error(fn, ": the input must have at least 2 dims (N, C, ...), but has shape ", dims_text{xs});
  bool match = ts.size() == xs.size() - 1 && ts[0] == xs[0];
  for (std::size_t k = 1; match && k < ts.size(); ++k) match = ts[k] == xs[k + 1];
  if (!match)
    return value_error(fn, ": the target has shape ", dims_text{ts}, " but must be the input's ", dims_text{xs}, " without its dim 1 (C)");
  g.n = xs[0];
  g.c = xs[1];
  g.d = 1;
  for (std::size_t k = 2; k < xs.size(); ++k) g.d *= xs[k];
  if (weight.defined()) {
    RELAXVM_TRY(check_in(fn, weight, 2, floats));
    RELAXVM_TRY(same_type(fn, x, 0, weight, 2));
    if (weight.ndim() != 1 || weight.shape()[0] != g.c)
      return value_error(fn, ": the weights have shape ", dims_text{weight.shape().dims()}, " but must be [", g.c, "] (one per class)");
  }
  if (reduction < reduce_none || reduction > reduce_mean)
    return value_error(fn, ": reduction ", reduction, " must be 0 (none), 1 (sum) or 2 (mean)");
  if (reduction == reduce_none) return check_out(fn, out, out_index, ts, x.dtype());
  return check_out(fn, out, out_index, {}, x.dtype());
}

/// The loss at each target from -logp(n, class, d) (logp(i) reads the log-probability at x's
/// element offset i), weighted and reduced into `out`. An error names a target outside [0, C)
/// that is not the ignore_index.
template <class T, class I, class LogP>
status reduce_loss(std::string_view fn, const loss_shape& g, const I* t, const T* w, std::int64_t reduction, bool has_ignore,
                   std::int64_t ignore_index, LogP&& logp, T* out) {
  double sum = 0, weights = 0;
  for (std::int64_t i = 0; i < g.n; ++i) {
    for (std::int64_t j = 0; j < g.d; ++j) {
      const std::int64_t at = i * g.d + j;
      const auto cls = static_cast<std::int64_t>(t[at]);
      double loss = 0, wt = 0;
      if (!has_ignore || cls != ignore_index) {
        if (cls < 0 || cls >= g.c)
          return value_error(fn, ": target ", cls, " (element ", at, ") is outside [0, ", g.c, ") and is not the ignore_index");
        wt = w != nullptr ? static_cast<double>(w[cls]) : 1.0;
        loss = -static_cast<double>(logp((i * g.c + cls) * g.d + j)) * wt;
      }
      if (reduction == reduce_none) out[at] = static_cast<T>(loss);
      sum += loss;
      weights += wt;
    }
  }
  if (reduction == reduce_sum) out[0] = static_cast<T>(sum);
  // ONNX's reference: sum(w * loss) / sum(w), NaN when every target is ignored (0 / 0).
  if (reduction == reduce_mean) out[0] = weights != 0 ? static_cast<T>(sum / weights) : std::numeric_limits<T>::quiet_NaN();
  return {};
}

/// Calls f.template operator()<T, I>() with x's float type and the targets' int type.
template <class F>
status visit_loss(const tensor& x, const tensor& target, F&& f) {
  const bool wide = target.dtype().bits == 64;
  if (x.dtype() == dtype::float32()) return wide ? f.template operator()<float, std::int64_t>() : f.template operator()<float, std::int32_t>();
  return wide ? f.template operator()<double, std::int64_t>() : f.template operator()<double, std::int32_t>();
}

}  // namespace detail

/// NegativeLogLikelihoodLoss(x, target, weight | undefined, reduction, has_ignore, ignore_index,
/// out): out = -x[n, target[n, d], d] * weight[target[n, d]], reduced (loss_reduction).
inline status NegativeLogLikelihoodLoss_out(const tensor& x, const tensor& target, const tensor& weight, std::int64_t reduction,
                                            std::int64_t has_ignore, std::int64_t ignore_index, const tensor& out) {
  constexpr std::string_view fn = "onnx.NegativeLogLikelihoodLoss";
  detail::loss_shape g;
  RELAXVM_TRY(detail::check_loss(fn, x, target, weight, reduction, out, 6, g));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  return detail::visit_loss(x, target, [&]<class T, class I>() -> status {
    const T* in = static_cast<const T*>(x.raw_data());
    const T* w = weight.defined() ? static_cast<const T*>(weight.raw_data()) : nullptr;
    return detail::reduce_loss(fn, g, static_cast<const I*>(target.raw_data()), w, reduction, has_ignore != 0, ignore_index,
                               [in](std::int64_t i) { return in[i]; }, static_cast<T*>(out.raw_data()));
  });
}

/// SoftmaxCrossEntropyLoss(x, target, weight | undefined, reduction, has_ignore, ignore_index, out,
/// log_prob): log_prob = LogSoftmax(x) along dim 1, then the negative log-likelihood loss of it.
inline status SoftmaxCrossEntropyLoss_out(const tensor& x, const tensor& target, const tensor& weight, std::int64_t reduction,
                                          std::int64_t has_ignore, std::int64_t ignore_index, const tensor& out, const tensor& log_prob) {
  constexpr std::string_view fn = "onnx.SoftmaxCrossEntropyLoss";
  detail::loss_shape g;
  RELAXVM_TRY(detail::check_loss(fn, x, target, weight, reduction, out, 6, g));
  RELAXVM_TRY(detail::check_out(fn, log_prob, 7, x.shape().dims(), x.dtype()));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, out, false));
  RELAXVM_TRY(detail::check_alias(fn, x, 0, log_prob, true));
  RELAXVM_TRY(detail::check_alias(fn, log_prob, 7, out, false));
  return detail::visit_loss(x, target, [&]<class T, class I>() -> status {
    const T* in = static_cast<const T*>(x.raw_data());
    T* lp = static_cast<T*>(log_prob.raw_data());
    // log_softmax along C, whose elements are d apart.
    for (std::int64_t i = 0; i < g.n; ++i) {
      for (std::int64_t j = 0; j < g.d; ++j) {
        const std::int64_t base = i * g.c * g.d + j;
        T mx = -std::numeric_limits<T>::infinity();
        for (std::int64_t k = 0; k < g.c; ++k) mx = in[base + k * g.d] > mx ? in[base + k * g.d] : mx;
        double s = 0;
        for (std::int64_t k = 0; k < g.c; ++k) s += std::exp(static_cast<double>(in[base + k * g.d] - mx));
        const double lse = static_cast<double>(mx) + std::log(s);
        for (std::int64_t k = 0; k < g.c; ++k) lp[base + k * g.d] = static_cast<T>(static_cast<double>(in[base + k * g.d]) - lse);
      }
    }
    const T* w = weight.defined() ? static_cast<const T*>(weight.raw_data()) : nullptr;
    return detail::reduce_loss(fn, g, static_cast<const I*>(target.raw_data()), w, reduction, has_ignore != 0, ignore_index,
                               [lp](std::int64_t i) { return lp[i]; }, static_cast<T*>(out.raw_data()));
  });
}

}  // namespace relaxvm::kernels

#endif  // RELAXVM_KERNELS_LOSS_HPP
