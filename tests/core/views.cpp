// SPDX-License-Identifier: MIT
/// @file core: Tensor views (slice with step, narrow, select, transpose, permute, unsqueeze,
/// squeeze, expand, view/reshape) against an independent model: a row-major array of doubles that
/// each view op rebuilds element by element. Random chains of views, plus the error cases.
#include "reference.hpp"

using namespace weft_test;

namespace {

/// The model: shape + row-major values. Every op materializes a new array.
struct Nd {
  std::vector<std::int64_t> shape;
  std::vector<double> v;

  Shape s() const { return Shape(shape); }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }
  std::int64_t linear(const std::vector<std::int64_t>& idx) const {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + idx[d];
    return off;
  }
  // out[idx] = this[src(idx)] over out_shape
  template <class F>
  Nd remap(std::vector<std::int64_t> out_shape, F src) const {
    Nd out{std::move(out_shape), {}};
    for_each_index(out.s(), [&](const std::vector<std::int64_t>& idx) { out.v.push_back(v[std::size_t(linear(src(idx)))]); });
    return out;
  }
  static int wrap(std::int64_t d, int rank) { return int(d < 0 ? d + std::max(rank, 1) : d); }

  Nd slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) const {
    int d = wrap(dim, int(shape.size()));
    std::int64_t n = shape[std::size_t(d)];
    auto clampi = [n](std::int64_t i) { return std::min(std::max(i < 0 ? i + n : i, std::int64_t(0)), n); };
    start = clampi(start);
    end = std::max(clampi(end), start);
    auto os = shape;
    os[std::size_t(d)] = (end - start + step - 1) / step;
    return remap(os, [&](std::vector<std::int64_t> idx) {
      idx[std::size_t(d)] = start + idx[std::size_t(d)] * step;
      return idx;
    });
  }
  Nd select(std::int64_t dim, std::int64_t i) const {
    int d = wrap(dim, int(shape.size()));
    if (i < 0) i += shape[std::size_t(d)];
    auto os = shape;
    os.erase(os.begin() + d);
    return remap(os, [&](std::vector<std::int64_t> idx) {
      idx.insert(idx.begin() + d, i);
      return idx;
    });
  }
  Nd permute(const std::vector<std::int64_t>& p) const {
    std::vector<std::int64_t> os;
    for (auto q : p) os.push_back(shape[std::size_t(q)]);
    return remap(os, [&](const std::vector<std::int64_t>& idx) {
      std::vector<std::int64_t> src(idx.size());
      for (std::size_t i = 0; i < p.size(); ++i) src[std::size_t(p[i])] = idx[i];
      return src;
    });
  }
  Nd transpose(std::int64_t a, std::int64_t b) const {
    std::vector<std::int64_t> p(shape.size());
    std::iota(p.begin(), p.end(), 0);
    std::swap(p[std::size_t(wrap(a, int(shape.size())))], p[std::size_t(wrap(b, int(shape.size())))]);
    return permute(p);
  }
  Nd unsqueeze(std::int64_t dim) const {
    int d = wrap(dim, int(shape.size()) + 1);
    auto os = shape;
    os.insert(os.begin() + d, 1);
    return Nd{os, v};
  }
  Nd squeeze(std::int64_t dim) const {
    int d = wrap(dim, int(shape.size()));
    if (shape.empty() || shape[std::size_t(d)] != 1) return *this;
    auto os = shape;
    os.erase(os.begin() + d);
    return Nd{os, v};
  }
  Nd expand(const std::vector<std::int64_t>& to) const {
    std::size_t lead = to.size() - shape.size();
    return remap(to, [&](const std::vector<std::int64_t>& idx) {
      std::vector<std::int64_t> src;
      for (std::size_t d = 0; d < shape.size(); ++d) src.push_back(shape[d] == 1 ? 0 : idx[d + lead]);
      return src;
    });
  }
  Nd reshape(const std::vector<std::int64_t>& to) const { return Nd{to, v}; }
};

Nd model_of(const weft::TensorBase<double>& t) { return Nd{dims_of(t.shape()), values_of(t)}; }

/// True when t's elements sit at consecutive storage positions in row-major order.
bool laid_out_row_major(const weft::TensorBase<double>& t) {
  std::int64_t expect = t.offset();
  bool ok = true;
  for_each_index(t.shape(), [&](const std::vector<std::int64_t>& idx) { ok = ok && storage_index(t, idx) == expect++; });
  return ok;
}

