/// @file slot_kernels.h
/// @brief The CPU backend's inner loops, one set per instruction-set level: the feature map
/// (angles V x, then [sin | cos]), the per-slot dot products and norms, and the θ update,
/// as PortableKernels (plain loops) and Avx2Kernels (AVX2 + FMA intrinsics, built where the
/// compiler supports them and chosen at run time). CpuRfBackend (cpu_rf_backend.cpp) is
/// written once over either set; the layouts they assume (D padded to a multiple of 4, V in
/// blocks of 4 rows × d, 64-byte aligned rows) are described there. Internal to that file.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "core/loss.h"
#include "core/rate_schedule.h"
#include "cpu/fast_sincos.h"
#include "features/rf_backend.h"

namespace omkl::detail::cpu {

/// A 64-byte aligned, zero-initialised array of T (double, or float for precision=float).
template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    if (bytes == 0) return;
    void* p = std::aligned_alloc(64, bytes);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    data_.reset(static_cast<T*>(p));
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data_;
};
using AlignedArray = AlignedBuffer<double>;
using AlignedFloats = AlignedBuffer<float>;

/// The scalars of one slot's step at time t: shrink and gain·scale of
/// θ ← shrink·θ − (gain·scale)·u, from the prediction f = scale·(θ·u).
inline void step_scalars(const SlotSchedule& sc, std::int64_t t, LossKind loss, double f, double y,
                         double scale, double& shrink, double& gain) {
  const double eta = scheduled_rate(sc.eta, sc.inv_sqrt_t, t);
  shrink = 1.0 - sc.shrink_scale * eta * sc.lambda;
  gain = sc.step_scale * eta * loss_derivative(loss, f, y) * scale;
}

/// Portable kernels: plain loops (the compiler may vectorise them for the baseline ISA).
struct PortableKernels {
  static constexpr double kFastLimit = kPortableFastLimit;
  static constexpr bool kFusedSingleSlot = false;

  /// angle = V x (V in the block layout, see CpuRfBackend), u = [sin angle | cos angle]
  /// (2·padded entries).
  template <bool kChecked>
  static void features(const double* v, const double* x, std::size_t d, std::size_t n_rff,
                       std::size_t padded, double* angle, double* u) {
    for (std::size_t j = 0; j < padded; j += 4, v += 4 * d) {
      for (std::size_t l = 0; l < 4; ++l) angle[j + l] = x[0] * v[l];
      for (std::size_t k = 1; k < d; ++k)
        for (std::size_t l = 0; l < 4; ++l) angle[j + l] += x[k] * v[4 * k + l];
    }
    if (kChecked) {
      sincos_portable(angle, u, u + padded, padded);
    } else {
      for (std::size_t j = 0; j < padded; ++j) sincos_portable_fast(angle[j], u[j], u[padded + j]);
    }
    for (std::size_t j = n_rff; j < padded; ++j) u[padded + j] = 0.0;
  }

  /// precision=float: u = [sin | cos](V x) with V (vf, in blocks of 8 rows × d, float, zero
  /// rows up to a multiple of 8), x and the angles in float, |angles| ≤ kFloatFastLimit (the
  /// caller's bound); u stored as double (padded a multiple of 4: a last block of 8 rows
  /// stores its first 4 only).
  static void features_float(const float* vf, const double* x, std::size_t d, std::size_t n_rff,
                             std::size_t padded, double* u) {
    for (std::size_t j = 0; j < padded; j += 8, vf += 8 * d) {
      float angle[8];
      for (std::size_t l = 0; l < 8; ++l) angle[l] = static_cast<float>(x[0]) * vf[l];
      for (std::size_t k = 1; k < d; ++k)
        for (std::size_t l = 0; l < 8; ++l) angle[l] += static_cast<float>(x[k]) * vf[8 * k + l];
      const std::size_t lanes = std::min<std::size_t>(8, padded - j);
      for (std::size_t l = 0; l < lanes; ++l) {
        float s, c;
        sincos_float_portable(angle[l], s, c);
        u[j + l] = s;
        u[padded + j + l] = c;
      }
    }
    for (std::size_t j = n_rff; j < padded; ++j) u[padded + j] = 0.0;
  }

  /// θ·u and (if kNorm) ‖θ‖² over n entries (n a multiple of 8), in four interleaved sums.
  template <bool kNorm>
  static void dot_norm(const double* theta, const double* u, std::size_t n, double& dot,
                       double& norm2) {
    double sd[4] = {0.0, 0.0, 0.0, 0.0}, sn[4] = {0.0, 0.0, 0.0, 0.0};
    for (std::size_t i = 0; i < n; i += 4)
      for (std::size_t l = 0; l < 4; ++l) {
        sd[l] += theta[i + l] * u[i + l];
        if (kNorm) sn[l] += theta[i + l] * theta[i + l];
      }
    dot = (sd[0] + sd[1]) + (sd[2] + sd[3]);
    norm2 = kNorm ? (sn[0] + sn[1]) + (sn[2] + sn[3]) : 0.0;
  }

