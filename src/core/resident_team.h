/// @file resident_team.h
/// @brief A *team*: the threads that run a resident program's plan() and learn() together. On the
/// GPU the thread block that walks a replicate (kernels/resident_walk.cuh, with
/// OMKL_CUDA_WALK_PLAN=block); on the host one thread (SerialTeam: a team program's serial
/// reading, what every driver runs by default), or several host threads in lockstep, to check a
/// team program's sharing of the work without a GPU (host_team.h).
///
/// Why: a per-step-feedback program's plan and learn are loops over its kernels (weights, their
/// exp, a probability per vertex, an observation sum per pair) that one GPU thread walks while
/// the block's other threads wait at the barrier; a team spreads the loops' independent entries
/// over the block and keeps only the ordered reductions on one thread.
///
/// The rule that keeps a team program's numbers its serial reading's, bit for bit: a loop whose
/// entries are independent is split over the lanes (i = lane, lane + size, …); every sum, maximum,
/// scan and random draw is the leader's (lane 0), over the entries in their order, and what the
/// others need of it they get by share(). Only where the work runs changes, not its arithmetic.
///
/// A team has lane(), size(), leader(), sync() (a barrier that also orders memory: what a lane
/// wrote before it, every lane reads after it), share(v) (the leader's v on every lane; a
/// trivially copyable value of at most kTeamShareWords words) and stage(v, n) (v[0..n), written by any lanes
/// before the call, where the leader reads it fastest: a copy in the GPU's shared memory, n ≤
/// kMaxTeamStage; valid until the next stage()). sync(), share() and stage() are barriers: every
/// lane makes the same calls in the same order, so a branch around one must go the same way on
/// every lane — decided by the tables, by t, or by a value share() handed out.
///
/// A team whose kTreeSums is true also has the tree-order reductions (team_reductions.h; false
/// only for a GPU thread alone, which keeps the index order), each a barrier with its
/// result on every lane: tree_sum(n, value_of) and tree_max(n, value_of) of value_of(0..n), and
/// tree_draw(p, n, r, shifted), sample_index()'s draw over p's tree-order prefix sums with the
/// leader's r. What value_of and p read must have been written before the last barrier. Their
/// terms meet in one fixed order whatever the team, so that they too give the same bits on every
/// team: a GPU block does them in its first warp, the others by team_reductions.h's loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/host_device.h"
#include "core/team_reductions.h"

namespace omkl::detail {

/// Most entries one stage() holds (the GPU block's shared copy).
constexpr std::size_t kMaxTeamStage = 128;

/// 64-bit words one share() hands out. A team keeps two such slots and alternates them, so that
/// a share() is one barrier: the slot a share() writes was last read two share()s before, and
/// every lane passed the barrier of the share() between after its read.
constexpr std::size_t kTeamShareWords = 2;

/// One lane: the serial reading of a team program (every loop the lane's, share() the identity).
struct SerialTeam {
#ifdef __CUDA_ARCH__
  static constexpr bool kTreeSums = false;  // a GPU thread alone keeps the index order (see team_reductions.h)
#else
  static constexpr bool kTreeSums = true;
#endif
  OMKL_HD unsigned lane() const { return 0u; }
  OMKL_HD unsigned size() const { return 1u; }
  OMKL_HD bool leader() const { return true; }
  OMKL_HD void sync() {}
  template <typename T>
  OMKL_HD T share(T v) {
    return v;
  }
  OMKL_HD const double* stage(const double* v, std::size_t /*n*/) { return v; }
  template <typename ValueOf>
  OMKL_HD double tree_sum(std::size_t n, ValueOf&& value_of) {
    return tree_order_sum(n, value_of);
  }
  template <typename ValueOf>
  OMKL_HD double tree_max(std::size_t n, ValueOf&& value_of) {
    return tree_order_max(n, value_of);
  }
  OMKL_HD std::size_t tree_draw(const double* p, std::size_t n, double r, bool shifted) {
    return tree_order_draw(p, n, r, shifted);
  }
};

/// Whether a program's plan() and learn() take a team: one that does declares
/// `static constexpr bool kTeamSteps = true;` and has `plan(r, t, pairs, team)` and
/// `learn(r, t, y, f, norm2, pairs, team)`, their results the leader's. The drivers call the
/// others' plan(r, t, pairs) and learn(r, t, y, f, norm2, pairs) on one thread.
template <typename Program, typename = void>
struct TeamSteps : std::false_type {};
template <typename Program>
struct TeamSteps<Program, std::void_t<decltype(Program::kTeamSteps)>> : std::bool_constant<Program::kTeamSteps> {};

}  // namespace omkl::detail
