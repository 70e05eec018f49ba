/// @file federation_processes.h
/// @brief What every federated algorithm's server/client processes share (spec/federated.md
/// §6.4; README "Several processes"): which rank holds a client, the checks before a run
/// (federation_rounds), the server's receive of a round's answers that names a silent rank's
/// clients (receive_round), a client rank's answer header (begin_answer), the closing report
/// (per-kernel losses and message counts), and the test hooks that lose an update or end a rank.
///
/// Rank 0 is the server; client k lives on rank 1 + k mod (P − 1). Every message carries its
/// round, and the server checks it and which clients answered, so a lost or misrouted update is
/// an error naming the client and round rather than a wrong number.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/algorithm_base.h"
#include "core/state_io.h"
#include "omkl/communicator.h"
#include "omkl/error.h"

namespace omkl::detail {

/// The rank that holds client `client` among `size` processes (rank 0 is the server).
inline int client_rank(std::size_t client, int size) {
  return 1 + static_cast<int>(client % static_cast<std::size_t>(size - 1));
}

/// The clients of rank `rank`, in ascending order.
inline std::vector<std::size_t> clients_of_rank(int rank, int size, std::size_t n_clients) {
  std::vector<std::size_t> clients;
  for (std::size_t k = static_cast<std::size_t>(rank - 1); k < n_clients; k += static_cast<std::size_t>(size - 1))
    clients.push_back(k);
  return clients;
}

/// The checks every federation makes before running as processes; the number of rounds of an
/// n-row stream of `n_clients` clients.
inline std::size_t federation_rounds(const Communicator& comm, bool resident, bool track_regularizer,
                                     std::int64_t seen, std::size_t n, std::size_t n_clients) {
  if (comm.size() < 2) throw ConfigError("a distributed federation needs a server and at least one client process");
  if (resident) throw ConfigError("a distributed federation takes the host path (step_path=host)");
  if (track_regularizer)
    throw ConfigError("a distributed federation does not keep the regret's regulariser terms (regret.include_reg)");
  if (seen != 0) throw Error("a distributed federation starts from the first sample");
  if (n % n_clients != 0)
    throw ConfigError("the stream's " + std::to_string(n) + " rows are not whole rounds of " +
                      std::to_string(n_clients) + " clients");
  return n / n_clients;
}

/// The server's receive of rank p's message for round t; a timeout names the clients the rank
/// holds and the round.
inline std::string receive_from_clients(Communicator& comm, int p, int tag, std::size_t t, std::size_t n_clients,
                                        double timeout_s) {
  try {
    return comm.receive(p, tag, timeout_s);
  } catch (const Error& e) {
    std::string clients;
    for (std::size_t k : clients_of_rank(p, comm.size(), n_clients))
      clients += (clients.empty() ? "" : ", ") + std::to_string(k);
    throw Error("federated server: no update from client(s) " + clients + " (rank " + std::to_string(p) +
                ") for round " + std::to_string(t) + ": " + e.what());
  }
}

/// The server's bookkeeping of one round's answers: each client answers once, from its rank.
class RoundAnswers {
 public:
  explicit RoundAnswers(std::size_t n_clients) : heard_(n_clients, 0) {}
  /// Client k answered from rank p; throws Error for a client of another rank or one heard twice.
  void heard(std::size_t k, int p, int size) {
    if (k >= heard_.size() || client_rank(k, size) != p || heard_[k])
      throw Error("federated server: rank " + std::to_string(p) + " sent an update for client " + std::to_string(k));
    heard_[k] = 1;
  }
  /// Throws Error naming the first client that did not answer round t.
  void require_all(std::size_t t, int size) const {
    for (std::size_t k = 0; k < heard_.size(); ++k)
      if (!heard_[k])
        throw Error("federated server: no update from client " + std::to_string(k) + " (rank " +
                    std::to_string(client_rank(k, size)) + ") for round " + std::to_string(t));
  }

