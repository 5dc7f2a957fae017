// AddSymbolicGradients on graphs TensorFlow 2.21 wrote (tests/data/tf2_21/cpp_gradients.py):
// imported into a Scope (Scope::NewRootScope(graph)), differentiated from C++ through
// TF's own v1 loop and cond layout (pivots, switches of captured tensors, frame names),
// its TF 1 TensorArrays and dynamic_rnn's LSTM on resource variables, and compared with
// TF's tf.gradients of the same loss (<name>.json).
#include <string>
#include <vector>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "catch2/catch.hpp"
#include "graph/graph_def_import.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/node_def_util.h"
#include "graph/proto_io.h"
#include "graph/scope.h"
#include "session/client_session.h"
#include "tests/testing/gradient_checker.h"

namespace dflow::testing {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr char kDir[] = "tests/data/tf2_21/cpp_gradients/";

std::vector<double> Numbers(const Value& list) {
  std::vector<double> out;
  for (const Value& v : list.list_value().values()) out.push_back(v.number_value());
  return out;
}

Output TensorNamed(const Scope& root, const std::string& name) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  REQUIRE(id.ok());
  Node* node = root.graph()->FindNode(id->node);
  INFO(name);
  REQUIRE(node != nullptr);
  return Output(node, id->index);
}

void CheckAgainstTf(const std::string& name) {
  INFO(name);
  absl::StatusOr<std::string> text = ReadFileToString(kDir + name + ".json");
  REQUIRE(text.ok());
  Struct golden;
  REQUIRE(google::protobuf::util::JsonStringToMessage(*text, &golden).ok());
  const auto& fields = golden.fields();
  auto def = ReadGraphDef(kDir + name + ".pbtxt");
  REQUIRE(def.ok());
  auto graph = ImportGraphDef(*def);
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  Scope root = Scope::NewRootScope(*std::move(graph));

  std::vector<Output> inputs;
  for (const Value& input : fields.at("inputs").list_value().values()) {
    inputs.push_back(TensorNamed(root, input.string_value()));
  }
  const Output loss = TensorNamed(root, fields.at("loss").string_value());
  std::vector<Output> grads;
  absl::Status status = AddSymbolicGradients(root, {loss}, inputs, &grads);
  INFO(status.ToString());
  REQUIRE(status.ok());

  // float32 models (Conv2D) are compared at float32's precision, float64 ones at 1e-9.
  const bool single = fields.at("feed_dtype").string_value() == "float32";
  const DataType dtype = single ? DT_FLOAT : DT_DOUBLE;
  // A float64 model with float32 parts (tf.compat.v1.losses) gives its own tolerance.
  const double mixed = fields.at("tolerance").number_value();
  const double relative = single ? 2e-4 : mixed > 0 ? mixed : 1e-9;
  const double absolute = single ? 1e-6 : 1e-12;
  ClientSession::FeedType feeds;
  for (const auto& [tensor, values] : fields.at("feeds").struct_value().fields()) {
    std::vector<int64_t> shape;
    for (double d : Numbers(fields.at("feed_shapes").struct_value().fields().at(tensor))) {
      shape.push_back(static_cast<int64_t>(d));
    }
    feeds.emplace(TensorNamed(root, tensor), MakeTensor(dtype, shape, Numbers(values)));
  }
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  const std::string init = fields.at("init").string_value();
  if (!init.empty()) {
    Operation init_op(root.graph()->FindNode(init));
    REQUIRE((*session)->Run({}, {}, {init_op}, nullptr).ok());
  }
  std::vector<Output> fetches = {loss};
  fetches.insert(fetches.end(), grads.begin(), grads.end());
  std::vector<Tensor> out;
  status = (*session)->Run(feeds, fetches, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(ToDoubles(out[0])[0] ==
        Approx(fields.at("loss_value").number_value()).epsilon(single || mixed > 0 ? 1e-6
                                                                                  : 1e-12));
  const auto& want = fields.at("gradients").list_value().values();
  REQUIRE(want.size() == static_cast<int>(grads.size()));
  for (size_t k = 0; k < grads.size(); ++k) {
    INFO("gradient " << k << " (" << inputs[k].name() << ")");
    const std::vector<double> got = ToDoubles(out[k + 1]);
    const std::vector<double> tf = Numbers(want[static_cast<int>(k)]);
    REQUIRE(got.size() == tf.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i] == Approx(tf[i]).margin(absolute).epsilon(relative));
    }
  }
}

TEST_CASE("A tf.cond inside a tf.while_loop") { CheckAgainstTf("loop_cond"); }

TEST_CASE("tf.while_loops nested, the inner trip count set by the outer loop") {
  CheckAgainstTf("nested_loops");
}

TEST_CASE("TF 1 TensorArrays through a loop: Scatter, Read, Write, Gather") {
  CheckAgainstTf("tensor_array_rnn");
}

TEST_CASE("tf.scan and tf.map_fn") { CheckAgainstTf("scan_map_fn"); }

TEST_CASE("dynamic_rnn's LSTM with sequence lengths, for its inputs and variables") {
  CheckAgainstTf("lstm_dynamic_rnn");
}

TEST_CASE("bidirectional_dynamic_rnn of GRUs (ReverseSequence)") {
  CheckAgainstTf("gru_bidirectional");
}

TEST_CASE("A data-dependent tf.cond in a loop, its branches reading variables") {
  CheckAgainstTf("cond_in_rnn");
}

TEST_CASE("A CNN with batch norm in training, through tf.compat.v1.layers") {
  CheckAgainstTf("cnn_batch_norm");
}

TEST_CASE("tf.case in a loop stopped by maximum_iterations") {
  CheckAgainstTf("loop_case_max_iterations");
}

TEST_CASE("A transformer block: attention, Einsum, layer norm, exact GELU") {
  CheckAgainstTf("transformer_block");
}

TEST_CASE("An embedding bag classifier with LeakyRelu, sparse cross-entropy and L2") {
  CheckAgainstTf("embedding_classifier");
}

TEST_CASE("Image ops: separable and transposed convolutions, resizing, Elu, Selu") {
  CheckAgainstTf("unet_ops");
}

TEST_CASE("Array ops: strided slices, GatherNd, ScatterNd, where, tile, pad, cumsum, top_k") {
  CheckAgainstTf("array_ops_mix");
}

TEST_CASE("Losses and math of training scripts (tf.compat.v1.losses, logsumexp, clip)") {
  CheckAgainstTf("losses_mix");
}

TEST_CASE("Conv3D, 3-D pooling, LRN, atrous and dilated convolutions") {
  CheckAgainstTf("volumes_and_dilations");
}

TEST_CASE("tf.linalg inverse, determinant, triangular solves, and the CTC loss") {
  CheckAgainstTf("linalg_ctc");
}

TEST_CASE("tf.linalg.cholesky") { CheckAgainstTf("cholesky"); }

TEST_CASE("tf.einsum with ellipses, broadcast batch dims and repeated labels") {
  CheckAgainstTf("einsum_forms");
}

TEST_CASE("tf.linalg.qr, svd, eigh and eigvalsh") { CheckAgainstTf("decompositions"); }

}  // namespace
}  // namespace dflow::testing
