// Einsum(inputs: N x T, equation) on the CPU, computed the way TF 2.21's
// EinsumOp (core/kernels/linalg/einsum_op_impl.h) computes it, with its error
// texts:
//
//  1. Every operand is brought to the rank-3 form TF's BatchMatMul wants: one
//  pass per
//     operand sums its reduce labels (in one input only, not in the output),
//     takes the generalized diagonal of repeated labels ("ii->i") and lays it
//     out as [broadcast + batch dims..., free, contract] (or [..., contract,
//     free] where the input already is in that order, TF's "swap free and
//     contract": the GEMM then transposes instead). An operand already in that
//     layout is read in place.
//  2. Two operands: a batched GEMM on blas::ParallelGemm (oneDNN for float,
//  OpenBLAS for
//     double), batch dims broadcast as TF's MatMulBCast does (right-aligned,
//     size 1 stretches), so ellipses of different ranks and size-1 dims
//     broadcast.
//  3. One pass writes the output: transposes the result to the output's label
//  order and
//     inflates repeated output labels ("i->ii" puts zeros off the diagonal).
//
// Half and bfloat16 are computed in float (operands converted, float sums) and
// rounded once: half to nearest even; bfloat16 truncated after a contraction
// (TF's BatchMatMul path, see matmul_op.cc) and rounded to nearest even after a
// reduce only (TF's float-accumulating bfloat16 Sum). int32/int64 have no BLAS:
// TF contracts them with Eigen, here a plain row-by-row loop with wrap-around
// arithmetic (TF's result for overflowing products).
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "kernels/cpu/batch_broadcast.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/einsum_equation.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/register_cpu_kernels.h"
#include "runtime/half.h"
#include "runtime/kernel_registry.h"