 private:
  std::vector<char> heard_;
};

/// The server's side of one exchange of round t: every client rank's message `tag`, each a round
/// number, a count and that many client records (client index first); `read(k, in)` reads client
/// k's record. Every client answers once, from its own rank, or an Error names the first that
/// did not; `what` names the message in a malformed one's error.
template <typename ReadClient>
void receive_round(Communicator& comm, int tag, std::size_t t, std::size_t n_clients, double timeout_s,
                   const std::string& what, ReadClient&& read) {
  RoundAnswers answers(n_clients);
  for (int p = 1; p < comm.size(); ++p) {
    StateReader in(receive_from_clients(comm, p, tag, t, n_clients, timeout_s),
                   what + " from rank " + std::to_string(p), StateOrigin::Message);
    if (in.get_u64() != t) throw Error("federated server: rank " + std::to_string(p) + " answered another round");
    const std::uint64_t count = in.get_u64();
    for (std::uint64_t c = 0; c < count; ++c) {
      const std::uint64_t k = in.get_u64();
      answers.heard(static_cast<std::size_t>(k), p, comm.size());
      read(static_cast<std::size_t>(k), in);
    }
  }
  answers.require_all(t, comm.size());
}

/// Test hooks (fault injection, never set in normal runs): OMKL_FEDERATED_DROP_CLIENT/_ROUND lose
/// one client's update; OMKL_FEDERATED_KILL_RANK/_ROUND end one client process.
struct FaultInjection {
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t drop_client = kNone, drop_round = kNone, die_round = kNone;

  /// The switches as rank `rank` reads them.
  static FaultInjection for_rank(int rank) {
    FaultInjection f;
    f.drop_client = read("OMKL_FEDERATED_DROP_CLIENT");
    f.drop_round = read("OMKL_FEDERATED_DROP_ROUND");
    if (read("OMKL_FEDERATED_KILL_RANK") == static_cast<std::uint64_t>(rank)) f.die_round = read("OMKL_FEDERATED_KILL_ROUND");
    return f;
  }
  bool drops(std::size_t client, std::size_t t) const { return client == drop_client && t == drop_round; }
  /// Ends this process at the opening of round t when asked to.
  void maybe_die(std::size_t t) const {
    if (t == die_round) std::_Exit(9);
  }

 private:
  static std::uint64_t read(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::strtoull(v, nullptr, 10) : kNone;
  }
};

/// A client rank's answer of round t, begun: the round and how many of its clients answer (all of
/// `mine` but one the fault hooks drop); each client's record follows, its index first.
inline StateWriter begin_answer(std::size_t t, const std::vector<std::size_t>& mine, const FaultInjection& faults) {
  StateWriter out;
  out.put_u64(t);
  std::size_t count = 0;
  for (std::size_t k : mine) count += !faults.drops(k, t);
  out.put_u64(count);
  return out;
}

/// A client rank's closing report: its clients' per-kernel losses (R × N each, the regret's
/// comparators), its message counts and its kernel-update count.
inline void send_final_report(Communicator& comm, int tag, const std::vector<double>& kernel_loss, std::size_t R,
                              std::size_t n_clients, std::size_t N, const CommunicationCount& sent,
                              std::uint64_t kernel_updates) {
  StateWriter out;
  for (std::size_t k : clients_of_rank(comm.rank(), comm.size(), n_clients))
    for (std::size_t r = 0; r < R; ++r) out.put_f64s(kernel_loss.data() + (r * n_clients + k) * N, N);
  out.put_f64(sent.uplink_floats);
  out.put_f64(sent.downlink_floats);
  out.put_f64(sent.max_uplink);
  out.put_f64(sent.client_steps);
  out.put_u64(kernel_updates);
  comm.send(0, tag, out.bytes());
}

/// The server's side of send_final_report(): every client rank's losses into `kernel_loss`
/// (R × K × N), their message counts summed into the returned totals, their updates added to
/// `kernel_updates`.
inline CommunicationCount receive_final_reports(Communicator& comm, int tag, double timeout_s,
                                                std::vector<double>& kernel_loss, std::size_t R, std::size_t n_clients,
                                                std::size_t N, std::uint64_t& kernel_updates) {
  CommunicationCount total;
  for (int p = 1; p < comm.size(); ++p) {
    StateReader in(comm.receive(p, tag, timeout_s), "final report of rank " + std::to_string(p), StateOrigin::Message);
    for (std::size_t k : clients_of_rank(p, comm.size(), n_clients))
      for (std::size_t r = 0; r < R; ++r) in.get_f64s(kernel_loss.data() + (r * n_clients + k) * N, N);
    total.uplink_floats += in.get_f64();
    total.downlink_floats += in.get_f64();
    total.max_uplink = std::max(total.max_uplink, in.get_f64());
    total.client_steps += in.get_f64();
    kernel_updates += in.get_u64();
  }
  return total;
}

}  // namespace omkl::detail
