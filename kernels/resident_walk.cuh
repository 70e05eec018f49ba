/// @file resident_walk.cuh
/// @brief The CUDA driver of a device-resident walk (src/core/resident_walk.h): one thread block
/// per replicate walks every step of a block of samples with no host round trip. Per step,
/// thread 0 runs the program's plan() (the replicate's selection and random draw), then the
/// whole block its mix() of the replicate's θ slots where it has one; each warp takes pairs
/// w, w + warps, … and runs resident_pair_features() with its 32 lanes and a shuffle reduction
/// (or the whole block takes one pair at a time: for a program that evaluates its pairs itself,
/// and with OMKL_CUDA_WALK_PAIRS=auto for a step with fewer pairs than warps); thread 0 runs
/// learn(); the same threads then apply resident_pair_update() to the entries they formed. The
/// program's state and the pairs' θ stay in device memory between launches. With OMKL_TIMING=1
/// a clocked copy of the kernel counts thread 0's cycles per phase of a step.
///
/// Included by the .cu file of each program (a family's own, e.g. resident_graph.cu), which
/// instantiates launch_resident_walk() for its program type.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/resident_team.h"
#include "core/resident_walk.h"
#include "core/timing.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "features/rf_backend.h"
#include "omkl/error.h"

namespace omkl::cuda {

// Threads of a replicate's block: 4 warps by default (a step names a handful of pairs), up to
// 16 (OMKL_CUDA_WALK_THREADS); the kernel reads blockDim, and its bounds allow the most.
constexpr unsigned kDefaultResidentThreads = 128;
constexpr unsigned kMaxResidentThreads = 512;

template <typename Real>
__device__ __forceinline__ Real resident_warp_sum(Real v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// The sum of every thread's v, in thread 0 (warps first, then the warps' sums in warp order);
/// `partials` holds one value per warp. Every thread of the block must call it.
__device__ __forceinline__ double resident_block_sum(double v, double* partials) {
  v = resident_warp_sum(v);
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
  if (lane == 0) partials[warp] = v;
  __syncthreads();
  double total = 0.0;
  if (threadIdx.x == 0)
    for (unsigned w = 0; w < n_warps; ++w) total += partials[w];
  __syncthreads();  // partials is reused by the next call
  return total;
}

/// A team (core/resident_team.h) of the block's threads, for a team program's plan() and learn()
/// with OMKL_CUDA_WALK_PLAN=block: barriers by __syncthreads(), share() through two alternating
/// shared slots (one barrier each), stage() into a shared copy (the leader's serial sums and
/// scans then read shared memory, not the state's global arrays). Host-device members whose
/// bodies exist on the device only, so that the programs' host-device templates may name them.
class BlockTeam {
 public:
  static constexpr bool kTreeSums = true;
  /// `slots`: 2 × kTeamShareWords shared words; `staging`: kMaxTeamStage shared entries.
  __host__ __device__ BlockTeam(unsigned long long* slots, double* staging) : slots_(slots), staging_(staging) {}
  __host__ __device__ unsigned lane() const {
#ifdef __CUDA_ARCH__
    return threadIdx.x;
#else
    return 0u;
#endif
  }
  __host__ __device__ unsigned size() const {
#ifdef __CUDA_ARCH__
    return blockDim.x;
#else
    return 1u;
#endif
  }
  __host__ __device__ bool leader() const { return lane() == 0u; }
  __host__ __device__ void sync() {
#ifdef __CUDA_ARCH__
    __syncthreads();
#endif
  }
  template <typename T>
  __host__ __device__ T share(T v) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= sizeof(unsigned long long) * detail::kTeamShareWords,
                  "share() hands out a value of at most kTeamShareWords words");
    unsigned long long* slot = slots_ + (shares_++ & 1u) * detail::kTeamShareWords;  // alternating
    if (leader()) std::memcpy(slot, &v, sizeof(T));
    sync();
    std::memcpy(&v, slot, sizeof(T));
    return v;
  }
  /// v[0..n), n ≤ kMaxTeamStage, copied by the block into shared memory; the first barrier also
  /// waits for the leader's reads of the previous copy.
  __host__ __device__ const double* stage(const double* v, std::size_t n) {
    sync();
    for (std::size_t i = lane(); i < n; i += size()) staging_[i] = v[i];
    sync();
    return staging_;
  }
  /// The tree-order reductions (core/team_reductions.h) by the block's first warp: lane j's terms
  /// in turn, then shuffles in the order's butterfly or scan; thread 0's result handed out by
  /// share(). Only the block's plan takes them (a GPU thread alone keeps the index order:
  /// core/team_reductions.h), so they are compiled into the team launch shapes only.
  template <typename ValueOf>
  __host__ __device__ double tree_sum(std::size_t n, ValueOf&& value_of) {
    double v = 0.0;
#ifdef __CUDA_ARCH__
    if (threadIdx.x < 32) {
      for (std::size_t i = threadIdx.x; i < n; i += 32) v += value_of(i);
#pragma unroll
      for (int half = 16; half > 0; half >>= 1) v = v + __shfl_xor_sync(0xffffffffu, v, half);
    }
#endif
    return share(v);
  }
  template <typename ValueOf>
  __host__ __device__ double tree_max(std::size_t n, ValueOf&& value_of) {
    double m = -INFINITY;
#ifdef __CUDA_ARCH__
    if (threadIdx.x < 32) {
      for (std::size_t i = threadIdx.x; i < n; i += 32) m = detail::tree_max_step(m, value_of(i));
#pragma unroll
      for (int half = 16; half > 0; half >>= 1) m = detail::tree_max_step(m, __shfl_xor_sync(0xffffffffu, m, half));
    }
#endif
    return share(m);
  }
  __host__ __device__ std::size_t tree_draw(const double* p, std::size_t n, double r, bool shifted) {
    std::size_t drawn = 0;
#ifdef __CUDA_ARCH__
    if (threadIdx.x < 32) drawn = warp_tree_draw(p, n, r, shifted);
#endif
    return share(drawn);
  }

