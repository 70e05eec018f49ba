#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "random/rng.h"
#include "families/graph_aided/bipartite_graph.h"
#include "families/graph_aided/divergence.h"
#include "families/graph_aided/dominating_set.h"
#include "families/graph_aided/feedback_graph.h"
#include "families/graph_aided/refinement.h"
#include "random/sampling.h"
#include "omkl/error.h"
#include "omkl/kernel_spec.h"
#include "unit/families/graph_aided/graph_test_util.h"

using omkl::ConfigError;
using omkl::Dictionary;
using omkl::parse_dictionary;
using omkl::test::message_names;
using omkl::test::random_dictionary;
using omkl::test::random_out_degree_graph;
using omkl::test::random_weights;
using namespace omkl::detail;

namespace {

using Index = std::vector<std::size_t>;

Index range(std::size_t a, std::size_t b) {
  Index v(b - a);
  std::iota(v.begin(), v.end(), a);
  return v;
}

Index concat(Index a, const Index& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Structural invariants of the offline similarity graphs (§2.3).
void expect_similarity_graph(const FeedbackGraph& g, std::size_t m, const std::string& what) {
  std::size_t edges = 0, in_total = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const Index& out = g.out_neighbours(i);
    ASSERT_EQ(out.size(), m) << what << " node " << i;
    EXPECT_EQ(out.front(), i) << what << ": the self-loop comes first";
    EXPECT_EQ(std::set<std::size_t>(out.begin(), out.end()).size(), m) << what << ": duplicates";
    for (std::size_t k : out) EXPECT_TRUE(g.has_edge(i, k));
    edges += out.size();
    in_total += g.in_degree(i);
    const Index& in = g.in_neighbours(i);
    EXPECT_EQ(in.size(), g.in_degree(i));
    for (std::size_t a : in) EXPECT_TRUE(g.has_edge(a, i));
  }
  EXPECT_EQ(edges, in_total);
}

template <class F>
void expect_config_error_naming(F&& f, const std::string& name) {
  try {
    f();
    ADD_FAILURE() << "expected ConfigError naming '" << name << "'";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(message_names(e, name)) << "message '" << e.what() << "' does not name '" << name << "'";
  }
}

// Simulates I ~ p and measures how often each kernel is in N_out(I): that frequency is q_k.
void expect_q_matches_simulation(const FeedbackGraph& g, const std::vector<double>& p,
                                 const std::vector<double>& q, RandomStream& rng, int draws) {
  std::vector<int> seen(g.size(), 0);
  for (int t = 0; t < draws; ++t)
    for (std::size_t k : g.out_neighbours(draw_node(p, rng, SamplerRule::InverseCdf))) ++seen[k];
  for (std::size_t k = 0; k < g.size(); ++k) {
    const double freq = static_cast<double>(seen[k]) / draws;
    const double qk = std::min(q[k], 1.0);
    const double se = std::sqrt(qk * (1.0 - qk) / draws);
    EXPECT_NEAR(freq, q[k], 5.0 * se + 1e-9) << "kernel " << k;
  }
}

}  // namespace

// ---- the offline similarity graph (§2.3) --------------------------------------------------

TEST(FeedbackGraphTest, ReferenceGraphMatchesAppendixA) {
  // Appendix A.4 (N = 76, M = 10).
  const FeedbackGraph g = index_order_graph(76, 10);
  EXPECT_EQ(g.out_neighbours(0), range(0, 10));
  EXPECT_EQ(g.out_neighbours(5), (Index{5, 0, 1, 2, 3, 4, 6, 7, 8, 9}));
  EXPECT_EQ(g.out_neighbours(9), concat({9}, range(0, 9)));
  EXPECT_EQ(g.out_neighbours(75), concat({75}, range(0, 9)));
  for (std::size_t k = 0; k < 76; ++k) {
    const std::size_t expected = k <= 8 ? 76 : (k == 9 ? 10 : 1);
    EXPECT_EQ(g.in_degree(k), expected) << "vertex " << k;
  }
  expect_similarity_graph(g, 10, "index order");
}

