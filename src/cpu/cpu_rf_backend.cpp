/// @file cpu_rf_backend.cpp
/// @brief The CPU implementation of RfBackend.
///
/// Work order. Slots never interact inside the backend (a slot's update needs only its own f),
/// so advance() runs kernel by kernel: for one kernel it walks through all the steps of the
/// block. The kernel's frequencies (d × D) and its slots' θ stay in L1 for the whole block
/// instead of streaming all P·D frequencies and all θ every step.
///
/// Per step and kernel:
///  1. angles a = V x, accumulated feature by feature (a = x₀V₀, then a += x_k V_k, k
///     ascending, one FMA each on the AVX2 path), vectorised across the D rows;
///  2. u = [sin a, cos a] unscaled (cpu/fast_sincos.h). When Σ|x_k|·max_i|V_ik| shows that
///     some angle may exceed the kernel's fast range, a checked variant redoes those angles
///     with std::sin/std::cos; otherwise no range logic runs at all;
///  3. per slot: θ·u and ‖θ‖² in one pass, f = scale·(θ·u), then the update
///     θ ← shrink·θ − (gain·scale)·u in a second pass. The feature scale is applied to the
///     scalars, never to u.
/// Kernels with several slots (AdaRaker) do 1–3 as separate passes, computing the next step's
/// features between 2 and 3 (double-buffered u) to hide the latency of the reductions. A
/// kernel with a single slot (Raker) on the AVX2 path fuses them: one pass per step computes
/// u, applies the previous step's update to θ on the way (deferred until u of this step is
/// in registers) and accumulates θ·u and ‖θ‖²; the last update of a block is applied at the
/// end of advance(), so between calls the state is always fully updated.
///
/// step_selected() (graph-aided algorithms: a host-chosen list of (replicate, slot) pairs per
/// sample) featurises only the named kernels, once per (replicate, kernel) however many of its
/// slots are listed, with the same projection order, sincos and feature-scale handling as
/// advance(), and updates θ in place (no get/set_theta copies).
///
/// Storage: D is padded to a multiple of 4 (Dp); V is kept in blocks of 4 rows × d (so one
/// vector of 4 angles reads d consecutive vectors); the padding of V and θ is 0 and the padded
/// cos entries of u are set to 0, so the padding never changes a result. θ rows are
/// [sin part (Dp) | cos part (Dp)], 64-byte aligned.
///
/// precision=float (problem.single_precision): a float copy of V in blocks of 8 rows × d (rows
/// padded with zeros to a multiple of 8; u and θ keep Dp, a last half block stores 4 rows), and, wherever the bound Σ|x_k|·max_i|V_ik| of a kernel's angles
/// at a step is at most kFloatFastLimit (256), the features come from float arithmetic: float
/// angles and an 8-lane float sincos (cpu/fast_sincos.h), widened to double into u; θ, the
/// dot products and the updates stay in double. Larger angles take the double path above
/// (a float angle of magnitude A is only good to about A·2⁻²⁴). Results are within the float
/// tolerance the CUDA backend's float mode is held to (1e-4 relative against double).
///
/// Determinism: every number depends only on the replicate's own data and on a fixed
/// evaluation order, never on the block length or on other replicates, so stepping one sample
/// at a time and advancing a block give bit-identical results, and predict() returns exactly
/// the f that the next advance() reports. The instruction-set level (portable, AVX2+FMA, or
/// AVX-512 with the AVX2 bits) is fixed when the backend is created (default_simd_level(): the
/// highest the CPU has, checked at run time), so one machine always takes the same path.
#include "cpu/cpu_rf_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "cpu/fast_sincos.h"
#include "cpu/simd_kernels.h"  // OMKL_CPU_HAVE_SIMD_KERNELS
#include "cpu/slot_kernels.h"
#include "omkl/error.h"

