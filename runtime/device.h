// Device: a place where kernels run and tensors live.
//
// A Device has TF's full name ("/job:localhost/replica:0/task:0/device:CPU:0"), its
// DeviceAttributes (as `dflow devices` and ListDevices report them), an allocator for
// its memory and the thread pool its kernels may parallelise on. Accelerator backends
// (simulated and CUDA GPUs, issue 4) add streams behind the same interface.
//
// Ownership: a DeviceMgr owns its devices; Device* handed out are borrowed and valid for
// the DeviceMgr's lifetime. Thread-safety: all const methods may be called concurrently.
#ifndef DFLOW_RUNTIME_DEVICE_H_
#define DFLOW_RUNTIME_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/device_name.h"
#include "proto/device_attributes.pb.h"
#include "runtime/allocator.h"
#include "runtime/thread_pool.h"
#include "runtime/variable_store.h"

namespace dflow {

class DeviceCopier;  // runtime/device_copier.h

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceAttributes& attributes() const { return attributes_; }
  const std::string& name() const { return attributes_.name(); }
  const std::string& device_type() const { return attributes_.device_type(); }
  const DeviceName& parsed_name() const { return parsed_name_; }

  // Memory for tensors that live on this device.
  virtual Allocator* allocator() = 0;
  // The pool kernels on this device parallelise on (never null).
  virtual ThreadPool* compute_pool() = 0;
  // True for devices whose kernels only enqueue work (GPUs): every kernel is cheap.
  virtual bool IsAccelerator() const { return false; }
  // Waits for all work enqueued on the device (a no-op on the CPU).
  virtual absl::Status Sync() { return absl::OkStatus(); }
  // Copies into, out of and between this device's memory on its copy streams (borrowed,
  // lives as long as the device). Null for devices whose memory is host memory (the CPU):
  // their tensors need no copy to be read on the host.
  virtual DeviceCopier* copier() { return nullptr; }
  // Host memory for the tensors this device hands to the host: the host side of its
  // copies (a fetched GPU result) and its kernels' HostMemory outputs. On a GPU it is
  // page-locked, so the DMA engine reads and writes it directly, and process-wide (TF's
  // gpu_host_bfc), because such tensors outlive the session, as fetched results must.
  // The process CPU allocator on devices whose memory is host memory. Never null.
  virtual Allocator* host_allocator() { return ProcessCpuAllocator(); }
  // The variables on this device (VariableV2 and resource variables); they live as long
  // as the device, i.e. for the session. A device that owns the allocator holding their
  // values clears them (VariableStore::Clear) in its destructor, before the allocator.
  VariableStore* variables() { return &variables_; }

 protected:
  // REQUIRES: attributes.name() is a full device name.
  explicit Device(DeviceAttributes attributes);

 private:
  DeviceAttributes attributes_;
  DeviceName parsed_name_;
  VariableStore variables_;
};

// A host CPU device sharing the process's allocator and the session's thread pool.
class CpuDevice final : public Device {
 public:
  // `allocator` and `pool` are borrowed and must outlive the device.
  CpuDevice(int index, Allocator* allocator, ThreadPool* pool);
  Allocator* allocator() override { return allocator_; }
  ThreadPool* compute_pool() override { return pool_; }

 private:
  Allocator* allocator_;
  ThreadPool* pool_;
};

// The devices of one session, in device order (CPUs first, then accelerators).
class DeviceMgr {
 public:
  explicit DeviceMgr(std::vector<std::unique_ptr<Device>> devices);
  // Drains every device's streams before destroying any device: a copy stream of one GPU
  // may still hold a tensor of another (a peer copy's destination) until its callback has
  // run, and that tensor must go back to an allocator that still exists. Then gives the
  // accelerators' process-wide pinned host memory that no tensor uses back to the driver,
  // so closing a session returns it (fetched tensors still alive keep theirs).
  ~DeviceMgr();
  DeviceMgr(const DeviceMgr&) = delete;
  DeviceMgr& operator=(const DeviceMgr&) = delete;

  const std::vector<Device*>& devices() const { return device_ptrs_; }
  // Feeds and fetches live here: the first device, CPU:0.
  Device* client_device() const { return device_ptrs_.front(); }
  // Accepts the full name and the short forms users write ("/device:CPU:1", "CPU:1",
  // "/cpu:1", legacy "/job:localhost/replica:0/task:0/cpu:1"). INVALID_ARGUMENT
  // "<name> unknown device." listing the devices otherwise.
  absl::StatusOr<Device*> Lookup(absl::string_view name) const;
  std::vector<DeviceAttributes> ListAttributes() const;

 private:
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Device*> device_ptrs_;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_DEVICE_H_
