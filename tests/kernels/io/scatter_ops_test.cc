// Scatter ops (kernels/io/scatter_ops.cc) against TensorFlow 2.21's results (kScatterCases,
// recorded by record_tf_values.py): ScatterUpdate/Add/Sub/Mul/Div/Min/Max in ref form
// (through a Session on a VariableV2) and resource form (ResourceScatter*, through
// OpTester), float and int32, int32 and int64 indices, 2-D indices with a repeated row
// (applied in order; ScatterUpdate's last write wins) and scalar updates. Then strings and
// bools, empty indices, copy-on-write, updates aliasing the variable, and the errors in TF's
// words (a bad index writes nothing; integer division by zero is refused).
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/kernels/io/variable_op_testing.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::Filled;
using testing::HandleOf;
using testing::IoRegistry;
using testing::MakeTensor;
using testing::NewResourceVariable;
using testing::OpTester;
using testing::RequireOk;
using testing::ResourceValue;
using testing::Values;

struct ScatterCase {
  std::string op;  // the ref form
  DataType dtype;
  std::vector<double> params;  // [4, 3]
  std::vector<int64_t> indices_shape;
  std::vector<int64_t> indices;
  std::vector<int64_t> updates_shape;
  std::vector<double> updates;
  std::vector<double> want;
};

const std::vector<ScatterCase> kScatterCases = {
    // BEGIN kScatterCases (record_tf_values.py)
    {"ScatterUpdate", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3},
     {2, 2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1.0f, 3.0f, -2.0f, -4.0f, 5.0f, -6.0f,
     -3.0f, 2.0f, 5.0f, 6.0f, -4.0f, 1.0f}},
    {"ScatterUpdate", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3},
     {1.0f, 2.0f, 3.0f, 3.0f, 3.0f, 3.0f, 8.0f, -2.0f, 4.0f, 0.0f, 7.0f, -1.0f}},
    {"ScatterAdd", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {2.0f, 5.0f, 1.0f, -4.0f, 5.0f, -6.0f, 7.0f,
     -1.0f, 13.0f, 6.0f, 3.0f, 0.0f}},
    {"ScatterAdd", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3},
     {1.0f, 2.0f, 3.0f, 2.0f, 11.0f, 0.0f, 8.0f, -2.0f, 4.0f, 0.0f, 7.0f, -1.0f}},
    {"ScatterSub", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {0.0f, -1.0f, 5.0f, -4.0f, 5.0f, -6.0f,
     9.0f, -3.0f, -5.0f, -6.0f, 11.0f, -2.0f}},
    {"ScatterSub", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3},
     {1.0f, 2.0f, 3.0f, -10.0f, -1.0f, -12.0f, 8.0f, -2.0f, 4.0f, 0.0f, 7.0f, -1.0f}},
    {"ScatterMul", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1.0f, 6.0f, -6.0f, -4.0f, 5.0f, -6.0f,
     -48.0f, 4.0f, 80.0f, 0.0f, -28.0f, -1.0f}},
    {"ScatterMul", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3},
     {1.0f, 2.0f, 3.0f, -36.0f, 45.0f, -54.0f, 8.0f, -2.0f, 4.0f, 0.0f, 7.0f, -1.0f}},
    {"ScatterDiv", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1.0f, 0.6666667f, -1.5f, -4.0f, 5.0f,
     -6.0f, -1.3333334f, 1.0f, 0.2f, 0.0f, -1.75f, -1.0f}},
    {"ScatterDiv", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3},
     {1.0f, 2.0f, 3.0f, -0.44444445f, 0.5555555f, -0.6666667f, 8.0f, -2.0f, 4.0f, 0.0f, 7.0f,
     -1.0f}},
    {"ScatterMin", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1.0f, 2.0f, -2.0f, -4.0f, 5.0f, -6.0f,
     -3.0f, -2.0f, 4.0f, 0.0f, -4.0f, -1.0f}},
    {"ScatterMin", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3},
     {1.0f, 2.0f, 3.0f, -4.0f, 3.0f, -6.0f, 8.0f, -2.0f, 4.0f, 0.0f, 7.0f, -1.0f}},
    {"ScatterMax", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1.0f, 3.0f, 3.0f, -4.0f, 5.0f, -6.0f, 8.0f,
     2.0f, 5.0f, 6.0f, 7.0f, 1.0f}},
    {"ScatterMax", DT_FLOAT, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3},
     {1.0f, 2.0f, 3.0f, 3.0f, 5.0f, 3.0f, 8.0f, -2.0f, 4.0f, 0.0f, 7.0f, -1.0f}},
    {"ScatterUpdate", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3},
     {2, 2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1, 3, -2, -4, 5, -6, -3, 2, 5, 6, -4,
     1}},
    {"ScatterUpdate", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3},
     {1, 2, 3, 3, 3, 3, 8, -2, 4, 0, 7, -1}},
    {"ScatterAdd", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {2, 5, 1, -4, 5, -6, 7, -1, 13, 6, 3, 0}},
    {"ScatterAdd", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3}, {1,
     2, 3, 2, 11, 0, 8, -2, 4, 0, 7, -1}},
    {"ScatterSub", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {0, -1, 5, -4, 5, -6, 9, -3, -5, -6, 11, -2}},
    {"ScatterSub", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3}, {1,
     2, 3, -10, -1, -12, 8, -2, 4, 0, 7, -1}},
    {"ScatterMul", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1, 6, -6, -4, 5, -6, -48, 4, 80, 0, -28,
     -1}},
    {"ScatterMul", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3}, {1,
     2, 3, -36, 45, -54, 8, -2, 4, 0, 7, -1}},
    {"ScatterDiv", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1, 0, -1, -4, 5, -6, -1, 1, 0, 0, -1, -1}},
    {"ScatterDiv", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3}, {1,
     2, 3, 0, 0, 0, 8, -2, 4, 0, 7, -1}},
    {"ScatterMin", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1, 2, -2, -4, 5, -6, -3, -2, 4, 0, -4, -1}},
    {"ScatterMin", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3}, {1,
     2, 3, -4, 3, -6, 8, -2, 4, 0, 7, -1}},
    {"ScatterMax", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2, 2}, {2, 0, 2, 3}, {2,
     2, 3}, {2, -1, 4, 1, 3, -2, -3, 2, 5, 6, -4, 1}, {1, 3, 3, -4, 5, -6, 8, 2, 5, 6, 7, 1}},
    {"ScatterMax", DT_INT32, {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1}, {2}, {1, 1}, {}, {3}, {1,
     2, 3, 3, 5, 3, 8, -2, 4, 0, 7, -1}},
    // END kScatterCases
};

