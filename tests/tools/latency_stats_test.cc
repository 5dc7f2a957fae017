#include "tools/latency_stats.h"

#include <catch2/catch.hpp>

namespace dflow {
namespace {

TEST_CASE("SummarizeLatencies gives nearest-rank percentiles of the samples", "[tools]") {
  // 10 samples out of order: p90 is the 9th smallest (ceil(0.9 * 10) = 9).
  const LatencyStats stats = SummarizeLatencies({5, 1, 9, 3, 7, 2, 10, 4, 8, 6});
  CHECK(stats.count == 10);
  CHECK(stats.min == 1);
  CHECK(stats.max == 10);
  CHECK(stats.median == 5.5);  // even count: mean of the middle two
  CHECK(stats.p90 == 9);
  CHECK(stats.mean == 5.5);
}

TEST_CASE("SummarizeLatencies of one sample and of none", "[tools]") {
  const LatencyStats one = SummarizeLatencies({2.5});
  CHECK(one.min == 2.5);
  CHECK(one.median == 2.5);
  CHECK(one.p90 == 2.5);
  CHECK(one.max == 2.5);
  const LatencyStats none = SummarizeLatencies({});
  CHECK(none.count == 0);
  CHECK(none.median == 0);
}

TEST_CASE("NearestRankPercentile picks a measured sample", "[tools]") {
  const std::vector<double> sorted = {1, 2, 3};
  CHECK(NearestRankPercentile(sorted, 90) == 3);   // ceil(2.7) = 3
  CHECK(NearestRankPercentile(sorted, 50) == 2);   // ceil(1.5) = 2
  CHECK(NearestRankPercentile(sorted, 10) == 1);   // ceil(0.3) = 1
  CHECK(NearestRankPercentile(sorted, 100) == 3);
}

}  // namespace
}  // namespace dflow
