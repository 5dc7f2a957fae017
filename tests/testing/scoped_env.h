// ScopedEnv: sets (or unsets) an environment variable for the object's lifetime, then
// restores what was there. For tests of behaviour driven by the environment
// (DFLOW_SIMULATED_GPUS, TF_FORCE_GPU_ALLOW_GROWTH). Not thread-safe (setenv is not).
#ifndef DFLOW_TESTS_TESTING_SCOPED_ENV_H_
#define DFLOW_TESTS_TESTING_SCOPED_ENV_H_

#include <cstdlib>
#include <optional>
#include <string>

namespace dflow::testing {

class ScopedEnv {
 public:
  // `value` nullopt unsets the variable.
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value.has_value()) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace dflow::testing

#endif  // DFLOW_TESTS_TESTING_SCOPED_ENV_H_