TEST(FeedbackGraphTest, AllNanDivergenceDegeneratesToIndexOrder) {
  // §0 item 2, §2.3.3: the published NaN matrix + NumPy argmax give the index-order graph, for
  // both masks and for the nearest rule too.
  const Dictionary dict = parse_dictionary("jmlr23-76");
  const DivergenceMatrix nan = divergence_matrix(dict, DivergenceForm::ReferenceNan, 5);
  for (std::size_t m : {1u, 5u, 10u, 15u, 20u, 76u}) {
    const FeedbackGraph expected = index_order_graph(76, m);
    SimilarityGraphOptions options;
    options.divergence = DivergenceForm::ReferenceNan;
    const FeedbackGraph from_options = similarity_graph(dict, m, options);
    const FeedbackGraph zero = dissimilar_graph(nan, m, GreedyMask::Zero);
    const FeedbackGraph neg_inf = dissimilar_graph(nan, m, GreedyMask::NegInf);
    const FeedbackGraph nearest = similar_graph(nan, m);
    for (std::size_t i = 0; i < 76; ++i) {
      EXPECT_EQ(from_options.out_neighbours(i), expected.out_neighbours(i));
      EXPECT_EQ(zero.out_neighbours(i), expected.out_neighbours(i));
      EXPECT_EQ(neg_inf.out_neighbours(i), expected.out_neighbours(i));
      EXPECT_EQ(nearest.out_neighbours(i), expected.out_neighbours(i));
    }
  }
}

TEST(FeedbackGraphTest, ExactDivergenceGraphsMatchTheSpecExamples) {
  // §7 A-3, exact Δ_S with d = 1, M = 10.
  const Dictionary dict = parse_dictionary("jmlr23-76");
  SimilarityGraphOptions journal;
  journal.divergence = DivergenceForm::Exact;
  journal.divergence_dim = 1;
  const FeedbackGraph greedy = similarity_graph(dict, 10, journal);
  EXPECT_EQ(greedy.out_neighbours(0), (Index{0, 75, 51, 74, 52, 53, 73, 54, 50, 55}));
  SimilarityGraphOptions conference = journal;
  conference.rule = GraphRule::ConferenceNearest;
  const FeedbackGraph nearest = similarity_graph(dict, 10, conference);
  const Index& out = nearest.out_neighbours(0);
  EXPECT_EQ(std::set<std::size_t>(out.begin(), out.end()), (std::set<std::size_t>{0, 1, 2, 3, 4, 5, 56, 57, 58, 59}));
  // Ordered by increasing Δ(0, ·).
  const DivergenceMatrix delta = divergence_matrix(dict, DivergenceForm::Exact, 1);
  for (std::size_t a = 1; a + 1 < out.size(); ++a) EXPECT_LE(delta(0, out[a]), delta(0, out[a + 1]));
}

TEST(FeedbackGraphTest, ReferenceFormulaGreedyMatchesSection234) {
  // §2.3.4: the formulas with the value returned and 0-masking give N_out(0) = [0, 50, 49, …, 42].
  SimilarityGraphOptions options;
  options.divergence = DivergenceForm::ReferenceFormula;
  options.mask = GreedyMask::Zero;
  const FeedbackGraph g = similarity_graph(parse_dictionary("jmlr23-76"), 10, options);
  EXPECT_EQ(g.out_neighbours(0), (Index{0, 50, 49, 48, 47, 46, 45, 44, 43, 42}));
  std::size_t typical = 0;
  for (std::size_t k = 0; k < 76; ++k) {
    Index expected = {k};
    for (std::size_t j = 50; expected.size() < 10; --j)
      if (j != k) expected.push_back(j);
    if (g.out_neighbours(k) == expected) ++typical;
  }
  EXPECT_GT(typical, 38u) << "\"N_out(k) = [k, 50, 49, …, 42] for most k\"";
}

TEST(FeedbackGraphTest, ZeroMaskingReportsADuplicatePickInsteadOfMakingOne) {
  // §2.3.1: with 0-masking a chosen vertex wins when every remaining score is negative.
  DivergenceMatrix delta;
  delta.n = 3;
  delta.values = {0, -1, -1, -1, 0, -1, -1, -1, 0};
  EXPECT_THROW(dissimilar_graph(delta, 2, GreedyMask::Zero), ConfigError);
  const FeedbackGraph g = dissimilar_graph(delta, 2, GreedyMask::NegInf);
  EXPECT_EQ(g.out_neighbours(0), (Index{0, 1}));
  EXPECT_EQ(g.out_neighbours(1), (Index{1, 0}));
  // The reference formulas (308 negative entries) never trigger it on the journal dictionary.
  const DivergenceMatrix formula =
      divergence_matrix(parse_dictionary("jmlr23-76"), DivergenceForm::ReferenceFormula, 1);
  for (std::size_t m : {1u, 5u, 10u, 15u, 20u, 76u})
    expect_similarity_graph(dissimilar_graph(formula, m, GreedyMask::Zero), m, "zero mask M=" + std::to_string(m));
}

