// SPDX-License-Identifier: MIT
/// @file core: the host buffer pool. Small buffers allocated one after another lie back to back,
/// 64-byte aligned, hold their bytes while other buffers come and go (also from several threads),
/// and a slab whose chunks all came back is returned to the system. The cache of large buffers:
/// a freed one comes back for the next request of its size, within the limit, and empties.
#include <algorithm>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "reference.hpp"
#include "weft/core/host_memory.hpp"

using weft::detail::HostPool;
using weft::detail::kHostAlignment;

namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

/// Fills a buffer with bytes derived from its owner's tag, and checks them.
void stamp(void* p, std::size_t bytes, std::uint32_t tag) {
  auto* b = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < bytes; ++i) b[i] = static_cast<unsigned char>((tag * 131u + i * 7u) ^ (tag >> 8));
}
bool stamped(const void* p, std::size_t bytes, std::uint32_t tag) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < bytes; ++i)
    if (b[i] != static_cast<unsigned char>((tag * 131u + i * 7u) ^ (tag >> 8))) return false;
  return true;
}

/// Chunks handed out by the shared pool, over every size class.
std::size_t pooled_chunks() {
  std::size_t n = 0;
  for (std::size_t bytes = kHostAlignment; bytes <= weft::detail::kPoolMaxBytes; bytes += kHostAlignment)
    n += HostPool::instance().state(bytes).chunks;
  return n;
}

}  // namespace

