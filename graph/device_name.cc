#include "graph/device_name.h"

#include <algorithm>
#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dflow {
namespace {

// Components split on ':', e.g. "device:GPU:1" -> {"device", "GPU", "1"}.
using Parts = std::vector<absl::string_view>;

absl::Status Malformed(absl::string_view spec, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Malformed device specification '", spec, "': ", reason));
}

// A letter followed by letters, digits or '_' (TF's job and type names).
bool IsName(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  return std::all_of(s.begin() + 1, s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool IsDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// The types users spell in any case; see the header for why they are
// upper-cased while other types keep their case.
bool IsCpuOrGpu(absl::string_view type) {
  return absl::EqualsIgnoreCase(type, "cpu") ||
         absl::EqualsIgnoreCase(type, "gpu");
}

std::string CanonicalType(absl::string_view type) {
  return IsCpuOrGpu(type) ? absl::AsciiStrToUpper(type) : std::string(type);
}

// Sets `*out` from a number field; '*' unsets it.
absl::Status ParseNumber(absl::string_view spec, absl::string_view what,
                         absl::string_view text, std::optional<int>* out) {
  if (text == "*") {
    out->reset();
    return absl::OkStatus();
  }
  if (!IsDigits(text)) {
    return Malformed(spec, absl::StrCat(what, " '", text,
                                        "' must be decimal digits or '*'"));
  }
  int value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return Malformed(spec, absl::StrCat(what, " '", text, "' is out of range"));
  }
  *out = value;
  return absl::OkStatus();
}

// Sets `*out` from a job or type field; '*' unsets it.
absl::Status ParseName(absl::string_view spec, absl::string_view what,
                       absl::string_view text,
                       std::optional<std::string>* out) {
  if (text == "*") {
    out->reset();
    return absl::OkStatus();
  }
  if (!IsName(text)) {
    return Malformed(spec,
                     absl::StrCat(what, " '", text,
                                  "' must be a letter followed by letters, "
                                  "digits or '_', or '*'"));
  }
  *out = std::string(text);
  return absl::OkStatus();
}

absl::Status CheckArity(absl::string_view spec, absl::string_view component,
                        const Parts& parts, size_t min, size_t max,
                        absl::string_view form) {
  if (parts.size() >= min && parts.size() <= max) return absl::OkStatus();
  return Malformed(spec, absl::StrCat("component '", component,
                                      "' should look like '", form, "'"));
}

// `job:NAME`, `replica:N` or `task:N`.
absl::Status ApplyAddress(absl::string_view spec, absl::string_view component,
                          const Parts& parts, DeviceName* name) {
  const absl::string_view key = parts[0];
  if (absl::Status s = CheckArity(spec, component, parts, 2, 2,
                                  key == "job" ? "job:NAME" : "KEY:N");
      !s.ok()) {
    return s;
  }
  if (key == "job") return ParseName(spec, "job name", parts[1], &name->job);
  if (key == "replica") {
    return ParseNumber(spec, "replica", parts[1], &name->replica);
  }
  return ParseNumber(spec, "task", parts[1], &name->task);
}

// The type and optional id shared by `device:TYPE[:N]` and `gpu[:N]`.
absl::Status ApplyTypeAndId(absl::string_view spec, absl::string_view type,
                            const absl::string_view* id, DeviceName* name) {
  if (absl::Status s = ParseName(spec, "device type", type, &name->type);
      !s.ok()) {
    return s;
  }
  if (name->type) *name->type = CanonicalType(*name->type);
  if (id == nullptr) return absl::OkStatus();
  return ParseNumber(spec, "device id", *id, &name->id);
}

// `device:TYPE`, `device:TYPE:N`, `device:*:N`, ...
absl::Status ApplyDevice(absl::string_view spec, absl::string_view component,
                         const Parts& parts, DeviceName* name) {
  if (absl::Status s =
          CheckArity(spec, component, parts, 2, 3, "device:TYPE:N");
      !s.ok()) {
    return s;
  }
  return ApplyTypeAndId(spec, parts[1], parts.size() == 3 ? &parts[2] : nullptr,
                        name);
}

// The legacy `cpu[:N]` / `gpu[:N]`, in any letter case.
absl::Status ApplyBareType(absl::string_view spec, absl::string_view component,
                           const Parts& parts, DeviceName* name) {
  if (absl::Status s = CheckArity(spec, component, parts, 1, 2, "gpu:N");
      !s.ok()) {
    return s;
  }
  return ApplyTypeAndId(spec, parts[0], parts.size() == 2 ? &parts[1] : nullptr,
                        name);
}

absl::Status ApplyComponent(absl::string_view spec,
                            absl::string_view component, DeviceName* name) {
  if (component.empty()) {
    return Malformed(spec, "empty component (a stray '/')");
  }
  const Parts parts = absl::StrSplit(component, ':');
  const absl::string_view key = parts[0];
  if (key == "job" || key == "replica" || key == "task") {
    return ApplyAddress(spec, component, parts, name);
  }
  if (key == "device") return ApplyDevice(spec, component, parts, name);
  if (IsCpuOrGpu(key)) return ApplyBareType(spec, component, parts, name);
  return Malformed(spec,
                   absl::StrCat("unknown component '", component,
                                "' (expected job:, replica:, task:, device:, "
                                "cpu or gpu)"));
}

// Whether `spec_field` is unset or equal to `device_field`.
template <typename T>
bool FieldMatches(const std::optional<T>& spec_field,
                  const std::optional<T>& device_field) {
  return !spec_field || spec_field == device_field;
}

template <typename T>
bool Conflict(const std::optional<T>& a, const std::optional<T>& b) {
  return a && b && *a != *b;
}

absl::Status MergeError(absl::string_view what, const DeviceName& a,
                        const DeviceName& b) {
  return absl::InvalidArgumentError(
      absl::StrCat("Cannot merge devices with incompatible ", what, ": '",
                   ToString(a), "' and '", ToString(b), "'"));
}

// Checks the conflicts that are errors; TF checks fields in this order.
absl::Status CheckMergeable(const DeviceName& a, const DeviceName& b,
                            bool allow_soft_placement) {
  if (Conflict(a.job, b.job)) return MergeError("jobs", a, b);
  if (Conflict(a.replica, b.replica)) return MergeError("replicas", a, b);
  if (Conflict(a.task, b.task)) return MergeError("tasks", a, b);
  if (allow_soft_placement) return absl::OkStatus();
  if (Conflict(a.type, b.type)) return MergeError("types", a, b);
  if (Conflict(a.id, b.id)) return MergeError("ids", a, b);
  return absl::OkStatus();
}


}  // namespace

absl::StatusOr<DeviceName> ParseDeviceName(absl::string_view spec) {
  if (absl::StartsWith(spec, "@")) {
    return Malformed(spec,
                     "'@node' is not supported; colocate nodes with the "
                     "_class attr 'loc:@node'");
  }
  absl::string_view rest = spec;
  absl::ConsumePrefix(&rest, "/");
  DeviceName name;
  if (rest.empty()) return name;
  for (absl::string_view component : absl::StrSplit(rest, '/')) {
    if (absl::Status s = ApplyComponent(spec, component, &name); !s.ok()) {
      return s;
    }
  }
  return name;
}

std::string ToString(const DeviceName& name) {
  std::string out;
  if (name.job) absl::StrAppend(&out, "/job:", *name.job);
  if (name.replica) absl::StrAppend(&out, "/replica:", *name.replica);
  if (name.task) absl::StrAppend(&out, "/task:", *name.task);
  if (name.type || name.id) {
    absl::StrAppend(&out, "/device:", name.type ? *name.type : "*", ":",
                    name.id ? absl::StrCat(*name.id) : "*");
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, const DeviceName& name) {
  return os << "'" << ToString(name) << "'";
}

std::string FullDeviceName(absl::string_view type, int id) {
  return absl::StrCat("/job:localhost/replica:0/task:0/device:",
                      CanonicalType(type), ":", id);
}

bool IsFullySpecified(const DeviceName& name) {
  return name.job && name.replica && name.task && name.type && name.id;
}

bool Matches(const DeviceName& spec, const DeviceName& device) {
  return FieldMatches(spec.job, device.job) &&
         FieldMatches(spec.replica, device.replica) &&
         FieldMatches(spec.task, device.task) &&
         FieldMatches(spec.type, device.type) &&
         FieldMatches(spec.id, device.id);
}

absl::StatusOr<DeviceName> MergeDeviceNames(const DeviceName& a,
                                            const DeviceName& b,
                                            bool allow_soft_placement) {
  if (absl::Status s = CheckMergeable(a, b, allow_soft_placement); !s.ok()) {
    return s;
  }
  DeviceName merged = a;
  if (!merged.job) merged.job = b.job;
  if (!merged.replica) merged.replica = b.replica;
  if (!merged.task) merged.task = b.task;
  if (!merged.type) merged.type = b.type;
  if (!merged.id) merged.id = b.id;
  // Only reached with soft placement: a conflicting type makes the id
  // meaningless too, so both go; a conflicting id alone drops just the id.
  if (Conflict(a.type, b.type)) {
    merged.type.reset();
    merged.id.reset();
  } else if (Conflict(a.id, b.id)) {
    merged.id.reset();
  }
  return merged;
}

absl::StatusOr<std::string> CanonicalDeviceSpec(absl::string_view spec) {
  absl::StatusOr<DeviceName> name = ParseDeviceName(spec);
  if (!name.ok()) return name.status();
  return ToString(*name);
}

}  // namespace dflow
