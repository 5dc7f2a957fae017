#include "tools/cli_args.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dflow {

absl::StatusOr<CliArgs> CliArgs::Parse(const std::vector<std::string>& args,
                                       const std::vector<std::string>& known) {
  CliArgs parsed;
  for (const std::string& arg : args) {
    if (!absl::StartsWith(arg, "--")) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "': flags look like --name=value"));
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const std::string value = eq == std::string::npos ? "true" : arg.substr(eq + 1);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, "; expected one of --",
                                                     absl::StrJoin(known, ", --")));
    }
    parsed.values_[name].push_back(value);
  }
  return parsed;
}

std::string CliArgs::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

absl::StatusOr<std::string> CliArgs::Require(const std::string& name) const {
  std::string value = Get(name);
  if (value.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("missing required flag --", name));
  }
  return value;
}

std::vector<std::string> CliArgs::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace dflow
