#include "graph/placer_device_set.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/placer.h"

namespace dflow {
namespace {

// Higher device-type priority first, then type name (a total order over types).
bool BetterType(absl::string_view a, absl::string_view b) {
  const int pa = DeviceTypePriority(a), pb = DeviceTypePriority(b);
  return pa != pb ? pa > pb : a < b;
}

}  // namespace

absl::StatusOr<PlacerDeviceSet> PlacerDeviceSet::Create(
    const std::vector<DeviceAttributes>& attrs) {
  PlacerDeviceSet set;
  for (const DeviceAttributes& attr : attrs) {
    absl::StatusOr<DeviceName> parsed = ParseDeviceName(attr.name());
    if (!parsed.ok() || !IsFullySpecified(*parsed)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Placement was given device '", attr.name(), "', which is not a full device name"));
    }
    set.devices_.push_back(
        {attr.name(), attr.device_type(), *parsed, DeviceTypePriority(attr.device_type())});
    if (std::find(set.types_.begin(), set.types_.end(), attr.device_type()) ==
        set.types_.end()) {
      set.types_.push_back(attr.device_type());
    }
  }
  std::sort(set.types_.begin(), set.types_.end(), BetterType);
  return set;
}

std::vector<int> PlacerDeviceSet::Matching(const DeviceName& spec) const {
  std::vector<int> matching;
  for (int i = 0; i < size(); ++i) {
    if (Matches(spec, devices_[i].parsed)) matching.push_back(i);
  }
  return matching;
}

std::vector<int> PlacerDeviceSet::Supported(const std::vector<int>& devices,
                                            const std::vector<std::string>& types) const {
  std::vector<int> supported;
  for (int i : devices) {
    if (std::find(types.begin(), types.end(), devices_[i].type) != types.end()) {
      supported.push_back(i);
    }
  }
  std::stable_sort(supported.begin(), supported.end(), [this](int a, int b) {
    const PlacerDevice& da = devices_[a];
    const PlacerDevice& db = devices_[b];
    return da.priority != db.priority ? da.priority > db.priority : da.name < db.name;
  });
  return supported;
}

int PlacerDeviceSet::Find(const DeviceName& name) const {
  for (int i = 0; i < size(); ++i) {
    if (devices_[i].parsed == name) return i;
  }
  return -1;
}

std::string PlacerDeviceSet::BestType(const std::vector<int>& devices) const {
  std::string best;
  for (int i : devices) {
    if (best.empty() || BetterType(devices_[i].type, best)) best = devices_[i].type;
  }
  return best;
}

std::string PlacerDeviceSet::Names(bool sorted) const {
  std::vector<std::string> names;
  for (const PlacerDevice& device : devices_) names.push_back(device.name);
  if (sorted) std::sort(names.begin(), names.end());
  return absl::StrJoin(names, ", ");
}

std::string ShortName(const PlacerDevice& device) {
  return absl::StrCat(*device.parsed.type, ":", *device.parsed.id);
}

}  // namespace dflow