/// A fresh tensor whose element i holds i (so every element is distinguishable).
Tensor<double> iota_tensor(const Shape& s) {
  std::vector<double> v(std::size_t(s.numel()));
  std::iota(v.begin(), v.end(), 0.0);
  return weft::from_vector<double>(v, s);
}

bool same_storage(const weft::TensorBase<double>& a, const weft::TensorBase<double>& b) { return a.storage() == b.storage(); }

}  // namespace

TEST_SUITE("core") {

TEST_CASE("views: each op on a known tensor") {
  Tensor<double> x = iota_tensor(Shape{4, 5, 6});
  Nd m = model_of(x);
  auto same = [](const weft::TensorBase<double>& t, const Nd& n) { return t.shape() == n.s() && values_of(t) == n.v; };

  CHECK(same(x.slice(1, 1, 5, 2), m.slice(1, 1, 5, 2)));
  CHECK(x.slice(1, 1, 5, 2).shape() == Shape{4, 2, 6});
  CHECK(same(x.slice(2, -4, 100, 3), m.slice(2, -4, 100, 3)));  // Python semantics: clamped end
  CHECK(x.slice(2, -4, 100, 3).shape() == Shape{4, 5, 2});
  CHECK(x.slice(0, 3, 1).shape() == Shape{4 - 4, 5, 6});  // end before start: empty
  CHECK(same(x.slice(-1, 0, 6, 5), m.slice(-1, 0, 6, 5)));
  CHECK(same(x.narrow(1, 2, 3), m.slice(1, 2, 5, 1)));
  CHECK(same(x.narrow(2, -2, 2), m.slice(2, 4, 6, 1)));
  CHECK(same(x.select(0, 2), m.select(0, 2)));
  CHECK(same(x.select(-1, -1), m.select(2, 5)));
  CHECK(x.select(1, 0).shape() == Shape{4, 6});
  CHECK(same(x.transpose(0, 2), m.transpose(0, 2)));
  CHECK(x.transpose(0, 2).shape() == Shape{6, 5, 4});
  CHECK(same(x.permute({2, 0, 1}), m.permute({2, 0, 1})));
  CHECK(x.permute({2, 0, 1}).shape() == Shape{6, 4, 5});
  CHECK(same(x.unsqueeze(0), m.unsqueeze(0)));
  CHECK(x.unsqueeze(0).shape() == Shape{1, 4, 5, 6});
  CHECK(x.unsqueeze(3).shape() == Shape{4, 5, 6, 1});
  CHECK(x.unsqueeze(-1).shape() == Shape{4, 5, 6, 1});
  CHECK(x.unsqueeze(1).shape() == Shape{4, 1, 5, 6});
  CHECK(x.unsqueeze(1).squeeze(1).shape() == x.shape());
  CHECK(x.squeeze(0).shape() == x.shape());  // not size 1: unchanged, like PyTorch
  Tensor<double> row = iota_tensor(Shape{1, 6});
  CHECK(same(row.expand(Shape{3, 4, 6}), model_of(row).expand({3, 4, 6})));
  CHECK(same(row.expand(Shape{2, -1, -1}), model_of(row).expand({2, 1, 6})));
  CHECK(row.expand(Shape{3, 4, 6}).strides() == Shape{0, 0, 1});
  CHECK(same(x.view(Shape{20, -1}), m.reshape({20, 6})));
  CHECK(same(x.view(Shape{-1}), m.reshape({120})));
  CHECK(same(x.reshape(Shape{2, 60}), m.reshape({2, 60})));
  CHECK(same(x.transpose(0, 1).reshape(Shape{-1, 4}), m.transpose(0, 1).reshape({30, 4})));
  // Views share storage; reshape of a non-contiguous tensor copies.
  CHECK(same_storage(x.slice(1, 1, 5, 2), x));
  CHECK(same_storage(x.permute({2, 0, 1}), x));
  CHECK(same_storage(x.view(Shape{120}), x));
  CHECK(same_storage(x.reshape(Shape{120}), x));
  CHECK(!same_storage(x.transpose(0, 1).reshape(Shape{120}), x));
  CHECK(x.transpose(0, 1).reshape(Shape{120}).is_contiguous());
  // A 0-dim tensor: select down to it, unsqueeze back up.
  TensorView<double> s = x.select(0, 1).select(0, 2).select(0, 3);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item() == 1 * 30 + 2 * 6 + 3);
  CHECK(s.unsqueeze(0).shape() == Shape{1});
  CHECK(s.expand(Shape{2, 3}).to_vector() == std::vector<double>(6, 45.0));
}

