// `dflow devices [--config=TEXTPROTO]`: the devices a session with that ConfigProto gets.
//
// One line per device, in device order (CPUs first):
//   /job:localhost/replica:0/task:0/device:CPU:0  type: CPU  memory limit: 268435456 bytes (256 MiB)
// followed, for devices that have one, by `  physical: <physical_device_desc>` on the
// same line (simulated GPUs say so there).
#ifndef DFLOW_TOOLS_DEVICES_COMMAND_H_
#define DFLOW_TOOLS_DEVICES_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/device_attributes.pb.h"

namespace dflow {

// The line for one device (without a newline).
std::string DeviceLine(const DeviceAttributes& device);

// The subcommand: args are the flags after "devices".
absl::Status RunDevicesCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace dflow

#endif  // DFLOW_TOOLS_DEVICES_COMMAND_H_
