// SPDX-License-Identifier: MIT
/// @file The data-parallel ranks and the AdamW step on them (data_parallel.hpp); without MPI, one rank.

#include "data_parallel.hpp"

#include <stdexcept>

#if WEFT_GPT2_DIST
#include "sharded_adamw.hpp"
#endif

namespace gpt2 {

#if WEFT_GPT2_DIST

DataParallel::DataParallel()
    : dp_(weft::dist::init_device_mesh(weft::Device::cpu(), {weft::dist::world().size()}, {"dp"})) {}

int DataParallel::rank() const { return dp_.rank(); }
int DataParallel::size() const { return dp_.size(); }

void DataParallel::average(const weft::TensorList<float>& xs) const {
  weft::dist::all_reduce(xs, dp_, weft::dist::ReduceOp::avg);
}

float DataParallel::average(float x) const {
  Tensor<float> t = weft::full<float>({1}, x);
  weft::dist::all_reduce(t, dp_, weft::dist::ReduceOp::avg);
  return t.item();
}

std::vector<std::int64_t> DataParallel::gather(std::int64_t x) const {
  const Tensor<std::int64_t> mine = weft::full<std::int64_t>({1}, x);
  Tensor<std::int64_t> all = weft::empty<std::int64_t>({size()});
  weft::dist::all_gather(all, mine, dp_);
  return all.to_vector();
}

#else

DataParallel::DataParallel() = default;
int DataParallel::rank() const { return 0; }
int DataParallel::size() const { return 1; }
void DataParallel::average(const weft::TensorList<float>&) const {}
float DataParallel::average(float x) const { return x; }
std::vector<std::int64_t> DataParallel::gather(std::int64_t x) const { return {x}; }

#endif

DataParallelAdamW::DataParallelAdamW(Model& model, const DataParallel& dp, weft::optim::AdamWOptions options,
                                     bool zero1)
    : model_(model), dp_(dp) {
  if (!zero1) {
    // One fused AdamW kernel over the whole flat buffer per step.
    replicated_ = std::make_unique<weft::optim::AdamW<float>>(weft::TensorList<float>({model.parameters()}), options);
    return;
  }
#if WEFT_GPT2_DIST
  sharded_ = std::make_unique<ShardedAdamW>(model.parameters(), dp.group(), options);
#else
  throw std::invalid_argument("--zero1 shards the optimizer state over MPI ranks, and this gpt2 was built without MPI");
#endif
}
DataParallelAdamW::~DataParallelAdamW() = default;

void DataParallelAdamW::step() {
  if (replicated_) {
    // The 16 gradient tensors lie back to back in the flat buffer: the list all_reduce sends them as they are.
    dp_.average(tensor_list(model_.gradient_tensors()));
    replicated_->step(weft::TensorList<float>({model_.gradients()}));
    return;
  }
#if WEFT_GPT2_DIST
  sharded_->step(model_.gradients());
#endif
}

std::int64_t DataParallelAdamW::state_bytes() {
#if WEFT_GPT2_DIST
  weft::optim::AdamW<float>& adamw = replicated_ ? *replicated_ : sharded_->adamw();
#else
  weft::optim::AdamW<float>& adamw = *replicated_;
#endif
  std::int64_t bytes = 0;
  for (const std::string& name : adamw.state_names())
    bytes += adamw.state(name).numel() * std::int64_t(sizeof(float));
  return bytes;
}

}  // namespace gpt2
