// Shape functions for sparse tensors and candidate sampling, as TF's sparse_ops.cc and
// candidate_sampling_ops.cc give them:
//  - SparseToDense: the value of `output_shape` (dims as far as known);
//  - SparseTensorDenseMatMul: [rows of op(A), columns of op(B)], A's dims from the value
//    of `a_shape`;
//  - the candidate samplers: [num_sampled], [batch, num_true], [num_sampled];
//  - ComputeAccidentalHits: three vectors of one unknown length.
#include <vector>

#include "graph/shape_fn_util.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace dflow {
namespace shape_fn_util {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknownDim;

absl::Status SparseToDenseShape(Ctx& c) {
  absl::StatusOr<PartialShape> shape = c.InputAsShape(1);
  c.set_output(0, shape.ok() ? *shape : PartialShape());
  return absl::OkStatus();
}

absl::Status SparseDenseMatMulShape(Ctx& c) {
  const bool adjoint_a = BoolAttr(c, "adjoint_a", false);
  const bool adjoint_b = BoolAttr(c, "adjoint_b", false);
  int64_t rows = kUnknown, cols = kUnknown;
  absl::StatusOr<PartialShape> a = c.InputAsShape(2);
  if (a.ok() && a->rank_known() && a->rank() == 2) rows = a->dim(adjoint_a ? 1 : 0);
  const PartialShape& b = c.input(3);
  if (b.rank_known() && b.rank() == 2) cols = b.dim(adjoint_b ? 0 : 1);
  c.set_output(0, PartialShape(std::vector<int64_t>{rows, cols}));
  return absl::OkStatus();
}

absl::Status CandidateSamplerShape(Ctx& c) {
  const int64_t sampled = IntAttr(c, "num_sampled", kUnknown);
  const int64_t num_true = IntAttr(c, "num_true", kUnknown);
  const PartialShape& truth = c.input(0);
  const int64_t batch = truth.rank_known() && truth.rank() == 2 ? truth.dim(0) : kUnknown;
  c.set_output(0, PartialShape(std::vector<int64_t>{sampled}));
  c.set_output(1, PartialShape(std::vector<int64_t>{batch, num_true}));
  c.set_output(2, PartialShape(std::vector<int64_t>{sampled}));
  return absl::OkStatus();
}

absl::Status AccidentalHitsShape(Ctx& c) {
  for (int i = 0; i < 3; ++i) c.set_output(i, PartialShape::UnknownOfRank(1));
  return absl::OkStatus();
}

}  // namespace

void RegisterSparseShapeFns(ShapeRegistry& r) {
  r.Register("SparseToDense", SparseToDenseShape);
  r.Register("SparseTensorDenseMatMul", SparseDenseMatMulShape);
  RegisterAll(r, {"UniformCandidateSampler", "LogUniformCandidateSampler",
                  "AllCandidateSampler"},
              CandidateSamplerShape);
  r.Register("ComputeAccidentalHits", AccidentalHitsShape);
}

}  // namespace shape_fn_util
}  // namespace dflow
