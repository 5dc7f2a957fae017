// RegisterStandardShapeFns: the shape functions for TF's ops, one family per file.
//
// Functions are grouped by op family (shape_fn_util.h lists the files); ops of one kind
// share one function. Each follows TF's shape function for the op, but reports problems
// in its own words.
#include "graph/shape_fn_util.h"
#include "graph/shape_inference.h"

namespace dflow {

void RegisterStandardShapeFns(ShapeRegistry& registry) {
  shape_fn_util::RegisterMathShapeFns(registry);
  shape_fn_util::RegisterNNShapeFns(registry);
  shape_fn_util::RegisterArrayShapeFns(registry);
  shape_fn_util::RegisterStateShapeFns(registry);
  shape_fn_util::RegisterControlFlowShapeFns(registry);
  shape_fn_util::RegisterLinalgShapeFns(registry);
  shape_fn_util::RegisterSparseShapeFns(registry);
}

}  // namespace dflow
