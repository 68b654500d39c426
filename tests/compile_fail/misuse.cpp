// SPDX-License-Identifier: MIT
/// @file Type misuse that must not compile (tests/meson.build builds each WEFT_MISUSE case and
/// fails the configuration if one compiles; case 0, the same code without the misuse, must).
#include <weft/weft.hpp>

int main() {
  const weft::Tensor<float> read_only = weft::zeros<float>({2, 3});
  weft::Tensor<float> writable = weft::zeros<float>({2, 3});
  weft::Tensor<std::int32_t> counts = weft::zeros<std::int32_t>({2, 3});
  (void)read_only, (void)writable, (void)counts;
#if WEFT_MISUSE == 0
  writable.slice(0, 0, 1) = read_only.slice(0, 1, 2);
  weft::TensorView<const float> view = read_only;
  counts += weft::cast<std::int32_t>(writable * 2.5f);
  weft::Tensor<float> copy(read_only.transpose(0, 1));
  weft::Tensor<float> joined = weft::cat(0, writable, read_only * 2);
  weft::Tensor<double> like = weft::zeros_like<double>(read_only);
  weft::Tensor<float> loss = weft::nn::cross_entropy(writable, counts.select(1, 0) + 1);
  writable(0, 1) = read_only(1, -1);
  weft::Tensor<float> picked = weft::masked_select(writable, writable > 0.0f);
  (void)picked;
  (void)view, (void)copy, (void)joined, (void)like, (void)loss;
#elif WEFT_MISUSE == 1  // writing through a view of a const tensor
  read_only.slice(0, 0, 1) = 1.0f;
#elif WEFT_MISUSE == 2  // a writable view of a const tensor
  weft::TensorView<float> view = read_only;
  (void)view;
#elif WEFT_MISUSE == 3  // a float result into an integer tensor (torch.can_cast is false)
  counts += writable * 2.5f;
#elif WEFT_MISUSE == 4  // a view becoming a copy unasked (Tensor from a view is explicit)
  weft::Tensor<float> copy = read_only.transpose(0, 1);
  (void)copy;
#elif WEFT_MISUSE == 5  // a number joined by cat (it has no shape)
  auto joined = weft::cat(0, writable, 2.0f);
  (void)joined;
#elif WEFT_MISUSE == 6  // an expression given to a *_like factory (it has no elements to be like)
  auto like = weft::zeros_like(writable * 2.0f);
  (void)like;
#elif WEFT_MISUSE == 7  // floating targets for cross_entropy (class indices are integers)
  weft::Tensor<float> loss = weft::nn::cross_entropy(writable, writable.sum(1));
  (void)loss;
#elif WEFT_MISUSE == 8  // writing an element of a const tensor
  read_only(0, 1) = 1.0f;
#elif WEFT_MISUSE == 9  // a mask that does not hold bool (masked_select selects by truth values)
  auto picked = weft::masked_select(writable, writable);
  (void)picked;
#endif
}
