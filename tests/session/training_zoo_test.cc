// The training zoo (tests/data/training, generate.py there): TF 1 training graphs as TF 2.21
// writes them (MLP and CNN x GradientDescent, Momentum, Nesterov, Adam, RMSProp, centered
// RMSProp, Adagrad, Adadelta, FTRL (with l2 shrinkage too); embedding_lookup models whose
// IndexedSlices gradients take the optimizers' sparse paths (SparseApplyAdagrad/Ftrl,
// ResourceSparseApplyMomentum, Adam's ScatterAdd/ResourceScatterAdd); tf.compat.v1.losses;
// ref and resource variables; a dynamic_rnn LSTM; and the held-out kinds of session 22:
// dropout, a transformer, word2vec, wide-and-deep, GPU towers, ...: tests/data/training/
// README.md), each restored from its initial checkpoint and trained 5 steps on the CPU
// and on 2 simulated GPUs; every loss must be TF's within 1e-5 relative. A graph pinned
// to devices runs with allow_soft_placement, as TF ran it.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "graph/proto_io.h"
#include "session/saved_model.h"
#include "tests/testing/scoped_env.h"
#include "tools/npy.h"

namespace dflow {
namespace {

using google::protobuf::Struct;

constexpr char kRoot[] = "tests/data/training/";

struct Placement {
  const char* label;
  std::optional<std::string> simulated_gpus;
};
const Placement kPlacements[] = {{"CPU", std::nullopt}, {"2 simulated GPUs", "2:4096"}};

// Trains model `dir` 5 steps; returns what is wrong (empty when every loss is TF's).
std::string Train(const std::string& dir, const std::string& label) {
  absl::StatusOr<std::string> text = ReadFileToString(dir + "/expected.json");
  if (!text.ok()) return text.status().ToString();
  Struct expected;
  if (auto parsed = google::protobuf::util::JsonStringToMessage(*text, &expected); !parsed.ok()) {
    return parsed.ToString();
  }
  const auto& fields = expected.fields();
  // Graphs pinned to devices (TF 1's GPU towers) were run by TF with soft placement.
  ConfigProto config;
  auto soft = fields.find("allow_soft_placement");
  config.set_allow_soft_placement(soft != fields.end() && soft->second.bool_value());
  absl::StatusOr<SavedModelBundle> bundle =
      LoadMetaGraphWithCheckpoint(dir + "/model.meta", dir + "/init.ckpt", config);
  if (!bundle.ok()) return absl::StrCat("load: ", bundle.status().ToString());
  static CpuAllocator allocator;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [tensor, file] : fields.at("feeds").struct_value().fields()) {
    absl::StatusOr<Tensor> t = ReadNpyFile(dir + "/" + file.string_value(), &allocator);
    if (!t.ok()) return t.status().ToString();
    feeds.emplace_back(tensor, *t);
  }
  const std::string loss = fields.at("loss").string_value();
  const std::string train = fields.at("train").string_value();
  std::string problems;
  double worst = 0;
  const auto& want = fields.at("losses").list_value().values();
  for (int step = 0; step < want.size(); ++step) {
    std::vector<Tensor> out;
    if (absl::Status s = bundle->session->Run(feeds, {loss}, {}, &out); !s.ok()) {
      return absl::StrCat("loss before step ", step + 1, ": ", s.ToString());
    }
    const double got = out[0].scalar<float>();
    const double w = want[step].number_value();
    const double err = std::abs(got - w) / std::max(1.0, std::abs(w));
    worst = std::max(worst, err);
    if (!(err <= 1e-5)) {
      absl::StrAppend(&problems, "loss ", step, ": got ", got, ", want ", w, "\n");
    }
    if (step + 1 == want.size()) break;
    if (absl::Status s = bundle->session->Run(feeds, {}, {train}, &out); !s.ok()) {
      return absl::StrCat("step ", step + 1, ": ", s.ToString());
    }
  }
  std::cout << "training " << label << " " << dir << ": " << (problems.empty() ? "ok" : "MISMATCH")
            << ", max rel err " << worst << "\n";
  return problems;
}

TEST_CASE("Every training-zoo graph trains 5 steps with TensorFlow's losses", "[training]") {
  std::vector<std::string> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot)) {
    if (std::filesystem::exists(entry.path() / "expected.json")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  REQUIRE(dirs.size() >= 22);
  for (const Placement& placement : kPlacements) {
    testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", placement.simulated_gpus);
    for (const std::string& dir : dirs) {
      SECTION(absl::StrCat(placement.label, ": ", dir)) {
        const std::string problems = Train(dir, placement.label);
        INFO(problems);
        CHECK(problems.empty());
      }
    }
  }
}

}  // namespace
}  // namespace dflow