namespace omkl::detail::cpu {

namespace {

// The machine's memory, 0 where the system does not say.
double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

class CpuRfBackend final : public RfBackend {
 public:
  CpuRfBackend(const RfProblem& problem, SimdLevel level)
      : RfBackend(problem), level_(usable_level(level)) {
    const auto& p = problem_;
    single_ = p.single_precision;
    padded_ = (p.n_rff + 3) / 4 * 4;
    float_padded_ = (p.n_rff + 7) / 8 * 8;
    // The frequency matrices and θ below, per replicate. More than the machine has would be
    // granted by an overcommitting system and kill the process when touched: refused first,
    // naming the sizes to turn down.
    const double per_replicate =
        8.0 * static_cast<double>(p.n_kernels * p.n_features) * (static_cast<double>(padded_) + 1.0) +
        (single_ ? 4.0 * static_cast<double>(p.n_kernels * p.n_features * float_padded_) : 0.0) +
        16.0 * static_cast<double>(p.n_slots() * padded_);
    const double needed = per_replicate * static_cast<double>(p.n_replicates), memory = physical_memory_bytes();
    if (memory > 0 && needed > memory) {
      char sizes[96];
      std::snprintf(sizes, sizeof sizes, "%.1f GiB, more than this machine's %.1f GiB", needed / (1 << 30),
                    memory / (1 << 30));
      throw Error("random features: " + std::to_string(p.n_replicates) + " replicate(s) × " +
                  std::to_string(p.n_kernels) + " kernels × D = " + std::to_string(p.n_rff) + " features of " +
                  std::to_string(p.n_features) + " inputs need " + sizes +
                  ": the model does not fit in memory (fewer --seeds, a smaller D or dictionary)");
    }
    for (std::size_t r = 0; r < p.n_replicates; ++r) {
      frequencies_.emplace_back(p.n_kernels * p.n_features * padded_);
      if (single_) float_frequencies_.emplace_back(p.n_kernels * p.n_features * float_padded_);
      column_max_.emplace_back(p.n_kernels * p.n_features, 0.0);
      theta_.emplace_back(p.n_slots() * 2 * padded_);
    }
    angle_ = AlignedArray(padded_);
    u_ = AlignedArray(4 * padded_);  // two buffers: this step's and the next step's
    const SlotsByKernel groups = slots_by_kernel(p);
    kernel_slots_.resize(p.n_kernels);
    for (std::size_t k = 0; k < p.n_kernels; ++k)
      kernel_slots_[k].assign(groups.slots.begin() + groups.offsets[k], groups.slots.begin() + groups.offsets[k + 1]);
    const std::size_t most = groups.largest;
    one_slot_per_kernel_ = most <= 1;
    gain_.resize(most);
    shrink_.resize(most);
    pending_.resize(most);
  }

  SimdLevel level() const { return level_; }

  // `level`, or the next lower one the CPU has.
  static SimdLevel usable_level(SimdLevel level) {
    if (level == SimdLevel::Avx512 && !simd_level_available(level)) level = SimdLevel::Avx2Fma;
    return simd_level_available(level) ? level : SimdLevel::Portable;
  }

  // f(kernels) with the kernel set of level_ (an empty struct of static functions).
  template <class F>
  void with_kernels(const F& f) {
#if OMKL_CPU_HAVE_SIMD_KERNELS
    if (level_ == SimdLevel::Avx512) return f(Avx512Kernels{});
    if (level_ == SimdLevel::Avx2Fma) return f(Avx2Kernels{});
#endif
    f(PortableKernels{});
  }

  void set_frequencies(std::size_t r, std::size_t kernel, const double* V) override {
    const auto& p = problem_;
    check_replicate(r);
    check_kernel(kernel);
    double* v = kernel_frequencies(r, kernel);
    double* column_max = column_max_[r].data() + kernel * p.n_features;
    for (std::size_t k = 0; k < p.n_features; ++k) column_max[k] = 0.0;
    for (std::size_t i = 0; i < p.n_rff; ++i)
      for (std::size_t k = 0; k < p.n_features; ++k) {
        const double value = V[i * p.n_features + k];
        v[frequency_index(i, k)] = value;
        if (single_)
          float_frequencies_[r].data()[kernel * p.n_features * float_padded_ + float_index(i, k)] =
              static_cast<float>(value);
        // NaN stays NaN in the bound, which then sends every step to the checked path.
        const double magnitude = std::fabs(value);
        if (std::isnan(magnitude) || magnitude > column_max[k]) column_max[k] = magnitude;
      }
  }

  void get_frequencies(std::size_t r, std::size_t kernel, double* V) const override {
    const auto& p = problem_;
    check_replicate(r);
    check_kernel(kernel);
    const double* v = kernel_frequencies(r, kernel);
    for (std::size_t i = 0; i < p.n_rff; ++i)
      for (std::size_t k = 0; k < p.n_features; ++k) V[i * p.n_features + k] = v[frequency_index(i, k)];
  }

