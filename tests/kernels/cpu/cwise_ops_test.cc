// Element-wise CPU kernels: binary ops with broadcasting, unary math, activations,
// AddN, Softmax/LogSoftmax and BiasAdd.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/kernel_registry.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::Filled;
using testing::MakeTensor;
using testing::OpTester;
using testing::TestCpuDevice;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCwiseKernels); }

absl::StatusOr<Tensor> Binary(const std::string& op, const Tensor& x, const Tensor& y) {
  OpTester tester(op, Registry());
  if (x.dtype() != DT_BOOL || op == "Equal" || op == "NotEqual") tester.Attr("T", x.dtype());
  return tester.Input(x).Input(y).RunOne();
}

absl::StatusOr<Tensor> Unary(const std::string& op, const Tensor& x) {
  OpTester tester(op, Registry());
  if (op != "LogicalNot") tester.Attr("T", x.dtype());
  return tester.Input(x).RunOne();
}

template <typename T>
std::vector<T> BinaryValues(const std::string& op, const Tensor& x, const Tensor& y) {
  absl::StatusOr<Tensor> out = Binary(op, x, y);
  REQUIRE(out.ok());
  return Values<T>(*out);
}

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Moves tensors into a vector (an initializer_list would copy them, keeping a reference).
template <typename... Ts>
std::vector<Tensor> Own(Ts&&... tensors) {
  std::vector<Tensor> v;
  (v.push_back(std::move(tensors)), ...);
  return v;
}

// Runs `op` on inputs this test hands over entirely (no other references), so the
// kernel may forward one of them to its output.
Tensor RunOwned(const std::string& op, std::vector<Tensor> inputs, int n = 0) {
  NodeDef node;
  node.set_name("in_place");
  node.set_op(op);
  AttrValue t;
  t.set_type(inputs[0].dtype());
  (*node.mutable_attr())["T"] = t;
  if (n > 0) {
    AttrValue n_attr;
    n_attr.set_i(n);
    (*node.mutable_attr())["N"] = n_attr;
  }
  const OpDef* op_def = OpRegistry::Global().Find(op);
  REQUIRE(op_def != nullptr);
  AddDefaultAttrs(*op_def, &node);
  DataTypeVector in, out;
  REQUIRE(InOutTypesForNode(node, *op_def, &in, &out).ok());
  auto kernel = Registry().CreateKernel(node, *op_def, in, out, TestCpuDevice());
  REQUIRE(kernel.ok());
  OpKernelContext::Params params;
  params.kernel = kernel->get();
  params.device = TestCpuDevice();
  params.inputs = absl::MakeSpan(inputs);
  OpKernelContext context(params, 1);
  (*kernel)->Compute(&context);
  REQUIRE(context.status().ok());
  return *context.mutable_output(0);
}

// --- binary arithmetic ---------------------------------------------------------------

TEST_CASE("Binary arithmetic ops compute float values element-wise", "[kernels][cwise]") {
  const Tensor x = MakeTensor<float>({4}, {1.5f, -7, 8, 0.5f});
  const Tensor y = MakeTensor<float>({4}, {2, 2, -3, 0.25f});
  CheckNear(BinaryValues<float>("Add", x, y), {3.5f, -5, 5, 0.75f});
  CheckNear(BinaryValues<float>("AddV2", x, y), {3.5f, -5, 5, 0.75f});
  CheckNear(BinaryValues<float>("Sub", x, y), {-0.5f, -9, 11, 0.25f});
  CheckNear(BinaryValues<float>("Mul", x, y), {3, -14, -24, 0.125f});
  CheckNear(BinaryValues<float>("RealDiv", x, y), {0.75f, -3.5f, -8.0f / 3, 2});
  CheckNear(BinaryValues<float>("Div", x, y), {0.75f, -3.5f, -8.0f / 3, 2});
  CheckNear(BinaryValues<float>("Maximum", x, y), {2, 2, 8, 0.5f});
  CheckNear(BinaryValues<float>("Minimum", x, y), {1.5f, -7, -3, 0.25f});
  CheckNear(BinaryValues<float>("SquaredDifference", x, y), {0.25f, 81, 121, 0.0625f});
  CheckNear(BinaryValues<float>("Pow", x, y), {2.25f, 49, 1.0f / 512, std::pow(0.5f, 0.25f)});
  CheckNear(BinaryValues<float>("FloorDiv", x, y), {0, -4, -3, 2});
  CheckNear(BinaryValues<float>("FloorMod", x, y), {1.5f, 1, -1, 0});
}

