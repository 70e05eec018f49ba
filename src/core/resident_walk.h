/// @file resident_walk.h
/// @brief The device-resident walk of a per-step-feedback algorithm: one seam through which an
/// algorithm whose every step needs the previous step's outcome (the graph-aided family, the
/// random-feature bandit algorithms, eM-KOFL's client samples) walks a whole block of samples
/// without handing each decision back to the host (issue 16 item 1). The server-side-kernel
/// federations, whose step is a round of many clients, walk rounds with their own driver on the
/// same pieces (resident_federation.h).
///
/// An algorithm supplies a *program*: per replicate, plan(r, t, pairs) chooses the step's pairs
/// (slot, kernel, rate, shrink) from its own state and random stream; every pair's features are
/// formed with f = θᵀz(x) and ‖θ‖² before the update (resident_pair_features()) — after the
/// program's mix() of its θ slots where it has one (MixesSlots), or by the program itself where
/// a pair is not a random-feature model (OwnsFeatures: a kernel expansion); then
/// learn(r, t, y, f, norm2, pairs) turns the pairs' predictions into the step's prediction and
/// the state's next value, and may still set a pair's rate, shrink and box (a rule whose step
/// size depends on the loss just observed, as the bandit family's); last every pair's update
/// θ ← shrink·θ − rate·C'(f, y)·z, clipped to [−box, box] where box > 0
/// (resident_pair_update()), on a lane's share of the D features. Both sides of the program are
/// OMKL_HD, so the same code runs in two drivers:
///  - walk_on_host() below: one replicate after another, one lane per pair, in double. It is the
///    device walk's reference on machines without a GPU, and what the unit tests run;
///  - the CUDA driver (kernels/resident_walk.cuh): one thread block per replicate walks all the
///    block's steps — thread 0 plans and learns, a warp per pair does the features and the
///    update with 32 lanes (or the whole block per pair, OMKL_CUDA_WALK_PAIRS=auto, where a step
///    has fewer pairs than warps).
/// The two differ in how a pair's 2D products are summed (one lane in order, or 32 lanes and a
/// shuffle tree, or the block's warps and then the warps in order), in the device's contraction
/// of a·b + c into one rounding (nvcc's default; the host code is compiled without contraction)
/// and in the last bit of exp/log/pow, so they agree within floating point, as the CPU and CUDA
/// backends do. A discrete choice (a draw against a cumulative sum, a ranking, a projection test)
/// follows those values: it comes out the same unless a draw or a tie lands within that rounding
/// of its boundary, which a long enough run may meet, and a float run much sooner (on an H200 an
/// omkl-sfg draw took another node at step 363 of a 400-step float test, on both GPU paths).
///
/// Contract: every plan() starts from default pairs (both drivers reset the first max_pairs) and
/// plans at most the walk's max_pairs; a program sets whatever of a pair it uses.
#pragma once

#include <algorithm>  // std::fill (host driver)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/env_switch.h"
#include "core/host_device.h"
#include "core/host_team.h"
#include "core/loss.h"
#include "core/resident_team.h"
#include "features/sincos_fma.h"
#include "omkl/error.h"