  void advance(const double* x, const double* y, std::size_t n_steps, std::int64_t t0,
               const std::vector<SlotSchedule>& schedules, double* f, double* norm2) override {
    check_schedules(schedules);
    with_kernels([&](auto kernels) {
      using K = decltype(kernels);
      if (norm2) advance_impl<K, true>(x, y, n_steps, t0, schedules, f, norm2);
      else advance_impl<K, false>(x, y, n_steps, t0, schedules, f, norm2);
    });
  }

  void predict(const double* x, std::int64_t t, const std::vector<SlotSchedule>& schedules,
               double* f) override {
    check_schedules(schedules);
    with_kernels([&](auto kernels) { predict_impl<decltype(kernels)>(x, 1, t, schedules, f); });
  }

  void predict_rows(const double* x, std::size_t n_rows, std::int64_t t, const std::vector<SlotSchedule>& schedules,
                    double* f) override {
    check_schedules(schedules);
    with_kernels([&](auto kernels) { predict_impl<decltype(kernels)>(x, n_rows, t, schedules, f); });
  }

  void step_selected(const double* x, double y, const PairStep* pairs, std::size_t n_pairs,
                     double* f, double* norm2) override {
    with_kernels([&](auto kernels) { step_selected_impl<decltype(kernels)>(x, y, pairs, n_pairs, f, norm2); });
  }

  void step_selected_rows(const double* x, const double* y, std::size_t n_rows, const PairStep* pairs,
                          std::size_t pairs_per_row, double* f, double* norm2) override {
    if (n_rows <= 1 || !rows_interleave(pairs, n_rows, pairs_per_row))
      return RfBackend::step_selected_rows(x, y, n_rows, pairs, pairs_per_row, f, norm2);
    with_kernels([&](auto kernels) {
      step_selected_rows_impl<decltype(kernels)>(x, y, n_rows, pairs, pairs_per_row, f, norm2);
    });
  }

  void aggregate_round(const double* x, std::size_t n_clients, const ClientUpdate* updates, std::size_t n_updates,
                       double scale, UploadForm upload, double* norm2) override {
    with_kernels([&](auto kernels) {
      aggregate_round_impl<decltype(kernels)>(x, n_clients, updates, n_updates, scale, upload, norm2);
    });
  }

  void client_update(std::size_t r, std::size_t slot, const double* x, double a, double b, double* g) override {
    check_replicate(r);
    check_slot(slot);
    with_kernels([&](auto kernels) { client_update_impl<decltype(kernels)>(r, slot, x, a, b, g); });
  }

  void get_theta(std::size_t r, std::size_t slot, double* out) const override {
    check_replicate(r);
    check_slot(slot);
    const double* theta = theta_row(r, slot);
    const std::size_t D = problem_.n_rff;
    std::copy(theta, theta + D, out);
    std::copy(theta + padded_, theta + padded_ + D, out + D);
  }

  void set_theta(std::size_t r, std::size_t slot, const double* in) override {
    check_replicate(r);
    check_slot(slot);
    double* theta = theta_row(r, slot);
    const std::size_t D = problem_.n_rff;
    std::copy(in, in + D, theta);
    std::copy(in + D, in + 2 * D, theta + padded_);
  }

 private:
  void check_replicate(std::size_t r) const {
    if (r >= problem_.n_replicates) throw Error("CPU backend: replicate index out of range");
  }
  void check_kernel(std::size_t kernel) const {
    if (kernel >= problem_.n_kernels) throw Error("CPU backend: kernel index out of range");
  }
  void check_slot(std::size_t slot) const {
    if (slot >= problem_.n_slots()) throw Error("CPU backend: slot index out of range");
  }
  void check_schedules(const std::vector<SlotSchedule>& schedules) const {
    if (schedules.size() != problem_.n_slots()) throw Error("CPU backend: one schedule per slot expected");
  }

  // Block layout of one kernel's V: rows in groups of 4, each group d × 4 (feature-major), so
  // that one vector of 4 angles reads d consecutive 4-vectors.
  std::size_t frequency_index(std::size_t row, std::size_t feature) const {
    return ((row / 4) * problem_.n_features + feature) * 4 + row % 4;
  }
  // The float copy's layout: groups of 8 rows, each d × 8.
  std::size_t float_index(std::size_t row, std::size_t feature) const {
    return ((row / 8) * problem_.n_features + feature) * 8 + row % 8;
  }
  const float* kernel_float_frequencies(std::size_t r, std::size_t kernel) const {
    return float_frequencies_[r].data() + kernel * problem_.n_features * float_padded_;
  }
  double* kernel_frequencies(std::size_t r, std::size_t kernel) {
    return frequencies_[r].data() + kernel * problem_.n_features * padded_;
  }
  const double* kernel_frequencies(std::size_t r, std::size_t kernel) const {
    return frequencies_[r].data() + kernel * problem_.n_features * padded_;
  }
  double* theta_row(std::size_t r, std::size_t slot) { return theta_[r].data() + slot * 2 * padded_; }
  const double* theta_row(std::size_t r, std::size_t slot) const {
    return theta_[r].data() + slot * 2 * padded_;
  }

