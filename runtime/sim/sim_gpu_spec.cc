#include "runtime/sim/sim_gpu_spec.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace dflow::sim {
namespace {

absl::Status BadEntry(absl::string_view entry, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(kSimulatedGpuOptionsEnv, ": bad entry '", entry, "': ", why,
                   " (expected chaos_seed=N, peer_access=0|1, fail_copy=N, copy_delay_us=N, compute_threads=N)"));
}

}  // namespace

absl::Status ApplySimGpuSpec(absl::string_view spec, SimGpuOptions* options) {
  for (absl::string_view entry : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    std::vector<absl::string_view> kv = absl::StrSplit(entry, absl::MaxSplits('=', 1));
    if (kv.size() != 2) return BadEntry(entry, "no '='");
    uint64_t value = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(kv[1]), &value)) {
      return BadEntry(entry, "the value is not a non-negative integer");
    }
    const absl::string_view key = absl::StripAsciiWhitespace(kv[0]);
    if (key == "chaos_seed") {
      options->chaos_seed = value;
    } else if (key == "peer_access") {
      if (value > 1) return BadEntry(entry, "peer_access is 0 or 1");
      options->peer_access = value == 1;
    } else if (key == "fail_copy") {
      options->fail_copy_number = static_cast<int64_t>(value);
    } else if (key == "copy_delay_us") {
      options->copy_delay_micros = static_cast<int64_t>(value);
    } else if (key == "compute_threads") {
      if (value > SimGpuOptions::kMaxComputeThreads) {
        return BadEntry(entry, absl::StrCat("compute_threads is at most ",
                                            SimGpuOptions::kMaxComputeThreads));
      }
      options->compute_threads = static_cast<int>(value);
    } else {
      return BadEntry(entry, "unknown key");
    }
  }
  return absl::OkStatus();
}

}  // namespace dflow::sim
