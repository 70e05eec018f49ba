/// @file hypotheses.h
/// @brief The K per-kernel hypotheses of a bandit kernel-selection run (spec/bandit.md §2.1, §6):
/// only the sampled kernel's hypothesis is ever evaluated or updated in a round.
///
/// Two representations behind one interface:
///  - KernelHypotheses: f_i(x) = s_i Σ_{j∈S_i} α̂_{i,j} κ_i(x_j, x) over a per-kernel support set (the
///    exact-kernel family's SupportSet and KernelBank), with a lazy scale s_i so that the projection
///    onto ‖f‖ ≤ U is O(1) and the squared RKHS norm tracked incrementally;
///  - FeatureHypotheses: w_i ∈ R^{2D} on z_i(x) = D^{−1/2}[cos(Ωx/σ_i); sin(Ωx/σ_i)], one N(0, I) matrix Ω
///    per replicate shared by every kernel (§6.1), with the box projection |w_j| ≤ U/√D.
/// An update appends −λ·g·κ_I(x, ·) (or adds −λ·g·z_I(x)), then projects when asked to.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <memory>
#include <vector>

#include "core/state_io.h"
#include "families/exact_kernel/support_set.h"
#include "features/frequency_recipe.h"
#include "omkl/kernel_spec.h"

namespace omkl::detail {

enum class Projection { None, Ball, Box };

/// The samples that follow x in the stream, n_features apart (x_{t+1}, x_{t+2}, …): a kernel
/// expansion may take their inner products with a support set in the pass that evaluates x.
struct Upcoming {
  const double* rows = nullptr;
  std::size_t count = 0;
};

class Hypotheses {
 public:
  virtual ~Hypotheses() = default;
  /// f_i(x) (x has n_features entries).
  virtual double evaluate(std::size_t i, const double* x) = 0;
  /// f_i(x), bit for bit, where x may be one of the upcoming samples of an earlier call and
  /// `upcoming` follows x. The memory of every sample passed must hold the same values until
  /// forget_upcoming().
  virtual double evaluate(std::size_t i, const double* x, Upcoming /*upcoming*/) { return evaluate(i, x); }
  /// Drops whatever was kept about upcoming samples.
  virtual void forget_upcoming() {}
  /// f_i ← project(f_i + step·κ_i(x, ·)), with F = f_i(x) from evaluate() of this round (the norm
  /// recursion's cross term). `bound` is U (ball) or the box's U/√D is derived from it.
  virtual void update(std::size_t i, const double* x, double F, double step, Projection projection, double bound) = 0;
  virtual void save(StateWriter& out) const = 0;
  virtual void load(StateReader& in) = 0;
};

class KernelHypotheses final : public Hypotheses {
 public:
  KernelHypotheses(const Dictionary& kernels, std::size_t n_features, std::size_t capacity_hint);
  double evaluate(std::size_t i, const double* x) override;
  /// With AVX-512, a Gaussian kernel whose support set has at least kLookAheadRows rows takes
  /// the inner products of up to three upcoming samples in the pass over its rows that
  /// evaluates x (kernel_rows.h, inner_products()); the pass is bound by memory bandwidth
  /// there, so they cost little, and a later round that draws the same kernel for one of those
  /// samples reads no row it had already read. On AVX2 the shared pass is bound by arithmetic
  /// and gains nothing (measured), so there the call is evaluate(i, x).
  double evaluate(std::size_t i, const double* x, Upcoming upcoming) override;
  void forget_upcoming() override;
  static constexpr std::size_t kLookAheadRows = 1024;
  void update(std::size_t i, const double* x, double F, double step, Projection projection, double bound) override;
  void save(StateWriter& out) const override;
  void load(StateReader& in) override;

  /// ‖f_i‖ as the recursion tracks it, and the support-set size (tests).
  double norm(std::size_t i) const { return norm_[i]; }
  std::size_t support_size(std::size_t i) const { return kernels_[i].support.size(); }
  /// The effective coefficient s_i·α̂_{i,j}.
  double coefficient(std::size_t i, std::size_t j) const { return kernels_[i].scale * kernels_[i].support.coefficient(0, j); }

