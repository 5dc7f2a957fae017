// Tests for graph/device_name.h: parsing every spelling users write,
// canonical printing, matching partial specs and TF-compatible merging.

#include "graph/device_name.h"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

constexpr std::nullopt_t kAny = std::nullopt;

DeviceName Name(std::optional<std::string> job, std::optional<int> replica,
                std::optional<int> task, std::optional<std::string> type,
                std::optional<int> id) {
  DeviceName name;
  name.job = std::move(job);
  name.replica = replica;
  name.task = task;
  name.type = std::move(type);
  name.id = id;
  return name;
}

// Parses a spec the test expects to be valid.
DeviceName MustParse(const std::string& spec) {
  absl::StatusOr<DeviceName> parsed = ParseDeviceName(spec);
  INFO("spec '" << spec << "': " << parsed.status().ToString());
  REQUIRE(parsed.ok());
  return *parsed;
}

std::string MergeError(const std::string& a, const std::string& b, bool soft) {
  absl::StatusOr<DeviceName> merged =
      MergeDeviceNames(MustParse(a), MustParse(b), soft);
  REQUIRE_FALSE(merged.ok());
  CHECK(merged.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(merged.status().message());
}

DeviceName MustMerge(const std::string& a, const std::string& b, bool soft) {
  absl::StatusOr<DeviceName> merged =
      MergeDeviceNames(MustParse(a), MustParse(b), soft);
  INFO(merged.status().ToString());
  REQUIRE(merged.ok());
  return *merged;
}

TEST_CASE("ParseDeviceName reads every spelling of GPU 1 as type GPU, id 1",
          "[graph][device_name]") {
  const DeviceName gpu1 = Name(kAny, kAny, kAny, "GPU", 1);
  for (const char* spec :
       {"/gpu:1", "/GPU:1", "/Gpu:1", "/device:GPU:1", "/device:gpu:1",
        "/device:Gpu:1", "GPU:1", "gpu:1", "device:GPU:1", "device:gpu:1"}) {
    DYNAMIC_SECTION(spec) { CHECK(MustParse(spec) == gpu1); }
  }
}

TEST_CASE("ParseDeviceName reads every spelling of CPU 0 as type CPU, id 0",
          "[graph][device_name]") {
  const DeviceName cpu0 = Name(kAny, kAny, kAny, "CPU", 0);
  for (const char* spec : {"/cpu:0", "/CPU:0", "/Cpu:0", "cpu:0", "CPU:0",
                           "/device:CPU:0", "/device:cpu:0", "device:CPU:0"}) {
    DYNAMIC_SECTION(spec) { CHECK(MustParse(spec) == cpu0); }
  }
}

TEST_CASE("ParseDeviceName reads full names in current and legacy form",
          "[graph][device_name]") {
  const DeviceName full = Name("localhost", 0, 0, "GPU", 1);
  for (const char* spec : {
           "/job:localhost/replica:0/task:0/device:GPU:1",
           "/job:localhost/replica:0/task:0/gpu:1",
           "/job:localhost/replica:0/task:0/device:gpu:1",
           "job:localhost/replica:0/task:0/device:GPU:1",
           "/device:GPU:1/task:0/replica:0/job:localhost",
       }) {
    DYNAMIC_SECTION(spec) { CHECK(MustParse(spec) == full); }
  }
  SECTION("other job names and numbers") {
    CHECK(MustParse("/job:worker_2/replica:3/task:17/device:CPU:5") ==
          Name("worker_2", 3, 17, "CPU", 5));
    CHECK(MustParse("/job:PS/task:1") == Name("PS", kAny, 1, kAny, kAny));
  }
}

TEST_CASE("ParseDeviceName keeps the case of device types other than CPU/GPU",
          "[graph][device_name]") {
  CHECK(MustParse("/device:XLA_CPU:0") == Name(kAny, kAny, kAny, "XLA_CPU", 0));
  CHECK(MustParse("/device:xla_gpu:1") == Name(kAny, kAny, kAny, "xla_gpu", 1));
  CHECK(MustParse("/device:TPU_SYSTEM:0") ==
        Name(kAny, kAny, kAny, "TPU_SYSTEM", 0));
  CHECK(MustParse("/device:GPU2:0") == Name(kAny, kAny, kAny, "GPU2", 0));
}

TEST_CASE("ParseDeviceName reads partial specs, leaving wildcards unset",
          "[graph][device_name]") {
  SECTION("any GPU") {
    CHECK(MustParse("/device:GPU:*") == Name(kAny, kAny, kAny, "GPU", kAny));
    CHECK(MustParse("/gpu:*") == Name(kAny, kAny, kAny, "GPU", kAny));
    CHECK(MustParse("/device:GPU") == Name(kAny, kAny, kAny, "GPU", kAny));
    CHECK(MustParse("/gpu") == Name(kAny, kAny, kAny, "GPU", kAny));
    CHECK(MustParse("GPU") == Name(kAny, kAny, kAny, "GPU", kAny));
  }
  SECTION("any device with id 0") {
    CHECK(MustParse("/device:*:0") == Name(kAny, kAny, kAny, kAny, 0));
  }
  SECTION("only a job, replica or task") {
    CHECK(MustParse("/job:localhost") ==
          Name("localhost", kAny, kAny, kAny, kAny));
    CHECK(MustParse("/replica:3") == Name(kAny, 3, kAny, kAny, kAny));
    CHECK(MustParse("/task:7/cpu:*") == Name(kAny, kAny, 7, "CPU", kAny));
  }
  SECTION("every field a wildcard") {
    CHECK(MustParse("/job:*/replica:*/task:*/device:*:*") == DeviceName{});
    CHECK(MustParse("/device:*") == DeviceName{});
  }
}

TEST_CASE("ParseDeviceName treats an empty string and a lone slash as no "
          "constraint",
          "[graph][device_name]") {
  CHECK(MustParse("") == DeviceName{});
  CHECK(MustParse("/") == DeviceName{});
}

TEST_CASE("ParseDeviceName lets a later component override the fields it names",
          "[graph][device_name]") {
  SECTION("same component twice") {
    CHECK(MustParse("/gpu:0/gpu:1") == Name(kAny, kAny, kAny, "GPU", 1));
    CHECK(MustParse("/job:a/job:b") == Name("b", kAny, kAny, kAny, kAny));
    CHECK(MustParse("/task:1/task:2") == Name(kAny, kAny, 2, kAny, kAny));
  }
  SECTION("legacy and current device components mix") {
    CHECK(MustParse("/device:GPU:0/cpu:1") == Name(kAny, kAny, kAny, "CPU", 1));
  }
  SECTION("a component without an id keeps the earlier id") {
    CHECK(MustParse("/device:GPU:3/device:CPU") ==
          Name(kAny, kAny, kAny, "CPU", 3));
    CHECK(MustParse("/device:GPU:0/device:*") ==
          Name(kAny, kAny, kAny, kAny, 0));
  }
  SECTION("a wildcard unsets an earlier value") {
    CHECK(MustParse("/task:1/task:*") == DeviceName{});
    CHECK(MustParse("/job:a/job:*/gpu:2/gpu:*") ==
          Name(kAny, kAny, kAny, "GPU", kAny));
  }
}

TEST_CASE("ParseDeviceName reads ids as decimal int32 values",
          "[graph][device_name]") {
  CHECK(MustParse("/gpu:007") == Name(kAny, kAny, kAny, "GPU", 7));
  CHECK(MustParse("/device:GPU:2147483647") ==
        Name(kAny, kAny, kAny, "GPU", 2147483647));
  CHECK(MustParse("/replica:10/task:12") == Name(kAny, 10, 12, kAny, kAny));
}

TEST_CASE("ParseDeviceName rejects malformed specs with INVALID_ARGUMENT "
          "naming the spec and the bad component",
          "[graph][device_name]") {
  struct Case {
    const char* spec;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"/gpu:x", "device id 'x' must be decimal digits or '*'"},
      {"/device:GPU:-1", "device id '-1' must be decimal digits or '*'"},
      {"/device:GPU:+1", "device id '+1' must be decimal digits or '*'"},
      {"/gpu:0 ", "device id '0 ' must be decimal digits or '*'"},
      {"/gpu:", "device id '' must be decimal digits or '*'"},
      {"/device:GPU:2147483648", "device id '2147483648' is out of range"},
      {"/task:99999999999999999999",
       "task '99999999999999999999' is out of range"},
      {"/job:1abc", "job name '1abc' must be a letter followed by letters, "
                    "digits or '_', or '*'"},
      {"/job:", "job name '' must be a letter"},
      {"/job:local-host", "job name 'local-host' must be a letter"},
      {"/replica:x", "replica 'x' must be decimal digits or '*'"},
      {"/task:-1", "task '-1' must be decimal digits or '*'"},
      {"/device:", "device type '' must be a letter"},
      {"/device:1GPU:0", "device type '1GPU' must be a letter"},
      {"/device:GPU-0:0", "device type 'GPU-0' must be a letter"},
      {"@node", "'@node' is not supported; colocate nodes with the _class "
                "attr 'loc:@node'"},
      {"/foo:bar", "unknown component 'foo:bar'"},
      {"/JOB:localhost", "unknown component 'JOB:localhost'"},
      {"/XLA_CPU:0", "unknown component 'XLA_CPU:0'"},
      {"localhost", "unknown component 'localhost'"},
      {" /gpu:0", "unknown component ' '"},
      {"//gpu:0", "empty component (a stray '/')"},
      {"/gpu:0/", "empty component (a stray '/')"},
      {"/job:a//gpu:0", "empty component (a stray '/')"},
      {"/device:GPU:1:2",
       "component 'device:GPU:1:2' should look like 'device:TYPE:N'"},
      {"/gpu:0:1", "component 'gpu:0:1' should look like 'gpu:N'"},
      {"/job:a:b", "component 'job:a:b' should look like 'job:NAME'"},
      {"/replica", "component 'replica' should look like 'KEY:N'"},
      {"/task:1:2", "component 'task:1:2' should look like 'KEY:N'"},
      {"/device", "component 'device' should look like 'device:TYPE:N'"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION("'" << c.spec << "'") {
      const absl::StatusOr<DeviceName> parsed = ParseDeviceName(c.spec);
      REQUIRE_FALSE(parsed.ok());
      CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK(absl::StartsWith(
          parsed.status().message(),
          absl::StrCat("Malformed device specification '", c.spec, "': ",
                       c.reason)));
    }
  }
}

TEST_CASE("ParseDeviceName error messages are complete sentences about the "
          "spec",
          "[graph][device_name]") {
  CHECK(ParseDeviceName("/gpu:x").status().message() ==
        "Malformed device specification '/gpu:x': device id 'x' must be "
        "decimal digits or '*'");
  CHECK(ParseDeviceName("/foo:bar").status().message() ==
        "Malformed device specification '/foo:bar': unknown component "
        "'foo:bar' (expected job:, replica:, task:, device:, cpu or gpu)");
  CHECK(ParseDeviceName("/job:1abc/gpu:0").status().message() ==
        "Malformed device specification '/job:1abc/gpu:0': job name '1abc' "
        "must be a letter followed by letters, digits or '_', or '*'");
}

TEST_CASE("ToString prints the canonical form, leaving out unset fields",
          "[graph][device_name]") {
  CHECK(ToString(Name("localhost", 0, 0, "GPU", 1)) ==
        "/job:localhost/replica:0/task:0/device:GPU:1");
  CHECK(ToString(DeviceName{}) == "");
  CHECK(ToString(Name(kAny, kAny, kAny, "GPU", kAny)) == "/device:GPU:*");
  CHECK(ToString(Name(kAny, kAny, kAny, kAny, 0)) == "/device:*:0");
  CHECK(ToString(Name("worker", kAny, 2, kAny, kAny)) == "/job:worker/task:2");
  CHECK(ToString(Name(kAny, 1, kAny, "XLA_CPU", 3)) ==
        "/replica:1/device:XLA_CPU:3");
}

TEST_CASE("CanonicalDeviceSpec rewrites user spellings into the canonical form",
          "[graph][device_name]") {
  struct Case {
    const char* spec;
    const char* canonical;
  };
  for (const Case& c : std::vector<Case>{
           {"/gpu:1", "/device:GPU:1"},
           {"gpu:1", "/device:GPU:1"},
           {"/device:cpu:0", "/device:CPU:0"},
           {"/job:localhost/replica:0/task:0/gpu:1",
            "/job:localhost/replica:0/task:0/device:GPU:1"},
           {"/device:GPU:1/job:localhost", "/job:localhost/device:GPU:1"},
           {"/gpu:*", "/device:GPU:*"},
           {"/", ""},
       }) {
    DYNAMIC_SECTION(c.spec) {
      const absl::StatusOr<std::string> canonical = CanonicalDeviceSpec(c.spec);
      REQUIRE(canonical.ok());
      CHECK(*canonical == c.canonical);
    }
  }
  SECTION("a malformed spec gives the parse error") {
    const absl::StatusOr<std::string> canonical = CanonicalDeviceSpec("/gpu:x");
    REQUIRE_FALSE(canonical.ok());
    CHECK(canonical.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StartsWith(canonical.status().message(),
                           "Malformed device specification '/gpu:x'"));
  }
}

TEST_CASE("ToString of a parsed spec parses back to the same spec",
          "[graph][device_name]") {
  for (const char* spec :
       {"", "/", "/gpu:1", "GPU:1", "/device:gpu:1", "/cpu:*", "/device:*:0",
        "/job:localhost", "/replica:2", "/task:3/gpu", "/device:XLA_GPU:4",
        "/job:localhost/replica:0/task:0/gpu:1",
        "/device:GPU:1/task:0/replica:0/job:worker", "/gpu:007"}) {
    DYNAMIC_SECTION("'" << spec << "'") {
      const DeviceName parsed = MustParse(spec);
      const std::string printed = ToString(parsed);
      const DeviceName reparsed = MustParse(printed);
      CHECK(reparsed == parsed);
      CHECK(ToString(reparsed) == printed);
    }
  }
}

TEST_CASE("FullDeviceName names a local DirectSession device",
          "[graph][device_name]") {
  CHECK(FullDeviceName("GPU", 1) ==
        "/job:localhost/replica:0/task:0/device:GPU:1");
  CHECK(FullDeviceName("CPU", 0) ==
        "/job:localhost/replica:0/task:0/device:CPU:0");
  CHECK(FullDeviceName("gpu", 2) ==
        "/job:localhost/replica:0/task:0/device:GPU:2");
  CHECK(FullDeviceName("XLA_CPU", 0) ==
        "/job:localhost/replica:0/task:0/device:XLA_CPU:0");
  const DeviceName parsed = MustParse(FullDeviceName("GPU", 3));
  CHECK(IsFullySpecified(parsed));
  CHECK(parsed == Name("localhost", 0, 0, "GPU", 3));
}

TEST_CASE("IsFullySpecified requires job, replica, task, type and id",
          "[graph][device_name]") {
  const DeviceName full = Name("localhost", 0, 0, "GPU", 1);
  CHECK(IsFullySpecified(full));
  CHECK_FALSE(IsFullySpecified(DeviceName{}));
  SECTION("missing job") {
    DeviceName d = full;
    d.job.reset();
    CHECK_FALSE(IsFullySpecified(d));
  }
  SECTION("missing replica") {
    DeviceName d = full;
    d.replica.reset();
    CHECK_FALSE(IsFullySpecified(d));
  }
  SECTION("missing task") {
    DeviceName d = full;
    d.task.reset();
    CHECK_FALSE(IsFullySpecified(d));
  }
  SECTION("missing type") {
    DeviceName d = full;
    d.type.reset();
    CHECK_FALSE(IsFullySpecified(d));
  }
  SECTION("missing id") {
    DeviceName d = full;
    d.id.reset();
    CHECK_FALSE(IsFullySpecified(d));
  }
}

TEST_CASE("Matches accepts a device when every field set in the spec agrees",
          "[graph][device_name]") {
  const DeviceName gpu1 = MustParse(FullDeviceName("GPU", 1));
  SECTION("specs that match GPU:1") {
    for (const char* spec :
         {"", "/gpu:1", "/GPU:1", "gpu:1", "/device:gpu:1", "/device:GPU:*",
          "/gpu:*", "/device:*:1", "/job:localhost", "/replica:0/task:0",
          "/job:localhost/replica:0/task:0/device:GPU:1"}) {
      DYNAMIC_SECTION("'" << spec << "'") {
        CHECK(Matches(MustParse(spec), gpu1));
      }
    }
  }
  SECTION("specs that do not match GPU:1") {
    for (const char* spec :
         {"/gpu:0", "/cpu:1", "/device:CPU:*", "/job:worker", "/replica:1",
          "/task:1", "/device:XLA_GPU:1", "/device:*:2",
          "/job:localhost/replica:0/task:0/device:GPU:2"}) {
      DYNAMIC_SECTION("'" << spec << "'") {
        CHECK_FALSE(Matches(MustParse(spec), gpu1));
      }
    }
  }
  SECTION("other types compare case-sensitively") {
    const DeviceName xla = MustParse(FullDeviceName("XLA_CPU", 0));
    CHECK(Matches(MustParse("/device:XLA_CPU:0"), xla));
    CHECK_FALSE(Matches(MustParse("/device:xla_cpu:0"), xla));
  }
  SECTION("a field the device lacks does not match a set spec field") {
    const DeviceName partial = Name(kAny, kAny, kAny, "GPU", 1);
    CHECK(Matches(MustParse("/gpu:1"), partial));
    CHECK_FALSE(Matches(MustParse("/job:localhost/gpu:1"), partial));
  }
}

TEST_CASE("MergeDeviceNames combines compatible specs field by field",
          "[graph][device_name]") {
  for (bool soft : {false, true}) {
    DYNAMIC_SECTION("allow_soft_placement=" << soft) {
      CHECK(MustMerge("/job:a", "/device:GPU:0", soft) ==
            Name("a", kAny, kAny, "GPU", 0));
      CHECK(MustMerge("/device:GPU:*", "/device:*:1", soft) ==
            Name(kAny, kAny, kAny, "GPU", 1));
      CHECK(MustMerge("/job:a/replica:0/gpu:1", "/job:a/task:2/device:GPU:1",
                      soft) == Name("a", 0, 2, "GPU", 1));
      CHECK(MustMerge("", "/job:localhost/replica:0/task:0/cpu:0", soft) ==
            Name("localhost", 0, 0, "CPU", 0));
      CHECK(MustMerge("/job:localhost/replica:0/task:0/cpu:0", "", soft) ==
            Name("localhost", 0, 0, "CPU", 0));
      CHECK(MustMerge("/gpu:0", "/device:gpu:0", soft) ==
            Name(kAny, kAny, kAny, "GPU", 0));
      CHECK(MustMerge("", "", soft) == DeviceName{});
    }
  }
}

TEST_CASE("MergeDeviceNames rejects job, replica and task conflicts even with "
          "soft placement",
          "[graph][device_name]") {
  for (bool soft : {false, true}) {
    DYNAMIC_SECTION("allow_soft_placement=" << soft) {
      CHECK(MergeError("/job:a/device:GPU:0", "/job:b", soft) ==
            "Cannot merge devices with incompatible jobs: "
            "'/job:a/device:GPU:0' and '/job:b'");
      CHECK(MergeError("/replica:0", "/job:x/replica:1", soft) ==
            "Cannot merge devices with incompatible replicas: "
            "'/replica:0' and '/job:x/replica:1'");
      CHECK(MergeError("/task:1/gpu:0", "/task:2/gpu:0", soft) ==
            "Cannot merge devices with incompatible tasks: "
            "'/task:1/device:GPU:0' and '/task:2/device:GPU:0'");
      SECTION("a job conflict is reported before a type conflict") {
        CHECK(MergeError("/job:a/gpu:0", "/job:b/cpu:0", soft) ==
              "Cannot merge devices with incompatible jobs: "
              "'/job:a/device:GPU:0' and '/job:b/device:CPU:0'");
      }
    }
  }
}

TEST_CASE("MergeDeviceNames rejects type and id conflicts without soft "
          "placement",
          "[graph][device_name]") {
  SECTION("types") {
    CHECK(MergeError("/device:GPU:0", "/cpu:0", false) ==
          "Cannot merge devices with incompatible types: "
          "'/device:GPU:0' and '/device:CPU:0'");
    CHECK(MergeError("/job:a/device:GPU:*", "/device:XLA_GPU:*", false) ==
          "Cannot merge devices with incompatible types: "
          "'/job:a/device:GPU:*' and '/device:XLA_GPU:*'");
  }
  SECTION("ids") {
    CHECK(MergeError("/gpu:0", "/gpu:1", false) ==
          "Cannot merge devices with incompatible ids: "
          "'/device:GPU:0' and '/device:GPU:1'");
    CHECK(MergeError("/device:GPU:0", "/device:*:1", false) ==
          "Cannot merge devices with incompatible ids: "
          "'/device:GPU:0' and '/device:*:1'");
  }
  SECTION("a type conflict is reported before an id conflict") {
    CHECK(MergeError("/gpu:0", "/cpu:1", false) ==
          "Cannot merge devices with incompatible types: "
          "'/device:GPU:0' and '/device:CPU:1'");
  }
}

TEST_CASE("MergeDeviceNames with soft placement drops a conflicting type with "
          "its id, or a conflicting id alone",
          "[graph][device_name]") {
  SECTION("type conflict drops type and id, keeps the rest") {
    CHECK(MustMerge("/job:a/device:GPU:0", "/task:1/device:CPU:0", true) ==
          Name("a", kAny, 1, kAny, kAny));
    CHECK(MustMerge("/device:GPU:*", "/cpu:3", true) == DeviceName{});
    CHECK(MustMerge("/gpu:0", "/cpu:1", true) == DeviceName{});
  }
  SECTION("id conflict drops only the id") {
    CHECK(MustMerge("/job:a/gpu:0", "/gpu:1", true) ==
          Name("a", kAny, kAny, "GPU", kAny));
    CHECK(MustMerge("/device:*:0", "/replica:2/device:GPU:1", true) ==
          Name(kAny, 2, kAny, "GPU", kAny));
  }
}

TEST_CASE("DeviceName equality compares every field", "[graph][device_name]") {
  const DeviceName a = Name("localhost", 0, 0, "GPU", 1);
  CHECK(a == Name("localhost", 0, 0, "GPU", 1));
  CHECK_FALSE(a != Name("localhost", 0, 0, "GPU", 1));
  CHECK(a != Name("localhost", 0, 0, "GPU", kAny));
  CHECK(a != Name("localhost", 0, 0, "CPU", 1));
  CHECK(a != Name("worker", 0, 0, "GPU", 1));
  CHECK(a != Name("localhost", 1, 0, "GPU", 1));
  CHECK(a != Name("localhost", 0, 1, "GPU", 1));
  CHECK(DeviceName{} == DeviceName{});
}

}  // namespace
}  // namespace dflow
