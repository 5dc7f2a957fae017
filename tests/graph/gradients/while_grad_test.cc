// Gradients through TF 1.x while loops built with BuildWhileLoop
// (graph/gradients/while_grad.h): numeric checks of loop variables, invariants, values the
// backward loop must replay (accumulators), data-dependent trip counts (zero included),
// loops in sequence, an RNN over a sequence, a resource variable read inside the loop,
// conditionals in the body (nested too), loops nested in loops (three deep, zero trips
// included), and what is refused.
#include <cmath>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "graph/array_ops.h"
#include "graph/cond_ops.h"
#include "graph/gradients/symbolic_gradients.h"
#include "graph/ops.h"
#include "graph/train/optimizers.h"
#include "graph/train/variable.h"
#include "graph/while_loop.h"
#include "proto/config.pb.h"
#include "session/client_session.h"
#include "tests/graph/gradients/grad_test_util.h"

namespace dflow::testing {
namespace {

using Xs = std::vector<Output>;
constexpr double kTol = 1e-6;

// Runs `body` on (i, vars...) while i < n; returns the variables after the loop.
Xs Loop(const Scope& s, Input n, const Xs& vars,
        const std::function<Xs(const Scope&, const Xs&)>& body) {
  Xs inputs = {Const(s, 0)};
  inputs.insert(inputs.end(), vars.begin(), vars.end());
  Xs out;
  absl::Status status = BuildWhileLoop(
      s, inputs,
      [&](const Scope& c, const Xs& v, Output* pred) {
        *pred = Less(c, v[0], n);
        return c.status();
      },
      [&](const Scope& b, const Xs& v, Xs* next) {
        *next = {Add(b, v[0], 1)};
        Xs rest = body(b, Xs(v.begin() + 1, v.end()));
        next->insert(next->end(), rest.begin(), rest.end());
        return b.status();
      },
      "while", &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return Xs(out.begin() + 1, out.end());
}

Tensor Int32Scalar(int32_t v) { return MakeTensor(DT_INT32, {}, {static_cast<double>(v)}); }

TEST_CASE("A loop variable's gradient runs back through every iteration") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Xs y = Loop(root, 10, {x}, [](const Scope& s, const Xs& v) -> Xs { return {Mul(s, v[0], 2.0)}; });
  Xs grads;
  REQUIRE(AddSymbolicGradients(root, y, {x}, &grads).ok());
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{x, MakeTensor(DT_DOUBLE, {2}, {1.0, -2.0})}}, {y[0], grads[0]}, &out)
              .ok());
  CHECK(ToDoubles(out[0]) == std::vector<double>{1024.0, -2048.0});
  CHECK(ToDoubles(out[1]) == std::vector<double>{1024.0, 1024.0});
}

TEST_CASE("Invariants and nonlinear bodies: the backward loop replays forward values") {
  // x <- tanh(x * w + b), 4 times: needs each iteration's tanh output and x.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Xs y = Loop(s, 4, {in[0]}, [&](const Scope& b, const Xs& v) -> Xs {
      return {Tanh(b, Add(b, Mul(b, v[0], in[1]), in[2]))};
    });
    return {WeightedSum(s, y[0])};
  };
  CHECK(CheckGradient({{{2, 3}}, {{2, 3}}, {{3}}}, f) < kTol);
}

TEST_CASE("Loop variables that feed each other, next to an integer one") {
  // (a, b) <- (a * b, a + sin-free mix), with a float32-free int counter beside them.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Xs y = Loop(s, 3, {in[0], in[1]}, [](const Scope& b, const Xs& v) -> Xs {
      return {Mul(b, v[0], v[1]), Add(b, Mul(b, v[0], 0.5), Square(b, v[1]))};
    });
    return {WeightedSum(s, y[0]), WeightedSum(s, y[1])};
  };
  CHECK(CheckGradient({{{3}, {0.3, -0.2, 0.5}}, {{3}, {0.4, 0.1, -0.6}}}, f) < kTol);
}

