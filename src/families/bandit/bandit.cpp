/// @file bandit.cpp
/// @brief Online kernel selection under bandit feedback (Li & Liao, ECML-PKDD 2022;
/// spec/bandit.md): OKS, OKS++, IOKS on kernel expansions and their random-feature versions
/// RF-OKS, RF-OKS++, RF-IOKS. One loop: each round draws one kernel I ~ p_t, evaluates only f_I
/// (bandit feedback: no other hypothesis is computed), suffers its loss, lets the selection rule
/// (selection_rules.h) update p and size the step, and moves f_I by −λ·(ℓ'/p_I)·κ_I(x, ·), projected
/// as the rule asks. The rule and the representation (hypotheses.h) are parameters of the loop.
///
/// Randomness: the kernel draws come from the stream (seed, replicate, Selection, index) and the
/// random-feature matrix Ω from (seed, replicate, Frequencies, index), so every replicate is
/// independent of the others, of threads and of the backend.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/env_switch.h"
#include "core/step_path.h"
#include "families/bandit/bandit.h"
#include "families/bandit/hypotheses.h"
#include "families/bandit/resident_bandit.h"
#include "families/bandit/resident_support.h"
#include "families/bandit/selection_rules.h"
#include "features/rf_ensemble.h"
#include "omkl/error.h"
#include "random/rng.h"