namespace dflow {
namespace {

// The type T is computed in: float for half and bfloat16.
template <typename T>
using ComputeType = std::conditional_t<kIsHalfOrBfloat16<T>, float, T>;

template <typename C, typename T>
C Load(const T &v) {
  if constexpr (kIsHalfOrBfloat16<T>) {
    return v.ToFloat();
  } else {
    return v;
  }
}

// a + b, wrapping for integers (TF's Eigen arithmetic wraps; signed overflow is
// UB).
template <typename C>
C Add(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename C>
C Mul(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

std::string ShapeString(const std::vector<int64_t> &dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

int64_t Product(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The equation's labels once the inputs' ranks are known (TF's
// ProcessDimensions): each "..." replaced by broadcasting labels num_named,
// num_named + 1, ...
struct Labelling {
  std::vector<std::vector<int>> input_labels;
  std::vector<int> output_labels;
  std::vector<EinsumDim> types;
  std::vector<int64_t> named_dims;  // per named label
  int max_bcast_dims = 0;
};

absl::Status RecordLabelDim(int label, int axis, const TensorShape &shape,
                            std::vector<int64_t> *dims) {
  const int64_t dim = shape.dim_size(axis);
  if ((*dims)[label] != 0 && (*dims)[label] != dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected dimension ", (*dims)[label], " at axis ", axis,
                     " of the input shaped ", shape.DebugString(), " but got dimension ", dim));
  }
  (*dims)[label] = dim;
  return absl::OkStatus();
}

std::vector<int> WithBroadcastLabels(const std::vector<int> &labels, int count, int num_named) {
  std::vector<int> out;
  for (int label : labels) {
    if (label != kEinsumEllipsis) {
      out.push_back(label);
      continue;
    }
    for (int i = 0; i < count; ++i) out.push_back(num_named + i);
  }
  return out;
}

absl::StatusOr<Labelling> ProcessDimensions(const EinsumEquation &eq,
                                            const std::vector<TensorShape> &shapes) {
  const int num_inputs = static_cast<int>(eq.input_labels.size());
  if (static_cast<int>(shapes.size()) != num_inputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected ", num_inputs, " inputs but got: ", shapes.size()));
  }
  const int num_named = static_cast<int>(eq.label_types.size());
  Labelling l;
  l.types = eq.label_types;
  l.named_dims.assign(num_named, 0);
  l.input_labels.resize(num_inputs);
  for (int i = 0; i < num_inputs; ++i) {
    const std::vector<int> &labels = eq.input_labels[i];
    const int rank = shapes[i].dims();
    const int size = static_cast<int>(labels.size());
    if (!eq.input_has_ellipsis[i]) {
      if (rank != size) {
        return absl::InvalidArgumentError(
            absl::StrCat("Expected input ", i, " to have rank ", size, " but got: ", rank));
      }
      for (int axis = 0; axis < size; ++axis) {
        DFLOW_RETURN_IF_ERROR(RecordLabelDim(labels[axis], axis, shapes[i], &l.named_dims));
      }
      l.input_labels[i] = labels;
      continue;
    }
    if (rank + 1 < size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected input ", i, " to have rank at least ", size - 1, " but got: ", rank));
    }
    const int bcast = rank - size + 1;
    int ellipsis_axis = -1;
    for (int index = 0; index < size; ++index) {
      if (labels[index] == kEinsumEllipsis) {
        ellipsis_axis = index;
        continue;
      }
      const int axis = index + (ellipsis_axis == -1 ? 0 : bcast - 1);
      DFLOW_RETURN_IF_ERROR(RecordLabelDim(labels[index], axis, shapes[i], &l.named_dims));
    }
    // TF's parse counts every '.' as an ellipsis ("i.j" has one); it expands
    // the first.
    std::vector<int> expanded;
    bool done = false;
    for (int label : labels) {
      if (label == kEinsumEllipsis && !done) {
        for (int b = 0; b < bcast; ++b) expanded.push_back(num_named + b);
        done = true;
      } else {
        expanded.push_back(label);
      }
    }
    l.input_labels[i] = std::move(expanded);
    l.max_bcast_dims = std::max(l.max_bcast_dims, bcast);
  }
  l.output_labels = eq.output_labels;
  const bool any_ellipsis = eq.output_has_ellipsis ||
                            std::find(eq.input_has_ellipsis.begin(), eq.input_has_ellipsis.end(),
                                      true) != eq.input_has_ellipsis.end();
  if (!any_ellipsis) return l;
  if (eq.output_has_ellipsis) {
    l.output_labels = WithBroadcastLabels(eq.output_labels, l.max_bcast_dims, num_named);
  } else if (l.max_bcast_dims > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Output contains ", l.max_bcast_dims,
                     " broadcasting dimension(s) but no ellipsis (...) was "
                     "found in the output subscripts."));
  }
  l.types.resize(num_named + l.max_bcast_dims, EinsumDim::kBroadcasting);
  return l;
}

int TypeRank(EinsumDim type) { return static_cast<int>(type); }

// TF's ShouldSwapFreeAndContract: the labels already run [batch, contract,
// free, reduce] (ascending within each role).
bool ShouldSwapFreeAndContract(const std::vector<int> &labels,
                               const std::vector<EinsumDim> &types) {
  static constexpr int kRemap[5] = {0, 1, 3, 2, 4};
  for (size_t i = 0; i + 1 < labels.size(); ++i) {
    const int a = kRemap[TypeRank(types[labels[i]])];
    const int b = kRemap[TypeRank(types[labels[i + 1]])];
    if (a > b || (a == b && labels[i] > labels[i + 1])) return false;
  }
  return true;
}

absl::Status UnsupportedRank(size_t rank) {
  return absl::UnimplementedError(absl::StrCat(
      "Unsupported rank: ", rank, " while handling repeated indices. Up to rank 6 is supported."));
}

// One operand in TF's contraction form: [batch..., free, contract] or, when
// swapped, [batch..., contract, free], in C.
template <typename C>
struct Reduced {
  Tensor holder;  // the buffer when not read in place
  const C *data = nullptr;
  std::vector<int64_t> batch_dims;
  std::vector<int> free_labels;  // ascending
  int64_t free = 1;
  int64_t contract = 1;
  bool swapped = false;
  int64_t elements() const { return Product(batch_dims) * free * contract; }
  std::vector<int64_t> shape() const {
    std::vector<int64_t> s = batch_dims;
    s.push_back(swapped ? contract : free);
    s.push_back(swapped ? free : contract);
    return s;
  }
};

// out[i] = sum over the reduce odometer of in[offset(i) + reduce offset], for
// the kept labels' dims and input strides `dims`/`strides` (row-major over out)
// and the reduce labels' `rdims`/`rstrides`.
template <typename T, typename C>
void GatherSum(OpKernelContext *ctx, const T *in, const std::vector<int64_t> &dims,
               const std::vector<int64_t> &strides, const std::vector<int64_t> &rdims,
               const std::vector<int64_t> &rstrides, C *out) {
  const int64_t n = Product(dims);
  const int64_t rn = Product(rdims);
  const int rank = static_cast<int>(dims.size());
  const int rrank = static_cast<int>(rdims.size());
  ParallelForElements(ctx, n, 2 * rn + 4, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(rank, 0);
    int64_t offset = 0;
    {
      int64_t r = begin;
      for (int d = rank - 1; d >= 0; --d) {
        idx[d] = r % dims[d];
        r /= dims[d];
        offset += idx[d] * strides[d];
      }
    }
    std::vector<int64_t> ridx(rrank, 0);
    for (int64_t i = begin; i < end; ++i) {
      C sum = C(0);
      int64_t roffset = 0;
      for (int64_t j = 0; j < rn; ++j) {
        sum = Add<C>(sum, Load<C>(in[offset + roffset]));
        for (int d = rrank - 1; d >= 0; --d) {
          roffset += rstrides[d];
          if (++ridx[d] < rdims[d]) break;
          roffset -= rdims[d] * rstrides[d];
          ridx[d] = 0;
        }
      }
      out[i] = sum;
      for (int d = rank - 1; d >= 0; --d) {
        offset += strides[d];
        if (++idx[d] < dims[d]) break;
        offset -= dims[d] * strides[d];
        idx[d] = 0;
      }
    }
  });
}

template <typename T>
absl::StatusOr<Reduced<ComputeType<T>>> ReduceOperand(OpKernelContext *ctx, const Tensor &input,
                                                      const std::vector<int> &labels,
                                                      const std::vector<EinsumDim> &types,
                                                      const std::vector<int64_t> &named_dims) {
  using C = ComputeType<T>;
  const int num_labels = static_cast<int>(types.size());
  const int rank = input.shape().dims();
  std::vector<int64_t> axis_stride(rank, 1);
  for (int a = rank - 2; a >= 0; --a)
    axis_stride[a] = axis_stride[a + 1] * input.shape().dim_size(a + 1);
  std::vector<int64_t> label_stride(num_labels, 0), label_dim(num_labels, 0);
  std::vector<int> count(num_labels, 0);
  for (int a = 0; a < rank; ++a) {
    label_stride[labels[a]] += axis_stride[a];
    label_dim[labels[a]] = input.shape().dim_size(a);
    ++count[labels[a]];
  }
  Reduced<C> r;
  r.swapped = ShouldSwapFreeAndContract(labels, types);
  std::vector<int> batch, free, contract, reduce;
  for (int label = 0; label < num_labels; ++label) {
    if (count[label] == 0) continue;
    switch (types[label]) {
      case EinsumDim::kBroadcasting:
      case EinsumDim::kBatch:
        break;
      case EinsumDim::kFree:
        free.push_back(label);
        break;
      case EinsumDim::kContract:
        contract.push_back(label);
        break;
      case EinsumDim::kReduce:
        reduce.push_back(label);
        break;
    }
  }
  // Broadcasting labels (numbered after the named ones) come first, as TF sorts
  // them.
  for (int label = 0; label < num_labels; ++label) {
    if (count[label] > 0 && types[label] == EinsumDim::kBroadcasting) batch.push_back(label);
  }
  for (int label = 0; label < num_labels; ++label) {
    if (count[label] > 0 && types[label] == EinsumDim::kBatch) batch.push_back(label);
  }
  const bool repeated = std::any_of(count.begin(), count.end(), [](int c) { return c > 1; });
  const size_t unique = batch.size() + free.size() + contract.size() + reduce.size();
  if (repeated && unique > 6) return UnsupportedRank(unique);

  std::vector<int> order = batch;
  const std::vector<int> &second = r.swapped ? contract : free;
  const std::vector<int> &third = r.swapped ? free : contract;
  order.insert(order.end(), second.begin(), second.end());
  order.insert(order.end(), third.begin(), third.end());
  for (int label : batch) r.batch_dims.push_back(label_dim[label]);
  for (int label : free) r.free *= label_dim[label];
  for (int label : contract) r.contract *= label_dim[label];
  r.free_labels = free;
  (void)named_dims;

  if constexpr (std::is_same_v<C, T>) {
    if (!repeated && reduce.empty() && order == labels) {
      r.data = input.data<T>();
      return r;
    }
  }
  std::vector<int64_t> dims, strides, rdims, rstrides;
  for (int label : order) {
    dims.push_back(label_dim[label]);
    strides.push_back(label_stride[label]);
  }
  for (int label : reduce) {
    rdims.push_back(label_dim[label]);
    rstrides.push_back(label_stride[label]);
  }
  DFLOW_ASSIGN_OR_RETURN(r.holder,
                         ctx->allocate_temp(DataTypeOf<C>(), TensorShape({Product(dims)})));
  if (Product(dims) > 0) {
    GatherSum<T, C>(ctx, input.data<T>(), dims, strides, rdims, rstrides,
                    r.holder.template data<C>());
  }
  r.data = r.holder.template data<C>();
  return r;
}

// Integer GEMM (no BLAS has one): row i of C is the sum over k of A[i,k] *
// B[k,:].
template <typename C>
void IntGemm(const blas::GemmArgs<C> &g) {
  std::fill(g.c, g.c + g.m * g.ldc, C(0));
  for (int64_t i = 0; i < g.m; ++i) {
    C *row = g.c + i * g.ldc;
    for (int64_t k = 0; k < g.k; ++k) {
      const C a = g.trans_a ? g.a[k * g.lda + i] : g.a[i * g.lda + k];
      if (g.trans_b) {
        for (int64_t j = 0; j < g.n; ++j) row[j] = Add<C>(row[j], Mul<C>(a, g.b[j * g.ldb + k]));
      } else {
        const C *b = g.b + k * g.ldb;
        for (int64_t j = 0; j < g.n; ++j) row[j] = Add<C>(row[j], Mul<C>(a, b[j]));
      }
    }
  }
}

// The batched product of two reduced operands into `out` ([batch..., m, n]),
// batch dims broadcast as TF's MatMulBCast does.
template <typename C>
absl::Status Contract(OpKernelContext *ctx, const Reduced<C> &x, const Reduced<C> &y,
                      const std::vector<int64_t> &out_batch, C *out) {
  // BroadcastBatch (Compute) has checked the dims and made out_batch from them.
  const BatchBroadcast broadcast = *BroadcastBatches(x.batch_dims, y.batch_dims);
  const int64_t batches = Product(out_batch);
  blas::GemmArgs<C> args;
  args.m = x.free;
  args.k = x.contract;
  args.n = y.free;
  args.trans_a = x.swapped;  // x holds [k, m]
  args.lda = x.swapped ? args.m : args.k;
  args.trans_b = !y.swapped;  // y holds [n, k] unless swapped
  args.ldb = y.swapped ? args.n : args.k;
  args.ldc = args.n;
  const int64_t out_matrix = args.m * args.n;
  if (batches * out_matrix == 0) return absl::OkStatus();
  if (x.elements() == 0 || y.elements() == 0) {
    std::fill(out, out + batches * out_matrix, C(0));
    return absl::OkStatus();
  }
  auto matrix = [&](int64_t b) {
    const auto [xo, yo] = broadcast.Sources(b);
    blas::GemmArgs<C> one = args;
    one.a = x.data + xo * args.m * args.k;
    one.b = y.data + yo * args.k * args.n;
    one.c = out + b * out_matrix;
    return one;
  };
  if constexpr (std::is_integral_v<C>) {
    ParallelForElements(ctx, batches, std::max<int64_t>(1, out_matrix * args.k),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t b = begin; b < end; ++b) IntGemm(matrix(b));
                        });
    return absl::OkStatus();
  } else {
    const int threads = NumThreads(ctx);
    if (batches < threads || batches == 1) {
      for (int64_t b = 0; b < batches; ++b) {
        DFLOW_RETURN_IF_ERROR(
            blas::ParallelGemm(ctx->pool(), threads, matrix(b), ctx->cancellation()));
      }
      return absl::OkStatus();
    }
    std::mutex mu;
    absl::Status status;
    const int64_t cycles = std::max<int64_t>(1, 2 * out_matrix * args.k / 64);
    ParallelForElements(ctx, batches, cycles, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        absl::Status s = blas::Gemm(matrix(b));
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          status.Update(s);
        }
      }
    });
    return status;
  }
}