TEST(FeedbackGraphTest, OutDegreesAreExactlyMForEveryRuleAndDivergence) {
  const Dictionary journal = parse_dictionary("jmlr23-76");
  for (std::size_t m : {1u, 2u, 5u, 10u, 20u, 76u}) {
    for (GraphRule rule : {GraphRule::JournalGreedy, GraphRule::ConferenceNearest}) {
      for (DivergenceForm form : {DivergenceForm::Exact, DivergenceForm::NormalizedExact,
                                  DivergenceForm::ReferenceFormula, DivergenceForm::ReferenceNan}) {
        SimilarityGraphOptions options;
        options.rule = rule;
        options.divergence = form;
        options.divergence_dim = 5;
        const FeedbackGraph g = similarity_graph(journal, m, options);
        expect_similarity_graph(g, m, "M=" + std::to_string(m) + " rule=" + std::to_string(int(rule)) +
                                          " form=" + std::to_string(int(form)));
        EXPECT_TRUE(is_dominating(g, dominating_set(g)));
      }
    }
  }
  SimilarityGraphOptions r2021;
  r2021.divergence = DivergenceForm::Reference2021;
  expect_similarity_graph(similarity_graph(parse_dictionary("conf-41"), 5, r2021), 5, "reference_2021");
}

TEST(FeedbackGraphTest, OutDegreesAreExactlyMOnRandomDictionaries) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    RandomStream rng(seed, 0, RngPurpose::Misc, 21);
    const std::size_t n = 1 + rng.below(30);
    const std::size_t m = 1 + rng.below(n);
    const Dictionary dict = random_dictionary(n, rng);
    for (GraphRule rule : {GraphRule::JournalGreedy, GraphRule::ConferenceNearest}) {
      SimilarityGraphOptions options;
      options.rule = rule;
      options.divergence_dim = 1 + rng.below(20);
      const FeedbackGraph g = similarity_graph(dict, m, options);
      expect_similarity_graph(g, m, "seed " + std::to_string(seed));
      EXPECT_TRUE(is_dominating(g, dominating_set(g, DominatingCandidates::All)));
    }
  }
}

TEST(FeedbackGraphTest, ObservationProbabilitiesEqualSimulatedFrequencies) {
  RandomStream rng(5, 0, RngPurpose::Selection);
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    RandomStream build(seed, 0, RngPurpose::Misc, 22);
    const std::size_t n = 12, m = 1 + build.below(n);
    const FeedbackGraph g = random_out_degree_graph(n, m, build);
    std::vector<double> u = random_weights(n, build);
    const Index d = dominating_set(g);
    const std::vector<double> p = vertex_probabilities(u, 0.3, d);
    EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0), 1.0, 1e-14);
    const std::vector<double> q = g.observation_probabilities(p);
    // q_k = Σ_{a ∈ N_in(k)} p_a by definition.
    for (std::size_t k = 0; k < n; ++k) {
      double s = 0.0;
      for (std::size_t a = 0; a < n; ++a)
        if (g.has_edge(a, k)) s += p[a];
      EXPECT_EQ(q[k], s);
      EXPECT_EQ(g.observation_probability(k, p), q[k]);
      EXPECT_TRUE(std::is_sorted(g.in_neighbours(k).begin(), g.in_neighbours(k).end()));
    }
    expect_q_matches_simulation(g, p, q, rng, 40000);
  }
}

TEST(FeedbackGraphTest, VertexProbabilitiesSpreadExplorationOverTheSet) {
  const std::vector<double> u = {1.0, 3.0, 0.0, 4.0};
  const std::vector<double> p = vertex_probabilities(u, 0.2, {0, 2});
  EXPECT_NEAR(p[0], 0.8 * 0.125 + 0.1, 1e-15);
  EXPECT_NEAR(p[1], 0.8 * 0.375, 1e-15);
  EXPECT_NEAR(p[2], 0.1, 1e-15);
  EXPECT_NEAR(p[3], 0.8 * 0.5, 1e-15);
  expect_config_error_naming([&] { vertex_probabilities(u, 1.5, {0}); }, "xi");
  expect_config_error_naming([&] { vertex_probabilities(u, -0.1, {0}); }, "xi");
  EXPECT_THROW(vertex_probabilities(u, 0.2, {}), ConfigError);
}

