#include "runtime/device.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dflow {
namespace {

// TF gives every device object a random non-zero incarnation.
uint64_t NewIncarnation() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t value = 0;
  while (value == 0) value = rng();
  return value;
}

}  // namespace

Device::Device(DeviceAttributes attributes) : attributes_(std::move(attributes)) {
  if (attributes_.incarnation() == 0) attributes_.set_incarnation(NewIncarnation());
  absl::StatusOr<DeviceName> parsed = ParseDeviceName(attributes_.name());
  if (parsed.ok()) parsed_name_ = *parsed;
}

namespace {

DeviceAttributes CpuAttributes(int index) {
  DeviceAttributes attributes;
  attributes.set_name(FullDeviceName("CPU", index));
  attributes.set_device_type("CPU");
  attributes.set_memory_limit(int64_t{256} << 20);  // TF's placeholder value
  return attributes;
}

}  // namespace

CpuDevice::CpuDevice(int index, Allocator* allocator, ThreadPool* pool)
    : Device(CpuAttributes(index)), allocator_(allocator), pool_(pool) {}

DeviceMgr::DeviceMgr(std::vector<std::unique_ptr<Device>> devices)
    : devices_(std::move(devices)) {
  for (const auto& device : devices_) device_ptrs_.push_back(device.get());
}

DeviceMgr::~DeviceMgr() {
  // Twice: a staged GPU -> GPU copy's first half (on the sender) enqueues its second half
  // on the receiver from its callback, which may run after the receiver was drained.
  for (int pass = 0; pass < 2; ++pass) {
    for (Device* device : device_ptrs_) device->Sync().IgnoreError();
  }
  // The CPU's allocator is shared with every session and keeps a deliberate cache.
  for (Device* device : device_ptrs_) {
    if (device->IsAccelerator()) device->host_allocator()->ReleaseUnusedMemory();
  }
}

absl::StatusOr<Device*> DeviceMgr::Lookup(absl::string_view name) const {
  absl::StatusOr<DeviceName> parsed = ParseDeviceName(name);
  if (parsed.ok() && parsed->type.has_value() && parsed->id.has_value()) {
    for (Device* device : device_ptrs_) {
      if (Matches(*parsed, device->parsed_name())) return device;
    }
  }
  std::vector<std::string> names;
  for (Device* device : device_ptrs_) names.push_back(device->name());
  return absl::InvalidArgumentError(absl::StrCat(
      name, " unknown device. Devices: [", absl::StrJoin(names, ", "), "]"));
}

std::vector<DeviceAttributes> DeviceMgr::ListAttributes() const {
  std::vector<DeviceAttributes> list;
  for (Device* device : device_ptrs_) list.push_back(device->attributes());
  return list;
}

}  // namespace dflow
