// GatherNd. Expected values and messages from TF 2.21 (tf.raw_ops.GatherNd on CPU).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using testing::DimsOf;
using testing::Filled;
using testing::Iota;
using testing::OpTester;
using testing::TestCpuDevice;
using testing::Values;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterGatherNdKernels); }

absl::StatusOr<Tensor> GatherNd(const Tensor& params, const Tensor& indices,
                                const char* policy = "") {
  return OpTester("GatherNd", Registry())
      .Attr("Tparams", params.dtype())
      .Attr("Tindices", indices.dtype())
      .Attr("bad_indices_policy", policy)
      .Input(params)
      .Input(indices)
      .RunOne();
}

std::string ErrorOf(const absl::StatusOr<Tensor>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

// A tensor of `dtype` whose elements are the raw values (half, complex: bytes only).
template <typename Raw>
Tensor RawTensor(DataType dtype, std::vector<int64_t> dims, const std::vector<Raw>& raw) {
  Tensor t = *Tensor::Allocate(TestCpuDevice()->allocator(), dtype,
                               TensorShape(absl::MakeConstSpan(dims)));
  std::copy(raw.begin(), raw.end(), static_cast<Raw*>(t.raw_data()));
  return t;
}

TEST_CASE("GatherNd gathers elements, rows and whole slices", "[kernels][gather_nd]") {
  const Tensor p = Iota<float>({2, 3, 4});
  SECTION("depth 2 of 3: rows") {
    auto out = GatherNd(p, Filled<int32_t>({2, 2}, {0, 1, 1, 2}));
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2, 4});
    CHECK(Values<float>(*out) == std::vector<float>{4, 5, 6, 7, 20, 21, 22, 23});
  }
  SECTION("full depth: elements") {
    auto out = GatherNd(p, Filled<int64_t>({2, 3}, {0, 1, 2, 1, 2, 3}));
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2});
    CHECK(Values<float>(*out) == std::vector<float>{6, 23});
  }
  SECTION("depth 1 with a batch of batches") {
    auto out = GatherNd(p, Filled<int32_t>({1, 2, 1}, {1, 0}));
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{1, 2, 3, 4});
    const std::vector<float> v = Values<float>(*out);
    CHECK(v[0] == 12);
    CHECK(v[11] == 23);
    CHECK(v[12] == 0);
    CHECK(v[23] == 11);
  }
  SECTION("depth 0: each row is all of params") {
    auto out = GatherNd(p, Filled<int32_t>({2, 0}, {}));
    REQUIRE(out.ok());
    CHECK(DimsOf(*out) == Dims{2, 2, 3, 4});
    CHECK(Values<float>(*out)[24] == 0);
    CHECK(Values<float>(*out)[47] == 23);
    auto whole = GatherNd(Iota<float>({2, 3}), Filled<int32_t>({0}, {}));
    REQUIRE(whole.ok());
    CHECK(DimsOf(*whole) == Dims{2, 3});
    CHECK(Values<float>(*whole) == std::vector<float>{0, 1, 2, 3, 4, 5});
  }
}

TEST_CASE("GatherNd moves every dtype family and int16 indices", "[kernels][gather_nd]") {
  auto i8 = GatherNd(Iota<int8_t>({3, 4}), Filled<int16_t>({3, 2}, {2, 3, 0, 1, 2, 0}));
  REQUIRE(i8.ok());
  CHECK(Values<int8_t>(*i8) == std::vector<int8_t>{11, 1, 8});
  auto u16 = GatherNd(Iota<uint16_t>({3, 4}), Filled<int16_t>({2, 2, 1}, {2, 0, 1, 1}));
  REQUIRE(u16.ok());
  CHECK(DimsOf(*u16) == Dims{2, 2, 4});
  CHECK(Values<uint16_t>(*u16) ==
        std::vector<uint16_t>{8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7});
  auto b = GatherNd(Filled<bool>({2}, {true, false}), Filled<int64_t>({3, 1}, {1, 0, 1}));
  REQUIRE(b.ok());
  CHECK(Values<bool>(*b) == std::vector<bool>{false, true, false});
  // half [[1, 2], [3, 4]] as bits; TF: [4, 2].
  auto half = GatherNd(RawTensor<uint16_t>(DT_HALF, {2, 2}, {0x3C00, 0x4000, 0x4200, 0x4400}),
                       Filled<int32_t>({2, 2}, {1, 1, 0, 1}));
  REQUIRE(half.ok());
  CHECK(half->dtype() == DT_HALF);
  CHECK(half->data<uint16_t>()[0] == 0x4400);
  CHECK(half->data<uint16_t>()[1] == 0x4000);
  // complex64 [[1+2j, 3j]]; TF: [3j, 1+2j].
  auto c = GatherNd(RawTensor<float>(DT_COMPLEX64, {1, 2}, {1, 2, 0, 3}),
                    Filled<int32_t>({2, 2}, {0, 1, 0, 0}));
  REQUIRE(c.ok());
  const float* cv = c->data<float>();
  CHECK(std::vector<float>(cv, cv + 4) == std::vector<float>{0, 3, 1, 2});
}

