// Candidate sampling for sampled losses (tf.nn.sampled_softmax_loss, tf.nn.nce_loss,
// word2vec), bit-exact with TF 2.21's CPU kernels (candidate_sampler_ops.cc,
// range_sampler.cc) for the same (seed, seed2):
//  - UniformCandidateSampler, LogUniformCandidateSampler (Zipfian: value
//    floor(exp(u * log(range + 1))) - 1), AllCandidateSampler (0 .. num_sampled - 1);
//  - each Compute reserves 2048 * num_sampled 32-bit samples of the kernel's Philox stream
//    and draws from their start, one sample at a time (SimplePhilox);
//  - unique: values are drawn until num_sampled distinct ones are found, and the expected
//    counts are 1 - (1 - p)^tries instead of p * num_sampled;
//  - ComputeAccidentalHits: the sampled positions equal to a true class of each row, with
//    weight -FLT_MAX, so the loss can mask them.
// TF's texts for bad inputs.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/guarded_philox.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// TF's SimplePhilox: 32-bit samples one at a time from a Philox stream.
class SimplePhilox {
 public:
  explicit SimplePhilox(PhiloxRandom* generator) : single_(generator) {}
  uint64_t Rand64() {
    const uint32_t lo = single_(), hi = single_();
    return lo | static_cast<uint64_t>(hi) << 32;
  }
  double RandDouble() {
    const uint32_t x0 = single_(), x1 = single_();
    return Uint64ToDouble(x0, x1);
  }
  uint64_t Uniform64(uint64_t n) { return n == 0 ? Rand64() * n : Rand64() % n; }

 private:
  SingleSampleAdapter single_;
};

// One distribution over [0, range): TF's RangeSampler subclasses.
class RangeSampler {
 public:
  explicit RangeSampler(int64_t range) : range_(range) {}
  virtual ~RangeSampler() = default;
  int64_t range() const { return range_; }
  virtual int64_t Sample(SimplePhilox* random) const = 0;
  virtual float Probability(int64_t value) const = 0;

  // `batch` drawn, and the expected counts of its values and of `extras`.
  virtual void SampleBatch(SimplePhilox* random, bool unique, std::vector<int64_t>* batch,
                           float* batch_counts, const int64_t* extras, int64_t num_extras,
                           float* extra_counts) const {
    const int size = static_cast<int>(batch->size());
    int tries = 0;
    if (unique) {
      std::unordered_set<int64_t> used(size);
      for (int picked = 0; picked < size;) {
        ++tries;
        const int64_t value = Sample(random);
        if (used.insert(value).second) (*batch)[picked++] = value;
      }
    } else {
      for (int i = 0; i < size; ++i) (*batch)[i] = Sample(random);
      tries = size;
    }
    for (int i = 0; i < size; ++i) batch_counts[i] = ExpectedCount((*batch)[i], size, tries);
    for (int64_t i = 0; i < num_extras; ++i) {
      extra_counts[i] = ExpectedCount(extras[i], size, tries);
    }
  }

 protected:
  // p * size for a batch drawn with replacement; 1 - (1 - p)^tries for a unique one.
  float ExpectedCount(int64_t value, int size, int tries) const {
    const float p = Probability(value);
    if (tries == size) return p * size;
    return -std::expm1(tries * std::log1p(-p));
  }

  const int64_t range_;
};

class UniformSampler : public RangeSampler {
 public:
  explicit UniformSampler(int64_t range) : RangeSampler(range), inverse_(1.0 / range) {}
  int64_t Sample(SimplePhilox* random) const override {
    return static_cast<int64_t>(random->Uniform64(static_cast<uint64_t>(range_)));
  }
  float Probability(int64_t) const override { return inverse_; }

 private:
  const float inverse_;
};

class LogUniformSampler : public RangeSampler {
 public:
  explicit LogUniformSampler(int64_t range)
      : RangeSampler(range), log_range_(std::log1p(static_cast<double>(range))) {}
  int64_t Sample(SimplePhilox* random) const override {
    const int64_t value = static_cast<int64_t>(std::exp(random->RandDouble() * log_range_)) - 1;
    return value % range_;  // guards against roundoff, as TF
  }
  float Probability(int64_t value) const override {
    return std::log((value + 2.0) / (value + 1.0)) / log_range_;
  }

 private:
  const double log_range_;
};

// Every value 0 .. range - 1, each expected once.
class AllSampler : public RangeSampler {
 public:
  using RangeSampler::RangeSampler;
  int64_t Sample(SimplePhilox*) const override { return 0; }
  float Probability(int64_t) const override { return 1; }
  void SampleBatch(SimplePhilox*, bool, std::vector<int64_t>* batch, float* batch_counts,
                   const int64_t*, int64_t num_extras, float* extra_counts) const override {
    for (size_t i = 0; i < batch->size(); ++i) {
      (*batch)[i] = static_cast<int64_t>(i);
      batch_counts[i] = 1;
    }
    for (int64_t i = 0; i < num_extras; ++i) extra_counts[i] = 1;
  }
};

enum class SamplerKind { kUniform, kLogUniform, kAll };

