#include "runtime/stateful_kernels.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace dflow {
namespace {

// device, name, op and the attrs in name order, NUL-separated.
std::string KeyOf(const std::string& device, const NodeDef& node) {
  std::string key = absl::StrCat(device, std::string(1, '\0'), node.name(),
                                 std::string(1, '\0'), node.op());
  std::vector<std::string> names;
  for (const auto& [name, value] : node.attr()) names.push_back(name);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    // Deterministic: an attr holding a map (a function's attrs) must give one key.
    std::string value;
    {
      google::protobuf::io::StringOutputStream stream(&value);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      node.attr().at(name).SerializeToCodedStream(&coded);
    }
    absl::StrAppend(&key, std::string(1, '\0'), name, "=", value);
  }
  return key;
}

}  // namespace

bool StatefulKernels::Shares(const OpDef& op_def) {
  const std::string& op = op_def.name();
  return op_def.is_stateful() && op != "_Send" && op != "_Recv" && op != "_HostSend" &&
         op != "_HostRecv";
}

absl::StatusOr<std::shared_ptr<OpKernel>> StatefulKernels::FindOrCreate(
    const std::string& device, const NodeDef& node, const Factory& make) {
  const std::string key = KeyOf(device, node);
  {
    absl::MutexLock lock(&mu_);
    auto it = kernels_.find(key);
    if (it != kernels_.end()) return it->second;
  }
  // Made outside the lock (kernel construction may be slow); the first one kept wins.
  absl::StatusOr<std::unique_ptr<OpKernel>> made = make();
  if (!made.ok()) return made.status();
  std::shared_ptr<OpKernel> kernel = *std::move(made);
  absl::MutexLock lock(&mu_);
  return kernels_.emplace(key, std::move(kernel)).first->second;
}

int StatefulKernels::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(kernels_.size());
}

}  // namespace dflow
