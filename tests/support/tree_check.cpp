// SPDX-License-Identifier: MIT
/// @file TreeRun's parts that do not depend on a tree's type (tree_check.hpp), compiled once per
/// build for every dtype.
#define WEFT_TEST_SUPPORT_DEFINITIONS
#include "tree_check.hpp"

#include <algorithm>

namespace weft_test {

namespace {
/// Different expected values an output needs for the at-least-a-quarter-decided check.
constexpr std::size_t kVariedValues = 8;
}  // namespace

TreeRun::TreeRun(const char* name, std::uint64_t salt, bool large) : name_(name), rng_(named_rng(name, int(salt))) {
  out_ = random_shape(rng_, 0, 4, large ? 40000 : 2500);
  if (large && out_.numel() < 16384 * 2) out_ = Shape{std::int64_t(rng_.integer(2 * 16384 + 1, 40000))};
}

template <class T>
TensorView<T> TreeRun::input() {
  // No exact zeros in float inputs: a zero expanded over the whole output (x0 = 0 broadcast
  // from one element) can make every element an exact tie, e.g. cast<int32>(1 / (|x0| + 0.5)),
  // which the check must skip, failing its at-least-a-quarter-decided bound. The per-op suites
  // cover zeros.
  Domain d = std::is_same_v<T, bool> ? Domain{} : std::is_integral_v<T> ? Domain{-5, 5} : Domain{-2, 2, false, true};
  Shape s = shapes_.empty() && rng_.chance(0.5) ? out_ : broadcastable_to(rng_, out_);
  TensorView<T> t = make_view<T>(rng_, s, d, random_layout(rng_, false));
  shapes_.push_back(t.shape());
  readers_.push_back([t](const Shape& full) { return broadcast_values(t, full); });
  desc_ += shape_str(t.shape()) + (t.is_contiguous() ? " " : " (strided) ");
  return t;
}

void TreeRun::expect(TreeRef ref) {
  Shape full;
  REQUIRE(broadcast_shapes(shapes_, full));
  dst_ = full;
  if (rng_.chance(0.2) && full.rank() < 4) {  // copy_ rule: a destination larger than the expression
    std::vector<std::int64_t> d = dims_of(full);
    d.insert(d.begin(), rng_.integer(2, 3));
    dst_ = Shape(d);
  }
  std::vector<std::vector<double>> vals;
  for (auto& read : readers_) vals.push_back(read(dst_));
  want_.assign(std::size_t(dst_.numel()), Expect{});
  std::vector<double> x(vals.size());
  std::vector<double> seen;  // the first kVariedValues different expected values
  for (std::size_t i = 0; i < want_.size(); ++i) {
    for (std::size_t k = 0; k < vals.size(); ++k) x[k] = vals[k][i];
    want_[i] = ref(x.data());
    if (seen.size() < kVariedValues && std::find(seen.begin(), seen.end(), want_[i].want) == seen.end())
      seen.push_back(want_[i].want);
  }
  distinct_values_ = seen.size();
}

template <class Out>
TensorView<Out> TreeRun::destination(int slot) {
  Layout l = random_layout(rng_, true);
  layouts_[slot] = layout_name(l);
  return make_destination<Out>(rng_, dst_, l);
}

template <class Out>
void TreeRun::verify(const weft::TensorBase<Out>& y, int slot, const char* what) {
  INFO("tree: ", name_, "; replay with WEFT_TEST_SEED=", seed());
  INFO("inputs: ", desc_);
  INFO(std::string(what), ": destination ", shape_str(dst_), " (", std::string(layouts_[slot]), ")");
  Report r = check_output(y, want_);
  WEFT_CHECK_REPORT(r);
  note_error_ratio(name_.c_str(), r);
  // Undecidable elements (a comparison, sign or cast to integer / bool whose operand is within
  // its error bound of the boundary, e.g. cast<int32> of a computed value that is exactly an
  // integer) are skipped; at least a quarter of every output must be checked. Not when the
  // expected output takes fewer than kVariedValues different values: then one tie can cover
  // the whole output, e.g. cast<int64>(clamp(exp(x1), 1, ...)) with x1 a single element below 0
  // (every element exactly 1, replay WEFT_TEST_SEED=10549371253081067113, tree 244).
  if (distinct_values_ >= kVariedValues) CHECK(r.skipped <= 3 * dst_.numel() / 4 + 2);
}

WEFT_TEST_FOR_EACH_DTYPE(WEFT_TEST_TREE_TEMPLATES, )

}  // namespace weft_test