TEST_CASE("Binary arithmetic ops compute integer values with TF's rounding", "[kernels][cwise]") {
  SECTION("int32") {
    const Tensor x = MakeTensor<int32_t>({4}, {7, -7, 7, -7});
    const Tensor y = MakeTensor<int32_t>({4}, {2, 2, -2, -2});
    CHECK(BinaryValues<int32_t>("Add", x, y) == std::vector<int32_t>{9, -5, 5, -9});
    CHECK(BinaryValues<int32_t>("Sub", x, y) == std::vector<int32_t>{5, -9, 9, -5});
    CHECK(BinaryValues<int32_t>("Mul", x, y) == std::vector<int32_t>{14, -14, -14, 14});
    CHECK(BinaryValues<int32_t>("Div", x, y) == std::vector<int32_t>{3, -3, -3, 3});
    CHECK(BinaryValues<int32_t>("FloorDiv", x, y) == std::vector<int32_t>{3, -4, -4, 3});
    CHECK(BinaryValues<int32_t>("FloorMod", x, y) == std::vector<int32_t>{1, 1, -1, -1});
    CHECK(BinaryValues<int32_t>("Maximum", x, y) == std::vector<int32_t>{7, 2, 7, -2});
    CHECK(BinaryValues<int32_t>("Minimum", x, y) == std::vector<int32_t>{2, -7, -2, -7});
    CHECK(BinaryValues<int32_t>("SquaredDifference", x, y) == std::vector<int32_t>{25, 81, 81, 25});
  }
  SECTION("int64") {
    const Tensor x = MakeTensor<int64_t>({3}, {3, -2, int64_t{1} << 40});
    const Tensor y = MakeTensor<int64_t>({3}, {4, 3, 1});
    CHECK(BinaryValues<int64_t>("Pow", x, y) == std::vector<int64_t>{81, -8, int64_t{1} << 40});
    CHECK(BinaryValues<int64_t>("Mul", x, y) == std::vector<int64_t>{12, -6, int64_t{1} << 40});
  }
  SECTION("the most negative integer divided by -1 wraps instead of trapping") {
    const int32_t lowest = std::numeric_limits<int32_t>::lowest();
    const Tensor x = MakeTensor<int32_t>({1}, {lowest});
    const Tensor y = MakeTensor<int32_t>({1}, {-1});
    CHECK(BinaryValues<int32_t>("Div", x, y) == std::vector<int32_t>{lowest});
    CHECK(BinaryValues<int32_t>("FloorDiv", x, y) == std::vector<int32_t>{lowest});
    CHECK(BinaryValues<int32_t>("FloorMod", x, y) == std::vector<int32_t>{0});
  }
}