namespace omkl::detail {

namespace {

constexpr std::uint64_t kDrawStream = 0xb0a0u;  // + rule: the kernel draws (Ω: hypotheses.h)

LossKind read_bandit_loss(ParamReader& params, const AlgoContext& context) {
  const bool classification = context.task == Task::Classification;
  const LossKind loss = parse_loss(params.get_choice("loss", classification ? "logistic" : "squared",
                                                     {"logistic", "squared", "absolute"},
                                                     "loss: logistic (labels ±1), squared or absolute"));
  check_loss_labels(params, loss, classification);
  return loss;
}

class BanditSelection final : public Algorithm {
 public:
  BanditSelection(ParamReader& params, const AlgoContext& context, RuleKind rule, bool random_features)
      : context_(context), rule_(rule), random_features_(random_features) {
    if (context.horizon == 0)
      throw ConfigError("algorithm '" + params.algorithm() + "': bandit kernel selection needs the stream length T "
                        "(its δ, η and λ are set from T)");
    const std::size_t T = context.horizon;
    dictionary_ = read_dictionary_param(params, "oks-6", "kernel dictionary: a preset name or kernels joined by '+'");
    const std::size_t K = dictionary_.size();
    loss_ = read_bandit_loss(params, context);
    if (rule == RuleKind::OksPlusPlus && loss_ == LossKind::Absolute)
      params.fail("loss", "absolute is not defined for OKS++ (its step sizes need a smooth loss, §4); use ioks or oks");
    BanditConstants c = bandit_constants(loss_);
    if (rule != RuleKind::Oks) {  // OKS projects nowhere (§3, §7.1): no radius to set
      c.U = params.get_double("U", c.U, "radius of the hypothesis balls ‖f‖ ≤ U (15 logistic, 1 otherwise)",
                              ParamRange::above(0));
    }
    U_ = c.U;
    if (rule == RuleKind::Oks) {
      // δ = (K/T)^{1/3} must lie in (0, 1) (§3): with T ≤ K, η = √(2(1 − δ) ln K/(KT)) is not real.
      if (T <= K)
        throw ConfigError("algorithm '" + params.algorithm() + "': OKS needs more rounds than kernels (δ = (K/T)^{1/3} < 1), "
                          "but T = " + std::to_string(T) + " and K = " + std::to_string(K));
      const double c_lambda = params.get_double("c_lambda", 1.0,
                                                "λ = c_λ·√(δ/(KT)); the paper picks c_λ ∈ {1, 5, 10, 25} in hindsight",
                                                ParamRange::above(0));
      c_lambda_ = c_lambda;
      rule_factory_ = [K, T, c_lambda] { return make_oks_rule(K, T, c_lambda); };
    } else if (rule == RuleKind::OksPlusPlus) {
      c.C0 = params.get_double("C0", c.C0, "smoothness constant C₀ (1 logistic, 4 squared)", ParamRange::above(0));
      c.G = params.get_double("G", c.G, "gradient bound G in δ_t and λ_{t,i} (1 by the paper's rule)",
                              ParamRange::above(0));
      params.alias("oks_pp_logistic_mode", "logistic_mode");  // the spec's name (§4.4, §10 A1)
      const bool reference = params.get_choice("logistic_mode", context.profile == Profile::Reference ? "reference" : "paper",
                                               {"paper", "reference"},
                                               "logistic loss: A = (GC₀)^{1/3}(UK)^{2/3} (paper) or, as the authors' "
                                               "scripts, exp(−y f) of the round (§4.4; also oks_pp_logistic_mode)") ==
                             "reference";
      // The switch reads the logistic loss only (§4.4): asked for on another loss it would change nothing.
      if (params.given("logistic_mode") && loss_ != LossKind::Logistic)
        params.fail("logistic_mode", "chooses the logistic loss's rule; the loss is " + to_string(loss_));
      if (loss_ != LossKind::Logistic) params.inapplicable("logistic_mode");
      const bool reference_logistic = reference && loss_ == LossKind::Logistic;
      rule_factory_ = [K, c, reference_logistic] { return make_oks_plus_plus_rule(K, c, reference_logistic); };
    } else {
      // §1.3: the square loss's G₁ = 2(U + 1) (4 at the experiments' U = 1), so it follows U.
      if (loss_ == LossKind::Squared) c.G1 = 2.0 * (c.U + 1.0);
      c.G1 = params.get_double("G1", c.G1, "Lipschitz constant G₁ (2(U + 1) squared, 1 otherwise)",
                               ParamRange::above(0));
      c.lmax = params.get_double("lmax", c.lmax, "loss bound ℓ_max (1 in the experiments)", ParamRange::above(0));
      const double eta_scale = params.get_double("eta_scale", 8.0,
                                                 "η = eta_scale·ℓ_max K^{3/8}/(U G₁ √(T ln T)): 8 experiments, 1.5 theory",
                                                 ParamRange::above(0));
      const bool clean = params.get_choice("bisection", "reference", {"reference", "clean"},
                                           "μ* to |Σq − 1| ≤ 1e−5, q not renormalised (reference), or to 1e−12 "
                                           "and renormalised (clean)") == "clean";
      // η₀ and ν divide by ln T: T = 1 has none.
      if (T < 2)
        throw ConfigError("algorithm '" + params.algorithm() + "': IOKS needs T ≥ 2 (its rates divide by ln T), "
                          "but T = " + std::to_string(T));
      rule_factory_ = [K, T, c, eta_scale, clean] { return make_ioks_rule(K, T, c, eta_scale, clean); };
    }
    if (random_features) {
      const std::int64_t D = params.get_int("D", 400, "random frequencies per kernel (w has 2D entries)",
                                            ParamRange::closed(1, kMaxRandomFeatures));
      n_rff_ = static_cast<std::size_t>(D);
      params.alias("independent_omega_per_kernel", "independent_omega");  // the spec's name (§10 A10)
      independent_omega_ = params.get_bool("independent_omega", false,
                                           "one Ω per kernel instead of one shared matrix scaled by 1/σ_i (§10 A10; "
                                           "also independent_omega_per_kernel)");
      for (const KernelSpec& k : dictionary_)
        if (k.family != KernelFamily::Gaussian) params.fail("dict", "random features here need Gaussian kernels");
    }
    for (const KernelSpec& k : dictionary_)
      if (!k.shift_invariant())
        params.fail("dict", "contains " + k.name() + ": the bandit algorithms need kernels with κ(x, x) = 1");
    std::string why_not;
    if (dictionary_.size() > kMaxResidentPairs)
      why_not = "the dictionary has more kernels than a resident step holds (" + std::to_string(kMaxResidentPairs) + ")";
    else if (random_features && n_rff_ > kMaxCudaRff && walks_on_gpu())
      // The walk's CUDA backend is made at the first walk; refuse what it would refuse now.
      why_not = "D = " + std::to_string(n_rff_) + " exceeds the " + std::to_string(kMaxCudaRff) +
                " random features per kernel of a walk on the GPU";
    resident_ = read_step_path(params, "rounds", walks_on_gpu(), why_not);
    // The walk's device state is made at the first walk; a missing device is said now, while a
    // study validates its cells, not hours later in a worker.
    if (resident_ && walks_on_gpu()) require_cuda_device();
    projection_ = rule_factory_()->projection(random_features);
    const std::size_t R = context.n_replicates();
    reps_.resize(R);
    for (std::size_t r = 0; r < R; ++r) build_replicate(r, rule);
  }

  std::size_t n_replicates() const override { return reps_.size(); }

  void step(const double* x, double y, double* predictions) override {
    if (resident_) return walk_resident(x, &y, 1, context_.n_features, predictions);
    ++t_;
    for (std::size_t r = 0; r < reps_.size(); ++r) predictions[r] = play_round(reps_[r], x, y, Upcoming{});
  }

