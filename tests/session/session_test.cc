// Session behaviour from C++: the seed documents' graphs, feeds and fetches, errors,
// timeouts, Close, concurrency and RunMetadata.
#include <iostream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "graph/ops.h"
#include "graph/scope.h"
#include "session/client_session.h"
#include "session/session.h"
#include "tests/testing/graph_testing.h"

namespace dflow {
namespace {

template <typename T>
std::vector<T> ValuesOf(const Tensor& t) {
  auto flat = t.flat<T>();
  return std::vector<T>(flat.begin(), flat.end());
}

Tensor FloatTensor(std::initializer_list<int64_t> shape, std::vector<float> values) {
  static CpuAllocator allocator;
  Tensor t = *Tensor::Allocate(&allocator, DT_FLOAT, TensorShape(shape));
  std::copy(values.begin(), values.end(), t.flat<float>().begin());
  return t;
}

ConfigProto CpuConfig(int cpus) {
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = cpus;
  return config;
}

// Captures std::cerr for the lifetime of the object.
class CaptureStderr {
 public:
  CaptureStderr() : old_(std::cerr.rdbuf(buffer_.rdbuf())) {}
  ~CaptureStderr() { std::cerr.rdbuf(old_); }
  std::string text() const { return buffer_.str(); }

 private:
  std::stringstream buffer_;
  std::streambuf* old_;
};

// The seed graph: c = MatMul(a[2x3], b[3x2]) = [[22,28],[49,64]].
struct SeedGraph {
  Scope root = Scope::NewRootScope();
  Output a = Const(root.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Output b = Const(root.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  Output c = MatMul(root.WithOpName("c"), a, b);
};

TEST_CASE("The seed MatMul gives [[22,28],[49,64]] with TF's placement log", "[session]") {
  SeedGraph g;
  ConfigProto config;
  config.set_log_device_placement(true);
  CaptureStderr capture;
  auto session = ClientSession::Create(g.root, config);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({g.c}, &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == TensorShape({2, 2}));
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{22, 28, 49, 64});
  const std::string log = capture.text();
  INFO(log);
  CHECK(absl::StrContains(log, "Device mapping: no known devices."));
  CHECK(absl::StrContains(log, "c: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0"));
  CHECK(absl::StrContains(log, "a: (Const): /job:localhost/replica:0/task:0/device:CPU:0"));
}

TEST_CASE("Towers on /cpu:2 and /cpu:3 summed by AddN on /cpu:0 give [[44,56],[98,128]]",
          "[session]") {
  Scope root = Scope::NewRootScope();
  std::vector<Output> towers;
  for (int d : {2, 3}) {
    Scope tower = root.NewSubScope("tower_" + std::to_string(d))
                      .WithDevice("/cpu:" + std::to_string(d));
    Output a = Const(tower.WithOpName("a"), {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    Output b = Const(tower.WithOpName("b"), {{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    towers.push_back(MatMul(tower.WithOpName("c"), a, b));
  }
  Output sum = AddN(root.WithOpName("sum").WithDevice("/cpu:0"), towers);
  auto session = ClientSession::Create(root, CpuConfig(4));
  REQUIRE(session.ok());
  RunOptions options;
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run(options, {}, {sum}, {}, &out, &metadata);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{44, 56, 98, 128});
  // Three partitions; CPU:0 receives one tensor from each tower device.
  REQUIRE(metadata.partition_graphs_size() == 3);
  int sends = 0, recvs = 0;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& node : partition.node()) {
      sends += node.op() == "_Send";
      recvs += node.op() == "_Recv";
    }
  }
  CHECK(sends == 2);
  CHECK(recvs == 2);
  PlacementResult placement = (*session)->session()->placement();
  bool found = false;
  for (const auto& d : placement.decisions) {
    if (d.node == "tower_3/c") {
      found = true;
      CHECK(d.device == "/job:localhost/replica:0/task:0/device:CPU:3");
    }
  }
  CHECK(found);
}

TEST_CASE("A missing device fails at Create, and soft placement falls back", "[session]") {
  Scope root = Scope::NewRootScope();
  Const(root.WithOpName("a").WithDevice("/gpu:2"), {1.f, 2.f});
  GraphDef graph_def;
  REQUIRE(root.ToGraphDef(&graph_def).ok());
  {
    auto session = NewSession();
    REQUIRE(session.ok());
    absl::Status status = (*session)->Create(graph_def);
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    INFO(status.message());
    CHECK(absl::StrContains(status.message(), "Cannot assign a device for operation a"));
  }
  ConfigProto soft;
  soft.set_allow_soft_placement(true);
  auto session = NewSession(soft);
  REQUIRE((*session)->Create(graph_def).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {"a"}, {}, &out).ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{1, 2});
}

TEST_CASE("Feeds replace tensors; x and x:0 are the same tensor", "[session]") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output y = Add(root.WithOpName("y"), x, x);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{x, FloatTensor({2}, {1, 2})}}, {y}, &out).ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{2, 4});
  Session* s = (*session)->session();
  REQUIRE(s->Run({{"x", FloatTensor({1}, {5})}}, {"y"}, {}, &out).ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{10});
  // Any tensor may be fed, not only placeholders.
  // A fetched feed is answered with the fed value (TF's Python Session does the same).
  REQUIRE(s->Run({{"y:0", FloatTensor({1}, {7})}}, {"y:0"}, {}, &out).ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{7});
}

