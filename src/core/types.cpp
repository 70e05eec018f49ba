#include "omkl/types.h"

#include "omkl/error.h"

namespace omkl {

std::string to_string(Task task) {
  return task == Task::Regression ? "regression" : "classification";
}

std::string to_string(Profile profile) {
  return profile == Profile::Paper ? "paper" : "reference";
}

std::string to_string(BackendKind kind) {
  switch (kind) {
    case BackendKind::Cpu: return "cpu";
    case BackendKind::Cuda: return "cuda";
    case BackendKind::Auto: return "auto";
  }
  return "?";
}

Task parse_task(const std::string& text) {
  if (text == "regression") return Task::Regression;
  if (text == "classification") return Task::Classification;
  throw ConfigError("unknown task '" + text + "' (expected regression or classification)");
}

Profile parse_profile(const std::string& text) {
  if (text == "paper") return Profile::Paper;
  if (text == "reference") return Profile::Reference;
  throw ConfigError("unknown profile '" + text + "' (expected paper or reference)");
}

BackendKind parse_backend(const std::string& text) {
  if (text == "cpu") return BackendKind::Cpu;
  if (text == "cuda") return BackendKind::Cuda;
  if (text == "auto") return BackendKind::Auto;
  throw ConfigError("unknown backend '" + text + "' (expected cpu, cuda or auto)");
}

}  // namespace omkl