 private:
#ifdef __CUDA_ARCH__
  /// tree_order_draw() by one warp (every lane calls; lane 0's r; the index on every lane).
  __device__ static std::size_t warp_tree_draw(const double* p, std::size_t n, double r, bool shifted) {
    constexpr unsigned kAll = 0xffffffffu;
    r = __shfl_sync(kAll, r, 0);
    if (shifted && r <= 0.0) return 0;
    const unsigned lane = threadIdx.x;
    const std::size_t L = detail::tree_chunk(n), begin = lane * L < n ? lane * L : n, end = begin + L < n ? begin + L : n;
    double x = 0.0;  // the chunk's sum, then its inclusive scan
    for (std::size_t k = begin; k < end; ++k) x += p[k];
#pragma unroll
    for (unsigned h = 1; h < 32; h <<= 1) {
      const double below = __shfl_up_sync(kAll, x, h);
      if (lane >= h) x = x + below;
    }
    double c = __shfl_up_sync(kAll, x, 1);
    if (lane == 0) c = 0.0;
    // The chunk's prefixes: the first entry of mass that r falls below (or reaches, shifted),
    // and the last entry of mass.
    std::size_t hit = n, last_positive = n;
    for (std::size_t k = begin; k < end; ++k) {
      c += p[k];
      if (!(p[k] > 0.0)) continue;
      if (hit == n && (shifted ? r <= c : r < c)) hit = k;
      last_positive = k;
    }
    const unsigned hits = __ballot_sync(kAll, hit != n);
    if (hits != 0) {
      const std::size_t k = __shfl_sync(kAll, hit, __ffs(hits) - 1);
      return shifted ? (k + 1 < n - 1 ? k + 1 : n - 1) : k;
    }
    if (shifted) return n - 1;
    const unsigned positive = __ballot_sync(kAll, last_positive != n);
    return positive == 0 ? 0 : __shfl_sync(kAll, last_positive, 31 - __clz(positive));
  }
#endif

 public:

 private:
  unsigned long long* slots_;
  unsigned shares_ = 0;  // the same on every thread: every thread makes every share()
  double* staging_;
};

/// n_pairs of a block whose plan() overflowed: the block leaves the walk.
constexpr unsigned kAbortWalk = ~0u;

