#include "session/training_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "runtime/allocator.h"

namespace dflow {
namespace {

using Feeds = std::vector<std::pair<std::string, Tensor>>;
using Clock = std::chrono::steady_clock;

absl::StatusOr<int64_t> NumExamples(const std::vector<TrainingColumn>& columns,
                                    const char* what) {
  if (columns.empty()) return absl::InvalidArgumentError(absl::StrCat("no ", what, " data"));
  int64_t n = -1;
  for (const TrainingColumn& c : columns) {
    if (c.data.shape().dims() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " data for '", c.tensor, "' is a scalar; it needs one row per example"));
    }
    const int64_t rows = c.data.shape().dim_size(0);
    if (n >= 0 && rows != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " data for '", c.tensor, "' has ", rows, " examples but '",
          columns[0].tensor, "' has ", n));
    }
    n = rows;
  }
  if (n == 0) return absl::InvalidArgumentError(absl::StrCat(what, " data has no examples"));
  return n;
}

absl::StatusOr<Tensor> StringScalar(const std::string& value) {
  DFLOW_ASSIGN_OR_RETURN(Tensor t,
                         Tensor::Allocate(ProcessCpuAllocator(), DT_STRING, TensorShape({})));
  t.scalar<std::string>() = value;
  return t;
}

double ScalarAsDouble(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT: return t.flat<float>()[0];
    case DT_DOUBLE: return t.flat<double>()[0];
    case DT_INT32: return t.flat<int32_t>()[0];
    case DT_INT64: return static_cast<double>(t.flat<int64_t>()[0]);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

// Rule 3: each fetch's mean over all eval examples.
absl::StatusOr<EvalResult> Evaluate(Session* session, const TrainingLoopOptions& o,
                                    int64_t step) {
  DFLOW_ASSIGN_OR_RETURN(int64_t n, NumExamples(o.eval_data, "eval"));
  EvalResult result{step, std::vector<double>(o.eval_fetches.size(), 0.0)};
  const int64_t batch = std::max<int64_t>(1, o.eval_batch);
  for (int64_t start = 0; start < n; start += batch) {
    std::vector<int64_t> rows(std::min(batch, n - start));
    std::iota(rows.begin(), rows.end(), start);
    DFLOW_ASSIGN_OR_RETURN(Feeds feeds, GatherRows(o.eval_data, rows));
    feeds.insert(feeds.end(), o.eval_constant_feeds.begin(), o.eval_constant_feeds.end());
    std::vector<Tensor> out;
    DFLOW_RETURN_IF_ERROR(session->Run(feeds, o.eval_fetches, {}, &out));
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "eval fetch '", o.eval_fetches[i], "' has ", out[i].NumElements(),
            " elements; it must be a scalar (e.g. a batch's accuracy or loss)"));
      }
      result.means[i] += ScalarAsDouble(out[i]) * static_cast<double>(rows.size());
    }
  }
  for (double& m : result.means) m /= static_cast<double>(n);
  return result;
}

absl::StatusOr<Tensor> FloatScalar(float value) {
  DFLOW_ASSIGN_OR_RETURN(Tensor t,
                         Tensor::Allocate(ProcessCpuAllocator(), DT_FLOAT, TensorShape({})));
  t.scalar<float>() = value;
  return t;
}

// Rule 5: the feeds of one step, the batch split over the towers when there are any.
absl::StatusOr<Feeds> StepFeeds(const TrainingLoopOptions& o, const std::vector<int64_t>& rows) {
  if (o.tower_tensors.empty()) return GatherRows(o.train_data, rows);
  const size_t towers = o.tower_tensors.size();
  Feeds feeds;
  size_t begin = 0;
  for (size_t t = 0; t < towers; ++t) {
    const size_t share = rows.size() / towers + (t < rows.size() % towers ? 1 : 0);
    std::vector<int64_t> part(rows.begin() + begin, rows.begin() + begin + share);
    begin += share;
    DFLOW_ASSIGN_OR_RETURN(Feeds tower, GatherRows(o.train_data, part));
    if (o.tower_tensors[t].size() != tower.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tower ", t, " names ", o.tower_tensors[t].size(), " tensors for ",
          o.train_data.size(), " data columns"));
    }
    for (size_t c = 0; c < tower.size(); ++c) {
      feeds.emplace_back(o.tower_tensors[t][c], std::move(tower[c].second));
    }
    if (t < o.tower_weights.size()) {
      DFLOW_ASSIGN_OR_RETURN(Tensor weight,
                             FloatScalar(static_cast<float>(share) / rows.size()));
      feeds.emplace_back(o.tower_weights[t], std::move(weight));
    }
  }
  return feeds;
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> GatherRows(
    const std::vector<TrainingColumn>& columns, const std::vector<int64_t>& rows) {
  Feeds feeds;
  for (const TrainingColumn& c : columns) {
    const int elem = DataTypeSize(c.data.dtype());
    if (elem == 0 || !DataTypeIsMemcpyable(c.data.dtype())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data for '", c.tensor, "' has dtype ", DataTypeString(c.data.dtype()),
          "; only numeric data can be batched"));
    }
    if (c.data.shape().dims() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data for '", c.tensor, "' is a scalar; it needs one row per example"));
    }
    std::vector<int64_t> dims(c.data.shape().dim_sizes().begin(),
                              c.data.shape().dim_sizes().end());
    const int64_t n = dims[0];
    const size_t row_bytes =
        static_cast<size_t>(n == 0 ? 0 : c.data.NumElements() / n) * static_cast<size_t>(elem);
    dims[0] = static_cast<int64_t>(rows.size());
    DFLOW_ASSIGN_OR_RETURN(Tensor batch, Tensor::Allocate(ProcessCpuAllocator(),
                                                          c.data.dtype(), TensorShape(dims)));
    const char* src = static_cast<const char*>(c.data.raw_data());
    char* dst = static_cast<char*>(batch.raw_data());
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] < 0 || rows[i] >= n) {
        return absl::OutOfRangeError(absl::StrCat("row ", rows[i], " of '", c.tensor,
                                                  "' is outside its ", n, " examples"));
      }
      std::memcpy(dst + i * row_bytes, src + rows[i] * row_bytes, row_bytes);
    }
    feeds.emplace_back(c.tensor, std::move(batch));
  }
  return feeds;
}

