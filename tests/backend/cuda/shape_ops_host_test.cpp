// SPDX-License-Identifier: MIT
/// @file The reads flip, roll and pad give the CUDA kernel (views reversed with negative strides, repeated with zero strides, shifted by offsets) run through the CUDA thread loop on the host (EmulatedOnHost: 1 to 4099 simulated threads, 32- and 64-bit index math) against an index loop; g++ compiles it, so every machine that builds the cuda suite checks them, GPU or not.
#include <doctest/doctest.h>

#include <weft/ops/box_copy.hpp>

#include "backend/cuda/emulated_on_host.hpp"

using pointwise_suite::EmulatedOnHost;
using namespace weft_test;

TEST_SUITE("cuda") {

TEST_CASE("cuda thread loop on the host: reversed, repeated and shifted views of flip's, roll's and pad's boxes") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 48; ++iter) {
    const Shape shape = random_shape(rng, 1, 4, 2000);
    const TensorView<float> x = make_view<float>(rng, shape, Domain{}, random_layout(rng, false));
    // Each dim read forward from an offset, reversed from its end, or one element repeated.
    std::vector<weft::detail::DimRun> runs;
    weft::detail::BoxLayout layout = weft::detail::box_layout(TensorView<const float>(x));
    for (int d = 0; d < shape.rank(); ++d) {
      const std::int64_t n = shape[d];
      const std::int64_t step = n == 0 ? 1 : rng.integer(-1, 1);
      const std::int64_t start = step == -1 ? n - 1 : step == 0 ? rng.integer(0, n - 1) : rng.integer(0, n / 2);
      const std::int64_t length = step == 0 ? rng.integer(1, 5) : step == -1 ? n : n - start;
      runs.push_back({0, length, start, step});
      layout.read(d, runs.back());
    }
    const TensorView<const float> src = weft::detail::box_view(TensorView<const float>(x), layout);
    INFO("shape ", shape_str(shape), ", read as ", shape_str(src.shape()), " with strides ", shape_str(src.strides()));
    const TensorView<float> dst = make_destination<float>(rng, src.shape(), random_layout(rng, true));
    EmulatedOnHost::run(weft::assign(dst, src));
    WEFT_CHECK_REPORT(check_output(dst, [&](std::vector<std::int64_t> idx) {
      for (std::size_t d = 0; d < idx.size(); ++d) idx[d] = runs[d].in_start + runs[d].step * idx[d];
      return Expect{value_at(x, idx)};
    }));
  }
}

}  // TEST_SUITE
