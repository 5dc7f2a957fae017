// Status propagation helpers used across dflow (absl::Status is our only error type).
#ifndef DFLOW_GRAPH_STATUS_MACROS_H_
#define DFLOW_GRAPH_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define DFLOW_CONCAT_INNER_(a, b) a##b
#define DFLOW_CONCAT_(a, b) DFLOW_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define DFLOW_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    ::absl::Status dflow_status_ = (expr);            \
    if (!dflow_status_.ok()) return dflow_status_;    \
  } while (0)

// `DFLOW_ASSIGN_OR_RETURN(auto x, F());` unwraps a StatusOr or returns its error.
#define DFLOW_ASSIGN_OR_RETURN(lhs, expr) \
  DFLOW_ASSIGN_OR_RETURN_IMPL_(DFLOW_CONCAT_(dflow_statusor_, __LINE__), lhs, expr)

#define DFLOW_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

namespace dflow {

// Prefixes a status message with context, keeping its code ("while X: <msg>").
inline absl::Status Annotate(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      std::string(prefix) + std::string(status.message()));
}

}  // namespace dflow

#endif  // DFLOW_GRAPH_STATUS_MACROS_H_