  /// step() n times, telling the hypotheses which samples come next (Hypotheses::evaluate):
  /// the same numbers, with fewer passes over a large support set.
  void step_block(const double* x, const double* y, std::size_t n, std::size_t n_features,
                  double* predictions) override {
    if (resident_) return walk_resident(x, y, n, n_features, predictions);
    for (std::size_t t = 0; t < n; ++t) {
      ++t_;
      const Upcoming upcoming{x + (t + 1) * n_features, n - t - 1};
      for (std::size_t r = 0; r < reps_.size(); ++r)
        predictions[t * reps_.size() + r] = play_round(reps_[r], x + t * n_features, y[t], upcoming);
    }
    for (Replicate& rep : reps_) rep.hypotheses->forget_upcoming();
  }

  MetricConvention metric_convention() const override { return bandit_metric_convention(); }
  /// The resident walk takes every repetition's own stream (the bandit preset's per-repetition
  /// permutations, §8.4), so a GPU study runs the repetitions in lockstep. The host path runs
  /// repetitions as separate learners and does not offer it.
  bool replicated_streams() const override { return resident_; }
  bool batches_replicates() const override { return resident_; }
  bool walks_on_device() const override { return resident_; }
  void step_block_replicated(const StreamRows& block, double* predictions) override {
    if (!resident_) return Algorithm::step_block_replicated(block, predictions);
    walk_resident(block.x, block.y, block.n_steps, block.n_features, predictions, &block);
  }

  /// step_path = resident: n rounds of every repetition as one walk of the resident program
  /// (resident_bandit.h; resident_support.h for the kernel expansions) — on the GPU where the
  /// backend lends its device memory (or, for the expansions, where the context asks for the
  /// GPU), by the host driver otherwise (in double: the device walk's reference, not a fast
  /// path). The state goes back into the repetitions' rule, hypotheses, stream and logs after
  /// the walk. With `replicated`, x and y are the stream whose rows it names for every
  /// repetition's sample of each round (step_block_replicated()).
  void walk_resident(const double* x, const double* y, std::size_t n, std::size_t n_features, double* predictions,
                     const StreamRows* replicated = nullptr) {
    const std::size_t R = reps_.size(), K = dictionary_.size(), D = n_rff_, d = n_features;
    BanditTables tables;
    tables.rule = reps_[0].rule->constants();
    tables.loss = loss_;
    tables.classification = context_.task == Task::Classification ? 1 : 0;
    tables.box = projection_ == Projection::Box ? U_ / std::sqrt(static_cast<double>(D)) : 0.0;
    BanditStateData state(K, R, !random_features_);
    load_resident(state);
    ResidentWalkArgs<double> a;
    a.n_steps = n;
    a.n_replicates = R;
    a.n_slots = K;
    a.n_kernels = K;
    a.n_rff = D;
    a.n_features = d;
    a.max_pairs = 1;
    a.t0 = t_ + 1;
    a.feature_scale = random_features_ ? 1.0 / std::sqrt(static_cast<double>(D)) : 1.0;
    a.loss = loss_;
    if (replicated) {
      a.rows = replicated->rows;
      a.n_rows = replicated->n_rows;
    }
    if (random_features_) walk_features(tables, state, a, x, y, predictions);
    else walk_expansions(tables, state, a, x, y, predictions);
    const BanditStates s = state.view();
    for (std::size_t r = 0; r < R; ++r)
      if (s.failed[r]) throw Error("IOKS: the mirror step's bisection did not converge");
    store_resident(state);
    t_ += static_cast<std::int64_t>(n);
  }

  /// The random-feature walk: θ (the host's w, swapped) and Ω_i/σ_i in the walk's layout. θ
  /// stays there (walk_theta_, or the GPU backend's memory) from one walk to the next, and goes
  /// back into the repetitions' weights only when something reads them (pull_walk_theta()): at
  /// 1 000 repetitions θ is 38 MB, and copying it there and back around each of a study's 72
  /// walks took most of its time (bench/RESULTS.md, 2026-11-26).
  void walk_features(const BanditTables& tables, BanditStateData& state, const ResidentWalkArgs<double>& a,
                     const double* x, const double* y, double* predictions) {
    const std::size_t R = reps_.size(), K = dictionary_.size(), D = n_rff_;
    const bool upload = !walk_theta_current_;
    if (upload) {
      walk_theta_.resize(R * K * 2 * D);
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t k = 0; k < K; ++k) features_of(r).weights_to_theta(k, walk_theta_.data() + (r * K + k) * 2 * D);
    }
    DeviceLease lease;
    if (resident_backend() && resident_backend_->device_lease(lease)) {
      if (upload) resident_backend_->set_all_theta(walk_theta_.data());
      if (!device_walk_) device_walk_ = std::make_unique<BanditDeviceWalk>(lease);
      // θ is the device's from here until pull_walk_theta() (walk_theta_ is then stale).
      walk_theta_current_ = true;
      weights_current_ = false;
      device_walk_->walk(tables, state, lease, a, x, y, predictions);
    } else {
      BanditProgram<HostPhilox> program{tables, state.view()};
      walk_theta_current_ = true;
      weights_current_ = false;
      walk_on_host(program, a, host_resident_frequencies(), walk_theta_.data(), x, y, predictions);
    }
  }

