// SPDX-License-Identifier: MIT
/// @file Distributed benchmark: weft::dist's all_reduce beside raw MPI on the same buffers, with the same-run copy roofline.
///
///   mpirun --allow-run-as-root --oversubscribe -np N bench/dist_bench [--rounds R] [--min-bytes B] [--max-bytes B]
///          [--threads T] [--no-gpt2] [--quick] [--settle-ms N] [--json FILE]
///
/// Parts:
///   1. all_reduce (sum) of one float32 Tensor over message sizes --min-bytes .. --max-bytes (4 KiB ..
///      256 MiB) in powers of 4: weft::dist::all_reduce beside MPI_Allreduce(MPI_IN_PLACE) on the same
///      buffer, and beside a memcpy of the same bytes on every rank at once (the roofline: an in-place
///      all_reduce reads and writes its buffer at least once). Bandwidths as nccl-tests defines them:
///      algbw = bytes / time, busbw = algbw * 2 (n - 1) / n (the bytes each rank's link carries in a
///      ring all_reduce, per second: comparable across rank counts).
///   2. The gradients of GPT-2 124M: 148 float32 tensors of GPT-2 small's parameter shapes (vocabulary
///      padded to 50304), 124.5M elements, 498 MB, each tensor an allocation of its own as a model's
///      gradients are. (a) weft's list all_reduce (buckets of BucketOptions' default 25 MiB: the 50
///      weight matrices travel from their own memory, the 98 biases and norm weights are packed into
///      one bucket); (b) one MPI_Allreduce over one buffer of the same size (the bound); (c) each
///      tensor in turn, by MPI_Allreduce and by weft's single-tensor all_reduce (what a naive loop
///      does; (a) must not be slower than MPI's); (d) weft's list all_reduce over views of one flat
///      buffer (the same buckets as (a)). Sum and avg; raw MPI's avg is its sum and one scaling pass
///      over the buffer.
///   3. Latency of small messages (4 B, 64 B, 4 KiB): weft vs raw MPI_Allreduce, beside one blocking
///      MPI_Allgather of weft's agreement header (48 bytes per rank): weft agrees on the operation (op,
///      dtype, shapes, a status flag) with one such exchange (an MPI_Iallgather, polled) before every
///      payload, so that is its expected extra cost; and the same exchange as weft makes it
///      (MPI_Iallgather, then MPI_Test until done), without weft's watch for departed ranks.
///
/// Method (as bench/pointwise): every variant runs once per round, in turn, the order reversed every
/// other round; a sample is the slowest rank's time, with every rank started together (a barrier),
/// over `iters` back-to-back calls for small messages (the time per call); medians over rounds are
/// reported, and a ratio is the median over rounds of (reference time / weft time) within the round.
/// Every variant's result is checked before it is timed: integer-valued inputs, different on every
/// rank, whose sums are exact in float32. The timed calls then reduce their own outputs again: the
/// values grow by n per call up to +-inf, which costs the same to add (no subnormals arise).
/// Each rank runs one thread (--threads: weft's kernels and the copy); only rank 0 prints.

#include "weft/dist.hpp"

#include "bench_common.hpp"

namespace {

using namespace weft_bench;
using weft::Tensor;
using weft::TensorList;
using weft::dist::ReduceOp;

// ------------------------------------------------------------------ options

struct Settings {
  int rounds = 0;  // 0: 11 (3 with --quick)
  int threads = 1;
  std::int64_t min_bytes = 4 << 10, max_bytes = std::int64_t(256) << 20;
  bool gpt2 = true, quick = false;
  std::string json, device = "cpu";
};

void usage(const char* argv0) {
  std::printf(
      "usage: mpirun -np N %s [--rounds R] [--min-bytes B] [--max-bytes B] [--threads T] [--no-gpt2]\n"
      "                [--quick] [--settle-ms N] [--json FILE] [--device cpu]\n"
      "  --rounds R      timed rounds per variant (default 11; GPT-2 list: R / 2 + 1); --reps R too\n"
      "  --min-bytes B   smallest all_reduce message (default 4096; K, M, G suffixes)\n"
      "  --max-bytes B   largest all_reduce message (default 256M); sizes go up in powers of 4\n"
      "  --threads T     threads per rank for weft's kernels and the copy (default 1)\n"
      "  --no-gpt2       skip the GPT-2 gradient list (1 GB per rank)\n"
      "  --quick         3 rounds, messages up to 16M (a smoke run)\n"
      "  --settle-ms N   idle pause before each sample (default: 0 with 1 thread, 10 otherwise)\n"
      "  --json FILE     also write the results as JSON (rank 0)\n"
      "  --device cpu    the tensors' device (CPU tensors over MPI; cuda is not benchmarked)\n"
      "On a shared machine: chrt -f 1 mpirun ... keeps other processes off the ranks' cores.\n",
      argv0);
}

/// "4096", "4K", "16M", "1G" -> bytes; -1 when it is not a size.
std::int64_t parse_bytes(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || v <= 0) return -1;
  const std::string unit = end;
  const double scale = unit.empty() ? 1 : unit == "K" || unit == "k" ? 1 << 10 : unit == "M" || unit == "m" ? 1 << 20
                                                                             : unit == "G" || unit == "g" ? 1 << 30 : 0;
  return scale == 0 ? -1 : std::int64_t(v * scale);
}