namespace omkl::detail {

/// Most pairs one replicate's step may name (the thread block's shared arrays hold them).
constexpr std::size_t kMaxResidentPairs = 128;

/// Whether a program rewrites its replicate's θ slots between plan() and the features pass (a
/// federation whose round opens with the clients' copies of a kernel averaged): a program that
/// does declares `static constexpr bool kMixesSlots = true;` and
/// `template <typename Real> void mix(r, t, theta, D, lane, n_lanes)`, theta being replicate r's
/// S × 2D slots and the lanes sharing its entries (the whole thread block on the GPU).
template <typename Program, typename = void>
struct MixesSlots : std::false_type {};
template <typename Program>
struct MixesSlots<Program, std::void_t<decltype(Program::kMixesSlots)>> : std::bool_constant<Program::kMixesSlots> {};

/// Whether a program evaluates its pairs itself instead of on random features (a kernel
/// expansion over a support set): one that does declares `static constexpr bool kOwnFeatures =
/// true;`, `template <typename Real> void pair_features(r, pair, x, lane, n_lanes, f, norm2)`
/// (the lane's partial sums, in double: the driver adds the lanes up) and `template <typename
/// Real> void pair_update(r, pair, x, lane, n_lanes)` (after learn(), the lane's share of the
/// pair's update), and leaves θ, the frequencies and the feature scratch unused.
template <typename Program, typename = void>
struct OwnsFeatures : std::false_type {};
template <typename Program>
struct OwnsFeatures<Program, std::void_t<decltype(Program::kOwnFeatures)>> : std::bool_constant<Program::kOwnFeatures> {};

/// Whether a program's steps have one pair (or fewer than a thread block has warps), so that the
/// GPU driver gives each pair the whole block unless OMKL_CUDA_WALK_PAIRS says otherwise: one
/// that does declares `static constexpr bool kFewPairs = true;` (the random-feature bandit,
/// whose round evaluates only the drawn kernel).
template <typename Program, typename = void>
struct FewPairs : std::false_type {};
template <typename Program>
struct FewPairs<Program, std::void_t<decltype(Program::kFewPairs)>> : std::bool_constant<Program::kFewPairs> {};

/// One pair of a planned step: which slot (θ) and kernel (V), and the update's coefficients.
struct ResidentPair {
  std::uint32_t slot = 0;
  std::uint32_t kernel = 0;
  double rate = 0.0;    ///< θ ← shrink·θ − rate·C'(f, y)·z
  double shrink = 1.0;
  double box = 0.0;     ///< > 0: then each entry of θ clipped to [−box, box]
};

/// The phases of a step of the GPU driver, in order, as OMKL_TIMING=1 reports them: the pairs'
/// reset and plan(), mix(), the pairs' features, learn(), the pairs' updates.
constexpr std::size_t kResidentPhases = 5;
inline constexpr const char* kResidentPhaseNames[kResidentPhases] = {"plan", "mix", "features", "learn", "update"};

/// What a walk reads and writes besides the program's own state. Layouts as the backends':
///  frequencies R × P × D × d (row-major V of each (replicate, kernel)), theta R × S × 2D
///  (sines, then cosines), x n_steps × d and y n_steps — or, with rows, x n_rows × d and y
///  n_rows, the whole stream, with replicate r's sample at step i its row rows[i·R + r]: each
///  replicate its own stream, as a study whose every repetition sees its own permutation of
///  the data (Algorithm::step_block_replicated(), StreamRows) —, predictions n_steps × R (written),
///  z_scratch R × max_pairs × 2D (a pair's features between its two passes; the host driver
///  walks one replicate at a time and uses the first replicate's share).
template <typename Real>
struct ResidentWalkArgs {
  const Real* frequencies = nullptr;
  Real* theta = nullptr;
  const Real* x = nullptr;
  const double* y = nullptr;
  double* predictions = nullptr;
  Real* z_scratch = nullptr;
  std::size_t n_steps = 0, n_replicates = 0, n_slots = 0, n_kernels = 0, n_rff = 0, n_features = 0;
  std::size_t max_pairs = 0;  ///< most pairs the program plans in one step (≤ kMaxResidentPairs)
  std::int64_t t0 = 1;  ///< 1-based time of the block's first sample
  double feature_scale = 1.0;
  LossKind loss = LossKind::Squared;
  /// Each replicate its own stream (see above): n_steps × R row indices into x, or null.
  const std::uint32_t* rows = nullptr;
  std::size_t n_rows = 0;  ///< with rows: the stream's rows (x's, y's)
  /// The GPU driver's flag (device memory, zeroed before the launch): set when a plan() named
  /// more pairs than max_pairs, after which the walk stops and the host throws.
  unsigned* overflow = nullptr;
  /// GPU driver: a step with fewer pairs than the block has warps gives each pair the whole
  /// block instead of one warp (OMKL_CUDA_WALK_PAIRS=auto, or unset for a FewPairs program; the
  /// host driver has one lane).
  bool block_per_pair = false;
  /// GPU driver: a team program's plan() and learn() by the whole block (OMKL_CUDA_WALK_PLAN=
  /// block, the default; core/resident_team.h), else by thread 0.
  bool team_steps = false;
  /// GPU driver: threads of each replicate's block, 128, 256 or 512 (OMKL_CUDA_WALK_THREADS);
  /// 0: the most that keeps every replicate's block resident at once.
  unsigned block_threads = 128;
  /// Each replicate's state copied out of the arena of all replicates into the walk's own memory
  /// for the walk, and back at its end (OMKL_WALK_STATE=local, walk_state_local(); a LocalState
  /// program only): on the GPU the block's shared memory, which its steps then read and write
  /// instead of device memory; the host driver a buffer per replicate, the same program code.
  bool local_state = false;
  /// OMKL_TIMING=1 on the GPU (device memory, R × kResidentPhases, zeroed before the launch):
  /// the SM clock cycles each replicate's thread 0 spent in each phase of its steps, barrier
  /// waits included, so that the phases add up to the walk. Null: not measured.
  unsigned long long* phase_cycles = nullptr;

