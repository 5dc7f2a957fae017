#include "graph/gradients/grad_util.h"

#include <cstring>
#include <utility>

#include "graph/array_ops.h"
#include "graph/shape_inference.h"
#include "graph/tensor_proto_util.h"

namespace dflow::grad {

Output In(const Operation& op, int i) {
  const Edge* e = op.node->input_edge(i);
  return e == nullptr ? Output() : Output(e->src, e->src_output);
}

AttrMap CopyAttrs(const Operation& op, std::initializer_list<const char*> names) {
  AttrMap attrs;
  for (const char* name : names) {
    if (const AttrValue* value = op.node->attr(name)) attrs[name] = *value;
  }
  return attrs;
}

int64_t IntAttrOf(const Operation& op, const char* name) {
  const AttrValue* value = op.node->attr(name);
  return value == nullptr ? 0 : value->i();
}

bool BoolAttrOf(const Operation& op, const char* name) {
  const AttrValue* value = op.node->attr(name);
  return value != nullptr && value->b();
}

std::optional<std::vector<int64_t>> ConstIntValues(const Output& out) {
  if (out.node == nullptr || out.node->op() != "Const") return std::nullopt;
  const AttrValue* value = out.node->attr("value");
  if (value == nullptr) return std::nullopt;
  const TensorProto& t = value->tensor();
  std::vector<int64_t> values;
  if (t.dtype() == DT_INT32) {
    for (int32_t v : t.int_val()) values.push_back(v);
    if (t.int_val_size() == 0 && !t.tensor_content().empty()) {
      const std::string& c = t.tensor_content();
      for (size_t i = 0; i + 4 <= c.size(); i += 4) {
        int32_t v;
        std::memcpy(&v, c.data() + i, 4);
        values.push_back(v);
      }
    }
  } else if (t.dtype() == DT_INT64) {
    for (int64_t v : t.int64_val()) values.push_back(v);
    if (t.int64_val_size() == 0 && !t.tensor_content().empty()) {
      const std::string& c = t.tensor_content();
      for (size_t i = 0; i + 8 <= c.size(); i += 8) {
        int64_t v;
        std::memcpy(&v, c.data() + i, 8);
        values.push_back(v);
      }
    }
  } else {
    return std::nullopt;
  }
  return values;
}

void ReduceBroadcastGrads(const Scope& scope, const Output& x, const Output& y,
                          const Output& gx, const Output& gy, std::vector<Output>* dx) {
  Output sx = Shape(scope, x);
  Output sy = Shape(scope, y);
  Operation args = AddOp(scope.WithOpName("BroadcastGradientArgs"),
                         "BroadcastGradientArgs", {sx, sy});
  dx->resize(2);
  if (gx.node != nullptr) {
    (*dx)[0] = Reshape(scope, Sum(scope, gx, args.output(0)), sx);
  }
  if (gy.node != nullptr) {
    (*dx)[1] = Reshape(scope, Sum(scope, gy, args.output(1)), sy);
  }
}

Output SumToShapeOf(const Scope& scope, const Output& grad, const Output& x) {
  Output sx = Shape(scope, x);
  Operation args = AddOp(scope.WithOpName("BroadcastGradientArgs"),
                         "BroadcastGradientArgs", {sx, Shape(scope, grad)});
  return Reshape(scope, Sum(scope, grad, args.output(0)), sx);
}

Output PositiveAxes(const Scope& scope, const Output& axes, const Output& rank) {
  Output axes32 = axes.dtype() == DT_INT32 ? axes : Cast(scope, axes, DT_INT32);
  // Negative axes count from the end; FloorMod maps [-rank, rank) onto [0, rank).
  return AddOp(scope, "FloorMod", {Add(scope, axes32, rank), rank}).output(0);
}

Output BroadcastOverAxes(const Scope& scope, const Output& grad, const Output& input_shape,
                         const Output& axes) {
  return BroadcastTo(scope, Reshape(scope, grad, KeptDimsShape(scope, input_shape, axes)),
                     input_shape);
}

Output KeptDimsShape(const Scope& scope, const Output& input_shape, const Output& axes) {
  Output rank = Size(scope, input_shape);
  Output positive = PositiveAxes(scope, axes, rank);
  Output flat = Reshape(scope, positive, {-1});
  Output hits = Sum(scope, OneHot(scope, flat, rank, 1, 0), 0);
  return SelectV2(scope, Greater(scope, hits, 0), 1, input_shape);
}

PartialShape StaticShape(const Scope& scope, const Output& out) {
  const std::vector<PartialShape>& shapes = out.node->output_shapes();
  if (!shapes[out.index].rank_known()) {
    // Problems elsewhere in the graph leave those shapes unknown; `out`'s may still be
    // known, and an unknown one is the caller's to report.
    (void)InferShapes(*scope.graph());
  }
  return out.node->output_shapes()[out.index];
}

Output Range(const Scope& scope, Input start, Input limit, Input delta) {
  return AddOp(scope, "Range", {std::move(start), std::move(limit), std::move(delta)})
      .output(0);
}

}  // namespace dflow::grad