TEST_CASE("Integer division by zero is an error, not a crash", "[kernels][cwise]") {
  const Tensor x = MakeTensor<int32_t>({3}, {1, 2, 3});
  const Tensor y = MakeTensor<int32_t>({3}, {1, 0, 3});
  for (const char* op : {"Div", "RealDiv", "FloorDiv", "FloorMod"}) {
    INFO(op);
    absl::StatusOr<Tensor> out = Binary(op, x, y);
    REQUIRE(!out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(out.status().message() == "Integer division by zero");
  }
  // An empty result divides nothing (TF: no error), even by a scalar 0.
  const Tensor empty = MakeTensor<int32_t>({0}, {});
  const Tensor zero = MakeTensor<int32_t>({}, {0});
  for (const char* op : {"FloorDiv", "FloorMod"}) {
    INFO(op);
    absl::StatusOr<Tensor> out = Binary(op, empty, zero);
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(out->NumElements() == 0);
  }
  // Float division by zero follows IEEE.
  const Tensor fx = MakeTensor<float>({2}, {1, -1});
  const Tensor fy = MakeTensor<float>({2}, {0, 0});
  CHECK(BinaryValues<float>("Div", fx, fy) ==
        std::vector<float>{std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity()});
}

TEST_CASE("Integer Pow rejects negative exponents", "[kernels][cwise]") {
  absl::StatusOr<Tensor> out =
      Binary("Pow", MakeTensor<int64_t>({2}, {2, 2}), MakeTensor<int64_t>({2}, {1, -1}));
  REQUIRE(!out.ok());
  CHECK(out.status().message() == "Integers to negative integer powers are not allowed");
}

// --- comparisons and logic ---------------------------------------------------------

TEST_CASE("Comparison ops return bool and broadcast", "[kernels][cwise]") {
  const Tensor x = MakeTensor<float>({4}, {1, 2, 3, 4});
  const Tensor two = MakeTensor<float>({}, {2});
  CHECK(BinaryValues<bool>("Less", x, two) == std::vector<bool>{true, false, false, false});
  CHECK(BinaryValues<bool>("LessEqual", x, two) == std::vector<bool>{true, true, false, false});
  CHECK(BinaryValues<bool>("Greater", x, two) == std::vector<bool>{false, false, true, true});
  CHECK(BinaryValues<bool>("GreaterEqual", two, x) == std::vector<bool>{true, true, false, false});
  CHECK(BinaryValues<bool>("Equal", x, two) == std::vector<bool>{false, true, false, false});
  CHECK(BinaryValues<bool>("NotEqual", x, two) == std::vector<bool>{true, false, true, true});
  const Tensor ix = MakeTensor<int64_t>({3}, {5, 6, 7});
  const Tensor iy = MakeTensor<int64_t>({3}, {7, 6, 5});
  CHECK(BinaryValues<bool>("Less", ix, iy) == std::vector<bool>{true, false, false});
  CHECK(BinaryValues<bool>("Equal", ix, iy) == std::vector<bool>{false, true, false});
}

TEST_CASE("Logical ops and bool equality combine bool tensors", "[kernels][cwise]") {
  const Tensor a = MakeTensor<bool>({4}, {true, true, false, false});
  const Tensor b = MakeTensor<bool>({4}, {true, false, true, false});
  CHECK(BinaryValues<bool>("LogicalAnd", a, b) == std::vector<bool>{true, false, false, false});
  CHECK(BinaryValues<bool>("LogicalOr", a, b) == std::vector<bool>{true, true, true, false});
  CHECK(BinaryValues<bool>("Equal", a, b) == std::vector<bool>{true, false, false, true});
  absl::StatusOr<Tensor> negated = Unary("LogicalNot", a);
  REQUIRE(negated.ok());
  CHECK(Values<bool>(*negated) == std::vector<bool>{false, false, true, true});
}

TEST_CASE("Equal with incompatible_shape_error=false returns a scalar verdict",
          "[kernels][cwise]") {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor y = MakeTensor<float>({4}, {1, 2, 3, 4});
  for (const auto& [op, verdict] : {std::pair<const char*, bool>{"Equal", false},
                                    std::pair<const char*, bool>{"NotEqual", true}}) {
    absl::StatusOr<Tensor> out = OpTester(op, Registry())
                                     .Attr("T", DT_FLOAT)
                                     .Attr("incompatible_shape_error", false)
                                     .Input(x)
                                     .Input(y)
                                     .RunOne();
    REQUIRE(out.ok());
    CHECK(out->shape() == TensorShape());
    CHECK(out->scalar<bool>() == verdict);
  }
}

// --- broadcasting ----------------------------------------------------------------

TEST_CASE("Binary ops broadcast a vector across the rows of a matrix", "[kernels][cwise]") {
  absl::StatusOr<Tensor> out = Binary("Add", MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                      MakeTensor<float>({3}, {10, 20, 30}));
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({2, 3}));
  CHECK(Values<float>(*out) == std::vector<float>{11, 22, 33, 14, 25, 36});
  // The vector may be on the left too.
  CHECK(BinaryValues<int32_t>("Sub", MakeTensor<int32_t>({3}, {10, 20, 30}),
                              MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})) ==
        std::vector<int32_t>{9, 18, 27, 6, 15, 24});
}