/// Parses argv into s; returns false (after printing why, on rank 0) on a bad argument.
bool parse_settings(int argc, char** argv, Settings& s, bool speak) {
  int settle = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    auto bytes = [&](std::int64_t& out) {
      const std::string v = value();
      out = parse_bytes(v);
      if (out < 4 && speak) std::fprintf(stderr, "%s needs a size of at least 4 bytes, got '%s'\n", a.c_str(), v.c_str());
      return out >= 4;
    };
    bool ok = true;
    if (a == "--rounds" || a == "--reps") ok = (s.rounds = std::atoi(value().c_str())) > 0;
    else if (a == "--threads") ok = (s.threads = std::atoi(value().c_str())) > 0;
    else if (a == "--settle-ms") ok = (settle = std::atoi(value().c_str())) >= 0;
    else if (a == "--min-bytes") ok = bytes(s.min_bytes);
    else if (a == "--max-bytes") ok = bytes(s.max_bytes);
    else if (a == "--json") ok = !(s.json = value()).empty();
    else if (a == "--device") ok = (s.device = value()) == "cpu" || s.device == "cuda";
    else if (a == "--no-gpt2") s.gpt2 = false;
    else if (a == "--quick") s.quick = true;
    else if (a == "--help" || a == "-h") {
      if (speak) usage(argv[0]);
      return false;
    } else {
      if (speak) std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      ok = false;
    }
    if (!ok) {
      if (speak) usage(argv[0]);
      return false;
    }
  }
  if (s.quick) s.max_bytes = std::min<std::int64_t>(s.max_bytes, 16 << 20);
  if (s.rounds == 0) s.rounds = s.quick ? 3 : 11;
  g_settle_ms = settle >= 0 ? settle : s.threads > 1 ? 10 : 0;
  return true;
}

// ------------------------------------------------------------------ timing

struct World {
  int rank, size;
  weft::dist::Group group;
  bool root() const { return rank == 0; }
  double bus_factor() const { return size > 1 ? 2.0 * (size - 1) / size : 1.0; }
};

/// One sample (ms per call): every rank starts together, runs f `iters` times; the slowest rank's time.
template <class F>
double sample_ms(int iters, F&& f) {
  if (g_settle_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(g_settle_ms));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) f();
  double ms = (MPI_Wtime() - t0) * 1e3 / iters, slowest = 0;
  MPI_Allreduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

/// A timed variant: `op` is one call; `iters` calls make a sample.
Variant variant(std::string name, int iters, std::function<void()> op) {
  return Variant(std::move(name), [iters, op = std::move(op)] { return sample_ms(iters, op); });
}

/// `warmup` rounds, then `rounds` rounds in which every variant gives one sample, in turn; every other
/// round runs them in reverse order, so that no variant always follows the same one.
void measure_rounds(const std::vector<Variant*>& variants, int warmup, int rounds) {
  for (int r = 0; r < warmup + rounds; ++r)
    for (std::size_t k = 0; k < variants.size(); ++k) {
      Variant* v = variants[r % 2 ? variants.size() - 1 - k : k];
      const double ms = v->run();
      if (r >= warmup) v->ms.push_back(ms);
    }
}

// ------------------------------------------------------------------ checks

/// Element i's input on rank r: an integer in [-8, 8], so every sum over ranks is exact in float32.
float check_value(int r, std::int64_t i) {
  return float(std::int64_t((std::uint64_t(i) * 2654435761u + std::uint64_t(r) * 40503u) % 17) - 8);
}

/// Spans of floats that one variant reduces, in the order of the element numbering.
using Spans = std::vector<std::pair<float*, std::int64_t>>;