TEST_CASE("A fed trip count, zero included, and two loops in sequence") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output n = Placeholder(root, DT_INT32);
  Xs first = Loop(root, n, {x}, [](const Scope& s, const Xs& v) -> Xs {
    return {Mul(s, v[0], v[0])};
  });
  Xs second = Loop(root, 2, {first[0]}, [](const Scope& s, const Xs& v) -> Xs {
    return {Mul(s, v[0], 3.0)};
  });
  Xs grads;
  REQUIRE(AddSymbolicGradients(root, second, {x}, &grads).ok());
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  for (int trips : {0, 1, 2}) {
    INFO("trips " << trips);
    std::vector<Tensor> out;
    REQUIRE((*session)
                ->Run({{x, MakeTensor(DT_DOUBLE, {1}, {1.5})}, {n, Int32Scalar(trips)}},
                      {grads[0]}, &out)
                .ok());
    // y = 9 x^(2^trips): dy/dx = 9 * 2^trips * x^(2^trips - 1).
    const double p = static_cast<double>(1 << trips);
    CHECK(ToDoubles(out[0])[0] == Approx(9.0 * p * std::pow(1.5, p - 1.0)));
  }
}

TEST_CASE("An RNN over a sequence: gradients for the weights and every step's input") {
  // h <- tanh(h W + seq[i]) for i < 3; the input of step i is gathered by the counter.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    const Output& seq = in[0];  // [3, 1, 2]
    const Output& w = in[1];    // [2, 2]
    Xs out;
    REQUIRE(BuildWhileLoop(
                s, {Const(s, 0), in[2]},
                [](const Scope& c, const Xs& v, Output* pred) {
                  *pred = Less(c, v[0], 3);
                  return c.status();
                },
                [&](const Scope& b, const Xs& v, Xs* next) {
                  Output step = GatherV2(b, seq, v[0], 0);
                  *next = {Add(b, v[0], 1), Tanh(b, Add(b, MatMul(b, v[1], w), step))};
                  return b.status();
                },
                "rnn", &out)
                .ok());
    return {WeightedSum(s, out[1])};
  };
  CHECK(CheckGradient({{{3, 1, 2}}, {{2, 2}}, {{1, 2}}}, f) < kTol);
}

TEST_CASE("A resource variable read inside the loop gets the sum over its reads") {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), Const(root, {1.5, -0.5}));
  Output x = Placeholder(root, DT_DOUBLE);
  // x <- x * w, 3 times, reading w in every iteration: y = x w^3, dy/dw = 3 x w^2.
  Xs y = Loop(root, 3, {x}, [&](const Scope& s, const Xs& v) -> Xs {
    return {Mul(s, v[0], w.Read(s))};
  });
  Xs grads;
  REQUIRE(AddSymbolicGradients(root, y, {w.handle(), x}, &grads).ok());
  REQUIRE(grads[0].node != nullptr);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  REQUIRE((*session)->Run({}, {}, {w.initializer()}, nullptr).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{x, MakeTensor(DT_DOUBLE, {2}, {2.0, 4.0})}}, grads, &out).ok());
  CHECK(ToDoubles(out[0]) == std::vector<double>{3 * 2.0 * 2.25, 3 * 4.0 * 0.25});
  CHECK(ToDoubles(out[1]) == std::vector<double>{3.375, -0.125});
}

TEST_CASE("Gradient descent trains through a loop, step after step") {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), Const(root, {{0.5f}}));
  Output x = Const(root, {{1.0f}});
  Xs y = Loop(root, 3, {x}, [&](const Scope& s, const Xs& v) -> Xs {
    return {MatMul(s, v[0], w.value())};
  });
  Output loss = Sum(root, Square(root, Sub(root, y[0], 8.0f)), {0, 1});  // w^3 -> 8
  GradientDescentOptimizer sgd(0.004);
  auto train = sgd.Minimize(root, loss, {w});
  INFO(train.status().ToString());
  REQUIRE(train.ok());
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  REQUIRE((*session)->Run({}, {}, {w.initializer()}, nullptr).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {}, {*train}, nullptr).ok());
  REQUIRE((*session)->Run({}, {w.value()}, {}, &out).ok());
  // d/dw (w^3 - 8)^2 = 6 w^2 (w^3 - 8) = -11.8125 at 0.5.
  CHECK(out[0].data<float>()[0] == Approx(0.5f + 0.004f * 11.8125f));
  for (int step = 1; step < 300; ++step) {
    REQUIRE((*session)->Run({}, {}, {*train}, nullptr).ok());
  }
  REQUIRE((*session)->Run({}, {w.value()}, {}, &out).ok());
  CHECK(out[0].data<float>()[0] == Approx(2.0f).epsilon(1e-4));
}

