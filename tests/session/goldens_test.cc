// Every golden in tests/data/tf_graphs/goldens (TensorFlow's answers for real
// TensorFlow graphs; see tf_graphs/INDEX.md) and in tests/data/tf2_21/goldens (files
// TensorFlow 2.21 wrote, with its answers; tf2_21/generate.py), on the CPU and on
// simulated GPUs.
//
// Three kinds of golden:
//  - "feeds"/"fetches": run the graph once through `dflow run`'s own path (RunGraph), so
//    what a user types is what is tested; outputs within 1e-4 relative (ints exact).
//  - "input" (MNIST classifiers): all 10,000 test digits in the golden's batch size;
//    accuracy within 3 digits of correct_10k, the first 100 predictions exact, and the
//    first images' outputs within tolerance.
//  - "import_only": a graph whose kernels come with a later issue; it must import with
//    no problem.
// Goldens are enumerated from the directory, so a new golden is tested automatically
// and a golden of an unknown kind fails.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <type_traits>

#include <catch2/catch.hpp>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def_import.h"
#include "graph/proto_io.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"
#include "tests/testing/scoped_env.h"
#include "tools/idx_file.h"
#include "tools/run_command.h"

namespace dflow {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;
using testing::CorpusPath;

// Where the graphs run: the CPU only, or two simulated GPUs (ops with GPU kernels go
// there; the rest fall back to the CPU with copies).
struct Placement {
  const char* name;
  std::optional<std::string> simulated_gpus;
};
const Placement kPlacements[] = {{"CPU", std::nullopt}, {"2 simulated GPUs", "2:4096"}};

Struct ReadGolden(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  REQUIRE(text.ok());
  Struct golden;
  const auto status = google::protobuf::util::JsonStringToMessage(*text, &golden);
  INFO(path << ": " << status.ToString());
  REQUIRE(status.ok());
  return golden;
}

const Value& Field(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  INFO("missing field " << key);
  REQUIRE(it != s.fields().end());
  return it->second;
}

// The numbers of a JSON list; non-finite values are the strings "NaN", "Infinity" and
// "-Infinity" (protobuf's JSON mapping, as `dflow run --output=json` writes them).
std::vector<double> Numbers(const Value& list) {
  std::vector<double> out;
  for (const Value& v : list.list_value().values()) {
    if (v.has_string_value()) {
      const std::string& s = v.string_value();
      INFO("not a number: " << s);
      REQUIRE((s == "NaN" || s == "Infinity" || s == "-Infinity"));
      out.push_back(s == "NaN" ? std::nan("") : s == "Infinity" ? HUGE_VAL : -HUGE_VAL);
    } else if (v.has_bool_value()) {  // bool tensors: JSON true/false
      out.push_back(v.bool_value() ? 1 : 0);
    } else {
      out.push_back(v.number_value());
    }
  }
  return out;
}

std::vector<int64_t> Dims(const Value& list) {
  std::vector<int64_t> out;
  for (double d : Numbers(list)) out.push_back(static_cast<int64_t>(d));
  return out;
}

// The nested JSON list `dflow run --feed` takes for flat row-major `values` of `dims`.
std::string NestedJson(const std::vector<double>& values, const std::vector<int64_t>& dims,
                       size_t dim = 0, size_t* next = nullptr) {
  size_t start = 0;
  if (next == nullptr) next = &start;
  if (dim == dims.size()) return absl::StrCat(values[(*next)++]);
  std::vector<std::string> parts;
  for (int64_t i = 0; i < dims[dim]; ++i) parts.push_back(NestedJson(values, dims, dim + 1, next));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  DispatchNumericOrHalf(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (T v : t.flat<T>()) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>) {
        out.push_back(static_cast<double>(v.ToFloat()));
      } else {
        out.push_back(static_cast<double>(v));
      }
    }
  });
  return out;
}

void CheckClose(const std::vector<double>& got, const std::vector<double>& want, double rel,
                double abs, const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(what << " element " << i << ": got " << got[i] << ", want " << want[i]);
    if (!std::isfinite(want[i])) {
      CHECK((std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i]));
      continue;
    }
    CHECK(std::abs(got[i] - want[i]) <= rel * std::abs(want[i]) + abs);
  }
}

bool IsFloating(DataType t) {
  return t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF || t == DT_BFLOAT16;
}

// ---- "feeds"/"fetches" goldens --------------------------------------------------------

// Relative and absolute (per unit of the tensor's scale) tolerance for fetched floats:
// two units in the last place for the 16-bit floats (TF rounds every elementwise result
// to them), 1e-4 relative for the others.
std::pair<double, double> Tolerance(DataType t) {
  if (t == DT_HALF) return {2e-3, 1e-3};
  if (t == DT_BFLOAT16) return {1.6e-2, 1e-2};
  return {1e-4, 1e-5};
}

// A golden's corpus: its directory, where its "file" is relative to.
struct Corpus {
  std::string root;
  std::string Path(const std::string& relative) const { return root + relative; }
};
const Corpus kCorpora[] = {{"tests/data/tf_graphs/"}, {"tests/data/tf2_21/"}};

