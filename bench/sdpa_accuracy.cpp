// SPDX-License-Identifier: MIT
/// @file Attention accuracy harness: runs weft's fp32 flash and math backends, forward and backward, on the problems bench/sdpa_accuracy.py draws.
//
//   sdpa_accuracy INPUTS.safetensors RESULTS.safetensors
//
// INPUTS holds, per case i, tensors "i.q", "i.k", "i.v", "i.dout" (float32, (B, Hq|H, L|S, E|Ev))
// and "i.mask" (bool or float32) where the case has one, and metadata "i" = "B Hq H L S E Ev kind
// scale gqa" (kind: none, upper_left, lower_right, bool, float; scale 0: the default). RESULTS gets
// "i.flash.out", "i.flash.dq", "i.flash.dk", "i.flash.dv" and the same for "math";
// bench/sdpa_accuracy.py compares them with PyTorch's.
#include <sstream>

#include <weft/io.hpp>
#include <weft/weft.hpp>

namespace nn = weft::nn;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUTS.safetensors RESULTS.safetensors (bench/sdpa_accuracy.py runs it)\n", argv[0]);
    return 2;
  }
  const weft::io::SafeTensors in(argv[1]);
  std::vector<weft::io::NamedTensor> results;
  for (const auto& [id, line] : in.metadata()) {
    std::istringstream opts(line);
    long long B, Hq, H, L, S, E, Ev;
    std::string kind;
    double scale;
    int gqa;
    opts >> B >> Hq >> H >> L >> S >> E >> Ev >> kind >> scale >> gqa;
    auto get = [&](const char* name) { return weft::Tensor<float>(in.get<float>(id + "." + name)); };
    const weft::Tensor<float> q = get("q"), k = get("k"), v = get("v"), dout = get("dout");
    nn::SdpaOptions o;
    o.enable_gqa = gqa != 0;
    if (scale != 0) o.scale = scale;
    if (kind == "upper_left" || kind == "lower_right") {
      o.is_causal = true;
      if (kind == "lower_right") o.causal_variant = nn::CausalVariant::lower_right;
    } else if (kind == "bool") {
      o.attn_mask = weft::Tensor<bool>(in.get<bool>(id + ".mask"));
    } else if (kind == "float") {
      o.attn_mask = get("mask");
    }
    for (nn::SdpaBackend backend : {nn::SdpaBackend::flash, nn::SdpaBackend::math}) {
      nn::SdpaBackendGuard guard({backend});
      const nn::SdpaOutput<float> f = nn::sdpa_forward(q, k, v, o);
      const nn::SdpaGradients<float> g = nn::sdpa_backward(dout, q, k, v, f.out, f.lse, o);
      const std::string prefix = id + "." + std::string(nn::backend_name(backend)) + ".";
      results.push_back({prefix + "out", f.out});
      results.push_back({prefix + "dq", g.dq});
      results.push_back({prefix + "dk", g.dk});
      results.push_back({prefix + "dv", g.dv});
    }
  }
  weft::io::save_safetensors(argv[2], results);
  return 0;
}
