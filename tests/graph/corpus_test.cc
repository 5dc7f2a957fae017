// Every real TensorFlow file in the corpus parses with no field left unmodelled,
// validates, and survives binary -> text -> binary with its wire content intact.
#include <dirent.h>

#include <algorithm>
#include <map>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "google/protobuf/util/message_differencer.h"
#include "graph/graph_def_import.h"
#include "graph/op_registry.h"
#include "graph/proto_io.h"
#include "proto/meta_graph.pb.h"
#include "proto/op_def.pb.h"
#include "proto/saved_model.pb.h"
#include "proto/config.pb.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

using google::protobuf::Message;
using google::protobuf::Reflection;
using testing::CorpusPath;

std::vector<std::string> ListCorpus(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(CorpusPath(dir).c_str());
  REQUIRE(d != nullptr);
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") files.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

// Names of fields the message (recursively) holds only as unknown bytes.
void CollectUnknown(const Message& message, const std::string& path,
                    std::vector<std::string>* unknown) {
  const Reflection* reflection = message.GetReflection();
  if (!reflection->GetUnknownFields(message).empty()) unknown->push_back(path);
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const auto* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const std::string child = path + "." + field->name();
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        CollectUnknown(reflection->GetRepeatedMessage(message, field, i), child, unknown);
      }
    } else {
      CollectUnknown(reflection->GetMessage(message, field), child, unknown);
    }
  }
}

std::string Deterministic(const Message& message) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

template <typename Proto>
Proto ParseCorpusFile(const std::string& file) {
  Proto proto;
  absl::Status status = ReadProtoFile(CorpusPath(file), &proto);
  INFO(file << ": " << status.ToString());
  REQUIRE(status.ok());
  std::vector<std::string> unknown;
  CollectUnknown(proto, Proto::descriptor()->name(), &unknown);
  INFO(file << " has unmodelled fields under " << (unknown.empty() ? "" : unknown[0]));
  CHECK(unknown.empty());
  return proto;
}

// binary -> text -> binary keeps every field: the re-parsed message is identical and
// serialises to the same bytes.
template <typename Proto>
void CheckRoundTrip(const Proto& original, const std::string& file) {
  absl::StatusOr<std::string> text = SerializeProto(original, ProtoFormat::kText);
  REQUIRE(text.ok());
  Proto from_text;
  REQUIRE(ParseTextProto(*text, file, &from_text).ok());
  absl::StatusOr<std::string> binary = SerializeProto(from_text, ProtoFormat::kBinary);
  REQUIRE(binary.ok());
  Proto back;
  REQUIRE(back.ParseFromString(*binary));
  INFO(file);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(original, back));
  CHECK(Deterministic(original) == Deterministic(back));
}

// Problems each file is known to have; every other file must validate cleanly.
const std::map<std::string, std::string> kExpectedProblems = {
    // The file's Reshape reads "y_shape", which the graph never defines: it is fed.
    {"pbtxt/tf_aot_test_graph_tfadd.pbtxt", "'y_shape' refers to a node that is not in the graph"},
};

TEST_CASE("Every corpus GraphDef loads, validates and round-trips", "[graph][corpus]") {
  std::vector<std::string> files = ListCorpus("frozen_pb");
  std::vector<std::string> text_files = ListCorpus("pbtxt");
  files.insert(files.end(), text_files.begin(), text_files.end());
  REQUIRE(files.size() >= 18);
  for (const std::string& file : files) {
    GraphDef graph_def = ParseCorpusFile<GraphDef>(file);
    CHECK(graph_def.node_size() > 0);
    CheckRoundTrip(graph_def, file);
    std::vector<GraphProblem> problems = ValidateGraphDef(graph_def);
    auto expected = kExpectedProblems.find(file);
    INFO(file << ": " << (problems.empty() ? std::string("no problems") : problems[0].message));
    if (expected == kExpectedProblems.end()) {
      CHECK(problems.empty());
    } else {
      REQUIRE(problems.size() == 1);
      CHECK(absl::StrContains(problems[0].message, expected->second));
    }
  }
}

// TF writes map entries in hash order, so bytes may be permuted; nothing may be lost:
// same size, and the re-serialised bytes parse back to an equal message.
TEST_CASE("Binary corpus files are re-serialised with every byte of content",
          "[graph][corpus]") {
  for (const std::string& file : ListCorpus("frozen_pb")) {
    absl::StatusOr<std::string> bytes = ReadFileToString(CorpusPath(file));
    REQUIRE(bytes.ok());
    GraphDef graph_def;
    REQUIRE(ParseProto(*bytes, file, &graph_def).ok());
    const std::string again = graph_def.SerializeAsString();
    INFO(file);
    CHECK(again.size() == bytes->size());
    GraphDef reparsed;
    REQUIRE(reparsed.ParseFromString(again));
    CHECK(google::protobuf::util::MessageDifferencer::Equals(graph_def, reparsed));
  }
}

