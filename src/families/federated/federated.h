/// @file federated.h
/// @brief The federated family (spec/federated.md): POF-MKL and its baselines OFSKL, OFMKL-Avg,
/// vM-KOFL (global_kernels.cpp), eM-KOFL (em_kofl.cpp) and PerFedAvg (perfedavg.cpp); their shared
/// parameters, budget and message ledger (federated_config.h) and Algorithm 1
/// (kernel_selection.h). The algorithms register through add_federated_algorithms(); this header
/// exposes what tests need to check a step against a direct computation.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/algorithm_base.h"
#include "families/federated/kernel_selection.h"

namespace omkl::detail {

/// θ of one kernel (2D values) on the server: pof-mkl, ofskl, ofmkl-avg, vm-kofl. Throws Error
/// for other algorithms.
std::vector<double> federated_theta(const Algorithm& algorithm, std::size_t replicate, std::size_t kernel);
/// Log kernel weights: client `client`'s private ones (pof-mkl) or the server's (vm-kofl; client
/// ignored); empty for the unweighted ones.
std::vector<double> federated_log_weights(const Algorithm& algorithm, std::size_t replicate, std::size_t client);
/// The selection of the last client step of a replicate (all kernels, p = 1, for the baselines).
const KernelSelection& federated_last_selection(const Algorithm& algorithm, std::size_t replicate);

/// eM-KOFL's server draw of round t (§3.4 step 1), both variants': J_t ~ (1 − explore)·ω̄ +
/// explore/N from the server's log-weights (N of them) by one uniform of the keyed server stream
/// of (seed, replicate); em_kofl_draw(), the resident walk's code too.
std::size_t em_kofl_server_draw(const double* log_w, std::size_t N, double explore, std::uint64_t seed,
                                std::uint64_t replicate, std::int64_t t);

/// eM-KOFL's variant=global_only (spec/federated.md §3.4): the server keeps the only θ; each
/// round it draws J_t from its Hedge weights, every client predicts with θ_{J_t}, reports its N
/// losses against the global θ and uploads the gradient of θ_{J_t} alone, which the server
/// averages (FedAvg). Built by em-kofl's factory (global_kernels.cpp).
std::unique_ptr<Algorithm> make_global_only_em_kofl(ParamReader& params, const AlgoContext& context);

/// OFSKL with local_steps = L > 1 (spec/federated.md §3.1, fedomd.local_steps): Fed-OMD whose
/// clients each step their own θ and average every L rounds (em_kofl.cpp's local copies).
std::unique_ptr<Algorithm> make_fedomd_local_steps(ParamReader& params, const AlgoContext& context,
                                                   std::size_t local_steps);

// The family's parts register here (federated.cpp calls them).
void add_global_kernel_federations(std::vector<AlgorithmInfo>& registry);
void add_em_kofl(std::vector<AlgorithmInfo>& registry);
void add_perfedavg(std::vector<AlgorithmInfo>& registry);

}  // namespace omkl::detail
