/// @file rf_ensemble.h
/// @brief Configuration shared by the random-feature families (Raker, AdaRaker, single-kernel
/// RF): dictionary, D, feature construction, loss, ridge, step scales and weight rule, with the
/// paper / reference profile defaults of spec/raker.md Appendix D, and the backend set-up.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/algorithm_base.h"
#include "core/kernel_weights.h"
#include "features/random_features.h"
#include "features/rf_backend.h"
#include "omkl/kernel_spec.h"

namespace omkl::detail {

struct RfEnsembleConfig : RfFeatures {
  LossKind loss = LossKind::Squared;
  double lambda = 0.01;
  double step_scale = 1.0;    // θ step multiplier (reference regression: 1/10)
  double shrink_scale = 2.0;  // multiplier of ηλ in the shrink (paper: 2, reference: 1/10 or 1)
  WeightConfig weights;
  bool single_precision = false;  // precision=float (RfProblem::single_precision)
  /// η_w,t = eta_w/√t instead of a constant weight step (graph journal's Raker, §4.4).
  bool eta_w_inv_sqrt_t = false;
  /// The ridge term of the weight loss uses θ after its update (graph journal's Raker, §4.4).
  bool weight_theta_post = false;
};

/// ‖θ‖² after the update θ ← c·θ − g·z of every slot, from the norm before it, f = θᵀz and
/// ‖z‖² = feature_scale²·D: ‖cθ − gz‖² = c²‖θ‖² − 2cg·f + g²‖z‖² (no second pass over θ).
void post_update_norms(const RfEnsembleConfig& config, const SlotSchedule* schedules,
                       std::int64_t t, double y, const double* f, const double* norm2_before,
                       std::size_t n_slots, double* norm2_after);

/// Reads `dict` (a preset name or kernels joined by '+'), failing with the parameter's name
/// when it does not parse or is empty.
Dictionary read_dictionary_param(ParamReader& params, const std::string& default_dictionary,
                                 const std::string& meaning, std::string* text = nullptr);

/// The most random features per kernel (D) an algorithm takes: far more than any protocol uses
/// (hundreds), and small enough that a D given by mistake (1e9) is refused before anything is
/// allocated for it.
constexpr std::int64_t kMaxRandomFeatures = 1000000;

/// Reads the feature part of a configuration: dict (shift-invariant kernels only), D, rf and
/// feature_scale with the caller's defaults, `rng` (counter | numpy_legacy; numpy_legacy
/// needs rf = rf) and `shared_omega` (kernels of one family, counter streams only).
RfFeatures read_rf_features(ParamReader& params, const std::string& default_dictionary,
                            const std::string& default_rf, const std::string& default_scale,
                            const std::string& rf_meaning, const std::string& scale_meaning);

/// Reads the shared parameters. `default_dictionary` is the family's preset, `default_lambda`
/// the λ used when neither the user nor a preset gives one.
RfEnsembleConfig read_rf_ensemble_config(ParamReader& params, const AlgoContext& context,
                                         const std::string& default_dictionary,
                                         double default_lambda);

/// Reads the θ step: `eta` (default 1/√T) and `eta_schedule` (const | inv_sqrt_t).
struct StepConfig {
  double eta = 0.0;
  bool inv_sqrt_t = false;
};
StepConfig read_step_config(ParamReader& params, const AlgoContext& context);

/// The frequency matrices of every (replicate, kernel), each D × d row-major, handed to
/// `sink(replicate index, kernel, V)` in (replicate, kernel) order: from the counter-based stream
/// (seed, replicate, Frequencies, features.frequency_stream(k)), so adding kernels or replicates
/// never changes the others' draws; or, with numpy_legacy, exactly as the journal notebook draws repetition `replicate`
/// from np.random.seed(seed) (notebook_stream.h). Drawn a chunk of replicates at a time (in
/// parallel), so memory stays bounded for many replicates.
using FrequencySink = std::function<void(std::size_t, std::size_t, const double*)>;
void for_each_frequency_matrix(const RfFeatures& features, const AlgoContext& context, const FrequencySink& sink);

/// The recipes (frequency_recipe.h) of the matrices for_each_frequency_matrix() draws in
/// counter mode, R × P in the same order: what a backend needs to draw them itself.
std::vector<MatrixRecipe> frequency_recipes(const RfFeatures& features, const AlgoContext& context);

/// The base seed as np.random.seed takes it; ConfigError beyond 32 bits.
std::uint32_t numpy_seed(const AlgoContext& context);

/// Creates the backend for `slot_kernel` with the frequency matrices of (seed, replicate,
/// kernel) for every replicate: drawn by the backend where it can (draw_frequencies(); counter
/// mode only), otherwise drawn on the host and uploaded (for_each_frequency_matrix).
std::unique_ptr<RfBackend> make_rf_ensemble_backend(const RfEnsembleConfig& config,
                                                    const AlgoContext& context,
                                                    std::vector<std::uint32_t> slot_kernel);

/// Hands every (replicate, kernel) matrix to the sink, as for_each_frequency_matrix does.
using FrequencySource = std::function<void(const FrequencySink&)>;
/// Same, with the matrices from `source`: for a caller that already holds them (the graph
/// family under rng = numpy_legacy gets them with its notebook stream positions).
std::unique_ptr<RfBackend> make_rf_ensemble_backend(const RfEnsembleConfig& config,
                                                    const AlgoContext& context,
                                                    std::vector<std::uint32_t> slot_kernel,
                                                    const FrequencySource& source);

/// The backend-side form of a log-domain weight rule for groups of `group_size` slots, or
/// nothing when the rule couples kernels within a step (minmax, mistake) and must run on the host.
/// The kernel-weight update of one ensemble whose slots start at `first_slot`, applying the
/// configuration's weight-step schedule and choice of θ (pre / post update) in the ridge term.
/// @param f, norm2 the group's per-slot predictions and pre-update norms (norm2 may be null
/// when the rule does not read it); scratch is reused across calls.
void update_kernel_weights(const RfEnsembleConfig& config, const std::vector<SlotSchedule>& schedules,
                           std::size_t first_slot, std::int64_t t, double y, const double* f,
                           const double* norm2, KernelWeights& weights, std::vector<double>& scratch);

bool fused_weights_for(const RfEnsembleConfig& config, std::size_t group_size, FusedWeights& out);

/// Writes / restores the frequency matrices and θ of every slot of a backend (as numbers that
/// must be finite: StateWriter::put_finite_f64s()).
void save_backend_state(const RfBackend& backend, StateWriter& out);
void load_backend_state(RfBackend& backend, StateReader& in);

}  // namespace omkl::detail