TEST_CASE("Binary ops broadcast a column against a row into a matrix", "[kernels][cwise]") {
  absl::StatusOr<Tensor> out =
      Binary("Mul", MakeTensor<float>({2, 1}, {1, 2}), MakeTensor<float>({1, 3}, {10, 20, 30}));
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({2, 3}));
  CHECK(Values<float>(*out) == std::vector<float>{10, 20, 30, 20, 40, 60});
}

TEST_CASE("Binary ops broadcast a scalar on either side", "[kernels][cwise]") {
  const Tensor x = MakeTensor<int64_t>({2, 2}, {1, 2, 3, 4});
  const Tensor s = MakeTensor<int64_t>({}, {10});
  CHECK(BinaryValues<int64_t>("Sub", x, s) == std::vector<int64_t>{-9, -8, -7, -6});
  CHECK(BinaryValues<int64_t>("Sub", s, x) == std::vector<int64_t>{9, 8, 7, 6});
  absl::StatusOr<Tensor> scalar = Binary("Add", s, s);
  REQUIRE(scalar.ok());
  CHECK(scalar->shape() == TensorShape());
  CHECK(scalar->scalar<int64_t>() == 20);
}

// Reference broadcasting: out[i,j,k] from operands padded to rank 3.
std::vector<float> NaiveBroadcast3(const std::vector<int64_t>& xd, const std::vector<float>& x,
                                   const std::vector<int64_t>& yd, const std::vector<float>& y,
                                   float (*fn)(float, float)) {
  std::vector<int64_t> od(3);
  for (int i = 0; i < 3; ++i) od[i] = std::max(xd[i], yd[i]);
  std::vector<float> out;
  for (int64_t i = 0; i < od[0]; ++i) {
    for (int64_t j = 0; j < od[1]; ++j) {
      for (int64_t k = 0; k < od[2]; ++k) {
        auto at = [&](const std::vector<int64_t>& d, const std::vector<float>& v) {
          const int64_t a = d[0] == 1 ? 0 : i, b = d[1] == 1 ? 0 : j, c = d[2] == 1 ? 0 : k;
          return v[(a * d[1] + b) * d[2] + c];
        };
        out.push_back(fn(at(xd, x), at(yd, y)));
      }
    }
  }
  return out;
}

TEST_CASE("Binary ops broadcast [4,1,3] against [2,1] into [4,2,3]", "[kernels][cwise]") {
  const std::vector<float> x = RandomFloats(12, 1), y = {100, 200};
  absl::StatusOr<Tensor> out = Binary("Add", Filled<float>({4, 1, 3}, x), Filled<float>({2, 1}, y));
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({4, 2, 3}));
  CHECK(Values<float>(*out) ==
        NaiveBroadcast3({4, 1, 3}, x, {1, 2, 1}, y, [](float a, float b) { return a + b; }));
}

TEST_CASE("Large broadcasts split across threads match a naive reference", "[kernels][cwise]") {
  struct Case {
    std::vector<int64_t> x, y;  // rank 3
  };
  const Case cases[] = {
      {{64, 1, 301}, {1, 50, 1}},    // outer product of two broadcasts
      {{1, 1, 1}, {40, 50, 301}},    // scalar vs tensor
      {{40, 50, 301}, {1, 1, 301}},  // row vector (BiasAdd pattern)
      {{40, 50, 301}, {40, 50, 1}},  // column
      {{40, 50, 301}, {40, 50, 301}},
  };
  for (const Case& c : cases) {
    const std::vector<float> x = RandomFloats(c.x[0] * c.x[1] * c.x[2], 2);
    const std::vector<float> y = RandomFloats(c.y[0] * c.y[1] * c.y[2], 3);
    absl::StatusOr<Tensor> out =
        Binary("SquaredDifference", Filled<float>(c.x, x), Filled<float>(c.y, y));
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) ==
          NaiveBroadcast3(c.x, x, c.y, y, [](float a, float b) { return (a - b) * (a - b); }));
  }
}

