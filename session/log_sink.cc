#include "session/log_sink.h"

#include <iostream>
#include <mutex>

namespace dflow {
namespace {

class StderrSink final : public LogSink {
 public:
  void Write(LogKind, absl::string_view text) override {
    std::lock_guard<std::mutex> lock(mu_);  // whole messages, not interleaved lines
    std::cerr << text;
    std::cerr.flush();
  }

 private:
  std::mutex mu_;
};

}  // namespace

std::shared_ptr<LogSink> StderrLogSink() {
  static const auto* sink = new std::shared_ptr<LogSink>(std::make_shared<StderrSink>());
  return *sink;
}

}  // namespace dflow
