// A step's RunMetadata as a Chrome trace (the JSON that chrome://tracing and
// ui.perfetto.dev open): `{"traceEvents": [...], "displayTimeUnit": "ns"}`.
//
// Rules:
//  1. One process per device (its full name), in RunMetadata's order; one thread row
//     per executor thread that ran a node on it ("thread 1", "thread 2", ... in order of
//     first use).
//  2. Each node is a complete event ("ph": "X") named after the node, with its op as the
//     category; times are microseconds from the step's first node start. Args: op,
//     inputs, outputs ("float32[2,2] 16 B") and how long the node waited between being
//     scheduled and starting.
//  3. Transfers (`_Send`, `_Recv`, `_HostSend`, `_HostRecv`) get the category "copy";
//     a `_Recv`'s duration is its wait plus the copy. When the RunMetadata holds the
//     partition graphs, each send is joined to its receive by a flow arrow ("ph": "s"/"f")
//     through their rendezvous key (tensor, send device, receive device).
//  4. Memory: a counter ("ph": "C") per device allocator, "bytes in use" after each node.
//
// Thread-safe: pure functions.
#ifndef DFLOW_TOOLS_CHROME_TRACE_H_
#define DFLOW_TOOLS_CHROME_TRACE_H_

#include <string>

#include "proto/config.pb.h"

namespace dflow {

// The trace of the step `metadata` describes (its step_stats; FULL_TRACE), as JSON.
std::string ChromeTraceJson(const RunMetadata& metadata);

}  // namespace dflow

#endif  // DFLOW_TOOLS_CHROME_TRACE_H_
