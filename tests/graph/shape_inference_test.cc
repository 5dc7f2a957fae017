// Tests for graph/shape_inference.h: per-op shape functions with fully and partly known
// shapes, constant shape arguments, error messages, loops and the "report every
// problem" mode. Graphs are built directly with Graph::AddNode/AddEdge; a last test
// imports real TensorFlow graphs from the vendored corpus.

#include "graph/shape_inference.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "graph/graph.h"
#include "graph/graph_def_import.h"
#include "graph/partial_shape.h"
#include "graph/proto_io.h"
#include "tests/testing/graph_testing.h"

namespace Catch {
template <>
struct StringMaker<dflow::PartialShape> {
  static std::string convert(const dflow::PartialShape& s) { return s.ToString(); }
};
}  // namespace Catch

namespace dflow {
namespace {

constexpr int64_t kU = PartialShape::kUnknownDim;

// An output of a node under construction.
struct Out {
  Out(Node* n, int i = 0) : node(n), index(i) {}  // NOLINT: implicit on purpose
  Node* node;
  int index;
};

using Attrs = std::vector<std::pair<std::string, AttrValue>>;

AttrValue IntAttr(int64_t v) {
  AttrValue a;
  a.set_i(v);
  return a;
}
AttrValue BoolAttr(bool v) {
  AttrValue a;
  a.set_b(v);
  return a;
}
AttrValue StringAttr(const std::string& v) {
  AttrValue a;
  a.set_s(v);
  return a;
}
AttrValue TypeAttr(DataType t) {
  AttrValue a;
  a.set_type(t);
  return a;
}
AttrValue IntsAttr(const std::vector<int64_t>& v) {
  AttrValue a;
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}
AttrValue ShapeAttr(const PartialShape& s) {
  AttrValue a;
  *a.mutable_shape() = s.ToProto();
  return a;
}

// Builds graphs node by node; type attrs of data inputs (T, N, ...) are filled from the
// inputs' dtypes, so tests only spell the attrs that matter to shapes.
class Builder {
 public:
  Graph graph;

  Node* Placeholder(const std::string& name, PartialShape shape, DataType dtype = DT_FLOAT) {
    return Op(name, "Placeholder", {},
              {{"dtype", TypeAttr(dtype)}, {"shape", ShapeAttr(shape)}});
  }

  Node* Const(const std::string& name, const std::vector<int64_t>& values,
              const std::vector<int64_t>& dims) {
    AttrValue value;
    TensorProto* t = value.mutable_tensor();
    t->set_dtype(DT_INT32);
    *t->mutable_tensor_shape() = PartialShape(dims).ToProto();
    for (int64_t v : values) t->add_int_val(static_cast<int32_t>(v));
    return Op(name, "Const", {}, {{"dtype", TypeAttr(DT_INT32)}, {"value", value}});
  }
  Node* Vector(const std::string& name, const std::vector<int64_t>& values) {
    return Const(name, values, {static_cast<int64_t>(values.size())});
  }
  Node* Scalar(const std::string& name, int64_t value) { return Const(name, {value}, {}); }

  Node* Op(const std::string& name, const std::string& op, const std::vector<Out>& inputs,
           const Attrs& attrs = {}) {
    NodeDef def;
    def.set_name(name);
    def.set_op(op);
    for (const auto& [key, value] : attrs) (*def.mutable_attr())[key] = value;
    const OpDef* op_def = graph.FindOpDef(op);
    REQUIRE(op_def != nullptr);
    FillTypeAttrs(*op_def, inputs, &def);
    absl::StatusOr<Node*> node = graph.AddNode(def);
    INFO(node.status().ToString());
    REQUIRE(node.ok());
    for (size_t i = 0; i < inputs.size(); ++i) {
      graph.AddEdge(inputs[i].node, inputs[i].index, *node, static_cast<int>(i));
    }
    return *node;
  }

 private:
  static DataType TypeOf(const Out& out) {
    return BaseType(out.node->output_types()[out.index]);
  }

