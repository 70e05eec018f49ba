#include "core/rf_backend.h"

#include "omkl/error.h"

namespace omkl {

LossKind parse_loss(const std::string& text) {
  if (text == "squared") return LossKind::Squared;
  if (text == "logistic") return LossKind::Logistic;
  if (text == "hinge") return LossKind::Hinge;
  if (text == "squared_hinge") return LossKind::SquaredHinge;
  if (text == "absolute") return LossKind::Absolute;
  throw ConfigError("unknown loss '" + text + "' (expected squared, logistic, hinge, squared_hinge, absolute)");
}

std::string to_string(LossKind loss) {
  switch (loss) {
    case LossKind::Squared: return "squared";
    case LossKind::Logistic: return "logistic";
    case LossKind::Hinge: return "hinge";
    case LossKind::SquaredHinge: return "squared_hinge";
    case LossKind::Absolute: return "absolute";
  }
  return "?";
}

namespace detail {

void RfBackend::advance_fused(const double*, const double*, std::size_t, std::int64_t,
                              const std::vector<SlotSchedule>&, const FusedWeights&, double*) {
  throw Error("this backend does not compute fused kernel weights");
}
void RfBackend::get_log_weights(std::size_t, double*) const {
  throw Error("this backend does not compute fused kernel weights");
}
void RfBackend::set_log_weights(std::size_t, const double*) {
  throw Error("this backend does not compute fused kernel weights");
}

bool cuda_available() {
#if OMKL_WITH_CUDA
  return cuda::device_available();
#else
  return false;
#endif
}

std::unique_ptr<RfBackend> make_rf_backend(BackendKind kind, const RfProblem& problem) {
  if (problem.n_slots() == 0 || problem.n_rff == 0 || problem.n_features == 0)
    throw ConfigError("random-feature backend: empty problem (no slots, features or D = 0)");
  switch (kind) {
    case BackendKind::Cpu:
      return cpu::make_cpu_rf_backend(problem);
    case BackendKind::Auto:
#if OMKL_WITH_CUDA
      if (cuda::device_available()) return cuda::make_cuda_rf_backend(problem);
#endif
      return cpu::make_cpu_rf_backend(problem);
    case BackendKind::Cuda:
#if OMKL_WITH_CUDA
      return cuda::make_cuda_rf_backend(problem);
#else
      throw CudaError("--backend cuda: this omkl build has no CUDA backend (configure with OMKL_ENABLE_CUDA=ON)");
#endif
  }
  throw ConfigError("unknown backend");
}

}  // namespace detail
}  // namespace omkl
