// Tests for the graph-building API: Scope (graph/scope.h) and op functions (graph/ops.h).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/ops.h"
#include "graph/scope.h"

namespace dflow {
namespace {

GraphDef ToGraphDefOrFail(const Scope& scope) {
  GraphDef graph_def;
  absl::Status status = scope.ToGraphDef(&graph_def);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return graph_def;
}

const NodeDef& FindNodeDef(const GraphDef& graph_def, const std::string& name) {
  for (const NodeDef& node : graph_def.node()) {
    if (node.name() == name) return node;
  }
  FAIL("no node named " << name);
  return graph_def.node(0);  // not reached
}

std::vector<std::string> Inputs(const NodeDef& node) {
  return {node.input().begin(), node.input().end()};
}

std::vector<std::string> NodeNames(const GraphDef& graph_def) {
  std::vector<std::string> names;
  for (const NodeDef& node : graph_def.node()) names.push_back(node.name());
  return names;
}

std::vector<int64_t> Dims(const TensorProto& tensor) {
  std::vector<int64_t> dims;
  for (const auto& dim : tensor.tensor_shape().dim()) dims.push_back(dim.size());
  return dims;
}

std::vector<float> FloatValues(const TensorProto& tensor) {
  return {tensor.float_val().begin(), tensor.float_val().end()};
}

std::vector<std::string> ColocationList(const NodeDef& node) {
  const AttrValue& attr = node.attr().at("_class");
  return {attr.list().s().begin(), attr.list().s().end()};
}

TEST_CASE("Scope builds TF's seed graph: two constants feeding a MatMul",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Output b = Const(root.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  Output c = MatMul(root.WithOpName("c"), a, b);
  REQUIRE(root.ok());
  CHECK(c.dtype() == DT_FLOAT);

  GraphDef graph_def = ToGraphDefOrFail(root);
  REQUIRE(graph_def.node_size() == 3);
  CHECK(NodeNames(graph_def) == std::vector<std::string>{"a", "b", "c"});

  const NodeDef& a_def = graph_def.node(0);
  CHECK(a_def.op() == "Const");
  CHECK(a_def.input_size() == 0);
  CHECK(a_def.attr().at("dtype").type() == DT_FLOAT);
  const TensorProto& a_value = a_def.attr().at("value").tensor();
  CHECK(a_value.dtype() == DT_FLOAT);
  CHECK(Dims(a_value) == std::vector<int64_t>{2, 3});
  CHECK(FloatValues(a_value) == std::vector<float>{1, 2, 3, 4, 5, 6});

  const TensorProto& b_value = graph_def.node(1).attr().at("value").tensor();
  CHECK(graph_def.node(1).op() == "Const");
  CHECK(Dims(b_value) == std::vector<int64_t>{3, 2});
  CHECK(FloatValues(b_value) == std::vector<float>{1, 2, 3, 4, 5, 6});

  const NodeDef& c_def = graph_def.node(2);
  CHECK(c_def.op() == "MatMul");
  CHECK(Inputs(c_def) == std::vector<std::string>{"a", "b"});
  CHECK(c_def.attr().at("T").type() == DT_FLOAT);
  REQUIRE(c_def.attr().contains("transpose_a"));
  REQUIRE(c_def.attr().contains("transpose_b"));
  CHECK_FALSE(c_def.attr().at("transpose_a").b());
  CHECK_FALSE(c_def.attr().at("transpose_b").b());
  CHECK(c_def.device().empty());
}

TEST_CASE("Scope places tower sub-scopes on their GPUs and sums them on the CPU",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  std::vector<Output> towers;
  for (int d : {2, 3}) {
    const std::string gpu = "/gpu:" + std::to_string(d);
    Scope tower = root.NewSubScope("tower_" + std::to_string(d)).WithDevice(gpu);
    Output x = Const(tower.WithOpName("x"), {{1.f, 2.f}, {3.f, 4.f}});
    Output y = Const(tower.WithOpName("y"), {{5.f, 6.f}, {7.f, 8.f}});
    towers.push_back(MatMul(tower.WithOpName("matmul"), x, y));
  }
  AddN(root.WithDevice("/cpu:0").WithOpName("sum"), towers);
  REQUIRE(root.ok());

  GraphDef graph_def = ToGraphDefOrFail(root);
  CHECK(NodeNames(graph_def) ==
        std::vector<std::string>{"tower_2/x", "tower_2/y", "tower_2/matmul", "tower_3/x",
                                 "tower_3/y", "tower_3/matmul", "sum"});
  for (const char* name : {"tower_2/x", "tower_2/y", "tower_2/matmul"}) {
    CHECK(FindNodeDef(graph_def, name).device() == "/gpu:2");
  }
  for (const char* name : {"tower_3/x", "tower_3/y", "tower_3/matmul"}) {
    CHECK(FindNodeDef(graph_def, name).device() == "/gpu:3");
  }
  CHECK(Inputs(FindNodeDef(graph_def, "tower_3/matmul")) ==
        std::vector<std::string>{"tower_3/x", "tower_3/y"});
  const NodeDef& sum_def = FindNodeDef(graph_def, "sum");
  CHECK(sum_def.op() == "AddN");
  CHECK(sum_def.device() == "/cpu:0");
  CHECK(Inputs(sum_def) == std::vector<std::string>{"tower_2/matmul", "tower_3/matmul"});
  CHECK(sum_def.attr().at("N").i() == 2);
  CHECK(sum_def.attr().at("T").type() == DT_FLOAT);
}

TEST_CASE("Scope gives repeated names TF's _N suffixes, skipping taken ones",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();

  SECTION("default names are the op type, then Const_1, Const_2") {
    CHECK(Const(root, 1.f).node->name() == "Const");
    CHECK(Const(root, 2.f).node->name() == "Const_1");
    CHECK(Const(root, 3.f).node->name() == "Const_2");
    CHECK(Identity(root, Const(root, 4.f)).node->name() == "Identity");
  }
  SECTION("WithOpName twice gives x then x_1") {
    CHECK(Const(root.WithOpName("x"), 1.f).node->name() == "x");
    CHECK(Const(root.WithOpName("x"), 2.f).node->name() == "x_1");
  }
  SECTION("a generated name already used is skipped") {
    CHECK(Const(root.WithOpName("Const_1"), 1.f).node->name() == "Const_1");
    CHECK(Const(root, 2.f).node->name() == "Const");
    CHECK(Const(root, 3.f).node->name() == "Const_2");
  }
  SECTION("sub-scopes are uniquified and have their own name maps") {
    Scope a = root.NewSubScope("a");
    Scope a1 = root.NewSubScope("a");
    CHECK(Const(a, 1.f).node->name() == "a/Const");
    CHECK(Const(a1, 1.f).node->name() == "a_1/Const");
    CHECK(Const(a.NewSubScope("inner"), 1.f).node->name() == "a/inner/Const");
    CHECK(Const(root, 1.f).node->name() == "Const");
    CHECK(Const(root.NewSubScope(""), 1.f).node->name() == "Const_1");
  }
  SECTION("a name taken through another name map is skipped too") {
    CHECK(Const(root.WithOpName("s/Const"), 1.f).node->name() == "s/Const");
    CHECK(Const(root.NewSubScope("s"), 2.f).node->name() == "s/Const_1");
  }
  SECTION("literal inputs become Consts named Const in the op's scope") {
    Scope sub = root.NewSubScope("sub");
    Output x = Placeholder(sub.WithOpName("x"), DT_FLOAT);
    Output y = Add(sub.WithOpName("y"), x, 1.f);
    REQUIRE(root.ok());
    CHECK(y.node->name() == "sub/y");
    CHECK(y.node->in_edges().size() == 2);
    CHECK(sub.graph()->FindNode("sub/Const") != nullptr);
  }
  CHECK(root.ok());
}

TEST_CASE("Scope control dependencies appear as ^name after the data inputs",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Operation init = NoOp(root.WithOpName("init"));
  Output before = Const(root.WithOpName("before"), 1.f);
  Output x = Const(root.WithOpName("x"), 2.f);
  Scope deps = root.WithControlDependencies({init}).WithControlDependencies(before);
  Identity(deps.WithOpName("y"), x);
  Identity(deps.WithNoControlDependencies().WithOpName("z"), x);
  REQUIRE(root.ok());

  GraphDef graph_def = ToGraphDefOrFail(root);
  CHECK(FindNodeDef(graph_def, "init").op() == "NoOp");
  CHECK(Inputs(FindNodeDef(graph_def, "y")) ==
        std::vector<std::string>{"x", "^init", "^before"});
  CHECK(Inputs(FindNodeDef(graph_def, "z")) == std::vector<std::string>{"x"});
}

TEST_CASE("ColocateWith writes a sorted _class list and ClearColocation removes it",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Output zeta = Const(root.WithOpName("zeta"), 1.f);
  Output alpha = Const(root.WithOpName("alpha"), 2.f);
  Scope colocated = root.ColocateWith(zeta).ColocateWith(alpha);
  Output both = Add(colocated.WithOpName("both"), zeta, alpha);
  Identity(root.ColocateWith(both).WithOpName("grouped"), both);
  Identity(colocated.ClearColocation().WithOpName("clear"), both);
  REQUIRE(root.ok());

  GraphDef graph_def = ToGraphDefOrFail(root);
  CHECK(ColocationList(FindNodeDef(graph_def, "both")) ==
        std::vector<std::string>{"loc:@alpha", "loc:@zeta"});
  // Colocating with a node that has groups joins its groups, not its name.
  CHECK(ColocationList(FindNodeDef(graph_def, "grouped")) ==
        std::vector<std::string>{"loc:@alpha", "loc:@zeta"});
  CHECK_FALSE(FindNodeDef(graph_def, "clear").attr().contains("_class"));
  CHECK_FALSE(FindNodeDef(graph_def, "zeta").attr().contains("_class"));
}

TEST_CASE("A dtype mismatch records INVALID_ARGUMENT naming the node and both dtypes",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Output f = Const(root.WithOpName("f"), 1.f);
  Output i = Const(root.WithOpName("i"), 2);
  Output bad = Add(root.WithOpName("bad"), f, i);

  CHECK(bad.node == nullptr);
  REQUIRE_FALSE(root.ok());
  const absl::Status first = root.status();
  CHECK(first.code() == absl::StatusCode::kInvalidArgument);
  INFO(first.message());
  CHECK(absl::StrContains(first.message(), "'bad'"));
  CHECK(absl::StrContains(first.message(), "Input 1"));
  CHECK(absl::StrContains(first.message(), "int32"));
  CHECK(absl::StrContains(first.message(), "float"));

  SECTION("later ops on any scope of the tree are no-ops") {
    const int nodes = root.graph()->num_nodes();
    CHECK(Const(root, 3.f).node == nullptr);
    CHECK(MatMul(root.NewSubScope("s"), f, f).node == nullptr);
    CHECK(NoOp(root).node == nullptr);
    CHECK(root.graph()->num_nodes() == nodes);
    CHECK(root.status() == first);
  }
  SECTION("a later error does not replace the first") {
    AddOp(root, "NoSuchOp", {});
    CHECK(root.status() == first);
  }
  SECTION("ToGraphDef returns the first error") {
    GraphDef graph_def;
    CHECK(root.ToGraphDef(&graph_def) == first);
    CHECK(graph_def.node_size() == 0);
  }
}

TEST_CASE("A malformed device spec is an INVALID_ARGUMENT naming the op",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Scope bad_device = root.WithDevice("/gpu:x");
  CHECK(root.ok());  // only building an op reports it
  Output c = Const(bad_device.WithOpName("c"), 1.f);
  CHECK(c.node == nullptr);
  REQUIRE(root.status().code() == absl::StatusCode::kInvalidArgument);
  INFO(root.status().message());
  CHECK(absl::StrContains(root.status().message(), "'c'"));
  CHECK(absl::StrContains(root.status().message(), "/gpu:x"));
}

TEST_CASE("WithDevice replaces the device and stores the spec verbatim", "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Output x = Const(root.WithDevice("/job:w/task:1").WithDevice("/device:GPU:0"), 1.f);
  Output y = Const(root.WithDevice("/gpu:1").WithDevice(""), 1.f);
  REQUIRE(root.ok());
  CHECK(x.node->requested_device() == "/device:GPU:0");
  CHECK(y.node->requested_device().empty());
}

TEST_CASE("Misused ops record errors naming the node", "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Output x = Const(root.WithOpName("x"), {1.f, 2.f});
  auto expect_error = [&](const std::string& fragment) {
    REQUIRE_FALSE(root.ok());
    CHECK(root.status().code() == absl::StatusCode::kInvalidArgument);
    INFO(root.status().message());
    CHECK(absl::StrContains(root.status().message(), fragment));
  };

  SECTION("unknown op") {
    CHECK(AddOp(root.WithOpName("u"), "NoSuchOp", {}).node == nullptr);
    expect_error("Op type not registered 'NoSuchOp'");
  }
  SECTION("wrong arity") {
    CHECK(AddOp(root.WithOpName("w"), "Add", {x}).node == nullptr);
    expect_error("'w' (Add): the op takes 2 inputs but was given 1");
  }
  SECTION("a single tensor where the op takes a list") {
    CHECK(AddOp(root.WithOpName("n"), "AddN", {x}).node == nullptr);
    expect_error("input 'inputs' takes a list");
  }
  SECTION("a dtype outside the op's allowed values") {
    CHECK(Softmax(root.WithOpName("s"), Const(root, {1, 2})).node == nullptr);
    expect_error("'s' (Softmax): attr 'T'");
  }
  SECTION("an Output of another graph") {
    Scope other = Scope::NewRootScope();
    Output foreign = Const(other.WithOpName("foreign"), 1.f);
    CHECK(Add(root.WithOpName("mix"), x, foreign).node == nullptr);
    expect_error("node 'foreign' of another graph");
  }
  SECTION("a null Output") {
    CHECK(Neg(root.WithOpName("neg"), Output()).node == nullptr);
    expect_error("'neg' (Neg): input 0 is null");
  }
  SECTION("a ragged nested literal") {
    CHECK(Const(root, {{1.f, 2.f}, {3.f}}).node == nullptr);
    expect_error("same shape");
  }
  SECTION("an invalid node name") {
    CHECK(Const(root.WithOpName("bad name"), 1.f).node == nullptr);
    expect_error("invalid node name");
  }
}

TEST_CASE("Output::name always carries the index", "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Output c = Const(root.NewSubScope("s").WithOpName("c"), 1.f);
  OutputList pair = IdentityN(root.WithOpName("pair"), {c, c});
  REQUIRE(root.ok());
  CHECK(c.name() == "s/c:0");
  REQUIRE(pair.size() == 2);
  CHECK(pair[0].name() == "pair:0");
  CHECK(pair[1].name() == "pair:1");
  CHECK(Output().name().empty());
  CHECK(Operation(c).name() == "s/c");
  CHECK(Output().dtype() == DT_INVALID);
}

TEST_CASE("Literal inputs take the dtype the op expects when they convert",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT, PartialShape({-1, 3}));
  Output y = Placeholder(root.WithOpName("y"), DT_INT64);

  SECTION("an int literal beside a float tensor becomes float") {
    Output sum = Add(root, 2, x);
    REQUIRE(root.ok());
    CHECK(sum.dtype() == DT_FLOAT);
    CHECK(sum.node->input_edge(0)->src->attr("dtype")->type() == DT_FLOAT);
  }
  SECTION("an integral double becomes int64, a fractional one does not") {
    CHECK(Mul(root, y, 3.0).dtype() == DT_INT64);
    REQUIRE(root.ok());
    CHECK(Mul(root.WithOpName("frac"), y, 2.5).node == nullptr);
    CHECK(absl::StrContains(root.status().message(), "'frac' (Mul) was passed double"));
  }
  SECTION("a literal alone decides a type attr, e.g. an int64 axis") {
    Output s = Sum(root, x, int64_t{1}, /*keep_dims=*/true);
    REQUIRE(root.ok());
    CHECK(s.node->attr("Tidx")->type() == DT_INT64);
    CHECK(s.node->attr("keep_dims")->b());
  }
}

TEST_CASE("Op functions set their attrs from arguments and input dtypes",
          "[graph][scope]") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT, PartialShape({-1, 3}));
  Output z = PlaceholderWithDefault(root.WithOpName("z"), {1, 2}, PartialShape({2}));
  Output cast = Cast(root, x, DT_INT32);
  Output mean = Mean(root, x, {0, 1});
  Output concat = ConcatV2(root, {x, x, x}, 0);
  Output pack = Pack(root, {x, x}, 1);
  Output squeeze = Squeeze(root, x, {0});
  Output shape = Shape(root, x, DT_INT64);
  Output matmul = MatMul(root, x, x, {/*transpose_a=*/false, /*transpose_b=*/true});
  Output fill = Fill(root, {2, 3}, 0.5f);
  Output reshaped = Reshape(root, x, {3, -1});
  REQUIRE(root.ok());