  // Sets unset type/number attrs of the input args. At most one arg may be a list.
  static void FillTypeAttrs(const OpDef& op_def, const std::vector<Out>& inputs, NodeDef* def) {
    int fixed = 0;
    for (const auto& arg : op_def.input_arg()) {
      fixed += arg.number_attr().empty() && arg.type_list_attr().empty() ? 1 : 0;
    }
    const int list_size = static_cast<int>(inputs.size()) - fixed;
    auto& attrs = *def->mutable_attr();
    size_t next = 0;
    for (const auto& arg : op_def.input_arg()) {
      const bool is_list = !arg.number_attr().empty() || !arg.type_list_attr().empty();
      const int count = is_list ? list_size : 1;
      if (!arg.number_attr().empty() && !attrs.count(arg.number_attr())) {
        attrs[arg.number_attr()] = IntAttr(count);
      }
      if (!arg.type_attr().empty() && !attrs.count(arg.type_attr()) && count > 0) {
        attrs[arg.type_attr()] = TypeAttr(TypeOf(inputs[next]));
      }
      if (!arg.type_list_attr().empty() && !attrs.count(arg.type_list_attr())) {
        AttrValue types;
        for (int k = 0; k < count; ++k) types.mutable_list()->add_type(TypeOf(inputs[next + k]));
        attrs[arg.type_list_attr()] = types;
      }
      next += count;
    }
  }
};

PartialShape S(std::vector<int64_t> dims) { return PartialShape(std::move(dims)); }

const PartialShape& ShapeOf(const Out& out) { return out.node->output_shapes()[out.index]; }

// Runs inference expecting success.
void Infer(Builder& b) {
  absl::Status status = InferShapes(b.graph);
  INFO(status.ToString());
  REQUIRE(status.ok());
}

// Runs inference expecting an INVALID_ARGUMENT; returns its message.
std::string InferError(Builder& b) {
  absl::Status status = InferShapes(b.graph);
  REQUIRE(status.code() == absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

TEST_CASE("MatMul infers [m,n] and honours transpose_a and transpose_b",
          "[graph][shape_inference]") {
  Builder b;
  Node* a = b.Placeholder("a", S({2, 3}));
  Node* w = b.Placeholder("w", S({3, 4}));
  Node* at = b.Placeholder("at", S({3, 2}));
  Node* wt = b.Placeholder("wt", S({4, 3}));
  Node* plain = b.Op("plain", "MatMul", {a, w});
  Node* ta = b.Op("ta", "MatMul", {at, w}, {{"transpose_a", BoolAttr(true)}});
  Node* tb = b.Op("tb", "MatMul", {a, wt}, {{"transpose_b", BoolAttr(true)}});
  Node* both = b.Op("both", "MatMul", {at, wt},
                    {{"transpose_a", BoolAttr(true)}, {"transpose_b", BoolAttr(true)}});
  Infer(b);
  CHECK(ShapeOf(plain) == S({2, 4}));
  CHECK(ShapeOf(ta) == S({2, 4}));
  CHECK(ShapeOf(tb) == S({2, 4}));
  CHECK(ShapeOf(both) == S({2, 4}));
}

TEST_CASE("MatMul with mismatched inner dims names the node, op and input shapes",
          "[graph][shape_inference]") {
  Builder b;
  Node* a = b.Placeholder("a", S({2, 3}));
  Node* w = b.Placeholder("b", S({4, 2}));
  Node* c = b.Op("c", "MatMul", {a, w});
  CHECK(InferError(b) ==
        "Node 'c' (MatMul): Dimensions must be equal, but are 3 and 4 for inputs [2,3] "
        "and [4,2]");
  CHECK(ShapeOf(c) == PartialShape());
}

TEST_CASE("MatMul rejects inputs that are not matrices", "[graph][shape_inference]") {
  Builder b;
  b.Op("c", "MatMul", {b.Placeholder("a", S({2, 3, 4})), b.Placeholder("w", S({4, 2}))});
  CHECK(InferError(b) ==
        "Node 'c' (MatMul): Shape must be rank 2 but is rank 3 for inputs [2,3,4] and [4,2]");
}

TEST_CASE("BatchMatMulV2 broadcasts batch dims while BatchMatMul requires them equal",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({5, 1, 2, 3}));
  Node* y = b.Placeholder("y", S({4, 3, 6}));
  Node* v2 = b.Op("v2", "BatchMatMulV2", {x, y});
  Node* adj = b.Op("adj", "BatchMatMulV2", {x, b.Placeholder("yt", S({6, 3}))},
                   {{"adj_y", BoolAttr(true)}});
  Node* v1 = b.Op("v1", "BatchMatMul", {b.Placeholder("p", S({7, 2, 3})),
                                        b.Placeholder("q", S({kU, 3, 5}))});
  Infer(b);
  CHECK(ShapeOf(v2) == S({5, 4, 2, 6}));
  CHECK(ShapeOf(adj) == S({5, 1, 2, 6}));
  CHECK(ShapeOf(v1) == S({7, 2, 5}));
}

TEST_CASE("Binary elementwise ops broadcast like NumPy, unknown dims included",
          "[graph][shape_inference]") {
  Builder b;
  auto add = [&](const std::string& name, PartialShape x, PartialShape y) {
    return b.Op(name, "AddV2", {b.Placeholder(name + "_x", x), b.Placeholder(name + "_y", y)});
  };
  Node* full = add("full", S({2, 1, 3}), S({4, 1}));
  Node* batch = add("batch", S({kU, 3}), S({3}));
  Node* vs_one = add("vs_one", S({kU}), S({1}));
  Node* vs_five = add("vs_five", S({kU}), S({5}));
  Node* unknown_rank = add("unknown_rank", PartialShape(), S({3}));
  Node* scalar = add("scalar", S({}), S({2, 2}));
  Node* cmp = b.Op("cmp", "Less", {b.Placeholder("l", S({2, 1})), b.Placeholder("r", S({3}))});
  Infer(b);
  CHECK(ShapeOf(full) == S({2, 4, 3}));
  CHECK(ShapeOf(batch) == S({kU, 3}));
  CHECK(ShapeOf(vs_one) == S({kU}));
  CHECK(ShapeOf(vs_five) == S({5}));
  CHECK(ShapeOf(unknown_rank) == PartialShape());
  CHECK(ShapeOf(scalar) == S({2, 2}));
  CHECK(ShapeOf(cmp) == S({2, 3}));
}

TEST_CASE("Binary elementwise ops reject shapes that do not broadcast",
          "[graph][shape_inference]") {
  Builder b;
  b.Op("add", "Add", {b.Placeholder("x", S({2, 3})), b.Placeholder("y", S({4}))});
  CHECK(InferError(b) ==
        "Node 'add' (Add): Dimensions must be equal, but are 3 and 4 for inputs [2,3] and [4]");
}

TEST_CASE("BiasAdd checks the channel dim for NHWC and NCHW", "[graph][shape_inference]") {
  Builder b;
  Node* nhwc = b.Op("nhwc", "BiasAdd", {b.Placeholder("x", S({kU, 5, 5, kU})),
                                        b.Placeholder("bias", S({8}))});
  Node* nchw = b.Op("nchw", "BiasAdd",
                    {b.Placeholder("y", S({kU, 8, 5, 5})), b.Placeholder("bias2", S({kU}))},
                    {{"data_format", StringAttr("NCHW")}});
  b.Op("bad", "BiasAdd", {b.Placeholder("z", S({2, 3})), b.Placeholder("bias3", S({4}))});
  std::vector<std::string> problems;
  REQUIRE(InferShapes(b.graph, &problems).ok());
  CHECK(ShapeOf(nhwc) == S({kU, 5, 5, 8}));
  CHECK(ShapeOf(nchw) == S({kU, 8, 5, 5}));
  REQUIRE(problems.size() == 1);
  CHECK(absl::StartsWith(problems[0], "Node 'bad' (BiasAdd): Dimensions must be equal"));
}

TEST_CASE("Reductions honour keep_dims and negative axes and reject out-of-range axes",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({2, 3, 4}));
  Node* last = b.Vector("last", {-1});
  Node* sum = b.Op("sum", "Sum", {x, last});
  Node* kept = b.Op("kept", "Mean", {x, last}, {{"keep_dims", BoolAttr(true)}});
  Node* two = b.Op("two", "Max", {x, b.Vector("outer", {0, 2})});
  Node* all = b.Op("all", "Prod", {x, b.Vector("every", {0, 1, 2})});
  Node* unknown_axes = b.Op("unknown_axes", "Sum",
                            {x, b.Placeholder("axes", S({1}), DT_INT32)},
                            {{"keep_dims", BoolAttr(true)}});
  Node* argmax = b.Op("argmax", "ArgMax", {x, b.Scalar("axis", -2)});
  Infer(b);
  CHECK(ShapeOf(sum) == S({2, 3}));
  CHECK(ShapeOf(kept) == S({2, 3, 1}));
  CHECK(ShapeOf(two) == S({3}));
  CHECK(ShapeOf(all) == S({}));
  CHECK(ShapeOf(unknown_axes) == S({kU, kU, kU}));
  CHECK(ShapeOf(argmax) == S({2, 4}));

  SECTION("an axis beyond the rank is an error naming it") {
    b.Op("bad", "Sum", {x, b.Vector("three", {3})});
    CHECK(InferError(b) ==
          "Node 'bad' (Sum): Reduction axis 3 is out of range for a tensor of rank 3 "
          "(expected [-3, 3)) for inputs [2,3,4] and [1]");
  }
}

TEST_CASE("Reshape fills in the one -1 and rejects a wrong element count",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({2, 3, 4}));
  Node* r1 = b.Op("r1", "Reshape", {x, b.Vector("to_6x4", {-1, 4})});
  Node* batch = b.Placeholder("batch", S({kU, 3, 4}));
  Node* r2 = b.Op("r2", "Reshape", {batch, b.Vector("to_flat", {-1, 12})});
  Node* r3 = b.Op("r3", "Reshape", {batch, b.Vector("to_x12", {5, -1})});
  Infer(b);
  CHECK(ShapeOf(r1) == S({6, 4}));
  CHECK(ShapeOf(r2) == S({kU, 12}));
  CHECK(ShapeOf(r3) == S({5, kU}));