void CheckFeedFetchGolden(const Corpus& corpus, const Struct& golden) {
  const std::string file = Field(golden, "file").string_value();
  RunRequest request;
  absl::StatusOr<GraphDef> graph_def = ReadGraphDef(corpus.Path(file));
  REQUIRE(graph_def.ok());
  request.graph_def = *graph_def;
  if (golden.fields().count("config")) {
    REQUIRE(ParseTextProto(Field(golden, "config").string_value(), "config", &request.config)
                .ok());
  }
  request.config.set_allow_soft_placement(true);  // e.g. a pinned CPU:1 with one CPU
  for (const auto& [name, feed] : Field(golden, "feeds").struct_value().fields()) {
    const Struct& f = feed.struct_value();
    request.feeds.push_back(
        {name, NestedJson(Numbers(Field(f, "value")), Dims(Field(f, "shape")))});
  }
  std::vector<const Struct*> wanted;
  for (const auto& [name, fetch] : Field(golden, "fetches").struct_value().fields()) {
    request.fetches.push_back(name);
    wanted.push_back(&fetch.struct_value());
  }
  absl::StatusOr<RunResult> result = RunGraph(request);
  INFO(file << ": " << result.status().ToString());
  REQUIRE(result.ok());
  for (size_t i = 0; i < wanted.size(); ++i) {
    const Tensor& got = result->outputs[i];
    const std::string what = absl::StrCat(file, " fetch ", request.fetches[i]);
    INFO(what);
    CHECK(DataTypeNumpyName(got.dtype()) == Field(*wanted[i], "dtype").string_value());
    const absl::Span<const int64_t> dims = got.shape().dim_sizes();
    CHECK(std::vector<int64_t>(dims.begin(), dims.end()) == Dims(Field(*wanted[i], "shape")));
    const bool exact = !IsFloating(got.dtype());
    const std::vector<double> want = Numbers(Field(*wanted[i], "value"));
    // Sums of products cancel to values near 0 whose float rounding is relative to the
    // tensor's scale, not their own: the absolute bound scales with max(1, max|y|), as
    // the model zoo's criterion (1e-4 max(1, max|y|)).
    double scale = 1;
    for (double w : want) {
      if (std::isfinite(w)) scale = std::max(scale, std::abs(w));
    }
    const auto [rel, abs] = Tolerance(got.dtype());
    CheckClose(AsDoubles(got), want, exact ? 0 : rel, exact ? 0 : abs * scale, what);
  }
}

// ---- MNIST classifier goldens ---------------------------------------------------------

struct Mnist {
  IdxFile images;
  IdxFile labels;
};

const Mnist& MnistTestSet() {
  static CpuAllocator allocator;
  static const Mnist* mnist = [] {
    auto images = ReadIdxFile(CorpusPath("mnist/t10k-images-idx3-ubyte.gz"), &allocator);
    auto labels = ReadIdxFile(CorpusPath("mnist/t10k-labels-idx1-ubyte.gz"), &allocator);
    return (images.ok() && labels.ok()) ? new Mnist{*images, *labels} : nullptr;
  }();
  REQUIRE(mnist != nullptr);
  return *mnist;
}

// Argmax of each row of a [N, classes] float tensor.
std::vector<int> RowArgmax(const Tensor& t) {
  const int64_t classes = t.shape().dim_size(1);
  std::vector<int> out;
  const float* p = t.data<float>();
  for (int64_t r = 0; r < t.shape().dim_size(0); ++r, p += classes) {
    out.push_back(static_cast<int>(std::max_element(p, p + classes) - p));
  }
  return out;
}

std::vector<double> Row(const Tensor& t, int64_t row) {
  const int64_t n = t.shape().dim_size(1);
  const float* p = t.data<float>() + row * n;
  return std::vector<double>(p, p + n);
}

