#include "tools/train_data.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/node_def_util.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "runtime/allocator.h"
#include "tools/feed_parser.h"
#include "tools/idx_file.h"
#include "tools/npy.h"

namespace dflow {
namespace {

absl::StatusOr<Tensor> ReadDataFile(const std::string& path) {
  DFLOW_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  if (bytes.rfind("\x93NUMPY", 0) == 0) return ParseNpy(bytes, ProcessCpuAllocator());
  DFLOW_ASSIGN_OR_RETURN(IdxFile idx, ReadIdxFile(path, ProcessCpuAllocator()));
  return idx.values;
}

// Rule 2: uint8 pixels to float in [0, 1].
absl::StatusOr<Tensor> Convert(const Tensor& data, DataType want) {
  const bool pixels = data.dtype() == DT_UINT8 && (want == DT_FLOAT || want == DT_DOUBLE);
  if (!pixels) return ConvertTensor(data, want, ProcessCpuAllocator());
  DFLOW_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(ProcessCpuAllocator(), want, data.shape()));
  const uint8_t* src = data.data<uint8_t>();
  for (int64_t i = 0; i < data.NumElements(); ++i) {
    if (want == DT_FLOAT) {
      out.data<float>()[i] = src[i] / 255.0f;
    } else {
      out.data<double>()[i] = src[i] / 255.0;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<FedTensorInfo> FedTensor(const GraphDef& graph, const std::string& name) {
  DFLOW_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
  for (const NodeDef& node : graph.node()) {
    if (node.name() != id.node || id.IsControl()) continue;
    FedTensorInfo info;
    auto attr = node.attr().find("dtype");
    if (attr == node.attr().end()) attr = node.attr().find("T");
    if (attr == node.attr().end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot tell the dtype of '", name, "' (", node.op(),
          "); feed data to a Placeholder"));
    }
    info.dtype = attr->second.type();
    auto shape = node.attr().find("shape");
    if (shape != node.attr().end() && !shape->second.shape().unknown_rank()) {
      info.known_rank = true;
      for (const auto& d : shape->second.shape().dim()) info.dims.push_back(d.size());
    }
    return info;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor ", name, ", specified in either feed_devices or fetch_devices was not found "
      "in the Graph"));
}

absl::StatusOr<TrainingColumn> ReadTrainingColumn(const GraphDef& graph,
                                                  const std::string& flag) {
  DFLOW_ASSIGN_OR_RETURN(FeedFlag parsed, SplitFeedFlag(flag));
  DFLOW_ASSIGN_OR_RETURN(FedTensorInfo info, FedTensor(graph, parsed.name));
  const std::string path =
      parsed.value.rfind('@', 0) == 0 ? parsed.value.substr(1) : parsed.value;
  absl::StatusOr<Tensor> raw = ReadDataFile(path);
  if (!raw.ok()) return Annotate(raw.status(), absl::StrCat("--data ", parsed.name, ": "));
  if (raw->shape().dims() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--data ", parsed.name, ": ", path, " is a scalar, not examples"));
  }
  absl::StatusOr<Tensor> converted = Convert(*raw, info.dtype);
  if (!converted.ok()) {
    return Annotate(converted.status(), absl::StrCat("--data ", parsed.name, ": "));
  }
  Tensor data = *converted;
  const int64_t n = data.shape().dim_size(0);
  if (n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--data ", parsed.name, ": ", path, " holds no examples"));
  }
  // Rule 3: reshape rows to the placeholder's per-example dims when all are known.
  if (info.known_rank && !info.dims.empty()) {
    std::vector<int64_t> dims = info.dims;
    dims[0] = n;
    bool known = true;
    for (size_t i = 1; i < dims.size(); ++i) known &= dims[i] >= 0;
    absl::StatusOr<TensorShape> want = known ? TensorShape::Make(dims)
                                             : absl::StatusOr<TensorShape>(data.shape());
    const int64_t row = data.NumElements() / n;
    if (!want.ok() || want->num_elements() / n != row) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--data ", parsed.name, ": examples of ", path, " have shape [",
          absl::StrJoin(data.shape().dim_sizes().subspan(1), ","), "] (", row,
          " elements) but the tensor takes [", absl::StrJoin(info.dims, ","), "]"));
    }
    if (*want != data.shape()) data = data.Reshaped(*want);
  }
  return TrainingColumn{parsed.name, std::move(data)};
}

}  // namespace dflow