  // Σ|x_k|·max_i|V_ik|: a bound on every |angle| of `kernel` at sample x (NaN and ∞ fail
  // every comparison with a range limit below).
  double angle_bound(std::size_t r, std::size_t kernel, const double* x) const {
    const auto& p = problem_;
    const double* column_max = column_max_[r].data() + kernel * p.n_features;
    double bound = 0.0;
    for (std::size_t k = 0; k < p.n_features; ++k) bound += std::fabs(x[k]) * column_max[k];
    return bound;
  }
  // Which feature map serves angles within `bound`: precision=float's float map where they
  // are small enough, else K's sincos without range logic within its fast range, else the
  // checked variant.
  enum class FeatureMap { Float, Fast, Checked };
  template <class K>
  FeatureMap feature_map(double bound) const {
    if (single_ && bound <= kFloatFastLimit) return FeatureMap::Float;
    return bound <= K::kFastLimit ? FeatureMap::Fast : FeatureMap::Checked;
  }

  // u = features of `kernel` of replicate r at sample x. Within the fast range the kernels
  // skip all range logic; otherwise the checked variant redoes the out-of-range angles with
  // std::sin/std::cos.
  template <class K>
  void compute_features(std::size_t r, std::size_t kernel, const double* x, double* u) {
    const auto& p = problem_;
    const double* v = kernel_frequencies(r, kernel);
    switch (feature_map<K>(angle_bound(r, kernel, x))) {
      case FeatureMap::Float:
        K::features_float(kernel_float_frequencies(r, kernel), x, p.n_features, p.n_rff, padded_, u);
        break;
      case FeatureMap::Fast:
        K::template features<false>(v, x, p.n_features, p.n_rff, padded_, angle_.data(), u);
        break;
      case FeatureMap::Checked:
        K::template features<true>(v, x, p.n_features, p.n_rff, padded_, angle_.data(), u);
        break;
    }
  }

  // θ·u and ‖θ‖² of slot s (the only slot of `kernel`) at sample x, with u into `u`; if
  // `pending`, θ first takes the update θ ← shrink·θ − gain·u_prev. One pass over V, u and θ.
  template <class K>
  void single_slot_pass(std::size_t r, std::size_t kernel, std::size_t s, const double* x,
                        double* u, const double* u_prev, bool pending, double shrink,
                        double gain, double& dot, double& norm2) {
    const auto& p = problem_;
    const double* v = kernel_frequencies(r, kernel);
    double* theta = theta_row(r, s);
    const FeatureMap map = feature_map<K>(angle_bound(r, kernel, x));
    if (map == FeatureMap::Float) {
      K::fused_float_pass(kernel_float_frequencies(r, kernel), x, p.n_features, p.n_rff, padded_, u, theta,
                          u_prev, pending, shrink, gain, dot, norm2);
    } else if (map == FeatureMap::Fast) {
      K::fused_pass(v, x, p.n_features, p.n_rff, padded_, u, theta, u_prev, pending, shrink, gain,
                    dot, norm2);
    } else {
      K::template features<true>(v, x, p.n_features, p.n_rff, padded_, angle_.data(), u);
      K::loaded_pass(u, padded_, theta, u_prev, pending, shrink, gain, dot, norm2);
    }
  }

