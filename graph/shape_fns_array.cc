// Shape functions for array ops: ops whose output shape comes from a shape argument
// (Fill, BroadcastTo, random ops), Shape/Size/Rank, Reshape, ops that rearrange dims
// (Transpose, Concat, Pack, Unpack, ExpandDims, Squeeze, Pad, Tile), slicing
// (StridedSlice, Slice, Gather, OneHot, GatherNd, ScatterNd, ConcatOffset) and
// Split/SplitV.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/node_def_util.h"
#include "graph/shape_fn_util.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace dflow {
namespace shape_fn_util {
namespace {

// ---------------------------------------------------------------- values

std::optional<int64_t> ElementAt(const PartialValue* value, int64_t i) {
  if (value == nullptr || i < 0 || i >= static_cast<int64_t>(value->size())) return {};
  return (*value)[i].value;
}

// Output 0's value: the concatenated values of inputs [first, first + count), if all known.
void SetConcatenatedValue(Ctx& c, int first, int count) {
  PartialValue out;
  for (int i = first; i < first + count; ++i) {
    const PartialValue* v = c.input_partial_value(i);
    if (v == nullptr) return;
    out.insert(out.end(), v->begin(), v->end());
  }
  c.set_output_value(0, std::move(out));
}

// Output 0's value: elements start, start+stride, ... (count of them) of input 0's.
void SetSlicedValue(Ctx& c, int64_t start, int64_t count, int64_t stride) {
  const PartialValue* v = c.input_partial_value(0);
  if (v == nullptr || count < 0 || count > kMaxTrackedValueElements) return;
  PartialValue out;
  for (int64_t k = 0; k < count; ++k) {
    int64_t index;
    if (__builtin_mul_overflow(k, stride, &index) || __builtin_add_overflow(start, index, &index) ||
        index < 0 || index >= static_cast<int64_t>(v->size())) {
      return;
    }
    out.push_back((*v)[index]);
  }
  c.set_output_value(0, std::move(out));
}

// ---------------------------------------------------------------- shape helpers

absl::StatusOr<PartialShape> UnknownOfRank(int64_t rank) {
  if (rank < 0 || rank > kMaxShapeRank) {
    return Invalid(absl::StrCat("Rank ", rank, " is outside [0, ", kMaxShapeRank, "]"));
  }
  return PartialShape::UnknownOfRank(static_cast<int>(rank));
}

int64_t RankOrUnknown(const PartialShape& s) { return s.rank_known() ? s.rank() : kUnknown; }

// Dim i of `s`, unknown when the rank is. REQUIRES: i < rank when the rank is known.
int64_t DimOrUnknown(const PartialShape& s, int i) { return s.rank_known() ? s.dim(i) : kUnknown; }

// The length of a vector argument; an error when it is not a vector.
absl::StatusOr<int64_t> VectorLength(const PartialShape& s) {
  DFLOW_RETURN_IF_ERROR(WithRank(s, 1).status());
  return DimOrUnknown(s, 0);
}

// ---------------------------------------------------------------- shape arguments

// Fill, RandomUniform, ...: the output shape is input `shape_input` read as a shape.
absl::Status ShapeFromInput(Ctx& c, int shape_input) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape out, c.InputAsShape(shape_input));
  c.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status FillShape(Ctx& c) {
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(1), 0).status());
  return ShapeFromInput(c, 0);
}

absl::Status BroadcastToShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape target, c.InputAsShape(1));
  const PartialShape& in = c.input(0);
  if (in.rank_known() && target.rank_known()) {
    if (in.rank() > target.rank()) {
      return Invalid(absl::StrCat("Rank of input (", in.rank(),
                                  ") must be no greater than rank of output shape (", target.rank(),
                                  ")"));
    }
    DFLOW_ASSIGN_OR_RETURN(target, BroadcastShapes(in, target));
  }
  c.set_output(0, std::move(target));
  return absl::OkStatus();
}

// Shape and ShapeN: output i is [rank of input i]; its value is input i's dims, with
// unknown dims remembered as "dim d of that tensor".
absl::Status ShapeOfShape(Ctx& c) {
  for (int i = 0; i < c.num_outputs(); ++i) {
    const PartialShape& in = c.input(i);
    c.set_output(i, PartialShape({RankOrUnknown(in)}));
    if (!in.rank_known()) continue;
    PartialValue value;
    for (int d = 0; d < in.rank(); ++d) {
      ValueElement e =
          in.dim(d) == kUnknown ? ValueElement::Unknown() : ValueElement::Known(in.dim(d));
      if (in.dim(d) == kUnknown && c.input_source(i).node >= 0) {
        e.dim_of = c.input_source(i);
        e.dim_index = d;
      }
      value.push_back(e);
    }
    c.set_output_value(i, std::move(value));
  }
  return absl::OkStatus();
}

absl::Status SizeShape(Ctx& c) {
  c.set_output(0, PartialShape::Scalar());
  if (std::optional<int64_t> n = c.input(0).NumElements()) {
    c.set_output_value(0, {ValueElement::Known(*n)});
  }
  return absl::OkStatus();
}

absl::Status RankShape(Ctx& c) {
  c.set_output(0, PartialShape::Scalar());
  if (c.input(0).rank_known()) c.set_output_value(0, {ValueElement::Known(c.input(0).rank())});
  return absl::OkStatus();
}

// ---------------------------------------------------------------- Reshape