  /// Brings θ back from the walk (the GPU's memory or walk_theta_) into the repetitions' weights,
  /// where predict(), checkpoints and hypotheses() read them; the walk keeps its copy, which
  /// stays current (nothing but a walk changes the weights of a resident learner).
  void pull_walk_theta() const {
    if (weights_current_) return;
    const std::size_t R = reps_.size(), K = dictionary_.size(), D = n_rff_;
    if (resident_backend_) resident_backend_->get_all_theta(walk_theta_.data());
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t k = 0; k < K; ++k)
        static_cast<FeatureHypotheses&>(*reps_[r].hypotheses).weights_from_theta(k, walk_theta_.data() + (r * K + k) * 2 * D);
    weights_current_ = true;
  }

  KernelHypotheses& expansions_of(std::size_t r) { return static_cast<KernelHypotheses&>(*reps_[r].hypotheses); }

  /// Whether the resident walks run on the GPU: the study's backend, as make_rf_backend() picks.
  bool walks_on_gpu() const { return backend_on_gpu(context_.backend); }

  /// The kernel-expansion walk (resident_support.h) over the support pool, then the walk's new
  /// entries (and, after a fold, a set's coefficients), scales and norms back into the
  /// repetitions' KernelHypotheses, so that checkpoints and predict() read them there.
  void walk_expansions(const BanditTables& tables, BanditStateData& state, const ResidentWalkArgs<double>& a,
                       const double* x, const double* y, double* predictions) {
    const std::size_t R = reps_.size(), K = dictionary_.size(), d = a.n_features;
    const bool gpu = walks_on_gpu();
    prepare_pool(a.n_steps, gpu);
    const BanditStates s = state.view();
    std::vector<std::uint64_t> used_before(pool_used_);
    std::vector<std::uint32_t> count_before(R * K);
    for (std::size_t r = 0; r < R; ++r) {
      s.used[r] = pool_used_[r];
      const KernelHypotheses& h = expansions_of(r);
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t rk = r * K + k;
        s.count[rk] = count_before[rk] = static_cast<std::uint32_t>(h.support_size(k));
        s.scale[rk] = h.scale(k);
        s.norm[rk] = h.norm(k);
        s.folded[rk] = 0;
      }
    }
    if (gpu) {
      pool_device_->walk(tables, pool_tables_, pool_layout_, state, a, x, y, predictions);
    } else {
      KernelBanditProgram<HostPhilox> program{BanditProgram<HostPhilox>{tables, s}, pool_tables_,
                                              pool_layout_.view(pool_host_.data())};
      walk_on_host(program, a, nullptr, nullptr, x, y, predictions);
    }
    const auto read = [&](std::size_t offset, std::size_t bytes, void* dst) {
      if (bytes == 0) return;
      if (gpu) return pool_device_->read(offset, bytes, dst);
      std::memcpy(dst, reinterpret_cast<const unsigned char*>(pool_host_.data()) + offset, bytes);
    };
    std::vector<double> rows, norms2, coef;
    std::vector<std::uint64_t> index;
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t fresh = static_cast<std::size_t>(s.used[r] - used_before[r]);
      rows.resize(fresh * d);
      norms2.resize(fresh);
      read(pool_layout_.rows_offset(r, used_before[r]), rows.size() * sizeof(double), rows.data());
      read(pool_layout_.norm2_offset(r, used_before[r]), norms2.size() * sizeof(double), norms2.data());
      KernelHypotheses& h = expansions_of(r);
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t rk = r * K + k, c0 = count_before[rk], c1 = s.count[rk];
        const std::size_t from = s.folded[rk] ? 0 : c0;
        coef.resize(c1 - from);
        index.resize(c1 - c0);
        read(pool_layout_.coef_offset(r, k, from), coef.size() * sizeof(double), coef.data());
        read(pool_layout_.index_offset(r, k, c0), index.size() * sizeof(std::uint64_t), index.data());
        if (s.folded[rk]) h.set_stored_coefficients(k, coef.data());
        for (std::size_t j = c0; j < c1; ++j) {
          const std::size_t row = static_cast<std::size_t>(index[j - c0] - used_before[r]);
          h.append_entry(k, rows.data() + row * d, norms2[row], coef[j - from]);
        }
        h.set_scale_and_norm(k, s.scale[rk], s.norm[rk]);
      }
      pool_used_[r] = s.used[r];
    }
  }

  /// The support pool holding every repetition's sets with room for n more rounds: (re)built
  /// from the KernelHypotheses — first use, after a checkpoint is loaded, or when full (then at
  /// least doubled) — in host memory or on the GPU.
  void prepare_pool(std::size_t n, bool gpu) {
    const std::size_t R = reps_.size(), K = dictionary_.size(), d = context_.n_features;
    std::size_t need = 0;
    if (!pool_built_) {
      pool_used_.assign(R, 0);
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t k = 0; k < K; ++k) pool_used_[r] += expansions_of(r).support_size(k);
    }
    for (std::uint64_t used : pool_used_) need = std::max<std::size_t>(need, static_cast<std::size_t>(used) + n);
    if (pool_built_ && need <= pool_tables_.capacity) return;
    std::size_t capacity = std::max<std::size_t>(need, context_.horizon);
    if (pool_built_) capacity = std::max<std::size_t>(capacity, 2 * static_cast<std::size_t>(pool_tables_.capacity));
    SupportTables& t = pool_tables_;
    t.K = static_cast<std::uint32_t>(K);
    t.d = static_cast<std::uint32_t>(d);
    t.capacity = capacity;
    t.ball = projection_ == Projection::Ball ? 1 : 0;
    t.U = U_;
    for (std::size_t k = 0; k < K; ++k) {
      const KernelSpec& spec = dictionary_[k];
      t.family[k] = support_family(spec);
      t.sigma[k] = spec.sigma;
    }
    pool_layout_ = SupportLayout(t, R);
    std::vector<std::uint64_t> words(pool_layout_.words(), 0);
    const SupportArrays arrays = pool_layout_.view(words.data());
    for (std::size_t r = 0; r < R; ++r) {
      const KernelHypotheses& h = expansions_of(r);
      std::size_t row = 0;
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t j = 0; j < h.support_size(k); ++j, ++row) {
          std::copy(h.support_row(k, j), h.support_row(k, j) + d, arrays.rows + (r * capacity + row) * d);
          arrays.row_norm2[r * capacity + row] = h.support_norm2(k, j);
          arrays.index[(r * K + k) * capacity + j] = row;
          arrays.coef[(r * K + k) * capacity + j] = h.stored_coefficient(k, j);
        }
      pool_used_[r] = row;
    }
    if (gpu) {
      require_cuda_device();
      if (!pool_device_) pool_device_ = std::make_unique<KernelBanditDeviceWalk>(context_.device_contexts.get());
      pool_device_->upload(words);
      pool_host_.clear();
    } else {
      pool_host_ = std::move(words);
    }
    pool_built_ = true;
  }

  FeatureHypotheses& features_of(std::size_t r) { return static_cast<FeatureHypotheses&>(*reps_[r].hypotheses); }

  /// The device memory of the walk: a CUDA backend holding θ and the scaled Ω, made on first use
  /// where the context asks for a GPU (none on the CPU backend: the host driver reads the flat
  /// arrays directly).
  RfBackend* resident_backend() {
    if (!walks_on_gpu()) return nullptr;
    if (!resident_backend_) {
      RfProblem problem;
      problem.n_replicates = reps_.size();
      problem.n_kernels = dictionary_.size();
      problem.n_rff = n_rff_;
      problem.n_features = context_.n_features;
      for (std::size_t k = 0; k < dictionary_.size(); ++k) problem.slot_kernel.push_back(static_cast<std::uint32_t>(k));
      problem.feature_scale = 1.0 / std::sqrt(static_cast<double>(n_rff_));
      problem.loss = loss_;
      resident_backend_ = make_rf_backend(context_.backend, problem, context_.device_contexts.get());
      resident_frequencies_uploaded_ = false;
    }
    if (!resident_frequencies_uploaded_) {
      // The backend draws Ω_i/σ_i itself from the counters the host drew Ω from, where it can
      // and is asked to (OMKL_CUDA_BANDIT_DRAWS=device): no R × K × D × d host copy, whose
      // building and upload were most of a 1 000-repetition study's host time. Otherwise, and
      // always for a checkpoint's Ω (the counters need not give it) or independent matrices,
      // the host's copy goes up.
      const bool drawn = !omega_loaded_ && !independent_omega_ && bandit_device_draws() &&
                         resident_backend_->draw_frequencies([this] { return omega_recipes(); });
      if (!drawn) {
        const double* V = host_resident_frequencies();
        const std::size_t block = n_rff_ * context_.n_features;
        for (std::size_t r = 0; r < reps_.size(); ++r)
          for (std::size_t k = 0; k < dictionary_.size(); ++k)
            resident_backend_->set_frequencies(r, k, V + (r * dictionary_.size() + k) * block);
      }
      resident_frequencies_uploaded_ = true;
    }
    return resident_backend_.get();
  }

  /// Every repetition's recipes of Ω_i/σ_i (bandit_omega_recipes()), repetition after repetition.
  std::vector<MatrixRecipe> omega_recipes() const {
    std::vector<MatrixRecipe> recipes;
    recipes.reserve(reps_.size() * dictionary_.size());
    for (const std::uint64_t replicate : context_.replicates) {
      const auto of_replicate = bandit_omega_recipes(dictionary_, context_.n_features, context_.seed, replicate);
      recipes.insert(recipes.end(), of_replicate.begin(), of_replicate.end());
    }
    return recipes;
  }

  /// Every repetition's Ω_i/σ_i in the walk's layout (R × K × D × d), built on first use: the
  /// host driver reads it, and a GPU backend that does not draw is given it.
  const double* host_resident_frequencies() {
    const std::size_t R = reps_.size(), K = dictionary_.size(), block = n_rff_ * context_.n_features;
    if (resident_frequencies_.empty()) {
      resident_frequencies_.resize(R * K * block);
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t k = 0; k < K; ++k)
          features_of(r).scaled_frequencies(k, resident_frequencies_.data() + (r * K + k) * block);
    }
    return resident_frequencies_.data();
  }

  /// OMKL_CUDA_BANDIT_DRAWS: `host` (the default until the device draws' bandit parity test,
  /// CudaTest.BanditDeviceDrawnOmegaEqualsTheHostUpload, has passed on a GPU) or `device`.
  static bool bandit_device_draws() {
    return path_switch("OMKL_CUDA_BANDIT_DRAWS") == "device";
  }

  void load_resident(BanditStateData& data) {
    const BanditStates s = data.view();
    const std::size_t K = dictionary_.size();
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      Replicate& rep = reps_[r];
      s.rng[r] = StreamPosition::of(rep.draws);
      const RuleState rs = rep.rule->state();
      const bool ioks = rep.rule->constants().kind == RuleKind::Ioks;
      std::copy(rs.p, rs.p + K, s.p + r * K);
      std::copy(rs.q, rs.q + K, s.q + r * K);
      std::copy(rs.sums, rs.sums + K, s.sums + r * K);
      if (ioks) {
        std::copy(rs.eta, rs.eta + K, s.eta + r * K);
        std::copy(rs.rho, rs.rho + K, s.rho + r * K);
      }
      s.C[r] = *rs.C;
      s.V[r] = *rs.V;
      std::copy(rep.selected.begin(), rep.selected.end(), s.selected + r * K);
      std::copy(rep.kernel_loss.begin(), rep.kernel_loss.end(), s.kernel_loss + r * K);
      std::copy(rep.kernel_mistakes.begin(), rep.kernel_mistakes.end(), s.kernel_mistakes + r * K);
      s.failed[r] = 0;
    }
  }

  void store_resident(BanditStateData& data) {
    const BanditStates s = data.view();
    const std::size_t K = dictionary_.size();
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      Replicate& rep = reps_[r];
      rep.draws.seek(s.rng[r].position);
      const RuleState rs = rep.rule->state();
      const bool ioks = rep.rule->constants().kind == RuleKind::Ioks;
      std::copy(s.p + r * K, s.p + (r + 1) * K, rs.p);
      std::copy(s.q + r * K, s.q + (r + 1) * K, rs.q);
      std::copy(s.sums + r * K, s.sums + (r + 1) * K, rs.sums);
      if (ioks) {
        std::copy(s.eta + r * K, s.eta + (r + 1) * K, rs.eta);
        std::copy(s.rho + r * K, s.rho + (r + 1) * K, rs.rho);
      }
      *rs.C = s.C[r];
      *rs.V = s.V[r];
      std::copy(s.selected + r * K, s.selected + (r + 1) * K, rep.selected.begin());
      std::copy(s.kernel_loss + r * K, s.kernel_loss + (r + 1) * K, rep.kernel_loss.begin());
      std::copy(s.kernel_mistakes + r * K, s.kernel_mistakes + (r + 1) * K, rep.kernel_mistakes.begin());
    }
  }

  void predict(const double* x, double* predictions) override {
    pull_walk_theta();
    // The next round's draw, on a copy of the stream: predict() equals the next step's prediction.
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      RandomStream draws = reps_[r].draws;
      const std::size_t I = draw(reps_[r].rule->p(), draws.uniform());
      predictions[r] = reps_[r].hypotheses->evaluate(I, x);
    }
  }

  void save_state(StateWriter& out) const override {
    pull_walk_theta();
    out.put_tag("bandit/2");  // 2: the per-kernel mistakes
    out.put_i64(t_);
    for (const Replicate& rep : reps_) {
      out.put_u64(rep.draws.position());
      rep.rule->save(out);
      rep.hypotheses->save(out);
      out.put_f64s(rep.selected);
      out.put_f64s(rep.kernel_loss);
      out.put_f64s(rep.kernel_mistakes);
    }
  }

  void load_state(StateReader& in) override {
    resident_frequencies_.clear();  // the checkpoint holds Ω: rebuilt from it at the next walk
    resident_frequencies_uploaded_ = false;
    omega_loaded_ = true;  // and a GPU is given that Ω, not its own draws
    pool_built_ = false;  // and the support sets: the pool is rebuilt from them
    walk_theta_current_ = false;  // and θ: uploaded from the loaded weights at the next walk
    weights_current_ = true;
    in.expect_tag("bandit/2");
    t_ = in.get_i64();
    if (t_ < 0) throw InputError("checkpoint: negative round count");
    for (Replicate& rep : reps_) {
      rep.draws.seek(in.get_u64());
      rep.rule->load(in);
      rep.hypotheses->load(in);
      in.get_f64s(rep.selected.data(), rep.selected.size());
      in.get_f64s(rep.kernel_loss.data(), rep.kernel_loss.size());
      in.get_f64s(rep.kernel_mistakes.data(), rep.kernel_mistakes.size());
    }
  }

  std::vector<std::pair<std::string, std::string>> reported_params() const override {
    std::vector<std::pair<std::string, std::string>> out{{"loss", to_string(loss_)}};
    if (rule_ == RuleKind::Oks) {
      char v[32];
      std::snprintf(v, sizeof v, "%g", c_lambda_);
      out.emplace_back("c_lambda", v);
    }
    if (random_features_) out.emplace_back("D", std::to_string(n_rff_));
    return out;
  }

  std::vector<std::pair<std::string, std::vector<double>>> final_logs(std::size_t r) const override {
    const BanditLog l = log(r);
    std::vector<std::pair<std::string, std::vector<double>>> logs{
        {"selected", l.selected}, {"p", l.p}, {"kernel_loss", l.kernel_loss}};
    if (context_.task == Task::Classification) logs.emplace_back("kernel_mistakes", l.kernel_mistakes);
    return logs;
  }

  /// The sampling distribution p over the dictionary: this family's kernel weights. Normalised
  /// here because IOKS's bisection (§5.4) leaves Σp within its tolerance of 1, not at 1.
  std::vector<double> kernel_weights(std::size_t r) const override {
    std::vector<double> p = reps_.at(r).rule->p();
    double total = 0.0;
    for (double v : p) total += v;
    for (double& v : p) v /= total;
    return p;
  }

  // ---- inspection (bandit.h) -------------------------------------------------------------------
  BanditLog log(std::size_t r) const {
    const Replicate& rep = reps_.at(r);
    return {rep.selected, rep.rule->p(), rep.kernel_loss, rep.kernel_mistakes};
  }
  Hypotheses& hypotheses(std::size_t r) {
    pull_walk_theta();
    return *reps_.at(r).hypotheses;
  }

 private:
  struct Replicate {
    RandomStream draws{0, 0, RngPurpose::Selection, 0};
    std::unique_ptr<SelectionRule> rule;
    std::unique_ptr<Hypotheses> hypotheses;
    std::vector<double> selected, kernel_loss, kernel_mistakes;  // §8.6 logs (mistakes: classifying)
  };

  // One round of one replicate: draw I ~ p, predict with f_I, observe, update f_I.
  double play_round(Replicate& rep, const double* x, double y, Upcoming upcoming) {
    const std::vector<double>& p = rep.rule->p();
    const std::size_t I = draw(p, rep.draws.uniform());
    // The upcoming samples are worth keeping for a kernel likely to be drawn again.
    const double F = rep.hypotheses->evaluate(I, x, p[I] >= 0.5 ? upcoming : Upcoming{});
    const double loss = loss_value(loss_, F, y), derivative = loss_derivative(loss_, F, y);
    const double pI = p[I];
    const double lambda = rep.rule->observe(I, F, y, loss, derivative);
    rep.hypotheses->update(I, x, F, -lambda * derivative / pI, projection_, U_);
    rep.selected[I] += 1.0;
    rep.kernel_loss[I] += loss;
    if (context_.task == Task::Classification) rep.kernel_mistakes[I] += bandit_mistake(F, y);
    return F;
  }

  // §2.2's draw, the resident walk's too (rule_kernels.h).
  static std::size_t draw(const std::vector<double>& p, double u) { return bandit_draw(p.data(), p.size(), u); }

  void build_replicate(std::size_t r, RuleKind rule) {
    Replicate& rep = reps_[r];
    const std::uint64_t replicate = context_.replicates[r];
    const std::size_t K = dictionary_.size(), d = context_.n_features;
    rep.draws = RandomStream(context_.seed, replicate, RngPurpose::Selection, kDrawStream + static_cast<std::uint64_t>(rule));
    rep.rule = rule_factory_();
    if (random_features_) {
      const std::size_t matrices = independent_omega_ ? K : 1;
      rep.hypotheses = std::make_unique<FeatureHypotheses>(
          dictionary_, d, n_rff_, draw_bandit_omega(context_.seed, replicate, matrices, n_rff_, d), independent_omega_);
    } else {
      rep.hypotheses = std::make_unique<KernelHypotheses>(dictionary_, d, std::min<std::size_t>(context_.horizon / K + 8, 1u << 16));
    }
    rep.selected.assign(K, 0.0);
    rep.kernel_loss.assign(K, 0.0);
    rep.kernel_mistakes.assign(K, 0.0);
  }

  AlgoContext context_;
  RuleKind rule_;
  bool random_features_;
  Dictionary dictionary_;
  LossKind loss_ = LossKind::Squared;
  double U_ = 1.0, c_lambda_ = 1.0;
  std::size_t n_rff_ = 0;
  bool independent_omega_ = false;
  Projection projection_ = Projection::None;
  std::function<std::unique_ptr<SelectionRule>()> rule_factory_;  // a rule in its initial state
  std::vector<Replicate> reps_;
  std::int64_t t_ = 0;
  // step_path = resident
  bool resident_ = false;
  std::vector<double> resident_frequencies_;  // R × K × D × d: Ω_i/σ_i of every repetition
  std::unique_ptr<RfBackend> resident_backend_;
  bool resident_frequencies_uploaded_ = false;
  bool omega_loaded_ = false;  // Ω came from a checkpoint
  // step_path = resident, random features: θ in the walk's layout (R × K × 2D), the host
  // driver's; whether it (or the GPU backend's copy) holds the current θ, and whether the
  // repetitions' weights do (pull_walk_theta(); save_state() is const, hence mutable).
  mutable std::vector<double> walk_theta_;
  bool walk_theta_current_ = false;
  mutable bool weights_current_ = true;
  // step_path = resident, kernel expansions: the support pool (resident_support.h)
  SupportTables pool_tables_;
  SupportLayout pool_layout_;
  std::vector<std::uint64_t> pool_host_;  // the host driver's pool
  std::vector<std::uint64_t> pool_used_;  // R: its rows in use
  bool pool_built_ = false;
  std::unique_ptr<BanditDeviceWalk> device_walk_;
  std::unique_ptr<KernelBanditDeviceWalk> pool_device_;
};