template <typename T>
T StoreResult(float v, bool contracted) {
  if constexpr (std::is_same_v<T, Bfloat16>) {
    return contracted ? Bfloat16::FromFloatTruncated(v) : Bfloat16::FromFloat(v);
  } else {
    return T::FromFloat(v);
  }
}

template <typename T>
class EinsumOp : public OpKernel {
 public:
  using C = ComputeType<T>;

  explicit EinsumOp(OpKernelConstruction *context) : OpKernel(context) {
    OP_REQUIRES_OK(context, context->GetAttr("equation", &equation_));
    absl::StatusOr<EinsumEquation> eq = ParseEinsumEquation(equation_);
    if (!eq.ok()) {
      context->SetStatus(absl::InvalidArgumentError(
          absl::StrCat(context->def().op(), ": ", eq.status().message())));
      return;
    }
    eq_ = *std::move(eq);
    output_only_label_ = EinsumOutputOnlyLabel(eq_);
  }

  void Compute(OpKernelContext *ctx) override {
    std::vector<TensorShape> shapes;
    for (int i = 0; i < ctx->num_inputs(); ++i) shapes.push_back(ctx->input(i).shape());
    absl::StatusOr<Labelling> labelling = ProcessDimensions(eq_, shapes);
    OP_REQUIRES(ctx, labelling.ok(), KernelError(*ctx, labelling.status().message()));
    const Labelling &l = *labelling;
    // After TF's own checks: where TF's kernel would abort, the shape
    // function's words.
    OP_REQUIRES(
        ctx, output_only_label_ < 0,
        KernelError(*ctx,
                    EinsumOutputOnlyLabelError(equation_, eq_, output_only_label_).message()));
    const int num_inputs = static_cast<int>(shapes.size());

    std::vector<Reduced<C>> reduced;
    for (int i = 0; i < num_inputs; ++i) {
      absl::StatusOr<Reduced<C>> r =
          ReduceOperand<T>(ctx, ctx->input(i), l.input_labels[i], l.types, l.named_dims);
      OP_REQUIRES(
          ctx, r.ok(),
          absl::Status(r.status().code(), absl::StrCat(type_string(), ": ", r.status().message())));
      reduced.push_back(*std::move(r));
    }

    // The result's labels and dims: broadcast, batch, then each operand's free
    // labels.
    const int num_labels = static_cast<int>(l.types.size());
    std::vector<int> result_labels;
    std::vector<int64_t> result_dims;
    if (num_inputs == 1) {
      result_dims = reduced[0].batch_dims;
    } else {
      OP_ASSIGN_OR_RETURN(ctx, result_dims, BroadcastBatch(*ctx, reduced[0], reduced[1]));
    }
    const std::vector<int64_t> batch_dims = result_dims;
    for (EinsumDim type : {EinsumDim::kBroadcasting, EinsumDim::kBatch}) {
      for (int label = 0; label < num_labels; ++label) {
        if (l.types[label] == type) result_labels.push_back(label);
      }
    }
    for (const Reduced<C> &r : reduced) {
      for (int label : r.free_labels) {
        result_labels.push_back(label);
        result_dims.push_back(l.named_dims[label]);
      }
    }
    // Dims of every label in the result (broadcast ones from the broadcast
    // batch shape).
    std::vector<int64_t> label_dim(num_labels, 0), label_stride(num_labels, 0);
    int64_t stride = 1;
    for (int i = static_cast<int>(result_labels.size()) - 1; i >= 0; --i) {
      label_dim[result_labels[i]] = result_dims[i];
      label_stride[result_labels[i]] = stride;
      stride *= result_dims[i];
    }
    std::vector<int64_t> out_dims;
    std::vector<int> output_count(num_labels, 0);
    for (int label : l.output_labels) {
      out_dims.push_back(label_dim[label]);
      ++output_count[label];
    }
    const bool inflate =
        std::any_of(output_count.begin(), output_count.end(), [](int c) { return c > 1; });
    OP_REQUIRES(ctx, !inflate || result_labels.size() <= 6,
                absl::UnimplementedError(absl::StrCat(
                    type_string(), ": ", UnsupportedRank(result_labels.size()).message())));
    OP_ASSIGN_OR_RETURN(ctx, TensorShape out_shape, TensorShape::Make(out_dims));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, out_shape));
    if (output->NumElements() == 0) return;

    // The result straight into the output when it is already in the output's
    // order.
    const bool in_place = std::is_same_v<C, T> && l.output_labels == result_labels;
    const C *result = nullptr;
    Tensor result_holder;
    if (num_inputs == 1) {
      result = reduced[0].data;
    } else {
      C *buffer = nullptr;
      if (in_place) {
        buffer = reinterpret_cast<C *>(output->data<T>());
      } else {
        OP_ASSIGN_OR_RETURN(ctx, result_holder,
                            ctx->allocate_temp(DataTypeOf<C>(), TensorShape({stride})));
        buffer = result_holder.data<C>();
      }
      OP_REQUIRES_OK(ctx, Contract<C>(ctx, reduced[0], reduced[1], batch_dims, buffer));
      if (in_place) return;
      result = buffer;
    }
    WriteOutput(ctx, result, l.output_labels, out_dims, label_stride, num_inputs == 2, *output);
  }

 private:
  // TF's MatMulBCast over the operands' batch dims, or its error.
  absl::StatusOr<std::vector<int64_t>> BroadcastBatch(const OpKernelContext &ctx,
                                                      const Reduced<C> &x,
                                                      const Reduced<C> &y) const {
    std::optional<BatchBroadcast> broadcast = BroadcastBatches(x.batch_dims, y.batch_dims);
    if (!broadcast.has_value()) {
      return KernelError(ctx, "Invalid broadcasting dimensions: ", ShapeString(x.shape()),
                         " vs. ", ShapeString(y.shape()));
    }
    return std::move(broadcast->out_dims);
  }

  // output[coords] = result[coords by label] where repeated output labels
  // agree, else 0.
  void WriteOutput(OpKernelContext *ctx, const C *result, const std::vector<int> &labels,
                   const std::vector<int64_t> &dims, const std::vector<int64_t> &label_stride,
                   bool contracted, const Tensor &output) const {
    const int rank = static_cast<int>(labels.size());
    std::vector<int> first(rank);
    std::vector<int64_t> strides(rank, 0);
    for (int a = 0; a < rank; ++a) {
      first[a] = a;
      for (int b = 0; b < a; ++b) {
        if (labels[b] == labels[a]) {
          first[a] = b;
          break;
        }
      }
      if (first[a] == a) strides[a] = label_stride[labels[a]];
    }
    T *out = output.data<T>();
    auto store = [contracted](C v) -> T {
      if constexpr (kIsHalfOrBfloat16<T>) {
        return StoreResult<T>(v, contracted);
      } else {
        return v;
      }
    };
    ParallelForElements(ctx, output.NumElements(), rank + 2, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> idx(rank, 0);
      int64_t r = begin, offset = 0;
      for (int d = rank - 1; d >= 0; --d) {
        idx[d] = r % dims[d];
        r /= dims[d];
        offset += idx[d] * strides[d];
      }
      for (int64_t i = begin; i < end; ++i) {
        bool on_diagonal = true;
        for (int a = 0; a < rank; ++a) on_diagonal &= idx[a] == idx[first[a]];
        out[i] = on_diagonal ? store(result[offset]) : store(C(0));
        for (int d = rank - 1; d >= 0; --d) {
          offset += strides[d];
          if (++idx[d] < dims[d]) break;
          offset -= dims[d] * strides[d];
          idx[d] = 0;
        }
      }
    });
  }

  std::string equation_;
  EinsumEquation eq_;
  int output_only_label_ = -1;  // a label only the output has (TF aborts), or -1
};

template <typename T>
absl::Status RegisterForType(KernelRegistry *registry) {
  return registry->Register<EinsumOp<T>>(
      KernelDefBuilder("Einsum").Device("CPU").TypeConstraint<T>("T"));
}

}  // namespace

absl::Status RegisterEinsumKernels(KernelRegistry *registry) {
  DFLOW_RETURN_IF_ERROR(RegisterForType<float>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterForType<double>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterForType<Half>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterForType<Bfloat16>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterForType<int32_t>(registry));
  DFLOW_RETURN_IF_ERROR(RegisterForType<int64_t>(registry));
  return absl::OkStatus();
}

}  // namespace dflow