TEST_CASE("A condition on a float invariant, a body reading the Merge, an int result") {
  // x <- x * x while x < limit (limit fed, float): the predicate has no gradient, and the
  // body's read of the condition's Merge is the body input, so d/dx is 2^n x^(2^n - 1).
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output limit = Placeholder(root, DT_DOUBLE);
  Xs merged, out;
  REQUIRE(BuildWhileLoop(
              root, {Const(root, 0), x},
              [&](const Scope& s, const Xs& v, Output* pred) {
                merged = v;
                *pred = Less(s, v[1], limit);
                return s.status();
              },
              [&](const Scope& s, const Xs& v, Xs* next) {
                *next = {Add(s, v[0], 1), Mul(s, v[1], merged[1])};
                return s.status();
              },
              "while", &out)
              .ok());
  Xs grads;
  REQUIRE(AddSymbolicGradients(root, {out[1]}, {x, limit}, &grads).ok());
  Xs int_grads;  // the trip count is an int: no gradient reaches the limit through it
  REQUIRE(AddSymbolicGradients(root, {out[0]}, {limit}, &int_grads).ok());
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  RunOptions options;
  options.set_timeout_in_ms(20000);
  std::vector<Tensor> got;
  absl::Status status = (*session)->Run(
      options, {{x, MakeTensor(DT_DOUBLE, {}, {1.1})}, {limit, MakeTensor(DT_DOUBLE, {}, {2.0})}},
      {out[0], grads[0], grads[1]}, {}, &got, nullptr);
  INFO(status.ToString());
  REQUIRE(status.ok());
  const int n = got[0].data<int32_t>()[0];  // 1.1 -> 1.21 -> 1.4641 -> 2.14: 3 trips
  CHECK(n == 3);
  CHECK(ToDoubles(got[1])[0] == Approx(8.0 * std::pow(1.1, 7.0)));
  CHECK(ToDoubles(got[2])[0] == 0.0);
  CHECK((int_grads[0].node == nullptr || int_grads[0].dtype() == DT_DOUBLE));
}

// Runs `body` on (i, vars...) for i < n, giving the body the counter i too.
Xs CountedLoop(const Scope& s, Input n, const Xs& vars,
               const std::function<Xs(const Scope&, const Output&, const Xs&)>& body) {
  Xs inputs = {Const(s, 0)};
  inputs.insert(inputs.end(), vars.begin(), vars.end());
  Xs out;
  absl::Status status = BuildWhileLoop(
      s, inputs,
      [&](const Scope& c, const Xs& v, Output* pred) {
        *pred = Less(c, v[0], n);
        return c.status();
      },
      [&](const Scope& b, const Xs& v, Xs* next) {
        *next = {Add(b, v[0], 1)};
        Xs rest = body(b, v[0], Xs(v.begin() + 1, v.end()));
        next->insert(next->end(), rest.begin(), rest.end());
        return b.status();
      },
      "while", &out);
  INFO(status.ToString());
  REQUIRE(status.ok());
  return Xs(out.begin() + 1, out.end());
}

// pred ? then(x, w) : otherwise(x, w), with x and w switched into the branches as TF's
// cond does.
Output Cond(const Scope& s, const Output& pred, const Output& x, const Output& w,
            const std::function<Output(const Scope&, const Output&, const Output&)>& then,
            const std::function<Output(const Scope&, const Output&, const Output&)>& otherwise) {
  SwitchOutputs sx = Switch(s, x, pred);
  SwitchOutputs sw = Switch(s, w, pred);
  return Merge(s, {otherwise(s, sx.output_false, sw.output_false),
                   then(s, sx.output_true, sw.output_true)})
      .output;
}

TEST_CASE("A second gradient through the same loop leaves the first one's lists alone") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Xs y = Loop(root, 3, {x}, [](const Scope& s, const Xs& v) -> Xs { return {Tanh(s, v[0])}; });
  Xs first, second;
  REQUIRE(AddSymbolicGradients(root, y, {x}, &first).ok());
  const int lists_after_first = [&] {
    int n = 0;
    for (const Node* node : root.graph()->nodes()) n += node->op() == "TensorListPushBack";
    return n;
  }();
  REQUIRE(AddSymbolicGradients(root, {Square(root, y[0])}, {x}, &second).ok());
  int lists = 0;
  for (const Node* node : root.graph()->nodes()) lists += node->op() == "TensorListPushBack";
  CHECK(lists == 2 * lists_after_first);  // one more accumulator, not one per list
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{x, MakeTensor(DT_DOUBLE, {}, {0.7})}}, {y[0], first[0], second[0]},
                          &out).ok());
  const double v = ToDoubles(out[0])[0], d = ToDoubles(out[1])[0];
  CHECK(ToDoubles(out[2])[0] == Approx(2 * v * d));
}