// The product of the known dims of `s` outside `skip` and the index of its one unknown
// dim: -1 when none, kSeveral when more than one.
struct KnownPart {
  static constexpr int kSeveral = -2;
  int64_t product = 1;
  int unknown = -1;
};

absl::StatusOr<KnownPart> KnownPartOf(const PartialShape& s, const std::vector<bool>& skip) {
  KnownPart part;
  for (int i = 0; i < s.rank(); ++i) {
    if (skip[i]) continue;
    if (s.dim(i) != kUnknown) {
      DFLOW_ASSIGN_OR_RETURN(part.product, MultiplyDims(part.product, s.dim(i)));
    } else {
      part.unknown = part.unknown == -1 ? i : KnownPart::kSeveral;
    }
  }
  return part;
}

// Marks pairs (input dim, output dim) that are provably equal though unknown: elements of
// the shape argument that were read from Shape(input).
void MatchSymbolicDims(const Ctx& c, const PartialShape& in, std::vector<bool>* skip_in,
                       std::vector<bool>* skip_out) {
  const PartialValue* v = c.input_partial_value(1);
  if (v == nullptr || v->size() != skip_out->size() || c.input_source(0).node < 0) return;
  for (size_t i = 0; i < v->size(); ++i) {
    const ValueElement& e = (*v)[i];
    if (e.value.has_value() || !e.dim_of.has_value() || !(*e.dim_of == c.input_source(0))) {
      continue;
    }
    const int d = e.dim_index;
    if (d < in.rank() && in.dim(d) == kUnknown && !(*skip_in)[d]) {
      (*skip_in)[d] = true;
      (*skip_out)[i] = true;
    }
  }
}

absl::Status ReshapeMismatch(const Ctx& c, const PartialShape& in, const PartialShape& out) {
  const std::vector<int64_t>* requested = c.input_value(1);
  const std::string target = requested != nullptr
                                 ? absl::StrCat("[", absl::StrJoin(*requested, ","), "]")
                                 : out.ToString();
  if (std::optional<int64_t> n = in.NumElements()) {
    std::optional<int64_t> m = out.NumElements();
    return Invalid(absl::StrCat("Cannot reshape a tensor with ", *n, " elements to shape ", target,
                                m.has_value() ? absl::StrCat(" (", *m, " elements)") : ""));
  }
  return Invalid(
      absl::StrCat("Cannot reshape a tensor of shape ", in.ToString(), " to shape ", target));
}

// TF's SetOutputShapeForReshape: fills the output's one unknown dim from the element
// count, or checks that counts agree.
absl::StatusOr<PartialShape> ResolveReshape(const Ctx& c, const PartialShape& in,
                                            const PartialShape& out) {
  std::vector<bool> skip_in(in.rank()), skip_out(out.rank());
  MatchSymbolicDims(c, in, &skip_in, &skip_out);
  DFLOW_ASSIGN_OR_RETURN(KnownPart i, KnownPartOf(in, skip_in));
  DFLOW_ASSIGN_OR_RETURN(KnownPart o, KnownPartOf(out, skip_out));
  if (i.unknown == KnownPart::kSeveral || o.unknown == KnownPart::kSeveral) return out;
  std::vector<int64_t> dims = out.dims();
  if (i.unknown < 0 && o.unknown < 0) {
    if (i.product != o.product) return ReshapeMismatch(c, in, out);
  } else if (i.unknown < 0) {
    if (o.product == 0) return out;
    if (i.product % o.product != 0) return ReshapeMismatch(c, in, out);
    dims[o.unknown] = i.product / o.product;
  } else if (o.unknown < 0) {
    if (i.product != 0 && o.product % i.product != 0) return ReshapeMismatch(c, in, out);
  } else if (i.product == o.product) {
    dims[o.unknown] = in.dim(i.unknown);
  }
  return PartialShape(std::move(dims));
}

absl::Status ReshapeShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape out, c.InputAsShape(1));
  const std::vector<int64_t>* requested = c.input_value(1);
  if (requested != nullptr && std::count(requested->begin(), requested->end(), -1) > 1) {
    return Invalid(absl::StrCat("Reshape can infer only one dimension, but shape [",
                                absl::StrJoin(*requested, ","), "] has several -1"));
  }
  const PartialShape& in = c.input(0);
  if (in.rank_known() && out.rank_known()) {
    DFLOW_ASSIGN_OR_RETURN(out, ResolveReshape(c, in, out));
  }
  c.set_output(0, std::move(out));
  ForwardValue(c, 0, 0);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- rearranging dims

