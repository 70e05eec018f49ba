// Sets an environment variable for the scope and then restores what it was: the path switches
// (OMKL_CUDA_STEP_SELECTED, OMKL_CUDA_WALK_PLAN, OMKL_HOST_WALK_LANES, …) are read when a
// backend or a walk is made, and bench/gpu_session.sh runs the whole suite under a switch that
// the tests after this scope must still see.
#pragma once

#include <cstdlib>
#include <string>

namespace omkl::test {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* before = std::getenv(name)) {
      had_value_ = true;
      before_ = before;
    }
    if (value != nullptr) setenv(name, value, 1);
    else unsetenv(name);  // nullptr: unset for the scope (a switch's default)
  }
  ~ScopedEnv() {
    if (had_value_) setenv(name_, before_.c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_value_ = false;
  std::string before_;
};

}  // namespace omkl::test