TEST_CASE("Incompatible shapes are rejected with TF's message", "[kernels][cwise]") {
  absl::StatusOr<Tensor> out =
      Binary("Add", MakeTensor<float>({2, 3}, {}), MakeTensor<float>({4}, {}));
  REQUIRE(!out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(out.status().message() == "Incompatible shapes: [2,3] vs. [4]");
  CHECK(!Binary("Less", MakeTensor<int32_t>({3, 2}, {}), MakeTensor<int32_t>({3}, {})).ok());
}

TEST_CASE("Binary ops on empty tensors produce empty outputs", "[kernels][cwise]") {
  absl::StatusOr<Tensor> out =
      Binary("Mul", MakeTensor<float>({0, 3}, {}), MakeTensor<float>({3}, {1, 2, 3}));
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({0, 3}));
}

// --- unary -------------------------------------------------------------------------

TEST_CASE("Unary math ops compute float values element-wise", "[kernels][cwise]") {
  const std::vector<float> v = {-2.5f, -0.5f, 0.25f, 4};
  const Tensor x = MakeTensor<float>({4}, v);
  const Tensor pos = MakeTensor<float>({3}, {0.25f, 1, 4});
  auto run = [](const char* op, const Tensor& t) {
    absl::StatusOr<Tensor> out = Unary(op, t);
    REQUIRE(out.ok());
    return Values<float>(*out);
  };
  CheckNear(run("Neg", x), {2.5f, 0.5f, -0.25f, -4});
  CheckNear(run("Abs", x), {2.5f, 0.5f, 0.25f, 4});
  CheckNear(run("Square", x), {6.25f, 0.25f, 0.0625f, 16});
  CheckNear(run("Sign", x), {-1, -1, 1, 1});
  CheckNear(run("Floor", x), {-3, -1, 0, 4});
  CheckNear(run("Ceil", x), {-2, -0.0f, 1, 4});
  CheckNear(run("Reciprocal", x), {-0.4f, -2, 4, 0.25f});
  CheckNear(run("Exp", x), {std::exp(-2.5f), std::exp(-0.5f), std::exp(0.25f), std::exp(4.0f)});
  CheckNear(run("Tanh", x),
            {std::tanh(-2.5f), std::tanh(-0.5f), std::tanh(0.25f), std::tanh(4.0f)});
  CheckNear(run("Sigmoid", x), {1 / (1 + std::exp(2.5f)), 1 / (1 + std::exp(0.5f)),
                                1 / (1 + std::exp(-0.25f)), 1 / (1 + std::exp(-4.0f))});
  CheckNear(run("Sqrt", pos), {0.5f, 1, 2});
  CheckNear(run("Rsqrt", pos), {2, 1, 0.5f});
  CheckNear(run("Log", pos), {std::log(0.25f), 0, std::log(4.0f)});
  // Near 0, exp(x) - 1 and log(1 + x) in float lose every digit; Expm1/Log1p keep them.
  const Tensor tiny = MakeTensor<float>({2}, {1e-10f, -2.5f});
  CHECK(run("Expm1", tiny)[0] == 1e-10f);
  CheckNear(run("Expm1", tiny), {1e-10f, std::expm1(-2.5f)});
  CHECK(run("Log1p", tiny)[0] == 1e-10f);
  CheckNear(run("Sign", MakeTensor<float>({1}, {0})), {0});
}

