// Random ops: bit-exact with TF 2.21 for the same (seed, seed2). Expected numbers come
// from tf.raw_ops.<Op>(..., seed=s, seed2=s2) in a fresh process (the second call of
// the same eager op reuses its kernel, which shows the stream advancing per run).
#include <catch2/catch.hpp>
#include <memory>
#include <numeric>
#include <vector>

#include "graph/node_def_util.h"
#include "graph/op_registry.h"
#include "kernels/cpu/philox_random.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/op_kernel.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::Filled;
using testing::TestCpuDevice;
using testing::Values;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterRandomKernels); }

// One kernel instance run several times (OpTester builds a new kernel per Run, but the
// random ops' state lives in the kernel).
class KernelRunner {
 public:
  KernelRunner(const std::string& op, std::map<std::string, AttrValue> attrs) {
    node_.set_name("random");
    node_.set_op(op);
    for (auto& [name, value] : attrs) (*node_.mutable_attr())[name] = value;
    const OpDef* op_def = OpRegistry::Global().Find(op);
    REQUIRE(op_def != nullptr);
    AddDefaultAttrs(*op_def, &node_);
    REQUIRE(InOutTypesForNode(node_, *op_def, &in_, &out_).ok());
    auto kernel = Registry().CreateKernel(node_, *op_def, in_, out_, TestCpuDevice());
    REQUIRE(kernel.ok());
    kernel_ = std::move(*kernel);
  }

  absl::StatusOr<Tensor> Run(std::vector<Tensor> inputs) {
    OpKernelContext::Params params;
    params.kernel = kernel_.get();
    params.device = TestCpuDevice();
    params.inputs = absl::MakeSpan(inputs);
    OpKernelContext context(params, 1);
    kernel_->Compute(&context);
    if (!context.status().ok()) return context.status();
    return *context.mutable_output(0);
  }

 private:
  NodeDef node_;
  DataTypeVector in_, out_;
  std::unique_ptr<OpKernel> kernel_;
};

AttrValue Type(DataType t) {
  AttrValue v;
  v.set_type(t);
  return v;
}
AttrValue Int(int64_t i) {
  AttrValue v;
  v.set_i(i);
  return v;
}

KernelRunner FloatOp(const std::string& op, DataType dtype, int64_t seed, int64_t seed2) {
  return KernelRunner(op, {{"dtype", Type(dtype)}, {"T", Type(DT_INT32)}, {"seed", Int(seed)},
                           {"seed2", Int(seed2)}});
}

Tensor Shape(std::vector<int32_t> dims) {
  return Filled<int32_t>({static_cast<int64_t>(dims.size())}, dims);
}