  template <bool kNorm>
  static void dot_norm_fn(const double* theta, const double* u, std::size_t n, double& dot,
                          double& norm2) {
    dot_norm<kNorm>(theta, u, n, dot, norm2);
  }

  /// θ ← shrink·θ − gain·u.
  static void update(double* theta, const double* u, std::size_t n, double shrink, double gain) {
    for (std::size_t i = 0; i < n; ++i) theta[i] = shrink * theta[i] - gain * u[i];
  }

  /// If `pending`, update(θ, u_prev, shrink, gain); then dot_norm(θ, u): one pass over θ, the
  /// same bits as the two calls.
  template <bool kNorm>
  static void update_dot_norm(double* theta, const double* u_prev, bool pending, double shrink, double gain,
                              const double* u, std::size_t n, double& dot, double& norm2) {
    if (!pending) return dot_norm<kNorm>(theta, u, n, dot, norm2);
    double sd[4] = {0.0, 0.0, 0.0, 0.0}, sn[4] = {0.0, 0.0, 0.0, 0.0};
    for (std::size_t i = 0; i < n; i += 4)
      for (std::size_t l = 0; l < 4; ++l) {
        const double t = shrink * theta[i + l] - gain * u_prev[i + l];
        theta[i + l] = t;
        sd[l] += t * u[i + l];
        if (kNorm) sn[l] += t * t;
      }
    dot = (sd[0] + sd[1]) + (sd[2] + sd[3]);
    norm2 = kNorm ? (sn[0] + sn[1]) + (sn[2] + sn[3]) : 0.0;
  }
};

/// The kernels of the FMA levels (AVX2 + FMA arithmetic, every FMA explicit): Avx2Fma on 4-lane
/// vectors, Avx512 with the feature map's sincos on 8-lane vectors and the same bits (the rest
/// is the Avx2Fma code). Entry points only: defined from one template (slot_kernels_simd.h) in
/// simd_kernels_avx2.cpp and simd_kernels_avx512.cpp, the files compiled with those instruction
/// sets; call a level's only where simd_level_available(level).
template <SimdLevel kLevel>
struct SimdSlotKernels {
  static_assert(kLevel != SimdLevel::Portable, "the portable level is PortableKernels");
  static constexpr double kFastLimit = kAvx2FastLimit;
  static constexpr bool kFusedSingleSlot = true;

  /// angle = V x, u = [sin angle | cos angle] (PortableKernels::features). kChecked: some
  /// |angle| may exceed kFastLimit (the caller's bound says so); those entries are redone with
  /// std::sin/std::cos.
  template <bool kChecked>
  static void features(const double* v, const double* x, std::size_t d, std::size_t n_rff, std::size_t padded,
                       double* angle, double* u);
  /// PortableKernels::features_float with 8-lane float arithmetic.
  static void features_float(const float* vf, const double* x, std::size_t d, std::size_t n_rff,
                             std::size_t padded, double* u);
  /// For a kernel with a single slot, at one step: u = [sin | cos](V x) (angles within the fast
  /// range), with the slot's pending update θ ← shrink·θ − gain·u_prev applied on the way (if
  /// `pending`), and θ·u, ‖θ‖² of the updated θ. Gives the same bits as loaded_pass() on the
  /// same u.
  static void fused_pass(const double* v, const double* x, std::size_t d, std::size_t n_rff, std::size_t padded,
                         double* u, double* theta, const double* u_prev, bool pending, double shrink, double gain,
                         double& dot, double& norm2);
  /// fused_pass() with the float feature map (precision=float; angles within kFloatFastLimit).
  static void fused_float_pass(const float* vf, const double* x, std::size_t d, std::size_t n_rff,
                               std::size_t padded, double* u, double* theta, const double* u_prev, bool pending,
                               double shrink, double gain, double& dot, double& norm2);
  /// The slot part of fused_pass() on features already in u (the checked path and predict).
  static void loaded_pass(const double* u, std::size_t padded, double* theta, const double* u_prev, bool pending,
                          double shrink, double gain, double& dot, double& norm2);
  /// PortableKernels::dot_norm, update and update_dot_norm.
  template <bool kNorm>
  static void dot_norm_fn(const double* theta, const double* u, std::size_t n, double& dot, double& norm2);
  static void update(double* theta, const double* u, std::size_t n, double shrink, double gain);
  template <bool kNorm>
  static void update_dot_norm(double* theta, const double* u_prev, bool pending, double shrink, double gain,
                              const double* u, std::size_t n, double& dot, double& norm2);
};
using Avx2Kernels = SimdSlotKernels<SimdLevel::Avx2Fma>;
using Avx512Kernels = SimdSlotKernels<SimdLevel::Avx512>;


}  // namespace omkl::detail::cpu