  /// Step i's sample and target for replicate r.
  OMKL_HD std::size_t sample_index(std::size_t i, std::size_t r) const {
    return rows ? rows[i * n_replicates + r] : i;
  }
  OMKL_HD const Real* sample(std::size_t i, std::size_t r) const { return x + sample_index(i, r) * n_features; }
  OMKL_HD double target(std::size_t i, std::size_t r) const { return y[sample_index(i, r)]; }
  /// Samples (rows of x, entries of y) the block holds.
  std::size_t n_samples() const { return rows ? n_rows : n_steps; }
};

OMKL_HD void resident_sincos(double a, double& s, double& c) {
  if (std::fabs(a) <= kFmaFastLimit) {
    sincos_fma(a, s, c);
  } else {
    s = std::sin(a);
    c = std::cos(a);
  }
}
OMKL_HD void resident_sincos(float a, float& s, float& c) {
  s = std::sin(a);
  c = std::cos(a);
}

/// A lane's share of one pair's features: for c = lane, lane + n_lanes, … < D, the projection
/// a_c = V_c·x (in column order), z_c = scale·sin a_c and z_{D+c} = scale·cos a_c into z (unless
/// z is null: a prediction only), and its partial sums of θᵀz and ‖θ‖² into dot and norm2 (the
/// caller reduces the lanes).
template <typename Real>
OMKL_HD void resident_pair_features(const Real* V, const Real* x, const Real* theta, Real* z, std::size_t D,
                                    std::size_t d, Real scale, unsigned lane, unsigned n_lanes, Real& dot,
                                    Real& norm2) {
  dot = Real(0);
  norm2 = Real(0);
  for (std::size_t c = lane; c < D; c += n_lanes) {
    Real a = Real(0);
    for (std::size_t k = 0; k < d; ++k) a += V[c * d + k] * x[k];
    Real s, co;
    resident_sincos(a, s, co);
    const Real zs = scale * s, zc = scale * co;
    if (z) {
      z[c] = zs;
      z[D + c] = zc;
    }
    const Real ts = theta[c], tc = theta[D + c];
    dot += ts * zs + tc * zc;
    norm2 += ts * ts + tc * tc;
  }
}

/// The lane's share of the update θ ← shrink·θ − gain·z (gain = rate·C'(f, y), formed in double
/// as the backends form it), each entry then clipped to [−box, box] where box > 0 (std::clamp's
/// order of comparisons).
template <typename Real>
OMKL_HD void resident_pair_update(Real* theta, const Real* z, std::size_t D, Real shrink, Real gain, Real box,
                                  unsigned lane, unsigned n_lanes) {
  const auto clip = [box](Real v) { return box > Real(0) ? (v < -box ? -box : (box < v ? box : v)) : v; };
  for (std::size_t c = lane; c < D; c += n_lanes) {
    theta[c] = clip(shrink * theta[c] - gain * z[c]);
    theta[D + c] = clip(shrink * theta[D + c] - gain * z[D + c]);
  }
}

/// Whether a pair changes θ at all (rate 0 and shrink 1: predict only).
OMKL_HD bool resident_pair_updates(const ResidentPair& pair) { return !(pair.rate == 0.0 && pair.shrink == 1.0); }

/// Offsets of typed arrays in one block of bytes, each 8-byte aligned: a program keeps its tables
/// and its replicates' state each in one such block, so one copy moves all of it to the device
/// and back.
class ByteArena {
 public:
  template <typename T>
  std::size_t reserve(std::size_t count) {
    const std::size_t offset = (size_ + 7) / 8 * 8;
    size_ = offset + count * sizeof(T);
    return offset;
  }
  std::size_t size() const { return size_; }
  /// 64-bit words that hold the reserved bytes (one spare, so that no array is empty-based).
  std::size_t words() const { return (size_ + 7) / 8 + 1; }

