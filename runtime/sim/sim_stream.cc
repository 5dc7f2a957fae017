#include "runtime/sim/sim_stream.h"

#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dflow::sim {

class SimEventState {
 public:
  void Complete(absl::Status status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_ = std::move(status);
      complete_ = true;
    }
    completed_.notify_all();
  }

  bool IsComplete() const {
    std::lock_guard<std::mutex> lock(mu_);
    return complete_;
  }

  absl::Status Wait() const {
    std::unique_lock<std::mutex> lock(mu_);
    completed_.wait(lock, [this] { return complete_; });
    return status_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable completed_;
  bool complete_ = false;  // Guarded by mu_, as is status_.
  absl::Status status_;
};

namespace {

// FNV-1a: a hash that is the same in every process (std::hash and absl::Hash need not be),
// so a chaos seed reproduces the same delay sequence run after run.
uint64_t StableHash(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

std::mt19937_64 ChaosGenerator(uint64_t seed, const std::string& stream_name) {
  const uint64_t salt = StableHash(stream_name);
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(salt), static_cast<uint32_t>(salt >> 32)};
  return std::mt19937_64(seq);
}

}  // namespace

SimEvent::SimEvent(std::shared_ptr<SimEventState> state) : state_(std::move(state)) {}

SimEvent::~SimEvent() = default;

bool SimEvent::IsComplete() const { return state_->IsComplete(); }

absl::Status SimEvent::HostWait() { return state_->Wait(); }

SimStream::SimStream(Kind kind, std::string name, SimStreamOptions options)
    : Stream(kind, std::move(name)),
      options_(std::move(options)),
      chaos_rng_(ChaosGenerator(options_.chaos_seed, this->name())),
      worker_([this] { WorkerLoop(); }) {}

SimStream::~SimStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_one();
  worker_.join();
}

absl::Status SimStream::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void SimStream::Fail(const absl::Status& error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_.ok()) status_ = error;
}

absl::Status SimStream::Enqueue(const std::unique_lock<std::mutex>& /*lock*/,
                                std::function<void()> closure) {
  if (!status_.ok()) return status_;
  queue_.push_back(std::move(closure));
  ++enqueued_;
  work_ready_.notify_one();
  return absl::OkStatus();
}

absl::Status SimStream::EnqueueOperation(std::function<absl::Status()> op) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!status_.ok()) return status_;
  // Numbered at enqueue time, under the queue lock, so "the Nth operation" is the Nth in
  // queue order even when several threads enqueue at once.
  const bool inject_fault = ++operations_ == options_.fail_operation_number;
  return Enqueue(lock, [this, op = std::move(op), inject_fault] {
    if (!status().ok()) return;  // Sticky error: the work is skipped.
    absl::Status result = inject_fault ? options_.injected_fault : op();
    if (!result.ok()) Fail(result);
  });
}

absl::Status SimStream::EnqueueHostFunctionImpl(std::function<absl::Status()> fn) {
  return EnqueueOperation(std::move(fn));
}

absl::Status SimStream::MemcpyImpl(void* dst, const void* src, size_t bytes) {
  return EnqueueOperation([dst, src, bytes] {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::unique_ptr<Event>> SimStream::RecordEventImpl() {
  auto state = std::make_shared<SimEventState>();
  std::unique_lock<std::mutex> lock(mu_);
  absl::Status enqueued = Enqueue(lock, [this, state] { state->Complete(status()); });
  if (!enqueued.ok()) return enqueued;
  return std::unique_ptr<Event>(new SimEvent(std::move(state)));
}

absl::Status SimStream::WaitForImpl(Event& event) {
  auto* sim_event = dynamic_cast<SimEvent*>(&event);
  if (sim_event == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("SimStream ", name(), ": WaitFor needs an event recorded on a SimStream"));
  }
  std::unique_lock<std::mutex> lock(mu_);
  // The wait is honoured even after a sticky error: later callbacks may release memory the
  // producer is still using.
  return Enqueue(lock, [state = sim_event->state_] { state->Wait().IgnoreError(); });
}

absl::Status SimStream::ThenExecuteImpl(std::function<void(const absl::Status&)> callback) {
  std::unique_lock<std::mutex> lock(mu_);
  return Enqueue(lock, [this, callback = std::move(callback)] { callback(status()); });
}

absl::Status SimStream::BlockHostUntilDoneImpl() {
  if (OnWorkerThread()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "SimStream ", name(), ": BlockHostUntilDone called from the stream's own worker"));
  }
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t target = enqueued_;
  work_done_.wait(lock, [this, target] { return finished_ >= target; });
  return status_;
}

void SimStream::ChaosDelay() {
  if (options_.chaos_seed == 0) return;
  std::uniform_int_distribution<int64_t> micros(0, SimStreamOptions::kMaxChaosDelayMicros);
  std::this_thread::sleep_for(std::chrono::microseconds(micros(chaos_rng_)));
}

void SimStream::WorkerLoop() {
  while (true) {
    std::function<void()> closure;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // Stopping, and everything has drained.
      closure = std::move(queue_.front());
      queue_.pop_front();
    }
    ChaosDelay();
    closure();
    // Captures are released before BlockHostUntilDone can report the closure done.
    closure = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++finished_;
    }
    work_done_.notify_all();
  }
}

}  // namespace dflow::sim