absl::Status TransposeShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  const std::vector<int64_t>* perm = c.input_value(1);
  if (perm == nullptr) {
    DFLOW_ASSIGN_OR_RETURN(int64_t length, VectorLength(c.input(1)));
    DFLOW_ASSIGN_OR_RETURN(int64_t rank, MergeDims(RankOrUnknown(in), length));
    if (rank == kUnknown) return absl::OkStatus();
    DFLOW_ASSIGN_OR_RETURN(PartialShape out, UnknownOfRank(rank));
    c.set_output(0, rank <= 1 ? in : std::move(out));
    return absl::OkStatus();
  }
  const int n = static_cast<int>(perm->size());
  if (in.rank_known() && in.rank() != n) {
    return Invalid(absl::StrCat("perm has ", n, " elements but the input has rank ", in.rank()));
  }
  std::vector<bool> seen(n, false);
  std::vector<int64_t> dims(n);
  for (int i = 0; i < n; ++i) {
    const int64_t p = (*perm)[i];
    if (p < 0 || p >= n || seen[p]) {
      return Invalid(absl::StrCat("perm [", absl::StrJoin(*perm, ","),
                                  "] is not a permutation of 0..", n - 1));
    }
    seen[p] = true;
    dims[i] = in.rank_known() ? in.dim(p) : kUnknown;
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// ConcatV2 (axis last) and Concat (axis first) over inputs [first, first + count).
absl::Status ConcatShape(Ctx& c, int first, int count, int axis_input) {
  int rank = -1;
  for (int i = first; i < first + count; ++i) {
    if (!c.input(i).rank_known()) continue;
    if (rank >= 0 && c.input(i).rank() != rank) {
      return Invalid(
          absl::StrCat("Shapes must be equal rank, but are ", rank, " and ", c.input(i).rank()));
    }
    rank = c.input(i).rank();
  }
  const std::optional<int64_t> axis = ScalarValue(c, axis_input);
  if (rank < 0) return absl::OkStatus();
  if (!axis.has_value()) {
    c.set_output(0, PartialShape::UnknownOfRank(rank));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(int a, CanonicalAxis(*axis, rank, "Concat axis"));
  std::vector<int64_t> dims(rank, kUnknown);
  int64_t total = 0;
  int merged_from = -1;  // the first input with a known rank, for messages
  for (int i = first; i < first + count; ++i) {
    const PartialShape& s = c.input(i);
    if (!s.rank_known()) {
      total = kUnknown;
      continue;
    }
    if (merged_from < 0) merged_from = i;
    for (int d = 0; d < rank; ++d) {
      if (d == a) continue;
      absl::StatusOr<int64_t> merged = MergeDims(dims[d], s.dim(d));
      if (!merged.ok()) {
        // TF's shape function names the dimension of the shapes less the axis (its
        // "Dimension 0" for [2,3] vs [2,4] on axis 0); this names the real one.
        return Invalid(absl::StrCat("Dimension ", d, " in both shapes must be equal, but are ",
                                    dims[d], " and ", s.dim(d), ". Shapes are ",
                                    c.input(merged_from).ToString(), " and ", s.ToString(),
                                    " (concatenating on axis ", a, ")"));
      }
      dims[d] = *merged;
    }
    DFLOW_ASSIGN_OR_RETURN(total, AddDims(total, s.dim(a)));
  }
  dims[a] = total;
  c.set_output(0, PartialShape(std::move(dims)));
  if (rank == 1) SetConcatenatedValue(c, first, count);
  return absl::OkStatus();
}

absl::Status PackShape(Ctx& c) {
  PartialShape merged;
  for (int i = 0; i < c.num_inputs(); ++i) {
    DFLOW_ASSIGN_OR_RETURN(merged, MergeShapes(merged, c.input(i)));
  }
  if (!merged.rank_known()) return absl::OkStatus();
  DFLOW_ASSIGN_OR_RETURN(int axis,
                         CanonicalAxis(IntAttr(c, "axis", 0), merged.rank() + 1, "Pack axis"));
  c.set_output(0, Inserted(merged, axis, c.num_inputs()));
  if (axis == 0) SetConcatenatedValue(c, 0, c.num_inputs());
  return absl::OkStatus();
}

absl::Status UnpackShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  if (!in.rank_known()) return absl::OkStatus();
  DFLOW_ASSIGN_OR_RETURN(int axis, CanonicalAxis(IntAttr(c, "axis", 0), in.rank(), "Unpack axis"));
  DFLOW_RETURN_IF_ERROR(MergeDims(in.dim(axis), c.num_outputs()).status());
  const PartialValue* value = c.input_partial_value(0);
  for (int i = 0; i < c.num_outputs(); ++i) {
    c.set_output(i, Removed(in, axis));
    if (in.rank() == 1 && value != nullptr && value->size() == c.num_outputs()) {
      c.set_output_value(i, {(*value)[i]});
    }
  }
  return absl::OkStatus();
}

absl::Status ExpandDimsShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  ForwardValue(c, 0, 0);
  if (!in.rank_known()) return absl::OkStatus();
  const std::optional<int64_t> dim = ScalarValue(c, 1);
  if (!dim.has_value()) {
    c.set_output(0, PartialShape::UnknownOfRank(in.rank() + 1));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(int axis, CanonicalAxis(*dim, in.rank() + 1, "ExpandDims dim"));
  c.set_output(0, Inserted(in, axis, 1));
  return absl::OkStatus();
}

absl::Status SqueezeShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  ForwardValue(c, 0, 0);
  if (!in.rank_known()) return absl::OkStatus();
  const std::vector<int64_t> listed = IntListAttr(c, "squeeze_dims");
  DFLOW_ASSIGN_OR_RETURN(std::vector<bool> drop, AxisSet(listed, in.rank(), "Squeeze dim"));
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t d = in.dim(i);
    if (listed.empty()) {
      if (d == kUnknown) return absl::OkStatus();  // it may or may not be squeezed
      if (d == 1) continue;
    } else if (drop[i]) {
      if (d != 1 && d != kUnknown) {
        return Invalid(
            absl::StrCat("Can not squeeze dim[", i, "], expected a dimension of 1, got ", d));
      }
      continue;
    }
    dims.push_back(d);
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// Pad, PadV2, MirrorPad: input 1 is a [rank, 2] tensor of (before, after) paddings.
absl::Status PadShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(1), 2).status());
  DFLOW_RETURN_IF_ERROR(MergeDims(DimOrUnknown(c.input(1), 1), 2).status());
  DFLOW_ASSIGN_OR_RETURN(int64_t rank, MergeDims(RankOrUnknown(in), DimOrUnknown(c.input(1), 0)));
  const std::vector<int64_t>* pads = c.input_value(1);
  if (pads == nullptr) {
    if (rank == kUnknown) return absl::OkStatus();
    DFLOW_ASSIGN_OR_RETURN(PartialShape out, UnknownOfRank(rank));
    c.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(rank, MergeDims(rank, static_cast<int64_t>(pads->size() / 2)));
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t before = (*pads)[2 * i], after = (*pads)[2 * i + 1];
    if (before < 0 || after < 0) {
      return Invalid(absl::StrCat("Paddings must be non-negative, got [", before, ", ", after,
                                  "] for dimension ", i));
    }
    DFLOW_ASSIGN_OR_RETURN(int64_t d, AddDims(DimOrUnknown(in, static_cast<int>(i)), before));
    DFLOW_ASSIGN_OR_RETURN(dims[i], AddDims(d, after));
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

absl::Status TileShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  const PartialValue* multiples = c.input_partial_value(1);
  DFLOW_ASSIGN_OR_RETURN(int64_t length, VectorLength(c.input(1)));
  DFLOW_ASSIGN_OR_RETURN(int64_t rank, MergeDims(RankOrUnknown(in), length));
  if (multiples != nullptr) {
    DFLOW_ASSIGN_OR_RETURN(rank, MergeDims(rank, static_cast<int64_t>(multiples->size())));
  }
  if (rank == kUnknown) return absl::OkStatus();
  DFLOW_RETURN_IF_ERROR(UnknownOfRank(rank).status());
  std::vector<int64_t> dims(rank, kUnknown);
  for (int i = 0; i < rank; ++i) {
    const std::optional<int64_t> m = ElementAt(multiples, i);
    if (m.has_value() && *m < 0) {
      return Invalid(absl::StrCat("Tile multiples must be non-negative, got ", *m));
    }
    DFLOW_ASSIGN_OR_RETURN(
        dims[i], MultiplyDims(DimOrUnknown(in, static_cast<int>(i)), m.value_or(kUnknown)));
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- slicing

// One StridedSlice dimension, as the (dense) begin/end/stride and mask bits.
struct SliceSpec {
  int64_t begin, end, stride;
  bool begin_masked, end_masked, shrink;
};
// Elements start, start + stride, ... (count of them) of one dimension.
struct DimSlice {
  int64_t start;
  int64_t count;
};

// TF's ValidateStridedSliceOp for one dimension of known size.
absl::StatusOr<DimSlice> SliceKnownDim(int64_t dim, const SliceSpec& s, int index) {
  if (s.shrink) {
    const int64_t x = s.begin < 0 ? dim + s.begin : s.begin;
    if (x < 0 || x >= dim) {
      return Invalid(
          absl::StrCat("slice index ", s.begin, " of dimension ", index, " out of bounds"));
    }
    return DimSlice{x, 1};
  }
  const bool forward = s.stride > 0;
  const int64_t lo = forward ? 0 : -1, hi = forward ? dim : dim - 1;
  auto canonical = [&](int64_t x, bool masked, bool is_begin) {
    if (masked) return forward == is_begin ? lo : hi;
    return std::clamp(x < 0 ? dim + x : x, lo, hi);
  };
  const int64_t b = canonical(s.begin, s.begin_masked, true);
  const int64_t e = canonical(s.end, s.end_masked, false);
  const int64_t length = e - b;
  if (length == 0 || (length < 0) != (s.stride < 0)) return DimSlice{b, 0};
  return DimSlice{b, length / s.stride + (length % s.stride != 0 ? 1 : 0)};
}

bool Bit(int64_t mask, int i) { return i < 63 && ((mask >> i) & 1) != 0; }

// Without constant begin/end/strides, only the rank is known (when the spec's length is).
absl::Status StridedSliceRankOnly(Ctx& c, const PartialShape& in, int64_t shrink_mask) {
  const PartialShape& spec = c.input(1);
  if (!spec.rank_known() || spec.rank() != 1 || spec.dim(0) == kUnknown ||
      spec.dim(0) > in.rank()) {
    return absl::OkStatus();
  }
  int dropped = 0;
  for (int i = 0; i < spec.dim(0); ++i) dropped += Bit(shrink_mask, i) ? 1 : 0;
  c.set_output(0, PartialShape::UnknownOfRank(in.rank() - dropped));
  return absl::OkStatus();
}

// StridedSlice without ellipsis or new axes (those fall back to an unknown shape).
absl::Status StridedSliceShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  const int64_t shrink_mask = IntAttr(c, "shrink_axis_mask", 0);
  if (IntAttr(c, "ellipsis_mask", 0) != 0 || IntAttr(c, "new_axis_mask", 0) != 0 ||
      !in.rank_known()) {
    return absl::OkStatus();
  }
  const std::vector<int64_t>*begin = c.input_value(1), *end = c.input_value(2),
        *strides = c.input_value(3);
  if (begin == nullptr || end == nullptr || strides == nullptr) {
    return StridedSliceRankOnly(c, in, shrink_mask);
  }
  const size_t n = begin->size();
  if (end->size() != n || strides->size() != n) {
    return Invalid(absl::StrCat("begin, end and strides must have the same length, got ", n, ", ",
                                end->size(), " and ", strides->size()));
  }
  if (n > static_cast<size_t>(in.rank())) {
    return Invalid(absl::StrCat("begin has ", n, " elements but the input has rank ", in.rank()));
  }
  const int64_t begin_mask = IntAttr(c, "begin_mask", 0), end_mask = IntAttr(c, "end_mask", 0);
  std::vector<int64_t> dims;
  std::optional<DimSlice> first;
  for (int i = 0; i < in.rank(); ++i) {
    if (i >= static_cast<int>(n)) {
      dims.push_back(in.dim(i));
      continue;
    }
    const SliceSpec s{(*begin)[i],        (*end)[i],        (*strides)[i],
                      Bit(begin_mask, i), Bit(end_mask, i), Bit(shrink_mask, i)};
    if (s.stride == 0) return Invalid(absl::StrCat("strides[", i, "] must be non-zero"));
    if (in.dim(i) == kUnknown) {
      if (!s.shrink) dims.push_back(kUnknown);
      continue;
    }
    DFLOW_ASSIGN_OR_RETURN(DimSlice d, SliceKnownDim(in.dim(i), s, i));
    if (!s.shrink) dims.push_back(d.count);
    if (i == 0) first = d;
  }
  c.set_output(0, PartialShape(std::move(dims)));
  if (in.rank() == 1 && first.has_value()) {
    SetSlicedValue(c, first->start, first->count, (*strides)[0]);
  }
  return absl::OkStatus();
}

// Size of Slice's output along one dim (begin `b`, size `s`, input dim `dim`).
absl::StatusOr<int64_t> SliceDimSize(std::optional<int64_t> b, std::optional<int64_t> s,
                                     int64_t dim, int i) {
  if (b.has_value() && (*b < 0 || (dim != kUnknown && *b > dim))) {
    return Invalid(absl::StrCat("Expected begin[", i, "] in [0, ", dim, "], but got ", *b));
  }
  if (!s.has_value()) return kUnknown;
  if (*s == -1) return b.has_value() && dim != kUnknown ? dim - *b : kUnknown;
  if (*s < -1) return Invalid(absl::StrCat("Expected size[", i, "] >= -1, but got ", *s));
  if (b.has_value() && dim != kUnknown && *s > dim - *b) {
    return Invalid(absl::StrCat("Expected begin[", i, "] + size[", i, "] <= ", dim, ", but got ",
                                *b, " + ", *s));
  }
  return *s;
}

absl::Status SliceShape(Ctx& c) {
  const PartialShape& in = c.input(0);
  const PartialValue *begin = c.input_partial_value(1), *size = c.input_partial_value(2);
  DFLOW_ASSIGN_OR_RETURN(int64_t begin_length, VectorLength(c.input(1)));
  DFLOW_ASSIGN_OR_RETURN(int64_t size_length, VectorLength(c.input(2)));
  DFLOW_ASSIGN_OR_RETURN(int64_t rank, MergeDims(begin_length, size_length));
  DFLOW_ASSIGN_OR_RETURN(rank, MergeDims(rank, RankOrUnknown(in)));
  if (rank == kUnknown) return absl::OkStatus();
  DFLOW_ASSIGN_OR_RETURN(PartialShape out, UnknownOfRank(rank));
  std::vector<int64_t> dims = out.dims();
  for (int i = 0; i < rank; ++i) {
    DFLOW_ASSIGN_OR_RETURN(dims[i], SliceDimSize(ElementAt(begin, i), ElementAt(size, i),
                                                 DimOrUnknown(in, static_cast<int>(i)), i));
  }
  c.set_output(0, PartialShape(dims));
  const std::optional<int64_t> b = ElementAt(begin, 0);
  if (rank == 1 && b.has_value() && dims[0] != kUnknown) SetSlicedValue(c, *b, dims[0], 1);
  return absl::OkStatus();
}

// Output 0's value: input 0's (a vector) elements at the indices in input 1.
void SetGatheredValue(Ctx& c) {
  const PartialValue* params = c.input_partial_value(0);
  const std::vector<int64_t>* indices = c.input_value(1);
  if (params == nullptr || indices == nullptr) return;
  PartialValue out;
  for (int64_t index : *indices) {
    if (index < 0 || index >= static_cast<int64_t>(params->size())) return;
    out.push_back((*params)[index]);
  }
  c.set_output_value(0, std::move(out));
}

// Gather/GatherV2: params[:axis] + indices[batch_dims:] + params[axis+1:].
absl::Status GatherShapeAlong(Ctx& c, std::optional<int64_t> axis, int64_t batch_dims) {
  const PartialShape &params = c.input(0), &indices = c.input(1);
  if (!params.rank_known() || !indices.rank_known()) return absl::OkStatus();
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims < 0 || batch_dims > indices.rank()) {
    return Invalid(absl::StrCat("batch_dims is out of range for indices of rank ", indices.rank()));
  }
  if (!axis.has_value()) {
    DFLOW_ASSIGN_OR_RETURN(PartialShape out,
                           UnknownOfRank(params.rank() + indices.rank() - 1 - batch_dims));
    c.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(int a, CanonicalAxis(*axis, params.rank(), "Gather axis"));
  if (batch_dims > a) {
    return Invalid(
        absl::StrCat("batch_dims (", batch_dims, ") must be less than or equal to axis (", a, ")"));
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < a; ++i) {
    DFLOW_ASSIGN_OR_RETURN(
        int64_t d, MergeDims(params.dim(i), i < batch_dims ? indices.dim(i) : params.dim(i)));
    dims.push_back(d);
  }
  for (int i = batch_dims; i < indices.rank(); ++i) dims.push_back(indices.dim(i));
  for (int i = a + 1; i < params.rank(); ++i) dims.push_back(params.dim(i));
  c.set_output(0, PartialShape(std::move(dims)));
  if (params.rank() == 1 && batch_dims == 0) SetGatheredValue(c);
  return absl::OkStatus();
}

absl::Status OneHotShape(Ctx& c) {
  const PartialShape& indices = c.input(0);
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(2), 0).status());
  DFLOW_RETURN_IF_ERROR(WithRank(c.input(3), 0).status());
  const std::optional<int64_t> depth = ScalarValue(c, 1);
  if (depth.has_value() && *depth < 0) {
    return Invalid(absl::StrCat("OneHot depth must be non-negative, got ", *depth));
  }
  if (!indices.rank_known()) return absl::OkStatus();
  const int64_t axis = IntAttr(c, "axis", -1);
  if (axis < -1 || axis > indices.rank()) {
    return Invalid(absl::StrCat("OneHot axis ", axis, " is out of range for indices of rank ",
                                indices.rank(), " (expected [-1, ", indices.rank(), "])"));
  }
  c.set_output(0, Inserted(indices, axis == -1 ? indices.rank() : static_cast<int>(axis),
                           depth.value_or(kUnknown)));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- GatherNd, ScatterNd

