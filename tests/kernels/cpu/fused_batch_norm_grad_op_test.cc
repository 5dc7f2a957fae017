// FusedBatchNormGrad, FusedBatchNormGradV2 and FusedBatchNormGradV3
// (kernels/cpu/fused_batch_norm_grad_op.cc): x_backprop, scale_backprop and
// offset_backprop against central finite differences of the batch norm forward written
// here in double (is_training true: batch statistics depend on x; false: population
// statistics are constants), NHWC and NCHW; a larger sharded batch against the textbook
// closed form; the chain FusedBatchNormV3 -> FusedBatchNormGradV3 through the reserve
// spaces; the empty reserve_space_3/4 outputs; and the shape errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/kernels/cpu/conv_test_util.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::DimsOf;
using testing::Filled;
using testing::NchwToNhwc;
using testing::NhwcToNchw;
using testing::OpTester;
using testing::RandomValues;
using testing::Values;
using testing::Vec;
using Doubles = std::vector<double>;
using Dims = std::vector<int64_t>;

const KernelRegistry& Registry() {
  return testing::TestKernelRegistry(RegisterFusedBatchNormGradKernels);
}

// An NHWC problem: x [n, h, w, c] (channel = flat index % c).
struct Problem {
  int64_t n, h, w, c;
  std::vector<float> x, dy, scale, offset;
  std::vector<float> pop_mean, pop_var;  // used when not training
  float epsilon = 0.001f;

  int64_t Count() const { return n * h * w * c; }
};

Problem MakeProblem(int64_t n, int64_t h, int64_t w, int64_t c, uint32_t seed) {
  Problem p{n, h, w, c};
  p.x = RandomValues(p.Count(), seed);
  for (int64_t k = 0; k < p.Count(); ++k) p.x[k] = p.x[k] * 2.0f + 0.5f * static_cast<float>(k % c);
  p.dy = RandomValues(p.Count(), seed + 100);
  const std::vector<float> r = RandomValues(4 * c, seed + 200);
  for (int64_t ch = 0; ch < c; ++ch) {
    p.scale.push_back(1.0f + r[ch]);
    p.offset.push_back(r[c + ch]);
    p.pop_mean.push_back(r[2 * c + ch]);
    p.pop_var.push_back(0.5f + std::fabs(r[3 * c + ch]));
  }
  return p;
}

// Per-channel batch mean and uncorrected variance of x, in double.
void BatchStats(const Problem& p, const Doubles& x, Doubles* mean, Doubles* var) {
  mean->assign(p.c, 0.0);
  var->assign(p.c, 0.0);
  const double m = static_cast<double>(p.Count() / p.c);
  for (int64_t k = 0; k < p.Count(); ++k) (*mean)[k % p.c] += x[k] / m;
  for (int64_t k = 0; k < p.Count(); ++k) {
    const double d = x[k] - (*mean)[k % p.c];
    (*var)[k % p.c] += d * d / m;
  }
}

// sum(dy * y) for y = scale * (x - mean) / sqrt(var + eps) + offset, mean and var the
// batch's (training) or the population's.
double Loss(const Problem& p, bool training, const Doubles& x, const Doubles& scale,
            const Doubles& offset) {
  Doubles mean(p.pop_mean.begin(), p.pop_mean.end()), var(p.pop_var.begin(), p.pop_var.end());
  if (training) BatchStats(p, x, &mean, &var);
  double loss = 0;
  for (int64_t k = 0; k < p.Count(); ++k) {
    const int64_t ch = k % p.c;
    const double y = scale[ch] * (x[k] - mean[ch]) / std::sqrt(var[ch] + p.epsilon) + offset[ch];
    loss += p.dy[k] * y;
  }
  return loss;
}

struct Grads {
  Doubles dx, dscale, doffset;
};

// Central differences of Loss in each x, scale and offset element.
Grads FiniteDifferences(const Problem& p, bool training) {
  Doubles x(p.x.begin(), p.x.end()), scale(p.scale.begin(), p.scale.end()),
      offset(p.offset.begin(), p.offset.end());
  const double h = 1e-6;
  auto diff = [&](Doubles* v, int64_t i) {
    const double keep = (*v)[i];
    (*v)[i] = keep + h;
    const double up = Loss(p, training, x, scale, offset);
    (*v)[i] = keep - h;
    const double down = Loss(p, training, x, scale, offset);
    (*v)[i] = keep;
    return (up - down) / (2 * h);
  };
  Grads g;
  for (int64_t k = 0; k < p.Count(); ++k) g.dx.push_back(diff(&x, k));
  for (int64_t ch = 0; ch < p.c; ++ch) g.dscale.push_back(diff(&scale, ch));
  for (int64_t ch = 0; ch < p.c; ++ch) g.doffset.push_back(diff(&offset, ch));
  return g;
}