// What `dflow run --feed` parses values with: the session's own import, no other.
TEST_CASE("GetFeedSpec gives a fed tensor's dtype and shape, and Run's errors", "[session]") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_INT64, PartialShape({-1, 3}));
  Cast(root.WithOpName("y"), x, DT_FLOAT);
  auto client = ClientSession::Create(root);
  REQUIRE(client.ok());
  Session* s = (*client)->session();
  std::vector<Tensor> out;
  REQUIRE((*client)->Run({}, &out).code() == absl::StatusCode::kInvalidArgument);  // sends graph
  absl::StatusOr<FeedSpec> spec = s->GetFeedSpec("x");
  REQUIRE(spec.ok());
  CHECK(spec->dtype == DT_INT64);
  CHECK(spec->shape.ToString() == "[?,3]");
  absl::StatusOr<FeedSpec> y = s->GetFeedSpec("y:0");
  REQUIRE(y.ok());
  CHECK(y->dtype == DT_FLOAT);
  CHECK(s->GetFeedSpec("nope").status().message() ==
        "Tensor nope, specified in either feed_devices or fetch_devices was not found in the "
        "Graph");
  CHECK(s->GetFeedSpec("x:2").status().code() == absl::StatusCode::kOutOfRange);
  CHECK(s->GetFeedSpec("^x").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(s->graph() != nullptr);
}

TEST_CASE("Create with fed tensors: a fed node the GraphDef lacks gets a stand-in",
          "[session]") {
  GraphDef graph_def = testing::GraphFromText(R"pb(
    node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  auto plain = NewSession({});
  REQUIRE(plain.ok());
  CHECK((*plain)->Create(graph_def).code() == absl::StatusCode::kInvalidArgument);

  auto session = NewSession({});
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(graph_def, {"x"}).ok());
  absl::StatusOr<FeedSpec> spec = (*session)->GetFeedSpec("x");
  REQUIRE(spec.ok());
  CHECK(spec->dtype == DT_FLOAT);
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{"x", FloatTensor({2}, {1, -2})}}, {"y"}, {}, &out).ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{-1, 2});
}

