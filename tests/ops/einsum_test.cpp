// SPDX-License-Identifier: MIT
/// @file cpu: einsum of two operands against a naive double loop over every label value, for random valid specs (batch, contracted, free and summed letters, diagonals, broadcast size-1 letters, ellipses, implicit outputs) over non-contiguous operands and several dtypes; what the log says it ran; every error.
#include <map>
#include <set>

#include <weft/ops/einsum.hpp>

#include "error_check.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

/// A random two-operand problem: its spec, each operand's shape, and every label's extent.
struct Problem {
  std::string spec, terms[2], output;
  bool implicit = false;
  Shape shapes[2];
  // label -> extent per operand (1 where it broadcasts); labels: letters, or '0' + t for ellipsis dim t
  std::map<char, std::int64_t> extent[2];
  std::vector<char> labels[2];  // per dim of each operand
  std::vector<char> out_labels;
};

Problem random_problem(Rng& rng) {
  const std::string pool = "abcdefgzABZ";
  std::map<char, std::int64_t> size;
  for (char c : pool) size[c] = rng.integer(1, 4);
  Problem p;
  const bool ellipsis = rng.chance(0.3);
  int ellipsis_dims[2] = {0, 0};
  std::int64_t ellipsis_size[2] = {rng.integer(1, 3), rng.integer(1, 3)};
  const int letters_in_pool = int(rng.integer(1, 5));
  for (int k = 0; k < 2; ++k) {
    const int n = int(rng.integer(0, 4));
    std::vector<char> letters;
    for (int i = 0; i < n; ++i) letters.push_back(pool[std::size_t(rng.integer(0, letters_in_pool - 1))]);
    const int at = int(rng.integer(0, n));
    ellipsis_dims[k] = ellipsis ? int(rng.integer(0, 2)) : 0;
    for (int i = 0; i <= n; ++i) {
      if (i == at && ellipsis) {
        p.terms[k] += "...";
        for (int t = 0; t < ellipsis_dims[k]; ++t) p.labels[k].push_back(char('0' + (2 - ellipsis_dims[k]) + t));
      }
      if (i < n) {
        p.terms[k] += letters[std::size_t(i)];
        p.labels[k].push_back(letters[std::size_t(i)]);
      }
    }
  }
  // extents: a letter's size, 1 in one operand now and then (it broadcasts there)
  for (int k = 0; k < 2; ++k)
    for (char c : p.labels[k]) {
      if (p.extent[k].count(c)) continue;
      const bool digit = c >= '0' && c <= '9';
      const std::int64_t full = digit ? ellipsis_size[c - '0'] : size[c];
      p.extent[k][c] = rng.chance(0.15) ? 1 : full;
    }
  for (int k = 0; k < 2; ++k) {
    std::vector<std::int64_t> dims;
    for (char c : p.labels[k]) dims.push_back(p.extent[k][c]);
    p.shapes[k] = Shape(dims);
  }
  // output: implicit (ellipsis dims, then the letters that occur once, sorted) or explicit
  std::set<char> letters;
  std::map<char, int> count;
  for (int k = 0; k < 2; ++k)
    for (char c : p.labels[k])
      if (!(c >= '0' && c <= '9')) letters.insert(c), ++count[c];
  const int total_ellipsis = std::max(ellipsis_dims[0], ellipsis_dims[1]);
  p.implicit = rng.chance(0.3);
  if (p.implicit) {
    for (int t = 0; t < total_ellipsis; ++t) p.out_labels.push_back(char('0' + 2 - total_ellipsis + t));
    for (char c : letters)  // std::set sorts by ASCII: A-Z before a-z
      if (count[c] == 1) p.out_labels.push_back(c);
    p.spec = p.terms[0] + "," + p.terms[1];
  } else {
    std::vector<char> chosen;
    for (char c : letters)
      if (rng.chance(0.5)) chosen.push_back(c);
    std::shuffle(chosen.begin(), chosen.end(), rng.gen);
    const bool keep_ellipsis = ellipsis && rng.chance(0.8);
    const int at = int(rng.integer(0, int(chosen.size())));
    for (int i = 0; i <= int(chosen.size()); ++i) {
      if (i == at && keep_ellipsis) {
        p.output += "...";
        for (int t = 0; t < total_ellipsis; ++t) p.out_labels.push_back(char('0' + 2 - total_ellipsis + t));
      }
      if (i < int(chosen.size())) p.output += chosen[std::size_t(i)], p.out_labels.push_back(chosen[std::size_t(i)]);
    }
    p.spec = p.terms[0] + "," + p.terms[1] + "->" + p.output;
  }
  return p;
}