TEST(FeedbackGraphTest, ParameterErrorsNameTheParameter) {
  const Dictionary dict = parse_dictionary("jmlr23-76");
  expect_config_error_naming([&] { similarity_graph(dict, 0, {}); }, "M");
  expect_config_error_naming([&] { similarity_graph(dict, 77, {}); }, "M = 77");
  expect_config_error_naming([&] { similarity_graph(parse_dictionary("gauss:1+lap:2"), 3, {}); }, "dictionary");
  expect_config_error_naming([&] { similarity_graph(Dictionary{}, 1, {}); }, "dictionary");
  expect_config_error_naming([&] { index_order_graph(0, 1); }, "dictionary");
  expect_config_error_naming([&] { index_order_graph(5, 6); }, "M");
  SimilarityGraphOptions nan;
  nan.divergence = DivergenceForm::ReferenceNan;
  EXPECT_THROW(similarity_graph(Dictionary{omkl::KernelSpec::linear()}, 1, nan), ConfigError);
}

TEST(FeedbackGraphTest, EdgesAreUniqueAndNodesChecked) {
  FeedbackGraph g(3);
  EXPECT_TRUE(g.add_edge(0, 1));
  EXPECT_FALSE(g.add_edge(0, 1));
  EXPECT_EQ(g.out_degree(0), 1u);
  EXPECT_EQ(g.in_degree(1), 1u);
  EXPECT_THROW(g.add_edge(0, 3), std::out_of_range);
  EXPECT_THROW(g.out_neighbours(7), std::out_of_range);
  EXPECT_THROW(g.observation_probabilities({0.5, 0.5}), std::invalid_argument);
}

// ---- OMKL-SFG-R refinement (§2.6) ---------------------------------------------------------

TEST(FeedbackGraphTest, RefinementSetIsTheTopRankVerticesPlusTies) {
  std::vector<double> u(30);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = 1.0 + static_cast<double>((i * 7) % 30);
  // Distinct weights: exactly the 10 largest.
  Index top = refinement_set_from_rank(u, 0.1);
  Index expected;
  for (std::size_t i = 0; i < u.size(); ++i)
    if (u[i] >= 21.0) expected.push_back(i);
  EXPECT_EQ(top, expected);
  // Ties at the 10th value are all included; beta_eps = 0 still keeps the top ones (§3 R18).
  std::vector<double> flat(25, 2.0);
  EXPECT_EQ(refinement_set_from_rank(flat, 0.05, 10, 0.0).size(), 25u);
  EXPECT_EQ(refinement_set_from_rank(flat, 0.05, 10, 1e-7).size(), 25u);
  // β rule: (1 − ξ) ū_[10] + ξ/N − eps.
  const double total = std::accumulate(u.begin(), u.end(), 0.0);
  EXPECT_NEAR(beta_from_rank(u, 0.1), 0.9 * 21.0 / total + 0.1 / 30 - 1e-7, 1e-15);
  // An explicit β gives eq. 44 directly; every member then has p ≥ β.
  const double beta = 0.05;
  const Index set = refinement_set(u, 0.1, beta);
  const std::vector<double> p = vertex_probabilities(u, 0.1, set);
  for (std::size_t i = 0; i < u.size(); ++i) {
    const bool member = std::find(set.begin(), set.end(), i) != set.end();
    EXPECT_EQ(member, u[i] / total >= (beta - 0.1 / 30) / 0.9);
    if (member) {
      EXPECT_GE(p[i], beta - 1e-15);
    }
  }
}