  SECTION("an element count mismatch is an error") {
    b.Op("bad", "Reshape", {b.Placeholder("y", S({2, 3})), b.Vector("to_4x2", {4, 2})});
    CHECK(InferError(b) ==
          "Node 'bad' (Reshape): Cannot reshape a tensor with 6 elements to shape [4,2] "
          "(8 elements) for inputs [2,3] and [2]");
  }
  SECTION("a -1 that cannot divide the element count is an error") {
    b.Op("bad", "Reshape", {b.Placeholder("y", S({7})), b.Vector("to_x2", {-1, 2})});
    CHECK(absl::StrContains(InferError(b), "Cannot reshape a tensor with 7 elements to shape "
                                           "[-1,2]"));
  }
  SECTION("two -1s are an error") {
    b.Op("bad", "Reshape", {x, b.Vector("two_free", {-1, -1})});
    CHECK(absl::StrContains(InferError(b), "can infer only one dimension"));
  }
}

TEST_CASE("Partly known shapes propagate through a chain of ops", "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({kU, 3}));
  Node* w = b.Placeholder("w", S({3, 5}));
  Node* relu = b.Op("relu", "Relu", {x});
  Node* mm = b.Op("mm", "MatMul", {relu, w});
  Node* biased = b.Op("biased", "BiasAdd", {mm, b.Placeholder("bias", S({5}))});
  Node* soft = b.Op("soft", "Softmax", {biased});
  Node* cast = b.Op("cast", "Cast", {soft}, {{"DstT", TypeAttr(DT_HALF)}});
  Node* anything = b.Placeholder("anything", PartialShape());
  Node* tanh = b.Op("tanh", "Tanh", {anything});
  Node* mm2 = b.Op("mm2", "MatMul", {anything, w});
  Node* addn = b.Op("addn", "AddN", {b.Placeholder("p", S({kU, 4})),
                                     b.Placeholder("q", S({2, kU})), anything});
  Infer(b);
  CHECK(ShapeOf(relu) == S({kU, 3}));
  CHECK(ShapeOf(mm) == S({kU, 5}));
  CHECK(ShapeOf(biased) == S({kU, 5}));
  CHECK(ShapeOf(cast) == S({kU, 5}));
  CHECK(ShapeOf(tanh) == PartialShape());
  CHECK(ShapeOf(mm2) == S({kU, 5}));
  CHECK(ShapeOf(addn) == S({2, 4}));
}

TEST_CASE("Placeholders and variables take their shape attr", "[graph][shape_inference]") {
  Builder b;
  Node* known = b.Placeholder("known", S({kU, 28, 28}));
  Node* unknown = b.Placeholder("unknown", PartialShape());
  Node* scalar = b.Placeholder("scalar", S({}));
  Node* var = b.Op("var", "VariableV2", {},
                   {{"dtype", TypeAttr(DT_FLOAT)}, {"shape", ShapeAttr(S({3, 4}))}});
  Node* assign = b.Op("assign", "Assign", {var, b.Placeholder("init", S({3, kU}))});
  Node* with_default = b.Op("with_default", "PlaceholderWithDefault",
                            {b.Placeholder("dflt", S({2, 2}))},
                            {{"shape", ShapeAttr(S({kU, 2}))}});
  Infer(b);
  CHECK(ShapeOf(known) == S({kU, 28, 28}));
  CHECK(ShapeOf(unknown) == PartialShape());
  CHECK(ShapeOf(scalar) == S({}));
  CHECK(ShapeOf(var) == S({3, 4}));
  CHECK(ShapeOf(assign) == S({3, 4}));
  CHECK(ShapeOf(with_default) == S({kU, 2}));
}

TEST_CASE("Conv2D computes SAME and VALID output sizes with strides",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({kU, 28, 28, 3}));
  Node* f = b.Placeholder("f", S({5, 5, 3, 8}));
  auto conv = [&](const std::string& name, Out input, const std::string& padding,
                  std::vector<int64_t> strides, const std::string& format = "NHWC") {
    return b.Op(name, "Conv2D", {input, f},
                {{"padding", StringAttr(padding)}, {"strides", IntsAttr(strides)},
                 {"data_format", StringAttr(format)}});
  };
  Node* valid = conv("valid", x, "VALID", {1, 1, 1, 1});
  Node* same2 = conv("same2", x, "SAME", {1, 2, 2, 1});
  Node* valid2 = conv("valid2", x, "VALID", {1, 2, 2, 1});
  Node* nchw = conv("nchw", b.Placeholder("xc", S({1, 3, 28, 28})), "SAME", {1, 1, 2, 2},
                    "NCHW");
  Node* dilated = b.Op("dilated", "Conv2D", {x, f},
                       {{"padding", StringAttr("VALID")}, {"strides", IntsAttr({1, 1, 1, 1})},
                        {"dilations", IntsAttr({1, 2, 2, 1})}});
  Node* explicit_pad = b.Op("explicit_pad", "Conv2D", {x, f},
                            {{"padding", StringAttr("EXPLICIT")},
                             {"strides", IntsAttr({1, 1, 1, 1})},
                             {"explicit_paddings", IntsAttr({0, 0, 2, 2, 1, 1, 0, 0})}});
  Node* pool = b.Op("pool", "MaxPool", {valid},
                    {{"padding", StringAttr("VALID")}, {"ksize", IntsAttr({1, 2, 2, 1})},
                     {"strides", IntsAttr({1, 2, 2, 1})}});
  Node* avg = b.Op("avg", "AvgPool", {valid},
                   {{"padding", StringAttr("SAME")}, {"ksize", IntsAttr({1, 3, 3, 1})},
                    {"strides", IntsAttr({1, 3, 3, 1})}});
  Infer(b);
  CHECK(ShapeOf(valid) == S({kU, 24, 24, 8}));
  CHECK(ShapeOf(same2) == S({kU, 14, 14, 8}));
  CHECK(ShapeOf(valid2) == S({kU, 12, 12, 8}));
  CHECK(ShapeOf(nchw) == S({1, 8, 14, 14}));
  CHECK(ShapeOf(dilated) == S({kU, 20, 20, 8}));
  CHECK(ShapeOf(explicit_pad) == S({kU, 28, 26, 8}));
  CHECK(ShapeOf(pool) == S({kU, 12, 12, 8}));
  CHECK(ShapeOf(avg) == S({kU, 8, 8, 8}));

  SECTION("a filter larger than the input is an error") {
    conv("too_big", b.Placeholder("tiny", S({1, 3, 3, 3})), "VALID", {1, 1, 1, 1});
    CHECK(absl::StrContains(InferError(b), "Node 'too_big' (Conv2D): Computed output size "
                                           "would be negative"));
  }
  SECTION("input depth must be a multiple of the filter's") {
    conv("depth", b.Placeholder("four", S({1, 8, 8, 4})), "SAME", {1, 1, 1, 1});
    CHECK(absl::StrContains(InferError(b), "Depth of input (4) is not a multiple of input "
                                           "depth of filter (3)"));
  }
}