/// The naive reference: for every value of every label, out[output labels] += a[a's labels] *
/// b[b's labels] (a label of extent 1 in an operand reads index 0 there), in double, with the sum
/// of the products' magnitudes for the error bound.
struct Reference {
  Shape shape;
  std::vector<double> sum, magnitude;
  std::int64_t terms = 1;  // products per output element
};

template <class T>
Reference reference(const Problem& p, const TensorView<T>& a, const TensorView<T>& b) {
  std::vector<char> all;
  std::map<char, std::int64_t> size;
  for (int k = 0; k < 2; ++k)
    for (char c : p.labels[k]) {
      if (!size.count(c)) all.push_back(c);
      size[c] = std::max(size[c], p.extent[k].at(c));
    }
  Reference r;
  std::vector<std::int64_t> out_dims;
  for (char c : p.out_labels) out_dims.push_back(size[c]);
  r.shape = Shape(out_dims);
  r.sum.assign(std::size_t(r.shape.numel()), 0.0);
  r.magnitude.assign(std::size_t(r.shape.numel()), 0.0);
  std::vector<std::int64_t> all_dims;
  for (char c : all) {
    all_dims.push_back(size[c]);
    if (std::find(p.out_labels.begin(), p.out_labels.end(), c) == p.out_labels.end()) r.terms *= size[c];
  }
  for_each_index(Shape(all_dims), [&](const std::vector<std::int64_t>& v) {
    std::map<char, std::int64_t> value;
    for (std::size_t i = 0; i < all.size(); ++i) value[all[i]] = v[i];
    auto index = [&](int k) {
      std::vector<std::int64_t> idx;
      for (char c : p.labels[k]) idx.push_back(p.extent[k].at(c) == 1 ? 0 : value[c]);
      return idx;
    };
    std::int64_t linear = 0;
    for (char c : p.out_labels) linear = linear * size[c] + value[c];
    const double product = value_at(a, index(0)) * value_at(b, index(1));
    r.sum[std::size_t(linear)] += product;
    r.magnitude[std::size_t(linear)] += std::fabs(product);
  });
  return r;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("einsum: random two-operand specs against a naive loop", T, float, double, bfloat16, std::int32_t,
                   std::int64_t) {
  WEFT_TEST_RNG(rng);
  int checked = 0;
  for (int iter = 0; iter < 150; ++iter) {
    const Problem p = random_problem(rng);
    const TensorView<T> a = make_view<T>(rng, p.shapes[0], Domain{-3, 3}, random_layout(rng, false));
    const TensorView<T> b = make_view<T>(rng, p.shapes[1], Domain{-3, 3}, random_layout(rng, false));
    INFO("dtype ", type_name<T>(), ", spec '", p.spec, "', shapes ", shape_str(p.shapes[0]), " and ",
         shape_str(p.shapes[1]));
    const Reference want = reference(p, a, b);
    const Tensor<T> out = weft::einsum(p.spec, a, b);
    REQUIRE(out.shape() == want.shape);
    // Each output is a sum of `terms` products of T's values (exact in double): a sum in T (or in
    // float for bfloat16, rounded up to three times: a letter summed out of each operand first,
    // then the product) errs by at most (terms + 2) units of T's rounding times the sum of the
    // magnitudes, plus one unit of T per rounding ('...ece,d...->c...' sums e out of a and d out
    // of b before the product: three bfloat16 roundings).
    const double unit = eps_of<T>() / 2, compute = compute_eps<T>() / 2;
    std::size_t i = 0;
    WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>&) {
      const double tol = (3 * unit + double(want.terms + 2) * compute) * want.magnitude[i];
      return Expect{want.sum[i++], tol};
    }));
    ++checked;
  }
  CHECK(checked == 150);
}