absl::Status SaveCheckpoint(Session* session, const SaverDef& saver, const std::string& prefix) {
  DFLOW_ASSIGN_OR_RETURN(Tensor name, StringScalar(prefix));
  std::vector<Tensor> out;
  return session->Run({{saver.filename_tensor_name(), name}}, {saver.save_tensor_name()}, {},
                      &out);
}

absl::Status RestoreCheckpoint(Session* session, const SaverDef& saver,
                               const std::string& prefix) {
  DFLOW_ASSIGN_OR_RETURN(Tensor name, StringScalar(prefix));
  std::vector<Tensor> out;
  return session->Run({{saver.filename_tensor_name(), name}}, {}, {saver.restore_op_name()},
                      &out);
}

absl::StatusOr<TrainingReport> RunTrainingLoop(Session* session, const TrainingLoopOptions& o) {
  if (o.train_op.empty()) return absl::InvalidArgumentError("no train op given");
  if (o.batch <= 0) return absl::InvalidArgumentError("the batch size must be positive");
  if (!o.save_prefix.empty() && !o.saver.has_value()) {
    return absl::InvalidArgumentError(
        "saving checkpoints needs a saver (a MetaGraphDef's saver_def, or AddSaver)");
  }
  DFLOW_ASSIGN_OR_RETURN(const int64_t n, NumExamples(o.train_data, "training"));
  const int64_t batch = std::min(o.batch, n);  // no overflow below for a huge --batch
  const int64_t towers = static_cast<int64_t>(o.tower_tensors.size());
  if (towers > 0 && batch < towers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a batch of ", batch, " examples cannot be split over ", towers, " towers"));
  }
  // Rule 5: a tail batch too small to give every tower a row is dropped.
  const int64_t tail = n % batch;
  const int64_t per_epoch = n / batch + (tail > 0 && tail >= std::max<int64_t>(towers, 1));
  const int64_t total = o.steps > 0 ? o.steps : per_epoch * std::max(o.epochs, 0);
  const bool evaluate = !o.eval_fetches.empty();

  TrainingReport report;
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o.seed);
  std::vector<std::string> fetches;
  if (!o.loss.empty()) fetches.push_back(o.loss);
  auto run_eval = [&](int64_t step) -> absl::Status {
    DFLOW_ASSIGN_OR_RETURN(EvalResult r, Evaluate(session, o, step));
    if (o.on_eval) o.on_eval(r);
    report.evals.push_back(std::move(r));
    return absl::OkStatus();
  };
  for (int64_t step = 0; step < total; ++step) {
    const int64_t in_epoch = step % per_epoch;
    if (in_epoch == 0 && o.shuffle) std::shuffle(order.begin(), order.end(), rng);
    const int64_t start = in_epoch * batch;
    std::vector<int64_t> rows(order.begin() + start,
                              order.begin() + std::min(n, start + batch));
    DFLOW_ASSIGN_OR_RETURN(Feeds feeds, StepFeeds(o, rows));
    feeds.insert(feeds.end(), o.constant_feeds.begin(), o.constant_feeds.end());
    std::vector<Tensor> out;
    const Clock::time_point begin = Clock::now();
    absl::Status status = session->Run(feeds, fetches, {o.train_op}, &out);
    report.seconds += std::chrono::duration<double>(Clock::now() - begin).count();
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("step ", step + 1, ": ", status.message()));
    }
    ++report.steps;
    report.examples += static_cast<int64_t>(rows.size());
    const double loss = out.empty() ? std::numeric_limits<double>::quiet_NaN()
                                    : ScalarAsDouble(out[0]);
    if (!out.empty()) report.losses.push_back(loss);
    if (o.on_step) {
      o.on_step({step + 1, total, static_cast<int>(step / per_epoch) + 1, loss,
                 report.steps / std::max(report.seconds, 1e-9)});
    }
    const bool last = step + 1 == total;
    const bool epoch_end = in_epoch + 1 == per_epoch;
    if (evaluate && (last || (o.eval_every > 0 ? (step + 1) % o.eval_every == 0 : epoch_end))) {
      DFLOW_RETURN_IF_ERROR(run_eval(step + 1));
    }
    if (!o.save_prefix.empty() && o.save_every > 0 && (step + 1) % o.save_every == 0 && !last) {
      const std::string prefix = absl::StrCat(o.save_prefix, "-", step + 1);
      DFLOW_RETURN_IF_ERROR(SaveCheckpoint(session, *o.saver, prefix));
      report.checkpoints.push_back(prefix);
    }
  }
  if (!o.save_prefix.empty()) {
    DFLOW_RETURN_IF_ERROR(SaveCheckpoint(session, *o.saver, o.save_prefix));
    report.checkpoints.push_back(o.save_prefix);
  }
  return report;
}

}  // namespace dflow
