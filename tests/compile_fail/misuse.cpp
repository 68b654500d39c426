// SPDX-License-Identifier: MIT
/// @file Type misuse that must not compile. check_misuse.py compiles this file twice: with
/// WEFT_MISUSE=0 only main(), the same code used correctly, which must compile; with WEFT_MISUSE=1
/// also every misuse_N() function, and each of them must get an error of its own (a diagnostic that
/// points into its lines), so one compile checks every case.
#include <weft/weft.hpp>

const weft::Tensor<float> read_only = weft::zeros<float>({2, 3});
weft::Tensor<float> writable = weft::zeros<float>({2, 3});
weft::Tensor<std::int32_t> counts = weft::zeros<std::int32_t>({2, 3});

int main() {
  writable.slice(0, 0, 1) = read_only.slice(0, 1, 2);
  weft::TensorView<const float> view = read_only;
  counts += weft::cast<std::int32_t>(writable * 2.5f);
  weft::Tensor<float> copy(read_only.transpose(0, 1));
  weft::Tensor<float> joined = weft::cat(0, writable, read_only * 2);
  weft::Tensor<double> like = weft::zeros_like<double>(read_only);
  weft::Tensor<float> loss = weft::nn::cross_entropy(writable, counts.select(1, 0) + 1);
  writable(0, 1) = read_only(1, -1);
  weft::Tensor<float> picked = weft::masked_select(writable, writable > 0.0f);
  (void)view, (void)copy, (void)joined, (void)like, (void)loss, (void)picked;
}

#if WEFT_MISUSE
// Writing through a view of a const tensor.
void misuse_1() {
  read_only.slice(0, 0, 1) = 1.0f;
}

// A writable view of a const tensor.
void misuse_2() {
  weft::TensorView<float> view = read_only;
  (void)view;
}

// A float result into an integer tensor (torch.can_cast is false).
void misuse_3() {
  counts += writable * 2.5f;
}

// A view becoming a copy unasked (a Tensor from a view is explicit).
void misuse_4() {
  weft::Tensor<float> copy = read_only.transpose(0, 1);
  (void)copy;
}

// A number joined by cat (it has no shape).
void misuse_5() {
  auto joined = weft::cat(0, writable, 2.0f);
  (void)joined;
}

// An expression given to a *_like factory (it has no elements to be like).
void misuse_6() {
  auto like = weft::zeros_like(writable * 2.0f);
  (void)like;
}

// Floating targets for cross_entropy (class indices are integers).
void misuse_7() {
  weft::Tensor<float> loss = weft::nn::cross_entropy(writable, writable.sum(1));
  (void)loss;
}

// Writing an element of a const tensor.
void misuse_8() {
  read_only(0, 1) = 1.0f;
}

// A mask that does not hold bool (masked_select selects by truth values).
void misuse_9() {
  auto picked = weft::masked_select(writable, writable);
  (void)picked;
}
#endif