/// kTimed (OMKL_TIMING=1): the phase clock below; kBlockPerPair (OMKL_CUDA_WALK_PAIRS=auto): the
/// whole block per pair where a step has fewer pairs than warps; kTeam (OMKL_CUDA_WALK_PLAN=block,
/// a team program only): plan() and learn() by the whole block; kWide (OMKL_CUDA_WALK_THREADS
/// above 128): bounds for blocks of up to 512 threads. Template parameters, so that the default
/// walk carries none of their registers and keeps its bounds of 128 threads.
/// kLocal (OMKL_WALK_STATE=local, a LocalState program with the team's plan and a warp per pair):
/// the block copies its replicate's state into dynamic shared memory before the first step, walks
/// the program over that copy (as its replicate 0) and copies it back after the last.
template <typename Program, typename Real, bool kTimed, bool kBlockPerPair, bool kTeam, bool kWide, bool kLocal>
__global__ void __launch_bounds__(kWide ? kMaxResidentThreads : kDefaultResidentThreads) resident_walk_kernel(Program program,
                                                                         detail::ResidentWalkArgs<Real> a) {
  // Raw storage: ResidentPair's default member initializers are a constructor, which a
  // __shared__ array may not run.
  __shared__ __align__(16) unsigned char pair_storage[sizeof(detail::ResidentPair) * detail::kMaxResidentPairs];
  detail::ResidentPair* pairs = reinterpret_cast<detail::ResidentPair*>(pair_storage);
  __shared__ double f[detail::kMaxResidentPairs], norm2[detail::kMaxResidentPairs];
  __shared__ unsigned n_pairs;
  __shared__ double partials[(kWide ? kMaxResidentThreads : kDefaultResidentThreads) / 32];
  // kTeam: the team's share() slots and stage() copy (unused otherwise: the copy one entry).
  __shared__ unsigned long long team_slots[2 * detail::kTeamShareWords];
  __shared__ double team_staging[kTeam ? detail::kMaxTeamStage : 1];
  BlockTeam team(team_slots, team_staging);
  const std::size_t r = blockIdx.x;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
  const std::size_t D = a.n_rff, d = a.n_features;
  Real* z = a.z_scratch + r * a.max_pairs * 2 * D;
  // OMKL_TIMING=1: thread 0 reads the SM clock after each barrier that ends a phase, so the
  // phases (barrier waits included) add up to the step.
  const bool timed = kTimed && threadIdx.x == 0;
  unsigned long long cycles[detail::kResidentPhases] = {};
  long long mark = timed ? clock64() : 0;
  const auto lap = [&](std::size_t phase) {
    if (!timed) return;
    const long long now = clock64();
    cycles[phase] += static_cast<unsigned long long>(now - mark);
    mark = now;
  };
  // The steps of prog, whose replicate is pr (r; or 0, kLocal, over the block's own copy of its
  // state); true when a plan() overflowed and the block left the walk.
  const auto walk_steps = [&](Program& prog, std::size_t pr) -> bool {
    // learn(): step i's prediction, the leader's (thread 0's).
    const auto learn_step = [&](std::size_t i, std::int64_t t, double y) {
      double prediction = 0.0;
      if constexpr (kTeam) prediction = prog.learn(pr, t, y, f, norm2, pairs, team);
      else if (threadIdx.x == 0) prediction = detail::learn_on_one_thread(prog, pr, t, y, f, norm2, pairs);
      if (threadIdx.x == 0) a.predictions[i * a.n_replicates + r] = prediction;
    };
    for (std::size_t i = 0; i < a.n_steps; ++i) {
      const std::int64_t t = a.t0 + static_cast<std::int64_t>(i);
      // plan() starts from default pairs, as in the host driver: nothing a program leaves unset
      // (a box, say) comes from an earlier step, another replicate or another kernel's use of
      // this shared memory. The previous step's last barrier has ordered every read of them.
      for (std::size_t p = threadIdx.x; p < a.max_pairs; p += blockDim.x) pairs[p] = detail::ResidentPair{};
      __syncthreads();
      std::size_t planned = 0;
      if constexpr (kTeam) planned = prog.plan(pr, t, pairs, team);  // the leader's count
      else if (threadIdx.x == 0) planned = detail::plan_on_one_thread(prog, pr, t, pairs);
      if (threadIdx.x == 0) {
        // More pairs than the walk's max_pairs would write into the next replicate's feature
        // scratch: the block stops here and the host throws (a trap would poison the context of
        // every walk running beside this one).
        if (planned > a.max_pairs) {
          if (a.overflow) *a.overflow = 1u;
          n_pairs = kAbortWalk;
        } else {
          n_pairs = static_cast<unsigned>(planned);
        }
      }
      __syncthreads();
      if (n_pairs == kAbortWalk) return true;  // every thread of the block, together
      lap(0);
      if constexpr (detail::MixesSlots<Program>::value) {
        prog.mix(pr, t, a.theta + r * a.n_slots * 2 * D, D, threadIdx.x, blockDim.x);
        __syncthreads();
        lap(1);
      }
      const Real* x = a.sample(i, r);
      const double y = a.target(i, r);
      if constexpr (detail::OwnsFeatures<Program>::value) {
        // The program's own evaluation, a pair at a time by the whole block; its update likewise.
        for (unsigned p = 0; p < n_pairs; ++p) {
          double dot, n2;
          prog.pair_features(pr, pairs[p], x, threadIdx.x, blockDim.x, dot, n2);
          dot = resident_block_sum(dot, partials);
          n2 = resident_block_sum(n2, partials);
          if (threadIdx.x == 0) {
            f[p] = dot;
            norm2[p] = n2;
          }
        }
        __syncthreads();
        lap(2);
        learn_step(i, t, y);
        __syncthreads();
        lap(3);
        for (unsigned p = 0; p < n_pairs; ++p) {
          prog.pair_update(pr, pairs[p], x, threadIdx.x, blockDim.x);
          __syncthreads();
        }
      } else {
        // A warp per pair; or, for a step with fewer pairs than warps (a bandit's one drawn
        // kernel) and OMKL_CUDA_WALK_PAIRS=auto, the whole block per pair, so that no warp idles
        // (the partial sums then meet in double: warps first, then the warps in order).
        const bool whole_block = kBlockPerPair && n_pairs < n_warps;
        const unsigned first = whole_block ? 0u : warp, stride = whole_block ? 1u : n_warps;
        const unsigned part = whole_block ? threadIdx.x : lane, parts = whole_block ? blockDim.x : 32u;
        for (unsigned p = first; p < n_pairs; p += stride) {
          const detail::ResidentPair pair = pairs[p];
          const Real* V = a.frequencies + (r * a.n_kernels + pair.kernel) * D * d;
          const Real* theta = a.theta + (r * a.n_slots + pair.slot) * 2 * D;
          Real dot, n2;
          detail::resident_pair_features(V, x, theta, z + p * 2 * D, D, d, static_cast<Real>(a.feature_scale), part,
                                         parts, dot, n2);
          if (whole_block) {  // uniform over the block: every thread takes every pair
            const double dot_sum = resident_block_sum(static_cast<double>(dot), partials);
            const double n2_sum = resident_block_sum(static_cast<double>(n2), partials);
            if (threadIdx.x == 0) {
              f[p] = dot_sum;
              norm2[p] = n2_sum;
            }
            continue;
          }
          dot = resident_warp_sum(dot);
          n2 = resident_warp_sum(n2);
          if (lane == 0) {
            f[p] = static_cast<double>(dot);
            norm2[p] = static_cast<double>(n2);
          }
        }
        __syncthreads();
        lap(2);
        learn_step(i, t, y);
        __syncthreads();
        lap(3);
        // Each thread updates the entries it featurised (its z is still in scratch, written by
        // itself), in the same share of the same pairs.
        for (unsigned p = first; p < n_pairs; p += stride) {
          const detail::ResidentPair pair = pairs[p];
          if (!detail::resident_pair_updates(pair)) continue;
          Real* theta = a.theta + (r * a.n_slots + pair.slot) * 2 * D;
          const Real gain = static_cast<Real>(detail::resident_gain(pair, a.loss, f[p], y));
          detail::resident_pair_update(theta, z + p * 2 * D, D, static_cast<Real>(pair.shrink), gain,
                                       static_cast<Real>(pair.box), part, parts);
        }
      }
      __syncthreads();  // n_pairs and the shared arrays are rewritten by the next plan()
      lap(4);
    }
    return false;
  };
  if constexpr (kLocal) {
    // Dynamic shared memory, sized by the launch: the program's local_state_bytes().
    extern __shared__ __align__(16) unsigned char walk_local_state[];
    program.copy_state(r, walk_local_state, true, threadIdx.x, blockDim.x);
    __syncthreads();
    Program local = program.localized(walk_local_state);
    if (walk_steps(local, 0)) return;
    __syncthreads();  // every lane's last writes to the copy
    program.copy_state(r, walk_local_state, false, threadIdx.x, blockDim.x);
  } else {
    if (walk_steps(program, r)) return;
  }
  if (timed)
    for (std::size_t k = 0; k < detail::kResidentPhases; ++k) a.phase_cycles[r * detail::kResidentPhases + k] = cycles[k];
}