TEST_CASE("Unary math ops compute integer values element-wise", "[kernels][cwise]") {
  const Tensor x = MakeTensor<int32_t>({4}, {-3, 0, 2, 7});
  auto run = [&](const char* op) {
    absl::StatusOr<Tensor> out = Unary(op, x);
    REQUIRE(out.ok());
    return Values<int32_t>(*out);
  };
  CHECK(run("Neg") == std::vector<int32_t>{3, 0, -2, -7});
  CHECK(run("Abs") == std::vector<int32_t>{3, 0, 2, 7});
  CHECK(run("Square") == std::vector<int32_t>{9, 0, 4, 49});
  CHECK(run("Sign") == std::vector<int32_t>{-1, 0, 1, 1});
  CHECK(run("Relu") == std::vector<int32_t>{0, 0, 2, 7});
  CHECK(run("Relu6") == std::vector<int32_t>{0, 0, 2, 6});
  absl::StatusOr<Tensor> neg64 = Unary("Neg", MakeTensor<int64_t>({2}, {5, -6}));
  REQUIRE(neg64.ok());
  CHECK(Values<int64_t>(*neg64) == std::vector<int64_t>{-5, 6});
}

TEST_CASE("Activations compute values and stay finite at the extremes", "[kernels][cwise]") {
  const Tensor x = MakeTensor<float>({5}, {-100, -1, 0, 3, 100});
  auto run = [&](const char* op) {
    absl::StatusOr<Tensor> out = Unary(op, x);
    REQUIRE(out.ok());
    return Values<float>(*out);
  };
  CheckNear(run("Relu"), {0, 0, 0, 3, 100});
  CheckNear(run("Relu6"), {0, 0, 0, 3, 6});
  // NaN stays NaN (TF 2.21: relu(nan) = relu6(nan) = nan).
  for (const char* op : {"Relu", "Relu6"}) {
    INFO(op);
    absl::StatusOr<Tensor> nan =
        Unary(op, MakeTensor<float>({2}, {std::numeric_limits<float>::quiet_NaN(), 7}));
    REQUIRE(nan.ok());
    CHECK(std::isnan(Values<float>(*nan)[0]));
    CHECK(Values<float>(*nan)[1] == (std::string(op) == "Relu" ? 7.f : 6.f));
  }
  CheckNear(run("Elu"), {-1, std::expm1(-1.0f), 0, 3, 100});
  CheckNear(run("Softplus"),
            {0, std::log1p(std::exp(-1.0f)), std::log(2.0f), 3 + std::log1p(std::exp(-3.0f)), 100});
  CheckNear(run("Sigmoid"), {0, 1 / (1 + std::exp(1.0f)), 0.5f, 1 / (1 + std::exp(-3.0f)), 1});
  absl::StatusOr<Tensor> d = Unary("Softplus", MakeTensor<double>({1}, {-1000}));
  REQUIRE(d.ok());
  CHECK(Values<double>(*d)[0] == 0.0);
}

TEST_CASE("Large unary inputs are processed in parallel shards", "[kernels][cwise]") {
  const std::vector<float> v = RandomFloats(1 << 20, 4);
  absl::StatusOr<Tensor> out = Unary("Tanh", Filled<float>({1 << 20}, v));
  REQUIRE(out.ok());
  const std::vector<float> got = Values<float>(*out);
  for (size_t i = 0; i < v.size(); i += 997) CHECK(got[i] == Approx(std::tanh(v[i])).epsilon(2e-7));
}

// --- in place ------------------------------------------------------------------------

