/// @file no_mpi.cpp
/// @brief omkl/communicator.h without MPI (OMKL_ENABLE_MPI off or MPI not found): one process.
#include "omkl/communicator.h"

namespace omkl {

std::shared_ptr<Communicator> mpi_communicator() { return nullptr; }
bool built_with_mpi() { return false; }

}  // namespace omkl
