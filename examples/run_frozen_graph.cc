// A frozen TensorFlow graph from disk, fed from std::vector and read back into one: the
// whole path a C++ program takes (docs/API.md).
//
//   bazel run //examples:run_frozen_graph -- $PWD/tests/data/tf_graphs/frozen_pb/rust_addition_int32.pb
//   z = x + y: [5]
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "graph/proto_io.h"
#include "runtime/tensor_values.h"
#include "session/session.h"

namespace {

absl::Status AddWithGraph(const std::string& path) {
  absl::StatusOr<dflow::GraphDef> graph = dflow::ReadGraphDef(path);  // .pb or .pbtxt
  if (!graph.ok()) return graph.status();
  dflow::ConfigProto config;  // TF's: device_count, allow_soft_placement, ...
  absl::StatusOr<std::unique_ptr<dflow::Session>> session = dflow::NewSession(config);
  if (!session.ok()) return session.status();
  if (absl::Status created = (*session)->Create(*graph); !created.ok()) return created;

  // The graph's placeholders are int32 scalars: shape {}.
  absl::StatusOr<dflow::Tensor> x = dflow::TensorFromValues<int32_t>({}, {2});
  absl::StatusOr<dflow::Tensor> y = dflow::TensorFromValues<int32_t>({}, {3});
  if (!x.ok()) return x.status();
  if (!y.ok()) return y.status();
  std::vector<dflow::Tensor> outputs;
  absl::Status ran = (*session)->Run({{"x", *x}, {"y", *y}}, {"z"}, {}, &outputs);
  if (!ran.ok()) return ran;

  absl::StatusOr<std::vector<int32_t>> z = dflow::TensorValues<int32_t>(outputs[0]);
  if (!z.ok()) return z.status();
  std::cout << "z = x + y: [" << absl::StrJoin(*z, ", ") << "]\n";
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: run_frozen_graph GRAPH.pb (tests/data/tf_graphs/frozen_pb/"
                 "rust_addition_int32.pb: z = x + y, int32)\n";
    return 2;
  }
  const absl::Status status = AddWithGraph(argv[1]);
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}