  /// The resident walk (resident_support.h) reads the sets into its pool and brings them up to
  /// date from it: entry j's row, ‖row‖² and stored α̂_j, the lazy scale s_i; an entry appended
  /// as the walk appended it (row, its ‖row‖², α̂), every α̂ of a set after a fold, s_i and ‖f_i‖.
  const double* support_row(std::size_t i, std::size_t j) const { return kernels_[i].support.row(j); }
  double support_norm2(std::size_t i, std::size_t j) const { return kernels_[i].support.norm2(j); }
  double stored_coefficient(std::size_t i, std::size_t j) const { return kernels_[i].support.coefficient(0, j); }
  double scale(std::size_t i) const { return kernels_[i].scale; }
  void append_entry(std::size_t i, const double* row, double row_norm2, double stored_coefficient);
  void set_stored_coefficients(std::size_t i, const double* alpha);
  void set_scale_and_norm(std::size_t i, double scale, double norm);

 private:
  struct Kernel {
    SupportSet support;
    KernelBank bank;
    double scale = 1.0;
  };
  // Inner products taken ahead for samples first, first + d, … (count of them) with the oldest
  // `covered` rows of a kernel's support set: sample q's are dots[q·covered …]. Rows are only
  // ever appended to these sets, so the products stay valid as the set grows.
  struct AheadProducts {
    const double* first = nullptr;
    std::size_t count = 0, covered = 0;
    std::vector<double> dots;
  };
  double weighted_sum(std::size_t i) const;  // s_i·Σ α̂_j k_j over the kernel values in k_
  std::size_t n_features_;
  std::vector<Kernel> kernels_;
  std::vector<double> norm_;
  std::vector<AheadProducts> ahead_;
  bool look_ahead_;  // AVX-512 here (see evaluate)
  Eigen::VectorXd x_;
  Eigen::MatrixXd k_;  // scratch: kernel values against a support set
  std::vector<double> x_dots_;  // scratch: this sample's inner products
};

/// The stream index of the random-feature bandit's Ω: repetition `replicate`'s Ω comes from
/// RandomStream(seed, replicate, Frequencies, kBanditOmegaStream), read from its start.
inline constexpr std::uint64_t kBanditOmegaStream = 0xb0b0u;

/// One repetition's Ω (§6.1): `n_matrices` (1 shared, or one per kernel, §10 A10) D × d
/// matrices of standard normals, row-major, one after the other in the stream.
std::vector<double> draw_bandit_omega(std::uint64_t seed, std::uint64_t replicate, std::size_t n_matrices,
                                      std::size_t n_rff, std::size_t n_features);

/// The recipes (features/frequency_recipe.h, through matrix_recipe()) of one repetition's shared
/// Ω scaled by each kernel's 1/σ, kernel after kernel: what FeatureHypotheses::scaled_frequencies()
/// gives for a shared draw_bandit_omega(), bit for bit, for a backend that draws the matrices itself.
std::vector<MatrixRecipe> bandit_omega_recipes(const Dictionary& kernels, std::size_t n_features, std::uint64_t seed,
                                               std::uint64_t replicate);

class FeatureHypotheses final : public Hypotheses {
 public:
  /// @param omega D × d standard normal entries, row-major; with `independent` one such matrix
  /// per kernel (K·D × d), else one shared by every kernel (§6.1, §10 A10).
  FeatureHypotheses(const Dictionary& kernels, std::size_t n_features, std::size_t n_rff, std::vector<double> omega,
                    bool independent);
  double evaluate(std::size_t i, const double* x) override;
  void update(std::size_t i, const double* x, double F, double step, Projection projection, double bound) override;
  void save(StateWriter& out) const override;
  void load(StateReader& in) override;

  const std::vector<double>& weights(std::size_t i) const { return w_[i]; }

  /// The resident walk (resident_bandit.h) moves the weights in and out in its own layout: θ =
  /// [sine part; cosine part] = w swapped, and reads kernel i's frequency matrix Ω_i/σ_i.
  void weights_to_theta(std::size_t i, double* theta) const;
  void weights_from_theta(std::size_t i, const double* theta);
  void scaled_frequencies(std::size_t i, double* V) const;

 private:
  void features(std::size_t i, const double* x);  // z_ = z_i(x)

  std::size_t n_features_, n_rff_;
  std::vector<double> inv_sigma_;
  std::vector<double> omega_;
  bool independent_;
  std::vector<std::vector<double>> w_;
  std::vector<double> angle_, sin_, cos_, z_;  // scratch
  // evaluate() leaves z_i(x) in z_ for the update of the same round (kernel z_kernel_); any
  // other update recomputes it.
  std::size_t z_kernel_ = ~std::size_t{0};
};

}  // namespace omkl::detail
