// SPDX-License-Identifier: MIT
/// @file nn::Embedding: a lookup table of num_embeddings vectors of embedding_dim (weight [n, dim]), initialized N(0, 1) as torch's.
#pragma once

#include <cstdint>
#include <optional>

#include "weft/ad/indexing.hpp"
#include "weft/nn/modules/init.hpp"
#include "weft/nn/modules/module.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.Embedding(num_embeddings, embedding_dim): `weight` [num_embeddings, embedding_dim],
/// row i the vector of index i, drawn from N(0, 1). `seed`: nn/modules/init.hpp.
template <class T = float>
class Embedding : public Module<T> {
 public:
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim, std::optional<std::uint64_t> seed = std::nullopt)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {
    if (num_embeddings < 0 || embedding_dim < 0)
      weft::detail::fail("nn::Embedding", "num_embeddings and embedding_dim must be >= 0, got ", num_embeddings,
                         " and ", embedding_dim);
    detail::InitSeeds seeds(seed);
    weight = ad::param(detail::normal_init<T>({num_embeddings, embedding_dim}, seeds.next()));
    this->register_parameter("weight", &Embedding::weight);
  }

  /// The rows weight[indices[...]]: [indices' shape..., embedding_dim] (int64 or int32 indices).
  template <SingleTensor Indices>
  ad::Var<T> forward(const Indices& indices) {
    return weft::embedding(weight, indices);
  }
  template <SingleTensor Indices>
  ad::Var<T> operator()(const Indices& indices) {
    return forward(indices);
  }
  using Module<T>::forward;

  std::int64_t num_embeddings() const { return num_embeddings_; }
  std::int64_t embedding_dim() const { return embedding_dim_; }

  ad::Var<T> weight;

 private:
  std::int64_t num_embeddings_, embedding_dim_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