// GatherNd: indices.shape[:-1] + params.shape[indices.shape[-1]:] (TF's shape function;
// unknown until the index depth and the params rank are known).
absl::Status GatherNdShape(Ctx& c) {
  const PartialShape& params = c.input(0);
  const PartialShape& indices = c.input(1);
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(params, 1));
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(indices, 1));
  if (!params.rank_known() || !indices.rank_known()) return absl::OkStatus();
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth == kUnknown) return absl::OkStatus();
  if (depth > params.rank()) {
    return Invalid(absl::StrCat("indices.shape[-1] must be <= params.rank, but saw indices "
                                "shape: ", indices.ToString(), " and params shape: ",
                                params.ToString()));
  }
  std::vector<int64_t> dims;
  for (int d = 0; d + 1 < indices.rank(); ++d) dims.push_back(indices.dim(d));
  for (int d = static_cast<int>(depth); d < params.rank(); ++d) dims.push_back(params.dim(d));
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

// ScatterNd: the `shape` argument.
absl::Status ScatterNdShape(Ctx& c) {
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(c.input(0), 1));
  DFLOW_RETURN_IF_ERROR(CheckRankAtLeast(c.input(1), 1));
  DFLOW_ASSIGN_OR_RETURN(PartialShape out, c.InputAsShape(2));
  c.set_output(0, std::move(out));
  return absl::OkStatus();
}