void fill_check(const Spans& spans, int rank) {
  std::int64_t i0 = 0;
  for (const auto& [p, n] : spans) {
    for (std::int64_t i = 0; i < n; ++i) p[i] = check_value(rank, i0 + i);
    i0 += n;
  }
}

/// How many elements differ from the sum (avg: the mean) over ranks of check_value; the count over all ranks.
std::int64_t count_wrong(const Spans& spans, const World& w, ReduceOp op) {
  std::int64_t wrong = 0, i0 = 0;
  for (const auto& [p, n] : spans) {
    for (std::int64_t i = 0; i < n; ++i) {
      double sum = 0;
      for (int r = 0; r < w.size; ++r) sum += check_value(r, i0 + i);
      const double want = op == ReduceOp::avg ? sum / w.size : sum;
      // avg: sum * (1 / n) and sum / n may differ by one rounding.
      wrong += std::fabs(double(p[i]) - want) > (op == ReduceOp::avg ? 1e-6 * std::fabs(want) : 0.0);
    }
    i0 += n;
  }
  std::int64_t total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

/// Fills, runs op once, checks; records a failure in the report (and prints it on rank 0).
bool check(const World& w, Report& report, const std::string& what, const Spans& spans, ReduceOp op,
           const std::function<void()>& run) {
  fill_check(spans, w.rank);
  run();
  const std::int64_t wrong = count_wrong(spans, w, op);
  if (wrong == 0) return true;
  if (w.root()) std::printf("  CHECK FAILED: %s: %lld wrong elements\n", what.c_str(), (long long)wrong);
  report.notes.push_back("check failed: " + what);
  return false;
}

void raw_all_reduce(float* p, std::int64_t n) {
  MPI_Allreduce(MPI_IN_PLACE, p, int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

std::string size_name(std::int64_t bytes) {
  char buf[32];
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) std::snprintf(buf, sizeof buf, "%lld MiB", (long long)(bytes >> 20));
  else if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) std::snprintf(buf, sizeof buf, "%lld KiB", (long long)(bytes >> 10));
  else std::snprintf(buf, sizeof buf, "%lld B", (long long)bytes);
  return buf;
}

/// Back-to-back calls per sample: enough for ~32 MiB of messages (a sample of a few ms), 1..1000.
int iters_for(std::int64_t bytes) { return int(std::clamp<std::int64_t>((32 << 20) / bytes, 1, 1000)); }

// ------------------------------------------------------------------ part 1

struct SweepRow {
  std::int64_t bytes;
  int iters;
  double copy_ms, raw_ms, weft_ms, ratio;
};

std::vector<SweepRow> sweep(const World& w, const Settings& s, Report& report) {
  std::vector<SweepRow> rows;
  if (w.root())
    std::printf("\n1. all_reduce (sum) of one float32 tensor; busbw = bytes / time * 2 (n - 1) / n (nccl-tests)\n"
                "%10s %6s %12s %10s %10s %10s %10s %10s\n%s\n",
                "bytes", "iters", "memcpy GB/s", "raw us", "raw busbw", "weft us", "weft busbw", "weft/raw",
                std::string(84, '-').c_str());
  for (std::int64_t bytes = s.min_bytes; bytes <= s.max_bytes; bytes *= 4) {
    const std::int64_t n = bytes / std::int64_t(sizeof(float));
    Tensor<float> x = make_tensor<float>({n}, 1000 + w.rank);
    Tensor<float> copy_dst = make_tensor<float>({n}, 2000 + w.rank);
    const Spans spans{{x.data(), n}};
    const std::string name = "all_reduce " + size_name(bytes);
    check(w, report, name + ": MPI_Allreduce", spans, ReduceOp::sum, [&] { raw_all_reduce(x.data(), n); });
    check(w, report, name + ": weft", spans, ReduceOp::sum, [&] { weft::dist::all_reduce(x, w.group); });

    const int iters = iters_for(bytes);
    Variant copy = variant("memcpy", iters, [&] {
      parallel_copy(copy_dst.data(), x.data(), n, CopyKind::memcpy_chunks);
    });
    Variant raw = variant("MPI_Allreduce", iters, [&] { raw_all_reduce(x.data(), n); });
    Variant mine = variant("weft all_reduce", iters, [&] { weft::dist::all_reduce(x, w.group); });
    measure_rounds({&copy, &raw, &mine}, 2, s.rounds);

    const Target t = make_target(name + ": weft / raw MPI", 0.9, "x", raw.ms, mine.ms);
    rows.push_back({bytes, iters, copy.med(), raw.med(), mine.med(), t.value});
    if (bytes >= (1 << 20)) report.targets.push_back(t);
    for (const Variant* v : {&copy, &raw, &mine})
      report.rows.push_back({name, v->name, n, sizeof(float), v->med(), v->min()});
    if (w.root()) {
      const double gb = double(bytes) / 1e9;
      std::printf("%10s %6d %12.2f %10.1f %10.2f %10.1f %10.2f %9.2fx\n", size_name(bytes).c_str(), iters,
                  gb / (copy.med() * 1e-3), raw.med() * 1e3, gb / (raw.med() * 1e-3) * w.bus_factor(),
                  mine.med() * 1e3, gb / (mine.med() * 1e-3) * w.bus_factor(), t.value);
      std::fflush(stdout);
    }
  }
  if (w.root())
    std::printf("memcpy GB/s: bytes / time of one memcpy of the message on every rank at once; weft/raw: median\n"
                "over rounds of raw time / weft time\n");
  return rows;
}

// ------------------------------------------------------------------ part 2

/// GPT-2 small's parameter shapes in the model's order (nanoGPT, llm.c): wte, wpe, 12 blocks of
/// (ln_1 w, b; c_attn w, b; attn c_proj w, b; ln_2 w, b; c_fc w, b; mlp c_proj w, b), ln_f w, b.
std::vector<weft::Shape> gpt2_shapes() {
  const std::int64_t V = 50304, T = 1024, C = 768, layers = 12;
  std::vector<weft::Shape> shapes{{V, C}, {T, C}};
  for (std::int64_t l = 0; l < layers; ++l)
    for (weft::Shape s : std::initializer_list<weft::Shape>{
             {C}, {C}, {3 * C, C}, {3 * C}, {C, C}, {C}, {C}, {C}, {4 * C, C}, {4 * C}, {C, 4 * C}, {C}})
      shapes.push_back(s);
  shapes.push_back({C});
  shapes.push_back({C});
  return shapes;
}

struct ListResult {
  std::vector<double> bucketed, bound, loop, avg_bucketed, avg_bound;
};

ListResult gradient_list(const World& w, const Settings& s, Report& report) {
  const std::vector<weft::Shape> shapes = gpt2_shapes();
  std::vector<Tensor<float>> tensors;
  for (std::size_t k = 0; k < shapes.size(); ++k) tensors.push_back(make_tensor<float>(shapes[k], 3000 + k));
  const TensorList<float> separate(tensors);
  const std::int64_t total = separate.numel();
  Tensor<float> flat = make_tensor<float>({total}, 4000 + w.rank);
  TensorList<float> views;
  for (std::int64_t k = 0, offset = 0; k < std::int64_t(shapes.size()); offset += shapes[k].numel(), ++k)
    views.push_back(flat.narrow(0, offset, shapes[k].numel()).view(shapes[k]));
  Spans separate_spans;
  for (Tensor<float>& t : tensors) separate_spans.push_back({t.data(), t.numel()});
  const Spans flat_spans{{flat.data(), total}};
  const float inv_n = 1.0f / float(w.size);

  const weft::dist::BucketOptions buckets;
  const std::int64_t piece = buckets.bucket_bytes / std::int64_t(sizeof(float));
  Tensor<float> copy_dst = make_tensor<float>({total}, 4001 + w.rank);

  // A variant, the spans it reduces and its op (for the check), and the bound it is compared with.
  struct Case {
    Variant v;
    const Spans* spans;
    ReduceOp op;
    std::function<void()> run;
    int bound = -1;  // the case it is compared with (a bound: itself); -1: none (the copy)
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, const Spans* spans, ReduceOp op, int bound, std::function<void()> run) {
    cases.push_back({variant(std::move(name), 1, run), spans, op, run, bound});
    return int(cases.size()) - 1;
  };
  add("memcpy of the list (one pack)", nullptr, ReduceOp::sum, -1,
      [&] { parallel_copy(copy_dst.data(), flat.data(), total, CopyKind::memcpy_chunks); });
  const int sum_bound = add("(b) MPI, one flat buffer (bound)", &flat_spans, ReduceOp::sum, int(cases.size()),
                            [&] { raw_all_reduce(flat.data(), total); });
  const int bucketed = add("(a) weft list, 25 MiB buckets", &separate_spans, ReduceOp::sum, sum_bound,
                           [&] { weft::dist::all_reduce(separate, w.group); });
  add("(d) weft list, views of flat", &flat_spans, ReduceOp::sum, sum_bound,
      [&] { weft::dist::all_reduce(views, w.group); });
  add("(b') MPI, flat in 25 MiB pieces", &flat_spans, ReduceOp::sum, sum_bound, [&] {
    for (std::int64_t at = 0; at < total; at += piece) raw_all_reduce(flat.data() + at, std::min(piece, total - at));
  });
  const int loop = add("(c) MPI, tensor by tensor", &separate_spans, ReduceOp::sum, sum_bound, [&] {
    for (Tensor<float>& t : tensors) raw_all_reduce(t.data(), t.numel());
  });
  add("(c) weft, tensor by tensor", &separate_spans, ReduceOp::sum, sum_bound, [&] {
    for (Tensor<float>& t : tensors) weft::dist::all_reduce(t, w.group);
  });
  const int avg_bound = add("avg (b) MPI flat, then scale", &flat_spans, ReduceOp::avg, int(cases.size()), [&] {
    raw_all_reduce(flat.data(), total);
    flat *= inv_n;
  });
  const int avg_bucketed = add("avg (a) weft list, buckets", &separate_spans, ReduceOp::avg, avg_bound,
                               [&] { weft::dist::all_reduce(separate, w.group, ReduceOp::avg); });
  add("avg (d) weft list, views of flat", &flat_spans, ReduceOp::avg, avg_bound,
      [&] { weft::dist::all_reduce(views, w.group, ReduceOp::avg); });

  const std::string workload = "GPT-2 124M gradients, " + std::to_string(shapes.size()) + " tensors";
  if (w.root())
    std::printf("\n2. %s, %lld float32 elements (%.0f MB)\n", workload.c_str(), (long long)total, total * 4e-6);
  for (Case& c : cases)
    if (c.spans) check(w, report, workload + ": " + c.v.name, *c.spans, c.op, c.run);
  std::vector<Variant*> all;
  for (Case& c : cases) all.push_back(&c.v);
  measure_rounds(all, 1, s.rounds / 2 + 1);

  if (w.root())
    std::printf("%-34s %10s %10s %10s %10s %10s\n%s\n", "variant", "median ms", "min ms", "algbw GB/s", "busbw GB/s",
                "vs bound", std::string(89, '-').c_str());
  for (Case& c : cases) {
    report.rows.push_back({workload, c.v.name, total, sizeof(float), c.v.med(), c.v.min()});
    if (!w.root()) continue;
    const double algbw = total * 4e-9 / (c.v.med() * 1e-3);
    std::printf("%-34s %10.1f %10.1f %10.2f", c.v.name.c_str(), c.v.med(), c.v.min(), algbw);
    if (c.bound >= 0)
      std::printf(" %10.2f %9.2fx", algbw * w.bus_factor(), make_target("", 0, "x", cases[c.bound].v.ms, c.v.ms).value);
    std::printf("\n");
  }
  if (w.root())
    std::printf("vs bound: median over rounds of bound time / variant time ((b) for sum, avg (b) for avg);\n"
                "memcpy: algbw column = bytes / time of one copy of the list's bytes on every rank at once\n");
  return {cases[bucketed].v.ms, cases[sum_bound].v.ms, cases[loop].v.ms, cases[avg_bucketed].v.ms,
          cases[avg_bound].v.ms};
}

// ------------------------------------------------------------------ part 3

void latency(const World& w, const Settings& s, Report& report) {
  // What weft exchanges before every payload (its agreement header).
  constexpr int kHeaderBytes = int(sizeof(weft::dist::detail::Header));
  const std::string gather_name = "allgather " + std::to_string(kHeaderBytes) + " B";
  if (w.root())
    std::printf("\n3. small-message latency (us per call, %d calls per sample)\n%10s %10s %10s %10s %15s %15s\n%s\n",
                2000, "bytes", "raw us", "weft us", "weft - raw", gather_name.c_str(), ("i" + gather_name).c_str(),
                std::string(75, '-').c_str());
  std::vector<char> header(kHeaderBytes), headers(std::size_t(kHeaderBytes) * w.size);
  for (std::int64_t bytes : {std::int64_t(4), std::int64_t(64), std::int64_t(4096)}) {
    const std::int64_t n = bytes / std::int64_t(sizeof(float));
    Tensor<float> x = make_tensor<float>({n}, 5000 + w.rank);
    const std::string name = "latency " + size_name(bytes);
    check(w, report, name + ": weft", {{x.data(), n}}, ReduceOp::sum, [&] { weft::dist::all_reduce(x, w.group); });
    Variant raw = variant("MPI_Allreduce", 2000, [&] { raw_all_reduce(x.data(), n); });
    Variant mine = variant("weft all_reduce", 2000, [&] { weft::dist::all_reduce(x, w.group); });
    Variant gather = variant("MPI_Allgather " + std::to_string(kHeaderBytes) + " B", 2000, [&] {
      MPI_Allgather(header.data(), kHeaderBytes, MPI_BYTE, headers.data(), kHeaderBytes, MPI_BYTE, MPI_COMM_WORLD);
    });
    Variant polled = variant("MPI_Iallgather " + std::to_string(kHeaderBytes) + " B + MPI_Test", 2000, [&] {
      MPI_Request request;
      MPI_Iallgather(header.data(), kHeaderBytes, MPI_BYTE, headers.data(), kHeaderBytes, MPI_BYTE, MPI_COMM_WORLD,
                     &request);
      for (int done = 0; !done;) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    });
    measure_rounds({&raw, &mine, &gather, &polled}, 1, s.rounds);
    for (const Variant* v : {&raw, &mine, &gather, &polled})
      report.rows.push_back({name, v->name, n, sizeof(float), v->med(), v->min()});
    if (w.root())
      std::printf("%10s %10.2f %10.2f %10.2f %15.2f %15.2f\n", size_name(bytes).c_str(), raw.med() * 1e3,
                  mine.med() * 1e3, (mine.med() - raw.med()) * 1e3, gather.med() * 1e3, polled.med() * 1e3);
  }
}

// ------------------------------------------------------------------ main

int run(int argc, char** argv) {
  weft::dist::Runtime runtime(argc, argv);
  World w{0, 1, weft::dist::world()};
  w.rank = w.group.rank();
  w.size = w.group.size();
  Settings s;
  if (!parse_settings(argc, argv, s, w.root())) return 2;
  if (s.device == "cuda") {
    if (w.root()) std::printf("dist_bench: times CPU tensors over MPI; NCCL (--device cuda) is not benchmarked\n");
    return 0;
  }
  if (w.size < 2) {  // one rank reduces nothing: MPI returns at once, and there is nothing to compare
    std::printf("dist_bench: needs at least 2 ranks: mpirun --allow-run-as-root --oversubscribe -np 2 %s\n", argv[0]);
    return 0;
  }
  weft::set_num_threads(s.threads);
#if defined(_OPENMP)
  omp_set_num_threads(s.threads);
#endif

  Report report;
  if (w.root()) {
    print_cpu_machine("dist", s.threads, "per rank: weft's kernels and the copy", report);
    std::printf("  ranks: %d (MPI, one host); rounds: %d (GPT-2 list: %d), 2 warm-up (1); settle %d ms\n", w.size,
                s.rounds, s.rounds / 2 + 1, g_settle_ms);
    std::printf("  a sample: the slowest rank's time; medians over rounds; every result checked first\n");
  }
  sweep(w, s, report);
  if (s.gpt2) {
    const ListResult l = gradient_list(w, s, report);
    report.targets.push_back(make_target("GPT-2 list sum: bucketed / one MPI_Allreduce", 0.9, "x", l.bound, l.bucketed));
    report.targets.push_back(make_target("GPT-2 list sum: bucketed / MPI tensor by tensor", 1.0, "x", l.loop, l.bucketed));
    report.targets.push_back(
        make_target("GPT-2 list avg: bucketed / MPI + scale", 0.9, "x", l.avg_bound, l.avg_bucketed));
  }
  latency(w, s, report);
  if (!w.root()) return 0;
  print_targets(report.targets);
  if (std::any_of(report.notes.begin(), report.notes.end(),
                  [](const std::string& note) { return note.rfind("check failed", 0) == 0; }))
    std::printf("SOME RESULTS WERE WRONG (see CHECK FAILED above)\n");
  if (s.json.empty()) return 0;
  Options opt;
  opt.json = s.json;
  opt.quick = s.quick;
  return write_json_if_asked(opt, "dist", "cpu", s.threads, s.rounds, weft::kCpuPacketIsa, report);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    // Another rank may wait in a raw MPI call that weft's runtime cannot interrupt: end the job.
    std::fprintf(stderr, "dist: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