TEST_CASE("ConcatV2 sums the axis dim and merges the others", "[graph][shape_inference]") {
  Builder b;
  Node* a = b.Placeholder("a", S({2, 3}));
  Node* c = b.Placeholder("c", S({2, 5}));
  Node* axis1 = b.Op("axis1", "ConcatV2", {a, c, b.Scalar("one", 1)});
  Node* neg = b.Op("neg", "ConcatV2", {a, c, b.Scalar("minus_one", -1)});
  Node* partial = b.Op("partial", "ConcatV2", {b.Placeholder("p", S({kU, 3})),
                                               b.Placeholder("q", S({2, kU})),
                                               b.Scalar("zero", 0)});
  Node* unknown_axis = b.Op("unknown_axis", "ConcatV2",
                            {a, c, b.Placeholder("axis", S({}), DT_INT32)});
  Infer(b);
  CHECK(ShapeOf(axis1) == S({2, 8}));
  CHECK(ShapeOf(neg) == S({2, 8}));
  CHECK(ShapeOf(partial) == S({kU, 3}));
  CHECK(ShapeOf(unknown_axis) == S({kU, kU}));

  SECTION("other dims must agree") {
    b.Op("bad", "ConcatV2", {a, b.Placeholder("d", S({3, 3})), b.Scalar("one_again", 1)});
    CHECK(absl::StartsWith(InferError(b),
                           "Node 'bad' (ConcatV2): Dimension 0 in both shapes must be equal, but "
                           "are 2 and 3. Shapes are [2,3] and [3,3] (concatenating on axis 1)"));
  }
}

TEST_CASE("StridedSlice with shrink_axis_mask feeds a static shape into Reshape "
          "(Keras Flatten)",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({kU, 3, 4}));
  Node* shape = b.Op("shape", "Shape", {x});
  Node* batch = b.Op("batch", "StridedSlice",
                     {shape, b.Vector("begin", {0}), b.Vector("end", {1}),
                      b.Vector("strides", {1})},
                     {{"shrink_axis_mask", IntAttr(1)}});
  Node* target = b.Op("target", "Pack", {batch, b.Scalar("minus_one", -1)});
  Node* flat = b.Op("flat", "Reshape", {x, target});
  Node* w = b.Placeholder("w", S({12, 10}));
  Node* logits = b.Op("logits", "MatMul", {flat, w});
  Infer(b);
  CHECK(ShapeOf(shape) == S({3}));
  CHECK(ShapeOf(batch) == S({}));
  CHECK(ShapeOf(target) == S({2}));
  CHECK(ShapeOf(flat) == S({kU, 12}));
  CHECK(ShapeOf(logits) == S({kU, 10}));
}

TEST_CASE("StridedSlice handles masks, negative strides and out-of-range shrinks",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({5, 6, kU}));
  auto slice = [&](const std::string& name, std::vector<int64_t> begin,
                   std::vector<int64_t> end, std::vector<int64_t> strides, Attrs masks) {
    return b.Op(name, "StridedSlice",
                {x, b.Vector(name + "_b", begin), b.Vector(name + "_e", end),
                 b.Vector(name + "_s", strides)},
                masks);
  };
  // x[1:4, ::2]
  Node* basic = slice("basic", {1, 0}, {4, 0}, {1, 2}, {{"end_mask", IntAttr(2)}});
  // x[::-1, -2]
  Node* reversed = slice("reversed", {0, -2}, {0, 0}, {-1, 1},
                         {{"begin_mask", IntAttr(1)}, {"end_mask", IntAttr(1)},
                          {"shrink_axis_mask", IntAttr(2)}});
  // x[..., 0] falls back to unknown
  Node* ellipsis = slice("ellipsis", {0, 0}, {0, 1}, {1, 1},
                         {{"ellipsis_mask", IntAttr(1)}, {"shrink_axis_mask", IntAttr(2)}});
  // x[7:9] is empty
  Node* empty = slice("empty", {7}, {9}, {1}, {});
  Infer(b);
  CHECK(ShapeOf(basic) == S({3, 3, kU}));
  CHECK(ShapeOf(reversed) == S({5, kU}));
  CHECK(ShapeOf(ellipsis) == PartialShape());
  CHECK(ShapeOf(empty) == S({0, 6, kU}));

  SECTION("shrinking at an index beyond the dim is an error") {
    slice("bad", {0, 6}, {0, 7}, {1, 1}, {{"shrink_axis_mask", IntAttr(2)}});
    CHECK(absl::StrContains(InferError(b), "Node 'bad' (StridedSlice): slice index 6 of "
                                           "dimension 1 out of bounds"));
  }
}

TEST_CASE("Constant arguments size Fill, Transpose, ExpandDims, Pad and Tile",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({2, kU, 4}));
  Node* fill = b.Op("fill", "Fill", {b.Vector("dims", {3, 5}), b.Placeholder("v", S({}))});
  Node* transpose = b.Op("transpose", "Transpose", {x, b.Vector("perm", {2, 0, 1})});
  Node* expand = b.Op("expand", "ExpandDims", {x, b.Scalar("dim", -1)});
  Node* pad = b.Op("pad", "Pad", {x, b.Const("paddings", {1, 1, 0, 2, 3, 0}, {3, 2})});
  Node* tile = b.Op("tile", "Tile", {x, b.Vector("multiples", {2, 3, 1})});
  Node* random = b.Op("random", "RandomUniform", {b.Vector("rshape", {4, 4})},
                      {{"dtype", TypeAttr(DT_FLOAT)}});
  Node* squeeze = b.Op("squeeze", "Squeeze", {b.Placeholder("s", S({1, 3, 1}))},
                       {{"squeeze_dims", IntsAttr({-1})}});
  Infer(b);
  CHECK(ShapeOf(fill) == S({3, 5}));
  CHECK(ShapeOf(transpose) == S({4, 2, kU}));
  CHECK(ShapeOf(expand) == S({2, kU, 4, 1}));
  CHECK(ShapeOf(pad) == S({4, kU, 7}));
  CHECK(ShapeOf(tile) == S({4, kU, 4}));
  CHECK(ShapeOf(random) == S({4, 4}));
  CHECK(ShapeOf(squeeze) == S({1, 3}));

  SECTION("a perm that is not a permutation is an error") {
    b.Op("bad", "Transpose", {x, b.Vector("bad_perm", {0, 0, 1})});
    CHECK(absl::StrContains(InferError(b), "is not a permutation of 0..2"));
  }
}

