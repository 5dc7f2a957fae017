// `--feed=NAME=VALUE` flags parsed by the session's rules: the value's dtype is the one
// the session's graph gives the fed tensor (Session::GetFeedSpec), so the command imports
// no graph of its own and reports the Session's texts for names that are not in it.
#ifndef DFLOW_TOOLS_SESSION_FEEDS_H_
#define DFLOW_TOOLS_SESSION_FEEDS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/subgraph.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"
#include "session/session.h"
#include "tools/feed_parser.h"

namespace dflow {

// The tensors the feeds name ("x" -> "x:0"), for Session::Create's fed tensors: a name
// that is no tensor name ("^x", "x:y") is INVALID_ARGUMENT naming it.
absl::StatusOr<std::vector<std::string>> FedTensorNames(const std::vector<FeedFlag>& feeds);

// One feed as (tensor id, value); `session` must hold a graph.
absl::StatusOr<std::pair<TensorId, Tensor>> ParseSessionFeed(const Session& session,
                                                             const FeedFlag& feed,
                                                             Allocator* allocator);

// Every feed, as Session::Run's feeds (named as given).
absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> ParseSessionFeeds(
    const Session& session, const std::vector<FeedFlag>& feeds, Allocator* allocator);

}  // namespace dflow

#endif  // DFLOW_TOOLS_SESSION_FEEDS_H_