/// Threads per block: `asked` (128, 256 or 512), or for 0 the most of 512 and 256 at which every
/// replicate's block is resident at once (more warps per replicate share its pairs; fewer
/// blocks then fit a multiprocessor), else 128.
template <typename Kernel>
unsigned resident_block_threads(Kernel kernel, unsigned asked, std::size_t n_replicates, std::size_t dynamic_bytes) {
  if (asked == 128 || asked == 256 || asked == kMaxResidentThreads) return asked;
  if (asked != 0) throw Error("resident walk: a block of " + std::to_string(asked) + " threads (128, 256 or 512)");
  int device = 0, n_sm = 0;
  OMKL_CUDA_CHECK(cudaGetDevice(&device));
  OMKL_CUDA_CHECK(cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, device));
  for (unsigned threads : {kMaxResidentThreads, 256u}) {
    int per_sm = 0;
    OMKL_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(threads), dynamic_bytes));
    if (static_cast<std::size_t>(per_sm) * static_cast<std::size_t>(n_sm) >= n_replicates) return threads;
  }
  return kDefaultResidentThreads;
}

/// One kernel of a launch shape over every replicate: `wide` (up to 512 threads) at the threads
/// resident_block_threads() picks, or `narrow` at 128; `dynamic_bytes` of shared memory a block.
template <typename Program, typename Real, typename Kernel>
void launch_walk_shape(Kernel narrow, Kernel wide, std::size_t dynamic_bytes, const Program& program,
                       const detail::ResidentWalkArgs<Real>& args, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(args.n_replicates);
  const unsigned threads = resident_block_threads(wide, args.block_threads, args.n_replicates, dynamic_bytes);
  if (threads == kDefaultResidentThreads)  // asked for, or `auto`'s choice at many replicates
    narrow<<<grid, kDefaultResidentThreads, dynamic_bytes, stream>>>(program, args);
  else
    wide<<<grid, threads, dynamic_bytes, stream>>>(program, args);
}