class CandidateSamplerOp : public OpKernel {
 public:
  CandidateSamplerOp(OpKernelConstruction* ctx, SamplerKind kind) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("num_sampled", &num_sampled_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("num_true", &num_true_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("unique", &unique_));
    OP_REQUIRES_OK(ctx, generator_.Init(ctx));
    int64_t range = num_sampled_;
    if (kind != SamplerKind::kAll) {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("range_max", &range));
      OP_REQUIRES(ctx, range > 0, absl::InvalidArgumentError("range_max must be positive"));
    }
    if (kind == SamplerKind::kUniform) sampler_ = std::make_unique<UniformSampler>(range);
    if (kind == SamplerKind::kLogUniform) sampler_ = std::make_unique<LogUniformSampler>(range);
    if (kind == SamplerKind::kAll) sampler_ = std::make_unique<AllSampler>(range);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& true_classes = ctx->input(0);
    OP_REQUIRES(ctx, true_classes.shape().dims() == 2,
                KernelError(*ctx, "true_classes must be a matrix"));
    const int64_t batch = true_classes.shape().dim_size(0);
    OP_REQUIRES(ctx, true_classes.shape().dim_size(1) == num_true_,
                KernelError(*ctx, "true_classes must have num_true columns, expected: ",
                            true_classes.shape().dim_size(1), " was: ", num_true_));
    OP_REQUIRES(ctx, !unique_ || num_sampled_ <= sampler_->range(),
                KernelError(*ctx, "Sampler's range is too small."));
    const int64_t* truth = true_classes.data<int64_t>();
    for (int64_t i = 0; i < batch * num_true_; ++i) {
      OP_REQUIRES(ctx, truth[i] >= 0 && truth[i] < sampler_->range(),
                  KernelError(*ctx, "`true_candidate` out of range [0, ", sampler_->range(),
                              "), received ", truth[i]));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * sampled,
                        ctx->allocate_output(0, TensorShape({num_sampled_})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * true_counts,
                        ctx->allocate_output(1, TensorShape({batch, num_true_})));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * sampled_counts,
                        ctx->allocate_output(2, TensorShape({num_sampled_})));
    // TF's reservation: rejection sampling may read past it (reusing later draws).
    PhiloxRandom local = generator_.ReserveSamples32(2048 * static_cast<uint64_t>(num_sampled_));
    SimplePhilox random(&local);
    std::vector<int64_t> values(num_sampled_);
    sampler_->SampleBatch(&random, unique_, &values, sampled_counts->data<float>(), truth,
                          batch * num_true_, true_counts->data<float>());
    std::copy(values.begin(), values.end(), sampled->data<int64_t>());
  }

 private:
  int64_t num_sampled_ = 0;
  int64_t num_true_ = 0;
  bool unique_ = false;
  std::unique_ptr<RangeSampler> sampler_;
  GuardedPhilox generator_;
};

template <SamplerKind kKind>
class SamplerOpOf : public CandidateSamplerOp {
 public:
  explicit SamplerOpOf(OpKernelConstruction* ctx) : CandidateSamplerOp(ctx, kKind) {}
};

class ComputeAccidentalHitsOp : public OpKernel {
 public:
  explicit ComputeAccidentalHitsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("num_true", &num_true_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& truth = ctx->input(0);
    const Tensor& sampled = ctx->input(1);
    OP_REQUIRES(ctx, truth.shape().dims() == 2 && truth.shape().dim_size(1) == num_true_,
                KernelError(*ctx, "true_candidates must be a batch_size * num_true matrix"));
    OP_REQUIRES(ctx, sampled.shape().dims() == 1,
                KernelError(*ctx, "sampled_candidates must be a vector, which is typically "
                                  "an output from CandidateSampler"));
    absl::flat_hash_map<int64_t, int64_t> position;  // the last position of each value
    for (int64_t i = 0; i < sampled.NumElements(); ++i) position[sampled.data<int64_t>()[i]] = i;
    std::vector<int32_t> rows;
    std::vector<int64_t> ids;
    const int64_t batch = truth.shape().dim_size(0);
    for (int64_t i = 0; i < batch; ++i) {
      for (int64_t j = 0; j < num_true_; ++j) {
        auto hit = position.find(truth.data<int64_t>()[i * num_true_ + j]);
        if (hit == position.end()) continue;
        rows.push_back(static_cast<int32_t>(i));
        ids.push_back(hit->second);
      }
    }
    const TensorShape shape({static_cast<int64_t>(rows.size())});
    OP_ASSIGN_OR_RETURN(ctx, Tensor * indices, ctx->allocate_output(0, shape));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * out_ids, ctx->allocate_output(1, shape));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * weights, ctx->allocate_output(2, shape));
    std::copy(rows.begin(), rows.end(), indices->data<int32_t>());
    std::copy(ids.begin(), ids.end(), out_ids->data<int64_t>());
    std::fill(weights->data<float>(), weights->data<float>() + rows.size(), -FLT_MAX);
  }

 private:
  int64_t num_true_ = 0;
};

}  // namespace

absl::Status RegisterCandidateSamplerKernels(KernelRegistry* r) {
  DFLOW_RETURN_IF_ERROR(r->Register<SamplerOpOf<SamplerKind::kUniform>>(
      CpuKernel("UniformCandidateSampler")));
  DFLOW_RETURN_IF_ERROR(r->Register<SamplerOpOf<SamplerKind::kLogUniform>>(
      CpuKernel("LogUniformCandidateSampler")));
  DFLOW_RETURN_IF_ERROR(
      r->Register<SamplerOpOf<SamplerKind::kAll>>(CpuKernel("AllCandidateSampler")));
  return r->Register<ComputeAccidentalHitsOp>(CpuKernel("ComputeAccidentalHits"));
}

}  // namespace dflow