TEST_CASE("Run errors are clear and leave the session usable", "[session]") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT, PartialShape({-1, 3}));
  Reshape(root.WithOpName("r"), x, {-1, 4});
  auto client = ClientSession::Create(root);
  REQUIRE(client.ok());
  Session* s = (*client)->session();
  std::vector<Tensor> out;
  REQUIRE((*client)->Run({}, &out).code() == absl::StatusCode::kInvalidArgument);

  absl::Status unfed = s->Run({}, {"r"}, {}, &out);
  INFO(unfed.message());
  CHECK(absl::StrContains(unfed.message(),
                          "You must feed a value for placeholder tensor 'x' with dtype float and shape [?,3]"));

  absl::Status bad_shape = s->Run({{"x", FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6})}}, {"r"}, {}, &out);
  CHECK(bad_shape.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(bad_shape.message(), "[[{{node r}}]]"));

  absl::Status wrong_shape = s->Run({{"x", FloatTensor({2, 2}, {1, 2, 3, 4})}}, {"r"}, {}, &out);
  CHECK(wrong_shape.code() == absl::StatusCode::kInvalidArgument);
  CHECK(wrong_shape.message() ==
        "Cannot feed value of shape [2,2] for tensor 'x:0', which has shape [?,3]");

  absl::Status wrong_dtype = s->Run({{"x", Tensor()}}, {"r"}, {}, &out);
  CHECK(absl::StrContains(wrong_dtype.message(), "Expects arg[0] to be float"));

  // TF 2.21's codes (checked through its C API): an unknown tensor is INVALID_ARGUMENT,
  // an output the node lacks OUT_OF_RANGE.
  absl::Status unknown = s->Run({}, {"nope:0"}, {}, &out);
  CHECK(unknown.code() == absl::StatusCode::kInvalidArgument);
  CHECK(unknown.message() ==
        "Tensor nope:0, specified in either feed_devices or fetch_devices was not found in "
        "the Graph");
  absl::Status out_of_range = s->Run({}, {"x:3"}, {}, &out);
  CHECK(out_of_range.code() == absl::StatusCode::kOutOfRange);
  CHECK(out_of_range.message() ==
        "Node 'x' (type: 'Placeholder', num of outputs: 1) does not have output 3");

  // A fetched feed returns the fed value, as TF's Python Session does.
  REQUIRE(s->Run({{"x", FloatTensor({1, 3}, {1, 2, 3})}}, {"x"}, {}, &out).ok());
  REQUIRE(out.size() == 1);
  CHECK(out[0].flat<float>()[2] == 3.0f);
  REQUIRE(s->Run({{"x", FloatTensor({4, 3}, std::vector<float>(12, 1.f))}}, {"r", "x:0"}, {},
                 &out).ok());
  REQUIRE(out.size() == 2);
  CHECK(out[0].shape() == TensorShape({3, 4}));
  CHECK(out[1].shape() == TensorShape({4, 3}));
  CHECK(s->Run({{"nope", FloatTensor({1}, {1})}}, {"nope"}, {}, &out).code() ==
        absl::StatusCode::kInvalidArgument);
  // With nothing left to compute, the feeds are still checked as a step checks them.
  CHECK(s->Run({{"x", FloatTensor({2, 2}, {1, 2, 3, 4})}}, {"x"}, {}, &out).message() ==
        "Cannot feed value of shape [2,2] for tensor 'x:0', which has shape [?,3]");
  CHECK(s->Run({{"x", FloatTensor({1, 3}, {1, 2, 3})}, {"x:0", FloatTensor({1, 3}, {1, 2, 3})}},
               {"x"}, {}, &out)
            .message() == "Endpoint \"x:0\" fed more than once.");

  // Still usable.
  absl::Status fine = s->Run({{"x", FloatTensor({4, 3}, std::vector<float>(12, 1.f))}}, {"r"}, {}, &out);
  REQUIRE(fine.ok());
  CHECK(out[0].shape() == TensorShape({3, 4}));
  CHECK(s->Close().ok());
  CHECK(s->Run({}, {"x"}, {}, &out).code() == absl::StatusCode::kCancelled);
}

TEST_CASE("Run before Create is an error naming the cause", "[session]") {
  auto session = NewSession();
  std::vector<Tensor> out;
  absl::Status status = (*session)->Run({}, {"x"}, {}, &out);
  CHECK(status.message() == "Session was not created with a graph before Run()!");
  GraphDef graph_def;
  graph_def.add_node()->set_name("n");
  graph_def.mutable_node(0)->set_op("NoOp");
  REQUIRE((*session)->Create(graph_def).ok());
  CHECK((*session)->Create(graph_def).code() == absl::StatusCode::kAlreadyExists);
}