template <typename T>
Tensor Of(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  return Filled<T>(shape, std::vector<T>(values.begin(), values.end()));
}
Tensor Of(DataType dtype, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  return dtype == DT_FLOAT ? Of<float>(shape, values) : Of<int32_t>(shape, values);
}
Tensor Indices(const ScatterCase& c, DataType dtype) {
  if (dtype == DT_INT64) return Filled<int64_t>(c.indices_shape, c.indices);
  return Filled<int32_t>(c.indices_shape, std::vector<int32_t>(c.indices.begin(), c.indices.end()));
}
std::vector<double> Doubles(const Tensor& t) {
  if (t.dtype() == DT_FLOAT) {
    const auto v = Values<float>(t);
    return std::vector<double>(v.begin(), v.end());
  }
  const auto v = Values<int32_t>(t);
  return std::vector<double>(v.begin(), v.end());
}

absl::Status RunResourceScatter(const std::string& op, const std::string& var,
                                const Tensor& indices, const Tensor& updates) {
  return OpTester(op, IoRegistry())
      .Attr("dtype", updates.dtype())
      .Attr("Tindices", indices.dtype())
      .Input(HandleOf(var))
      .Input(indices)
      .Input(updates)
      .Run()
      .status();
}

TEST_CASE("Scatter ops give TensorFlow's results, ref and resource forms", "[kernels][scatter]") {
  REQUIRE(kScatterCases.size() == 28);
  for (const ScatterCase& c : kScatterCases) {
    CAPTURE(c.op, DataTypeString(c.dtype), c.indices);
    const Tensor params = Of(c.dtype, {4, 3}, c.params);
    const Tensor updates = Of(c.dtype, c.updates_shape, c.updates);
    for (const DataType index_type : {DT_INT32, DT_INT64}) {
      CAPTURE(DataTypeString(index_type));
      const std::string var = NewResourceVariable("scatter", params);
      RequireOk(RunResourceScatter("Resource" + c.op, var, Indices(c, index_type), updates));
      CHECK(Doubles(ResourceValue(var)) == c.want);

      testing::RefGraph g;
      g.Variable("ref", params);
      g.Const("indices", Indices(c, index_type));
      g.Const("updates", updates);
      NodeDef* op = g.Node("scatter", c.op, {"ref", "indices", "updates"});
      testing::SetAttr(op, "T", c.dtype);
      testing::SetAttr(op, "Tindices", index_type);
      testing::SetAttr(op, "use_locking", index_type == DT_INT64);
      auto session = g.Open();
      CHECK(Doubles(testing::RunOk(*session, {"scatter"})[0]) == c.want);  // the output ref
      CHECK(Doubles(testing::RunOk(*session, {"ref"})[0]) == c.want);
    }
  }
}

