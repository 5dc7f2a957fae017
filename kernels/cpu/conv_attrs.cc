#include "kernels/cpu/conv_attrs.h"

#include <string>

#include "graph/status_macros.h"

namespace dflow {

absl::StatusOr<ConvAttrs> ParseConvAttrs(OpKernelConstruction* c) {
  std::string format, padding;
  std::vector<int64_t> strides, dilations{1, 1, 1, 1}, pads;
  DFLOW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  DFLOW_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  DFLOW_RETURN_IF_ERROR(c->GetAttr("strides", &strides));
  if (c->HasAttr("dilations")) DFLOW_RETURN_IF_ERROR(c->GetAttr("dilations", &dilations));
  if (c->HasAttr("explicit_paddings")) {
    DFLOW_RETURN_IF_ERROR(c->GetAttr("explicit_paddings", &pads));
  }
  ConvAttrs attrs;
  DFLOW_ASSIGN_OR_RETURN(attrs.layout, ParseDataFormat(format));
  DFLOW_ASSIGN_OR_RETURN(attrs.padding, ParsePadding(padding, /*allow_explicit=*/true));
  DFLOW_ASSIGN_OR_RETURN(attrs.strides, SpatialPairFromFour(strides, attrs.layout, "strides"));
  DFLOW_ASSIGN_OR_RETURN(attrs.dilations,
                         SpatialPairFromFour(dilations, attrs.layout, "dilations"));
  DFLOW_ASSIGN_OR_RETURN(attrs.explicit_pads,
                         ParseExplicitPaddings(attrs.padding, pads, attrs.layout));
  return attrs;
}

}  // namespace dflow