  template <typename T>
  static T* at(void* base, std::size_t offset) {
    return reinterpret_cast<T*>(static_cast<unsigned char*>(base) + offset);
  }
  template <typename T>
  static const T* at(const void* base, std::size_t offset) {
    return reinterpret_cast<const T*>(static_cast<const unsigned char*>(base) + offset);
  }

 private:
  std::size_t size_ = 0;
};

/// Most per-replicate arrays a program's state has (ReplicateSlices).
constexpr std::size_t kMaxStateArrays = 40;

/// Most bytes of one replicate's state a walk keeps in its own memory (OMKL_WALK_STATE=local):
/// what a GPU block's shared memory holds beside the walk's own arrays (≈ 8 KB) within the 48 KB
/// a launch gets without opting in. A larger state stays in the arena.
constexpr std::size_t kMaxLocalStateBytes = 40 * 1024;

/// Where each per-replicate array of a program's state lies: in the arena of all R replicates
/// (replicate r's entries at offset[i] + r·bytes[i]) and in one replicate's own copy (at
/// local[i]; local_bytes in all). A program that keeps its state so (LocalState) stores this table
/// in the arena itself, so that a device walk reads it where the state is.
struct ReplicateSlices {
  std::uint32_t n_arrays = 0;
  std::uint32_t local_bytes = 0;
  std::uint64_t offset[kMaxStateArrays] = {};
  std::uint32_t bytes[kMaxStateArrays] = {};
  std::uint32_t local[kMaxStateArrays] = {};

  /// An array of `count` T per replicate, in `arena` (R replicates, one after another) and in the
  /// local copy; returns its offset in the arena.
  template <typename T>
  std::size_t reserve(ByteArena& arena, std::size_t n_replicates, std::size_t count) {
    if (n_arrays == kMaxStateArrays) throw Error("resident walk: a state of more than kMaxStateArrays arrays");
    const std::size_t at = arena.reserve<T>(n_replicates * count);
    const std::size_t own = (local_bytes + 7u) / 8u * 8u;  // 8-byte aligned, as the arena's
    offset[n_arrays] = at;
    bytes[n_arrays] = static_cast<std::uint32_t>(count * sizeof(T));
    local[n_arrays] = static_cast<std::uint32_t>(own);
    local_bytes = static_cast<std::uint32_t>(own + count * sizeof(T));
    ++n_arrays;
    return at;
  }

