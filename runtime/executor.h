// Executor: runs one partition graph on one device, step after step.
//
// Built once per partition (kernels instantiated, edges flattened, pending counts
// precomputed) and immutable afterwards, so concurrent steps share it safely; each
// RunAsync creates a small per-step state, held by shared_ptr by whatever work of the
// step is pending (executor_step.h); its tensors are freed before `done` is called.
//
// Scheduling (TF's rules, tuned for low per-node overhead):
//  1. A node is ready when all its data and control inputs have arrived.
//  2. Cheap kernels run inline on the thread that made them ready. Of the expensive
//     nodes made ready together, all but the last go to the thread pool; the last runs
//     inline when nothing cheap is waiting — so a chain never leaves its thread.
//  3. Successors of asynchronous kernels (_Recv) continue on the thread that completed
//     them.
//  4. The first error wins: it is annotated with the node ("... [[{{node x}}]]"), aborts
//     the step's rendezvous (waking every blocked _Recv, in every partition) and stops
//     further scheduling; the step ends once in-flight nodes drain.
//  5. A node with a dead input is dead (does not run, outputs are dead), except _Send
//     and _Recv which carry deadness across partitions.
//  6. Reference edges (variables, runtime/ref_slot.h) carry a RefSlot* next to the
//     tensor slot. A consumer whose declared input type is not a ref type gets the
//     slot's value read when the consumer is about to run (so a read ordered after an
//     Assign by a control edge sees the new value); reading an uninitialized slot fails
//     the step with FAILED_PRECONDITION naming the consumer. A ref-typed input gets the
//     slot itself (OpKernelContext::input_ref). Graphs without ref edges pay nothing.
//  7. TF v1 control flow (graph/control_flow.h): graphs with Enter, Exit, NextIteration
//     or Merge run on a frame-aware step state (executor_frames.cc) keeping pending
//     counts and inputs per (frame, iteration); other graphs keep the flat state above.
//     - Merge is ready when one live data input has arrived (it takes that one) or all
//       data inputs are dead, in both cases after all its control inputs.
//     - Enter passes its input to iteration 0 of the child frame (a constant Enter to
//       every iteration); Exit passes a live value to the parent frame and holds a dead
//       one back until the frame ends; NextIteration passes to the next iteration,
//       starting it when fewer than parallel_iterations are running (else it waits).
//     - A dead NextIteration stops; ControlTrigger is never dead.
//     - Transfers (_Send, _Recv and their _Host* twins) run even when dead, so the
//       other side learns of it.
//     A loop spanning devices runs as one loop per partition: graph/partition.h rule 9
//     gives each other device a control loop that iterates in step with the LoopCond, and
//     the frame names and iteration numbers in the rendezvous keys pair the transfers.
#ifndef DFLOW_RUNTIME_EXECUTOR_H_
#define DFLOW_RUNTIME_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "runtime/call_frame.h"
#include "runtime/cancellation.h"
#include "runtime/device.h"
#include "runtime/kernel_registry.h"
#include "runtime/op_kernel.h"
#include "runtime/rendezvous.h"
#include "runtime/stateful_kernels.h"
#include "runtime/stream_trace.h"
#include "runtime/thread_pool.h"

namespace dflow {

struct ResourceLimits;

// Hooks for step statistics and tracing; called from executor threads.
class ExecutorObserver {
 public:
  virtual ~ExecutorObserver() = default;
  // `context` holds the node's outputs (when it succeeded). Times are in nanoseconds
  // since the Unix epoch.
  virtual void NodeDone(const OpKernel& kernel, const OpKernelContext& context,
                        int64_t scheduled_ns, int64_t start_ns, int64_t end_ns) = 0;
  // Where the work a node's kernel puts on accelerator streams is reported
  // (runtime/stream_trace.h); null: not traced.
  virtual std::shared_ptr<StreamTraceSink> stream_sink() const { return nullptr; }
};

template <typename Derived, typename Task>
class ExecutorStep;

class Executor {
 public:
  struct Args {
    int64_t step_id = 0;
    Rendezvous* rendezvous = nullptr;      // required when the graph has _Send/_Recv
    CallFrame* call_frame = nullptr;       // required when the graph has _Arg/_Retval
    CancellationToken* cancellation = nullptr;
    ThreadPool* runner = nullptr;          // inter-op pool for expensive nodes
    ExecutorObserver* observer = nullptr;  // optional
    const ResourceLimits* limits = nullptr;  // optional: the session's allocation limits
  };
  using DoneCallback = std::function<void(const absl::Status&)>;

