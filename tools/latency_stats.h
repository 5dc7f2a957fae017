// Latency statistics of repeated runs, for `dflow bench`: min, median, p90, max, mean,
// as TF's benchmark_model and ONNX Runtime's perf_test report them.
//
// Percentiles are nearest-rank (the p-th percentile of n sorted samples is sample
// ceil(p/100 * n), 1-based), so every figure is a time that was measured; the median of
// an even count is the mean of the two middle samples.
#ifndef DFLOW_TOOLS_LATENCY_STATS_H_
#define DFLOW_TOOLS_LATENCY_STATS_H_

#include <vector>

namespace dflow {

struct LatencyStats {
  int count = 0;
  double min = 0, median = 0, p90 = 0, max = 0, mean = 0;  // in the samples' unit
};

// The statistics of `samples` (any order). All zero when `samples` is empty.
LatencyStats SummarizeLatencies(std::vector<double> samples);

// Nearest-rank percentile `p` (0 < p <= 100) of sorted, non-empty `sorted`.
double NearestRankPercentile(const std::vector<double>& sorted, double p);

}  // namespace dflow

#endif  // DFLOW_TOOLS_LATENCY_STATS_H_