TEST(FeedbackGraphTest, RefinedGraphMakesRefinementSetDominatingWithQAtLeastBeta) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    RandomStream rng(seed, 0, RngPurpose::Misc, 23);
    const std::size_t n = 10 + rng.below(50);
    const std::size_t m = 1 + rng.below(std::min<std::size_t>(n, 12));
    const Dictionary dict = random_dictionary(n, rng);
    const DivergenceMatrix delta = divergence_matrix(dict, DivergenceForm::Exact, 1 + rng.below(5));
    SimilarityGraphOptions build;
    build.rule = seed % 2 ? GraphRule::JournalGreedy : GraphRule::ConferenceNearest;
    const FeedbackGraph base = seed % 3 ? similarity_graph(dict, m, build) : random_out_degree_graph(n, m, rng);
    const std::vector<double> u = random_weights(n, rng);
    const double xi = 0.5 * rng.uniform();
    const double beta = beta_from_rank(u, xi);
    const Index set = refinement_set_from_rank(u, xi);
    ASSERT_GE(set.size(), 10u);
    for (RefinePick pick : {RefinePick::Argmax, RefinePick::Argmin}) {
      for (bool all : {false, true}) {
        const RefinedGraph refined = refine_graph(base, delta, set, {pick, all});
        const FeedbackGraph refined_graph = refined.graph();
        // The presorted dominator lookup the algorithm uses gives the same refinement.
        RefinedGraph by_order;
        by_order.refine(base, DominatorOrder(delta, pick), set, {pick, all});
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(by_order.dominator(i), refined.dominator(i)) << "seed " << seed << " vertex " << i;
          ASSERT_EQ(by_order.added_from(i), refined.added_from(i));
        }
        ASSERT_TRUE(is_dominating(refined_graph, set)) << "seed " << seed;
        EXPECT_EQ(refined.refinement_set(), set);
        // Every vertex has an in-neighbour in D'_t (itself or an edge from it).
        for (std::size_t i = 0; i < n; ++i) {
          bool ok = std::find(set.begin(), set.end(), i) != set.end();
          for (std::size_t a : set) ok = ok || refined_graph.has_edge(a, i);
          EXPECT_TRUE(ok) << "vertex " << i;
        }
        // E ⊆ E'_t and the base out-lists are prefixes of the refined ones.
        for (std::size_t a = 0; a < n; ++a) {
          const Index& b = base.out_neighbours(a);
          const Index& r = refined_graph.out_neighbours(a);
          ASSERT_GE(r.size(), b.size());
          EXPECT_TRUE(std::equal(b.begin(), b.end(), r.begin()));
          // The overlay lists the same out-neighbours as the materialised graph.
          Index overlay;
          refined.out_neighbours(a, overlay);
          EXPECT_EQ(overlay, r);
        }
        // q ≥ β_t for every kernel (§2.6.a step 6).
        const std::vector<double> p = vertex_probabilities(u, xi, set);
        const std::vector<double> q = refined_graph.observation_probabilities(p);
        const ObservationSums sums(base);
        double p_total = 0.0;
        for (double v : p) p_total += v;
        for (std::size_t k = 0; k < n; ++k) {
          EXPECT_GE(q[k], beta - 1e-15) << "seed " << seed << " k " << k;
          // What OMKL-SFG-R uses: the base graph's sums plus the refinement edge into k (the
          // complement side rounds differently, hence a few ulps of q ≤ 1).
          EXPECT_NEAR(sums.q(k, p, p_total, refined.added_from(k)), q[k], 1e-15) << "seed " << seed << " k " << k;
        }
        // The chosen dominators are extremal divergences within D'_t.
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t d = refined.dominator(i);
          if (d == RefinedGraph::npos) continue;
          for (std::size_t j : set) {
            if (pick == RefinePick::Argmax) {
              EXPECT_GE(delta(i, d), delta(i, j));
            } else {
              EXPECT_LE(delta(i, d), delta(i, j));
            }
          }
        }
      }
    }
  }
}

TEST(FeedbackGraphTest, PaperRefinementOnlyTouchesUndominatedVertices) {
  // Path-like graph: 0 → {0, 1}, 1 → {1, 2}, …; D' = {0, 5}: vertices 0, 1, 5, 6 are dominated.
  const std::size_t n = 9;
  FeedbackGraph g(n);
  for (std::size_t i = 0; i < n; ++i) {
    g.add_edge(i, i);
    if (i + 1 < n) g.add_edge(i, i + 1);
  }
  RandomStream build(1, 0, RngPurpose::Misc);
  const DivergenceMatrix delta = divergence_matrix(random_dictionary(n, build), DivergenceForm::Exact, 1);
  const Index set = {0, 5};
  const RefinedGraph paper = refine_graph(g, delta, set, {RefinePick::Argmax, false});
  for (std::size_t i : {0u, 1u, 5u, 6u}) EXPECT_EQ(paper.dominator(i), RefinedGraph::npos) << i;
  for (std::size_t i : {2u, 3u, 4u, 7u, 8u}) EXPECT_NE(paper.dominator(i), RefinedGraph::npos) << i;
  const RefinedGraph all = refine_graph(g, delta, set, {RefinePick::Argmax, true});
  for (std::size_t i = 0; i < n; ++i) EXPECT_NE(all.dominator(i), RefinedGraph::npos) << i;
}

