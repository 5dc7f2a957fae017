#include "tools/session_feeds.h"

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace dflow {
namespace {

absl::StatusOr<TensorId> FedTensor(const FeedFlag& feed) {
  absl::StatusOr<TensorId> id = ParseTensorName(feed.name);
  if (!id.ok() || id->IsControl()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--feed ", feed.name, ": not a tensor name (expected node or node:index)"));
  }
  return id;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> FedTensorNames(const std::vector<FeedFlag>& feeds) {
  std::vector<std::string> names;
  for (const FeedFlag& feed : feeds) {
    DFLOW_ASSIGN_OR_RETURN(TensorId id, FedTensor(feed));
    names.push_back(id.ToString());
  }
  return names;
}

absl::StatusOr<std::pair<TensorId, Tensor>> ParseSessionFeed(const Session& session,
                                                             const FeedFlag& feed,
                                                             Allocator* allocator) {
  DFLOW_ASSIGN_OR_RETURN(TensorId id, FedTensor(feed));
  DFLOW_ASSIGN_OR_RETURN(FeedSpec spec, session.GetFeedSpec(id.ToString()));
  DFLOW_ASSIGN_OR_RETURN(Tensor value,
                         ParseFeedValue(feed.name, feed.value, spec.dtype, allocator));
  return std::make_pair(std::move(id), std::move(value));
}

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> ParseSessionFeeds(
    const Session& session, const std::vector<FeedFlag>& feeds, Allocator* allocator) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const FeedFlag& feed : feeds) {
    DFLOW_ASSIGN_OR_RETURN(auto parsed, ParseSessionFeed(session, feed, allocator));
    tensors.emplace_back(feed.name, std::move(parsed.second));
  }
  return tensors;
}

}  // namespace dflow
