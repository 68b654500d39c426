// SPDX-License-Identifier: MIT
/// @file What bounds the bfloat16 attention forward on AMX tiles (one thread): the cost of a
/// TDPBF16PS alone (the roofline), inside the flash kernels' 2 x 2 register blocks by k depth, with
/// buffers on cache lines and 16 bytes off them (std::vector's alignment), and whether a strip's
/// q k^T on the tiles overlaps the weight pass on the vector units.
///
/// The forward's block products are tile_gemm calls (backend/cpu/gemm/amx_tiles.hpp), its weight pass
/// amx::online_softmax_row (backend/cpu/attention/flash_amx.hpp); this program times those very
/// functions on L1-resident buffers, at the shapes of one 32-row strip against a 256-key chunk.
///
///   chrt -f 1 build/release/bench/amx_tiles [--reps N]
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

#include "bench_common.hpp"

#if WEFT_FLASH_AMX

namespace {

using namespace weft::detail::cpu::flash;
namespace tiles = weft::detail::cpu::amx;
namespace cpu = weft::detail::cpu;

double elapsed_ms(const std::chrono::steady_clock::time_point& t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// `blocks` x 4 TDPBF16PS on 4 independent accumulators from resident A and B tiles: the
/// instruction's own rate, no loads or stores.
void products_alone(int blocks) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int i = 0; i < blocks; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace weft_bench;
  Options opt;
  if (!parse(argc, argv, opt, "cpu")) return 2;
  if (opt.device != "cpu") {
    std::fprintf(stderr, "amx_tiles measures the CPU's matrix tiles; --device %s has none\n", opt.device.c_str());
    return 2;
  }
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 3 : 11;
  if (!flash_amx_available()) {
    std::puts("amx_tiles: Linux does not grant this process AMX tile data; nothing to measure");
    return 0;
  }
  const cpu::GemmAmxKernel::Thread tiles;
  constexpr std::int64_t kRows = 32, kKeys = 256, kE = 128, kSteps = kE / 32;
  constexpr int kCalls = 2000;  // strips (or blocks) per timed run
  // Every buffer starts on a cache line, with kOff spare elements, so that the same data can be
  // read on lines and 16 bytes off them.
  constexpr std::int64_t kOff = 32;
  cpu::LineVector<std::uint16_t> q(kRows * kE + kOff), kt(kKeys * kE + kOff), p(kRows * kKeys), zeros(16 * 32);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = weft::bfloat16(hashed(1, i, -1, 1)).bits;
  for (std::size_t i = 0; i < kt.size(); ++i) kt[i] = weft::bfloat16(hashed(2, i, -1, 1)).bits;
  cpu::LineVector<float> scores(2 * kRows * kKeys + kOff), o(kRows * kE), m(kRows), l16(kRows * 16);
  std::printf("amx_tiles: %s, one thread, %d rounds (medians)\n", cpu_model().c_str(), reps);

  // 1. The roofline, and one 2 x 2 block (C 32 x 32 = A 32 x 32 steps times B) by depth, as
  // tile_gemm runs q k^T (steps = E / 32) and p v (steps = keys / 32), its operands in L1: what a
  // block costs beyond its products (its tile loads, the stores of C, the wait for the last
  // product before them).
  Variant alone("TDPBF16PS alone", [&] {
    _tile_loadd(4, zeros.data(), 64);
    _tile_loadd(5, zeros.data(), 64);
    _tile_loadd(6, zeros.data(), 64);
    _tile_loadd(7, zeros.data(), 64);
    const auto t0 = std::chrono::steady_clock::now();
    products_alone(kCalls * 16);
    return elapsed_ms(t0);
  });
  std::vector<Variant> depth;
  const std::int64_t depths[] = {1, 2, 4, 8, 16};
  cpu::LineVector<std::uint16_t> deep_a(kRows * 16 * 32), deep_b(32 * 16 * 32);
  for (std::int64_t steps : depths)
    depth.emplace_back("a 2 x 2 block, " + std::to_string(steps) + " k steps", [&, steps] {
      const tiles::PackedB b{deep_b.data(), steps * tiles::kTile, tiles::kTile};
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kCalls * 4; ++i)
        tiles::tile_gemm(kRows, 32, steps, deep_a.data(), steps * 32, b, scores.data(), kKeys, false);
      return elapsed_ms(t0);
    });
  std::vector<Variant*> first{&alone};
  for (Variant& v : depth) first.push_back(&v);
  measure(first, 1, reps);
  const double alone_ns = alone.med() * 1e6 / (kCalls * 64.0);
  std::printf("\n%-34s %9s %12s\n", "products", "ns/TDP", "x alone");
  std::printf("%-34s %9.2f %12.2f\n", alone.name.c_str(), alone_ns, 1.0);
  for (std::size_t d = 0; d < depth.size(); ++d) {
    const double tdps = double(kCalls * 4) * 4 * depths[d];
    const double ns = depth[d].med() * 1e6 / tdps;
    std::printf("%-34s %9.2f %12.2f\n", depth[d].name.c_str(), ns, ns / alone_ns);
  }