/// The launch of one variant, with the team's plan where the program has one and args ask for it
/// (only a team program carries the team variants).
template <typename Program, typename Real, bool kTimed, bool kBlockPerPair>
void launch_resident_walk(const Program& program, const detail::ResidentWalkArgs<Real>& args, cudaStream_t stream) {
  constexpr bool kHasTeam = detail::TeamSteps<Program>::value;
  const bool team = kHasTeam && args.team_steps;
  // The local copy of each replicate's state: compiled into the team's warp-per-pair shapes of a
  // LocalState program only (the graph family's defaults), so that the other shapes add no
  // variants; elsewhere OMKL_WALK_STATE=local walks in the arena.
  constexpr bool kHasLocal = detail::LocalState<Program>::value && kHasTeam && !kBlockPerPair;
  if constexpr (kHasLocal) {
    if (team && detail::walks_with_local_state(program, args.local_state)) {
      launch_walk_shape(resident_walk_kernel<Program, Real, kTimed, false, true, false, true>,
                        resident_walk_kernel<Program, Real, kTimed, false, true, true, true>,
                        program.local_state_bytes(), program, args, stream);
      return;
    }
  }
  if (team)
    launch_walk_shape(resident_walk_kernel<Program, Real, kTimed, kBlockPerPair, kHasTeam, false, false>,
                      resident_walk_kernel<Program, Real, kTimed, kBlockPerPair, kHasTeam, true, false>, 0, program,
                      args, stream);
  else
    launch_walk_shape(resident_walk_kernel<Program, Real, kTimed, kBlockPerPair, false, false, false>,
                      resident_walk_kernel<Program, Real, kTimed, kBlockPerPair, false, true, false>, 0, program,
                      args, stream);
}

