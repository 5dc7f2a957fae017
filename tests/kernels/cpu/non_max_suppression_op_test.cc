// NonMaxSuppressionV3/V4/V5. Expected values from TF 2.21 (tf.raw_ops): greedy order,
// ties to the lower index, flipped corners, padding, soft-NMS scores, and TF's errors.
#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using Catch::Matchers::Contains;
using testing::CheckNear;
using testing::Filled;
using testing::OpTester;
using testing::Values;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterNonMaxSuppressionKernels);
}

// Two overlapping clusters and a loner; box 4 has its y corners flipped.
Tensor Boxes() {
  return Filled<float>({6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11,
                                1, 10.1f, 0, 11.1f, 0, 100, 1, 101});
}
Tensor Scores() { return Filled<float>({6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}); }

template <typename T>
Tensor Scalar(T value) {
  return Filled<T>({}, {value});
}

struct NmsArgs {
  Tensor boxes = Boxes(), scores = Scores();
  Tensor max_output = Scalar<int32_t>(6);
  float iou = 0.5f, score = 0.0f, sigma = 0.0f;
  bool pad = false;
};

absl::StatusOr<std::vector<Tensor>> Nms(int version, const NmsArgs& a) {
  OpTester t("NonMaxSuppressionV" + std::to_string(version), Registry());
  t.Attr("T", DT_FLOAT);
  if (version < 5) t.Attr("T_threshold", DT_FLOAT);
  if (version > 3) t.Attr("pad_to_max_output_size", a.pad);
  t.Input(a.boxes).Input(a.scores).Input(a.max_output).Input(Scalar(a.iou)).Input(Scalar(a.score));
  if (version == 5) t.Input(Scalar(a.sigma));
  return t.Run();
}

std::vector<int32_t> Indices(int version, const NmsArgs& a) {
  auto out = Nms(version, a);
  REQUIRE(out.ok());
  return Values<int32_t>((*out)[0]);
}

std::string ErrorOf(int version, const NmsArgs& a) {
  auto out = Nms(version, a);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(out.status().message());
}

TEST_CASE("NonMaxSuppressionV3 selects greedily by score", "[kernels][nms]") {
  NmsArgs a;
  a.max_output = Scalar<int32_t>(3);
  CHECK(Indices(3, a) == std::vector<int32_t>{3, 0, 5});
  a.max_output = Scalar<int32_t>(10);
  a.score = 0.4f;  // box 5 (0.3) never enters the queue
  CHECK(Indices(3, a) == std::vector<int32_t>{3, 0});
  a.score = -std::numeric_limits<float>::infinity();
  a.iou = 0.0f;  // any overlap suppresses
  CHECK(Indices(3, a) == std::vector<int32_t>{3, 0, 5});
}

TEST_CASE("NonMaxSuppressionV3 breaks score ties by lower index", "[kernels][nms]") {
  NmsArgs a;
  a.boxes = Filled<float>({4, 4}, {0, 0, 1, 1, 0, 2, 1, 3, 0, 4, 1, 5, 0, 0, 1, 1});
  a.scores = Filled<float>({4}, {0.5f, 0.5f, 0.5f, 0.5f});
  a.max_output = Scalar<int32_t>(4);
  CHECK(Indices(3, a) == std::vector<int32_t>{0, 1, 2});
}

TEST_CASE("NonMaxSuppressionV3 never suppresses zero-area boxes", "[kernels][nms]") {
  NmsArgs a;
  a.boxes = Filled<float>({2, 4}, {0, 0, 0, 0, 0, 0, 0, 0});
  a.scores = Filled<float>({2}, {0.5f, 0.4f});
  CHECK(Indices(3, a) == std::vector<int32_t>{0, 1});
}

TEST_CASE("NonMaxSuppressionV3 on no boxes gives an empty selection", "[kernels][nms]") {
  NmsArgs a;
  a.boxes = Filled<float>({0, 4}, {});
  a.scores = Filled<float>({0}, {});
  CHECK(Indices(3, a).empty());
  a.pad = true;
  a.max_output = Scalar<int32_t>(3);
  auto out = Nms(4, a);
  REQUIRE(out.ok());
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{0, 0, 0});
  CHECK((*out)[1].scalar<int32_t>() == 0);
}

TEST_CASE("NonMaxSuppressionV4 pads and counts valid outputs", "[kernels][nms]") {
  NmsArgs a;
  a.score = 0.4f;
  a.pad = true;
  auto out = Nms(4, a);
  REQUIRE(out.ok());
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{3, 0, 0, 0, 0, 0});
  CHECK((*out)[1].scalar<int32_t>() == 2);
  a.pad = false;
  out = Nms(4, a);
  REQUIRE(out.ok());
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{3, 0});
  CHECK((*out)[1].scalar<int32_t>() == 2);
}

TEST_CASE("NonMaxSuppressionV5 soft-NMS decays and requeues scores", "[kernels][nms]") {
  NmsArgs a;
  a.iou = 1.0f;
  a.sigma = 0.5f;
  for (bool pad : {false, true}) {
    a.pad = pad;
    auto out = Nms(5, a);
    REQUIRE(out.ok());
    CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{3, 0, 1, 5, 4, 2});
    CheckNear(Values<float>((*out)[1]),
              {0.95f, 0.9f, 0.38400355f, 0.3f, 0.2560026f, 0.19697244f}, 1e-6);
    CHECK((*out)[2].scalar<int32_t>() == 6);
  }
}

TEST_CASE("NonMaxSuppressionV5 without sigma is hard NMS", "[kernels][nms]") {
  NmsArgs a;
  auto out = Nms(5, a);
  REQUIRE(out.ok());
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{3, 0, 5});
  CHECK(Values<float>((*out)[1]) == std::vector<float>{0.95f, 0.9f, 0.3f});
  CHECK((*out)[2].scalar<int32_t>() == 3);
}

TEST_CASE("NonMaxSuppression rejects bad arguments with TF's messages", "[kernels][nms]") {
  NmsArgs a;
  a.iou = 1.5f;
  CHECK_THAT(ErrorOf(3, a), Contains("iou_threshold must be in [0, 1]"));
  a.iou = -0.1f;
  CHECK_THAT(ErrorOf(4, a), Contains("iou_threshold must be in [0, 1]"));
  a = NmsArgs();
  a.max_output = Scalar<int32_t>(-1);
  CHECK_THAT(ErrorOf(3, a), Contains("output size must be non-negative"));
  a.max_output = Filled<int32_t>({1}, {3});
  CHECK_THAT(ErrorOf(3, a), Contains("max_output_size must be 0-D, got shape [1]"));
  a = NmsArgs();
  a.boxes = Filled<float>({6, 3}, {});
  CHECK_THAT(ErrorOf(3, a), Contains("boxes must have 4 columns"));
  a.boxes = Filled<float>({1, 6, 4}, {});
  CHECK_THAT(ErrorOf(3, a), Contains("boxes must be 2-D[1,6,4]"));
  a = NmsArgs();
  a.scores = Filled<float>({5}, {});
  CHECK_THAT(ErrorOf(3, a), Contains("scores has incompatible shape"));
  a.scores = Filled<float>({2, 3}, {});
  CHECK_THAT(ErrorOf(3, a), Contains("scores must be 1-D[2,3]"));
  a = NmsArgs();
  a.sigma = -1.0f;
  CHECK_THAT(ErrorOf(5, a), Contains("soft_nms_sigma_val must be >= 0"));
}

}  // namespace
}  // namespace dflow