TEST_CASE("Element-wise ops write into a forwardable input's buffer", "[kernels][cwise]") {
  SECTION("unary") {
    Tensor x = MakeTensor<float>({3}, {-1, 2, -3});
    const void* buffer = x.raw_data();
    Tensor out = RunOwned("Relu", Own(std::move(x)));
    CHECK(out.raw_data() == buffer);
    CHECK(Values<float>(out) == std::vector<float>{0, 2, 0});
  }
  SECTION("binary reuses the operand that is not broadcast") {
    Tensor row = MakeTensor<float>({3}, {10, 20, 30});
    Tensor matrix = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    const void* buffer = matrix.raw_data();
    Tensor out = RunOwned("Add", Own(std::move(row), std::move(matrix)));
    CHECK(out.raw_data() == buffer);
    CHECK(Values<float>(out) == std::vector<float>{11, 22, 33, 14, 25, 36});
  }
  SECTION("a comparison allocates its bool output") {
    Tensor a = MakeTensor<int32_t>({2}, {1, 2});
    Tensor b = MakeTensor<int32_t>({2}, {2, 2});
    const void* buffer = a.raw_data();
    Tensor out = RunOwned("Less", Own(std::move(a), std::move(b)));
    CHECK(out.raw_data() != buffer);
    CHECK(Values<bool>(out) == std::vector<bool>{true, false});
  }
  SECTION("AddN accumulates into one of its inputs") {
    Tensor a = MakeTensor<double>({2}, {1, 2});
    Tensor b = MakeTensor<double>({2}, {10, 20});
    Tensor c = MakeTensor<double>({2}, {100, 200});
    const void* buffer = a.raw_data();
    Tensor out = RunOwned("AddN", Own(std::move(a), std::move(b), std::move(c)), 3);
    CHECK(out.raw_data() == buffer);
    CHECK(Values<double>(out) == std::vector<double>{111, 222});
  }
}

// --- AddN ---------------------------------------------------------------------------

TEST_CASE("AddN sums any number of same-shape inputs", "[kernels][cwise]") {
  absl::StatusOr<Tensor> out = OpTester("AddN", Registry())
                                   .Attr("T", DT_INT32)
                                   .Attr("N", 3)
                                   .Input(MakeTensor<int32_t>({2, 2}, {1, 2, 3, 4}))
                                   .Input(MakeTensor<int32_t>({2, 2}, {10, 20, 30, 40}))
                                   .Input(MakeTensor<int32_t>({2, 2}, {100, 200, 300, 400}))
                                   .RunOne();
  REQUIRE(out.ok());
  CHECK(Values<int32_t>(*out) == std::vector<int32_t>{111, 222, 333, 444});

  const std::vector<float> a = RandomFloats(100000, 5), b = RandomFloats(100000, 6);
  out = OpTester("AddN", Registry())
            .Attr("T", DT_FLOAT)
            .Attr("N", 2)
            .Input(Filled<float>({100000}, a))
            .Input(Filled<float>({100000}, b))
            .RunOne();
  REQUIRE(out.ok());
  const std::vector<float> sum = Values<float>(*out);
  for (size_t i = 0; i < a.size(); i += 101) CHECK(sum[i] == a[i] + b[i]);

  absl::StatusOr<Tensor> bad = OpTester("AddN", Registry())
                                   .Attr("T", DT_FLOAT)
                                   .Attr("N", 2)
                                   .Input(MakeTensor<float>({2, 3}, {}))
                                   .Input(MakeTensor<float>({3}, {}))
                                   .RunOne();
  REQUIRE(!bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("must have the same size and shape") &&
                 Catch::Contains("[2,3] != input 1: [3]"));
}

// --- Softmax ------------------------------------------------------------------------

TEST_CASE("Softmax rows sum to one and stay finite for large logits", "[kernels][cwise]") {
  const Tensor logits = MakeTensor<float>({3, 3}, {1, 2, 3, 1000, 1001, 1002, -1000, 0, -1000});
  absl::StatusOr<Tensor> out =
      OpTester("Softmax", Registry()).Attr("T", DT_FLOAT).Input(logits).RunOne();
  REQUIRE(out.ok());
  const std::vector<float> p = Values<float>(*out);
  const float e = std::exp(1.0f);
  const float denom = 1 + e + e * e;
  const std::vector<float> want_row = {1 / denom, e / denom, e * e / denom};
  for (int r = 0; r < 2; ++r) {
    CheckNear(std::vector<float>(p.begin() + 3 * r, p.begin() + 3 * r + 3), want_row);
  }
  CheckNear(std::vector<float>(p.begin() + 6, p.end()), {0, 1, 0});
  for (int r = 0; r < 3; ++r) CHECK(p[3 * r] + p[3 * r + 1] + p[3 * r + 2] == Approx(1));
}

