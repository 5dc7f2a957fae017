// SparseSegmentSum/Mean/SqrtN, their WithNumSegments forms and their Grad and GradV2
// gradients. Expected values and error texts from TF 2.21 (tf.raw_ops), printed by
// testdata/sparse_segment_tf.py.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;
using Floats = std::vector<float>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterSparseSegmentKernels);
}

OpTester Tester(const std::string& op, const Tensor& data, const Tensor& indices,
                const Tensor& ids) {
  OpTester tester(op, Registry());
  tester.Attr("T", data.dtype())
      .Attr("Tidx", indices.dtype())
      .Attr("Tsegmentids", ids.dtype())
      .Input(data)
      .Input(indices)
      .Input(ids);
  return tester;
}

// SparseSegment<name>(data, indices, ids).
absl::StatusOr<Tensor> Reduce(const std::string& name, const Tensor& data, const Tensor& indices,
                              const Tensor& ids) {
  return Tester("SparseSegment" + name, data, indices, ids).RunOne();
}

// SparseSegment<name>WithNumSegments(data, indices, ids, num_segments).
absl::StatusOr<Tensor> ReduceN(const std::string& name, const Tensor& data, const Tensor& indices,
                               const Tensor& ids, const Tensor& num_segments) {
  return Tester("SparseSegment" + name + "WithNumSegments", data, indices, ids)
      .Attr("Tnumsegments", num_segments.dtype())
      .Input(num_segments)
      .RunOne();
}

// SparseSegment<name>Grad(grad, indices, ids, output_dim0).
absl::StatusOr<Tensor> Grad(const std::string& name, const Tensor& grad, const Tensor& indices,
                            const Tensor& ids, const Tensor& dim0) {
  return Tester("SparseSegment" + name + "Grad", grad, indices, ids).Input(dim0).RunOne();
}

// SparseSegment<name>GradV2(grad, indices, ids, dense_output_dim0): values and indices.
absl::StatusOr<std::vector<Tensor>> GradV2(const std::string& name, const Tensor& grad,
                                           const Tensor& indices, const Tensor& ids,
                                           const Tensor& dim0) {
  return Tester("SparseSegment" + name + "GradV2", grad, indices, ids).Input(dim0).Run();
}

Tensor Int32(int32_t v) { return Filled<int32_t>({}, {v}); }
Tensor Int64(int64_t v) { return Filled<int64_t>({}, {v}); }