TEST_CASE("GatherNd with IGNORE zero-fills rows outside params", "[kernels][gather_nd]") {
  auto out = GatherNd(Iota<float>({2, 3, 4}), Filled<int32_t>({2, 2}, {3, 0, 1, 1}), "IGNORE");
  REQUIRE(out.ok());
  CHECK(Values<float>(*out) == std::vector<float>{0, 0, 0, 0, 16, 17, 18, 19});
  auto negative = GatherNd(Iota<float>({2, 3, 4}), Filled<int32_t>({2, 2}, {0, 1, -1, 0}), "IGNORE");
  REQUIRE(negative.ok());
  CHECK(Values<float>(*negative) == std::vector<float>{4, 5, 6, 7, 0, 0, 0, 0});
  auto strings = GatherNd(Filled<std::string>({2, 2}, {"a", "b", "c", "d"}),
                          Filled<int32_t>({3, 2}, {1, 0, 0, 1, 3, 0}), "IGNORE");
  REQUIRE(strings.ok());
  CHECK(Values<std::string>(*strings) == std::vector<std::string>{"c", "b", ""});
  auto bools = GatherNd(Filled<bool>({2}, {true, false}), Filled<int64_t>({3, 1}, {1, 0, 3}),
                        "IGNORE");
  REQUIRE(bools.ok());
  CHECK(Values<bool>(*bools) == std::vector<bool>{false, true, false});
}

TEST_CASE("GatherNd reports the last bad row under every other policy", "[kernels][gather_nd]") {
  const Tensor p = Iota<float>({2, 3, 4});
  const Tensor two_bad = Filled<int32_t>({3, 2}, {0, 1, 1, 5, -1, 0});
  for (const char* policy : {"", "DEFAULT", "ERROR"}) {
    INFO("policy " << policy);
    CHECK_THAT(ErrorOf(GatherNd(p, two_bad, policy)),
               Equals("GatherNd: indices[2] = [-1, 0] does not index into param shape "
                      "[2,3,4], node name: test_node"));
  }
  CHECK_THAT(ErrorOf(GatherNd(p, Filled<int32_t>({3, 2}, {0, 5, 1, 5, 1, 0}))),
             Contains("indices[1] = [1, 5] does not index into param shape [2,3,4]"));
  CHECK_THAT(ErrorOf(GatherNd(p, Filled<int32_t>({2, 2, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}))),
             Contains("indices[1,1] = [0, 0, 7] does not index into param shape [2,3,4]"));
  CHECK_THAT(ErrorOf(GatherNd(Iota<float>({3}), Filled<int32_t>({1}, {5}))),
             Contains("indices = [5] does not index into param shape [3]"));
}

TEST_CASE("GatherNd rejects bad arguments with TF's messages", "[kernels][gather_nd]") {
  const Tensor p = Iota<float>({2, 3, 4});
  CHECK_THAT(ErrorOf(GatherNd(Filled<float>({}, {3}), Filled<int32_t>({2, 0}, {}))),
             Contains("params must be at least a vector"));
  CHECK_THAT(ErrorOf(GatherNd(p, Filled<int32_t>({}, {1}))),
             Contains("indices must be at least a vector"));
  CHECK_THAT(ErrorOf(GatherNd(p, Filled<int32_t>({1, 4}, {0, 1, 0, 0}))),
             Contains("index innermost dimension length must be <= params rank; saw: 4 vs. 3"));
  CHECK_THAT(ErrorOf(GatherNd(Filled<float>({0, 3}, {}), Filled<int32_t>({2, 1}, {0, 0}))),
             Contains("Requested more than 0 entries, but params is empty.  Params shape: [0,3]"));
  CHECK_THAT(ErrorOf(GatherNd(Filled<float>({0, 3}, {}), Filled<int32_t>({2, 1}, {0, 0}),
                              "IGNORE")),
             Contains("Requested more than 0 entries, but params is empty."));
  CHECK_THAT(ErrorOf(GatherNd(Filled<float>({3, 0}, {}), Filled<int32_t>({2, 1}, {0, 0}))),
             Contains("Params shape: [3,0]"));
  CHECK_THAT(ErrorOf(GatherNd(Filled<float>({1, 1, 1, 1, 1, 1, 1, 1}, {0}),
                              Filled<int32_t>({1, 8}, std::vector<int32_t>(8, 0)))),
             Contains("Only indices.shape[-1] values between 1 and 7 are currently supported.  "
                      "Requested rank: 8"));
  CHECK_THAT(ErrorOf(GatherNd(Filled<float>({40000}, {}), Filled<int16_t>({1, 1}, {1}))),
             Contains("params.NumElements() too large for int16 indexing: 40000 > 32767"));
  auto unknown = GatherNd(p, Filled<int32_t>({1, 1}, {0}), "FOO");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(std::string(unknown.status().message()),
             Contains("Unknown bad indices handling attribute: FOO"));
}

TEST_CASE("GatherNd with no rows gives an empty output", "[kernels][gather_nd]") {
  auto out = GatherNd(Iota<float>({2, 3, 4}), Filled<int32_t>({0, 2}, {}));
  REQUIRE(out.ok());
  CHECK(DimsOf(*out) == Dims{0, 4});
  auto empty_params = GatherNd(Filled<float>({0, 3}, {}), Filled<int32_t>({0, 1}, {}));
  REQUIRE(empty_params.ok());
  CHECK(DimsOf(*empty_params) == Dims{0, 3});
  auto inner_empty = GatherNd(Filled<float>({2, 3}, {}), Filled<int32_t>({2, 0, 1}, {}));
  REQUIRE(inner_empty.ok());
  CHECK(DimsOf(*inner_empty) == Dims{2, 0, 3});
}

}  // namespace
}  // namespace dflow
