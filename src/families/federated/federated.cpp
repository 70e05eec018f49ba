/// @file federated.cpp
/// @brief The federated family's registry entry (federated.h).
#include "families/federated/federated.h"

namespace omkl::detail {

void add_federated_algorithms(std::vector<AlgorithmInfo>& registry) {
  add_global_kernel_federations(registry);
  add_em_kofl(registry);
  add_perfedavg(registry);
}

}  // namespace omkl::detail