  const PartialShape x_shape =
      PartialShape::FromProto(x.node->attr("shape")->shape()).value();
  CHECK(x_shape == PartialShape({-1, 3}));
  CHECK(x.node->attr("dtype")->type() == DT_FLOAT);
  CHECK(z.dtype() == DT_INT32);
  CHECK(cast.dtype() == DT_INT32);
  CHECK(cast.node->attr("SrcT")->type() == DT_FLOAT);
  CHECK_FALSE(cast.node->attr("Truncate")->b());
  CHECK(mean.node->attr("Tidx")->type() == DT_INT32);
  CHECK_FALSE(mean.node->attr("keep_dims")->b());
  CHECK(concat.node->attr("N")->i() == 3);
  CHECK(concat.node->num_inputs() == 4);
  CHECK(pack.node->attr("axis")->i() == 1);
  CHECK(pack.node->attr("N")->i() == 2);
  CHECK(squeeze.node->attr("squeeze_dims")->list().i_size() == 1);
  CHECK(shape.dtype() == DT_INT64);
  CHECK(matmul.node->attr("transpose_b")->b());
  CHECK(fill.dtype() == DT_FLOAT);
  CHECK(fill.node->attr("index_type")->type() == DT_INT32);
  CHECK(reshaped.node->attr("Tshape")->type() == DT_INT32);
  CHECK(Squeeze(root, x).node->attr("squeeze_dims")->has_list());
}

}  // namespace
}  // namespace dflow