TEST_SUITE("core") {
  TEST_CASE("host pool: consecutive small buffers lie back to back in 64-byte aligned chunks") {
    for (std::size_t bytes : {1, 63, 64, 65, 400, 1000, 2048}) {
      CAPTURE(bytes);
      HostPool pool;
      const std::size_t chunk = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
      const std::size_t per_slab = pool.state(bytes).chunks_per_slab;
      std::vector<void*> p;
      for (std::size_t i = 0; i < per_slab + 3; ++i) p.push_back(pool.allocate(bytes));
      for (void* q : p) CHECK(address(q) % kHostAlignment == 0);
      // one slab's worth back to back, then a second slab
      for (std::size_t i = 1; i < per_slab; ++i) CHECK(address(p[i]) - address(p[i - 1]) == chunk);
      CHECK(pool.state(bytes).slabs == 2);
      CHECK(pool.state(bytes).chunks == per_slab + 3);
      for (void* q : p) pool.release(q);
      CHECK(pool.state(bytes).chunks == 0);
      CHECK(pool.state(bytes).slabs == 1);  // one empty slab is kept
    }
  }

  TEST_CASE("host pool: a chunk given back is handed out again, and no live buffer is overwritten") {
    HostPool pool;
    std::mt19937 rng(7);
    struct Live {
      void* p;
      std::size_t bytes;
      std::uint32_t tag;
    };
    std::vector<Live> live;
    std::uint32_t tag = 0;
    for (int step = 0; step < 20000; ++step) {
      if (!live.empty() && rng() % 5 < 2) {  // free a random live buffer after checking its bytes
        const std::size_t k = rng() % live.size();
        REQUIRE(stamped(live[k].p, live[k].bytes, live[k].tag));
        pool.release(live[k].p);
        live[k] = live.back();
        live.pop_back();
      } else {
        const std::size_t bytes = 1 + rng() % 2048;
        void* p = pool.allocate(bytes);
        REQUIRE(p);
        REQUIRE(address(p) % kHostAlignment == 0);
        stamp(p, bytes, ++tag);
        live.push_back({p, bytes, tag});
      }
    }
    for (const Live& l : live) CHECK(stamped(l.p, l.bytes, l.tag));
    // the most recently freed chunk of a class comes back first
    void* a = pool.allocate(100);
    pool.release(a);
    CHECK(pool.allocate(100) == a);
    pool.release(a);
    for (const Live& l : live) pool.release(l.p);
    for (std::size_t bytes = kHostAlignment; bytes <= weft::detail::kPoolMaxBytes; bytes += kHostAlignment) {
      CHECK(pool.state(bytes).chunks == 0);
      CHECK(pool.state(bytes).slabs <= 1);
    }
  }

  TEST_CASE("host pool: threads allocating and freeing at once keep every buffer intact") {
    HostPool pool;
    constexpr int kThreads = 4;
    std::vector<int> bad(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&pool, &bad, t] {
        std::mt19937 rng(100 + t);
        std::vector<std::pair<void*, std::uint32_t>> mine;
        for (std::uint32_t i = 0; i < 20000; ++i) {
          if (!mine.empty() && rng() % 2) {
            const auto [p, tag] = mine.back();
            bad[t] += !stamped(p, 320, tag);
            pool.release(p);
            mine.pop_back();
          } else {
            void* p = pool.allocate(320);  // one size class for all threads: they share slabs
            const std::uint32_t tag = std::uint32_t(t) << 24 | i;
            stamp(p, 320, tag);
            mine.emplace_back(p, tag);
          }
        }
        for (const auto& [p, tag] : mine) {
          bad[t] += !stamped(p, 320, tag);
          pool.release(p);
        }
      });
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) CHECK(bad[t] == 0);
    CHECK(pool.state(320).chunks == 0);
    CHECK(pool.state(320).slabs == 1);
  }

  TEST_CASE("host tensors: small ones come from the pool where the build has it, large ones do not") {
    using weft::detail::kHostPoolEnabled;
    const HostPool::ClassState before = HostPool::instance().state(400);
    {
      std::vector<weft::Tensor<float>> small;
      for (int i = 0; i < 50; ++i) small.push_back(weft::zeros<float>(weft::Shape{100}));
      CHECK(HostPool::instance().state(400).chunks == before.chunks + (kHostPoolEnabled ? 50 : 0));
      if (kHostPoolEnabled) {  // allocated one after another: mostly 448 bytes apart
        int adjacent = 0;
        for (int i = 1; i < 50; ++i) adjacent += address(small[i].data()) - address(small[i - 1].data()) == 448;
        CHECK(adjacent >= 40);
      }
      for (const auto& t : small) CHECK(address(t.data()) % kHostAlignment == 0);
      const std::size_t pooled = pooled_chunks();
      const weft::Tensor<float> large = weft::zeros<float>(weft::Shape{1000});  // 4000 bytes: malloc
      CHECK(address(large.data()) % kHostAlignment == 0);
      CHECK(pooled_chunks() == pooled);
    }
    CHECK(HostPool::instance().state(400).chunks == before.chunks);
  }

  TEST_CASE("host cache: a freed large buffer serves the next request of its rounded size, within the limit") {
    using weft::detail::kHostPoolEnabled;
    const std::size_t limit = weft::host_cache_limit();
    weft::empty_host_cache();
    CHECK(weft::host_cache_bytes() == 0);
    const weft::Shape shape{300000};  // 1.2 MB: above kHostCacheMinBytes
    const std::size_t rounded = weft::detail::host_cache_rounded(300000 * sizeof(float));
    const void* first;
    {
      weft::Tensor<float> t = weft::full<float>(shape, 3.0f);
      first = t.data();
      CHECK(address(first) % kHostAlignment == 0);
    }
    CHECK(weft::host_cache_bytes() == (kHostPoolEnabled ? rounded : 0));
    {
      // a request rounding to the same size takes the kept buffer; its old bytes are
      // overwritten like any fresh buffer's
      weft::Tensor<float> t = weft::full<float>(weft::Shape{299990}, -1.0f);
      if (kHostPoolEnabled) CHECK(t.data() == first);
      CHECK(weft::host_cache_bytes() == 0);
      CHECK(weft_test::values_of(t) == std::vector<double>(299990, -1.0));
      // another size does not
      const weft::Tensor<float> other = weft::zeros<float>(weft::Shape{600000});
      CHECK(other.data() != first);
    }
    CHECK(weft::host_cache_bytes() == (kHostPoolEnabled ? rounded + weft::detail::host_cache_rounded(2400000) : 0));
    // a limit below what is kept frees the excess now, and freed buffers beyond it are not kept
    weft::set_host_cache_limit(rounded);
    CHECK(weft::host_cache_bytes() <= rounded);
    weft::set_host_cache_limit(0);
    CHECK(weft::host_cache_bytes() == 0);
    { const weft::Tensor<float> t = weft::zeros<float>(shape); }
    CHECK(weft::host_cache_bytes() == 0);
    weft::set_host_cache_limit(limit);
    { const weft::Tensor<float> t = weft::zeros<float>(shape); }
    CHECK(weft::host_cache_bytes() == (kHostPoolEnabled ? rounded : 0));
    weft::empty_host_cache();
    CHECK(weft::host_cache_bytes() == 0);
  }

  TEST_CASE("host cache: of several kept buffers of one size, a request takes the one kept last") {
    using weft::detail::kHostPoolEnabled;
    if (!kHostPoolEnabled) return;  // nothing is kept (AddressSanitizer)
    weft::empty_host_cache();
    const void *at_a, *at_b, *at_c;
    {
      const weft::Tensor<float> ta = weft::zeros<float>(weft::Shape{300000});
      const weft::Tensor<float> tb = weft::zeros<float>(weft::Shape{300000});
      const weft::Tensor<float> tc = weft::zeros<float>(weft::Shape{300000});
      at_a = ta.data(), at_b = tb.data(), at_c = tc.data();
    }  // kept in the order c, b, a
    // a loop that frees its buffer and asks again gets the same one back each time
    for (int i = 0; i < 3; ++i) {
      const weft::Tensor<float> t = weft::zeros<float>(weft::Shape{300000});
      CHECK(t.data() == at_a);
    }
    {
      const weft::Tensor<float> t1 = weft::zeros<float>(weft::Shape{300000});
      const weft::Tensor<float> t2 = weft::zeros<float>(weft::Shape{300000});
      const weft::Tensor<float> t3 = weft::zeros<float>(weft::Shape{300000});
      CHECK(t1.data() == at_a);
      CHECK(t2.data() == at_b);
      CHECK(t3.data() == at_c);
    }
    weft::empty_host_cache();
  }

  TEST_CASE("host cache: a freed buffer that would pass the limit makes room by freeing the longest kept") {
    using weft::detail::kHostPoolEnabled;
    if (!kHostPoolEnabled) return;  // nothing is kept (AddressSanitizer)
    const std::size_t limit = weft::host_cache_limit();
    weft::empty_host_cache();
    const std::size_t a = weft::detail::host_cache_rounded(300000 * sizeof(float));
    const std::size_t b = weft::detail::host_cache_rounded(400000 * sizeof(float));
    const std::size_t c = weft::detail::host_cache_rounded(500000 * sizeof(float));
    weft::set_host_cache_limit(b + c);
    const void *at_a, *at_b;
    {
      const weft::Tensor<float> ta = weft::zeros<float>(weft::Shape{300000});
      const weft::Tensor<float> tb = weft::zeros<float>(weft::Shape{400000});
      const weft::Tensor<float> tc = weft::zeros<float>(weft::Shape{500000});
      at_a = ta.data(), at_b = tb.data();
      CHECK(tc.data() != nullptr);
    }  // freed c, b, a: a passes the limit, so c (kept longest) goes
    CHECK(weft::host_cache_bytes() == a + b);
    {
      const weft::Tensor<float> tb = weft::zeros<float>(weft::Shape{400000});
      const weft::Tensor<float> ta = weft::zeros<float>(weft::Shape{300000});
      CHECK(tb.data() == at_b);
      CHECK(ta.data() == at_a);
      CHECK(weft::host_cache_bytes() == 0);
    }
    // a buffer larger than the limit alone is not kept, and frees nothing
    weft::empty_host_cache();
    weft::set_host_cache_limit(a);
    { const weft::Tensor<float> ta = weft::zeros<float>(weft::Shape{300000}); }
    { const weft::Tensor<float> tb = weft::zeros<float>(weft::Shape{400000}); }
    CHECK(weft::host_cache_bytes() == a);
    weft::set_host_cache_limit(limit);
    weft::empty_host_cache();
  }
}  // TEST_SUITE