/// One launch over all replicates (a block each) for the args' block of steps, on `stream`.
template <typename Program, typename Real>
void launch_resident_walk(const Program& program, const detail::ResidentWalkArgs<Real>& args, cudaStream_t stream) {
  if (args.n_steps == 0 || args.n_replicates == 0) return;
  const bool timed = args.phase_cycles != nullptr;
  // A program that evaluates its pairs itself already gives each the whole block.
  constexpr bool kPairsByWarp = !detail::OwnsFeatures<Program>::value;
  if (kPairsByWarp && args.block_per_pair) {
    if (timed) launch_resident_walk<Program, Real, true, kPairsByWarp>(program, args, stream);
    else launch_resident_walk<Program, Real, false, kPairsByWarp>(program, args, stream);
  } else if (timed) {
    launch_resident_walk<Program, Real, true, false>(program, args, stream);
  } else {
    launch_resident_walk<Program, Real, false, false>(program, args, stream);
  }
  OMKL_CUDA_CHECK_LAUNCH();
}

/// The device side of a program's walks: copies of its tables and state arenas (each one block
/// of 64-bit words, so one copy moves all of a program's arrays), the block's samples, targets,
/// predictions and the pairs' feature scratch. walk() uploads the state, runs the program over
/// the block in one launch on the lease's stream and reads the state and predictions back. A walk
/// by rows (every replicate its own stream, ResidentWalkArgs::rows) keeps the whole stream in
/// device memory from one walk to the next and uploads only the block's row indices.
class ResidentArena {
 public:
  explicit ResidentArena(cudaStream_t stream) : stream_(stream), timed_(detail::timing_enabled()) {
    for (auto* b : {&tables_, &state_}) b->set_stream(stream);
    for (auto* b : {&y_, &predictions_, &x_double_, &z_double_, &stream_y_, &stream_x_double_}) b->set_stream(stream);
    for (auto* b : {&x_float_, &z_float_, &stream_x_float_}) b->set_stream(stream);
    rows_.set_stream(stream);
    overflow_.set_stream(stream);
    phase_cycles_.set_stream(stream);
    if (timed_) {
      kernel_start_ = std::make_unique<DeviceEvent>();
      kernel_end_ = std::make_unique<DeviceEvent>();
    }
  }
  ~ResidentArena() {
    if (timed_ && replicate_steps_ > 0) report();
  }
  ResidentArena(const ResidentArena&) = delete;
  ResidentArena& operator=(const ResidentArena&) = delete;
  void upload_tables(const std::vector<std::uint64_t>& words) {
    tables_.resize(words.size());
    if (!words.empty()) tables_.copy_from_host(words.data(), words.size());
    OMKL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  const void* tables() const { return tables_.data(); }

  /// make_program(device tables base, device state base) → the program the kernel runs.
  template <typename MakeProgram>
  void walk(void* state, std::size_t state_bytes, const detail::DeviceLease& lease,
            const detail::ResidentWalkArgs<double>& shape, const double* x, const double* y, double* predictions,
            MakeProgram&& make_program) {
    if (shape.max_pairs > detail::kMaxResidentPairs) throw Error("resident walk: more pairs per step than a block holds");
    // Every copy below is ordered on the arena's stream: the kernel must run there too.
    if (lease.stream != static_cast<void*>(stream_)) throw Error("resident walk: the lease's stream is not the arena's");
    const auto started = std::chrono::steady_clock::now();
    const std::size_t words = state_bytes / sizeof(std::uint64_t);
    state_.resize(words);
    state_.copy_from_host(static_cast<const std::uint64_t*>(state), words);
    if (shape.rows) {
      bind_stream(x, y, shape.n_rows, shape.n_features, lease.single_precision);
      rows_.resize(shape.n_steps * shape.n_replicates);
      rows_.copy_from_host(shape.rows, shape.n_steps * shape.n_replicates);
    } else {
      y_.resize(shape.n_samples());
      y_.copy_from_host(y, shape.n_samples());
    }
    predictions_.resize(shape.n_steps * shape.n_replicates);
    const auto program = make_program(tables_.data(), static_cast<void*>(state_.data()));
    if (lease.single_precision) launch<float>(program, lease, shape, x, x_float_, z_float_, stream_x_float_);
    else launch<double>(program, lease, shape, x, x_double_, z_double_, stream_x_double_);
    state_.copy_to_host(static_cast<std::uint64_t*>(state), words);
    predictions_.copy_to_host(predictions, shape.n_steps * shape.n_replicates);
    OMKL_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (timed_) walk_ms_ += detail::elapsed_ms(started, std::chrono::steady_clock::now());
  }

 private:
  /// A walk by rows: the stream (x n_rows × d, y n_rows) into device memory in the walk's
  /// precision, unless the copy there is already this stream — told by the host copy of the
  /// last one uploaded, compared bit for bit (a study's blocks pass the same stream to every
  /// walk; a stream of 10⁴ rows of 20 features compares in well under a millisecond).
  void bind_stream(const double* x, const double* y, std::size_t n_rows, std::size_t d, bool single) {
    const std::size_t n_x = n_rows * d;
    const bool same = bound_x_.size() == n_x && bound_y_.size() == n_rows &&
                      std::memcmp(bound_x_.data(), x, n_x * sizeof(double)) == 0 &&
                      std::memcmp(bound_y_.data(), y, n_rows * sizeof(double)) == 0;
    if (!same) {
      // x's host copy last, so that an upload that throws leaves no stream bound.
      stream_double_current_ = stream_float_current_ = false;
      bound_x_.clear();
      bound_y_.assign(y, y + n_rows);
      stream_y_.resize(n_rows);
      stream_y_.copy_from_host(bound_y_.data(), n_rows);
      bound_x_.assign(x, x + n_x);
    }
    if (single && !stream_float_current_) {
      const std::vector<float> x_single(bound_x_.begin(), bound_x_.end());
      stream_x_float_.resize(n_x);
      stream_x_float_.copy_from_host(x_single.data(), n_x);
      OMKL_CUDA_CHECK(cudaStreamSynchronize(stream_));  // x_single dies here
      stream_float_current_ = true;
    } else if (!single && !stream_double_current_) {
      stream_x_double_.resize(n_x);
      stream_x_double_.copy_from_host(bound_x_.data(), n_x);
      stream_double_current_ = true;
    }
  }

  template <typename Real, typename Program>
  void launch(const Program& program, const detail::DeviceLease& lease, const detail::ResidentWalkArgs<double>& shape,
              const double* x_host, DeviceBuffer<Real>& x_device, DeviceBuffer<Real>& z_device,
              const DeviceBuffer<Real>& stream_x) {
    const std::size_t d = shape.n_features, n_x = shape.n_samples() * d;
    std::vector<Real> x_single;  // float: the samples converted on the host first
    if (!shape.rows) {
      x_device.resize(n_x);
      if constexpr (std::is_same_v<Real, double>) {
        x_device.copy_from_host(x_host, n_x);
      } else {
        x_single.assign(x_host, x_host + n_x);
        x_device.copy_from_host(x_single.data(), n_x);
      }
    }
    z_device.resize(shape.n_replicates * shape.max_pairs * 2 * shape.n_rff);
    detail::ResidentWalkArgs<Real> a;
    a.frequencies = static_cast<const Real*>(lease.frequencies);
    a.theta = static_cast<Real*>(lease.theta);
    a.x = shape.rows ? stream_x.data() : x_device.data();
    a.y = shape.rows ? stream_y_.data() : y_.data();
    a.predictions = predictions_.data();
    a.z_scratch = z_device.data();
    a.n_steps = shape.n_steps;
    a.n_replicates = shape.n_replicates;
    a.n_slots = shape.n_slots;
    a.n_kernels = shape.n_kernels;
    a.n_rff = shape.n_rff;
    a.n_features = d;
    a.max_pairs = shape.max_pairs;
    a.t0 = shape.t0;
    a.feature_scale = shape.feature_scale;
    a.loss = shape.loss;
    a.local_state = shape.local_state;
    a.rows = shape.rows ? rows_.data() : nullptr;
    a.n_rows = shape.n_rows;
    // Unset switches: the program's own shape (features/rf_backend.h, WalkLaunch).
    a.block_per_pair = lease.launch.block_per_pair.value_or(detail::FewPairs<Program>::value);
    a.team_steps = lease.launch.team_steps;
    a.block_threads = lease.launch.walk_threads.value_or(detail::TeamSteps<Program>::value ? 0u : kDefaultResidentThreads);
    overflow_.resize(1);
    overflow_.zero();
    a.overflow = overflow_.data();
    const cudaStream_t stream = static_cast<cudaStream_t>(lease.stream);
    if (timed_) {
      phase_cycles_.resize(shape.n_replicates * detail::kResidentPhases);
      phase_cycles_.zero();
      a.phase_cycles = phase_cycles_.data();
      kernel_start_->record(stream);
    }
    launch_resident_walk(program, a, stream);
    if (timed_) kernel_end_->record(stream);
    unsigned overflowed = 0;
    overflow_.copy_to_host(&overflowed, 1);
    OMKL_CUDA_CHECK(cudaStreamSynchronize(stream));  // x_single dies here, and the caller may reuse x_host
    if (overflowed) throw Error("resident walk: a step planned more pairs than the walk's max_pairs");
    if (timed_) account(shape);
  }

  /// OMKL_TIMING=1: adds a walk's kernel time and its replicates' phase cycles to the totals.
  void account(const detail::ResidentWalkArgs<double>& shape) {
    kernel_ms_ += kernel_end_->ms_since(*kernel_start_);
    std::vector<unsigned long long> cycles(shape.n_replicates * detail::kResidentPhases);
    phase_cycles_.copy_to_host(cycles.data(), cycles.size());
    OMKL_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (std::size_t r = 0; r < shape.n_replicates; ++r)
      for (std::size_t k = 0; k < detail::kResidentPhases; ++k)
        phase_cycles_sum_[k] += static_cast<double>(cycles[r * detail::kResidentPhases + k]);
    replicate_steps_ += static_cast<double>(shape.n_steps * shape.n_replicates);
    steps_ += shape.n_steps;
    ++walks_;
  }

  /// OMKL_TIMING=1, when the arena goes: where its walks' time went (stderr). Per step and
  /// replicate in SM cycles of thread 0, and in µs at the device's rated clock (the clock the
  /// SM ran at may differ: the cycles are what was counted).
  void report() const noexcept {
    int device = 0, clock_khz = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) != cudaSuccess)
      clock_khz = 0;
    double total = 0.0;
    for (double c : phase_cycles_sum_) total += c;
    std::fprintf(stderr, "omkl timing: resident walk: %zu walks, %zu steps; kernels %.2f ms of %.2f ms in walk() "
                 "(the rest: the state, samples and predictions copied, and host work); measured on a clocked "
                 "copy of the kernel, which spills more registers than the walk it stands for: compare the "
                 "phases' shares, and time the untimed walk for the total\n",
                 walks_, steps_, kernel_ms_, walk_ms_);
    std::fprintf(stderr, "omkl timing: resident walk: per step and replicate, thread 0's cycles (us at %.0f MHz):",
                 clock_khz / 1000.0);
    for (std::size_t k = 0; k < detail::kResidentPhases; ++k) {
      const double per_step = phase_cycles_sum_[k] / replicate_steps_;
      std::fprintf(stderr, " %s %.0f (%.2f)", detail::kResidentPhaseNames[k], per_step,
                   clock_khz > 0 ? per_step / (clock_khz / 1000.0) : 0.0);
    }
    const double per_step = total / replicate_steps_;
    std::fprintf(stderr, "; step %.0f (%.2f)\n", per_step, clock_khz > 0 ? per_step / (clock_khz / 1000.0) : 0.0);
  }

  cudaStream_t stream_;
  DeviceBuffer<std::uint64_t> tables_, state_;
  DeviceBuffer<double> y_, predictions_, x_double_, z_double_;
  DeviceBuffer<float> x_float_, z_float_;
  // A walk by rows: the stream in device memory (its targets, its samples in double and in
  // float, each copy current or not), the host copy it was uploaded from, the block's rows.
  DeviceBuffer<double> stream_y_, stream_x_double_;
  DeviceBuffer<float> stream_x_float_;
  DeviceBuffer<std::uint32_t> rows_;
  std::vector<double> bound_x_, bound_y_;
  bool stream_double_current_ = false, stream_float_current_ = false;
  DeviceBuffer<unsigned> overflow_;
  // OMKL_TIMING=1 only.
  bool timed_ = false;
  DeviceBuffer<unsigned long long> phase_cycles_;
  std::unique_ptr<DeviceEvent> kernel_start_, kernel_end_;
  double phase_cycles_sum_[detail::kResidentPhases] = {};
  double replicate_steps_ = 0.0, kernel_ms_ = 0.0, walk_ms_ = 0.0;
  std::size_t steps_ = 0, walks_ = 0;
};

}  // namespace omkl::cuda
