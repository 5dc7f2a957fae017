// The node-run sequence of one executor step, written once for both kinds of step:
// Executor::RunState (graphs without control flow, executor.cc) and
// Executor::FrameRunState (frames and iterations, executor_frames.cc). Private to the
// executor.
//
// The sequence: take a ready node; skip it when the step failed; propagate deadness
// when an input is dead; read ref-fed inputs; run the kernel (synchronously, or
// asynchronously finishing in its callback); clear its inputs; hand its outputs to its
// successors; schedule the ones made ready (cheap ones inline, expensive ones on the
// pool but the last); call `done` when no node is outstanding.
//
// What differs per kind comes from `Derived` (CRTP, so the plain path makes no virtual
// call): where a task's input slots are, whether it is dead, and how outputs reach
// successors.
//   static int NodeOf(const Task&);
//   static bool KnownDead(const Task&);   dead before it runs: never worth the pool
//   bool IsDead(const Task&, const NodeItem&) const;
//   StepSlots SlotsOf(const Task&) const;
//   void SetFrameIter(const Task&, OpKernelContext::Params*) const;
//   void PropagateDead(const Task&, ReadyList*);
//   void PropagateOutputs(const Task&, OpKernelContext*, ReadyList*);
//   template <typename Body> void Guard(const Task&, Body&&);   around bookkeeping
//   void ReleaseState();                  the step's tensors, before `done` runs
//
// Lifetime: a step is held by shared_ptr. Work that outlives the current call (a node
// sent to the pool, an async kernel's callback) holds a reference, so the step lives as
// long as any of its work is pending, and nothing deletes itself. The step's tensors
// and resources are released before `done` is called, and calling `done` is the last
// thing the step does. The step object itself may be destroyed after `done`, on a pool
// or stream thread, once the last callback copy goes: no member's destructor may touch
// the session, the plan or a device.
#ifndef DFLOW_RUNTIME_EXECUTOR_STEP_H_
#define DFLOW_RUNTIME_EXECUTOR_STEP_H_

#include <atomic>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/container/inlined_vector.h"
#include "absl/time/clock.h"
#include "graph/status_macros.h"
#include "runtime/executor.h"
#include "runtime/step_outcome.h"
#include "runtime/step_resources.h"
#include "runtime/stream_trace.h"

namespace dflow {

// The input arrays of the nodes a task belongs to (the step's, or its iteration's).
struct StepSlots {
  Tensor* values;
  bool* dead;
  RefSlot** refs;  // null unless the graph has ref edges
};

template <typename Derived, typename Task>
class ExecutorStep : public std::enable_shared_from_this<Derived> {
 public:
  using ReadyList = absl::InlinedVector<Task, 8>;
  using NodeItem = Executor::NodeItem;

 protected:
  ExecutorStep(const Executor* executor, const Executor::Args& args,
               Executor::DoneCallback done)
      : exec_(executor), args_(args), done_(std::move(done)) {
    step_resources_.emplace();
  }

  // Runs `ready` and everything it makes ready that stays on this thread.
  void ProcessReady(ReadyList* ready) {
    ReadyList inline_queue;
    Dispatch(ready, &inline_queue);
    while (!inline_queue.empty()) {
      const Task task = inline_queue.back();
      inline_queue.pop_back();
      ReadyList made_ready;
      bool finished = true;
      derived().Guard(task, [&] { finished = RunNode(task, &made_ready); });
      if (!finished) continue;  // async: finishes in its callback
      Dispatch(&made_ready, &inline_queue);
      NodeFinished();
    }
  }

  // Called when the last outstanding node finished.
  void Finish() {
    const absl::Status status = outcome_.status();
    Executor::DoneCallback done = std::move(done_);
    derived().ReleaseState();
    step_resources_.reset();
    done(status);  // the last thing the step does: the caller may now destroy the plan
  }

  void Fail(const absl::Status& status) { outcome_.Fail(status); }

  const Executor* const exec_;
  const Executor::Args args_;
  std::atomic<int> outstanding_{0};  // ready or running nodes

 private:
  Derived& derived() { return static_cast<Derived&>(*this); }

  // Cheap nodes run inline; expensive ones go to the pool, except the last, which this
  // thread keeps when nothing cheap is left to do.
  void Dispatch(ReadyList* ready, ReadyList* inline_queue) {
    const Task* last_expensive = nullptr;
    for (const Task& task : *ready) {
      if (Derived::KnownDead(task) || !exec_->nodes_[Derived::NodeOf(task)].expensive) {
        inline_queue->push_back(task);
        continue;
      }
      if (last_expensive != nullptr) ScheduleOnPool(*last_expensive);
      last_expensive = &task;
    }
    if (last_expensive != nullptr) {
      if (inline_queue->empty() || args_.runner == nullptr) {
        inline_queue->push_back(*last_expensive);
      } else {
        ScheduleOnPool(*last_expensive);
      }
    }
    ready->clear();
  }

  void ScheduleOnPool(const Task& task) {
    if (args_.runner == nullptr) {
      ReadyList one = {task};
      ProcessReady(&one);
      return;
    }
    args_.runner->Schedule([self = derived().shared_from_this(), task] {
      ReadyList one = {task};
      self->ProcessReady(&one);
    });
  }