TEST_CASE("The text and binary twins of a graph parse to the same nodes", "[graph][corpus]") {
  GraphDef binary = ParseCorpusFile<GraphDef>("frozen_pb/ngraph_sample_graph.pb");
  GraphDef text = ParseCorpusFile<GraphDef>("pbtxt/ngraph_sample_graph.pbtxt");
  REQUIRE(binary.node_size() == text.node_size());
  for (const NodeDef& node : binary.node()) {
    auto twin = std::find_if(text.node().begin(), text.node().end(),
                             [&](const NodeDef& n) { return n.name() == node.name(); });
    REQUIRE(twin != text.node().end());
    CHECK(google::protobuf::util::MessageDifferencer::Equals(node, *twin));
  }
}

TEST_CASE("MetaGraphDefs and SavedModels parse with every field modelled", "[graph][corpus]") {
  MetaGraphDef meta = ParseCorpusFile<MetaGraphDef>("meta/mnist_fc_feed_train.meta");
  CHECK(meta.graph_def().node_size() == 227);
  CheckRoundTrip(meta, "meta");
  for (const std::string& dir : ListCorpus("saved_model")) {
    for (const char* name : {"/saved_model.pb", "/saved_model.pbtxt"}) {
      absl::StatusOr<std::string> probe = ReadFileToString(CorpusPath(dir + name));
      if (!probe.ok()) continue;
      SavedModel model = ParseCorpusFile<SavedModel>(dir + name);
      REQUIRE(model.meta_graphs_size() >= 1);
      CHECK(model.meta_graphs(0).signature_def_size() >= 1);
      CheckRoundTrip(model, dir);
    }
  }
}

TEST_CASE("A real RunMetadata with step stats parses", "[graph][corpus]") {
  RunMetadata metadata = ParseCorpusFile<RunMetadata>("reference/tf_profiler_run_meta.pb");
  CHECK(metadata.step_stats().dev_stats_size() > 0);
}

TEST_CASE("The op registry holds exactly TensorFlow 2.21's OpDefs plus dflow's internal ops",
          "[graph][op_registry]") {
  OpList tf_ops = ParseCorpusFile<OpList>("reference/tf_2_21_ops.pbtxt");
  REQUIRE(tf_ops.op_size() == 1908);
  const OpRegistry& registry = OpRegistry::Global();
  const auto test_ops = TensorFlowTestOnlyOps();
  // + dflow's internal ops: _DflowFusedConv2DMaxPool, _DflowFusedDepthwiseConv2dNative,
  // _DflowScaleShift, _DflowResourceApplyGradientDescentMatMul, _DflowMaxPoolGradRelu.
  CHECK(registry.size() == static_cast<size_t>(tf_ops.op_size()) - test_ops.size() + 5);
  for (const OpDef& op : tf_ops.op()) {
    INFO(op.name());
    const OpDef* registered = registry.Find(op.name());
    if (std::find(test_ops.begin(), test_ops.end(), op.name()) != test_ops.end()) {
      CHECK(registered == nullptr);
      continue;
    }
    REQUIRE(registered != nullptr);
    CHECK(google::protobuf::util::MessageDifferencer::Equals(op, *registered));
  }
  // TF's own declarations of the ops dflow's runtime and passes create.
  for (const char* internal : {"_Send", "_Recv", "_HostSend", "_HostRecv", "_Arg", "_Retval",
                               "_FusedConv2D", "_FusedMatMul", "_DflowFusedConv2DMaxPool"}) {
    CHECK(registry.Find(internal) != nullptr);
  }
}

TEST_CASE("TF 2.21 op definitions carry the attrs current TensorFlow writes",
          "[graph][op_registry]") {
  const OpRegistry& registry = OpRegistry::Global();
  auto has_attr = [&](const char* op, const char* attr) {
    const OpDef* def = registry.Find(op);
    if (def == nullptr) return false;
    for (const OpDef::AttrDef& a : def->attr()) {
      if (a.name() == attr) return true;
    }
    return false;
  };
  CHECK(has_attr("MatMul", "grad_a"));
  CHECK(has_attr("MaxPool", "explicit_paddings"));
  CHECK(has_attr("FusedBatchNormV3", "exponential_avg_factor"));
  CHECK(has_attr("BatchMatMulV2", "grad_y"));
  CHECK(has_attr("TopKV2", "index_type"));
  CHECK(has_attr("ConcatOffset", "shape_type"));
  CHECK(registry.Find("DenseBincount") != nullptr);
}

}  // namespace
}  // namespace dflow
