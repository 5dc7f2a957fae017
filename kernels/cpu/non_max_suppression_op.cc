// NonMaxSuppressionV3, V4 and V5 on float boxes, with TF 2.21's CPU algorithm
// (non_max_suppression_op.cc): a priority queue ordered by score, then lower box index
// first on ties; each candidate is compared against the boxes selected since it was last
// examined, newest first. Soft-NMS (V5, sigma > 0) scales a candidate's score by
// exp(-0.5 / sigma * iou^2) and requeues it; hard NMS drops it when iou > iou_threshold.
// Only candidates with score > score_threshold ever enter the queue.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <vector>

#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// One box's corners, normalized as TF does: any corner order is accepted.
struct Box {
  float ymin, xmin, ymax, xmax;
};

std::vector<Box> ReadBoxes(const Tensor& boxes) {
  const float* b = boxes.data<float>();
  std::vector<Box> out(boxes.shape().dim_size(0));
  for (size_t i = 0; i < out.size(); ++i, b += 4) {
    out[i] = {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]),
              std::max(b[1], b[3])};
  }
  return out;
}

// TF's IOU, operation for operation; 0 when either box has no area.
float Iou(const Box& i, const Box& j) {
  const float area_i = (i.ymax - i.ymin) * (i.xmax - i.xmin);
  const float area_j = (j.ymax - j.ymin) * (j.xmax - j.xmin);
  if (area_i <= 0 || area_j <= 0) return 0.0f;
  const float ymin = std::max(i.ymin, j.ymin), xmin = std::max(i.xmin, j.xmin);
  const float ymax = std::min(i.ymax, j.ymax), xmax = std::min(i.xmax, j.xmax);
  const float intersection = std::max(ymax - ymin, 0.0f) * std::max(xmax - xmin, 0.0f);
  return intersection / (area_i + area_j - intersection);
}

struct NmsParams {
  int32_t max_output_size = 0;
  float iou_threshold = 0, score_threshold = 0, soft_nms_sigma = 0;
};

absl::StatusOr<float> ScalarInput(const OpKernelContext& ctx, int index, const char* name) {
  const Tensor& t = ctx.input(index);
  if (t.shape().dims() != 0) {
    return KernelError(ctx, name, " must be 0-D, got shape ", t.shape().DebugString());
  }
  return t.scalar<float>();
}

// TF's checks, in its order and with its messages (shapes appended without a space).
absl::StatusOr<NmsParams> ValidateNms(const OpKernelContext& ctx, bool has_sigma) {
  NmsParams p;
  const Tensor& max_output = ctx.input(2);
  if (max_output.shape().dims() != 0) {
    return KernelError(ctx, "max_output_size must be 0-D, got shape ",
                       max_output.shape().DebugString());
  }
  p.max_output_size = max_output.scalar<int32_t>();
  DFLOW_ASSIGN_OR_RETURN(p.iou_threshold, ScalarInput(ctx, 3, "iou_threshold"));
  if (!(p.iou_threshold >= 0.0f && p.iou_threshold <= 1.0f)) {
    return KernelError(ctx, "iou_threshold must be in [0, 1]");
  }
  DFLOW_ASSIGN_OR_RETURN(p.score_threshold, ScalarInput(ctx, 4, "score_threshold"));
  if (has_sigma) {
    DFLOW_ASSIGN_OR_RETURN(p.soft_nms_sigma, ScalarInput(ctx, 5, "soft_nms_sigma"));
    if (!(p.soft_nms_sigma >= 0.0f)) return KernelError(ctx, "soft_nms_sigma_val must be >= 0");
  }
  const TensorShape& boxes = ctx.input(0).shape();
  if (boxes.dims() != 2) return KernelError(ctx, "boxes must be 2-D", boxes.DebugString());
  if (boxes.dim_size(1) != 4) return KernelError(ctx, "boxes must have 4 columns");
  const TensorShape& scores = ctx.input(1).shape();
  if (scores.dims() != 1) return KernelError(ctx, "scores must be 1-D", scores.DebugString());
  if (scores.dim_size(0) != boxes.dim_size(0)) {
    return KernelError(ctx, "scores has incompatible shape");
  }
  if (p.max_output_size < 0) return KernelError(ctx, "output size must be non-negative");
  return p;
}

struct Selection {
  std::vector<int32_t> indices;
  std::vector<float> scores;
};

struct Candidate {
  int64_t box_index;
  float score;
  int64_t suppress_begin_index;  // selections before this one were already compared
};