// The textbook closed form: xhat = (x - mean) * inv, inv = 1 / sqrt(var + eps);
// dscale = sum(dy xhat), doffset = sum(dy); training dx = scale inv (dy - mean(dy) -
// xhat mean(dy xhat)), inference dx = scale inv dy.
Grads ClosedForm(const Problem& p, bool training, const Doubles& mean, const Doubles& var) {
  const double m = static_cast<double>(p.Count() / p.c);
  Grads g{Doubles(p.Count()), Doubles(p.c, 0.0), Doubles(p.c, 0.0)};
  Doubles inv(p.c);
  for (int64_t ch = 0; ch < p.c; ++ch) inv[ch] = 1 / std::sqrt(var[ch] + p.epsilon);
  for (int64_t k = 0; k < p.Count(); ++k) {
    const int64_t ch = k % p.c;
    g.dscale[ch] += p.dy[k] * (p.x[k] - mean[ch]) * inv[ch];
    g.doffset[ch] += p.dy[k];
  }
  for (int64_t k = 0; k < p.Count(); ++k) {
    const int64_t ch = k % p.c;
    const double xhat = (p.x[k] - mean[ch]) * inv[ch];
    g.dx[k] = training
                  ? p.scale[ch] * inv[ch] * (p.dy[k] - g.doffset[ch] / m - xhat * g.dscale[ch] / m)
                  : p.scale[ch] * inv[ch] * p.dy[k];
  }
  return g;
}

// The reserve spaces the forward op would pass: batch mean and uncorrected variance in
// training, the population's otherwise.
void ReserveSpaces(const Problem& p, bool training, std::vector<float>* mean,
                   std::vector<float>* var) {
  if (!training) {
    *mean = p.pop_mean;
    *var = p.pop_var;
    return;
  }
  Doubles m, v;
  BatchStats(p, Doubles(p.x.begin(), p.x.end()), &m, &v);
  mean->assign(m.begin(), m.end());
  var->assign(v.begin(), v.end());
}

absl::StatusOr<std::vector<Tensor>> RunGrad(const std::string& op, const Tensor& dy,
                                            const Tensor& x, const std::vector<float>& scale,
                                            const std::vector<float>& mean,
                                            const std::vector<float>& var, bool training,
                                            float epsilon, const char* format = "NHWC") {
  OpTester t(op, Registry());
  t.Attr("T", DT_FLOAT).Attr("epsilon", epsilon).Attr("is_training", training);
  t.Attr("data_format", format);
  if (op != "FusedBatchNormGrad") t.Attr("U", DT_FLOAT);
  t.Input(dy).Input(x).Input(Vec(scale)).Input(Vec(mean)).Input(Vec(var));
  if (op == "FusedBatchNormGradV3") t.Input(Vec<float>({}));
  return t.Run();
}

void CheckGrads(const std::vector<Tensor>& out, const Grads& want, double eps = 1e-4) {
  REQUIRE(out.size() == 5);
  const std::vector<float> dx = Values<float>(out[0]), dscale = Values<float>(out[1]),
                           doffset = Values<float>(out[2]);
  CheckNear(Doubles(dx.begin(), dx.end()), want.dx, eps);
  CheckNear(Doubles(dscale.begin(), dscale.end()), want.dscale, eps);
  CheckNear(Doubles(doffset.begin(), doffset.end()), want.doffset, eps);
}