void CheckMnistGolden(const Struct& golden) {
  const std::string file = Field(golden, "file").string_value();
  const Struct& input = Field(golden, "input").struct_value();
  const std::string input_name = Field(input, "node").string_value();
  const std::vector<int64_t> input_shape = Dims(Field(input, "shape"));
  const int64_t batch = static_cast<int64_t>(Field(input, "batch_size_used").number_value());
  const std::string fetch = Field(golden, "fetch").string_value();
  const bool probabilities = Field(golden, "fetch_kind").string_value() == "probabilities";
  std::string aux_fetch;
  if (golden.fields().count("aux_fetch")) {
    aux_fetch = Field(golden, "aux_fetch").string_value();
    aux_fetch = aux_fetch.substr(0, aux_fetch.find(' '));
  }

  absl::StatusOr<GraphDef> graph_def = ReadGraphDef(CorpusPath(file));
  REQUIRE(graph_def.ok());
  ConfigProto config;
  config.set_allow_soft_placement(true);
  auto session = NewSession(config);
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(*graph_def).ok());

  static CpuAllocator allocator;
  std::vector<std::pair<std::string, Tensor>> extra;
  for (const auto& [name, value] : Field(golden, "extra_feeds").struct_value().fields()) {
    Tensor scalar = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape({}));
    scalar.scalar<float>() = static_cast<float>(value.number_value());
    extra.emplace_back(name, scalar);
  }

  const Mnist& mnist = MnistTestSet();
  const int64_t total = mnist.images.dims[0];
  const uint8_t* labels = mnist.labels.values.data<uint8_t>();
  std::vector<std::string> fetches = {fetch};
  if (!aux_fetch.empty()) fetches.push_back(aux_fetch);
  int correct = 0;
  std::vector<int> predictions;
  std::vector<Tensor> first_batch;
  for (int64_t begin = 0; begin < total; begin += batch) {
    const int64_t count = std::min(batch, total - begin);
    absl::StatusOr<Tensor> pixels = MnistImagesAsFloat(mnist.images, begin, count, &allocator);
    REQUIRE(pixels.ok());
    std::vector<int64_t> shape = input_shape;
    shape[0] = count;
    auto feeds = extra;
    feeds.emplace_back(input_name, pixels->Reshaped(TensorShape(absl::MakeConstSpan(shape))));
    std::vector<Tensor> outputs;
    absl::Status status = (*session)->Run(feeds, fetches, {}, &outputs);
    INFO(file << " images " << begin << "..: " << status.ToString());
    REQUIRE(status.ok());
    const std::vector<int> argmax = RowArgmax(outputs[0]);
    for (int64_t i = 0; i < count; ++i) {
      correct += argmax[i] == labels[begin + i];
      if (predictions.size() < 100) predictions.push_back(argmax[i]);
    }
    if (begin == 0) first_batch = outputs;
  }

  const int want_correct = static_cast<int>(Field(golden, "correct_10k").number_value());
  INFO(file << ": " << correct << " of " << total << " correct, golden " << want_correct);
  CHECK(std::abs(correct - want_correct) <= 3);
  std::vector<int> want_predictions;
  for (double p : Numbers(Field(golden, "predictions_first_100"))) {
    want_predictions.push_back(static_cast<int>(p));
  }
  CHECK(predictions == want_predictions);

  // Saturated softmax values (3e-39, flushed to 0 on GPUs) compare absolutely; logits
  // relatively.
  for (const Value& image : Field(golden, "first_images").list_value().values()) {
    const int64_t index = static_cast<int64_t>(Field(image.struct_value(), "index").number_value());
    CheckClose(Row(first_batch[0], index), Numbers(Field(image.struct_value(), "output")),
               probabilities ? 0 : 1e-4, probabilities ? 1e-5 : 1e-4,
               absl::StrCat(file, " ", fetch, " image ", index));
  }
  if (!aux_fetch.empty()) {
    int64_t index = 0;
    for (const Value& logits : Field(golden, "aux_first_images").list_value().values()) {
      CheckClose(Row(first_batch[1], index), Numbers(logits), 1e-4, 1e-4,
                 absl::StrCat(file, " ", aux_fetch, " image ", index));
      ++index;
    }
  }
}

// A graph TF 2.21 wrote whose ops dflow cannot run yet imports without a problem (every
// attr TF 2.21 writes is declared), and inspect-style checking finds no warning.
void CheckImportOnlyGolden(const Corpus& corpus, const Struct& golden) {
  const std::string file = Field(golden, "file").string_value();
  absl::StatusOr<GraphDef> graph_def = ReadGraphDef(corpus.Path(file));
  REQUIRE(graph_def.ok());
  const GraphReport report = CheckGraphDef(*graph_def);
  INFO(file << ": " << ProblemsToStatus(report.problems).ToString());
  CHECK(report.problems.empty());
  CHECK(report.warnings.empty());
}

std::vector<std::string> GoldenPaths(const Corpus& corpus) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(corpus.Path("goldens"))) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST_CASE("Every golden gives TensorFlow's answer", "[goldens][session]") {
  REQUIRE(GoldenPaths(kCorpora[0]).size() >= 14);
  REQUIRE(GoldenPaths(kCorpora[1]).size() >= 19);
  for (const Placement& placement : kPlacements) {
    testing::ScopedEnv gpus("DFLOW_SIMULATED_GPUS", placement.simulated_gpus);
    for (const Corpus& corpus : kCorpora) {
      for (const std::string& path : GoldenPaths(corpus)) {
        DYNAMIC_SECTION(placement.name << ": " << path) {
          const Struct golden = ReadGolden(path);
          if (golden.fields().count("feeds")) {
            CheckFeedFetchGolden(corpus, golden);
          } else if (golden.fields().count("input")) {
            CheckMnistGolden(golden);
          } else if (golden.fields().count("import_only")) {
            CheckImportOnlyGolden(corpus, golden);
          } else {
            FAIL(path << ": a golden of an unknown kind (not feeds, input or import_only)");
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace dflow
