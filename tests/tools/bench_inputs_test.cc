#include "tools/bench_inputs.h"

#include <catch2/catch.hpp>

#include "graph/graph_def_import.h"
#include "graph/proto_io.h"

namespace dflow {
namespace {

TensorShapeProto Dims(std::initializer_list<int64_t> dims) {
  TensorShapeProto proto;
  for (int64_t dim : dims) proto.add_dim()->set_size(dim);
  return proto;
}

GraphDef ParseGraph(const std::string& text) {
  GraphDef graph_def;
  REQUIRE(ParseTextProto(text, "graph", &graph_def).ok());
  return graph_def;
}

TEST_CASE("ResolveBenchShape: --batch for an unknown first dim, --shape overrides",
          "[tools]") {
  const std::map<std::string, std::vector<int64_t>> none;
  absl::StatusOr<TensorShape> shape = ResolveBenchShape("x", Dims({-1, 224, 224, 3}), none, 16);
  REQUIRE(shape.ok());
  CHECK(shape->DebugString() == "[16,224,224,3]");

  const std::map<std::string, std::vector<int64_t>> given = {{"x", {2, 8}}};
  shape = ResolveBenchShape("x:0", Dims({-1, -1}), given, 1);  // tensor name finds the node
  REQUIRE(shape.ok());
  CHECK(shape->DebugString() == "[2,8]");

  shape = ResolveBenchShape("x", Dims({4, -1}), none, 1);
  CHECK(shape.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(shape.status().message()) ==
        "input x has an unknown dimension 1: give its shape with --shape=x=d0,d1,...");
  TensorShapeProto unknown_rank;
  unknown_rank.set_unknown_rank(true);
  shape = ResolveBenchShape("x", unknown_rank, none, 1);
  CHECK(std::string(shape.status().message()) ==
        "input x has an unknown rank: give its shape with --shape=x=d0,d1,...");
}

TEST_CASE("ParseShapeFlags reads NAME=d0,d1 and refuses the rest", "[tools]") {
  auto shapes = ParseShapeFlags({"x=1,2,3", "scalar="});
  REQUIRE(shapes.ok());
  CHECK(shapes->at("x") == std::vector<int64_t>{1, 2, 3});
  CHECK(shapes->at("scalar").empty());
  CHECK(!ParseShapeFlags({"x=1,-2"}).ok());
  CHECK(!ParseShapeFlags({"nodims"}).ok());
}

TEST_CASE("SyntheticFeed is deterministic: floats in [0,1), integers 0", "[tools]") {
  CpuAllocator allocator;
  TensorShapeProto proto = Dims({3, 5});
  const TensorShape shape = *TensorShape::FromProto(proto);
  absl::StatusOr<Tensor> a = SyntheticFeed("x", DT_FLOAT, shape, &allocator);
  absl::StatusOr<Tensor> b = SyntheticFeed("x", DT_FLOAT, shape, &allocator);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  for (int i = 0; i < 15; ++i) {
    CHECK(a->flat<float>()[i] >= 0.0f);
    CHECK(a->flat<float>()[i] < 1.0f);
    CHECK(a->flat<float>()[i] == b->flat<float>()[i]);
  }
  absl::StatusOr<Tensor> ids = SyntheticFeed("ids", DT_INT64, shape, &allocator);
  REQUIRE(ids.ok());
  for (int64_t id : ids->flat<int64_t>()) CHECK(id == 0);
  absl::StatusOr<Tensor> half = SyntheticFeed("h", DT_HALF, shape, &allocator);
  REQUIRE(half.ok());
  CHECK(half->dtype() == DT_HALF);
  absl::StatusOr<Tensor> resource = SyntheticFeed("r", DT_RESOURCE, shape, &allocator);
  CHECK(resource.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(resource.status().message()).find("feed it with --feed=r=@file.npy") !=
        std::string::npos);
}

constexpr char kTwoBranches[] = R"pb(
  node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "unused" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
  node { name: "ra" op: "Relu" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "sum" op: "Add" input: "ra" input: "c" input: "^b"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "split" op: "Unpack" input: "sum" attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "num" value { i: 2 } } attr { key: "axis" value { i: 0 } } }
)pb";

TEST_CASE("UnfedPlaceholders follows data and control inputs of the fetches", "[tools]") {
  const GraphDef graph_def = ParseGraph(kTwoBranches);
  std::vector<const NodeDef*> unfed = UnfedPlaceholders(graph_def, {"sum:0"}, {}, {});
  REQUIRE(unfed.size() == 2);
  CHECK(unfed[0]->name() == "a");
  CHECK(unfed[1]->name() == "b");  // reached through ^b
  unfed = UnfedPlaceholders(graph_def, {"ra"}, {}, {"a"});
  CHECK(unfed.empty());
  unfed = UnfedPlaceholders(graph_def, {}, {"sum"}, {"b"});
  REQUIRE(unfed.size() == 1);
  CHECK(unfed[0]->name() == "a");
}

TEST_CASE("SinkFetches fetches every output nothing consumes", "[tools]") {
  const GraphDef graph_def = ParseGraph(kTwoBranches);
  ImportOptions options;
  options.infer_shapes = false;
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(graph_def, options);
  REQUIRE(graph.ok());
  // "unused" is a Placeholder: skipped; "split" has two outputs.
  CHECK(SinkFetches(graph_def, **graph) == std::vector<std::string>{"split:0", "split:1"});
}

}  // namespace
}  // namespace dflow
