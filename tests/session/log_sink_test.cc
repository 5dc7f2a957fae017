// A program's own LogSink gets what a session would print to stderr: the device mapping,
// the placement lines of log_device_placement, and warnings.
#include "session/log_sink.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

class RecordingSink final : public LogSink {
 public:
  void Write(LogKind kind, absl::string_view text) override {
    std::lock_guard<std::mutex> lock(mu_);
    writes_.emplace_back(kind, std::string(text));
  }
  std::string Text(LogKind kind) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string text;
    for (const auto& [k, t] : writes_) {
      if (k == kind) text += t;
    }
    return text;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<LogKind, std::string>> writes_;
};

TEST_CASE("A session's placement log and warnings go to the sink it was given",
          "[session][log]") {
  auto sink = std::make_shared<RecordingSink>();
  ConfigProto config;
  config.set_log_device_placement(true);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(config, sink);
  REQUIRE(session.ok());
  CHECK(absl::StartsWith(sink->Text(LogKind::kDeviceMapping), "Device mapping"));

  // An attr TF 2.21 does not define: ignored with a warning, as TF ignores newer attrs.
  const GraphDef graph = testing::GraphFromText(R"pb(
    node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "c" op: "Neg" input: "a" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "attr_from_the_future" value { i: 1 } } }
  )pb");
  REQUIRE((*session)->Create(graph).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {"c"}, {}, &out).ok());
  const std::string placement = sink->Text(LogKind::kPlacement);
  INFO(placement);
  CHECK(absl::StrContains(placement, "c: (Neg): /job:localhost/replica:0/task:0/device:CPU:0\n"));
  const std::string warnings = sink->Text(LogKind::kWarning);
  INFO(warnings);
  CHECK(absl::StrContains(warnings, "attr 'attr_from_the_future'"));
}

TEST_CASE("Without log_device_placement the sink hears nothing of placement",
          "[session][log]") {
  auto sink = std::make_shared<RecordingSink>();
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(ConfigProto(), sink);
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(testing::GraphFromText(R"pb(
    node { name: "n" op: "NoOp" })pb")).ok());
  CHECK(sink->Text(LogKind::kDeviceMapping).empty());
  CHECK(sink->Text(LogKind::kPlacement).empty());
}

}  // namespace
}  // namespace dflow