TEST_CASE("Pack, Unpack, Split, SplitV, Slice, GatherV2 and OneHot place their dims",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({6, 4}));
  Node* pack = b.Op("pack", "Pack", {x, x, x}, {{"axis", IntAttr(1)}});
  Node* unpack = b.Op("unpack", "Unpack", {x}, {{"num", IntAttr(4)}, {"axis", IntAttr(-1)}});
  Node* split = b.Op("split", "Split", {b.Scalar("split_dim", 0), x},
                     {{"num_split", IntAttr(3)}});
  Node* splitv = b.Op("splitv", "SplitV", {x, b.Vector("sizes", {1, -1}), b.Scalar("sd", 1)},
                      {{"num_split", IntAttr(2)}});
  Node* slice = b.Op("slice", "Slice", {x, b.Vector("begin", {1, 1}), b.Vector("size", {2, -1})});
  Node* gather = b.Op("gather", "GatherV2",
                      {x, b.Placeholder("idx", S({kU, 7}), DT_INT32), b.Scalar("gaxis", 1)});
  Node* onehot = b.Op("onehot", "OneHot",
                      {b.Placeholder("labels", S({kU}), DT_INT32), b.Scalar("depth", 10),
                       b.Placeholder("on", S({})), b.Placeholder("off", S({}))});
  Infer(b);
  CHECK(ShapeOf(pack) == S({6, 3, 4}));
  REQUIRE(unpack->num_outputs() == 4);
  CHECK(ShapeOf({unpack, 3}) == S({6}));
  REQUIRE(split->num_outputs() == 3);
  CHECK(ShapeOf({split, 2}) == S({2, 4}));
  CHECK(ShapeOf({splitv, 0}) == S({6, 1}));
  CHECK(ShapeOf({splitv, 1}) == S({6, 3}));
  CHECK(ShapeOf(slice) == S({2, 3}));
  CHECK(ShapeOf(gather) == S({6, kU, 7}));
  CHECK(ShapeOf(onehot) == S({kU, 10}));

  SECTION("an uneven Split is an error") {
    b.Op("bad", "Split", {b.Scalar("split_dim1", 1), x}, {{"num_split", IntAttr(3)}});
    CHECK(absl::StrContains(InferError(b), "evenly divide the split dimension"));
  }
}

TEST_CASE("GatherNd, ScatterNd, ConcatOffset, TopKV2 and DenseBincount place their dims",
          "[graph][shape_inference]") {
  Builder b;
  Node* params = b.Placeholder("params", S({2, 3, 4}));
  Node* rows = b.Op("rows", "GatherNd",
                    {params, b.Placeholder("ix", S({kU, 5, 2}), DT_INT32)});
  Node* unknown_depth = b.Op("unknown_depth", "GatherNd",
                             {params, b.Placeholder("ix2", S({5, kU}), DT_INT32)});
  Node* scatter = b.Op("scatter", "ScatterNd",
                       {b.Placeholder("six", S({kU, 1}), DT_INT32),
                        b.Placeholder("upd", S({kU, 7})), b.Vector("shape", {6, 7})});
  Node* offsets = b.Op("offsets", "ConcatOffset",
                       {b.Scalar("cdim", 1), b.Vector("s0", {2, 3}), b.Vector("s1", {2, 5})});
  Node* topk = b.Op("topk", "TopKV2", {b.Placeholder("logits", S({kU, 10})), b.Scalar("k", 3)});
  Node* counts = b.Op("counts", "DenseBincount",
                      {b.Placeholder("values", S({8, kU}), DT_INT32), b.Scalar("size", 6),
                       b.Placeholder("weights", S({0}))});
  Infer(b);
  CHECK(ShapeOf(rows) == S({kU, 5, 4}));
  CHECK(ShapeOf(unknown_depth) == PartialShape());
  CHECK(ShapeOf(scatter) == S({6, 7}));
  REQUIRE(offsets->num_outputs() == 2);
  CHECK(ShapeOf({offsets, 1}) == S({2}));
  CHECK(ShapeOf({topk, 0}) == S({kU, 3}));
  CHECK(ShapeOf({topk, 1}) == S({kU, 3}));
  CHECK(ShapeOf(counts) == S({8, 6}));

  SECTION("an index depth above the params rank is an error") {
    b.Op("deep", "GatherNd", {params, b.Placeholder("ix3", S({1, 4}), DT_INT32)});
    CHECK(absl::StrContains(InferError(b), "indices.shape[-1] must be <= params.rank"));
  }
  SECTION("k above the last dim is an error") {
    b.Op("bigk", "TopKV2", {b.Placeholder("few", S({2, 2})), b.Scalar("k3", 3)});
    CHECK(absl::StrContains(InferError(b), "input must have last dimension >= k = 3 but is 2"));
  }
}

TEST_CASE("Qr, Svd and SelfAdjointEigV2 give their factors' shapes",
          "[graph][shape_inference]") {
  Builder b;
  Node* tall = b.Placeholder("tall", S({2, 5, 3}));
  Node* square = b.Placeholder("square", S({4, 4}));
  Node* qr = b.Op("qr", "Qr", {tall}, {{"full_matrices", BoolAttr(false)}});
  Node* qr_full = b.Op("qr_full", "Qr", {tall}, {{"full_matrices", BoolAttr(true)}});
  Node* svd = b.Op("svd", "Svd", {tall},
                   {{"compute_uv", BoolAttr(true)}, {"full_matrices", BoolAttr(false)}});
  Node* values = b.Op("values", "Svd", {square},
                      {{"compute_uv", BoolAttr(false)}, {"full_matrices", BoolAttr(false)}});
  Node* eig = b.Op("eig", "SelfAdjointEigV2", {square}, {{"compute_v", BoolAttr(true)}});
  Node* batch_eig = b.Op("batch_eig", "SelfAdjointEigV2",
                         {b.Placeholder("batch", S({3, kU, 6}))},
                         {{"compute_v", BoolAttr(true)}});
  Infer(b);
  CHECK(ShapeOf({qr, 0}) == S({2, 5, 3}));
  CHECK(ShapeOf({qr, 1}) == S({2, 3, 3}));
  CHECK(ShapeOf({qr_full, 0}) == S({2, 5, 5}));
  CHECK(ShapeOf({qr_full, 1}) == S({2, 5, 3}));
  CHECK(ShapeOf({svd, 0}) == S({2, 3}));
  CHECK(ShapeOf({svd, 1}) == S({2, 5, 3}));
  CHECK(ShapeOf({svd, 2}) == S({2, 3, 3}));
  CHECK(ShapeOf({values, 1}) == S({0}));
  CHECK(ShapeOf({eig, 0}) == S({4}));  // a rank-2 input: no batch dims
  CHECK(ShapeOf({eig, 1}) == S({4, 4}));
  CHECK(ShapeOf({batch_eig, 0}) == S({3, 6}));
  CHECK(ShapeOf({batch_eig, 1}) == S({3, 6, 6}));
}

TEST_CASE("SparseToDense, SparseTensorDenseMatMul and candidate samplers place their dims",
          "[graph][shape_inference]") {
  Builder b;
  Node* dense = b.Op("dense", "SparseToDense",
                     {b.Placeholder("ix", S({kU, 2}), DT_INT32), b.Vector("out_shape", {3, 4}),
                      b.Placeholder("vals", S({kU})), b.Placeholder("fill", S({}))},
                     {{"validate_indices", BoolAttr(true)}});
  Node* sampled = b.Op("sampled", "LogUniformCandidateSampler",
                       {b.Placeholder("truth", S({8, 2}), DT_INT64)},
                       {{"num_true", IntAttr(2)}, {"num_sampled", IntAttr(5)},
                        {"unique", BoolAttr(true)}, {"range_max", IntAttr(30)}});
  Infer(b);
  CHECK(ShapeOf(dense) == S({3, 4}));
  CHECK(ShapeOf({sampled, 0}) == S({5}));
  CHECK(ShapeOf({sampled, 1}) == S({8, 2}));
  CHECK(ShapeOf({sampled, 2}) == S({5}));
}