const std::vector<float> kParams = {1, 2, 3, -4, 5, -6, 8, -2, 4, 0, 7, -1};

TEST_CASE("ResourceScatterUpdate copies strings and bools", "[kernels][scatter]") {
  const std::string words =
      NewResourceVariable("words", Filled<std::string>({3}, {"a", "b", "c"}));
  const Tensor before = ResourceValue(words);  // so the update copies the strings first
  RequireOk(RunResourceScatter("ResourceScatterUpdate", words, testing::Vec<int32_t>({2, 0, 2}),
                               Filled<std::string>({3}, {"x", "y", "z"})));
  CHECK(Values<std::string>(ResourceValue(words)) == std::vector<std::string>{"y", "b", "z"});
  CHECK(Values<std::string>(before) == std::vector<std::string>{"a", "b", "c"});

  const std::string flags = NewResourceVariable("flags", Filled<bool>({2}, {true, false}));
  RequireOk(RunResourceScatter("ResourceScatterUpdate", flags, testing::Vec<int64_t>({1}),
                               MakeTensor<bool>({}, {true})));
  CHECK(Values<bool>(ResourceValue(flags)) == std::vector<bool>{true, true});
}

TEST_CASE("Scatter ops: empty indices, copy-on-write and updates aliasing the variable",
          "[kernels][scatter]") {
  const std::string var = NewResourceVariable("cow", Filled<float>({4, 3}, kParams));
  const Tensor before = ResourceValue(var);
  RequireOk(RunResourceScatter("ResourceScatterAdd", var, testing::Vec<int32_t>({}),
                               Filled<float>({0, 3}, {})));
  CHECK(ResourceValue(var).SharesBufferWith(before));

  RequireOk(RunResourceScatter("ResourceScatterMul", var, testing::Vec<int32_t>({1}),
                               Filled<float>({1, 3}, {2, 2, 2})));
  CHECK(Values<float>(before) == kParams);
  std::vector<float> want = kParams;
  for (int j = 3; j < 6; ++j) want[j] *= 2;
  CHECK(Values<float>(ResourceValue(var)) == want);

  // The updates are the variable's own buffer (4 rows added to rows 3, 2, 1, 0): each row
  // gets another row's old value, not one already updated.
  const std::string self = NewResourceVariable("alias", Filled<float>({4, 3}, kParams));
  RequireOk(RunResourceScatter("ResourceScatterAdd", self, testing::Vec<int32_t>({3, 2, 1, 0}),
                               ResourceValue(self)));
  std::vector<float> sum(12);
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 3; ++j) sum[r * 3 + j] = kParams[r * 3 + j] + kParams[(3 - r) * 3 + j];
  }
  CHECK(Values<float>(ResourceValue(self)) == sum);
}

TEST_CASE("Integer ScatterDiv of the lowest value by -1 wraps instead of trapping",
          "[kernels][scatter]") {
  const int32_t lowest = std::numeric_limits<int32_t>::min();
  const std::string var = NewResourceVariable("lowest", testing::Vec<int32_t>({lowest, 7}));
  RequireOk(RunResourceScatter("ResourceScatterDiv", var, testing::Vec<int32_t>({0, 1}),
                               testing::Vec<int32_t>({-1, -1})));
  CHECK(Values<int32_t>(ResourceValue(var)) == std::vector<int32_t>{lowest, -7});
}

void CheckError(const absl::Status& status, const std::string& text) {
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Contains(text));
}

