// ReverseSequence(input, seq_lengths): for each batch entry b (along batch_dim), reverses
// the first seq_lengths[b] slices along seq_dim and keeps the rest (bidirectional
// dynamic_rnn's backward pass, Keras go_backwards with masks), with TF 2.21's checks.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

class ReverseSequenceOp : public OpKernel {
 public:
  explicit ReverseSequenceOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("seq_dim", &seq_dim_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("batch_dim", &batch_dim_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& lengths_t = ctx->input(1);
    const TensorShape& shape = input.shape();
    OP_REQUIRES(ctx, lengths_t.shape().dims() == 1,
                absl::InvalidArgumentError(absl::StrCat("seq_lengths must be 1-dim, not ",
                                                        lengths_t.shape().dims())));
    OP_REQUIRES(ctx, batch_dim_ != seq_dim_,
                absl::InvalidArgumentError(absl::StrCat("batch_dim == seq_dim == ", seq_dim_)));
    OP_REQUIRES(ctx, seq_dim_ >= 0 && seq_dim_ < shape.dims(),
                absl::InvalidArgumentError(absl::StrCat("seq_dim must be < input rank ( ",
                                                        seq_dim_, " vs. ", shape.dims(), ")")));
    OP_REQUIRES(ctx, batch_dim_ >= 0 && batch_dim_ < shape.dims(),
                absl::InvalidArgumentError(absl::StrCat("batch_dim must be < input rank ( ",
                                                        batch_dim_, " vs. ", shape.dims(), ")")));
    const std::vector<int64_t> lengths = ReadIndices(lengths_t);
    OP_REQUIRES(ctx, static_cast<int64_t>(lengths.size()) == shape.dim_size(batch_dim_),
                absl::InvalidArgumentError(absl::StrCat(
                    "Length of seq_lengths != input.dims(", batch_dim_, "), (", lengths.size(),
                    " vs. ", shape.dim_size(batch_dim_), ")")));
    for (size_t b = 0; b < lengths.size(); ++b) {
      OP_REQUIRES(ctx, lengths[b] >= 0,
                  absl::InvalidArgumentError(absl::StrCat("seq_lens(", b, ") < 0")));
      OP_REQUIRES(ctx, lengths[b] <= shape.dim_size(seq_dim_),
                  absl::InvalidArgumentError(absl::StrCat("seq_lens(", b, ") > input.dims(",
                                                          seq_dim_, ")")));
    }
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    OP_REQUIRES(ctx, DispatchByElementSize(input.dtype(), [&](auto zero) {
                  Reverse<decltype(zero)>(input, lengths, output);
                }),
                absl::UnimplementedError(absl::StrCat("ReverseSequence of ",
                                                      DataTypeString(input.dtype()))));
  }

 private:
  // Output element i reads the element mirrored along seq_dim when its position there is
  // inside its batch entry's length, else the same element.
  template <typename T>
  void Reverse(const Tensor& input, const std::vector<int64_t>& lengths, Tensor* output) const {
    const TensorShape& shape = input.shape();
    const int64_t seq_stride = DimProduct(shape, seq_dim_ + 1, shape.dims());
    const int64_t batch_stride = DimProduct(shape, batch_dim_ + 1, shape.dims());
    const int64_t seq_size = shape.dim_size(seq_dim_);
    const int64_t batch_size = shape.dim_size(batch_dim_);
    const T* in = input.data<T>();
    T* out = output->data<T>();
    for (int64_t i = 0; i < input.NumElements(); ++i) {
      const int64_t s = (i / seq_stride) % seq_size;
      const int64_t len = lengths[(i / batch_stride) % batch_size];
      out[i] = s < len ? in[i + (len - 1 - 2 * s) * seq_stride] : in[i];
    }
  }

  int64_t seq_dim_ = 0;
  int64_t batch_dim_ = 0;
};

}  // namespace

absl::Status RegisterReverseSequenceKernels(KernelRegistry* r) {
  return r->Register<ReverseSequenceOp>(CpuKernel("ReverseSequence")
                                            .TypeConstraint("T", PodAndStringTypes())
                                            .TypeConstraint("Tlen", IndexTypes()));
}

}  // namespace dflow
