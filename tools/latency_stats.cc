#include "tools/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dflow {

double NearestRankPercentile(const std::vector<double>& sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  const long rank = std::lround(std::ceil(p / 100.0 * n));
  const size_t index = static_cast<size_t>(std::clamp<long>(rank, 1, sorted.size()) - 1);
  return sorted[index];
}

LatencyStats SummarizeLatencies(std::vector<double> samples) {
  LatencyStats stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  stats.count = static_cast<int>(n);
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  stats.p90 = NearestRankPercentile(samples, 90);
  stats.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  return stats;
}

}  // namespace dflow
