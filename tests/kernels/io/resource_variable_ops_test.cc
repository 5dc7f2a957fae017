// Resource variable kernels (kernels/io/resource_variable_ops.cc) through a Session: a
// variable persists across steps, updates are copy-on-write (a value read earlier does not
// change), and reads of missing or destroyed variables fail with TF 2.21's text.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

std::string Node(const std::string& name, const std::string& op,
                 const std::vector<std::string>& inputs, const std::string& attrs) {
  std::string text = absl::StrCat("node { name: '", name, "' op: '", op, "'");
  for (const std::string& input : inputs) absl::StrAppend(&text, " input: '", input, "'");
  return absl::StrCat(text, " ", attrs, " }\n");
}

const char kFloat[] = "attr { key: 'dtype' value { type: DT_FLOAT } }";

std::string Handle(const std::string& name) {
  return Node(name, "VarHandleOp", {},
              absl::StrCat(kFloat, " attr { key: 'shape' value { shape { dim { size: 2 } } } }",
                           " attr { key: 'shared_name' value { s: '", name, "' } }"));
}

std::string FloatConst(const std::string& name, float a, float b) {
  return Node(name, "Const", {},
              absl::StrCat(kFloat, " attr { key: 'value' value { tensor { dtype: DT_FLOAT "
                                   "tensor_shape { dim { size: 2 } } float_val: ",
                           a, " float_val: ", b, " } } }"));
}

std::string Graph() {
  return Handle("v") + FloatConst("init_value", 1, 2) + FloatConst("delta", 10, 20) +
         Node("init", "AssignVariableOp", {"v", "init_value"}, kFloat) +
         Node("add", "AssignAddVariableOp", {"v", "delta"}, kFloat) +
         Node("sub", "AssignSubVariableOp", {"v", "delta"}, kFloat) +
         Node("read", "ReadVariableOp", {"v"}, kFloat) +
         Node("is_init", "VarIsInitializedOp", {"v"}, "") +
         Node("destroy", "DestroyResourceOp", {"v"},
              "attr { key: 'ignore_lookup_error' value { b: false } }");
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

TEST_CASE("A resource variable persists across steps and reads stay snapshots",
          "[kernels][resource_variable]") {
  auto session = NewSession();
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(testing::GraphFromText(Graph())).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {"is_init"}, {}, &out).ok());
  CHECK_FALSE(out[0].scalar<bool>());
  REQUIRE((*session)->Run({}, {}, {"init"}, &out).ok());
  REQUIRE((*session)->Run({}, {"read", "is_init"}, {}, &out).ok());
  const Tensor first = out[0];
  CHECK(Floats(first) == std::vector<float>{1, 2});
  CHECK(out[1].scalar<bool>());
  REQUIRE((*session)->Run({}, {}, {"add"}, &out).ok());
  REQUIRE((*session)->Run({}, {}, {"add"}, &out).ok());
  REQUIRE((*session)->Run({}, {}, {"sub"}, &out).ok());
  REQUIRE((*session)->Run({}, {"read"}, {}, &out).ok());
  CHECK(Floats(out[0]) == std::vector<float>{11, 22});
  CHECK(Floats(first) == std::vector<float>{1, 2});  // the earlier read did not change
}

TEST_CASE("Reading a missing or destroyed resource variable fails with TF's text",
          "[kernels][resource_variable]") {
  auto session = NewSession();
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(testing::GraphFromText(Graph())).ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({}, {"read"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(status.message(), "Could not find variable v. This could mean that "
                                            "the variable has been deleted. In TF1, it can "
                                            "also mean the variable is uninitialized."));
  CHECK(absl::StrContains(status.message(), "read"));  // the node
  REQUIRE((*session)->Run({}, {}, {"init"}, &out).ok());
  REQUIRE((*session)->Run({}, {}, {"destroy"}, &out).ok());
  CHECK((*session)->Run({}, {"read"}, {}, &out).code() == absl::StatusCode::kFailedPrecondition);
  // A second destroy with ignore_lookup_error false fails; the session stays usable.
  CHECK_FALSE((*session)->Run({}, {}, {"destroy"}, &out).ok());
  REQUIRE((*session)->Run({}, {}, {"init"}, &out).ok());
  REQUIRE((*session)->Run({}, {"read"}, {}, &out).ok());
  CHECK(Floats(out[0]) == std::vector<float>{1, 2});
}

TEST_CASE("Assigning or reading with another dtype is refused", "[kernels][resource_variable]") {
  const std::string text =
      Graph() + Node("read_int", "ReadVariableOp", {"v"}, "attr { key: 'dtype' value { type: DT_INT32 } }");
  auto session = NewSession();
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(testing::GraphFromText(text)).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {}, {"init"}, &out).ok());
  absl::Status status = (*session)->Run({}, {"read_int"}, {}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(status.message(),
                          "Trying to read variable with wrong dtype. Expected int32 got float"));
}

}  // namespace
}  // namespace dflow