TEST_CASE("A timeout ends a long step with DEADLINE_EXCEEDED", "[session]") {
  Scope root = Scope::NewRootScope();
  Output big = Fill(root.WithOpName("big"), {2048, 2048}, 1.f);
  Output m1 = MatMul(root.WithOpName("m1"), big, big);
  Output m2 = MatMul(root.WithOpName("m2"), m1, big);
  Output m3 = MatMul(root.WithOpName("m3"), m2, big);
  auto client = ClientSession::Create(root);
  RunOptions options;
  options.set_timeout_in_ms(5);
  std::vector<Tensor> out;
  absl::Status status = (*client)->Run(options, {}, {m3}, {}, &out, nullptr);
  CHECK(status.code() == absl::StatusCode::kDeadlineExceeded);
  // The session keeps working.
  REQUIRE((*client)->Run({big}, &out).ok());
  // A timeout too far away to reach is no timeout (INT64_MAX ms overflowed the clock
  // and gave DEADLINE_EXCEEDED at once).
  for (int64_t forever : {int64_t{9223372036854775807}, int64_t{10'000'000'000'000}}) {
    options.set_timeout_in_ms(forever);
    INFO(forever);
    CHECK((*client)->Run(options, {}, {big}, {}, &out, nullptr).ok());
  }
}

TEST_CASE("An error in one partition wakes the receives blocked in another", "[session]") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x").WithDevice("/cpu:1"), DT_FLOAT);
  Output bad = Reshape(root.WithOpName("bad").WithDevice("/cpu:1"), x, {5});
  Output y = Identity(root.WithOpName("y").WithDevice("/cpu:0"), bad);
  auto client = ClientSession::Create(root, CpuConfig(2));
  std::vector<Tensor> out;
  absl::Status status = (*client)->Run({{x, FloatTensor({2}, {1, 2})}}, {y}, &out);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(status.message(), "[[{{node bad}}]]"));
}

TEST_CASE("16 threads x 200 concurrent Runs on one session all get their own answers",
          "[session][concurrency]") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output w = Const(root.WithOpName("w"), {{2.f}});
  Output y = MatMul(root.WithOpName("y").WithDevice("/cpu:1"), x, w);
  Output z = Add(root.WithOpName("z"), y, 1.f);
  auto client = ClientSession::Create(root, CpuConfig(2));
  REQUIRE(client.ok());
  std::vector<Tensor> warm;
  REQUIRE((*client)->Run({{x, FloatTensor({1, 1}, {0})}}, {z}, &warm).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const float v = static_cast<float>(t * 1000 + i);
        std::vector<Tensor> out;
        absl::Status s = (*client)->Run({{x, FloatTensor({1, 1}, {v})}}, {z}, &out);
        if (!s.ok() || out.size() != 1 || out[0].flat<float>()[0] != 2 * v + 1) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("FULL_TRACE fills step stats per device and node", "[session]") {
  SeedGraph g;
  auto client = ClientSession::Create(g.root);
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata metadata;
  std::vector<Tensor> out;
  REQUIRE((*client)->Run(options, {}, {g.c}, {}, &out, &metadata).ok());
  REQUIRE(metadata.step_stats().dev_stats_size() == 1);
  const DeviceStepStats& dev = metadata.step_stats().dev_stats(0);
  CHECK(dev.device() == "/job:localhost/replica:0/task:0/device:CPU:0");
  bool saw_matmul = false;
  for (const NodeExecStats& node : dev.node_stats()) {
    if (node.node_name() != "c") continue;
    saw_matmul = true;
    CHECK(node.timeline_label() == "c = MatMul(a, b)");
    REQUIRE(node.output_size() == 1);
    CHECK(node.output(0).tensor_description().allocation_description().requested_bytes() == 16);
  }
  CHECK(saw_matmul);
}

TEST_CASE("A ClientSession's graph may grow between Runs, and its errors surface",
          "[session]") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output y = Add(root.WithOpName("y"), x, x);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) {  // nothing new: the session is not extended again
    REQUIRE((*session)->Run({{x, FloatTensor({1}, {1.5f})}}, {y}, &out).ok());
    CHECK(ValuesOf<float>(out[0]) == std::vector<float>{3});
  }
  Output z = Mul(root.WithOpName("z"), y, y);  // added after the first Runs
  REQUIRE((*session)->Run({{x, FloatTensor({1}, {1.5f})}}, {z}, &out).ok());
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{9});
  // A builder error after a Run reaches the next Run.
  MatMul(root.WithOpName("bad"), Const(root, {1.f, 2.f}), Const(root, {3.f}));
  absl::Status bad = (*session)->Run({{x, FloatTensor({1}, {1.5f})}}, {z}, &out);
  CHECK_FALSE(bad.ok());
}

