// Candidate samplers and ComputeAccidentalHits (kernels/cpu/candidate_sampler_ops.cc)
// against TF 2.21's graph-mode results for the same seeds: the sampled values, the
// expected counts (with and without unique sampling), and TF's texts for bad true
// classes. (The stream continuing across runs, as TF's, is checked by the training zoo's
// word2vec_gd: tests/session/training_zoo_test.)
#include <catch2/catch.hpp>
#include <cfloat>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::Filled;
using testing::OpTester;
using testing::Values;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterCandidateSamplerKernels);
}

Tensor TrueClasses() { return Filled<int64_t>({2, 2}, {1, 2, 5, 29}); }

OpTester Sampler(const char* op, int64_t num_sampled, bool unique, int64_t range_max,
                 int64_t seed, int64_t seed2) {
  OpTester t(op, Registry());
  t.Attr("num_true", 2).Attr("num_sampled", num_sampled).Attr("unique", unique);
  if (range_max > 0) t.Attr("range_max", range_max);
  t.Attr("seed", seed).Attr("seed2", seed2).Input(TrueClasses());
  return t;
}

void CheckFloats(const Tensor& got, const std::vector<double>& want) {
  const std::vector<float> values = Values<float>(got);
  REQUIRE(values.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(values[i] == Approx(want[i]).epsilon(1e-6));
  }
}

TEST_CASE("LogUniformCandidateSampler draws TF's values and expected counts",
          "[kernels][random]") {
  OpTester t = Sampler("LogUniformCandidateSampler", 12, false, 30, 7, 3);
  absl::StatusOr<std::vector<Tensor>> out = t.Run();
  REQUIRE(out.ok());
  CHECK(Values<int64_t>((*out)[0]) ==
        std::vector<int64_t>{1, 4, 26, 0, 2, 12, 8, 17, 24, 9, 0, 13});
  CheckFloats((*out)[1], {1.4168897867202759, 1.0052993297576904, 0.5386765003204346,
                          0.11458338797092438});
  CheckFloats((*out)[2], {1.4168897867202759, 0.6371190547943115, 0.12708601355552673,
                          2.4221889972686768, 1.0052993297576904, 0.2589688301086426,
                          0.3681802451610565, 0.18893682956695557, 0.13705599308013916,
                          0.33305951952934265, 2.4221889972686768, 0.24109423160552979});
  // Unique: the repeated 0 is drawn again; the counts become 1 - (1 - p)^tries.
  out = Sampler("LogUniformCandidateSampler", 12, true, 30, 7, 3).Run();
  REQUIRE(out.ok());
  CHECK(Values<int64_t>((*out)[0]) ==
        std::vector<int64_t>{1, 4, 26, 0, 2, 12, 8, 17, 24, 9, 13, 16});
  CheckFloats((*out)[1], {0.8047383427619934, 0.6793522834777832, 0.4495779275894165,
                          0.11726342886686325});
  CheckFloats((*out)[2], {0.8047383427619934, 0.5079675912857056, 0.12925902009010315,
                          0.9466536045074463, 0.6793522834777832, 0.24694806337356567,
                          0.33309584856033325, 0.18641918897628784, 0.1387166678905487,
                          0.3064391613006592, 0.23190729320049286, 0.1960393488407135});
}

TEST_CASE("Uniform and All samplers, and accidental hits", "[kernels][random]") {
  absl::StatusOr<std::vector<Tensor>> out =
      Sampler("UniformCandidateSampler", 4, true, 30, 1, 2).Run();
  REQUIRE(out.ok());
  CHECK(Values<int64_t>((*out)[0]) == std::vector<int64_t>{19, 26, 27, 11});
  CheckFloats((*out)[2], std::vector<double>(4, 0.13333334028720856));
  OpTester all("AllCandidateSampler", Registry());
  all.Attr("num_true", 1).Attr("num_sampled", 5).Attr("unique", true).Attr("seed", 1);
  all.Attr("seed2", 2).Input(Filled<int64_t>({2, 1}, {1, 3}));
  out = all.Run();
  REQUIRE(out.ok());
  CHECK(Values<int64_t>((*out)[0]) == std::vector<int64_t>{0, 1, 2, 3, 4});
  CheckFloats((*out)[1], {1, 1});
  OpTester hits("ComputeAccidentalHits", Registry());
  hits.Attr("num_true", 2).Attr("seed", 0).Attr("seed2", 0).Input(TrueClasses());
  hits.Input(Filled<int64_t>({4}, {2, 7, 29, 2}));
  out = hits.Run();
  REQUIRE(out.ok());
  CHECK(Values<int32_t>((*out)[0]) == std::vector<int32_t>{0, 1});
  CHECK(Values<int64_t>((*out)[1]) == std::vector<int64_t>{3, 2});  // the last position of 2
  CHECK(Values<float>((*out)[2]) == std::vector<float>{-FLT_MAX, -FLT_MAX});
}

TEST_CASE("Candidate samplers refuse bad true classes with TF's texts", "[kernels][random]") {
  auto error = [](OpTester t) {
    absl::StatusOr<std::vector<Tensor>> out = t.Run();
    REQUIRE_FALSE(out.ok());
    return std::string(out.status().message());
  };
  CHECK_THAT(error(Sampler("UniformCandidateSampler", 4, true, 10, 1, 2)),
             Catch::EndsWith("`true_candidate` out of range [0, 10), received 29"));
  CHECK_THAT(error(Sampler("UniformCandidateSampler", 40, true, 30, 1, 2)),
             Catch::EndsWith("Sampler's range is too small."));
  OpTester columns("UniformCandidateSampler", Registry());
  columns.Attr("num_true", 3).Attr("num_sampled", 2).Attr("unique", true).Attr("range_max", 30);
  columns.Attr("seed", 1).Attr("seed2", 2).Input(TrueClasses());
  CHECK_THAT(error(columns),
             Catch::EndsWith("true_classes must have num_true columns, expected: 2 was: 3"));
}

}  // namespace
}  // namespace dflow