  // 2. One strip at E = 128: q k^T on the tiles, the weight pass on the vector units, one after
  // the other as the kernel runs them, and interleaved at the grain of one 2 x 2 block per 4 rows
  // (out-of-order execution could then overlap the two if the units ran independently).
  // off: elements past the line (8 bf16 / 4 floats = 16 bytes, as std::vector's blocks).
  auto score_block = [&](std::int64_t j, float* into, int off = 0) {
    const tiles::PackedB keys{kt.data() + 8 * off, kSteps * tiles::kTile, tiles::kTile};
    tiles::tile_gemm(kRows, 32, kSteps, q.data() + 8 * off, kE, keys.from_column(j), into + 4 * off + j, kKeys, false);
  };
  auto weigh_rows = [&](const float* from, std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      m[r] = -1e30f;  // the same path every call: the max moves, o is rescaled
      amx::online_softmax_row(kKeys, from + r * kKeys, false, 0.125f, m[r], l16.data() + r * 16, o.data() + r * kE, kE,
                              p.data() + r * kKeys);
    }
  };
  for (std::size_t i = 0; i < scores.size(); ++i) scores[i] = hashed(3, i, -4, 4);
  float* const next = scores.data();                // the strip q k^T writes
  float* const current = next + kRows * kKeys + kOff;  // the strip the weight pass reads
  Variant products("q k^T (8 blocks of 4 steps)", [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i)
      for (std::int64_t j = 0; j < kKeys; j += 32) score_block(j, next);
    return elapsed_ms(t0);
  });
  Variant products_off("q k^T, buffers 16 bytes off a line", [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i)
      for (std::int64_t j = 0; j < kKeys; j += 32) score_block(j, next, 1);
    return elapsed_ms(t0);
  });
  Variant weights("weight pass (32 rows of 256)", [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) weigh_rows(current, 0, kRows);
    return elapsed_ms(t0);
  });
  Variant sequential("one after the other", [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) {
      for (std::int64_t j = 0; j < kKeys; j += 32) score_block(j, next);
      weigh_rows(current, 0, kRows);
    }
    return elapsed_ms(t0);
  });
  Variant interleaved("interleaved (a block per 4 rows)", [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i)
      for (std::int64_t j = 0; j < kKeys; j += 32) {
        score_block(j, next);
        weigh_rows(current, j / 8, j / 8 + 4);
      }
    return elapsed_ms(t0);
  });
  measure({&products, &products_off, &weights, &sequential, &interleaved}, 1, reps);
  std::printf("\n%-36s %9s %9s\n", "one strip (32 x 256, E = 128)", "ns", "ns/TDP");
  for (const Variant* v : {&products, &products_off, &weights, &sequential, &interleaved}) {
    const double ns = v->med() * 1e6 / kCalls;
    if (v == &products || v == &products_off) std::printf("%-36s %9.0f %9.2f\n", v->name.c_str(), ns, ns / (2 * 16 * kSteps));
    else std::printf("%-36s %9.0f\n", v->name.c_str(), ns);
  }
  std::printf("overlap: the sum of the parts is %.0f ns; a perfect overlap would take %.0f\n",
              (products.med() + weights.med()) * 1e6 / kCalls,
              std::max(products.med(), weights.med()) * 1e6 / kCalls);

  Report report;  // elements: TDPBF16PS (products) or strips
  report.rows.push_back({"amx products", alone.name, std::int64_t(kCalls) * 64, 0, alone.med(), alone.min()});
  for (std::size_t d = 0; d < depth.size(); ++d)
    report.rows.push_back({"amx products", depth[d].name, std::int64_t(kCalls) * 16 * depths[d], 0, depth[d].med(),
                           depth[d].min()});
  for (const Variant* v : {&products, &products_off, &weights, &sequential, &interleaved})
    report.rows.push_back({"amx strip E=128", v->name, kCalls, 0, v->med(), v->min()});
  report.notes.push_back("elements: TDPBF16PS instructions (amx products) or 32 x 256 strips (amx strip)");
  return write_json_if_asked(opt, "amx_tiles", "cpu", 1, reps, weft::kCpuPacketIsa, report);
}

#else

int main() {
  std::puts("amx_tiles: built without AMX-BF16 and AVX512-BF16 (build with -march=native on a CPU that has them)");
  return 0;
}

#endif
