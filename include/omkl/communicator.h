/// @file communicator.h
/// @brief Processes that run one study together (docs/features.md, "Several processes"):
/// the federated server and its clients in separate processes, and studies sharded over
/// processes. Plain C++: MPI stays inside the library (mpi_communicator()); tests and embedders
/// may supply their own transport.
///
/// Rank 0 is the server of a federated run and the process that gathers a sharded study and
/// writes its outputs. Messages are byte strings with a tag; a receive that waits longer than its
/// timeout throws, so a process that died or a message that never came is reported instead of
/// waited for forever.
#pragma once

#include <memory>
#include <string>

namespace omkl {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Sends `bytes` to rank `to` (buffered: returns without waiting for the receiver).
  virtual void send(int to, int tag, const std::string& bytes) = 0;
  /// The next message from rank `from` with `tag`. Throws omkl::Error after `timeout_s` seconds
  /// without one (timeout_s ≤ 0: wait as long as it takes).
  virtual std::string receive(int from, int tag, double timeout_s) = 0;
  /// Ends every process of the run with exit status `code` (the transport's abort).
  [[noreturn]] virtual void abort(int code) = 0;
};

/// The MPI communicator of this process when it was started by an MPI launcher (mpirun) and the
/// library was built with MPI (OMKL_ENABLE_MPI); nullptr otherwise. Initialises MPI on the first
/// call and finalises it at exit.
std::shared_ptr<Communicator> mpi_communicator();

/// True when the library was built with MPI.
bool built_with_mpi();

}  // namespace omkl