  // A kernel with a single slot (Raker): one pass per step does the features, the previous
  // step's update (deferred until the features of this step are known) and this step's
  // θ·u and ‖θ‖²; the last update of the block is applied at the end, so the state between
  // calls is the same as in the general loop.
  template <class K, bool kNorm>
  void single_slot_steps(std::size_t r, std::size_t kernel, std::size_t s, const double* x,
                         const double* y, std::size_t n_steps, std::int64_t t0,
                         const SlotSchedule& sc, double* f, double* norm2) {
    const auto& p = problem_;
    const std::size_t R = p.n_replicates, S = p.n_slots(), d = p.n_features, n = 2 * padded_;
    double* const buffers[2] = {u_.data(), u_.data() + n};
    double* theta = theta_row(r, s);
    bool pending = false;
    double shrink = 1.0, gain = 0.0;
    int current = 0;
    for (std::size_t step = 0; step < n_steps; ++step) {
      const std::int64_t t = t0 + static_cast<std::int64_t>(step);
      const std::size_t out = (step * R + r) * S + s;
      if (t < sc.active_from) {  // (a slot stays active once it is: nothing is pending here)
        f[out] = 0.0;
        if (kNorm) norm2[out] = 0.0;
        continue;
      }
      if (schedule_resets(sc, t)) {
        std::fill(theta, theta + n, 0.0);
        pending = false;
      }
      double dot, nrm;
      single_slot_pass<K>(r, kernel, s, x + step * d, buffers[current], buffers[current ^ 1],
                          pending, shrink, gain, dot, nrm);
      const double fs = p.feature_scale * dot;
      f[out] = fs;
      if (kNorm) norm2[out] = nrm;
      step_scalars(sc, t, p.loss, fs, y[step], p.feature_scale, shrink, gain);
      pending = true;
      current ^= 1;
    }
    if (pending) K::update(theta, buffers[current ^ 1], n, shrink, gain);
  }

  // Kernel by kernel, step by step. Per step: (a) for every slot of the kernel, the previous
  // step's θ update (deferred until now so that θ is read once per step) and θ·u, ‖θ‖², giving
  // f and the step's scalars; (b) the features of the next step into the other buffer (the
  // previous step's u is no longer needed). The last updates are applied at the end, so the
  // state between calls is the same as with immediate updates.
  template <class K, bool kNorm>
  void advance_impl(const double* x, const double* y, std::size_t n_steps, std::int64_t t0,
                    const std::vector<SlotSchedule>& schedules, double* f, double* norm2) {
    const auto& p = problem_;
    const std::size_t R = p.n_replicates, S = p.n_slots(), d = p.n_features;
    const std::size_t n = 2 * padded_;
    const double scale = p.feature_scale;
    double* const buffers[2] = {u_.data(), u_.data() + n};
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t kernel = 0; kernel < p.n_kernels; ++kernel) {
        const std::vector<std::size_t>& slots = kernel_slots_[kernel];
        if (slots.empty()) continue;
        if constexpr (K::kFusedSingleSlot) {
          if (slots.size() == 1) {
            single_slot_steps<K, kNorm>(r, kernel, slots[0], x, y, n_steps, t0, schedules[slots[0]],
                                        f, norm2);
            continue;
          }
        }
        const auto any_active = [&](std::int64_t t) {
          for (std::size_t s : slots)
            if (t >= schedules[s].active_from) return true;
          return false;
        };
        int current = 0;
        std::fill(pending_.begin(), pending_.end(), 0);
        if (any_active(t0)) compute_features<K>(r, kernel, x, buffers[0]);
        for (std::size_t step = 0; step < n_steps; ++step) {
          const std::int64_t t = t0 + static_cast<std::int64_t>(step);
          const double* u = buffers[current];
          const double* u_prev = buffers[current ^ 1];
          const std::size_t row = (step * R + r) * S;
          for (std::size_t i = 0; i < slots.size(); ++i) {
            const std::size_t s = slots[i];
            const SlotSchedule& sc = schedules[s];
            if (t < sc.active_from) {  // (a slot stays active once it is: nothing is pending here)
              f[row + s] = 0.0;
              if (kNorm) norm2[row + s] = 0.0;
              continue;
            }
            double* theta = theta_row(r, s);
            if (schedule_resets(sc, t)) {
              std::fill(theta, theta + n, 0.0);
              pending_[i] = 0;
            }
            double dot, nrm;
            K::template update_dot_norm<kNorm>(theta, u_prev, pending_[i] != 0, shrink_[i], gain_[i], u, n, dot, nrm);
            const double fs = scale * dot;
            f[row + s] = fs;
            if (kNorm) norm2[row + s] = nrm;
            step_scalars(sc, t, p.loss, fs, y[step], scale, shrink_[i], gain_[i]);
            pending_[i] = 1;
          }
          if (step + 1 < n_steps && any_active(t + 1))
            compute_features<K>(r, kernel, x + (step + 1) * d, buffers[current ^ 1]);
          current ^= 1;
        }
        for (std::size_t i = 0; i < slots.size(); ++i)
          if (pending_[i]) K::update(theta_row(r, slots[i]), buffers[current ^ 1], n, shrink_[i], gain_[i]);
      }
    }
  }

