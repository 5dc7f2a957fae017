// Command-line flags of the form --name=value (repeatable) for dflow's subcommands.
#ifndef DFLOW_TOOLS_CLI_ARGS_H_
#define DFLOW_TOOLS_CLI_ARGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace dflow {

class CliArgs {
 public:
  // Parses argv-style flags. INVALID_ARGUMENT for positional arguments, flags without
  // "--" or names not in `known`.
  static absl::StatusOr<CliArgs> Parse(const std::vector<std::string>& args,
                                       const std::vector<std::string>& known);

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given for `name`, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // INVALID_ARGUMENT "missing required flag --name" when absent or empty.
  absl::StatusOr<std::string> Require(const std::string& name) const;
  // Every value given for a repeatable flag, in order.
  std::vector<std::string> GetAll(const std::string& name) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace dflow

#endif  // DFLOW_TOOLS_CLI_ARGS_H_
