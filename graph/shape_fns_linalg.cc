// Shape functions for the matrix decompositions on batches of matrices ([..., M, N]), as
// TF's linalg_ops.cc, giving their factors' shapes (K = min(M, N)):
//  - Qr: q [..., M, full_matrices ? M : K], r [..., full_matrices ? M : K, N];
//  - Svd: s [..., K]; u [..., M, full ? M : K], v [..., N, full ? N : K] when compute_uv,
//    else both [0];
//  - SelfAdjointEigV2: e [..., N]; v [..., N, N] when compute_v, else [0].
// The gradients of Qr and Svd read these shapes (graph/gradients/decomposition_grads.cc):
// their formulas differ for wide and tall matrices, as TF's do.
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/shape_fn_util.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace dflow {
namespace shape_fn_util {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknownDim;

// The input's shape with rank >= 2, or nullopt when its rank is unknown.
absl::StatusOr<std::optional<std::vector<int64_t>>> MatrixDims(const Ctx& c) {
  const PartialShape& in = c.input(0);
  if (!in.rank_known()) return std::optional<std::vector<int64_t>>();
  if (in.rank() < 2) {
    return Invalid(absl::StrCat("expected a batch of matrices (rank >= 2), got rank ",
                                in.rank()));
  }
  return std::optional<std::vector<int64_t>>(in.dims());
}

int64_t MinDim(int64_t a, int64_t b) {
  if (a == kUnknown || b == kUnknown) return kUnknown;
  return std::min(a, b);
}

// `batch` (the dims before the matrix) followed by `tail`.
PartialShape BatchThen(const std::vector<int64_t>& dims, std::vector<int64_t> tail) {
  std::vector<int64_t> out(dims.begin(), dims.end() - 2);
  out.insert(out.end(), tail.begin(), tail.end());
  return PartialShape(out);
}

absl::Status SquareShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(auto dims, MatrixDims(c));
  if (!dims) return UnchangedShape(c);
  const int64_t m = (*dims)[dims->size() - 2], n = (*dims)[dims->size() - 1];
  if (m != kUnknown && n != kUnknown && m != n) {
    return Invalid(absl::StrCat("expected square matrices, got ", m, "x", n));
  }
  const int64_t side = m == kUnknown ? n : m;
  c.set_output(0, BatchThen(*dims, {side, side}));
  return absl::OkStatus();
}

absl::Status QrShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(auto dims, MatrixDims(c));
  if (!dims) return absl::OkStatus();
  const int64_t m = (*dims)[dims->size() - 2], n = (*dims)[dims->size() - 1];
  const int64_t k = BoolAttr(c, "full_matrices", false) ? m : MinDim(m, n);
  c.set_output(0, BatchThen(*dims, {m, k}));
  c.set_output(1, BatchThen(*dims, {k, n}));
  return absl::OkStatus();
}

absl::Status SvdShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(auto dims, MatrixDims(c));
  if (!dims) return absl::OkStatus();
  const int64_t m = (*dims)[dims->size() - 2], n = (*dims)[dims->size() - 1];
  const int64_t k = MinDim(m, n);
  c.set_output(0, BatchThen(*dims, {k}));
  if (!BoolAttr(c, "compute_uv", true)) {
    c.set_output(1, PartialShape(std::vector<int64_t>{0}));
    c.set_output(2, PartialShape(std::vector<int64_t>{0}));
    return absl::OkStatus();
  }
  const bool full = BoolAttr(c, "full_matrices", false);
  c.set_output(1, BatchThen(*dims, {m, full ? m : k}));
  c.set_output(2, BatchThen(*dims, {n, full ? n : k}));
  return absl::OkStatus();
}

absl::Status SelfAdjointEigShape(Ctx& c) {
  DFLOW_RETURN_IF_ERROR(SquareShape(c));
  if (!c.input(0).rank_known()) return absl::OkStatus();
  const std::vector<int64_t> dims = c.output(0).dims();  // a copy: output 0 changes
  const int64_t n = dims.back();
  c.set_output(0, BatchThen(dims, {n}));
  if (BoolAttr(c, "compute_v", true)) {
    c.set_output(1, BatchThen(dims, {n, n}));
  } else {
    c.set_output(1, PartialShape(std::vector<int64_t>{0}));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterLinalgShapeFns(ShapeRegistry& r) {
  r.Register("Qr", QrShape);
  r.Register("Svd", SvdShape);
  r.Register("SelfAdjointEigV2", SelfAdjointEigShape);
}

}  // namespace shape_fn_util
}  // namespace dflow
