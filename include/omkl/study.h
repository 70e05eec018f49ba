/// @file study.h
/// @brief Monte Carlo studies: seeds × algorithms on one stream, with the output contract of
/// README.md, "Output contract" (summary.json, curves.csv).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "omkl/algorithm.h"
#include "omkl/communicator.h"
#include "omkl/dataset.h"
#include "omkl/device_contexts.h"
#include "omkl/types.h"

namespace omkl {

/// The regret comparator's ridge λ unless a study names another (StudyConfig::regret_lambda).
inline constexpr double kDefaultRegretLambda = 1e-3;

/// How a study's spreads across seeds (final_std, curves.csv's std, the regret curve's) are
/// taken: the sample standard deviation (n − 1 in the denominator; R's sd, as [OKS]'s tables)
/// or the population one (n; numpy's default, as the graph journal's and POF-MKL's tables).
/// Default: the preset's, else the sample one.
enum class Spread { Default, Sample, Population };

/// "sample" / "population" ("default" for Spread::Default).
std::string to_string(Spread spread);
/// "sample" or "population"; ConfigError otherwise.
Spread parse_spread(const std::string& text);

/// The comparator of the federated batch regret ([POF]'s; docs/features.md, "Batch-comparator
/// regret (Table 3)"): exact kernel ridge
/// regression, or ridge regression on random features (StudyConfig::regret_features per
/// kernel). Auto: exact up to 12 000 pooled rows (Naval's 11 500: ≈ 20 min for the 51 Gaussians
/// on 2 cores), random features above. The protocol asks for exact KRR "where it fits in memory", UJI's
/// 21 000 rows included; Exact takes it up to 25 000 rows, at O(T³) per kernel (hours on a few
/// cores for UJI), so Auto stops short of that.
enum class RegretComparator { Auto, Exact, RandomFeatures };

/// "auto", "exact" or "rf"; ConfigError otherwise.
RegretComparator parse_regret_comparator(const std::string& text);

/// A named experimental protocol of a paper: default algorithm parameters (dictionary, D,
/// steps, λ) and the preprocessing of the stream.
struct Preset {
  std::string name;
  std::string description;
  std::vector<std::pair<std::string, std::string>> defaults;  ///< soft algorithm defaults
  Normalization normalization = Normalization::None;
  /// Each replicate sees the stream in its own random order (StudyConfig::shuffle).
  bool shuffle = false;
  /// > 0: a federated protocol — the stream is dealt to clients (arrange_federated) with this
  /// many rounds T before the normalisation, which then covers exactly the rows used.
  std::size_t federated_rounds = 0;
  /// The algorithms of the protocol's tables that a study (or, the first, a run) takes when
  /// given none (`omkl study --preset NAME` without --algo).
  std::vector<std::string> algorithms;
  /// The standard deviation its paper's tables report (StudyConfig::spread).
  Spread spread = Spread::Sample;
  /// The repetitions its paper's tables average (R), which `omkl study --preset` and
  /// omkl.study(preset=…) run when no seed count is given; 0: none stated (one RF draw).
  std::size_t repetitions = 0;
  /// Where a loss's tables run other algorithms than `algorithms`: the loss (the library's
  /// `loss` parameter value, e.g. "absolute") and its algorithms (preset_algorithms()).
  std::vector<std::pair<std::string, std::vector<std::string>>> algorithms_by_loss;
  /// A classification protocol: its stream's targets must be the labels ±1 (after --labels pm1);
  /// load_study_stream() refuses any other.
  bool classification = false;
};

/// The algorithms a study (or, the first, a run) of `preset` takes when given none: its tables'
/// for `loss` (the library's `loss` parameter value, as Preset::algorithms_by_loss; empty or a
/// loss without tables of its own: Preset::algorithms).
const std::vector<std::string>& preset_algorithms(const Preset& preset, const std::string& loss);

/// The replicates a study runs when no count is given (`omkl study` without --seeds,
/// omkl.study(seeds=None)): the preset's repetitions where it states them, else 5. An empty name
/// is no preset; an unknown one a ConfigError, as find_preset().
std::size_t default_seeds(const std::string& preset);

/// Looks a preset up by name. Throws ConfigError listing the known names.
const Preset& find_preset(const std::string& name);
std::vector<std::string> preset_names();

/// What the time-matched mode found (StudyConfig::time_match; [OKS] §6.4).
struct TimeMatchEntry {
  std::string given;             ///< the algorithm as the study was given it
  std::string spec;              ///< as it ran (with the budget found)
  std::string parameter;         ///< the budget tuned, "D" or "B"; empty: none (see note)
  std::size_t value = 0;         ///< its value
  double seconds_per_round = 0;  ///< the measured time per round at that value
  std::string note;              ///< why it was not tuned, or that the reference's time was not reached
};
struct TimeMatchReport {
  std::string reference;                ///< the reference algorithm's spec
  double reference_seconds_per_round = 0;
  std::size_t probe_rows = 0;           ///< rows of each timed pass
  std::vector<TimeMatchEntry> entries;  ///< one per algorithm of the study, in order
};

struct StudyConfig {
  /// The algorithms; empty: the preset's (Preset::algorithms).
  std::vector<AlgorithmSpec> algorithms;
  /// Replicates (seeds) per algorithm: the default of `omkl study` and omkl.study() without a
  /// preset (default_seeds("")); a preset's tables may average more (default_seeds(preset)).
  std::size_t n_seeds = 5;
  std::uint64_t base_seed = 0;
  Profile profile = Profile::Paper;
  std::string preset;                 ///< empty = none
  BackendKind backend = BackendKind::Cpu;
  std::size_t threads = 0;            ///< 0 = all hardware threads
  std::string out_dir;                ///< empty = write nothing
  std::size_t curve_points = 200;     ///< points per curve in curves.csv
  /// The metric: "mse", "mae" or "error_rate"; empty = by task (mse for regression, error_rate
  /// for classification).
  std::string metric;
  /// The spread across seeds: Default takes the preset's (population for the graph journal's
  /// and POF-MKL's protocols), else the sample standard deviation.
  Spread spread = Spread::Default;
  /// Each replicate sees the stream in its own random order, a permutation keyed by (base_seed,
  /// replicate) (as [OKS]'s reference code does); not for federated streams, whose order is the protocol.
  bool shuffle = false;
  /// Run each cell's replicates in lockstep (one algorithm holding all of them, every replicate
  /// through a step before the next step) on the CPU backend too: the schedule of a GPU study,
  /// which gives the same numbers. On the CPU, replicates on separate threads are faster; this is
  /// for checking that schedule on a machine without a GPU.
  bool lockstep_on_cpu = false;
  /// GPU streams and cuBLAS handles for the study's CUDA backends (make_device_contexts()); null:
  /// a GPU study makes a pool of its own. Giving one to successive studies makes the contexts once.
  std::shared_ptr<DeviceContexts> device_contexts;
  /// What produced the study, recorded in summary.json (e.g. the command line, the data path,
  /// the normalisation); summary.json always records the library version as well.
  std::vector<std::pair<std::string, std::string>> provenance;
  /// Soft parameter defaults for every algorithm, over the preset's (e.g. the CLI's --loss).
  std::vector<std::pair<std::string, std::string>> defaults;
  /// Also the graph journal's cumulative regret ([GA-J] Fig. 6) against a
  /// batch kernel-ridge comparator on the jmlr23-76 dictionary: regression streams of at most
  /// 6000 samples and algorithms that define the regret's regulariser (the graph-aided
  /// family); written to regret.csv. On a federated stream, the POF-MKL paper's batch regret
  /// instead ([POF]'s batch regret, mean over clients): against the best of its 51
  /// Gaussians fitted by random-feature ridge on the pooled data, for every algorithm. Reading the regulariser copies every θ each step, which is
  /// cheap on the CPU backend and slow on the GPU one.
  bool regret = false;
  /// On a federated stream, the `regret.include_reg` of [POF]'s protocol (docs/features.md,
  /// "Batch-comparator regret (Table 3)"): the client regrets
  /// (the batch regret of `regret` and eq. (11)) add λ‖θ̄_{k,t}‖² to the algorithm's loss, θ̄
  /// the parameter it predicted with (Σ_i w̄_ik θ_i, or eM-KOFL's θ̄_{J_t}), and eq. (11) adds
  /// λ‖θ_{i,t}‖² to each kernel's. The algorithms then take their host path, one client
  /// sample at a time; PerFedAvg, which has no λ, is refused. Refused off a federated stream
  /// (the graph journal's regret always includes its regulariser).
  bool regret_include_reg = false;
  /// The federated regret's comparator: exact kernel ridge or ridge on random features.
  RegretComparator regret_comparator = RegretComparator::Auto;
  /// Random features per kernel of the federated regret's random-feature comparator (its ridge
  /// solves are 2D × 2D per kernel).
  std::size_t regret_features = 500;
  /// The ridge λ of the regret's batch comparator (> 0): 1e-3, the graph journal's notebook and
  /// the federated protocol's (which names 1e-6 as `lambda`'s alternative).
  double regret_lambda = kDefaultRegretLambda;
  /// The regret comparator's dictionary, a preset name or kernels joined by '+'; empty: the
  /// papers' — jmlr23-76, or on a federated stream fed-51 (the authors' bandwidth convention;
  /// fed-51-textbook is the textbook one's). The federated random-feature comparator needs
  /// shift-invariant kernels.
  std::string regret_dict;
  /// The bandit paper's time-matched mode ([OKS] §6.4): a reference algorithm spec (the paper's
  /// "rf-oks++:D=400"); empty = off. Before the study, the reference's time per round is measured
  /// on this stream and machine, and every algorithm whose spec leaves its budget unset (D for
  /// random features, else B) gets the budget whose measured time per round is closest to it.
  /// The budgets found depend on the machine; summary.json reports them ("time_match"). One
  /// process only.
  std::string time_match;
  /// Rows of each timed pass of the time-matched mode (the fastest of three passes counts); 0 =
  /// the whole stream, as the paper times it (a budgeted support set fills as the stream goes on,
  /// so a prefix can make it look faster than it is).
  std::size_t time_match_rows = 0;
  /// Called after each finished replicate with (done, total); may be empty.
  std::function<void(std::size_t, std::size_t)> progress;
  /// Several processes running this study together (every one calls run_study() with the same
  /// configuration and data): federated algorithms run as a server on rank 0 and clients on the
  /// other ranks, every other replicate on one of the processes; rank 0 gathers the results and
  /// writes the outputs, and its StudyResult is the one-process result bit for bit (times
  /// aside). Null or one process: the study runs here alone.
  std::shared_ptr<Communicator> communicator;
  /// How long the federated server waits for a round's updates before it reports the missing
  /// clients and fails (seconds).
  double message_timeout_s = 60.0;
};

/// Result of one algorithm configuration over all seeds.
struct AlgorithmResult {
  std::string algo;                   ///< algorithm name
  std::string spec;                   ///< full spec text
  /// The grid this configuration came from (AlgorithmSpec::grid, "oks:c_lambda=1|5|10|25");
  /// empty for one written alone. summary.json's "grid", and its "grids" names each one's best.
  std::string grid;
  std::vector<std::pair<std::string, std::string>> params;
  /// Every parameter the algorithm used, given or default ("D" = "50", "eta" = "0.01", ...), in
  /// the order it read them: summary.json's "resolved_params".
  std::vector<std::pair<std::string, std::string>> resolved_params;
  std::string metric;                 ///< "mse" or "error_rate"
  double final_mean = 0.0, final_std = 0.0;
  double seconds_mean = 0.0;          ///< mean wall time of one replicate's online loop
  /// Its spread across the seeds (the study's Spread; the bandit paper's tables give mean ± sd).
  /// Replicates run in lockstep share one time (the cell's ÷ R), so theirs is 0.
  double seconds_std = 0.0;
  double kernel_updates_mean = 0.0;   ///< θ updates per replicate over the stream (0: not counted)
  std::size_t seeds = 0;
  std::vector<double> final_per_seed;
  std::size_t diverged = 0;           ///< replicates with a non-finite prediction (excluded)
  std::vector<std::size_t> curve_t;   ///< time indices (1-based) of the curve points
  std::vector<double> curve_mean, curve_std;
  /// Cumulative regret at curve_t, mean and std over the seeds (empty without StudyConfig::regret).
  std::vector<double> regret_mean, regret_std;
  bool reused = false;                ///< loaded from a previous run in out_dir
  // Federated streams (0 otherwise):
  std::size_t n_clients = 0;
  double final_std_clients = 0.0;     ///< std across clients of the per-client metric, mean over seeds
  double uplink_per_client_step = 0.0;    ///< floats a client sends per step (mean)
  double downlink_per_client_step = 0.0;  ///< floats a client receives per step (mean)
  double max_uplink = 0.0;                ///< largest upload of one client in one step
  /// The loop's client-side seconds (all but the server's aggregation and weight step) ÷ K, mean
  /// over the seeds: the nearest analogue of [POF]'s one client's time (docs/features.md,
  /// "Communication and client regret").
  /// NaN where the server's side is not timed apart (resident walks, processes).
  double client_seconds_per_client = NAN;
  /// The client regret of [POF] eq. (11) at T — Σ_t (ŷ − y)² minus the best of the
  /// algorithm's own kernels on that client — mean over clients, and its std across clients,
  /// both averaged over the seeds; NaN where the algorithm has no per-kernel predictors.
  double regret_eq11_mean = NAN, regret_eq11_std_clients = NAN;
  /// With StudyConfig::regret on a federated stream: the std across clients of their cumulative
  /// regret at T against the batch comparator (regret_mean is then the mean over clients).
  double regret_std_clients = NAN;
  /// Per seed, the algorithm's named end-of-run logs (the bandit family's selection counts, final
  /// p, per-kernel loss; as [OKS]'s reference code logs them); empty for most algorithms. Written to logs.json.
  std::vector<std::vector<std::pair<std::string, std::vector<double>>>> logs;
};

/// A grid of a study (AlgorithmResult::grid) and its best configuration in hindsight: the
/// lowest final_mean (every metric here is a loss), the first in the grid's order on a tie.
struct GridBest {
  std::string grid;
  std::size_t configurations = 0;
  std::string best_spec;           ///< empty where every configuration diverged
  double best_final_mean = NAN;
  std::string metric;              ///< the best configuration's (AlgorithmResult::metric)
};

struct StudyResult {
  std::string dataset;
  std::size_t n_samples = 0, n_features = 0;
  std::string backend, device, profile, preset;
  std::string spread;              ///< the spread across seeds taken: "sample" or "population"
  std::string regret_benchmark;  ///< the comparator's kernel (empty without regret)
  bool regret_include_reg = false;  ///< StudyConfig::regret_include_reg
  std::size_t processes = 1;     ///< processes that ran the study (StudyConfig::communicator)
  std::vector<std::pair<std::string, std::string>> provenance;  ///< StudyConfig::provenance
  std::vector<AlgorithmResult> results;
  TimeMatchReport time_match;    ///< StudyConfig::time_match (reference empty when off)
  /// Seconds this study spent making GPU contexts (0 on the CPU, or when a given pool had them).
  double device_setup_seconds = 0.0;
  /// The path switches (OMKL_CPU_SIMD, OMKL_CUDA_*, …) set while it ran, as [name, value].
  std::vector<std::pair<std::string, std::string>> path_switches;
};

/// The study's grids, in the order their first configuration appears, each with its best.
std::vector<GridBest> grid_bests(const StudyResult& result);

/// Where a study's stream comes from and how it is prepared: what `omkl study --data ...` reads,
/// so that every front end (the CLI, the Python package, a C++ app) gets the same numbers.
struct StudySource {
  std::string path;            ///< a CSV or LIBSVM file, or a built-in stream ("synthetic:dataset1")
  std::string target_column;   ///< CSV: the target's column name (empty: the last column)
  std::string format;          ///< "csv" or "libsvm"; empty: by the file's name (load_stream)
  std::string group_column;    ///< CSV: each row's group, for the federated non-i.i.d. deal (not a feature)
  /// The target as written ("as_written" or empty) or, "pm1", two classes mapped to −1/+1
  /// (map_labels_to_pm1; docs/features.md, "Labels"), before the deal and the normalisation.
  std::string labels;
  /// Categorical feature columns as 0/1 indicators (one_hot_encode): "all", header names joined
  /// by ',', or empty (none); before the deal and the normalisation.
  std::string one_hot;
  std::string preset;          ///< its normalisation and, if federated, its protocol (empty: none)
  /// The loss the stream is learned with, named as for set_study_loss (empty: none given). A
  /// regression loss ("square", "absolute") makes it a regression stream even where every target
  /// is −1 or +1, which would otherwise read as two classes.
  std::string loss;
  std::string normalize;       ///< a normalisation that overrides the preset's (empty: the preset's)
  std::size_t clients = 0;     ///< federated clients K (0: the preset's rule or from the groups)
  std::size_t rounds = 0;      ///< federated rounds T (0: the preset's, if it is federated)
  std::uint64_t seed = 0;      ///< synthetic streams and the federated deal
  /// Grouped federated deal: "chronological" or "shuffled", each group's row order before the
  /// deal (FederatedLayout::shuffle_sites; [POF]'s protocol's noniid.within_site_order);
  /// empty: chronological. Refused without a group column.
  std::string within_site_order;
  /// Grouped federated deal: "shuffled" or "listed", each client's time order
  /// (FederatedLayout::shuffle_within_client); empty: shuffled. Refused without a group column.
  std::string client_order;
};

/// The stream as read and, for a federated preset or with clients / rounds, dealt to the
/// clients (arrange_federated), before any normalisation. Throws InputError for the file,
/// ConfigError for options that contradict each other (a group column without a federated
/// protocol, a group column on a LIBSVM file).
Dataset load_study_stream(const StudySource& source);
/// The source's normalisation: the preset's, overridden by `normalize`.
Normalization study_normalization(const StudySource& source);
/// load_study_stream, then normalised by study_normalization (which then covers exactly the
/// rows a federated protocol uses).
Dataset load_study_data(const StudySource& source);

/// The library's `loss` parameter value for one of the bandit paper's loss names ("logistic",
/// "square", "absolute"; [OKS]'s protocol): "logistic", "squared", "absolute". ConfigError for any other.
std::string loss_parameter(const std::string& loss);

/// One loss for every algorithm of the study, in the bandit paper's names ("logistic",
/// "square", "absolute"; [OKS]'s protocol), and the metric that goes with it (error rate, MSE, MAE):
/// what `omkl study --loss` does. Empty changes nothing; anything else is a ConfigError.
void set_study_loss(StudyConfig& config, const std::string& loss);

/// The metric a stream is scored by, `omkl study`'s and `omkl run`'s alike: the one that goes
/// with `loss`, named as for set_study_loss ("square": "mse", "absolute": "mae", "logistic":
/// "error_rate"; [OKS]'s protocol), or with no loss (empty) the task's: "mse" for regression, "error_rate"
/// for classification. ConfigError for any other loss.
std::string loss_metric(const std::string& loss, Task task);

/// Runs the study on `data` (already normalised). Replicate r of every algorithm uses
/// randomness derived from (base_seed, r) only, so results do not depend on `threads`.
/// When out_dir is set, finished cells are cached there and reused by a later run with the same
/// configuration, and summary.json / curves.csv are written atomically at the end.
/// Before any work it throws InputError for a stream that is empty, whose x and y do not hold
/// n_samples × n_features and n_samples values, or that holds a number that is not finite;
/// ConfigError for a bad configuration (no algorithm, n_seeds 0, an unknown parameter, …) and
/// for an out_dir that cannot be a folder to write in (a file, or under one). A replicate whose
/// predictions stop being finite is counted in AlgorithmResult::diverged, not thrown.
StudyResult run_study(const StudyConfig& config, const Dataset& data);

/// Builds every algorithm of `config` once on `data` (replicate 0, nothing run) and throws what
/// run_study() would throw for a bad spec or parameter, or for n_seeds whose results would not
/// fit in memory (ConfigError naming it): for front ends that print before their studies run
/// (`omkl bench` checks its --algo specs and its largest --seeds before its header).
void check_study_algorithms(const StudyConfig& config, const Dataset& data);

/// The output contract's files as text: summary.json, curves.csv and, where the study has them,
/// logs.json and regret.csv (empty strings otherwise).
struct StudyOutputs {
  std::string summary_json, curves_csv, logs_json, regret_csv;
};
StudyOutputs format_study_outputs(const StudyResult& result);

/// Writes summary.json and curves.csv (and logs.json, regret.csv where the study has them) into
/// `dir` (created if missing), each atomically. ConfigError for a `dir` that cannot be a folder to
/// write in (a file, under one, not writable); InputError or Error for a write that fails.
void write_study_outputs(const StudyResult& result, const std::string& dir);

}  // namespace omkl