  // Instantiates a kernel per node of `graph` for `device`. `device` and `kernels` must
  // outlive the executor; `graph` is only read during Create. With `shared`, stateful
  // nodes' kernels come from (and go into) it, so the session's executors share them.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(const Graph& graph, Device* device,
                                                          const KernelRegistry& kernels,
                                                          StatefulKernels* shared = nullptr);
  ~Executor();

  // Runs one step; `done` is called exactly once, possibly before RunAsync returns.
  void RunAsync(const Args& args, DoneCallback done) const;
  // Runs one step and waits for it.
  absl::Status Run(const Args& args) const;

  Device* device() const { return device_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }

 private:
  struct OutEdge {
    int dst;         // node index
    int dst_slot;    // input slot (see flow_), or -1 for a control edge
    int src_output;  // output index, or -1 for a control edge
  };
  struct NodeItem {
    std::shared_ptr<OpKernel> kernel;  // shared with other executors when stateful
    bool is_async = false;
    bool expensive = true;
    bool runs_when_dead = false;  // _Send/_Recv carry deadness instead of skipping
    int input_start = 0;
    int num_inputs = 0;
    int num_outputs = 0;
    int out_start = 0;  // into out_edges_
    int num_out_edges = 0;
    int initial_pending = 0;
    bool has_ref_outputs = false;  // some output is a ref: propagate RefSlot*s
    std::vector<int> last_use;  // per output: index in out_edges_ of its last data edge
    std::vector<int> deref_inputs;  // non-ref inputs fed by a ref output: read at run
  };
  // Rule 7, per node (only for graphs with control flow).
  enum class FlowKind : uint8_t { kPlain, kMerge, kEnter, kExit, kNextIteration };
  struct FlowItem {
    FlowKind kind = FlowKind::kPlain;
    int frame = 0;        // static frame the node runs in
    int local_id = 0;     // index into that frame's per-iteration pending counts
    int child_frame = -1;  // Enter: the frame it feeds
    bool is_constant_enter = false;
    bool is_control_trigger = false;
  };
  // Rule 7, per static frame; frames_[0] is the root frame.
  struct FrameInfo {
    std::string name;
    int parent = -1;
    int num_enters = 0;
    int parallel_iterations = 1;
    int num_slots = 0;                 // input slots per iteration
    std::vector<int> initial_pending;  // per local node id
    std::vector<int> exits;            // the frame's Exit nodes
    // Whether a frame instance whose Enters are all dead may be skipped, its Exits
    // delivered dead at once (no transfer node in it or in a frame nested in it).
    bool elidable = true;
    // Whether it may be skipped as soon as its non-constant Enters are all dead, its
    // constant ones whatever they are (graph/inert_frames.h).
    bool inert = false;
  };
  // The step states (executor_step.h has the node-run sequence both share).
  template <typename Derived, typename Task>
  friend class ExecutorStep;
  class RunState;  // executor.cc
  class FrameRunState;  // executor_frames.cc, with the three below
  struct FrameInstance;
  struct IterationState;
  struct FrameTask;

  explicit Executor(Device* device) : device_(device) {}
  absl::Status Build(const Graph& graph, const KernelRegistry& kernels,
                     StatefulKernels* shared);
  static void BuildRefInfo(const Node& node, NodeItem* item);
  absl::Status BuildFlowInfo(const Graph& graph, const std::vector<Node*>& nodes);
  int AllocateInputSlots(int node, int count);
  int InitialPending(const Node& node, int index);
  // executor_frames.cc: the step state for graphs with control flow.
  void RunAsyncWithFrames(const Args& args, DoneCallback done) const;

  Device* device_;
  std::vector<NodeItem> nodes_;
  std::vector<OutEdge> out_edges_;
  std::vector<int> roots_;
  int num_slots_ = 0;
  bool has_ref_edges_ = false;  // steps allocate a RefSlot* per input slot
  // Control flow (rule 7): empty for graphs without it. With it, NodeItem::input_start
  // and OutEdge::dst_slot index the node's frame's per-iteration slots.
  std::vector<FlowItem> flow_;
  std::vector<FrameInfo> frames_;
};

// TF's line after a graph step's out-of-memory error.
inline constexpr absl::string_view kOomHint =
    "\nHint: If you want to see a list of allocated tensors when OOM happens, add "
    "report_tensor_allocations_upon_oom to RunOptions for current allocation info. This "
    "isn't available when running in Eager mode.\n";

// TF's AttachDef: "<message> [[{{node <name>}}]]", keeping the status code; an
// out-of-memory error also gets TF's hint line (kOomHint).
absl::Status AttachNodeName(const absl::Status& status, absl::string_view node);

}  // namespace dflow

#endif  // DFLOW_RUNTIME_EXECUTOR_H_