template <typename T>
std::vector<T> Draw(KernelRunner& runner, std::vector<int32_t> dims) {
  absl::StatusOr<Tensor> out = runner.Run({Shape(std::move(dims))});
  REQUIRE(out.ok());
  return Values<T>(*out);
}

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors", "[kernels][random]") {
  // Random123's kat_vectors for philox4x32_10: counter and key all zero...
  PhiloxRandom zero(0, 0);
  CHECK(zero() == PhiloxRandom::ResultType{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  // ...and counter = key = all ones. Key (lo, hi) = seed; counter words 2, 3 = seed2,
  // words 0, 1 reached by skipping 2^64 - 1.
  PhiloxRandom ones(~uint64_t{0}, ~uint64_t{0});
  ones.Skip(~uint64_t{0});
  CHECK(ones() == PhiloxRandom::ResultType{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
}

TEST_CASE("RandomUniform gives TF's numbers and new ones on each run", "[kernels][random]") {
  KernelRunner f32 = FloatOp("RandomUniform", DT_FLOAT, 1, 2);
  CHECK(Draw<float>(f32, {5}) ==
        std::vector<float>{0.406396747f, 0.857599616f, 0.0553958416f, 0.0858722925f, 0.412153602f});
  CHECK(Draw<float>(f32, {5}) ==
        std::vector<float>{0.159829855f, 0.391263723f, 0.95238471f, 0.58436811f, 0.726921678f});
  KernelRunner f64 = FloatOp("RandomUniform", DT_DOUBLE, 3, 4);
  CHECK(Draw<double>(f64, {3}) ==
        std::vector<double>{0.38989405961787416, 0.5855880897787018, 0.31651254363188652});
  KernelRunner seed2_only = FloatOp("RandomUniform", DT_FLOAT, 0, 7);
  CHECK(Draw<float>(seed2_only, {4}) ==
        std::vector<float>{0.971553445f, 0.719886899f, 0.748594642f, 0.471944928f});
}

TEST_CASE("A new kernel restarts the sequence (a new session in TF 1.x)", "[kernels][random]") {
  KernelRunner first = FloatOp("RandomUniform", DT_FLOAT, 1, 2);
  KernelRunner second = FloatOp("RandomUniform", DT_FLOAT, 1, 2);
  CHECK(Draw<float>(first, {5}) == Draw<float>(second, {5}));
}

TEST_CASE("Unseeded random ops differ between kernels", "[kernels][random]") {
  KernelRunner a = FloatOp("RandomUniform", DT_FLOAT, 0, 0);
  KernelRunner b = FloatOp("RandomUniform", DT_FLOAT, 0, 0);
  CHECK(Draw<float>(a, {16}) != Draw<float>(b, {16}));
}

TEST_CASE("Large outputs sharded on the pool match TF element for element", "[kernels][random]") {
  KernelRunner runner = FloatOp("RandomUniform", DT_FLOAT, 21, 22);
  const std::vector<float> v = Draw<float>(runner, {100000});
  REQUIRE(v.size() == 100000);
  CHECK(std::vector<float>{v[0], v[1], v[777], v[50001], v[99999]} ==
        std::vector<float>{0.436233997f, 0.402558804f, 0.0421353579f, 0.598632693f, 0.103959918f});
  CHECK(std::accumulate(v.begin(), v.end(), 0.0) == Approx(50011.104197025299).epsilon(1e-14));
}

TEST_CASE("RandomStandardNormal gives TF's numbers", "[kernels][random]") {
  KernelRunner f32 = FloatOp("RandomStandardNormal", DT_FLOAT, 5, 6);
  const std::vector<float> want = {0.703273416f, -0.435827315f, -0.822347343f,
                                   -0.287870318f, -1.62200248f, 1.39772403f};
  absl::StatusOr<Tensor> out = f32.Run({Shape({2, 3})});
  REQUIRE(out.ok());
  CHECK(out->shape() == TensorShape({2, 3}));
  CHECK(Values<float>(*out) == want);
  KernelRunner f64 = FloatOp("RandomStandardNormal", DT_DOUBLE, 7, 8);
  CHECK(Draw<double>(f64, {3}) ==
        std::vector<double>{0.62086730901493536, -1.9131762341919658, -1.2841974110249619});
  KernelRunner big = FloatOp("RandomStandardNormal", DT_FLOAT, 25, 26);
  const std::vector<float> v = Draw<float>(big, {30001});
  CHECK(std::vector<float>{v[0], v[29999], v[30000]} ==
        std::vector<float>{-1.34592009f, 0.689581037f, -1.18145013f});
  CHECK(std::accumulate(v.begin(), v.end(), 0.0) == Approx(69.577273696366319).epsilon(1e-12));
}

TEST_CASE("TruncatedNormal gives TF's numbers, all within two sigma", "[kernels][random]") {
  KernelRunner f32 = FloatOp("TruncatedNormal", DT_FLOAT, 9, 10);
  CHECK(Draw<float>(f32, {9}) == std::vector<float>{-1.5047617f, 0.62165612f, 0.329611331f,
                                                    -0.462318331f, 1.97744739f, -0.20229733f,
                                                    0.546891689f, 0.188628346f, 0.667288363f});
  KernelRunner f64 = FloatOp("TruncatedNormal", DT_DOUBLE, 11, 12);
  CHECK(Draw<double>(f64, {3}) ==
        std::vector<double>{0.41021941814432278, 1.2827021656851463, 0.74213038044431401});
  KernelRunner big = FloatOp("TruncatedNormal", DT_FLOAT, 23, 24);
  const std::vector<float> v = Draw<float>(big, {30001});
  CHECK(std::vector<float>{v[0], v[3], v[4], v[20000], v[30000]} ==
        std::vector<float>{-0.66400516f, 0.747179568f, 0.916638434f, 0.857647061f, -1.55773437f});
  CHECK(std::accumulate(v.begin(), v.end(), 0.0) == Approx(65.562608191423351).epsilon(1e-12));
  CHECK(std::all_of(v.begin(), v.end(), [](float x) { return std::abs(x) < 2; }));
}

template <typename T>
KernelRunner IntOp(int64_t seed, int64_t seed2) {
  return KernelRunner("RandomUniformInt", {{"Tout", Type(DataTypeOf<T>())}, {"T", Type(DT_INT32)},
                                           {"seed", Int(seed)}, {"seed2", Int(seed2)}});
}

TEST_CASE("RandomUniformInt gives TF's numbers in [minval, maxval)", "[kernels][random]") {
  KernelRunner i32 = IntOp<int32_t>(13, 14);
  auto a = i32.Run({Shape({5}), Filled<int32_t>({}, {-3}), Filled<int32_t>({}, {10})});
  REQUIRE(a.ok());
  CHECK(Values<int32_t>(*a) == std::vector<int32_t>{8, 2, 5, 0, 8});
  KernelRunner i64 = IntOp<int64_t>(15, 16);
  auto b = i64.Run({Shape({3}), Filled<int64_t>({}, {-5}), Filled<int64_t>({}, {int64_t{1} << 40})});
  REQUIRE(b.ok());
  CHECK(Values<int64_t>(*b) == std::vector<int64_t>{994469038225, 577463748761, 277596793306});
}

TEST_CASE("Random ops reject bad shapes and ranges", "[kernels][random]") {
  KernelRunner uniform = FloatOp("RandomUniform", DT_FLOAT, 1, 2);
  auto matrix = uniform.Run({Filled<int32_t>({1, 1}, {3})});
  REQUIRE_FALSE(matrix.ok());
  CHECK_THAT(std::string(matrix.status().message()), Contains("shape must be a vector"));
  auto negative = uniform.Run({Shape({2, -1})});
  REQUIRE_FALSE(negative.ok());
  CHECK_THAT(std::string(negative.status().message()), Contains("Dimension -1 must be >= 0"));
  KernelRunner ints = IntOp<int32_t>(1, 2);
  auto empty_range = ints.Run({Shape({2}), Filled<int32_t>({}, {4}), Filled<int32_t>({}, {4})});
  REQUIRE_FALSE(empty_range.ok());
  CHECK(empty_range.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(empty_range.status().message()), Contains("Need minval < maxval: 4 >= 4"));
  auto nothing = ints.Run({Shape({0}), Filled<int32_t>({}, {4}), Filled<int32_t>({}, {4})});
  CHECK(nothing.ok());  // zero impossible draws are fine, as in TF
  auto vector_min = ints.Run({Shape({2}), Filled<int32_t>({1}, {0}), Filled<int32_t>({}, {4})});
  REQUIRE_FALSE(vector_min.ok());
  CHECK_THAT(std::string(vector_min.status().message()), Contains("minval must be 0-D, got shape [1]"));
}

}  // namespace
}  // namespace dflow