TEST_CASE("FusedBatchNormGrad(V2, V3) match finite differences, training and inference",
          "[kernels][fused_batch_norm_grad]") {
  const Problem p = MakeProblem(2, 3, 2, 3, 1);
  for (bool training : {true, false}) {
    for (const std::string op :
         {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
      CAPTURE(training, op);
      std::vector<float> mean, var;
      ReserveSpaces(p, training, &mean, &var);
      auto out = RunGrad(op, Filled<float>({p.n, p.h, p.w, p.c}, p.dy),
                         Filled<float>({p.n, p.h, p.w, p.c}, p.x), p.scale, mean, var, training,
                         p.epsilon);
      INFO(out.status().ToString());
      REQUIRE(out.ok());
      CHECK(DimsOf((*out)[0]) == Dims{p.n, p.h, p.w, p.c});
      CHECK(DimsOf((*out)[1]) == Dims{p.c});
      CHECK(DimsOf((*out)[2]) == Dims{p.c});
      // reserve_space_3/4 (V3: 4/5) are empty.
      CHECK(DimsOf((*out)[3]) == Dims{0});
      CHECK(DimsOf((*out)[4]) == Dims{0});
      const Grads fd = FiniteDifferences(p, training);
      CheckGrads(*out, fd);
      // The closed form agrees with the finite differences (a check of this test).
      Doubles dm(mean.begin(), mean.end()), dv(var.begin(), var.end());
      const Grads closed = ClosedForm(p, training, dm, dv);
      CheckNear(closed.dx, fd.dx, 1e-5);
    }
  }
}

TEST_CASE("FusedBatchNormGradV3 NCHW matches the NHWC gradients",
          "[kernels][fused_batch_norm_grad]") {
  const Problem p = MakeProblem(2, 3, 4, 2, 7);
  for (bool training : {true, false}) {
    CAPTURE(training);
    std::vector<float> mean, var;
    ReserveSpaces(p, training, &mean, &var);
    auto out = RunGrad("FusedBatchNormGradV3",
                       Filled<float>({p.n, p.c, p.h, p.w}, NhwcToNchw(p.dy, p.n, p.h, p.w, p.c)),
                       Filled<float>({p.n, p.c, p.h, p.w}, NhwcToNchw(p.x, p.n, p.h, p.w, p.c)),
                       p.scale, mean, var, training, p.epsilon, "NCHW");
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(DimsOf((*out)[0]) == Dims{p.n, p.c, p.h, p.w});
    (*out)[0] = Filled<float>({p.n, p.h, p.w, p.c},
                              NchwToNhwc(Values<float>((*out)[0]), p.n, p.c, p.h, p.w));
    CheckGrads(*out, FiniteDifferences(p, training));
  }
}

TEST_CASE("FusedBatchNormGradV3 on a batch large enough to shard matches the closed form",
          "[kernels][fused_batch_norm_grad]") {
  const Problem p = MakeProblem(8, 16, 16, 4, 11);
  for (bool training : {true, false}) {
    CAPTURE(training);
    std::vector<float> mean, var;
    ReserveSpaces(p, training, &mean, &var);
    auto out =
        RunGrad("FusedBatchNormGradV3", Filled<float>({p.n, p.h, p.w, p.c}, p.dy),
                Filled<float>({p.n, p.h, p.w, p.c}, p.x), p.scale, mean, var, training, p.epsilon);
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CheckGrads(
        *out,
        ClosedForm(p, training, Doubles(mean.begin(), mean.end()), Doubles(var.begin(), var.end())),
        1e-3);
  }
}

TEST_CASE("FusedBatchNormV3's reserve spaces feed FusedBatchNormGradV3 the true gradient",
          "[kernels][fused_batch_norm_grad]") {
  const Problem p = MakeProblem(2, 2, 3, 3, 21);
  const Tensor x = Filled<float>({p.n, p.h, p.w, p.c}, p.x);
  auto forward =
      OpTester("FusedBatchNormV3", testing::TestKernelRegistry(RegisterFusedBatchNormKernels))
          .Attr("T", DT_FLOAT)
          .Attr("U", DT_FLOAT)
          .Attr("epsilon", p.epsilon)
          .Attr("is_training", true)
          .Input(x)
          .Input(Vec(p.scale))
          .Input(Vec(p.offset))
          .Input(Vec<float>({}))
          .Input(Vec<float>({}))
          .Run();
  INFO(forward.status().ToString());
  REQUIRE(forward.ok());
  REQUIRE(forward->size() == 6);
  auto out = OpTester("FusedBatchNormGradV3", Registry())
                 .Attr("T", DT_FLOAT)
                 .Attr("U", DT_FLOAT)
                 .Attr("epsilon", p.epsilon)
                 .Attr("is_training", true)
                 .Input(Filled<float>({p.n, p.h, p.w, p.c}, p.dy))
                 .Input(x)
                 .Input(Vec(p.scale))
                 .Input((*forward)[3])
                 .Input((*forward)[4])
                 .Input((*forward)[5])
                 .Run();
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CheckGrads(*out, FiniteDifferences(p, true));
}

TEST_CASE("FusedBatchNormGrad rejects mismatched shapes", "[kernels][fused_batch_norm_grad]") {
  using Catch::Matchers::Contains;
  const std::vector<float> ones = {1, 1};
  auto mismatch = RunGrad("FusedBatchNormGradV3", Filled<float>({1, 2, 2, 2}, {}),
                          Filled<float>({1, 2, 3, 2}, {}), ones, ones, ones, true, 0.001f);
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(mismatch.status().message()),
             Contains("x and y_backprop must have same shape, but x has shape [1,2,3,2] and "
                      "y_backprop has shape [1,2,2,2]"));
  auto rank3 = RunGrad("FusedBatchNormGradV3", Filled<float>({2, 2, 2}, {}),
                       Filled<float>({2, 2, 2}, {}), ones, ones, ones, true, 0.001f);
  REQUIRE_FALSE(rank3.ok());
  CHECK_THAT(std::string(rank3.status().message()),
             Contains("input must be 4 or 5-dimensional[2,2,2]"));
  auto scale = RunGrad("FusedBatchNormGradV3", Filled<float>({1, 2, 2, 2}, {}),
                       Filled<float>({1, 2, 2, 2}, {}), {1, 1, 1}, ones, ones, true, 0.001f);
  REQUIRE_FALSE(scale.ok());
  CHECK_THAT(std::string(scale.status().message()),
             Contains("scale must be 1-dimensional of size 2, got [3]"));
  auto variance = RunGrad("FusedBatchNormGradV3", Filled<float>({1, 2, 2, 2}, {}),
                          Filled<float>({1, 2, 2, 2}, {}), ones, ones, {1}, false, 0.001f);
  REQUIRE_FALSE(variance.ok());
  CHECK_THAT(std::string(variance.status().message()),
             Contains("reserve_space_2 must be 1-dimensional of size 2, got [1]"));
}

}  // namespace
}  // namespace dflow
