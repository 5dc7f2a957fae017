#include "tools/convert_command.h"

#include "graph/proto_io.h"
#include "tools/cli_args.h"

namespace dflow {

absl::Status RunConvertCommand(const std::vector<std::string>& args, std::ostream& out) {
  absl::StatusOr<CliArgs> flags = CliArgs::Parse(args, {"graph", "out"});
  if (!flags.ok()) return flags.status();
  absl::StatusOr<std::string> in_path = flags->Require("graph");
  if (!in_path.ok()) return in_path.status();
  absl::StatusOr<std::string> out_path = flags->Require("out");
  if (!out_path.ok()) return out_path.status();
  absl::StatusOr<ProtoFormat> format = FormatFromPath(*out_path);
  if (!format.ok()) return format.status();
  absl::StatusOr<GraphDef> graph_def = ReadGraphDef(*in_path);
  if (!graph_def.ok()) return graph_def.status();
  absl::Status written = WriteProtoFile(*out_path, *graph_def, *format);
  if (!written.ok()) return written;
  out << "wrote " << graph_def->node_size() << " nodes to " << *out_path << " ("
      << (*format == ProtoFormat::kText ? "text" : "binary") << ")\n";
  return absl::OkStatus();
}

}  // namespace dflow
