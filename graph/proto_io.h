// Reading and writing protobuf files in binary or text format.
//
// The format of a file being read is told apart by content, never by extension: text
// format is plain printable text, binary protobuf practically never is. Parse errors
// are returned as statuses (with line and column for text) instead of being logged.
#ifndef DFLOW_GRAPH_PROTO_IO_H_
#define DFLOW_GRAPH_PROTO_IO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "proto/graph.pb.h"

namespace dflow {

enum class ProtoFormat { kBinary, kText };

// Whole file contents. NOT_FOUND when missing, INVALID_ARGUMENT for directories or
// files over the 2 GiB protobuf limit.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);
absl::Status WriteStringToFile(const std::string& path, absl::string_view contents);

// kText when `bytes` look like text format (printable text and whitespace only).
ProtoFormat SniffProtoFormat(absl::string_view bytes);

// Parses `bytes` in the format sniffed from them; for text, falls back to binary when
// text parsing fails. `what` names the input in messages (a path, "GraphDef", ...).
absl::Status ParseProto(absl::string_view bytes, absl::string_view what,
                        google::protobuf::Message* message);

// Text-format parsing only; errors carry "line:column". Messages nested deeper than 100
// levels are INVALID_ARGUMENT (the binary parser's limit), not a stack overflow.
absl::Status ParseTextProto(absl::string_view text, absl::string_view what,
                            google::protobuf::Message* message);

absl::Status ReadProtoFile(const std::string& path, google::protobuf::Message* message);
absl::StatusOr<GraphDef> ReadGraphDef(const std::string& path);

// Format from the file name: ".pbtxt"/".txt"/".pbtext" -> text, ".pb" -> binary;
// INVALID_ARGUMENT otherwise.
absl::StatusOr<ProtoFormat> FormatFromPath(absl::string_view path);

// Serialises in `format` (text is TF's style: map entries sorted by key).
absl::StatusOr<std::string> SerializeProto(const google::protobuf::Message& message,
                                           ProtoFormat format);
absl::Status WriteProtoFile(const std::string& path, const google::protobuf::Message& message,
                            ProtoFormat format);

}  // namespace dflow

#endif  // DFLOW_GRAPH_PROTO_IO_H_