TEST_CASE("Shape, Size and Rank values feed later shape arguments",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({2, 3}));
  Node* size = b.Op("size", "Size", {x});
  Node* rank = b.Op("rank", "Rank", {x});
  Node* dims = b.Op("dims", "Pack", {size, rank});
  Node* filled = b.Op("filled", "Fill", {dims, b.Placeholder("v", S({}))});
  Node* shape = b.Op("shape", "Shape", {x});
  Node* zeros = b.Op("zeros", "Fill", {shape, b.Placeholder("v2", S({}))});
  Node* unknown = b.Op("unknown", "Shape", {b.Placeholder("u", PartialShape())});
  Infer(b);
  CHECK(ShapeOf(size) == S({}));
  CHECK(ShapeOf(filled) == S({6, 2}));
  CHECK(ShapeOf(zeros) == S({2, 3}));
  CHECK(ShapeOf(unknown) == S({kU}));
}

TEST_CASE("A while loop's Merge settles on the shape every iteration fits",
          "[graph][shape_inference]") {
  Builder b;
  Attrs frame = {{"frame_name", StringAttr("loop")}};
  Node* pred = b.Placeholder("pred", S({}), DT_BOOL);
  Node* cond = b.Op("cond", "LoopCond", {b.Op("pred_enter", "Enter", {pred}, frame)});

  SECTION("a body that keeps the shape keeps it known") {
    Node* enter = b.Op("enter", "Enter", {b.Placeholder("init", S({2, 3}))}, frame);
    Node* merge = b.Op("merge", "Merge", {enter, enter});
    Node* sw = b.Op("switch", "Switch", {merge, cond});
    Node* body = b.Op("body", "Relu", {Out(sw, 1)});
    Node* next = b.Op("next", "NextIteration", {body});
    b.graph.RemoveEdge(merge->input_edge(1));
    b.graph.AddEdge(next, 0, merge, 1);
    Node* exit = b.Op("exit", "Exit", {Out(sw, 0)});
    Infer(b);
    CHECK(ShapeOf(merge) == S({2, 3}));
    CHECK(ShapeOf({merge, 1}) == S({}));
    CHECK(ShapeOf(exit) == S({2, 3}));
  }
  SECTION("a body that grows the tensor makes that dim unknown") {
    Node* enter = b.Op("enter", "Enter", {b.Placeholder("init", S({2, 3}))}, frame);
    Node* merge = b.Op("merge", "Merge", {enter, enter});
    Node* sw = b.Op("switch", "Switch", {merge, cond});
    Node* zero = b.Scalar("zero", 0);
    Node* body = b.Op("body", "ConcatV2", {Out(sw, 1), Out(sw, 1), zero});
    Node* next = b.Op("next", "NextIteration", {body});
    b.graph.RemoveEdge(merge->input_edge(1));
    b.graph.AddEdge(next, 0, merge, 1);
    Node* exit = b.Op("exit", "Exit", {Out(sw, 0)});
    Infer(b);
    CHECK(ShapeOf(merge) == S({kU, 3}));
    CHECK(ShapeOf(exit) == S({kU, 3}));
  }
}

TEST_CASE("Problems mode records one message per failing node and keeps going",
          "[graph][shape_inference]") {
  Builder b;
  Node* a = b.Placeholder("a", S({2, 3}));
  Node* bad_mm = b.Op("bad_mm", "MatMul", {a, b.Placeholder("w", S({4, 2}))});
  Node* after = b.Op("after", "Relu", {bad_mm});
  b.Op("bad_add", "Add", {a, b.Placeholder("y", S({5}))});
  Node* fine = b.Op("fine", "Neg", {a});

  std::vector<std::string> problems;
  REQUIRE(InferShapes(b.graph, &problems).ok());
  REQUIRE(problems.size() == 2);
  CHECK(absl::StartsWith(problems[0], "Node 'bad_mm' (MatMul): "));
  CHECK(absl::StartsWith(problems[1], "Node 'bad_add' (Add): "));
  CHECK(ShapeOf(after) == PartialShape());
  CHECK(ShapeOf(fine) == S({2, 3}));

  SECTION("without a problem list the first error is returned") {
    CHECK(absl::StartsWith(InferError(b), "Node 'bad_mm' (MatMul): "));
  }
}

TEST_CASE("Ops without a shape function get unknown shapes", "[graph][shape_inference]") {
  Builder b;
  Node* unique = b.Op("unique", "UniqueWithCounts", {b.Placeholder("x", S({5}))});
  Infer(b);
  REQUIRE(unique->num_outputs() == 3);
  CHECK(ShapeOf({unique, 0}) == PartialShape());
  CHECK(ShapeOf({unique, 1}) == PartialShape());
}

TEST_CASE("A cycle that does not pass through NextIteration is reported",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({2}));
  Node* first = b.Op("first", "Add", {x, x});
  Node* second = b.Op("second", "Neg", {first});
  b.graph.RemoveEdge(first->input_edge(1));
  b.graph.AddEdge(second, 0, first, 1);
  CHECK(InferError(b) ==
        "Node 'first' (Add): is on a cycle that does not pass through NextIteration");
}

TEST_CASE("A custom registry can add shape functions", "[graph][shape_inference]") {
  ShapeRegistry registry;
  RegisterStandardShapeFns(registry);
  registry.Register("UniqueWithCounts", [](InferenceContext& c) {
    c.set_output(0, c.input(0));
    c.set_output(1, c.input(0));
    return absl::OkStatus();
  });
  Builder b;
  Node* unique = b.Op("unique", "UniqueWithCounts", {b.Placeholder("x", S({5}))});
  REQUIRE(InferShapes(registry, b.graph).ok());
  CHECK(ShapeOf({unique, 1}) == S({5}));
  CHECK(ShapeRegistry::Global().Find("MatMul") != nullptr);
  CHECK(ShapeRegistry::Global().Find("UniqueWithCounts") == nullptr);
}

TEST_CASE("Shape algebra helpers broadcast, merge and relax", "[graph][shape_inference]") {
  CHECK(*BroadcastShapes(S({kU, 1}), S({1, 5})) == S({kU, 5}));
  CHECK(*BroadcastShapes(S({0}), S({kU})) == S({0}));
  CHECK(!BroadcastShapes(S({2}), S({3})).ok());
  CHECK(*MergeShapes(S({kU, 3}), S({2, kU})) == S({2, 3}));
  CHECK(MergeShapes(S({2}), S({2, 2})).status().message() ==
        "Shapes must be equal rank, but are 1 and 2");
  CHECK(RelaxShapes(S({2, 3}), S({4, 3})) == S({kU, 3}));
  CHECK(RelaxShapes(S({2}), S({2, 3})) == PartialShape());
  CHECK(*CanonicalAxis(-1, 3) == 2);
  CHECK(!MultiplyDims(int64_t{1} << 62, 4).ok());
  CHECK(*MultiplyDims(kU, 0) == 0);
}