TEST_CASE("Extend adds nodes; reusing a name is rejected", "[session]") {
  auto session = NewSession();
  GraphDef first = testing::GraphFromText(R"(
    node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } })");
  REQUIRE((*session)->Create(first).ok());
  GraphDef second = testing::GraphFromText(R"(
    node { name: "b" op: "Add" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } })");
  REQUIRE((*session)->Extend(second).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {"b"}, {}, &out).ok());
  CHECK(out[0].scalar<float>() == 6);
  absl::Status again = (*session)->Extend(second);
  CHECK(absl::StrContains(again.message(), "includes node 'b', which was created by a previous call"));
}

}  // namespace
}  // namespace dflow

namespace dflow {
namespace {

TEST_CASE("Fetched tensors stay valid after their session is gone", "[session]") {
  std::vector<Tensor> out;
  {
    SeedGraph g;
    auto session = ClientSession::Create(g.root);
    REQUIRE(session.ok());
    REQUIRE((*session)->Run({g.c}, &out).ok());
  }
  // The session, its devices and its pool are destroyed; the result is still readable
  // and is freed safely when `out` goes away.
  CHECK(ValuesOf<float>(out[0]) == std::vector<float>{22, 28, 49, 64});
}

// The plan keeps its partition GraphDefs without big Const values (the kernels and the
// session's graph hold them already); output_partition_graphs still shows them whole.
TEST_CASE("Partition graphs carry big Const values whole, across devices and Extend",
          "[session]") {
  Scope root = Scope::NewRootScope();
  std::vector<float> values(3000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  Output big = Const(root.WithOpName("big").WithDevice("/cpu:1"),
                     Input::Initializer(values, {3000}));
  Output small = Const(root.WithOpName("small").WithDevice("/cpu:1"), {1.f, 2.f});
  Output sum = Sum(root.WithOpName("sum").WithDevice("/cpu:0"), big, Const(root, 0));
  Output both = Sum(root.WithOpName("both").WithDevice("/cpu:1"), small, Const(root, 0));
  GraphDef graph_def;
  REQUIRE(root.ToGraphDef(&graph_def).ok());
  const NodeDef* given = nullptr;
  for (const NodeDef& node : graph_def.node()) {
    if (node.name() == "big") given = &node;
  }
  REQUIRE(given != nullptr);
  REQUIRE(given->attr().at("value").ByteSizeLong() > 1024);

  auto session = NewSession(CpuConfig(2));
  REQUIRE(session.ok());
  REQUIRE((*session)->Create(graph_def).ok());
  for (int extend = 0; extend < 2; ++extend) {
    RunOptions options;
    options.set_output_partition_graphs(true);
    RunMetadata metadata;
    std::vector<Tensor> out;
    absl::Status status = (*session)->Run(options, {}, {"sum", "both"}, {}, &out, &metadata);
    INFO("after " << extend << " Extend: " << status.ToString());
    REQUIRE(status.ok());
    CHECK(out[0].scalar<float>() == 0.5f * 2999 * 3000 / 2);
    CHECK(out[1].scalar<float>() == 3.f);
    int consts_seen = 0;
    for (const GraphDef& partition : metadata.partition_graphs()) {
      for (const NodeDef& node : partition.node()) {
        if (node.name() != "big" && node.name() != "small") continue;
        ++consts_seen;
        REQUIRE(node.attr().count("value") == 1);
        if (node.name() == "big") {
          CHECK(node.attr().at("value").SerializeAsString() ==
                given->attr().at("value").SerializeAsString());
        }
      }
    }
    CHECK(consts_seen == 2);
    // Extend rebuilds the GraphDef from the session's graph: the value must survive it.
    GraphDef more;
    *more.add_node() = graph_def.node(0);
    more.mutable_node(0)->set_name("extra" + std::to_string(extend));
    REQUIRE((*session)->Extend(more).ok());
  }
}

}  // namespace
}  // namespace dflow
