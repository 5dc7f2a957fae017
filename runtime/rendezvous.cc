#include "runtime/rendezvous.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dflow {

Rendezvous::~Rendezvous() {
  StartAbort(absl::CancelledError("Rendezvous destroyed with pending operations"));
}

std::string Rendezvous::CreateKey(absl::string_view send_device, uint64_t incarnation,
                                  absl::string_view recv_device, absl::string_view tensor_name,
                                  FrameAndIter frame_iter) {
  return absl::StrCat(send_device, ";", absl::StrFormat("%016x", incarnation), ";", recv_device,
                      ";", tensor_name, ";", frame_iter.frame_id, ":", frame_iter.iter_id);
}

absl::Status Rendezvous::Send(const std::string& key, const Tensor& value, bool is_dead,
                              Device* producer) {
  FromDeviceCallback waiter;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) return abort_status_;
    std::deque<Item>& queue = table_[key];
    if (queue.empty() || !queue.front().waiter) {
      queue.push_back(Item{value, is_dead, producer, nullptr});
      return absl::OkStatus();
    }
    waiter = std::move(queue.front().waiter);
    queue.pop_front();
    if (queue.empty()) table_.erase(key);
  }
  waiter(absl::OkStatus(), value, is_dead, producer);
  return absl::OkStatus();
}

void Rendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  RecvAsyncFrom(key, [done = std::move(done)](const absl::Status& status, const Tensor& value,
                                              bool is_dead, Device*) {
    done(status, value, is_dead);
  });
}

void Rendezvous::RecvAsyncFrom(const std::string& key, FromDeviceCallback done) {
  Item item;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) {
      absl::Status status = abort_status_;
      mu_.Unlock();
      done(status, Tensor(), false, nullptr);
      mu_.Lock();
      return;
    }
    std::deque<Item>& queue = table_[key];
    if (queue.empty() || queue.front().waiter) {
      queue.push_back(Item{Tensor(), false, nullptr, std::move(done)});
      return;
    }
    item = std::move(queue.front());
    queue.pop_front();
    if (queue.empty()) table_.erase(key);
  }
  done(absl::OkStatus(), item.value, item.is_dead, item.producer);
}

void Rendezvous::StartAbort(const absl::Status& status) {
  std::vector<FromDeviceCallback> waiters;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) return;
    abort_status_ = status.ok() ? absl::AbortedError("Rendezvous aborted") : status;
    for (auto& [key, queue] : table_) {
      for (Item& item : queue) {
        if (item.waiter) waiters.push_back(std::move(item.waiter));
      }
    }
    table_.clear();
  }
  for (FromDeviceCallback& waiter : waiters) waiter(status, Tensor(), false, nullptr);
}

absl::Status Rendezvous::status() const {
  absl::MutexLock lock(&mu_);
  return abort_status_;
}

}  // namespace dflow
