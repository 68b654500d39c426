// SPDX-License-Identifier: MIT
/// @file Attention accuracy harness: runs weft's flash and math backends (fp32 or bf16), forward and backward, on the problems bench/sdpa_accuracy.py draws.
//
//   sdpa_accuracy INPUTS.safetensors RESULTS.safetensors
//
// INPUTS holds, per case i, tensors "i.q", "i.k", "i.v", "i.dout" (float32, (B, Hq|H, L|S, E|Ev))
// and "i.mask" (bool or float32) where the case has one, and metadata "i" = "B Hq H L S E Ev kind
// scale gqa dtype" (kind: none, upper_left, lower_right, bool, float; scale 0: the default; dtype
// fp32 or bf16: the float32 inputs then hold bf16 values, run in bf16). RESULTS gets
// "i.flash.out", "i.flash.dq", "i.flash.dk", "i.flash.dv" and the same for "math", as float32;
// bench/sdpa_accuracy.py compares them with PyTorch's.
#include <sstream>

#include <weft/io.hpp>
#include <weft/weft.hpp>

namespace nn = weft::nn;

/// Flash and math, forward and backward, in T (the float32 inputs hold T's values); results as float32.
template <class T>
void run(const std::string& id, const weft::Tensor<float>& qf, const weft::Tensor<float>& kf, const weft::Tensor<float>& vf,
         const weft::Tensor<float>& df, const nn::SdpaOptions& o, std::vector<weft::io::NamedTensor>& results) {
  const weft::Tensor<T> q = weft::eval(weft::cast<T>(qf)), k = weft::eval(weft::cast<T>(kf)),
                        v = weft::eval(weft::cast<T>(vf)), dout = weft::eval(weft::cast<T>(df));
  for (nn::SdpaBackend backend : {nn::SdpaBackend::flash, nn::SdpaBackend::math}) {
    nn::SdpaBackendGuard guard({backend});
    const nn::SdpaOutput<T> f = nn::sdpa_forward(q, k, v, o);
    const nn::SdpaGradients<T> g = nn::sdpa_backward(dout, q, k, v, f.out, f.lse, o);
    const std::string prefix = id + "." + std::string(nn::backend_name(backend)) + ".";
    results.push_back({prefix + "out", weft::eval(weft::cast<float>(f.out))});
    results.push_back({prefix + "dq", weft::eval(weft::cast<float>(g.dq))});
    results.push_back({prefix + "dk", weft::eval(weft::cast<float>(g.dk))});
    results.push_back({prefix + "dv", weft::eval(weft::cast<float>(g.dv))});
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUTS.safetensors RESULTS.safetensors (bench/sdpa_accuracy.py runs it)\n", argv[0]);
    return 2;
  }
  const weft::io::SafeTensors in(argv[1]);
  std::vector<weft::io::NamedTensor> results;
  for (const auto& entry : in.metadata()) {
    const std::string& id = entry.first;  // not a structured binding: clang 16 cannot capture one under OpenMP
    std::istringstream opts(entry.second);
    long long B, Hq, H, L, S, E, Ev;
    std::string kind, dtype = "fp32";
    double scale;
    int gqa;
    opts >> B >> Hq >> H >> L >> S >> E >> Ev >> kind >> scale >> gqa >> dtype;
    auto get = [&](const char* name) { return weft::Tensor<float>(in.get<float>(id + "." + name)); };
    nn::SdpaOptions o;
    o.enable_gqa = gqa != 0;
    if (scale != 0) o.scale = scale;
    if (kind == "upper_left" || kind == "lower_right") {
      o.is_causal = true;
      if (kind == "lower_right") o.causal_variant = nn::CausalVariant::lower_right;
    } else if (kind == "bool") {
      o.attn_mask = weft::Tensor<bool>(in.get<bool>(id + ".mask"));
    }
    // A float mask in the run's dtype (the attention call reads it as a view: kept alive here).
    weft::Tensor<float> mask;
    weft::Tensor<weft::bfloat16> mask_bf16;
    if (dtype == "bf16") {
      if (kind == "float") o.attn_mask = mask_bf16 = weft::eval(weft::cast<weft::bfloat16>(get("mask")));
      run<weft::bfloat16>(id, get("q"), get("k"), get("v"), get("dout"), o, results);
    } else {
      if (kind == "float") o.attn_mask = mask = get("mask");
      run<float>(id, get("q"), get("k"), get("v"), get("dout"), o, results);
    }
  }
  weft::io::save_safetensors(argv[2], results);
  return 0;
}
