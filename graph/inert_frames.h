// Which loop frames are *inert when their loop variables are dead*: given only that every
// non-constant Enter of one instance is dead (its constant Enters, the loop invariants,
// may be live), nothing the instance could run is observable, so the executor may skip
// building it and deliver its Exits dead at once (runtime/executor_frames.cc, dead-frame
// elision).
//
// The check simulates iteration 0 of the frame statically, with TF's dead-value rules:
//  1. Live at the start: the frame's constant Enters. Dead: its other Enters, the Exits
//     of frames nested in it (they are skipped too, or the frame is not inert), and the
//     NextIteration back edges (iteration 0 has no previous iteration).
//  2. A Merge is live when any data input is live; any other node when every input, data
//     and control, is live. An input from anywhere else is taken as live (conservative).
//  3. The frame is inert unless some node that would run live is an Exit (a live value
//     would leave the frame), a NextIteration (iteration 1 would start), a stateful op,
//     a transfer (`_Send`/`_Recv`/...), a non-constant Enter of a nested frame, or a
//     constant Enter of a nested frame that is not inert itself.
// A frame whose instance gets a live loop variable runs normally; this is only about
// instances whose loop variables are all dead, e.g. the inner loops of the last (dead)
// iteration of an outer loop, whose limits are constant Enters chained from outside:
// 4,000 such nested loops built 8 million dead frames and aborted at 6.8 GB (issue 15).
//
// Pure function of the graph.
#ifndef DFLOW_GRAPH_INERT_FRAMES_H_
#define DFLOW_GRAPH_INERT_FRAMES_H_

#include <vector>

#include "graph/control_flow.h"
#include "graph/graph.h"

namespace dflow {

// Per static frame of `info` (index 0, the root, is never inert).
std::vector<bool> InertFrames(const Graph& graph, const ControlFlowInfo& info);

}  // namespace dflow

#endif  // DFLOW_GRAPH_INERT_FRAMES_H_
