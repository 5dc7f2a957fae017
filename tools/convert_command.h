// `dflow convert --graph=IN --out=OUT`: rewrites a GraphDef in the format OUT's
// extension names (.pb binary, .pbtxt text). The GraphDef is not validated or
// altered: every field, including ones dflow does not model, survives.
#ifndef DFLOW_TOOLS_CONVERT_COMMAND_H_
#define DFLOW_TOOLS_CONVERT_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dflow {

absl::Status RunConvertCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace dflow

#endif  // DFLOW_TOOLS_CONVERT_COMMAND_H_
