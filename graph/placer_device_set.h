// PlacerDeviceSet: the devices placement may choose among (placer.h rules 1 and 6), with
// their type priorities, spec matching and candidate ordering. Indices into the set
// identify devices throughout the placer and ColocationGraph.
//
// Immutable after Create(); thread-compatible.
#ifndef DFLOW_GRAPH_PLACER_DEVICE_SET_H_
#define DFLOW_GRAPH_PLACER_DEVICE_SET_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/device_name.h"
#include "proto/device_attributes.pb.h"

namespace dflow {

// One device placement may use.
struct PlacerDevice {
  std::string name;  // full name, as given
  std::string type;  // DeviceAttributes.device_type
  DeviceName parsed;
  int priority = -1;  // DeviceTypePriority(type)
};

// The devices placement may use, in the order given. Indices into it identify devices.
class PlacerDeviceSet {
 public:
  // INVALID_ARGUMENT when a name is not a full device name (FullDeviceName).
  static absl::StatusOr<PlacerDeviceSet> Create(const std::vector<DeviceAttributes>& attrs);

  int size() const { return static_cast<int>(devices_.size()); }
  // REQUIRES: 0 <= index < size().
  const PlacerDevice& at(int index) const { return devices_[index]; }
  // Device types present, best first.
  const std::vector<std::string>& types() const { return types_; }

  // Indices of the devices `spec` matches, in device order.
  std::vector<int> Matching(const DeviceName& spec) const;
  // Those of `devices` whose type is in `types`, sorted by type priority (descending),
  // then by full name as a string (TF's order: GPU:10 before GPU:2).
  std::vector<int> Supported(const std::vector<int>& devices,
                             const std::vector<std::string>& types) const;
  // The device named exactly `name`, or -1.
  int Find(const DeviceName& name) const;
  // The best type among `devices` ("" when empty).
  std::string BestType(const std::vector<int>& devices) const;
  // Full names joined by ", ", sorted or in device order.
  std::string Names(bool sorted) const;

 private:
  std::vector<PlacerDevice> devices_;
  std::vector<std::string> types_;
};

// "GPU:1": a device's short name, for reasons.
std::string ShortName(const PlacerDevice& device);

}  // namespace dflow

#endif  // DFLOW_GRAPH_PLACER_DEVICE_SET_H_
