// SPDX-License-Identifier: MIT
/// @file examples/resnet/folded.hpp: a trained ResNet folded for inference (BatchNorm in the convolutions, prepacked, relu and residual in the epilogues) gives the model's eval logits, with channels-last and NCHW activations.
#include <cmath>
#include <string>

#include <doctest/doctest.h>

#include "../../examples/resnet/folded.hpp"
#include "error_check.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft;
using namespace weft_test;

TEST_CASE("FoldedResNet: the eval logits of the model it folds, either activation layout") {
  WEFT_TEST_RNG(rng);
  weft::manual_seed(rng.bits());
  resnet::ResNetConfig config;
  config.widths = {8, 16, 24};
  config.blocks = {1, 2, 1};
  config.strides = {1, 2, 2};
  resnet::ResNet<double> model(config);
  // training-mode passes give the BatchNorms running statistics away from their initial 0 and 1
  for (int step = 0; step < 3; ++step) (void)model(ad::Var<double>(random_contiguous<double>(rng, Shape{6, 3, 12, 12}, Domain{})));
  model.eval();
  ad::NoGrad no_tape;
  const Tensor<double> x = random_contiguous<double>(rng, Shape{3, 3, 12, 12}, Domain{});
  const Tensor<double> want = model(ad::Var<double>(Tensor<double>(x))).value();
  for (bool channels_last : {true, false}) {
    INFO("channels_last ", channels_last);
    resnet::FoldedResNet<double> folded(model, channels_last);
    weft::set_logs("vision");
    LogCapture capture;
    const Tensor<double> got = folded(x);
    const std::string log = capture.text();
    capture.restore();
    weft::set_logs("");
    CHECK(has(log, channels_last ? "resnet: the chain runs channels-last" : "resnet: the chain runs NCHW"));
    CHECK(has(log, channels_last ? "-> [3, 8, 12, 12] channels-last" : "-> [3, 8, 12, 12] NCHW"));
    // both sides sum the same products in double; folding rounds the weights once more
    CHECK(weft::allclose(got, want, 1e-10, 1e-12));
  }
}
