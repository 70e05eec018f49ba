/// @file mpi_communicator.cpp
/// @brief The MPI transport of omkl/communicator.h (built with OMKL_ENABLE_MPI): MPI_COMM_WORLD,
/// byte messages, receives that probe until a deadline so that a lost message or a dead rank is
/// reported instead of waited for, MPI_Abort to end every process.
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "omkl/communicator.h"
#include "omkl/error.h"

namespace omkl {

namespace {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("MPI: ") + what + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors come back as codes (and become exceptions) instead of aborting inside MPI.
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void send(int to, int tag, const std::string& bytes) override {
    if (bytes.size() > static_cast<std::size_t>(INT32_MAX)) throw Error("MPI: a message over 2 GB");
    check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD), "MPI_Send");
  }

  std::string receive(int from, int tag, double timeout_s) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    MPI_Status status;
    for (auto pause = std::chrono::microseconds(20);;) {
      int ready = 0;
      check(MPI_Iprobe(from, tag, MPI_COMM_WORLD, &ready, &status), "MPI_Iprobe");
      if (ready) break;
      if (timeout_s > 0 && std::chrono::steady_clock::now() > deadline)
        throw Error("no message from rank " + std::to_string(from) + " within " + std::to_string(timeout_s) + " s");
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::milliseconds(5)) pause *= 2;
    }
    int count = 0;
    check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    std::string bytes(static_cast<std::size_t>(count), '\0');
    check(MPI_Recv(bytes.data(), count, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    return bytes;
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this satisfies [[noreturn]]
  }

 private:
  int rank_ = 0, size_ = 1;
};

// Launched by an MPI launcher: Open MPI, PMIx and PMI set these.
bool under_mpi_launcher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE");
}

}  // namespace

std::shared_ptr<Communicator> mpi_communicator() {
  // One per process, made on first use: MPI may be initialised (and finalised) once in a
  // process's life, so every caller (the CLI, a library user's study) must share this one,
  // whichever asks first.
  static std::mutex mutex;
  static std::shared_ptr<Communicator> instance;
  std::lock_guard<std::mutex> lock(mutex);
  if (!instance && under_mpi_launcher()) instance = std::make_shared<MpiCommunicator>();
  return instance;
}

bool built_with_mpi() { return true; }

}  // namespace omkl