const BanditSelection& as_bandit(const Algorithm& algorithm) {
  const auto* b = dynamic_cast<const BanditSelection*>(&algorithm);
  if (!b) throw Error("not a bandit kernel-selection algorithm");
  return *b;
}

AlgorithmFactory factory(RuleKind rule, bool random_features) {
  return [rule, random_features](ParamReader& params, const AlgoContext& context) {
    return std::unique_ptr<Algorithm>(new BanditSelection(params, context, rule, random_features));
  };
}

}  // namespace

BanditLog bandit_log(const Algorithm& algorithm, std::size_t replicate) { return as_bandit(algorithm).log(replicate); }

void add_bandit_algorithms(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"oks", "OKS (Yang et al. 2012): exponential weights over kernels, one sampled per round, fixed δ, η, λ (bandit §3)",
                      factory(RuleKind::Oks, false)});
  registry.push_back({"oks++", "OKS++ (Li & Liao, ECML-PKDD 2022): OKS with adaptive δ_t, η_t, λ_{t,i} and projection onto ‖f‖ ≤ U (§4)",
                      factory(RuleKind::OksPlusPlus, false)});
  registry.push_back({"ioks", "IOKS: online mirror descent with a modified 8-Tsallis entropy and increasing rates (§5)",
                      factory(RuleKind::Ioks, false)});
  registry.push_back({"rf-oks", "RF-OKS: OKS on shared-Ω random features, no projection (§7.1)", factory(RuleKind::Oks, true)});
  registry.push_back({"rf-oks++", "RF-OKS++: OKS++ on random features, box projection |w_j| ≤ U/√D (§6.3)",
                      factory(RuleKind::OksPlusPlus, true)});
  registry.push_back({"rf-ioks", "RF-IOKS: IOKS on random features, box projection (§6.3)", factory(RuleKind::Ioks, true)});
  add_lkmbooks(registry);
}

}  // namespace omkl::detail