TEST_CASE("einsum: the usual specs, views kept, copies where the output order needs one, the log") {
  WEFT_TEST_RNG(rng);
  const TensorView<double> a = make_view<double>(rng, Shape{4, 3, 5}, Domain{}, Layout::permuted_strided);
  const TensorView<double> b = make_view<double>(rng, Shape{4, 5, 6}, Domain{}, Layout::contiguous);
  const Tensor<double> ab = weft::einsum("bij,bjk->bik", a, b);
  const Tensor<double> mm = weft::matmul(a, b);
  CHECK(ab.to_vector() == mm.to_vector());  // the same GEMM: bit for bit
  std::string text;
  {
    LogCapture log;
    weft::set_logs("fusion");
    const Tensor<double> t = weft::einsum("bij,bjk->kbi", a, b);
    weft::set_logs("");
    text = log.text();
    WEFT_CHECK_REPORT(check_output(t, [&](const std::vector<std::int64_t>& idx) {
      return Expect{value_at(mm, {idx[1], idx[2], idx[0]})};
    }));
  }
  CHECK(has(text, "einsum 'bij,bjk->kbi': matmul [4, 3, 5] x [4, 5, 6]"));
  CHECK(has(text, "the result copied into the output order"));
  LogCapture log;
  weft::set_logs("fusion");
  // b goes left (transposed views of both): no copy, no reorder; then a batch of b's free letters
  // whose strides do not merge: b copied first.
  const Tensor<double> swapped = weft::einsum("ij,jk->ki", a.select(0, 1), b.select(0, 2));
  const Tensor<double> merged = weft::einsum("ij,bjk->bki", a.select(0, 1), b);
  weft::set_logs("");
  text = log.text();
  CHECK(has(text, "einsum 'ij,jk->ki': matmul [6, 5] x [5, 3] (batch '', rows 'k', contracted 'j', columns 'i')\n"));
  CHECK(has(text, "einsum 'ij,bjk->bki': matmul [24, 5] x [5, 3] (batch '', rows 'bk', contracted 'j', columns "
                  "'i'), operand(s) copied to merge dims: left\n"));
  // The transposed product of another GEMM: sums of 5 products of values in [-4, 4], each within
  // (5 + 2) half-ulps of double of the sum of the magnitudes (at most 5 * 16).
  const Tensor<double> ij_jk = weft::matmul(a.select(0, 1), b.select(0, 2));
  WEFT_CHECK_REPORT(check_output(swapped, [&](const std::vector<std::int64_t>& idx) {
    return Expect{value_at(ij_jk, {idx[1], idx[0]}), (5 + 2) * 0x1p-53 * 5 * 16};
  }));
  CHECK(merged.shape() == Shape{4, 6, 3});
}

TEST_CASE("einsum: errors name the spec, the operand, the letter and the sizes") {
  const Tensor<float> a = weft::ones<float>(Shape{2, 3}), b = weft::ones<float>(Shape{4, 5});
  std::string m = error_of([&] { weft::einsum("ij->ij", a, b); });
  CHECK(has(m, "einsum: spec 'ij->ij' needs exactly two operand terms"));
  m = error_of([&] { weft::einsum("ij,jk,kl->il", a, b); });
  CHECK(has(m, "needs exactly two operand terms"));
  m = error_of([&] { weft::einsum("i2,jk", a, b); });
  CHECK(has(m, "einsum: spec 'i2,jk' has '2' at position 1"));
  m = error_of([&] { weft::einsum("i..j,jk", a, b); });
  CHECK(has(m, "has '.' at position 1"));
  m = error_of([&] { weft::einsum("ij,jk->ik->i", a, b); });
  CHECK(has(m, "more than one '->'"));
  m = error_of([&] { weft::einsum("ijk,jk", a, b); });
  CHECK(has(m, "einsum: operand 0 has shape [2, 3] of rank 2 but its subscripts in 'ijk,jk' name 3 dims"));
  m = error_of([&] { weft::einsum("ij,jk", a, b); });
  CHECK(has(m, "einsum: letter 'j' has size 3 in operand 0 (shape [2, 3]) but 4 in operand 1 (shape [4, 5])"));
  m = error_of([&] { weft::einsum("ij,kl->iq", a, b); });
  CHECK(has(m, "the output of 'ij,kl->iq' names letter 'q', which no operand has"));
  m = error_of([&] { weft::einsum("ij,kl->ii", a, b); });
  CHECK(has(m, "names letter 'i' twice"));
  m = error_of([&] { weft::einsum("ii,kl", a, b); });
  CHECK(has(m, "einsum: letter 'i' repeats in operand 0 of shape [2, 3] (spec 'ii,kl') with sizes 2 and 3"));
  m = error_of([&] { weft::einsum("...i...,kl", a, b); });
  CHECK(has(m, "a second ellipsis in one term"));
}

}  // TEST_SUITE