  /// Replicate r's entries between the arena at `arena` and its own copy at `copy` (into the
  /// copy, or back), each lane (lane of lanes) its share of every array's bytes.
  OMKL_HD void copy(void* arena, std::size_t r, void* copy, bool into_copy, unsigned lane, unsigned lanes) const {
    auto* all = static_cast<unsigned char*>(arena);
    auto* own = static_cast<unsigned char*>(copy);
    for (std::uint32_t i = 0; i < n_arrays; ++i) {
      unsigned char* shared = all + offset[i] + r * bytes[i];
      unsigned char* mine = own + local[i];
      for (std::uint32_t b = lane; b < bytes[i]; b += lanes) {
        if (into_copy) mine[b] = shared[b];
        else shared[b] = mine[b];
      }
    }
  }
};

/// Whether a program can walk with each replicate's state in a copy of its own (ResidentWalkArgs::
/// local_state): one that can declares `static constexpr bool kLocalState = true;` and has
/// `std::size_t local_state_bytes() const` (one replicate's copy; a host-side value),
/// `void copy_state(r, copy, into_copy, lane, lanes) const` (ReplicateSlices::copy() of replicate
/// r) and `Program localized(void* copy) const` (the program over the copy, as replicate 0).
template <typename Program, typename = void>
struct LocalState : std::false_type {};
template <typename Program>
struct LocalState<Program, std::void_t<decltype(Program::kLocalState)>> : std::bool_constant<Program::kLocalState> {};

/// OMKL_WALK_STATE: where a walk keeps each replicate's state while it runs, `arena` (the
/// default: where it lies between walks, device memory on the GPU) or `local` (ResidentWalkArgs::
/// local_state). A ConfigError names any other value.
inline bool walk_state_local() { return path_switch("OMKL_WALK_STATE") == "local"; }

/// Whether a walk of `program` keeps its replicates' state in copies of their own: asked for, a
/// LocalState program, and a replicate's state within kMaxLocalStateBytes.
template <typename Program>
OMKL_HD bool walks_with_local_state(const Program& program, bool asked) {
  if constexpr (LocalState<Program>::value) return asked && program.local_state_bytes() <= kMaxLocalStateBytes;
  else return false;
}

/// rate·C'(f, y) in double, whatever Real is.
OMKL_HD double resident_gain(const ResidentPair& pair, LossKind loss, double f, double y) {
  return pair.rate * loss_derivative(loss, f, y);
}

/// A program's plan() on one thread: a team program's (resident_team.h) with a team of one.
template <typename Program>
OMKL_HD std::size_t plan_on_one_thread(Program& program, std::size_t r, std::int64_t t, ResidentPair* pairs) {
  if constexpr (TeamSteps<Program>::value) {
    SerialTeam one;
    return program.plan(r, t, pairs, one);
  } else {
    return program.plan(r, t, pairs);
  }
}

/// A program's learn() on one thread, likewise.
template <typename Program>
OMKL_HD double learn_on_one_thread(Program& program, std::size_t r, std::int64_t t, double y, const double* f,
                                   const double* norm2, ResidentPair* pairs) {
  if constexpr (TeamSteps<Program>::value) {
    SerialTeam one;
    return program.learn(r, t, y, f, norm2, pairs, one);
  } else {
    return program.learn(r, t, y, f, norm2, pairs);
  }
}

/// The host driver's plan() and learn(): on one thread, or a team program's on the lanes of
/// `team` (OMKL_HOST_WALK_LANES > 1; host_team.h), the leader's results.
template <typename Program>
std::size_t plan_on_host(Program& program, HostTeamRunner* team, std::size_t r, std::int64_t t, ResidentPair* pairs) {
  if constexpr (TeamSteps<Program>::value)
    if (team) return team->leaders_result([&](HostTeam& lane) { return program.plan(r, t, pairs, lane); });
  return plan_on_one_thread(program, r, t, pairs);
}

template <typename Program>
double learn_on_host(Program& program, HostTeamRunner* team, std::size_t r, std::int64_t t, double y,
                     const double* f, const double* norm2, ResidentPair* pairs) {
  if constexpr (TeamSteps<Program>::value)
    if (team) return team->leaders_result([&](HostTeam& lane) { return program.learn(r, t, y, f, norm2, pairs, lane); });
  return learn_on_one_thread(program, r, t, y, f, norm2, pairs);
}

/// The host driver: every replicate through every step of the block, in replicate order within
/// a step. `program` has plan(r, t, pairs) → pair count and learn(r, t, y, f, norm2, pairs) → ŷ
/// (or their team forms, run on OMKL_HOST_WALK_LANES lanes).
template <typename Program>
void walk_on_host(Program& program, const ResidentWalkArgs<double>& a) {
  std::unique_ptr<HostTeamRunner> team;
  if constexpr (TeamSteps<Program>::value) {
    const unsigned lanes = host_walk_lanes();
    if (lanes > 1) team = std::make_unique<HostTeamRunner>(lanes);
  }
  // local_state: each replicate's state in a buffer of its own for the walk, walked by the
  // program over it as replicate 0 (the GPU block's shared copy, here in host memory).
  std::vector<Program> own_programs;
  std::vector<std::vector<std::uint64_t>> own_states;
  if constexpr (LocalState<Program>::value) {
    if (walks_with_local_state(program, a.local_state)) {
      const std::size_t words = (program.local_state_bytes() + 7) / 8 + 1;
      own_states.assign(a.n_replicates, std::vector<std::uint64_t>(words, 0));
      for (std::size_t r = 0; r < a.n_replicates; ++r) {
        program.copy_state(r, own_states[r].data(), true, 0u, 1u);
        own_programs.push_back(program.localized(own_states[r].data()));
      }
    }
  }
  ResidentPair pairs[kMaxResidentPairs];
  double f[kMaxResidentPairs], norm2[kMaxResidentPairs];
  const std::size_t D = a.n_rff, d = a.n_features;
  const std::size_t max_pairs = a.max_pairs < kMaxResidentPairs ? a.max_pairs : kMaxResidentPairs;
  for (std::size_t i = 0; i < a.n_steps; ++i) {
    const std::int64_t t = a.t0 + static_cast<std::int64_t>(i);
    for (std::size_t r = 0; r < a.n_replicates; ++r) {
      // The program's replicate: r in the arena, 0 in replicate r's own copy.
      Program& prog = own_programs.empty() ? program : own_programs[r];
      const std::size_t pr = own_programs.empty() ? r : 0;
      const double* x = a.sample(i, r);
      const double y = a.target(i, r);
      // Every plan() starts from default pairs (the GPU driver resets them likewise).
      std::fill(pairs, pairs + max_pairs, ResidentPair{});
      const std::size_t n = plan_on_host(prog, team.get(), pr, t, pairs);
      if (n > max_pairs) throw Error("resident walk: a step planned more pairs than the walk's max_pairs");
      if constexpr (MixesSlots<Program>::value) prog.mix(pr, t, a.theta + r * a.n_slots * 2 * D, D, 0u, 1u);
      double* z = a.z_scratch;  // one replicate at a time
      if constexpr (OwnsFeatures<Program>::value) {
        for (std::size_t p = 0; p < n; ++p) prog.pair_features(pr, pairs[p], x, 0u, 1u, f[p], norm2[p]);
        a.predictions[i * a.n_replicates + r] = learn_on_host(prog, team.get(), pr, t, y, f, norm2, pairs);
        for (std::size_t p = 0; p < n; ++p) prog.pair_update(pr, pairs[p], x, 0u, 1u);
        continue;
      }
      for (std::size_t p = 0; p < n; ++p) {
        const double* V = a.frequencies + (r * a.n_kernels + pairs[p].kernel) * D * d;
        const double* theta = a.theta + (r * a.n_slots + pairs[p].slot) * 2 * D;
        resident_pair_features(V, x, theta, z + p * 2 * D, D, d, a.feature_scale, 0u, 1u, f[p], norm2[p]);
      }
      a.predictions[i * a.n_replicates + r] = learn_on_host(prog, team.get(), pr, t, y, f, norm2, pairs);
      for (std::size_t p = 0; p < n; ++p) {
        if (!resident_pair_updates(pairs[p])) continue;
        double* theta = a.theta + (r * a.n_slots + pairs[p].slot) * 2 * D;
        resident_pair_update(theta, z + p * 2 * D, D, pairs[p].shrink, resident_gain(pairs[p], a.loss, f[p], y),
                             pairs[p].box, 0u, 1u);
      }
    }
  }
  if constexpr (LocalState<Program>::value)
    for (std::size_t r = 0; r < own_states.size(); ++r) program.copy_state(r, own_states[r].data(), false, 0u, 1u);
}

/// walk_on_host() over the shape's sizes (its pointers ignored) and these host arrays, with its
/// own feature scratch.
template <typename Program>
void walk_on_host(Program& program, ResidentWalkArgs<double> shape, const double* frequencies, double* theta,
                  const double* x, const double* y, double* predictions) {
  std::vector<double> z(shape.max_pairs * 2 * shape.n_rff);
  shape.frequencies = frequencies;
  shape.theta = theta;
  shape.x = x;
  shape.y = y;
  shape.predictions = predictions;
  shape.z_scratch = z.data();
  walk_on_host(program, shape);
}

}  // namespace omkl::detail
