// Array op functions for the builder API beyond ops.h's basics (TF's cc/ops array_ops):
// slicing, gathering, tiling, padding, unstacking, selection, one-hot, and the
// comparison and index ops models use to score themselves.
//
// As in ops.h, each function adds one node through the Scope; errors are recorded in the
// scope's status and give null handles.
#ifndef DFLOW_GRAPH_ARRAY_OPS_H_
#define DFLOW_GRAPH_ARRAY_OPS_H_

#include <cstdint>

#include "graph/scope.h"
#include "graph/types.h"

namespace dflow {

// `size` elements (-1: to the end) from `begin` in each dimension.
Output Slice(const Scope& scope, Input input, Input begin, Input size);

// Python's `input[begin:end:strides]` with TF's masks.
struct StridedSliceAttrs {
  int64_t begin_mask = 0;
  int64_t end_mask = 0;
  int64_t ellipsis_mask = 0;
  int64_t new_axis_mask = 0;
  int64_t shrink_axis_mask = 0;
};
Output StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides,
                    const StridedSliceAttrs& attrs = {});

// Rows (along `axis`, a scalar int32/int64) of `params` picked by `indices`.
Output GatherV2(const Scope& scope, Input params, Input indices, Input axis,
                int64_t batch_dims = 0);
Output Tile(const Scope& scope, Input input, Input multiples);
// Zero padding: `paddings` is [rank, 2] (before, after) per dimension.
Output Pad(const Scope& scope, Input input, Input paddings);
// The `num` slices of `value` along `axis`.
OutputList Unpack(const Scope& scope, Input value, int64_t num, int64_t axis = 0);
// Element-wise `condition ? x : y` with broadcasting (SelectV2).
Output SelectV2(const Scope& scope, Input condition, Input x, Input y);
// `input`, with no gradient flowing back through it.
Output StopGradient(const Scope& scope, Input input);
// One-hot rows of `depth` entries for `indices` (on_value/off_value set the dtype).
Output OneHot(const Scope& scope, Input indices, Input depth, Input on_value,
              Input off_value, int64_t axis = -1);
Output BroadcastTo(const Scope& scope, Input input, Input shape);

// Comparisons, element-wise with broadcasting; bool results.
Output Equal(const Scope& scope, Input x, Input y);
Output NotEqual(const Scope& scope, Input x, Input y);
Output Less(const Scope& scope, Input x, Input y);
Output LessEqual(const Scope& scope, Input x, Input y);
Output Greater(const Scope& scope, Input x, Input y);
Output GreaterEqual(const Scope& scope, Input x, Input y);
// The index of the largest/smallest entry along `dimension` (a scalar).
Output ArgMax(const Scope& scope, Input input, Input dimension,
              DataType output_type = DT_INT64);
Output ArgMin(const Scope& scope, Input input, Input dimension,
              DataType output_type = DT_INT64);

}  // namespace dflow

#endif  // DFLOW_GRAPH_ARRAY_OPS_H_