TEST(FeedbackGraphTest, ReferenceRefinementWithNanDivergenceMatchesSection26b) {
  // §2.6.b consequences: with all-NaN Δ, d_i = min D'_t; vertex 0 has the largest u (it is never
  // drawn), so B = A plus 0 → i for all i and N_out_ref(0) lists every kernel.
  const std::size_t n = 76, m = 10;
  const FeedbackGraph base = index_order_graph(n, m);
  const DivergenceMatrix nan = divergence_matrix(parse_dictionary("jmlr23-76"), DivergenceForm::ReferenceNan, 1);
  RandomStream rng(4, 0, RngPurpose::Misc);
  std::vector<double> u = random_weights(n, rng);
  u[0] = 1.0;  // the maximum
  const double xi = 0.1 / std::sqrt(17.0);
  const Index set = refinement_set_from_rank(u, xi);
  ASSERT_EQ(set.front(), 0u);
  const RefinedGraph refined = refine_graph(base, nan, set, {RefinePick::Argmax, true});
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(refined.dominator(i), 0u);
  RefinedGraph by_order;  // all-NaN Δ: every candidate list is 0, 1, 2, … (first NaN wins)
  by_order.refine(base, DominatorOrder(nan, RefinePick::Argmax), set, {RefinePick::Argmax, true});
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(by_order.dominator(i), 0u);
  const FeedbackGraph refined_graph = refined.graph();
  EXPECT_EQ(refined_graph.out_neighbours(0), range(0, n));
  for (std::size_t a = 1; a < n; ++a) EXPECT_EQ(refined_graph.out_neighbours(a), base.out_neighbours(a));
  // q_i = Σ_{a ∈ N_in(i)} p_a + p_0 · 1[A[0, i] = 0].
  const std::vector<double> p = vertex_probabilities(u, xi, set);
  const std::vector<double> q = refined_graph.observation_probabilities(p);
  const std::vector<double> q_base = base.observation_probabilities(p);
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_NEAR(q[i], q_base[i] + (base.has_edge(0, i) ? 0.0 : p[0]), 1e-15);
  // Argmin behaves identically on NaN (NumPy's argmin also returns the first NaN).
  const RefinedGraph argmin = refine_graph(base, nan, set, {RefinePick::Argmin, true});
  EXPECT_EQ(argmin.graph().out_neighbours(0), range(0, n));
}

TEST(FeedbackGraphTest, RefinedObservationProbabilitiesEqualSimulatedFrequencies) {
  RandomStream rng(6, 0, RngPurpose::Selection);
  RandomStream build(6, 0, RngPurpose::Misc, 24);
  const std::size_t n = 16;
  const FeedbackGraph base = random_out_degree_graph(n, 3, build);
  const DivergenceMatrix delta = divergence_matrix(random_dictionary(n, build), DivergenceForm::Exact, 2);
  const std::vector<double> u = random_weights(n, build);
  const Index set = refinement_set_from_rank(u, 0.2, 4);
  const RefinedGraph refined = refine_graph(base, delta, set, {});
  const std::vector<double> p = vertex_probabilities(u, 0.2, set);
  const FeedbackGraph refined_graph = refined.graph();
  expect_q_matches_simulation(refined_graph, p, refined_graph.observation_probabilities(p), rng, 40000);
}