  // Runs the task's node; returns false when it is asynchronous and will finish later.
  bool RunNode(const Task& task, ReadyList* made_ready) {
    const NodeItem& item = exec_->nodes_[Derived::NodeOf(task)];
    if (args_.cancellation != nullptr && args_.cancellation->IsCancelled()) {
      Fail(args_.cancellation->reason());
    }
    if (outcome_.aborted()) {
      ClearInputs(task, item);
      return true;
    }
    if (!item.runs_when_dead && derived().IsDead(task, item)) {
      ClearInputs(task, item);
      derived().PropagateDead(task, made_ready);
      return true;
    }
    if (!item.deref_inputs.empty()) {
      absl::Status status = DerefInputs(task, item);
      if (!status.ok()) {
        Fail(AttachNodeName(status, item.kernel->name()));
        ClearInputs(task, item);
        return true;
      }
    }
    if (item.is_async) {
      RunAsyncNode(task, item);
      return false;
    }
    OpKernelContext::Params params;
    FillParams(task, item, &params);
    OpKernelContext context(params, item.num_outputs);
    if (args_.observer == nullptr) {
      ComputeNoThrow(item.kernel.get(), &context);
    } else {
      const int64_t start = absl::GetCurrentTimeNanos();
      {
        ScopedStreamTrace trace(args_.observer->stream_sink(), item.kernel->name());
        ComputeNoThrow(item.kernel.get(), &context);
      }
      args_.observer->NodeDone(*item.kernel, context, start, start, absl::GetCurrentTimeNanos());
    }
    Complete(task, item, &context, made_ready);
    return true;
  }

  // Kept out of line: the synchronous path around it is the hot one.
  ABSL_ATTRIBUTE_NOINLINE void RunAsyncNode(const Task& task, const NodeItem& item) {
    struct AsyncCall {
      OpKernelContext::Params params;
      std::optional<OpKernelContext> context;
      int64_t start = 0;
    };
    auto call = std::make_shared<AsyncCall>();
    FillParams(task, item, &call->params);
    call->context.emplace(call->params, item.num_outputs);
    call->start = args_.observer ? absl::GetCurrentTimeNanos() : 0;
    OpKernelContext* context = &*call->context;
    auto on_done = [self = derived().shared_from_this(), task, call] {
      const NodeItem& node = self->exec_->nodes_[Derived::NodeOf(task)];
      if (self->args_.observer) {
        self->args_.observer->NodeDone(*node.kernel, *call->context, call->start, call->start,
                                       absl::GetCurrentTimeNanos());
      }
      ReadyList made_ready;
      self->derived().Guard(task,
                            [&] { self->Complete(task, node, &*call->context, &made_ready); });
      // The outputs not handed on go now: copies of `call` (this callback's, the
      // kernel's) may outlive the step.
      call->context.reset();
      self->ProcessReady(&made_ready);
      self->NodeFinished();
    };
    if (args_.observer == nullptr) {
      ComputeAsyncNoThrow(item.kernel->AsAsync(), context, std::move(on_done));
      return;
    }
    ScopedStreamTrace trace(args_.observer->stream_sink(), item.kernel->name());
    ComputeAsyncNoThrow(item.kernel->AsAsync(), context, std::move(on_done));
  }

  void FillParams(const Task& task, const NodeItem& item, OpKernelContext::Params* params) {
    const StepSlots slots = derived().SlotsOf(task);
    params->kernel = item.kernel.get();
    params->device = exec_->device_;
    params->inputs = absl::Span<Tensor>(slots.values + item.input_start, item.num_inputs);
    params->input_is_dead = slots.dead + item.input_start;
    if (slots.refs != nullptr) params->input_refs = slots.refs + item.input_start;
    params->rendezvous = args_.rendezvous;
    params->step_id = args_.step_id;
    params->cancellation = args_.cancellation;
    params->call_frame = args_.call_frame;
    params->step_resources = &*step_resources_;
    params->limits = args_.limits;
    derived().SetFrameIter(task, params);
  }

  // Rule 6: reads the current value of each ref-fed, non-ref input.
  absl::Status DerefInputs(const Task& task, const NodeItem& item) {
    const StepSlots slots = derived().SlotsOf(task);
    for (int input : item.deref_inputs) {
      const int slot = item.input_start + input;
      if (slots.dead[slot] || slots.refs[slot] == nullptr) continue;
      DFLOW_ASSIGN_OR_RETURN(slots.values[slot], slots.refs[slot]->Read());
    }
    return absl::OkStatus();
  }

  void Complete(const Task& task, const NodeItem& item, OpKernelContext* context,
                ReadyList* made_ready) {
    ClearInputs(task, item);
    if (!context->status().ok()) {
      Fail(AttachNodeName(context->status(), item.kernel->name()));
      return;  // the step is over; its state goes when it finishes
    }
    derived().PropagateOutputs(task, context, made_ready);
  }

  void ClearInputs(const Task& task, const NodeItem& item) {
    Tensor* values = derived().SlotsOf(task).values;
    for (int i = 0; i < item.num_inputs; ++i) values[item.input_start + i].Clear();
  }

  void NodeFinished() {
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
  }

  Executor::DoneCallback done_;
  std::optional<StepResources> step_resources_;  // released with the step's tensors
  StepOutcome outcome_{args_.cancellation, args_.rendezvous};
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_EXECUTOR_STEP_H_