template <typename R>
std::string ErrorOf(const absl::StatusOr<R>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

// [[1, 2], [3, 4], [5, 6], [-7, 8]]
const Tensor& Data() {
  static const Tensor* const kData = new Tensor(Filled<float>({4, 2}, {1, 2, 3, 4, 5, 6, -7, 8}));
  return *kData;
}

// [[1, 2], [3, 4], [5, 6]]: the gradient of three segments.
const Tensor& GradIn() {
  static const Tensor* const kGrad = new Tensor(Filled<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  return *kGrad;
}

template <typename T>
Tensor VecOf(const std::vector<float>& values) {
  std::vector<T> out;
  for (float v : values) out.push_back(T::FromFloat(v));
  return Vec<T>(out);
}

template <typename T>
Floats AsFloats(const Tensor& t) {
  Floats out;
  for (T v : Values<T>(t)) out.push_back(v.ToFloat());
  return out;
}

// Segment 0 takes rows 0, 1 and 1 again, segment 1 is empty, segment 2 takes rows 3 and 2.
const std::vector<int32_t> kIndices = {0, 1, 1, 3, 2};
const std::vector<int32_t> kIds = {0, 0, 0, 2, 2};
const Floats kSum = {7, 10, 0, 0, -2, 14};
const Floats kMean = {2.3333334922790527f, 3.3333334922790527f, 0, 0, -1, 7};
const Floats kSqrtN = {4.041451930999756f,   5.773502349853516f, 0, 0,
                       -1.4142135381698608f, 9.899495124816895f};

TEST_CASE("SparseSegment ops fold repeated indices; an empty segment is 0",
          "[kernels][sparse_segment]") {
  const Tensor indices = Vec<int32_t>(kIndices);
  const Tensor ids = Vec<int32_t>(kIds);
  const std::vector<std::pair<std::string, Floats>> cases = {
      {"Sum", kSum}, {"Mean", kMean}, {"SqrtN", kSqrtN}};
  for (const auto& [name, want] : cases) {
    INFO(name);
    auto out = Reduce(name, Data(), indices, ids);
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{3, 2});
    CHECK(Values<float>(*out) == want);
  }
}

TEST_CASE("SparseSegment ops take int64 indices and segment ids", "[kernels][sparse_segment]") {
  auto sum = Reduce("Sum", Data(), Vec<int64_t>({0, 1, 1, 3, 2}), Vec<int64_t>({0, 0, 0, 2, 2}));
  REQUIRE(sum.ok());
  CHECK(Values<float>(*sum) == kSum);
  auto mean = Reduce("Mean", Data(), Vec<int64_t>({0, 1, 1, 3, 2}), Vec<int32_t>(kIds));
  REQUIRE(mean.ok());
  CHECK(Values<float>(*mean) == kMean);
}

TEST_CASE("SparseSegment WithNumSegments pads trailing empty segments with 0",
          "[kernels][sparse_segment]") {
  const Tensor indices = Vec<int32_t>(kIndices);
  const Tensor ids = Vec<int32_t>(kIds);
  auto sum = ReduceN("Sum", Data(), indices, ids, Int32(5));
  REQUIRE(sum.ok());
  CHECK(DimsOf(*sum) == Dims{5, 2});
  CHECK(Values<float>(*sum) == Floats{7, 10, 0, 0, -2, 14, 0, 0, 0, 0});
  auto sqrtn = ReduceN("SqrtN", Data(), Vec<int64_t>({0, 1, 1, 3, 2}), ids, Int64(4));
  REQUIRE(sqrtn.ok());
  Floats want = kSqrtN;
  want.insert(want.end(), {0, 0});
  CHECK(Values<float>(*sqrtn) == want);
  auto none = ReduceN("Mean", Data(), Vec<int32_t>({}), Vec<int32_t>({}), Int32(3));
  REQUIRE(none.ok());
  CHECK(Values<float>(*none) == Floats(6, 0));
  // TF's kernel reads num_segments as an int32: 2^32 + 5 gives 5 segments.
  auto wrapped = ReduceN("Sum", Data(), Vec<int32_t>({0, 1, 2}), Vec<int32_t>({0, 0, 1}),
                         Int64((int64_t{1} << 32) + 5));
  REQUIRE(wrapped.ok());
  CHECK(Values<float>(*wrapped) == Floats{4, 6, 5, 6, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("SparseSegment ops sum in TF's order and scale as TF does", "[kernels][sparse_segment]") {
  // 1e8 + 1 is 1e8 in float, so the result shows how the ones were grouped: TF sums the
  // first 2-9 rows in turn, then adds groups of 8 rows each summed on its own.
  auto rows = [](int n) {
    std::vector<float> v(n, 1.f);
    v.front() = 1e8f;
    v.back() = -1e8f;
    std::vector<int32_t> indices(n), ids(n, 0);
    for (int i = 0; i < n; ++i) indices[i] = i;
    return std::vector<Tensor>{Vec<float>(v), Vec<int32_t>(indices), Vec<int32_t>(ids)};
  };
  const std::vector<Tensor> ten = rows(10), eighteen = rows(18);
  auto sum10 = Reduce("Sum", ten[0], ten[1], ten[2]);
  REQUIRE(sum10.ok());
  CHECK(Values<float>(*sum10) == Floats{8});
  auto sum18 = Reduce("Sum", eighteen[0], eighteen[1], eighteen[2]);
  REQUIRE(sum18.ok());
  CHECK(Values<float>(*sum18) == Floats{16});
  // From 10 rows on the sum is divided; below, multiplied by 1/n or 1/sqrt(n).
  auto mean10 = Reduce("Mean", ten[0], ten[1], ten[2]);
  REQUIRE(mean10.ok());
  CHECK(Values<float>(*mean10) == Floats{0.800000011920929f});
  auto mean18 = Reduce("Mean", eighteen[0], eighteen[1], eighteen[2]);
  REQUIRE(mean18.ok());
  CHECK(Values<float>(*mean18) == Floats{0.8888888955116272f});
  auto sqrtn10 = Reduce("SqrtN", ten[0], ten[1], ten[2]);
  REQUIRE(sqrtn10.ok());
  CHECK(Values<float>(*sqrtn10) == Floats{2.5298221111297607f});
  const Tensor small = Vec<float>({0.1f, 0.2f, 0.7f});
  const Tensor three = Vec<int32_t>({0, 1, 2}), zeros = Vec<int32_t>({0, 0, 0});
  auto mean3 = Reduce("Mean", small, three, zeros);
  REQUIRE(mean3.ok());
  CHECK(Values<float>(*mean3) == Floats{0.3333333432674408f});
  auto sqrtn3 = Reduce("SqrtN", small, three, zeros);
  REQUIRE(sqrtn3.ok());
  CHECK(Values<float>(*sqrtn3) == Floats{0.5773502588272095f});
}

TEST_CASE("SparseSegment ops reduce slices of higher-rank data", "[kernels][sparse_segment]") {
  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i) values[i] = static_cast<float>(i);
  auto mean = Reduce("Mean", Filled<float>({3, 2, 2}, values), Vec<int32_t>({2, 0, 1}),
                     Vec<int32_t>({0, 1, 1}));
  REQUIRE(mean.ok());
  CHECK(DimsOf(*mean) == Dims{2, 2, 2});
  CHECK(Values<float>(*mean) == Floats{8, 9, 10, 11, 2, 3, 4, 5});
}

TEST_CASE("SparseSegment ops sum half and bfloat16 in float", "[kernels][sparse_segment]") {
  const Tensor three = Vec<int32_t>({0, 1, 2}), zeros = Vec<int32_t>({0, 0, 0});
  // Half steps would give 2048 (2049 rounds to even); TF rounds 2050 once.
  auto half_sum = Reduce("Sum", VecOf<Half>({2048, 1, 1}), three, zeros);
  REQUIRE(half_sum.ok());
  CHECK(AsFloats<Half>(*half_sum) == Floats{2050});
  auto half_mean = Reduce("Mean", VecOf<Half>({2048, 1, 1}), three, zeros);
  REQUIRE(half_mean.ok());
  CHECK(AsFloats<Half>(*half_mean) == Floats{683.5});
  auto half_sqrtn = Reduce("SqrtN", VecOf<Half>({0.1f, 0.2f, 0.7f}), three, zeros);
  REQUIRE(half_sqrtn.ok());
  CHECK(AsFloats<Half>(*half_sqrtn) == Floats{0.57763671875});
  auto bf16_mean = Reduce("Mean", VecOf<Bfloat16>({0.1f, 0.2f, 0.7f}), three, zeros);
  REQUIRE(bf16_mean.ok());
  CHECK(AsFloats<Bfloat16>(*bf16_mean) == Floats{0.333984375});
  auto bf16_sum = Reduce("Sum", VecOf<Bfloat16>({2048, 1, 1}), three, zeros);
  REQUIRE(bf16_sum.ok());
  CHECK(AsFloats<Bfloat16>(*bf16_sum) == Floats{2048});
}

TEST_CASE("SparseSegmentSum of integers wraps", "[kernels][sparse_segment]") {
  auto sum =
      Reduce("Sum", Vec<int8_t>({100, 100, 5}), Vec<int32_t>({0, 1, 2}), Vec<int32_t>({0, 0, 1}));
  REQUIRE(sum.ok());
  CHECK(Values<int8_t>(*sum) == std::vector<int8_t>{-56, 5});
}

TEST_CASE("SparseSegment ops reject bad inputs with TF's messages", "[kernels][sparse_segment]") {
  const Tensor three = Vec<int32_t>({0, 1, 2});
  for (const char* name : {"Sum", "Mean", "SqrtN"}) {
    INFO(name);
    CHECK_THAT(ErrorOf(Reduce(name, Data(), three, Vec<int32_t>({1, 0, 1}))),
               Contains("segment ids are not increasing"));
    CHECK_THAT(ErrorOf(Reduce(name, Data(), three, Vec<int32_t>({-1, 0, 1}))),
               Contains("Segment id -1 out of range [0, 2), possibly because 'segment_ids' "
                        "input is not sorted."));
    CHECK_THAT(ErrorOf(Reduce(name, Data(), three, Vec<int32_t>({0, 0, -1}))),
               Contains("segment ids must be >= 0"));
    CHECK_THAT(ErrorOf(Reduce(name, Data(), Vec<int32_t>({0, 4, 2}), Vec<int32_t>({0, 0, 1}))),
               Contains("Bad: indices[1] == 4 out of range [0, 4)"));
    // The decrease after segment 1 is found before segment 1's bad index.
    CHECK_THAT(ErrorOf(Reduce(name, Data(), Vec<int32_t>({9, 1, 2}), Vec<int32_t>({1, 0, 1}))),
               Contains("segment ids are not increasing"));
    CHECK_THAT(ErrorOf(Reduce(name, Data(), three, Vec<int32_t>({0, 0}))),
               Contains("segment_ids and indices should have same size."));
    CHECK_THAT(ErrorOf(Reduce(name, Data(), Filled<int32_t>({1, 2}, {0, 1}), Vec<int32_t>({0, 0}))),
               Contains("indices should be a vector."));
    CHECK_THAT(ErrorOf(Reduce(name, Filled<float>({}, {1}), Vec<int32_t>({0}), Vec<int32_t>({0}))),
               Contains("Shape must be at least rank 1"));
    CHECK_THAT(ErrorOf(ReduceN(name, Data(), three, Vec<int32_t>({0, 0, 3}), Int32(3))),
               Contains("segment ids must be < num_segments"));
    CHECK_THAT(ErrorOf(ReduceN(name, Data(), three, Vec<int32_t>({0, 0, 1}), Int32(-1))),
               Contains("segment ids must be >= 0"));
    CHECK_THAT(ErrorOf(ReduceN(name, Data(), three, Vec<int32_t>({0, 0, 1}), Vec<int32_t>({3}))),
               Contains("num_segments should be a scalar, not shape [1]"));
    CHECK_THAT(ErrorOf(Reduce(name, Data(), three, Vec<int64_t>({0, 0, 2147483647}))),
               Contains("Last segment id must be < kintmax, got 2147483647 limit 2147483647"));
  }
}

TEST_CASE("SparseSegment Grad scatters scaled gradient rows densely", "[kernels][sparse_segment]") {
  const Tensor indices = Vec<int32_t>(kIndices);
  const Tensor ids = Vec<int32_t>(kIds);
  const std::vector<std::pair<std::string, Floats>> cases = {
      {"Sum", {1, 2, 2, 4, 5, 6, 5, 6, 0, 0}},
      {"Mean",
       {0.3333333432674408f, 0.6666666865348816f, 0.6666666865348816f, 1.3333333730697632f, 2.5, 3,
        2.5, 3, 0, 0}},
      {"SqrtN",
       {0.5773502588272095f, 1.154700517654419f, 1.154700517654419f, 2.309401035308838f,
        3.535533905029297f, 4.242640495300293f, 3.535533905029297f, 4.242640495300293f, 0, 0}}};
  for (const auto& [name, want] : cases) {
    INFO(name);
    auto out = Grad(name, GradIn(), indices, ids, Int32(5));
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{5, 2});
    CHECK(Values<float>(*out) == want);
    // No indices: all 0 (TF 2.21 leaves this output uninitialised).
    auto none = Grad(name, GradIn(), Vec<int32_t>({}), Vec<int32_t>({}), Int32(3));
    REQUIRE(none.ok());
    CHECK(Values<float>(*none) == Floats(6, 0));
  }
}

TEST_CASE("SparseSegment GradV2 returns the rows of the sorted unique indices",
          "[kernels][sparse_segment]") {
  const Tensor indices = Vec<int32_t>({3, 1, 0, 1, 2});
  const Tensor ids = Vec<int32_t>(kIds);
  const std::vector<std::pair<std::string, Floats>> cases = {
      {"Sum", {1, 2, 6, 8, 5, 6, 1, 2}},
      {"Mean",
       {0.3333333432674408f, 0.6666666865348816f, 2.8333332538604736f, 3.6666667461395264f, 2.5, 3,
        0.3333333432674408f, 0.6666666865348816f}},
      {"SqrtN",
       {0.5773502588272095f, 1.154700517654419f, 4.112884044647217f, 5.397340774536133f,
        3.535533905029297f, 4.242640495300293f, 0.5773502588272095f, 1.154700517654419f}}};
  for (const auto& [name, want] : cases) {
    INFO(name);
    auto out = GradV2(name, GradIn(), indices, ids, Int32(5));
    REQUIRE(out.ok());
    REQUIRE(out->size() == 2);
    CHECK(DimsOf((*out)[0]) == Dims{4, 2});
    CHECK(Values<float>((*out)[0]) == want);
    CHECK(Values<int32_t>((*out)[1]) == std::vector<int32_t>{0, 1, 2, 3});
    auto none = GradV2(name, GradIn(), Vec<int32_t>({}), Vec<int32_t>({}), Int32(3));
    REQUIRE(none.ok());
    CHECK(DimsOf((*none)[0]) == Dims{0, 2});
    CHECK(DimsOf((*none)[1]) == Dims{0});
  }
  // int64 indices: the unique indices come back as int64.
  auto mean = GradV2("Mean", Filled<float>({2, 2}, {1, 2, 3, 4}), Vec<int64_t>({3, 1, 3}),
                     Vec<int64_t>({0, 1, 1}), Int32(4));
  REQUIRE(mean.ok());
  CHECK(Values<float>((*mean)[0]) == Floats{1.5, 2, 2.5, 4});
  CHECK(Values<int64_t>((*mean)[1]) == std::vector<int64_t>{1, 3});
}

TEST_CASE("SparseSegment gradients add a row's contributions in input order",
          "[kernels][sparse_segment]") {
  // Index 0 gets grad rows 0, 1, 2 = 1, 1e8, -1e8 (times their scales) in that order.
  const Tensor grad = Vec<float>({1, 1e8f, -1e8f});
  const Tensor indices = Vec<int32_t>({0, 1, 0, 1, 0});
  const Tensor ids = Vec<int32_t>({0, 0, 1, 1, 2});
  const std::vector<std::pair<std::string, Floats>> cases = {
      {"Sum", {0, 1e8f}}, {"Mean", {-5e7f, 5e7f}}, {"SqrtN", {-29289320.0f, 70710680.0f}}};
  for (const auto& [name, want] : cases) {
    INFO(name);
    auto out = GradV2(name, grad, indices, ids, Int32(2));
    REQUIRE(out.ok());
    CHECK(Values<float>((*out)[0]) == want);
  }
  // Half: summed in float, rounded once (2048 + 1 + 0.7 s -> 2050).
  const Tensor half = VecOf<Half>({2048, 1, 0.7f});
  const Tensor half_indices = Vec<int32_t>({0, 0, 0, 1}), half_ids = Vec<int32_t>({0, 1, 2, 2});
  const std::vector<std::pair<std::string, Floats>> half_cases = {{"Sum", {2050, 0.7001953125f}},
                                                                  {"Mean", {2050, 0.35009765625f}},
                                                                  {"SqrtN", {2050, 0.4951171875f}}};
  for (const auto& [name, want] : half_cases) {
    INFO(name);
    auto out = Grad(name, half, half_indices, half_ids, Int32(2));
    REQUIRE(out.ok());
    CHECK(AsFloats<Half>(*out) == want);
  }
  auto bf16 = Grad("Mean", VecOf<Bfloat16>({2048, 1, 0.7f}), half_indices, half_ids, Int32(2));
  REQUIRE(bf16.ok());
  CHECK(AsFloats<Bfloat16>(*bf16) == Floats{2048, 0.349609375f});
}

TEST_CASE("SparseSegment gradients reject bad inputs with TF's messages",
          "[kernels][sparse_segment]") {
  const Tensor three = Vec<int32_t>({0, 1, 2});
  for (const char* name : {"Sum", "Mean"}) {
    INFO(name);
    CHECK_THAT(
        ErrorOf(Grad(name, GradIn(), Vec<int32_t>({0, 7, 1}), Vec<int32_t>({0, 0, 1}), Int32(4))),
        Contains("Index 7 out of range [0, 4)."));
    CHECK_THAT(
        ErrorOf(GradV2(name, GradIn(), Vec<int32_t>({0, 7, 1}), Vec<int32_t>({0, 0, 1}), Int32(4))),
        Contains("Index 7 out of range [0, 4)."));
    CHECK_THAT(ErrorOf(Grad(name, GradIn(), three, Vec<int32_t>({0, 0, 3}), Int32(4))),
               Contains("Invalid number of segments"));
    CHECK_THAT(ErrorOf(GradV2(name, GradIn(), three, Vec<int32_t>({0, 0, 3}), Int32(4))),
               Contains("Invalid number of segments"));
    CHECK_THAT(
        ErrorOf(GradV2(name, GradIn(), Vec<int32_t>({0}), Vec<int32_t>({0}), Vec<int32_t>({4}))),
        Contains("dense_output_dim0 should be a scalar."));
    CHECK_THAT(ErrorOf(Grad(name, GradIn(), Vec<int32_t>({0}), Vec<int32_t>({0}), Int32(-1))),
               Contains("Expected a non-negative size, got -1"));
    CHECK_THAT(
        ErrorOf(Grad(name, Filled<float>({}, {1}), Vec<int32_t>({0}), Vec<int32_t>({0}), Int32(4))),
        Contains("Index must be less than 0, got 0"));
    // GradV2 checks each position's index and id in turn.
    CHECK_THAT(ErrorOf(GradV2(name, GradIn(), Vec<int32_t>({0, 9, 2}), Vec<int32_t>({0, -1, 1}),
                              Int32(4))),
               Contains("Index 9 out of range [0, 4)."));
  }
  // Grad of Mean (and SqrtN) counts the segments, checking every id, before the indices.
  CHECK_THAT(
      ErrorOf(Grad("Mean", GradIn(), Vec<int32_t>({0, 9, 2}), Vec<int32_t>({0, -1, 1}), Int32(4))),
      Contains("Segment id -1 out of range [0, 3)."));
  CHECK_THAT(
      ErrorOf(Grad("Sum", GradIn(), Vec<int32_t>({0, 9, 2}), Vec<int32_t>({0, -1, 1}), Int32(4))),
      Contains("Index 9 out of range [0, 4)."));
}

}  // namespace
}  // namespace dflow