// Imports a corpus graph (the importer runs InferShapes and reports its problems).
std::unique_ptr<Graph> ImportCorpusGraph(const std::string& relative) {
  GraphDef graph_def;
  absl::Status read = ReadProtoFile(testing::CorpusPath(relative), &graph_def);
  INFO(read.ToString());
  REQUIRE(read.ok());
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(graph_def);
  INFO(graph.status().ToString());
  REQUIRE(graph.ok());
  return std::move(*graph);
}

PartialShape NodeShape(const Graph& graph, const std::string& name, int output = 0) {
  Node* node = graph.FindNode(name);
  INFO(name);
  REQUIRE(node != nullptr);
  return node->output_shapes()[output];
}

TEST_CASE("Real TF graphs get static shapes end to end", "[graph][shape_inference]") {
  SECTION("Keras MLP: the dynamic Flatten resolves to [?,784]") {
    auto graph = ImportCorpusGraph("frozen_pb/mnist_keras_mlp512.pb");
    CHECK(NodeShape(*graph, "flatten/strided_slice") == S({}));
    CHECK(NodeShape(*graph, "flatten/Reshape") == S({kU, 784}));
    CHECK(NodeShape(*graph, "dense_1/Softmax") == S({kU, 10}));
  }
  SECTION("LeNet-5: Pad, VALID convolutions and pooling") {
    auto graph = ImportCorpusGraph("frozen_pb/mnist_lenet5_cnn.pb");
    CHECK(NodeShape(*graph, "first/Pad") == S({kU, 32, 32, 1}));
    CHECK(NodeShape(*graph, "first/MaxPool") == S({kU, 14, 14, 6}));
    CHECK(NodeShape(*graph, "third/Conv2D") == S({kU, 1, 1, 120}));
    CHECK(NodeShape(*graph, "dense2/add") == S({kU, 10}));
    CHECK(NodeShape(*graph, "dropout/random_uniform") == S({kU, 10}));
  }
  SECTION("a v1 while loop whose body concatenates") {
    auto graph = ImportCorpusGraph("pbtxt/tf_grappler_while_loop_const.pbtxt");
    CHECK(NodeShape(*graph, "while/Exit") == S({}));
    CHECK(NodeShape(*graph, "while/Merge_1") == S({kU, 2}));
    CHECK(NodeShape(*graph, "while/Exit_1") == S({kU, 2}));
  }
}

TEST_CASE("Resize and segment reductions place their dims", "[graph][shape_inference]") {
  Builder b;
  Node* image = b.Placeholder("image", S({kU, 3, 4, 2}));
  Node* bilinear = b.Op("bilinear", "ResizeBilinear", {image, b.Vector("size", {5, 7})});
  Node* nearest = b.Op("nearest", "ResizeNearestNeighbor",
                       {image, b.Placeholder("size2", S({2}), DT_INT32)});
  Node* data = b.Placeholder("data", S({4, 3, 2}));
  Node* sorted = b.Op("sorted", "SegmentMax", {data, b.Placeholder("ids", S({4}), DT_INT32)});
  Node* unsorted = b.Op("unsorted", "UnsortedSegmentSum",
                        {data, b.Placeholder("ids2", S({4, 3}), DT_INT32), b.Scalar("n", 6)});
  Infer(b);
  CHECK(ShapeOf(bilinear) == S({kU, 5, 7, 2}));
  CHECK(ShapeOf(nearest) == S({kU, kU, kU, 2}));
  CHECK(ShapeOf(sorted) == S({kU, 3, 2}));
  CHECK(ShapeOf(unsorted) == S({6, 2}));

  SECTION("a size of three values is an error") {
    b.Op("bad", "ResizeBilinear", {image, b.Vector("size3", {5, 7, 1})});
    CHECK(absl::StrContains(InferError(b), "Dimensions must be equal, but are 3 and 2"));
  }
  SECTION("negative num_segments is an error") {
    b.Op("neg", "UnsortedSegmentMax",
         {data, b.Placeholder("ids3", S({4}), DT_INT32), b.Scalar("m", -2)});
    CHECK(absl::StrContains(InferError(b), "Input num_segments == -2 must not be negative."));
  }
}

TEST_CASE("Range is [size] for known integer bounds and its value feeds shapes",
          "[graph][shape_inference]") {
  Builder b;
  Node* r =
      b.Op("r", "Range", {b.Scalar("start", 0), b.Scalar("limit", 10), b.Scalar("delta", 3)});
  Node* dims =
      b.Op("dims", "Range", {b.Scalar("two", 2), b.Scalar("four", 4), b.Scalar("one", 1)});
  Node* filled = b.Op("filled", "Fill", {dims, b.Scalar("v", 7)});
  Node* down =
      b.Op("down", "Range", {b.Scalar("ten", 10), b.Scalar("zero", 0), b.Scalar("m3", -3)});
  Node* open = b.Op("open", "Range",
                    {b.Scalar("s", 0), b.Placeholder("n", S({}), DT_INT32), b.Scalar("d", 1)});
  Infer(b);
  CHECK(ShapeOf(r) == S({4}));
  CHECK(ShapeOf(filled) == S({2, 3}));  // Range(2, 4) = [2, 3]
  CHECK(ShapeOf(down) == S({4}));
  CHECK(ShapeOf(open) == S({kU}));

  SECTION("a zero delta or a wrong direction is an error") {
    b.Op("bad", "Range", {b.Scalar("a", 0), b.Scalar("b", 5), b.Scalar("z", 0)});
    CHECK(absl::StrContains(InferError(b), "Requires delta != 0"));
  }
  SECTION("start after limit with a positive delta is an error") {
    b.Op("bad", "Range", {b.Scalar("a", 5), b.Scalar("b", 0), b.Scalar("z", 1)});
    CHECK(absl::StrContains(InferError(b), "Requires start <= limit when delta > 0: 5/0"));
  }
  SECTION("bounds must be scalars") {
    b.Op("bad", "Range", {b.Vector("a", {0, 1}), b.Scalar("b", 5), b.Scalar("z", 1)});
    CHECK(absl::StrContains(InferError(b), "for 'start'"));
  }
}