// ConcatOffset: offset i has the shape of shape input i.
absl::Status ConcatOffsetShape(Ctx& c) {
  for (int i = 1; i < c.num_inputs(); ++i) c.set_output(i - 1, c.input(i));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- Split

// Sizes of SplitV's pieces along a dim of size `dim` (one size may be -1: the rest).
absl::StatusOr<std::vector<int64_t>> SplitVSizes(const PartialValue* sizes, int64_t dim, int n) {
  if (sizes == nullptr) return std::vector<int64_t>(n, kUnknown);
  if (static_cast<int>(sizes->size()) != n) {
    return Invalid(
        absl::StrCat("size_splits has ", sizes->size(), " elements but num_split is ", n));
  }
  std::vector<int64_t> out(n, kUnknown);
  int inferred = -1;
  bool all_known = true;
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    const std::optional<int64_t> s = (*sizes)[i].value;
    if (!s.has_value()) {
      all_known = false;
    } else if (*s == -1) {
      if (inferred >= 0) return Invalid("size_splits may contain at most one -1");
      inferred = i;
    } else if (*s < -1) {
      return Invalid(absl::StrCat("size_splits has a negative size ", *s));
    } else {
      out[i] = *s;
      DFLOW_ASSIGN_OR_RETURN(sum, AddDims(sum, *s));
    }
  }
  if (dim == kUnknown || !all_known) return out;
  if (inferred >= 0 ? sum > dim : sum != dim) {
    return Invalid(absl::StrCat("size_splits sum to ", sum, " but the split dimension is ", dim));
  }
  if (inferred >= 0) out[inferred] = dim - sum;
  return out;
}