// TF's DoNonMaxSuppressionOp selection loop.
Selection SelectBoxes(const std::vector<Box>& boxes, const float* scores, const NmsParams& p) {
  auto lower_priority = [](const Candidate& a, const Candidate& b) {
    return (a.score == b.score && a.box_index > b.box_index) || a.score < b.score;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower_priority)> queue(
      lower_priority);
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (scores[i] > p.score_threshold) queue.push({static_cast<int64_t>(i), scores[i], 0});
  }
  const bool soft = p.soft_nms_sigma > 0.0f;
  const float scale = soft ? -0.5f / p.soft_nms_sigma : 0.0f;
  Selection s;
  while (s.indices.size() < static_cast<size_t>(p.max_output_size) && !queue.empty()) {
    Candidate next = queue.top();
    const float original_score = next.score;
    queue.pop();
    bool hard_suppressed = false;
    for (int64_t j = static_cast<int64_t>(s.indices.size()) - 1; j >= next.suppress_begin_index;
         --j) {
      const float iou = Iou(boxes[next.box_index], boxes[s.indices[j]]);
      const float weight = std::exp(scale * iou * iou);
      next.score *= (soft || iou <= p.iou_threshold) ? weight : 0.0f;
      if (!soft && iou > p.iou_threshold) {
        hard_suppressed = true;
        break;
      }
      if (next.score <= p.score_threshold) break;
    }
    next.suppress_begin_index = static_cast<int64_t>(s.indices.size());
    if (hard_suppressed) continue;
    if (next.score == original_score) {
      s.indices.push_back(static_cast<int32_t>(next.box_index));
      s.scores.push_back(next.score);
    } else if (next.score > p.score_threshold) {
      queue.push(next);  // softly suppressed but still above the threshold
    }
  }
  return s;
}

// Writes selected_indices (output 0) and, when `scores_output` >= 0, the selected scores;
// with `pad`, both are zero-padded to max_output_size. Returns the valid count.
absl::StatusOr<int32_t> WriteSelection(OpKernelContext* ctx, const Selection& s,
                                       const NmsParams& p, bool pad, int scores_output) {
  const int64_t valid = static_cast<int64_t>(s.indices.size());
  DFLOW_ASSIGN_OR_RETURN(TensorShape shape,
                         OutputShape(*ctx, {pad ? int64_t{p.max_output_size} : valid}));
  DFLOW_ASSIGN_OR_RETURN(Tensor * indices, ctx->allocate_output(0, shape));
  int32_t* out = indices->data<int32_t>();
  std::fill(std::copy(s.indices.begin(), s.indices.end(), out), out + shape.dim_size(0), 0);
  if (scores_output >= 0) {
    DFLOW_ASSIGN_OR_RETURN(Tensor * scores, ctx->allocate_output(scores_output, shape));
    float* dst = scores->data<float>();
    std::fill(std::copy(s.scores.begin(), s.scores.end(), dst), dst + shape.dim_size(0), 0.0f);
  }
  return static_cast<int32_t>(valid);
}

absl::Status SetValidOutputs(OpKernelContext* ctx, int index, int32_t valid) {
  DFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(index, TensorShape()));
  out->scalar<int32_t>() = valid;
  return absl::OkStatus();
}

// V3: selected_indices. V4: + valid_outputs. V5: + selected_scores, valid_outputs.
class NonMaxSuppressionOp : public OpKernel {
 public:
  explicit NonMaxSuppressionOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    const std::string& op = ctx->def().op();
    version_ = op == "NonMaxSuppressionV5" ? 5 : op == "NonMaxSuppressionV4" ? 4 : 3;
    if (version_ >= 4) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("pad_to_max_output_size", &pad_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    OP_ASSIGN_OR_RETURN(ctx, const NmsParams p, ValidateNms(*ctx, version_ == 5));
    const Selection s = SelectBoxes(ReadBoxes(ctx->input(0)), ctx->input(1).data<float>(), p);
    OP_ASSIGN_OR_RETURN(ctx, const int32_t valid,
                        WriteSelection(ctx, s, p, pad_, version_ == 5 ? 1 : -1));
    if (version_ >= 4) OP_REQUIRES_OK(ctx, SetValidOutputs(ctx, version_ == 5 ? 2 : 1, valid));
  }

 private:
  int version_ = 3;
  bool pad_ = false;
};

}  // namespace

absl::Status RegisterNonMaxSuppressionKernels(KernelRegistry* registry) {
  for (const char* op : {"NonMaxSuppressionV3", "NonMaxSuppressionV4"}) {
    DFLOW_RETURN_IF_ERROR(registry->Register<NonMaxSuppressionOp>(
        CpuKernel(op).TypeConstraint("T", {DT_FLOAT}).TypeConstraint("T_threshold", {DT_FLOAT})));
  }
  return registry->Register<NonMaxSuppressionOp>(
      CpuKernel("NonMaxSuppressionV5").TypeConstraint("T", {DT_FLOAT}));
}

}  // namespace dflow