TEST_CASE("BroadcastArgs, Where, Unique and the shape-keeping array ops",
          "[graph][shape_inference]") {
  Builder b;
  Node* args = b.Op("args", "BroadcastArgs", {b.Vector("s0", {2, 1, 3}), b.Vector("s1", {4, 1})});
  Node* filled = b.Op("filled", "Fill", {args, b.Scalar("v", 0)});
  Node* x = b.Placeholder("x", S({2, kU, 5}));
  Node* where = b.Op("where", "Where", {x});
  Node* unique = b.Op("unique", "Unique", {b.Placeholder("u", S({6}))});
  Node* reversed = b.Op("reversed", "ReverseV2", {x, b.Vector("axes", {1})});
  Node* cumsum = b.Op("cumsum", "Cumsum", {x, b.Scalar("axis", 0)});
  Node* rolled = b.Op("rolled", "Roll", {x, b.Scalar("shift", 1), b.Scalar("raxis", 0)});
  Node* band = b.Op("band", "MatrixBandPart", {x, b.Scalar("lo", -1), b.Scalar("hi", 0)});
  Infer(b);
  CHECK(ShapeOf(args) == S({3}));
  CHECK(ShapeOf(filled) == S({2, 4, 3}));
  CHECK(ShapeOf(where) == S({kU, 3}));
  CHECK(ShapeOf(Out(unique, 0)) == S({kU}));
  CHECK(ShapeOf(Out(unique, 1)) == S({6}));
  for (Node* n : {reversed, cumsum, rolled, band}) CHECK(ShapeOf(n) == S({2, kU, 5}));

  SECTION("Unique needs a vector") {
    b.Op("bad", "Unique", {b.Placeholder("m", S({2, 2}))});
    CHECK(absl::StrContains(InferError(b), "Shape must be rank 1 but is rank 2"));
  }
}

TEST_CASE("SpaceToBatchND, BatchToSpaceND and Conv2DBackpropInput shapes",
          "[graph][shape_inference]") {
  Builder b;
  Node* x = b.Placeholder("x", S({2, 3, 4, 5}));
  Node* block = b.Vector("block", {2, 2});
  Node* s2b = b.Op("s2b", "SpaceToBatchND", {x, block, b.Const("pads", {1, 0, 0, 0}, {2, 2})});
  Node* b2s = b.Op("b2s", "BatchToSpaceND", {s2b, block, b.Const("crops", {1, 0, 0, 2}, {2, 2})});
  Node* blk = b.Placeholder("blk", S({2}), DT_INT32);
  Node* unknown = b.Op("unknown", "SpaceToBatchND", {x, blk, b.Const("p2", {0, 0, 0, 0}, {2, 2})});
  Node* grad = b.Op("grad", "Conv2DBackpropInput",
                    {b.Vector("sizes", {1, 8, 8, 3}), b.Placeholder("f", S({3, 3, 3, 4})),
                     b.Placeholder("dy", S({1, 4, 4, 4}))},
                    {{"padding", StringAttr("SAME")}, {"strides", IntsAttr({1, 2, 2, 1})}});
  Infer(b);
  CHECK(ShapeOf(s2b) == S({8, 2, 2, 5}));
  CHECK(ShapeOf(b2s) == S({2, 3, 2, 5}));
  CHECK(ShapeOf(unknown) == S({kU, kU, kU, kU}));
  CHECK(ShapeOf(grad) == S({1, 8, 8, 3}));
}

TEST_CASE("The element-wise string ops keep their input's shape", "[graph][shape_inference]") {
  Builder b;
  Node* s = b.Placeholder("s", S({2, kU}), DT_STRING);
  AttrValue text;
  text.set_s("a");
  std::vector<Node*> ops = {
      b.Op("length", "StringLength", {s}), b.Op("lower", "StringLower", {s}),
      b.Op("upper", "StringUpper", {s}), b.Op("number", "StringToNumber", {s}),
      b.Op("static", "StaticRegexReplace", {s}, {{"pattern", text}, {"rewrite", text}}),
      b.Op("dynamic", "RegexReplace", {s, b.Placeholder("p", S({}), DT_STRING),
                                       b.Placeholder("r", S({}), DT_STRING)}),
      b.Op("text", "AsString", {b.Placeholder("f", S({2, kU}))})};
  Infer(b);
  for (Node* n : ops) CHECK(ShapeOf(n) == S({2, kU}));
}

TEST_CASE("NonMaxSuppressionV3/V4/V5 and CropAndResize place their dims",
          "[graph][shape_inference]") {
  Builder b;
  Node* boxes = b.Placeholder("boxes", S({kU, 4}));
  Node* scores = b.Placeholder("scores", S({7}));
  Node* iou = b.Placeholder("iou", S({}));
  Node* score_threshold = b.Placeholder("score_threshold", S({}));
  Node* sigma = b.Placeholder("sigma", S({}));
  Node* max = b.Scalar("max", 5);
  Node* v3 = b.Op("v3", "NonMaxSuppressionV3", {boxes, scores, max, iou, score_threshold});
  Node* v4 = b.Op("v4", "NonMaxSuppressionV4", {boxes, scores, max, iou, score_threshold});
  Node* v4_padded = b.Op("v4_padded", "NonMaxSuppressionV4",
                         {boxes, scores, max, iou, score_threshold},
                         {{"pad_to_max_output_size", BoolAttr(true)}});
  Node* v5 = b.Op("v5", "NonMaxSuppressionV5", {boxes, scores, max, iou, score_threshold, sigma});
  Node* v5_padded = b.Op("v5_padded", "NonMaxSuppressionV5",
                         {boxes, scores, max, iou, score_threshold, sigma},
                         {{"pad_to_max_output_size", BoolAttr(true)}});
  Node* crops = b.Op("crops", "CropAndResize",
                     {b.Placeholder("image", S({2, 10, 10, 3})), b.Placeholder("cboxes", S({kU, 4})),
                      b.Placeholder("box_ind", S({6}), DT_INT32), b.Vector("crop_size", {4, 5})});
  Node* unknown_size =
      b.Op("unknown_size", "CropAndResize",
           {b.Placeholder("image2", S({kU, kU, kU, 8})), b.Placeholder("cboxes2", S({3, 4})),
            b.Placeholder("box_ind2", S({kU}), DT_INT32),
            b.Placeholder("size2", S({2}), DT_INT32)});
  Infer(b);
  CHECK(ShapeOf(v3) == S({kU}));
  CHECK(ShapeOf({v4, 0}) == S({kU}));
  CHECK(ShapeOf({v4, 1}) == S({}));
  CHECK(ShapeOf({v4_padded, 0}) == S({5}));
  CHECK(ShapeOf({v5, 0}) == S({kU}));
  CHECK(ShapeOf({v5, 1}) == S({kU}));
  CHECK(ShapeOf({v5, 2}) == S({}));
  CHECK(ShapeOf({v5_padded, 0}) == S({5}));
  CHECK(ShapeOf({v5_padded, 1}) == S({5}));
  CHECK(ShapeOf(crops) == S({6, 4, 5, 3}));
  CHECK(ShapeOf(unknown_size) == S({3, kU, kU, 8}));

  SECTION("boxes must have 4 columns") {
    b.Op("bad", "NonMaxSuppressionV3",
         {b.Placeholder("b3", S({7, 3})), scores, max, iou, score_threshold});
    CHECK(absl::StrContains(InferError(b), "Dimensions must be equal, but are 3 and 4"));
  }
  SECTION("boxes and scores must agree") {
    b.Op("bad", "NonMaxSuppressionV3",
         {b.Placeholder("b8", S({8, 4})), scores, max, iou, score_threshold});
    CHECK(absl::StrContains(InferError(b), "Dimensions must be equal, but are 8 and 7"));
  }
}

}  // namespace
}  // namespace dflow