TEST_CASE("views: queries and copies") {
  Tensor<double> x = iota_tensor(Shape{3, 4});
  CHECK(x.dim() == 2);
  CHECK(x.numel() == 12);
  CHECK(x.size(0) == 3);
  CHECK(x.size(-1) == 4);
  CHECK(x.strides() == Shape{4, 1});
  CHECK(x.is_contiguous());
  CHECK(x.device() == weft::Device::cpu());
  CHECK(x.defined());
  CHECK(!Tensor<double>().defined());
  CHECK(!x.transpose(0, 1).is_contiguous());
  CHECK(!x.slice(1, 0, 4, 2).is_contiguous());
  CHECK(x.slice(0, 0, 3, 2).slice(1, 0, 4, 1).is_contiguous() == false);
  CHECK(x.select(0, 1).is_contiguous());
  CHECK(x.slice(0, 1, 2).is_contiguous());  // one row of a contiguous tensor
  CHECK(x.narrow(1, 1, 1).transpose(0, 1).is_contiguous() == false);
  CHECK(x.unsqueeze(1).is_contiguous());
  CHECK(x.data() == static_cast<double*>(x.storage()->data()));
  CHECK(x.select(0, 2).data() == x.data() + 8);
  CHECK(x.select(0, 2).offset() == 8);

  TensorView<double> t = x.transpose(0, 1);
  Tensor<double> c = t.clone();
  CHECK(c.is_contiguous());
  CHECK(!same_storage(c, x));
  CHECK(c.shape() == t.shape());
  CHECK(values_of(c) == values_of(t));
  CHECK(t.to_vector() == values_of(t));
  CHECK(x.contiguous().data() == x.data());  // already contiguous: the same handle
  CHECK(!same_storage(t.contiguous(), x));
  CHECK(values_of(t.contiguous()) == values_of(t));
  CHECK(x.to(weft::Device::cpu()).data() != x.data());  // to() always makes a new tensor
  CHECK(values_of(t.to(weft::Device::cpu())) == values_of(t));
  CHECK_THROWS_WITH_AS(x.item(), doctest::Contains("weft::item"), weft::Error);
  CHECK(x.select(0, 1).select(0, 1).item() == 5.0);
}

