// Device names and device specifications: parsing, canonical printing,
// matching and merging.
//
// A device specification ("spec") is what a user writes in NodeDef.device or
// passes to `dflow place`: it may name a device completely
// (`/job:localhost/replica:0/task:0/device:GPU:1`) or only partly
// (`/device:GPU:*`, `/job:localhost`). `DeviceName` is the parsed form of
// either; a concrete device's name is simply a fully specified `DeviceName`.
//
// Compatibility with TensorFlow 1.x (util/device_name_utils.cc), and where we
// deliberately differ (see docs/CLI.md, "Device specs accept every spelling
// users write"):
//   - Everything TF's C++ `ParseFullName` accepts parses to the same fields,
//     except that the device types `cpu` and `gpu` are upper-cased in every
//     spelling (TF keeps `/device:gpu:0` as type `gpu`, which never matches a
//     device; Python users expect it to mean GPU:0).
//   - Like TF's Python `DeviceSpec`, a leading `/` is optional (`GPU:1`,
//     `device:GPU:1`, `job:localhost/task:0`) and the bare type may be written
//     in any case (`/Gpu:0`, `cpu`, `gpu:*`).
//   - `ToString` prints a spec with an id but no type as `/device:*:ID`; TF
//     drops the id there, which loses information.
//   - Merge errors print the two input specs as given (TF prints the first
//     one as partially merged so far; the two agree whenever only one field
//     conflicts).
//
// All functions are pure and thread-compatible.

#ifndef DFLOW_GRAPH_DEVICE_NAME_H_
#define DFLOW_GRAPH_DEVICE_NAME_H_

#include <iosfwd>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dflow {

// A parsed, possibly partial device specification (TF's
// `DeviceNameUtils::ParsedName`). An unset field means "any".
//
// Invariants kept by `ParseDeviceName` (and expected by the other functions):
// `job` and `type` are a letter followed by letters, digits or '_'; numbers
// are non-negative; `type` is canonical (`CPU`/`GPU` upper case).
struct DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;
  std::optional<int> id;

  friend bool operator==(const DeviceName& a, const DeviceName& b) {
    return a.job == b.job && a.replica == b.replica && a.task == b.task &&
           a.type == b.type && a.id == b.id;
  }
  friend bool operator!=(const DeviceName& a, const DeviceName& b) {
    return !(a == b);
  }
};

// Parses a device specification. Lenient: accepts every spelling users write.
//
// Grammar: the spec is a sequence of components separated by '/', with an
// optional leading '/'. `""` and `"/"` are the empty spec (no constraint).
// Components, in any order; a later component overrides the fields an earlier
// one set, and only those it names:
//   job:NAME                NAME is a letter then letters/digits/'_', or '*'
//   replica:N   task:N      N is decimal digits (fits in int32), or '*'
//   device:TYPE[:N]         TYPE as NAME or '*'; N as above or '*'
//   cpu[:N]     gpu[:N]     the bare (legacy) type, in any letter case
// '*' leaves the field unset. The types cpu/gpu in any case become CPU/GPU;
// other types keep their case (`XLA_CPU`). Keywords (`job`, `device`, ...)
// are lower case only.
//
// Errors: INVALID_ARGUMENT `Malformed device specification '<spec>': <reason>`
// where the reason names the offending component, e.g. for `/gpu:x`,
// `/device:GPU:-1`, `/job:1abc`, `@node` (colocation is expressed only with
// the `_class` attr), `/foo:bar`, and for empty components such as `//gpu:0`
// or a trailing '/' (usually a string-concatenation bug, so not ignored).
[[nodiscard]] absl::StatusOr<DeviceName> ParseDeviceName(
    absl::string_view spec);

// Canonical text: `/job:J/replica:R/task:T/device:TYPE:ID`, leaving out unset
// fields; `/device:TYPE:*` when the id is unset and `/device:*:ID` when only
// the type is. The empty spec prints as "". For every valid spec s,
// `ParseDeviceName(ToString(*ParseDeviceName(s)))` gives the same DeviceName.
std::string ToString(const DeviceName& name);

// Streams `ToString(name)` in single quotes (so the empty spec shows as '');
// for test failure messages and logging.
std::ostream& operator<<(std::ostream& os, const DeviceName& name);

// The full name of a local DirectSession device, e.g. ("GPU", 1) gives
// `/job:localhost/replica:0/task:0/device:GPU:1`. `type` is canonicalised as
// in `ParseDeviceName` (`gpu` becomes `GPU`).
// REQUIRES: `type` is a valid device type and `id >= 0`.
std::string FullDeviceName(absl::string_view type, int id);

// Whether every field (job, replica, task, type, id) is set.
bool IsFullySpecified(const DeviceName& name);

// Whether `device` satisfies `spec`: every field set in `spec` is set in
// `device` with an equal value. Strings compare exactly (case-sensitive; both
// sides are canonical if they came from `ParseDeviceName`).
bool Matches(const DeviceName& spec, const DeviceName& device);

// Merges two specs field by field (TF `MergeDevNames`): a field set in only
// one of them is taken from it; a field set in both must be equal.
// Conflicts:
//   - job, replica, task: always INVALID_ARGUMENT
//     `Cannot merge devices with incompatible jobs: '<a>' and '<b>'`
//     (`replicas`, `tasks` likewise);
//   - type: INVALID_ARGUMENT `... incompatible types: ...`, unless
//     `allow_soft_placement`, in which case the result has neither type nor id;
//   - id: INVALID_ARGUMENT `... incompatible ids: ...`, unless
//     `allow_soft_placement`, in which case the result has no id.
// `<a>` and `<b>` are `ToString(a)` and `ToString(b)`.
[[nodiscard]] absl::StatusOr<DeviceName> MergeDeviceNames(
    const DeviceName& a, const DeviceName& b, bool allow_soft_placement);

// `ToString(ParseDeviceName(spec))`: e.g. `/gpu:1` gives `/device:GPU:1`.
// Errors: as `ParseDeviceName`.
[[nodiscard]] absl::StatusOr<std::string> CanonicalDeviceSpec(
    absl::string_view spec);

}  // namespace dflow

#endif  // DFLOW_GRAPH_DEVICE_NAME_H_
