// SPDX-License-Identifier: MIT
/// @file nn::BatchNorm1d and nn::BatchNorm2d: batch normalization's affine parameters and running-statistic buffers, with torch's names, initial values and momentum rule.
#pragma once

#include <cstdint>
#include <optional>

#include "weft/nn/batch_norm.hpp"
#include "weft/nn/modules/module.hpp"
#include "weft/ops/factories.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// What torch's _BatchNorm holds and does, for BatchNorm1d and BatchNorm2d (which differ only in
/// the input ranks they take): parameters `weight` [C] (ones) and `bias` [C] (zeros) when
/// affine; buffers `running_mean` [C] (zeros), `running_var` [C] (ones) and `num_batches_tracked`
/// (an int64 scalar, 0) when track_running_stats; torch's state_dict keys, in torch's order.
template <class T = float>
class BatchNorm : public Module<T> {
 public:
  /// y = (x - mean) / sqrt(var + eps) * weight + bias per channel. In training (and always
  /// without running statistics) mean and var are the batch's, and a training forward counts
  /// the batch and updates the running statistics: running = (1 - f) running + f statistic,
  /// with f = momentum, or 1 / num_batches_tracked when momentum is nullopt (torch's None: a
  /// cumulative average). In eval the running statistics normalize.
  ad::Var<T> forward(const ad::Var<T>& x) override { return normalize(x, nullptr); }
  using Module<T>::operator();

  /// relu(forward(x) + residual) (residual of x's shape, or an empty Var for relu(forward(x))) as
  /// one op, nn::batch_norm_relu: the same values, gradients and running statistics as the three
  /// ops, one pass over x. A ResNet block's `relu(bn(conv(x)) + shortcut)`.
  ad::Var<T> forward_relu(const ad::Var<T>& x, const ad::Var<T>& residual = {}) { return normalize(x, &residual); }

  std::int64_t num_features() const { return num_features_; }
  double eps() const { return eps_; }
  std::optional<double> momentum() const { return momentum_; }

  ad::Var<T> weight;
  ad::Var<T> bias;
  Tensor<T> running_mean;
  Tensor<T> running_var;
  Tensor<std::int64_t> num_batches_tracked;

 protected:
  /// `name` and the input ranks it takes, from min_rank to max_rank (BatchNorm1d: 2 to 3).
  BatchNorm(const char* name, int min_rank, int max_rank, std::int64_t num_features, double eps,
            std::optional<double> momentum, bool affine, bool track_running_stats)
      : name_(name), min_rank_(min_rank), max_rank_(max_rank), num_features_(num_features), eps_(eps),
        momentum_(momentum) {
    if (num_features < 1) weft::detail::fail(name, "num_features must be >= 1, got ", num_features);
    if (!(eps >= 0)) weft::detail::fail(name, "eps must be >= 0, got ", eps);
    if (affine) {
      weight = ad::param(ones<T>({num_features}));
      bias = ad::param(zeros<T>({num_features}));
    }
    if (track_running_stats) {
      running_mean = zeros<T>({num_features});
      running_var = ones<T>({num_features});
      num_batches_tracked = zeros<std::int64_t>(Shape{});
    }
    this->register_parameter("weight", &BatchNorm::weight);
    this->register_parameter("bias", &BatchNorm::bias);
    this->register_buffer("running_mean", &BatchNorm::running_mean);
    this->register_buffer("running_var", &BatchNorm::running_var);
    this->register_buffer("num_batches_tracked", &BatchNorm::num_batches_tracked);
  }

 private:
  /// torch's message: "expected 4D input (got 3D input)".
  void check_input(const Shape& s) const {
    if (s.rank() < min_rank_ || s.rank() > max_rank_)
      weft::detail::fail(name_, "expected ", min_rank_,
                         min_rank_ == max_rank_ ? weft::detail::cat("D input") : weft::detail::cat("D or ", max_rank_, "D input"),
                         " (got ", s.rank(), "D input of shape ", s, "); BatchNorm1d takes [N, C] or [N, C, L], "
                         "BatchNorm2d [N, C, H, W]");
  }

  /// forward(x), or forward_relu(x, *residual) when residual is given.
  ad::Var<T> normalize(const ad::Var<T>& x, const ad::Var<T>* residual) {
    check_input(x.shape());
    const bool tracked = running_mean.defined();
    const bool update = this->is_training() && tracked;
    const double factor = !update ? 0.0
                          : momentum_ ? *momentum_
                                      : 1.0 / double(num_batches_tracked.view().item() + 1);
    const bool batch_statistics = this->is_training() || !tracked;
    ad::Var<T> y = residual ? nn::batch_norm_relu(x, running_mean, running_var, weight, bias, *residual,
                                                  batch_statistics, factor, eps_)
                            : nn::batch_norm(x, running_mean, running_var, weight, bias, batch_statistics, factor, eps_);
    if (update) TensorView<std::int64_t>(num_batches_tracked) += std::int64_t(1);
    return y;
  }

  const char* name_;
  int min_rank_, max_rank_;
  std::int64_t num_features_;
  double eps_;
  std::optional<double> momentum_;
};

/// torch.nn.BatchNorm1d: batch normalization of [N, C] or [N, C, L] inputs.
template <class T = float>
class BatchNorm1d : public BatchNorm<T> {
 public:
  explicit BatchNorm1d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNorm<T>("nn::BatchNorm1d", 2, 3, num_features, eps, momentum, affine, track_running_stats) {}
};

/// torch.nn.BatchNorm2d: batch normalization of [N, C, H, W] inputs (NCHW or channels-last).
template <class T = float>
class BatchNorm2d : public BatchNorm<T> {
 public:
  explicit BatchNorm2d(std::int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true)
      : BatchNorm<T>("nn::BatchNorm2d", 4, 4, num_features, eps, momentum, affine, track_running_stats) {}
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