TEST_CASE("A conditional in the body: each iteration's branch is replayed") {
  // x <- i < 2 ? tanh(x * w) : x^2 * w, 4 times: two iterations take each branch, and
  // each branch's gradient needs values only that branch computed.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Xs y = CountedLoop(s, 4, {in[0]}, [&](const Scope& b, const Output& i, const Xs& v) -> Xs {
      return {Cond(
          b, Less(b, i, 2), v[0], in[1],
          [](const Scope& t, const Output& x, const Output& w) { return Tanh(t, Mul(t, x, w)); },
          [](const Scope& e, const Output& x, const Output& w) {
            return Mul(e, Square(e, x), w);
          })};
    });
    return {WeightedSum(s, y[0])};
  };
  CHECK(CheckGradient({{{3}, {0.3, -0.7, 0.9}}, {{3}, {1.2, 0.8, -0.5}}}, f) < kTol);
}

TEST_CASE("A branch holding a loop nothing differentiates: its result replayed per branch") {
  // x <- i < 2 ? x * n : x, where n counts up from i to 3 in a nested integer loop that
  // runs only inside the branch: n's value is replayed in the iterations that took it.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Xs y = CountedLoop(s, 4, {in[0]}, [&](const Scope& b, const Output& i, const Xs& v) -> Xs {
      Output taken = Less(b, i, 2);
      SwitchOutputs sx = Switch(b, v[0], taken);
      Output start = Switch(b, i, taken).output_true;
      Xs n = CountedLoop(b, 3, {start}, [](const Scope& c, const Output&, const Xs& u) -> Xs {
        return {Add(c, u[0], 1)};
      });
      Output scaled = Mul(b, sx.output_true, Cast(b, n[0], DT_DOUBLE));
      return {Merge(b, {scaled, sx.output_false}).output};
    });
    return {WeightedSum(s, y[0])};
  };
  CHECK(CheckGradient({{{2}, {0.3, -0.7}}}, f) < kTol);
}

TEST_CASE("A branch that gets no gradient replays only its input's shape") {
  // The false branch returns a constant: its Switch output gets zeros for a gradient,
  // built from the replayed shape rather than from a replayed copy of the tensor.
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Xs y = CountedLoop(root, 3, {x}, [&](const Scope& b, const Output& i, const Xs& v) -> Xs {
    SwitchOutputs sw = Switch(b, v[0], Less(b, i, 1));
    Output unused = Mul(b, sw.output_false, 0.0);
    return {Merge(b, {Tanh(b, sw.output_true), Add(b, Sub(b, unused, unused), 0.5)}).output};
  });
  Xs grads;
  REQUIRE(AddSymbolicGradients(root, y, {x}, &grads).ok());
  bool replays_shape = false;
  for (const Node* node : root.graph()->nodes()) {
    replays_shape |= node->op() == "Shape" && absl::StrContains(node->name(), "zeros_shape");
  }
  CHECK(replays_shape);
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({{x, MakeTensor(DT_DOUBLE, {2}, {0.3, -0.4})}}, {grads[0]}, &out).ok());
  // Only the first iteration's tanh depends on x, and the later ones overwrite it.
  CHECK(ToDoubles(out[0]) == std::vector<double>{0.0, 0.0});
}

TEST_CASE("Conditionals nested in the body's conditional, on data-dependent predicates") {
  // i odd ? (sum(x) > 0 ? tanh(x) * w : x * w * w) : x + w: the inner predicate depends on
  // the iteration's x, so which branches ran is known only from the forward pass.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Xs y = CountedLoop(s, 5, {in[0]}, [&](const Scope& b, const Output& i, const Xs& v) -> Xs {
      Output odd = Equal(b, AddOp(b, "FloorMod", {i, Input(2)}).output(0), 1);
      return {Cond(
          b, odd, v[0], in[1],
          [](const Scope& t, const Output& x, const Output& w) {
            Output positive = Greater(t, Sum(t, x, 0), 0.0);
            return Cond(
                t, positive, x, w,
                [](const Scope& u, const Output& x2, const Output& w2) {
                  return Mul(u, Tanh(u, x2), w2);
                },
                [](const Scope& u, const Output& x2, const Output& w2) {
                  return Mul(u, Mul(u, x2, w2), w2);
                });
          },
          [](const Scope& e, const Output& x, const Output& w) { return Add(e, x, w); })};
    });
    return {WeightedSum(s, y[0])};
  };
  CHECK(CheckGradient({{{2}, {0.4, -0.9}}, {{2}, {0.7, -1.1}}}, f) < kTol);
  CHECK(CheckGradient({{{2}, {-0.4, -0.9}}, {{2}, {0.7, 1.1}}}, f) < kTol);
}

