#include "tools/devices_command.h"

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "session/session.h"
#include "tools/cli_args.h"

namespace dflow {
namespace {

// "256 MiB", "15.5 GiB": the limit in the largest binary unit that keeps it >= 1.
std::string HumanBytes(int64_t bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, " bytes");
  return absl::StrFormat("%.*f %s", value == static_cast<int64_t>(value) ? 0 : 1, value,
                         kUnits[unit]);
}

}  // namespace

std::string DeviceLine(const DeviceAttributes& device) {
  std::string line = absl::StrCat(device.name(), "  type: ", device.device_type(),
                                  "  memory limit: ", device.memory_limit(), " bytes (",
                                  HumanBytes(device.memory_limit()), ")");
  if (!device.physical_device_desc().empty()) {
    absl::StrAppend(&line, "  physical: ", device.physical_device_desc());
  }
  // Simulated GPUs (DFLOW_SIMULATED_GPUS) say so, with their limit in MiB.
  if (absl::StrContains(device.physical_device_desc(), "dflow simulated GPU")) {
    absl::StrAppend(&line, "  (simulated, ", device.memory_limit() >> 20, " MiB)");
  }
  return line;
}

absl::Status RunDevicesCommand(const std::vector<std::string>& args, std::ostream& out) {
  DFLOW_ASSIGN_OR_RETURN(CliArgs flags, CliArgs::Parse(args, {"config"}));
  ConfigProto config;
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &config));
  }
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config));
  for (const DeviceAttributes& device : session->ListDevices()) {
    out << DeviceLine(device) << "\n";
  }
  return absl::OkStatus();
}

}  // namespace dflow
