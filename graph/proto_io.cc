#include "graph/proto_io.h"

#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace dflow {
namespace {

constexpr int64_t kMaxProtoBytes = (int64_t{1} << 31) - 1;
// How deep messages may nest in text format, as protobuf's binary parser allows.
constexpr int kMaxProtoNesting = 100;

// Keeps the first text-format error instead of letting protobuf log it.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (error_.empty()) error_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }
  void AddWarning(int, int, const std::string&) override {}
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

bool LooksLikeText(unsigned char c) {
  return c == '\t' || c == '\n' || c == '\r' || c >= 0x20;
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(absl::StrCat("File not found: ", path));
  }
  if (S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is a directory, not a file"));
  }
  if (info.st_size > kMaxProtoBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is ", info.st_size, " bytes, over the 2 GiB protobuf limit"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::PermissionDeniedError(absl::StrCat("Cannot open ", path));
  std::string contents(static_cast<size_t>(info.st_size), '\0');
  in.read(contents.data(), info.st_size);
  if (!in) return absl::DataLossError(absl::StrCat("Cannot read all of ", path));
  return contents;
}

absl::Status WriteStringToFile(const std::string& path, absl::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("Cannot write ", path));
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("Failed writing ", path));
  return absl::OkStatus();
}

ProtoFormat SniffProtoFormat(absl::string_view bytes) {
  for (unsigned char c : bytes) {
    if (!LooksLikeText(c)) return ProtoFormat::kBinary;
  }
  return ProtoFormat::kText;
}

absl::Status ParseTextProto(absl::string_view text, absl::string_view what,
                            google::protobuf::Message* message) {
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  // The text parser recurses once per nested message and has no limit of its own: a
  // GraphDef nesting attr values 3,000 deep overflowed the stack. The binary parser's
  // default (100) is far above what TF writes (a few levels of func attrs).
  parser.SetRecursionLimit(kMaxProtoNesting);
  if (parser.ParseFromString(std::string(text), message)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Cannot parse ", what, " as a text-format ",
                   message->GetDescriptor()->name(), ": ", errors.error()));
}

absl::Status ParseProto(absl::string_view bytes, absl::string_view what,
                        google::protobuf::Message* message) {
  if (bytes.size() > static_cast<size_t>(kMaxProtoBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is over the 2 GiB limit"));
  }
  if (SniffProtoFormat(bytes) == ProtoFormat::kText) {
    absl::Status text_status = ParseTextProto(bytes, what, message);
    if (text_status.ok()) return text_status;
    message->Clear();
    if (message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::OkStatus();
    }
    message->Clear();
    return text_status;
  }
  if (message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::OkStatus();
  }
  message->Clear();
  return absl::InvalidArgumentError(
      absl::StrCat("Cannot parse ", what, " as a binary ", message->GetDescriptor()->name(),
                   ": the bytes are not a valid protobuf of that type"));
}

absl::Status ReadProtoFile(const std::string& path, google::protobuf::Message* message) {
  absl::StatusOr<std::string> contents = ReadFileToString(path);
  if (!contents.ok()) return contents.status();
  return ParseProto(*contents, path, message);
}

absl::StatusOr<GraphDef> ReadGraphDef(const std::string& path) {
  GraphDef graph_def;
  absl::Status status = ReadProtoFile(path, &graph_def);
  if (!status.ok()) return status;
  return graph_def;
}

absl::StatusOr<ProtoFormat> FormatFromPath(absl::string_view path) {
  if (absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".pbtext") ||
      absl::EndsWith(path, ".txt")) {
    return ProtoFormat::kText;
  }
  if (absl::EndsWith(path, ".pb")) return ProtoFormat::kBinary;
  return absl::InvalidArgumentError(absl::StrCat(
      "Cannot tell the output format of '", path, "': use a .pb or .pbtxt extension"));
}

absl::StatusOr<std::string> SerializeProto(const google::protobuf::Message& message,
                                           ProtoFormat format) {
  std::string out;
  if (format == ProtoFormat::kBinary) {
    if (!message.SerializeToString(&out)) {
      return absl::InternalError("protobuf serialization failed");
    }
    return out;
  }
  google::protobuf::TextFormat::Printer printer;
  if (!printer.PrintToString(message, &out)) {
    return absl::InternalError("text-format printing failed");
  }
  return out;
}

absl::Status WriteProtoFile(const std::string& path, const google::protobuf::Message& message,
                            ProtoFormat format) {
  absl::StatusOr<std::string> bytes = SerializeProto(message, format);
  if (!bytes.ok()) return bytes.status();
  return WriteStringToFile(path, *bytes);
}

}  // namespace dflow
