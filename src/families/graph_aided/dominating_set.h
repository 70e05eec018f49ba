/// @file dominating_set.h
/// @brief Greedy dominating set of a feedback graph (spec/graph-aided.md §2.4), used by OMKL-SFG
/// to spread the exploration mass ξ_t over D (eq. 33).
#pragma once

#include <cstddef>
#include <vector>

#include "families/graph_aided/feedback_graph.h"

namespace omkl::detail {

/// §3 R4 `dominating_candidates`: the reference only considers still-uncovered vertices;
/// Chvátal's greedy set cover (the papers' citation) considers every vertex.
enum class DominatingCandidates { Uncovered, All };

/// Greedy dominating set, in pick order: while some vertex is uncovered, pick the candidate v
/// covering the most uncovered vertices of N_out(v) ∪ {v} (first maximum in ascending order,
/// §7 A-14) and mark them covered. A vertex counts as covering itself even without a self-loop,
/// since a member of D is dominated by definition.
std::vector<std::size_t> dominating_set(const FeedbackGraph& graph,
                                        DominatingCandidates candidates = DominatingCandidates::Uncovered);

/// True iff every vertex is in `set` or has an in-neighbour in `set`.
bool is_dominating(const FeedbackGraph& graph, const std::vector<std::size_t>& set);

}  // namespace omkl::detail