TEST_CASE("A loop nested in a loop's body, with a trip count set by the outer loop") {
  // Outer i < 3: x <- inner(x), where the inner loop runs i + 1 times u <- tanh(u * w) + u:
  // 6 inner iterations in all, each replayed in the right outer iteration.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Xs y = CountedLoop(s, 3, {in[0]}, [&](const Scope& b, const Output& i, const Xs& v) -> Xs {
      return CountedLoop(b, Add(b, i, 1), {v[0]}, [&](const Scope& c, const Output&,
                                                      const Xs& u) -> Xs {
        return {Add(c, Tanh(c, Mul(c, u[0], in[1])), u[0])};
      });
    });
    return {WeightedSum(s, y[0])};
  };
  CHECK(CheckGradient({{{3}, {0.3, -0.6, 0.2}}, {{3}, {0.9, 1.3, -0.4}}}, f) < kTol);
}

TEST_CASE("An inner loop reading the outer loop's variable as its invariant") {
  // Outer: (x, y) <- (inner(x), y * x) where the inner loop runs u <- tanh(u * y) twice:
  // y is the outer iteration's value, an invariant of the inner loop, whose gradient
  // (summed over the inner iterations) flows back into the outer body.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Xs y = CountedLoop(s, 3, {in[0], in[1]},
                       [&](const Scope& b, const Output&, const Xs& v) -> Xs {
      Xs inner = CountedLoop(b, 2, {v[0]}, [&](const Scope& c, const Output&,
                                               const Xs& u) -> Xs {
        return {Tanh(c, Mul(c, u[0], v[1]))};
      });
      return {inner[0], Mul(b, v[1], v[0])};
    });
    return {WeightedSum(s, y[0]), WeightedSum(s, y[1])};
  };
  CHECK(CheckGradient({{{2}, {0.6, -0.8}}, {{2}, {0.9, 1.2}}}, f) < kTol);
}

TEST_CASE("Three loops deep, an inner loop running zero times in some iterations") {
  // The middle loop runs i times (0 in the first outer iteration); the innermost twice.
  auto f = [](const Scope& s, const Xs& in) -> Xs {
    Xs y = CountedLoop(s, 3, {in[0]}, [&](const Scope& b, const Output& i, const Xs& v) -> Xs {
      Xs mid = CountedLoop(b, i, {v[0]}, [&](const Scope& c, const Output&, const Xs& u) -> Xs {
        return CountedLoop(c, 2, {u[0]}, [&](const Scope& d, const Output&, const Xs& z) -> Xs {
          return {Tanh(d, Mul(d, z[0], in[1]))};
        });
      });
      return {Add(b, mid[0], Mul(b, v[0], 0.5))};
    });
    return {WeightedSum(s, y[0])};
  };
  CHECK(CheckGradient({{{2}, {0.8, -0.5}}, {{2}, {1.1, 0.7}}}, f) < kTol);
}

