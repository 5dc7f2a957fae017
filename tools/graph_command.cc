#include "tools/graph_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "graph/proto_io.h"
#include "graph/status_macros.h"
#include "session/session.h"
#include "tools/cli_args.h"
#include "tools/graph_dot.h"
#include "tools/place_command.h"

namespace dflow {
namespace {

// A temporary file removed when this goes out of scope.
class TempFile {
 public:
  static absl::StatusOr<std::unique_ptr<TempFile>> Create(const std::string& contents) {
    std::string path = "/tmp/dflow_graph_XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0) return absl::InternalError("cannot create a temporary file in /tmp");
    close(fd);
    auto file = std::unique_ptr<TempFile>(new TempFile(path));
    DFLOW_RETURN_IF_ERROR(WriteStringToFile(path, contents));
    return file;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  explicit TempFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::StatusOr<std::string> PlacedDot(const CliArgs& flags) {
  DFLOW_ASSIGN_OR_RETURN(std::string path, flags.Require("graph"));
  DFLOW_ASSIGN_OR_RETURN(GraphDef graph_def, ReadGraphDef(path));
  ConfigProto config;
  if (flags.Has("config")) {
    DFLOW_RETURN_IF_ERROR(ParseTextProto(flags.Get("config"), "--config", &config));
  }
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(config));
  DFLOW_RETURN_IF_ERROR(session->Create(graph_def));
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                         ImportPlacedGraph(graph_def, session->placement()));
  return PlacedGraphDot(*graph);
}

}  // namespace

absl::StatusOr<std::string> RenderDotAsSvg(const std::string& dot) {
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<TempFile> input, TempFile::Create(dot));
  // The path is ours (mkstemp: letters and digits), so the shell needs no quoting.
  FILE* pipe = popen(absl::StrCat("dot -Tsvg ", input->path(), " 2>&1").c_str(), "r");
  if (pipe == nullptr) return absl::InternalError("cannot start Graphviz's dot");
  std::string output;
  char buffer[1 << 16];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return absl::FailedPreconditionError(
        "--format=svg needs Graphviz's dot, which is not installed (Debian package "
        "graphviz; tools/setup.sh installs it); --format=dot needs nothing");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("Graphviz's dot failed: ", output.substr(0, 500)));
  }
  return output;
}

absl::Status RunGraphCommand(const std::vector<std::string>& args, std::ostream& out) {
  DFLOW_ASSIGN_OR_RETURN(CliArgs flags, CliArgs::Parse(args, {"graph", "config", "format",
                                                              "out"}));
  const std::string format = flags.Get("format", "dot");
  if (format != "dot" && format != "svg") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", format, ": expected dot or svg"));
  }
  if (flags.Has("out") && flags.Get("out").empty()) {
    return absl::InvalidArgumentError("--out needs a file path");
  }
  DFLOW_ASSIGN_OR_RETURN(std::string drawing, PlacedDot(flags));
  if (format == "svg") {
    DFLOW_ASSIGN_OR_RETURN(drawing, RenderDotAsSvg(drawing));
  }
  if (flags.Has("out")) return WriteStringToFile(flags.Get("out"), drawing);
  out << drawing;
  return absl::OkStatus();
}

}  // namespace dflow