TEST(FeedbackGraphTest, RefinementSetFromSortedEqualsRankSelection) {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    RandomStream rng(seed, 0, RngPurpose::Misc, 31);
    const std::size_t n = 10 + rng.below(80);
    std::vector<double> u = random_weights(n, rng);
    // Ties, including at the rank boundary, and a few zero weights.
    for (std::size_t i = 0; i < n / 4; ++i) u[rng.below(n)] = u[rng.below(n)];
    if (seed % 3 == 0) u[rng.below(n)] = 0.0;
    std::vector<std::uint32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(n - 1 - i);  // ties reversed
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return u[a] > u[b]; });
    const double xi = 0.3 * rng.uniform();
    const std::size_t rank = 1 + rng.below(std::min<std::size_t>(n, 12));
    for (double eps : {0.0, 1e-7, 1e-3}) {
      Index got;
      refinement_set_from_sorted(u, order, xi, rank, eps, got);
      EXPECT_EQ(got, refinement_set_from_rank(u, xi, rank, eps)) << "seed " << seed << " eps " << eps;
    }
  }
}

TEST(FeedbackGraphTest, RefinementParameterErrorsNameTheParameter) {
  const std::vector<double> u(20, 1.0);
  for (double beta : {0.0, -0.1, 1.5, std::nan("")})
    expect_config_error_naming([&] { refinement_set(u, 0.1, beta); }, "beta");
  EXPECT_NO_THROW(refinement_set(u, 0.1, 1.0));
  expect_config_error_naming([&] { refinement_set(u, 1.0, 0.1); }, "xi");
  expect_config_error_naming([&] { beta_from_rank(u, 0.1, 21); }, "beta_rank");
  expect_config_error_naming([&] { refinement_set_from_rank(std::vector<double>(5, 1.0), 0.1); }, "dictionary");
  expect_config_error_naming([&] { beta_from_rank({}, 0.1); }, "dictionary");
  const FeedbackGraph g = index_order_graph(20, 2);
  const DivergenceMatrix nan =
      divergence_matrix(Dictionary(20, omkl::KernelSpec::gaussian(1.0)), DivergenceForm::ReferenceNan, 1);
  EXPECT_THROW(refine_graph(g, nan, {}, {}), ConfigError);
}

// ---- the OMKL-GF bipartite graph (§2.1) ---------------------------------------------------

TEST(FeedbackGraphTest, BipartiteRegenerationFollowsAlgorithm2) {
  const std::size_t n = 76, j = 2, m = 10;
  BipartiteFeedbackGraph graph(n, j, m);
  RandomStream rng(1, 0, RngPurpose::Selection), twin(1, 0, RngPurpose::Selection);
  RandomStream wrng(2, 0, RngPurpose::Misc);
  const std::vector<double> w = random_weights(n, wrng);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  const double eta = 0.1 / std::sqrt(3.0);
  for (SamplerRule rule : {SamplerRule::InverseCdf, SamplerRule::Shifted}) {
    graph.regenerate(w, eta, rng, rule);
    // Exactly J·M uniforms are consumed (§1.9), column-major in j.
    std::vector<double> r(j * m);
    for (double& v : r) v = twin.uniform();
    EXPECT_EQ(rng.position(), twin.position());
    for (std::size_t node = 0; node < j; ++node) {
      const double e = std::pow(eta, static_cast<double>(node + 1));
      std::vector<double> pi(n);
      for (std::size_t k = 0; k < n; ++k) pi[k] = (1.0 - e) * (w[k] / total) + e / n;
      std::set<std::size_t> hit;
      for (std::size_t d = 0; d < m; ++d) hit.insert(sample_index(pi, r[node * m + d], rule));
      const Index& s = graph.kernels(node);
      EXPECT_EQ(Index(hit.begin(), hit.end()), s);
      EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
      EXPECT_GE(s.size(), 1u);
      EXPECT_LE(s.size(), m);
      for (std::size_t k = 0; k < n; ++k) {
        EXPECT_EQ(graph.linked(k, node), hit.count(k) == 1);
        EXPECT_NEAR(graph.link_probability(k, node), 1.0 - std::pow(1.0 - pi[k], 10.0), 1e-15);
      }
      if (rule == SamplerRule::Shifted) {
        EXPECT_FALSE(graph.linked(0, node));
      }
    }
    // u_j = Σ_{k linked to j} w_k.
    const std::vector<double> u = graph.selective_weights(w);
    for (std::size_t node = 0; node < j; ++node) {
      double s = 0.0;
      for (std::size_t k : graph.kernels(node)) s += w[k];
      EXPECT_NEAR(u[node], s, 1e-15);
    }
  }
}

