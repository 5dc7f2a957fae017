#include "examples/example_util.h"

#include <iostream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "session/client_session.h"
#include "tools/tensor_printer.h"

namespace dflow::examples {
namespace {

int Fail(const absl::Status& status) {
  std::cerr << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
  return 1;
}

}  // namespace

int RunAndPrint(const Scope& root, const ConfigProto& config,
                const std::vector<Output>& fetches) {
  if (!root.ok()) return Fail(root.status());
  absl::StatusOr<std::unique_ptr<ClientSession>> session = ClientSession::Create(root, config);
  if (!session.ok()) return Fail(session.status());
  std::vector<Tensor> outputs;
  absl::Status status = (*session)->Run(fetches, &outputs);
  if (!status.ok()) return Fail(status);
  std::vector<std::string> names;
  for (const Output& fetch : fetches) names.push_back(fetch.name());
  std::cout << OutputsText(names, outputs);
  return 0;
}

}  // namespace dflow::examples