  // n_rows samples (row-major), f n_rows × R × S. Each kernel's rows one after another, so that
  // its V and θ are read from cache after the first row; a row's numbers do not depend on the
  // others (predict() is the one-row case).
  template <class K>
  void predict_impl(const double* x, std::size_t n_rows, std::int64_t t, const std::vector<SlotSchedule>& schedules,
                    double* f) {
    const auto& p = problem_;
    const std::size_t S = p.n_slots(), n = 2 * padded_, d = p.n_features, RS = p.n_replicates * S;
    for (std::size_t r = 0; r < p.n_replicates; ++r) {
      for (std::size_t kernel = 0; kernel < p.n_kernels; ++kernel) {
        const std::vector<std::size_t>& slots = kernel_slots_[kernel];
        if (slots.empty()) continue;
        for (std::size_t row = 0; row < n_rows; ++row) {
          const double* xr = x + row * d;
          double* fr = f + row * RS + r * S;
          if constexpr (K::kFusedSingleSlot) {
            if (slots.size() == 1) {  // θ·u exactly as single_slot_steps computes it
              const std::size_t s = slots[0];
              const SlotSchedule& sc = schedules[s];
              double dot = 0.0, unused;
              const bool fresh = t < sc.active_from || schedule_resets(sc, t);
              if (!fresh) single_slot_pass<K>(r, kernel, s, xr, u_.data(), nullptr, false, 1.0, 0.0, dot, unused);
              fr[s] = fresh ? 0.0 : p.feature_scale * dot;
              continue;
            }
          }
          compute_features<K>(r, kernel, xr, u_.data());
          for (std::size_t s : slots) {
            const SlotSchedule& sc = schedules[s];
            double dot = 0.0, unused;
            const bool fresh = t < sc.active_from || schedule_resets(sc, t);
            if (!fresh) K::template dot_norm_fn<false>(theta_row(r, s), u_.data(), n, dot, unused);
            fr[s] = fresh ? 0.0 : p.feature_scale * dot;
          }
        }
      }
    }
  }