TEST_CASE("Gradient descent trains through a nested loop and a conditional") {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), Const(root, {{0.5f}}));
  Output x = Const(root, {{1.0f}});
  // y = x w^4 (2 outer x 2 inner iterations), the second outer one through a branch.
  Xs y = CountedLoop(root, 2, {x}, [&](const Scope& b, const Output& i, const Xs& v) -> Xs {
    Xs inner = CountedLoop(b, 2, {v[0]}, [&](const Scope& c, const Output&, const Xs& u) -> Xs {
      return {MatMul(c, u[0], w.value())};
    });
    return {Cond(
        b, Equal(b, i, 1), inner[0], inner[0],
        [](const Scope& t, const Output& a, const Output&) { return Identity(t, a); },
        [](const Scope& e, const Output& a, const Output&) { return Identity(e, a); })};
  });
  Output loss = Sum(root, Square(root, Sub(root, y[0], 16.0f)), {0, 1});  // w^4 -> 16
  GradientDescentOptimizer sgd(0.0005);
  auto train = sgd.Minimize(root, loss, {w});
  INFO(train.status().ToString());
  REQUIRE(train.ok());
  auto session = ClientSession::Create(root);
  REQUIRE(session.ok());
  REQUIRE((*session)->Run({}, {}, {w.initializer()}, nullptr).ok());
  std::vector<Tensor> out;
  REQUIRE((*session)->Run({}, {}, {*train}, nullptr).ok());
  REQUIRE((*session)->Run({}, {w.value()}, {}, &out).ok());
  // d/dw (w^4 - 16)^2 = 8 w^3 (w^4 - 16) = -15.9375 at 0.5.
  CHECK(out[0].data<float>()[0] == Approx(0.5f + 0.0005f * 15.9375f));
  for (int step = 1; step < 400; ++step) {
    REQUIRE((*session)->Run({}, {}, {*train}, nullptr).ok());
  }
  REQUIRE((*session)->Run({}, {w.value()}, {}, &out).ok());
  CHECK(out[0].data<float>()[0] == Approx(2.0f).epsilon(1e-4));
}

TEST_CASE("Gradients the loop cannot give are refused, naming the loop") {
  Scope root = Scope::NewRootScope();
  Output x = Placeholder(root, DT_DOUBLE);
  Output p = Placeholder(root, DT_BOOL);
  Output inside;
  Xs grads;
  SECTION("a loop inside a conditional of the body") {
    Xs y = Loop(root, 2, {x}, [&](const Scope& s, const Xs& v) -> Xs {
      SwitchOutputs sw = Switch(s, v[0], p);
      Xs nested = Loop(s, 2, {sw.output_true}, [](const Scope& b, const Xs& u) -> Xs {
        return {Square(b, u[0])};
      });
      return {Merge(s, {nested[0], sw.output_false}).output};
    });
    absl::Status status = AddSymbolicGradients(root, y, {x}, &grads);
    CHECK(status.code() == absl::StatusCode::kUnimplemented);
    CHECK_THAT(std::string(status.message()),
               Catch::Contains("which runs inside a conditional (Switch/Merge) of while loop"));
  }
  SECTION("a branch reading a loop value directly, not through a Switch") {
    Output w = Placeholder(root, DT_DOUBLE);
    Xs y = Loop(root, 2, {x}, [&](const Scope& s, const Xs& v) -> Xs {
      SwitchOutputs sw = Switch(s, v[0], p);
      return {Merge(s, {Mul(s.WithOpName("direct"), sw.output_true, w), sw.output_false})
                  .output};
    });
    absl::Status status = AddSymbolicGradients(root, y, {x, w}, &grads);
    CHECK(status.code() == absl::StatusCode::kUnimplemented);
    CHECK_THAT(std::string(status.message()),
               Catch::Contains("inside a conditional of the body, reads 'while/Enter"));
    CHECK_THAT(std::string(status.message()), Catch::Contains("without a Switch"));
  }
  SECTION("a value from branches of two separate conditionals") {
    Output q = Placeholder(root, DT_BOOL);
    Xs y = Loop(root, 2, {x}, [&](const Scope& s, const Xs& v) -> Xs {
      SwitchOutputs a = Switch(s, v[0], p);
      SwitchOutputs b = Switch(s, v[0], q);
      Output both = Mul(s, a.output_true, b.output_true);
      return {Merge(s, {both, a.output_false, b.output_false}).output};
    });
    absl::Status status = AddSymbolicGradients(root, y, {x}, &grads);
    CHECK(status.code() == absl::StatusCode::kUnimplemented);
    CHECK_THAT(std::string(status.message()),
               Catch::Contains("reads values from branches of two separate conditionals"));
  }
  SECTION("a tensor inside the loop") {
    Xs y = Loop(root, 2, {x}, [&](const Scope& s, const Xs& v) -> Xs {
      inside = Mul(s, v[0], 2.0);
      return {Square(s, inside)};
    });
    absl::Status status = AddSymbolicGradients(root, y, {inside}, &grads);
    CHECK(status.code() == absl::StatusCode::kUnimplemented);
    CHECK_THAT(std::string(status.message()),
               Catch::Contains("inputs[0] 'while/body/Mul:0' is in while loop 'while'"));
  }
}

}  // namespace
}  // namespace dflow::testing