TEST_CASE("Resource scatter ops refuse bad indices, shapes and dtypes in TF's words",
          "[kernels][scatter]") {
  const std::string var = NewResourceVariable("errors", Filled<float>({4, 3}, kParams));
  const Tensor rows2 = Filled<float>({2, 3}, {1, 1, 1, 1, 1, 1});
  CheckError(RunResourceScatter("ResourceScatterAdd", var, testing::Vec<int32_t>({1, 4}), rows2),
             "indices[1] = 4 is not in [0, 4)");
  CheckError(RunResourceScatter("ResourceScatterSub", var,
                                Filled<int64_t>({2, 2}, {1, 0, 2, -1}),
                                Filled<float>({2, 2, 3}, std::vector<float>(12, 1))),
             "indices[1,1] = -1 is not in [0, 4)");
  CHECK(Values<float>(ResourceValue(var)) == kParams);  // the rows before were not written

  CheckError(RunResourceScatter("ResourceScatterAdd", var, testing::Vec<int32_t>({1, 0}),
                                Filled<float>({2, 2, 3}, std::vector<float>(12, 1))),
             "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = "
             "[], got updates.shape [2,2,3], indices.shape [2], params.shape [4,3]");
  CheckError(RunResourceScatter("ResourceScatterAdd", var, testing::Vec<int32_t>({1, 0}),
                                Filled<float>({3, 3}, std::vector<float>(9, 1))),
             "The shape of indices ([2]) must be a prefix of the shape of updates ([3,3])");
  // TF 2.21's resource form accepts [2,4] here (and writes past the rows); dflow refuses.
  CheckError(RunResourceScatter("ResourceScatterAdd", var, testing::Vec<int32_t>({1, 0}),
                                Filled<float>({2, 4}, std::vector<float>(8, 1))),
             "Must have updates.shape = indices.shape + params.shape[1:]");
  CheckError(RunResourceScatter("ResourceScatterAdd", var, testing::Vec<int32_t>({1, 0}),
                                Filled<double>({2, 3}, std::vector<double>(6, 1))),
             "DType of scatter resource and updates does not match.");

  const std::string ints = NewResourceVariable("ints", Filled<int32_t>({2}, {4, 6}));
  CheckError(RunResourceScatter("ResourceScatterDiv", ints, testing::Vec<int32_t>({0, 1}),
                                testing::Vec<int32_t>({2, 0})),
             "updates must not contain 0");
  CHECK(Values<int32_t>(ResourceValue(ints)) == std::vector<int32_t>{4, 6});

  const std::string scalar = NewResourceVariable("scalar", MakeTensor<float>({}, {1}));
  CheckError(RunResourceScatter("ResourceScatterAdd", scalar, testing::Vec<int32_t>({0}),
                                testing::Vec<float>({1})),
             "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = "
             "[], got updates.shape [1], indices.shape [1], params.shape []");

  const absl::Status missing = RunResourceScatter("ResourceScatterAdd", "no_such_table",
                                                  testing::Vec<int32_t>({0}), rows2);
  CHECK(missing.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(missing.message()), Contains("Could not find variable no_such_table"));
}

TEST_CASE("Ref scatter ops refuse uninitialized variables, bad shapes and division by zero",
          "[kernels][scatter]") {
  testing::RefGraph g;
  g.Variable("table", Filled<int32_t>({2, 2}, {4, 6, 8, 10}));
  NodeDef* fresh = g.Node("fresh", "VariableV2", {});
  testing::SetAttr(fresh, "dtype", DT_INT32);
  *(*fresh->mutable_attr())["shape"].mutable_shape() = TensorShape({2, 2}).ToProto();
  g.Placeholder("indices", DT_INT32);
  g.Placeholder("updates", DT_INT32);
  for (const std::string target : {"table", "fresh"}) {
    NodeDef* div = g.Node(target + "_div", "ScatterDiv", {target, "indices", "updates"});
    testing::SetAttr(div, "T", DT_INT32);
    testing::SetAttr(div, "Tindices", DT_INT32);
  }
  auto session = g.Open();
  auto run = [&](const std::string& node, const Tensor& indices, const Tensor& updates) {
    std::vector<Tensor> out;
    return session->Run({{"indices", indices}, {"updates", updates}}, {node}, {}, &out);
  };
  const Tensor row = Filled<int32_t>({1, 2}, {2, 2});
  absl::Status status = run("fresh_div", testing::Vec<int32_t>({0}), row);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()),
             Contains("Attempting to use uninitialized value fresh"));

  // TF's ref ScatterDiv dies of SIGFPE here; dflow gives the resource form's error.
  CheckError(run("table_div", testing::Vec<int32_t>({1}), Filled<int32_t>({1, 2}, {0, 1})),
             "updates must not contain 0");
  CheckError(run("table_div", testing::Vec<int32_t>({1}), Filled<int32_t>({1, 3}, {1, 1, 1})),
             "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = "
             "[], got updates.shape [1,3], indices.shape [1], params.shape [2,2]");
  CheckError(run("table_div", testing::Vec<int32_t>({2}), row), "indices[0] = 2 is not in [0, 2)");
  CHECK(Values<int32_t>(testing::RunOk(*session, {"table"})[0]) ==
        std::vector<int32_t>{4, 6, 8, 10});
  // Truncating integer division, as TF: 10 / -4 = -2.
  RequireOk(
      run("table_div", testing::Vec<int32_t>({1, 1}), Filled<int32_t>({2, 2}, {2, -4, 2, 1})));
  CHECK(Values<int32_t>(testing::RunOk(*session, {"table"})[0]) ==
        std::vector<int32_t>{4, 6, 2, -2});
}

}  // namespace
}  // namespace dflow