// Split (even pieces) and SplitV (`sizes`): output i is the input with the split dim
// replaced by the piece's size.
absl::Status SplitAlong(Ctx& c, int value_input, int axis_input, const PartialValue* sizes,
                        bool even) {
  const PartialShape& in = c.input(value_input);
  const int n = c.num_outputs();
  if (!in.rank_known() || n == 0) return absl::OkStatus();
  const std::optional<int64_t> axis = ScalarValue(c, axis_input);
  std::vector<int64_t> pieces(n, kUnknown);
  int a = -1;
  if (axis.has_value()) {
    DFLOW_ASSIGN_OR_RETURN(a, CanonicalAxis(*axis, in.rank(), "Split axis"));
    const int64_t dim = in.dim(a);
    if (even && dim != kUnknown && dim % n != 0) {
      return Invalid(
          absl::StrCat("Number of ways to split should evenly divide the split "
                       "dimension, but got split_dim ",
                       a, " (size = ", dim, ") and num_split ", n));
    }
    if (even && dim != kUnknown) {
      pieces.assign(n, dim / n);
    } else if (!even) {
      DFLOW_ASSIGN_OR_RETURN(pieces, SplitVSizes(sizes, dim, n));
    }
  }
  for (int i = 0; i < n; ++i) {
    c.set_output(i, a < 0 ? PartialShape::UnknownOfRank(in.rank()) : Replaced(in, a, pieces[i]));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- registration

void RegisterShapeArgumentsAndRearranging(ShapeRegistry& r) {
  r.Register("Fill", FillShape);
  r.Register("BroadcastTo", BroadcastToShape);
  RegisterAll(r, {"RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt"},
              [](Ctx& c) { return ShapeFromInput(c, 0); });
  RegisterAll(r, {"Shape", "ShapeN"}, ShapeOfShape);
  r.Register("Size", SizeShape);
  r.Register("Rank", RankShape);
  r.Register("Reshape", ReshapeShape);
  RegisterAll(r, {"Transpose", "ConjugateTranspose"}, TransposeShape);
  r.Register("ConcatV2",
             [](Ctx& c) { return ConcatShape(c, 0, c.num_inputs() - 1, c.num_inputs() - 1); });
  r.Register("Concat", [](Ctx& c) { return ConcatShape(c, 1, c.num_inputs() - 1, 0); });
  r.Register("Pack", PackShape);
  r.Register("Unpack", UnpackShape);
  r.Register("ExpandDims", ExpandDimsShape);
  r.Register("Squeeze", SqueezeShape);
  RegisterAll(r, {"Pad", "PadV2", "MirrorPad"}, PadShape);
  r.Register("Tile", TileShape);
}

void RegisterSlicingAndSplit(ShapeRegistry& r) {
  r.Register("StridedSlice", StridedSliceShape);
  r.Register("Slice", SliceShape);
  r.Register("GatherV2", [](Ctx& c) {
    return GatherShapeAlong(c, ScalarValue(c, 2), IntAttr(c, "batch_dims", 0));
  });
  r.Register("Gather", [](Ctx& c) { return GatherShapeAlong(c, 0, 0); });
  r.Register("OneHot", OneHotShape);
  r.Register("GatherNd", GatherNdShape);
  r.Register("ScatterNd", ScatterNdShape);
  r.Register("ConcatOffset", ConcatOffsetShape);
  r.Register("Split", [](Ctx& c) { return SplitAlong(c, 1, 0, nullptr, true); });
  r.Register("SplitV", [](Ctx& c) { return SplitAlong(c, 0, 2, c.input_partial_value(1), false); });
}

// ---------------------------------------------------------------- Range, BroadcastArgs,
// and ops whose output shape is their input's or data-dependent (issue 11)

// The number of elements of Range(start, limit, delta) for integers, with the kernel's
// checks and texts; unsigned arithmetic so int64 extremes neither overflow nor lie.
absl::StatusOr<int64_t> IntegerRangeSize(int64_t start, int64_t limit, int64_t delta) {
  if (delta == 0) return Invalid("Requires delta != 0");
  if (delta > 0 && start > limit) {
    return Invalid(absl::StrCat("Requires start <= limit when delta > 0: ", start, "/", limit));
  }
  if (delta < 0 && start < limit) {
    return Invalid(absl::StrCat("Requires start >= limit when delta < 0: ", start, "/", limit));
  }
  const uint64_t distance = start <= limit ? uint64_t(limit) - uint64_t(start)
                                           : uint64_t(start) - uint64_t(limit);
  const uint64_t step = delta > 0 ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
  const uint64_t size = distance / step + (distance % step != 0 ? 1 : 0);
  if (size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Invalid("Requires ((limit - start) / delta) <= 9223372036854775807");
  }
  return static_cast<int64_t>(size);
}

// Range: [size] when start, limit and delta are known integers (their value too, when
// small: Range(0, Rank(x)) often feeds reduction axes), else [?]. Float ranges stay [?]:
// only integer values are tracked.
absl::Status RangeShape(Ctx& c) {
  static constexpr const char* kNames[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<PartialShape> scalar = WithRank(c.input(i), 0);
    if (!scalar.ok()) {
      return Invalid(absl::StrCat(scalar.status().message(), " for '", kNames[i], "'"));
    }
  }
  const AttrValue* tidx = FindAttr(c.node(), "Tidx");
  const bool integral = tidx != nullptr && (tidx->type() == DT_INT32 || tidx->type() == DT_INT64);
  const std::optional<int64_t> start = ScalarValue(c, 0);
  const std::optional<int64_t> limit = ScalarValue(c, 1);
  const std::optional<int64_t> delta = ScalarValue(c, 2);
  if (!integral || !start || !limit || !delta) {
    c.set_output(0, PartialShape({kUnknown}));
    return absl::OkStatus();
  }
  DFLOW_ASSIGN_OR_RETURN(const int64_t size, IntegerRangeSize(*start, *limit, *delta));
  c.set_output(0, PartialShape({size}));
  if (size <= kMaxTrackedValueElements) {
    PartialValue value;
    for (int64_t i = 0; i < size; ++i) {
      // Every element lies in [start, limit); unsigned so the product cannot overflow.
      const uint64_t element = uint64_t(*start) + uint64_t(i) * uint64_t(*delta);
      value.push_back(ValueElement::Known(static_cast<int64_t>(element)));
    }
    c.set_output_value(0, std::move(value));
  }
  return absl::OkStatus();
}

// BroadcastArgs: a vector as long as the longer input; its value when both are known.
absl::Status BroadcastArgsShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(const int64_t n0, VectorLength(c.input(0)));
  DFLOW_ASSIGN_OR_RETURN(const int64_t n1, VectorLength(c.input(1)));
  const int64_t n = n0 == kUnknown || n1 == kUnknown ? kUnknown : std::max(n0, n1);
  c.set_output(0, PartialShape({n}));
  const std::vector<int64_t>* s0 = c.input_value(0);
  const std::vector<int64_t>* s1 = c.input_value(1);
  if (s0 == nullptr || s1 == nullptr) return absl::OkStatus();
  for (const std::vector<int64_t>* s : {s0, s1}) {
    // The kernel passes negative dims through; only real shapes get a value here.
    if (std::any_of(s->begin(), s->end(), [](int64_t d) { return d < 0; })) {
      return absl::OkStatus();
    }
  }
  // A StatusOr read in place: GCC 12 misreads a moved-out PartialShape as uninitialized.
  const absl::StatusOr<PartialShape> out = BroadcastShapes(PartialShape(*s0), PartialShape(*s1));
  if (!out.ok()) return out.status();
  PartialValue value;
  for (int d = 0; d < out->rank(); ++d) value.push_back(ValueElement::Known(out->dim(d)));
  c.set_output_value(0, std::move(value));
  return absl::OkStatus();
}

// Where(condition): [?, rank of condition].
absl::Status WhereShape(Ctx& c) {
  c.set_output(0, PartialShape({kUnknown, RankOrUnknown(c.input(0))}));
  return absl::OkStatus();
}

// Unique(x): y is [?]; idx has x's shape, which must be a vector.
absl::Status UniqueShape(Ctx& c) {
  DFLOW_ASSIGN_OR_RETURN(PartialShape x, WithRank(c.input(0), 1));
  c.set_output(0, PartialShape({kUnknown}));
  c.set_output(1, std::move(x));
  return absl::OkStatus();
}

void RegisterSequenceAndReordering(ShapeRegistry& r) {
  r.Register("Range", RangeShape);
  r.Register("BroadcastArgs", BroadcastArgsShape);
  r.Register("Where", WhereShape);
  r.Register("Unique", UniqueShape);
  RegisterAll(r, {"ReverseV2", "Cumsum", "Cumprod", "Roll", "MatrixBandPart"}, UnchangedShape);
  // Element-wise string kernels (kernels/cpu/string_ops.cc, as_string_op.cc, ...).
  RegisterAll(r, {"StringLength", "StringLower", "StringUpper", "AsString", "StringToNumber",
                  "StaticRegexReplace", "RegexReplace"},
              UnchangedShape);
}

// ---------------------------------------------------------------- space to batch

// SpaceToBatchND (`to_batch`) and BatchToSpaceND with constant block_shape and
// paddings/crops: the batch is multiplied (divided) by the blocks' product and each
// block dim divided (multiplied, less the crops). Anything unknown, or values the kernel
// will refuse, leave the output's dims unknown; the kernel gives TF's error.
absl::Status SpaceToBatchShape(Ctx& c, bool to_batch) {
  const PartialShape& in = c.input(0);
  const std::vector<int64_t>* block = c.input_value(1);
  const std::vector<int64_t>* pads = c.input_value(2);
  const int m = block == nullptr ? 0 : static_cast<int>(block->size());
  if (!in.rank_known() || block == nullptr || pads == nullptr ||
      pads->size() != 2 * block->size() || in.rank() < 1 + m) {
    c.set_output(0, in.rank_known() ? PartialShape::UnknownOfRank(in.rank()) : PartialShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = in.dims();
  int64_t product = 1;
  bool valid = true;
  for (int i = 0; i < m; ++i) {
    const int64_t b = (*block)[i], before = (*pads)[2 * i], after = (*pads)[2 * i + 1];
    valid = valid && b > 0 && before >= 0 && after >= 0 && b < (int64_t{1} << 31) &&
            before < (int64_t{1} << 40) && after < (int64_t{1} << 40);
    if (!valid) break;
    product *= b;
    int64_t& d = dims[1 + i];
    if (d == PartialShape::kUnknownDim) continue;
    if (to_batch) {
      d = (d + before + after) % b == 0 ? (d + before + after) / b : PartialShape::kUnknownDim;
    } else {
      d = d * b - before - after >= 0 ? d * b - before - after : PartialShape::kUnknownDim;
    }
  }
  valid = valid && product < (int64_t{1} << 31);
  if (!valid) {
    c.set_output(0, PartialShape::UnknownOfRank(in.rank()));
    return absl::OkStatus();
  }
  if (dims[0] != PartialShape::kUnknownDim) {
    if (to_batch) {
      dims[0] *= product;
    } else {
      dims[0] = dims[0] % product == 0 ? dims[0] / product : PartialShape::kUnknownDim;
    }
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return absl::OkStatus();
}

void RegisterSpaceToBatch(ShapeRegistry& r) {
  r.Register("SpaceToBatchND", [](Ctx& c) { return SpaceToBatchShape(c, true); });
  r.Register("BatchToSpaceND", [](Ctx& c) { return SpaceToBatchShape(c, false); });
}

}  // namespace

void RegisterArrayShapeFns(ShapeRegistry& registry) {
  RegisterShapeArgumentsAndRearranging(registry);
  RegisterSlicingAndSplit(registry);
  RegisterSequenceAndReordering(registry);
  RegisterSpaceToBatch(registry);
}

}  // namespace shape_fn_util
}  // namespace dflow
