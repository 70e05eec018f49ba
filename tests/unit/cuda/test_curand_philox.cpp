/// The device draws' block source without a device: cuRAND's Philox-4x32-10, compiled for the
/// host through kernels/curand_philox.cuh (the adapter the CUDA kernel uses), against the
/// host's Philox and the host's draws. Built wherever the CUDA toolkit is (CI included), so the
/// counter and key word order is checked before any GPU runs the kernel; what is left to a GPU
/// (CudaTest.DeviceDrawsEqualTheHostDraws) is the device's arithmetic and the launch.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/recipe_grid.h"
#include "random/rng.h"
#include "kernels/curand_philox.cuh"

using namespace omkl;
using namespace omkl::detail;
using omkl::cuda::CurandBlocks;
using omkl::cuda::CurandPhilox;
using omkl::test::draw_by_recipe;
using omkl::test::HostPhilox;

namespace {

bool same(const PhiloxWords& a, const PhiloxWords& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }

}  // namespace

TEST(CurandPhiloxTest, KnownAnswerVectors) {
  // Random123's kat_vectors for Philox-4x32-10 (as test_rng.cpp checks the host's).
  const PhiloxWords zero = CurandPhilox()(0, 0, 0, 0, 0, 0);
  EXPECT_TRUE(same(zero, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  const PhiloxWords ones = CurandPhilox()(~0u, ~0u, ~0u, ~0u, ~0u, ~0u);
  EXPECT_TRUE(same(ones, {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  const PhiloxWords pi =
      CurandPhilox()(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
  EXPECT_TRUE(same(pi, {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(CurandPhiloxTest, BlocksAreTheHostPhiloxBlocks) {
  // Distinct values in every word, so that a swapped counter or key word shows.
  RandomStream rng(3, 0, RngPurpose::Misc, 0);
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t w[6];
    for (auto& v : w) v = static_cast<std::uint32_t>(rng.uniform() * 4294967296.0);
    const PhiloxWords a = CurandPhilox()(w[0], w[1], w[2], w[3], w[4], w[5]);
    const PhiloxWords b = HostPhilox()(w[0], w[1], w[2], w[3], w[4], w[5]);
    ASSERT_TRUE(same(a, b)) << "block " << i;
  }
}

TEST(CurandPhiloxTest, StreamPositionsAreTheRandomStreamsWords) {
  // PhiloxBlocks over cuRAND's function reads a stream as RandomStream does: block b of a
  // (seed, replicate, purpose, index) stream is its words 4b … 4b + 3, past the 2³² boundary
  // of the block counter too.
  for (std::uint64_t index : {0u, 7u}) {
    RandomStream stream(29, 5, RngPurpose::Frequencies, index);
    MatrixRecipe recipe;
    recipe.key0 = stream.key()[0];
    recipe.key1 = stream.key()[1];
    recipe.stream_hi = stream.stream_hi();
    CurandBlocks blocks(recipe);
    for (std::uint64_t block : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{0xffffffffu},
                                std::uint64_t{0x100000000u}, std::uint64_t{0x123456789abu}}) {
      blocks.seek(block);
      stream.seek(4 * block);
      for (int k = 0; k < 3; ++k) {
        const PhiloxWords got = blocks.next();
        const PhiloxWords want = {stream.next_u32(), stream.next_u32(), stream.next_u32(), stream.next_u32()};
        ASSERT_TRUE(same(got, want)) << "index " << index << " block " << block + k;
      }
    }
  }
}

TEST(CurandPhiloxTest, RecipeOnCurandBlocksGivesTheHostDraws) {
  // The kernel's code path with cuRAND's blocks, run on the host: every law, construction and
  // odd size, bit for bit the host's draw_frequencies().
  for (const omkl::test::RecipeBatch& batch : omkl::test::recipe_batches())
    for (std::size_t n_threads : {1u, 64u})
      EXPECT_EQ(draw_by_recipe<CurandBlocks>(batch.recipes, batch.n_rff, batch.d, n_threads), batch.host)
          << batch.label << " threads " << n_threads;
}
