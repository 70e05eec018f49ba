// ResourcePool (core/resource_pool.h), what GPU studies keep their streams and cuBLAS handles in:
// an object given back is handed out again instead of a new one, objects leased at the same
// time are distinct, and a lease may outlive its pool.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/resource_pool.h"

using omkl::detail::ResourcePool;

namespace {

struct Counted {
  explicit Counted(int* live) : live(live) { ++*live; }
  ~Counted() { --*live; }
  int* live;
};

}  // namespace

TEST(ResourcePoolTest, GivenBackObjectsAreReused) {
  int live = 0;
  ResourcePool<Counted> pool([&] { return std::make_unique<Counted>(&live); });
  const Counted* first = nullptr;
  {
    auto lease = pool.acquire();
    first = lease.get();
    EXPECT_EQ(pool.created(), 1u);
    EXPECT_EQ(pool.idle(), 0u);
  }
  EXPECT_EQ(pool.idle(), 1u);
  for (int k = 0; k < 3; ++k) {
    auto lease = pool.acquire();
    EXPECT_EQ(lease.get(), first);  // the same object, not a new one
  }
  EXPECT_EQ(pool.created(), 1u);
  EXPECT_EQ(live, 1);
}

TEST(ResourcePoolTest, ConcurrentLeasesAreDistinct) {
  int live = 0;
  ResourcePool<Counted> pool([&] { return std::make_unique<Counted>(&live); });
  {
    auto a = pool.acquire();
    auto b = pool.acquire();
    EXPECT_NE(a.get(), b.get());
    EXPECT_EQ(pool.created(), 2u);
    auto moved = std::move(a);  // a moved lease gives the object back once
    EXPECT_FALSE(a);
    EXPECT_TRUE(moved);
  }
  EXPECT_EQ(pool.idle(), 2u);
  EXPECT_EQ(live, 2);
}

TEST(ResourcePoolTest, ThreadsShareThePool) {
  std::atomic<int> made{0};
  ResourcePool<int> pool([&] {
    ++made;
    return std::make_unique<int>(0);
  });
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto lease = pool.acquire();
        ++*lease;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(pool.created(), 4u);  // never more than were leased at once
  EXPECT_EQ(pool.created(), static_cast<std::size_t>(made.load()));
  EXPECT_EQ(pool.idle(), pool.created());
}

TEST(ResourcePoolTest, ALeaseMayOutliveItsPool) {
  int live = 0;
  ResourcePool<Counted>::Lease kept;
  {
    ResourcePool<Counted> pool([&] { return std::make_unique<Counted>(&live); });
    kept = pool.acquire();
    auto other = pool.acquire();
  }
  EXPECT_EQ(live, 2);  // the idle one lives in the pool's shared state until the last lease ends
  kept = ResourcePool<Counted>::Lease();
  EXPECT_EQ(live, 0);
  auto alone = ResourcePool<Counted>::Lease::own(std::make_unique<Counted>(&live));
  EXPECT_EQ(live, 1);
  alone = ResourcePool<Counted>::Lease();
  EXPECT_EQ(live, 0);
}