TEST(FeedbackGraphTest, BipartiteObservationProbabilitiesEqualSimulatedFrequencies) {
  // With p fixed, the chance that kernel k lands in S_t = {k : A[k, I_t] = 1}, over fresh graphs
  // and I_t ~ p, is Σ_j p_j (1 − (1 − π_kj)^M) = q_k (eq. 21).
  const std::size_t n = 20, j = 3, m = 4;
  BipartiteFeedbackGraph graph(n, j, m);
  RandomStream rng(8, 0, RngPurpose::Selection);
  RandomStream wrng(8, 0, RngPurpose::Misc);
  const std::vector<double> w = random_weights(n, wrng);
  const std::vector<double> p = selective_node_probabilities({0.2, 1.0, 3.0}, 0.3);
  EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0), 1.0, 1e-15);
  const int trials = 40000;
  std::vector<int> seen(n, 0);
  std::vector<double> q;
  for (int t = 0; t < trials; ++t) {
    graph.regenerate(w, 0.4, rng, SamplerRule::InverseCdf);
    if (t == 0) {
      q = graph.observation_probabilities(p);
      for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(graph.observation_probability(k, p), q[k]);
    }
    for (std::size_t k : graph.kernels(draw_node(p, rng, SamplerRule::InverseCdf))) ++seen[k];
  }
  for (std::size_t k = 0; k < n; ++k) {
    const double freq = static_cast<double>(seen[k]) / trials;
    const double se = std::sqrt(q[k] * (1.0 - q[k]) / trials);
    EXPECT_NEAR(freq, q[k], 5.0 * se + 1e-9) << "kernel " << k;
  }
}

TEST(FeedbackGraphTest, ShiftedBipartiteDrawsFollowTheShiftedLaw) {
  // §1.8 / §3 R5: with the reference sampler the link frequencies follow the shifted law while
  // P (and hence q) keeps the unshifted π, as in the reference code.
  const std::size_t n = 8, m = 3;
  BipartiteFeedbackGraph graph(n, 1, m);
  RandomStream rng(9, 0, RngPurpose::Selection);
  const std::vector<double> w = {5.0, 1.0, 2.0, 1.0, 0.5, 3.0, 1.0, 2.0};
  const double eta = 0.2;
  std::vector<double> pi(n);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (std::size_t k = 0; k < n; ++k) pi[k] = (1 - eta) * w[k] / total + eta / n;
  const std::vector<double> e = effective_probabilities(pi, SamplerRule::Shifted);
  const int trials = 40000;
  std::vector<int> linked(n, 0);
  for (int t = 0; t < trials; ++t) {
    graph.regenerate(w, eta, rng, SamplerRule::Shifted);
    for (std::size_t k : graph.kernels(0)) ++linked[k];
  }
  for (std::size_t k = 0; k < n; ++k) {
    const double expected = 1.0 - std::pow(1.0 - e[k], static_cast<double>(m));
    const double freq = static_cast<double>(linked[k]) / trials;
    EXPECT_NEAR(freq, expected, 5.0 * std::sqrt(expected * (1 - expected) / trials) + 1e-9) << k;
    EXPECT_NEAR(graph.link_probability(k, 0), 1.0 - std::pow(1.0 - pi[k], 3.0), 1e-15);
  }
  EXPECT_EQ(linked[0], 0);
}

TEST(FeedbackGraphTest, BipartiteParameterErrorsNameTheParameter) {
  expect_config_error_naming([] { BipartiteFeedbackGraph(76, 0, 10); }, "J");
  expect_config_error_naming([] { BipartiteFeedbackGraph(76, 2, 0); }, "M");
  expect_config_error_naming([] { BipartiteFeedbackGraph(5, 2, 6); }, "M = 6");
  expect_config_error_naming([] { BipartiteFeedbackGraph(0, 2, 1); }, "dictionary");
  BipartiteFeedbackGraph g(4, 1, 2);
  RandomStream rng(1, 0, RngPurpose::Selection);
  const auto before = rng.position();
  expect_config_error_naming([&] { g.regenerate({1, 1, 1, 1}, 1.5, rng, SamplerRule::InverseCdf); }, "eta_e");
  EXPECT_EQ(rng.position(), before) << "a rejected call consumes no random numbers";
  expect_config_error_naming([] { selective_node_probabilities({1.0, 2.0}, -0.5); }, "eta_e");
  EXPECT_THROW(g.regenerate({1, 1, 1}, 0.5, rng, SamplerRule::InverseCdf), std::invalid_argument);
}
