// Ops without a kernel: listed all at once, and only refused when a step needs them.
#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/graph_def_import.h"
#include "session/kernel_coverage.h"
#include "session/kernel_library.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

using testing::GraphFromText;

// `used` needs two ops dflow has no kernel for (Igamma twice, Betainc once); `fine`
// needs none of them.
constexpr char kGraph[] = R"pb(
  node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "g1" op: "Igamma" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "g2" op: "Igamma" input: "g1" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "b" op: "Betainc" input: "g2" input: "a" input: "a"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "used" op: "Add" input: "b" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "fine" op: "Mul" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

Tensor Scalar(float value) {
  static CpuAllocator allocator;
  Tensor t = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({}));
  t.scalar<float>() = value;
  return t;
}

TEST_CASE("FindMissingKernels groups nodes by op, in order of first use", "[kernel_coverage]") {
  auto graph = ImportGraphDef(GraphFromText(kGraph));
  REQUIRE(graph.ok());
  std::vector<MissingKernel> missing = FindMissingKernels(**graph, DefaultKernelRegistry());
  REQUIRE(missing.size() == 2);
  CHECK(missing[0].op == "Igamma");
  CHECK(missing[0].type_attrs == "T=DT_FLOAT");
  CHECK(missing[0].nodes == std::vector<std::string>{"g1", "g2"});
  CHECK(missing[1].op == "Betainc");
  CHECK(missing[1].nodes == std::vector<std::string>{"b"});
  CHECK(FormatMissingKernels(missing) ==
        "  Igamma [T=DT_FLOAT]: 2 nodes: g1, g2\n  Betainc [T=DT_FLOAT]: 1 node: b\n");
}

TEST_CASE("A graph whose only kernel-less ops are unused runs; a step needing them is refused "
          "with every missing op",
          "[kernel_coverage][session]") {
  auto session = NewSession(ConfigProto());
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(GraphFromText(kGraph)).ok());

  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{"a", Scalar(3.f)}}, {"fine"}, {}, &out).ok());
  CHECK(out[0].scalar<float>() == 9.f);

  absl::Status status = (*session)->Run({{"a", Scalar(3.f)}}, {"used"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  CHECK(absl::StrContains(message, "No OpKernel was registered to support 2 ops this step needs"));
  CHECK(absl::StrContains(message, "Igamma [T=DT_FLOAT]: 2 nodes: g1, g2"));
  CHECK(absl::StrContains(message, "Betainc [T=DT_FLOAT]: 1 node: b"));

  // The session is still usable.
  REQUIRE((*session)->Run({{"a", Scalar(2.f)}}, {"fine"}, {}, &out).ok());
  CHECK(out[0].scalar<float>() == 4.f);
}

TEST_CASE("Feeding past a kernel-less op makes it unnecessary", "[kernel_coverage][session]") {
  auto session = NewSession(ConfigProto());
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(GraphFromText(kGraph)).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{"a", Scalar(1.f)}, {"b", Scalar(5.f)}}, {"used"}, {}, &out).ok());
  CHECK(out[0].scalar<float>() == 6.f);
}

}  // namespace
}  // namespace dflow