  // step_selected(): pairs grouped by (replicate, kernel), in call order within a group; the
  // features of a group are computed once. Per pair: θ·u and ‖θ‖² of the θ before the update,
  // f = scale·(θ·u), then θ ← shrink·θ − (rate·C'(f, y)·scale)·u. A pair's numbers depend only
  // on its replicate's V and θ and on x (the same kernels and order whatever the other pairs),
  // so a predict-only call gives exactly the f of the next step with the same selection.
  template <class K>
  void step_selected_impl(const double* x, double y, const PairStep* pairs, std::size_t n_pairs,
                          double* f, double* norm2) {
    const auto& p = problem_;
    order_.resize(n_pairs);
    bool sorted = true;
    std::uint64_t previous = 0;
    for (std::size_t i = 0; i < n_pairs; ++i) {
      const PairStep& pair = pairs[i];
      if (pair.replicate >= p.n_replicates || pair.slot >= p.n_slots())
        throw Error("step_selected: pair out of range");
      const std::uint64_t key = group_key(pair);
      if (i > 0 && key < previous) sorted = false;
      previous = key;
      order_[i] = static_cast<std::uint32_t>(i);
    }
    // With one slot per kernel (the graph-aided algorithms) no two pairs share features and
    // the call order is kept; otherwise pairs of one (replicate, kernel) are brought together.
    if (!sorted && !one_slot_per_kernel_)
      std::stable_sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return group_key(pairs[a]) < group_key(pairs[b]);
      });
    for (std::size_t i = 0; i < n_pairs; ++i) {
      const std::size_t index = order_[i];
      const bool first = i == 0 || group_key(pairs[order_[i - 1]]) != group_key(pairs[index]);
      pair_step<K>(pairs[index], x, y, first, f[index], norm2 ? norm2 + index : nullptr);
    }
  }

  // One pair of step_selected(): θ·u and ‖θ‖² of θ before the update, f = scale·θ·u, then
  // θ ← shrink·θ − (rate·C'(f, y)·scale)·u. The features u of x are computed on the way where
  // `fresh` (a group's first pair), else read from u_ (the group's earlier pairs').
  template <class K>
  void pair_step(const PairStep& pair, const double* x, double y, bool fresh, double& f, double* norm2) {
    const auto& p = problem_;
    const std::size_t n = 2 * padded_, r = pair.replicate, s = pair.slot, kernel = p.slot_kernel[s];
    const double scale = p.feature_scale;
    double* u = u_.data();
    double* theta = theta_row(r, s);
    double dot, nrm;
    if constexpr (K::kFusedSingleSlot) {
      // The group's first pair computes the features on the way (fused_pass); the others
      // read them (loaded_pass, the same bits for the same u).
      if (fresh) single_slot_pass<K>(r, kernel, s, x, u, nullptr, false, 1.0, 0.0, dot, nrm);
      else K::loaded_pass(u, padded_, theta, nullptr, false, 1.0, 0.0, dot, nrm);
    } else {
      if (fresh) compute_features<K>(r, kernel, x, u);
      K::template dot_norm_fn<true>(theta, u, n, dot, nrm);
    }
    const double fs = scale * dot;
    f = fs;
    if (norm2) *norm2 = nrm;
    if (pair.rate == 0.0 && pair.shrink == 1.0) return;
    const double gain = pair.rate * loss_derivative(p.loss, fs, y) * scale;
    K::update(theta, u, n, pair.shrink, gain);
  }

  // Whether step_selected_rows() may take the rows' pairs position by position: every pair in
  // range, each row's pairs in strictly ascending (replicate, kernel) order (so step_selected()
  // would take them in call order, each computing its own features), and no (replicate, slot)
  // in two rows (so the rows touch disjoint θ). Otherwise the rows go one by one.
  bool rows_interleave(const PairStep* pairs, std::size_t n_rows, std::size_t pairs_per_row) {
    const auto& p = problem_;
    const std::size_t S = p.n_slots();
    ++row_stamp_;
    if (row_stamps_.size() != p.n_replicates * S) row_stamps_.assign(p.n_replicates * S, 0);
    for (std::size_t row = 0; row < n_rows; ++row)
      for (std::size_t i = 0; i < pairs_per_row; ++i) {
        const PairStep& pair = pairs[row * pairs_per_row + i];
        if (pair.replicate >= p.n_replicates || pair.slot >= S) return false;
        if (i > 0 && group_key(pair) <= group_key(pairs[row * pairs_per_row + i - 1])) return false;
        std::uint64_t& stamp = row_stamps_[std::size_t{pair.replicate} * S + pair.slot];
        if (stamp == row_stamp_) return false;
        stamp = row_stamp_;
      }
    return true;
  }

  // step_selected_rows(): pair position i of every row, then i + 1, …; each pair as
  // step_selected() steps it, computing its own features (one pair per group).
  template <class K>
  void step_selected_rows_impl(const double* x, const double* y, std::size_t n_rows, const PairStep* pairs,
                               std::size_t pairs_per_row, double* f, double* norm2) {
    const std::size_t d = problem_.n_features;
    for (std::size_t i = 0; i < pairs_per_row; ++i)
      for (std::size_t row = 0; row < n_rows; ++row) {
        const std::size_t index = row * pairs_per_row + i;
        pair_step<K>(pairs[index], x + row * d, y[row], true, f[index], norm2 ? norm2 + index : nullptr);
      }
  }

  // aggregate_round(): updates grouped by (replicate, slot), in call order within a group. Per
  // update the client's features u (the same compute_features as every other path), then
  // acc += server_term(θ, (a·scale)·u + b·θ); at the end of the group θ ← θ − scale_round·acc.
  template <class K>
  void aggregate_round_impl(const double* x, std::size_t n_clients, const ClientUpdate* updates,
                            std::size_t n_updates, double round_scale, UploadForm upload, double* norm2) {
    const auto& p = problem_;
    const std::size_t S = p.n_slots(), n = 2 * padded_;
    order_.resize(n_updates);
    for (std::size_t i = 0; i < n_updates; ++i) {
      const ClientUpdate& c = updates[i];
      if (c.replicate >= p.n_replicates || c.slot >= S || c.client >= n_clients)
        throw Error("aggregate_round: update out of range");
      order_[i] = static_cast<std::uint32_t>(i);
    }
    const auto key = [&](std::uint32_t i) { return std::uint64_t{updates[i].replicate} * S + updates[i].slot; };
    std::stable_sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
    if (!accumulator_.data()) accumulator_ = AlignedArray(n);
    double* acc = accumulator_.data();
    double* u = u_.data();
    for (std::size_t first = 0; first < n_updates;) {
      std::size_t last = first;
      while (last < n_updates && key(order_[last]) == key(order_[first])) ++last;
      const ClientUpdate& head = updates[order_[first]];
      const std::size_t r = head.replicate, kernel = p.slot_kernel[head.slot];
      double* theta = theta_row(r, head.slot);
      std::fill(acc, acc + n, 0.0);
      for (std::size_t i = first; i < last; ++i) {
        const ClientUpdate& c = updates[order_[i]];
        compute_features<K>(r, kernel, x + std::size_t{c.client} * p.n_features, u);
        const double a = c.a * p.feature_scale, b = c.b;
        for (std::size_t j = 0; j < n; ++j) acc[j] += server_term(theta[j], a * u[j] + b * theta[j], upload);
      }
      for (std::size_t j = 0; j < n; ++j) theta[j] -= round_scale * acc[j];
      first = last;
    }
    if (!norm2) return;
    for (std::size_t r = 0; r < p.n_replicates; ++r)
      for (std::size_t s = 0; s < S; ++s) {
        const double* theta = theta_row(r, s);
        double n2 = 0.0;
        for (std::size_t j = 0; j < n; ++j) n2 += theta[j] * theta[j];
        norm2[r * S + s] = n2;
      }
  }

  // client_update(): the term aggregate_round_impl() adds for one update, unpadded.
  template <class K>
  void client_update_impl(std::size_t r, std::size_t slot, const double* x, double a, double b, double* g) {
    const auto& p = problem_;
    const std::size_t D = p.n_rff;
    double* u = u_.data();
    compute_features<K>(r, p.slot_kernel[slot], x, u);
    const double* theta = theta_row(r, slot);
    const double scaled = a * p.feature_scale;
    for (std::size_t j = 0; j < D; ++j) {
      g[j] = scaled * u[j] + b * theta[j];
      g[D + j] = scaled * u[padded_ + j] + b * theta[padded_ + j];
    }
  }

  std::uint64_t group_key(const PairStep& pair) const {
    return static_cast<std::uint64_t>(pair.replicate) * problem_.n_kernels +
           problem_.slot_kernel[pair.slot];
  }

  std::vector<std::uint64_t> row_stamps_;        // rows_interleave(): the call that last named each slot
  std::uint64_t row_stamp_ = 0;
  SimdLevel level_;
  bool single_ = false;                          // precision=float: the float feature map
  std::size_t padded_ = 0;                       // D rounded up to a multiple of 4
  std::size_t float_padded_ = 0;                 // D rounded up to a multiple of 8 (the float V)
  std::vector<AlignedArray> frequencies_;        // per replicate: P × d × Dp (Vᵀ per kernel)
  std::vector<AlignedFloats> float_frequencies_; // precision=float: the same in float, 8-row blocks
  std::vector<std::vector<double>> column_max_;  // per replicate: P × d, max_i |V_ik|
  std::vector<AlignedArray> theta_;              // per replicate: S × 2Dp
  std::vector<std::vector<std::size_t>> kernel_slots_;  // slots of each kernel, ascending
  AlignedArray angle_;                           // scratch: V x of one kernel (Dp)
  AlignedArray u_;                               // scratch: 2 × [sin | cos] of one kernel (2Dp)
  std::vector<double> gain_, shrink_;            // scratch: the step's scalars per slot of a kernel
  std::vector<char> pending_;                    // scratch: whether that update is still to apply
  std::vector<std::uint32_t> order_;             // scratch: step_selected's pairs by (replicate, kernel)
  AlignedArray accumulator_;                     // scratch: aggregate_round's Σ g of one slot (2Dp)
  bool one_slot_per_kernel_ = false;             // no kernel has two slots
};

}  // namespace

std::unique_ptr<RfBackend> make_cpu_rf_backend(const RfProblem& problem, SimdLevel level) {
  return std::make_unique<CpuRfBackend>(problem, level);
}

std::unique_ptr<RfBackend> make_cpu_rf_backend(const RfProblem& problem) {
  return make_cpu_rf_backend(problem, default_simd_level());
}

SimdLevel cpu_backend_simd_level(const RfBackend& backend) {
  const auto* cpu = dynamic_cast<const CpuRfBackend*>(&backend);
  return cpu ? cpu->level() : SimdLevel::Portable;
}

}  // namespace omkl::detail::cpu