TEST_CASE("views: errors name the op and the shapes") {
  Tensor<double> x = iota_tensor(Shape{4, 5, 6});
  CHECK_THROWS_WITH_AS(x.slice(0, 0, 2, 0), doctest::Contains("weft::slice: step must be positive"), weft::Error);
  CHECK_THROWS_WITH_AS(x.slice(3, 0, 2), doctest::Contains("weft::slice: dim 3 is out of range"), weft::Error);
  CHECK_THROWS_WITH_AS(x.narrow(1, 3, 3), doctest::Contains("weft::narrow: range [3, 6) does not fit dim 1 of shape [4, 5, 6]"),
                       weft::Error);
  CHECK_THROWS_AS(x.narrow(1, 0, -1), weft::Error);
  CHECK_THROWS_WITH_AS(x.select(1, 5), doctest::Contains("weft::select: index 5 is out of range for dim 1 of shape [4, 5, 6]"),
                       weft::Error);
  CHECK_THROWS_AS(x.select(1, -6), weft::Error);
  CHECK_THROWS_AS(x.transpose(0, 3), weft::Error);
  CHECK_THROWS_WITH_AS(x.permute({0, 1}), doctest::Contains("weft::permute"), weft::Error);
  CHECK_THROWS_WITH_AS(x.permute({0, 1, 1}), doctest::Contains("repeats"), weft::Error);
  CHECK_THROWS_AS(x.unsqueeze(4), weft::Error);
  CHECK_THROWS_AS(x.squeeze(3), weft::Error);
  CHECK_THROWS_WITH_AS(x.expand(Shape{4, 2, 6}), doctest::Contains("weft::expand: cannot expand shape [4, 5, 6] to [4, 2, 6]"),
                       weft::Error);
  CHECK_THROWS_AS(x.expand(Shape{5, 6}), weft::Error);       // lower rank
  CHECK_THROWS_AS(x.expand(Shape{-1, 4, 5, 6}), weft::Error);  // -1 in a new leading dim
  CHECK_THROWS_AS(x.expand(Shape{2, 4, 5, -2}), weft::Error);
  CHECK_THROWS_WITH_AS(x.view(Shape{7, -1}), doctest::Contains("weft::view: shape [7, -1] is invalid for a tensor of shape [4, 5, 6]"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(x.view(Shape{-1, -1}), doctest::Contains("only one dimension can be -1"), weft::Error);
  CHECK_THROWS_AS(x.view(Shape{121}), weft::Error);
  CHECK_THROWS_AS(x.view(Shape{-3, 40}), weft::Error);
  CHECK_THROWS_WITH_AS(x.transpose(0, 1).view(Shape{120}),
                       doctest::Contains("is not contiguous; call reshape() (which copies) or contiguous() first"),
                       weft::Error);
  CHECK_THROWS_AS(x.slice(2, 0, 6, 2).view(Shape{-1}), weft::Error);
  CHECK_THROWS_AS(x.transpose(0, 1).reshape(Shape{7, -1}), weft::Error);
  Tensor<double> empty0 = iota_tensor(Shape{0, 3});
  CHECK(empty0.view(Shape{3, 0}).shape() == Shape{3, 0});
  CHECK_THROWS_AS(empty0.view(Shape{-1, 0}), weft::Error);  // -1 next to 0 is ambiguous (PyTorch refuses)
  CHECK(empty0.view(Shape{-1, 3}).shape() == Shape{0, 3});
  // Any tensor without elements is contiguous (PyTorch agrees), whatever its strides.
  Tensor<double> empty1 = iota_tensor(Shape{3, 0, 2});
  CHECK(empty1.is_contiguous());
  CHECK(empty1.view(Shape{0, 3}).shape() == Shape{0, 3});
  CHECK(empty1.transpose(0, 2).is_contiguous());
}

TEST_CASE("views: random chains of views match the model and share storage") {
  WEFT_TEST_RNG(rng);
  int steps = 0, non_contiguous = 0, contiguous_views = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Shape s0 = random_shape(rng, 1, 5, 3000, 0.0);
    Tensor<double> base = iota_tensor(s0);
    std::optional<TensorView<double>> t(base);
    Nd m = model_of(base);
    std::string trace = shape_str(s0);
    bool copied = false;  // after a copying reshape the storage differs from base's
    int len = int(rng.integer(1, 6));
    for (int step = 0; step < len; ++step) {
      const int r = t->dim();
      int op = int(rng.integer(0, 8));
      std::optional<TensorView<double>> next;
      Nd nm;
      std::string what;
      if (r == 0 && op != 6) op = 6;
      switch (op) {
        case 0: {  // slice with step
          int d = int(rng.integer(0, r - 1));
          std::int64_t n = t->shape()[d];
          std::int64_t a = rng.integer(-n - 1, n + 1), b = rng.integer(-n - 1, n + 2), k = rng.integer(1, 4);
          next.emplace(t->slice(d - (rng.chance(0.3) ? r : 0), a, b, k));
          nm = m.slice(d, a, b, k);
          what = "slice(" + std::to_string(d) + "," + std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(k) + ")";
          break;
        }
        case 1: {  // narrow
          int d = int(rng.integer(0, r - 1));
          std::int64_t n = t->shape()[d];
          std::int64_t a = rng.integer(0, n), len2 = rng.integer(0, n - a);
          next.emplace(t->narrow(d, a, len2));
          nm = m.slice(d, a, a + len2, 1);
          what = "narrow(" + std::to_string(d) + "," + std::to_string(a) + "," + std::to_string(len2) + ")";
          break;
        }
        case 2: {  // select
          int d = int(rng.integer(0, r - 1));
          std::int64_t n = t->shape()[d];
          if (n == 0) continue;
          std::int64_t i = rng.integer(-n, n - 1);
          next.emplace(t->select(d, i));
          nm = m.select(d, i);
          what = "select(" + std::to_string(d) + "," + std::to_string(i) + ")";
          break;
        }
        case 3: {  // transpose
          std::int64_t a = rng.integer(-r, r - 1), b = rng.integer(-r, r - 1);
          next.emplace(t->transpose(a, b));
          nm = m.transpose(a, b);
          what = "transpose(" + std::to_string(a) + "," + std::to_string(b) + ")";
          break;
        }
        case 4: {  // permute
          std::vector<std::int64_t> p(static_cast<std::size_t>(r));
          std::iota(p.begin(), p.end(), 0);
          std::shuffle(p.begin(), p.end(), rng.gen);
          next.emplace(t->permute(p));
          nm = m.permute(p);
          what = "permute";
          break;
        }
        case 5: {  // squeeze
          int d = int(rng.integer(0, r - 1));
          next.emplace(t->squeeze(d));
          nm = m.squeeze(d);
          what = "squeeze(" + std::to_string(d) + ")";
          break;
        }
        case 6: {  // unsqueeze
          if (r >= weft::kMaxRank - 1) continue;
          std::int64_t d = rng.integer(-r - 1, r);
          next.emplace(t->unsqueeze(d));
          nm = m.unsqueeze(d);
          what = "unsqueeze(" + std::to_string(d) + ")";
          break;
        }
        case 7: {  // expand size-1 dims and maybe a new leading dim
          if (r >= weft::kMaxRank - 1 || t->numel() > 2000) continue;
          std::vector<std::int64_t> to;
          if (rng.chance(0.4)) to.push_back(rng.integer(1, 3));
          for (int d = 0; d < r; ++d) {
            std::int64_t e = t->shape()[d];
            to.push_back(e == 1 ? rng.integer(1, 4) : (rng.chance(0.3) ? -1 : e));
          }
          std::vector<std::int64_t> resolved = to;
          for (std::size_t i = to.size() - std::size_t(r); i < to.size(); ++i)
            if (resolved[i] == -1) resolved[i] = t->shape()[int(i - (to.size() - std::size_t(r)))];
          next.emplace(t->expand(Shape(to)));
          nm = m.expand(resolved);
          what = "expand";
          break;
        }
        default: {  // reshape / view with one -1
          std::int64_t n = t->numel();
          if (n == 0) continue;
          std::vector<std::int64_t> to;
          std::int64_t rest = n;
          int parts = int(rng.integer(1, 4));
          for (int i = 0; i < parts - 1; ++i) {
            std::vector<std::int64_t> divs;
            for (std::int64_t k = 1; k <= rest; ++k)
              if (rest % k == 0) divs.push_back(k);
            std::int64_t k = rng.pick(divs);
            to.push_back(k);
            rest /= k;
          }
          to.push_back(rest);
          std::vector<std::int64_t> spec = to;
          spec[std::size_t(rng.integer(0, std::int64_t(spec.size()) - 1))] = -1;
          bool contiguous = t->is_contiguous();
          if (contiguous && rng.chance(0.5)) {
            next.emplace(t->view(Shape(spec)));
            what = "view";
          } else {
            next.emplace(t->reshape(Shape(spec)));
            what = "reshape";
            copied |= !contiguous;
          }
          if (!contiguous) CHECK_THROWS_AS(t->view(Shape(spec)), weft::Error);
          nm = m.reshape(to);
          break;
        }
      }
      trace += " -> " + what;
      INFO(trace);
      REQUIRE(next->shape() == nm.s());
      CHECK(values_of(*next) == nm.v);
      CHECK(next->to_vector() == nm.v);
      // is_contiguous() must agree with the actual layout (elements consecutive in row-major order).
      if (next->numel() > 0) {
        bool row_major = laid_out_row_major(*next);
        CHECK(next->is_contiguous() == row_major);
        non_contiguous += !row_major;
        contiguous_views += row_major;
      }
      if (!copied) CHECK(next->storage() == base.storage());
      t.emplace(*next);
      m = nm;
      ++steps;
    }
  }
  CHECK(steps > 500);
  CHECK(non_contiguous > 50);
  CHECK(contiguous_views > 50);
}

TEST_CASE("views: writing through a view writes the base") {
  Tensor<double> x = iota_tensor(Shape{3, 4});
  x.select(0, 1) = 100.0;                     // a row
  x.slice(1, 0, 4, 3) = -1.0;                 // columns 0 and 3
  x.transpose(0, 1).select(0, 2) += 1000.0;   // column 2 through a transposed view
  std::vector<double> want = {-1, 1, 1002, -1, -1, 100, 1100, -1, -1, 9, 1010, -1};
  CHECK(values_of(x) == want);
}

}  // TEST_SUITE