TEST_CASE("LogSoftmax equals log of Softmax without overflowing", "[kernels][cwise]") {
  const Tensor logits = MakeTensor<double>({2, 2}, {0, 0, 1000, 0});
  absl::StatusOr<Tensor> out =
      OpTester("LogSoftmax", Registry()).Attr("T", DT_DOUBLE).Input(logits).RunOne();
  REQUIRE(out.ok());
  CheckNear(Values<double>(*out), {-std::log(2.0), -std::log(2.0), 0, -1000}, 1e-12);
}

TEST_CASE("Softmax of a long vector and of a scalar-rank input", "[kernels][cwise]") {
  const std::vector<float> v = RandomFloats(5000, 7);
  absl::StatusOr<Tensor> out =
      OpTester("Softmax", Registry()).Attr("T", DT_FLOAT).Input(Filled<float>({5000}, v)).RunOne();
  REQUIRE(out.ok());
  double sum = 0;
  for (float p : Values<float>(*out)) sum += p;
  CHECK(sum == Approx(1).epsilon(1e-5));
  absl::StatusOr<Tensor> bad = OpTester("Softmax", Registry())
                                   .Attr("T", DT_FLOAT)
                                   .Input(MakeTensor<float>({}, {1}))
                                   .RunOne();
  REQUIRE(!bad.ok());
  CHECK(bad.status().message() == "logits must have >= 1 dimension, got []");
}

// --- BiasAdd -----------------------------------------------------------------------

TEST_CASE("BiasAdd adds the bias along the channel dim in NHWC and NCHW", "[kernels][cwise]") {
  const Tensor value = MakeTensor<float>({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor bias = MakeTensor<float>({2}, {10, 20});
  SECTION("NHWC: channels are the last dim") {
    absl::StatusOr<Tensor> out =
        OpTester("BiasAdd", Registry()).Attr("T", DT_FLOAT).Input(value).Input(bias).RunOne();
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{11, 22, 13, 24, 15, 26, 17, 28});
  }
  SECTION("NCHW: channels are dim 1") {
    absl::StatusOr<Tensor> out = OpTester("BiasAdd", Registry())
                                     .Attr("T", DT_FLOAT)
                                     .Attr("data_format", "NCHW")
                                     .Input(value)
                                     .Input(bias)
                                     .RunOne();
    REQUIRE(out.ok());
    CHECK(Values<float>(*out) == std::vector<float>{11, 12, 13, 14, 25, 26, 27, 28});
  }
  SECTION("int64 matrix") {
    absl::StatusOr<Tensor> out = OpTester("BiasAdd", Registry())
                                     .Attr("T", DT_INT64)
                                     .Input(MakeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                                     .Input(MakeTensor<int64_t>({3}, {100, 200, 300}))
                                     .RunOne();
    REQUIRE(out.ok());
    CHECK(Values<int64_t>(*out) == std::vector<int64_t>{101, 202, 303, 104, 205, 306});
  }
  SECTION("a bias of the wrong size names both shapes") {
    absl::StatusOr<Tensor> out = OpTester("BiasAdd", Registry())
                                     .Attr("T", DT_FLOAT)
                                     .Input(value)
                                     .Input(MakeTensor<float>({3}, {}))
                                     .RunOne();
    REQUIRE(!out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(out.status().message() ==
          "Must provide as many biases as the channel dimension of the input tensor: [3] vs. "
          "[1,2,2,2]");
  }
  SECTION("a 1-D value is rejected") {
    absl::StatusOr<Tensor> out = OpTester("BiasAdd", Registry())
                                     .Attr("T", DT_FLOAT)
                                     .Input(MakeTensor<float>({2}, {}))
                                     .Input(bias)
                                     .RunOne();
    REQUIRE(!out.ok());
    CHECK(out.status().message() == "Input tensor must be at least 2D: [2]");
  }
}

}  // namespace
}  // namespace dflow
