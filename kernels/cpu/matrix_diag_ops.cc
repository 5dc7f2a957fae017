// MatrixDiag, MatrixDiagPart and MatrixSetDiag with their V2 and V3 forms: build batched
// matrices from diagonals, read a band of diagonals out, or overwrite one; TF 2.21's
// semantics, dtypes and texts (linalg/matrix_diag_op.cc, matrix_set_diag_op.cc).
//
// A band k = [lower, upper] of diagonals d = col - row is stored as [..., num_diags,
// max_len] ([..., max_len] for one diagonal), diagonal `upper` first. A diagonal shorter
// than max_len sits against the left or the right of its slots as `align` says: the first
// word for superdiagonals (d >= 0), the second for subdiagonals (d <= 0). V1 and V2 have
// no align attr and pack left (LEFT_LEFT); V1 has no k either (the main diagonal) and
// pads with zeros.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/status_macros.h"
#include "kernels/cpu/array_util.h"
#include "kernels/cpu/register_cpu_kernels.h"

namespace dflow {
namespace {

// The side of its slots each short diagonal is packed against.
struct Alignment {
  bool left_super = true;  // superdiagonals, d >= 0
  bool left_sub = true;    // subdiagonals, d <= 0
};

// V3's align attr; V1 and V2 have none and behave as LEFT_LEFT.
absl::Status ReadAlignment(const OpKernelConstruction& c, Alignment* align) {
  if (!c.HasAttr("align")) return absl::OkStatus();
  std::string value;
  DFLOW_RETURN_IF_ERROR(c.GetAttr("align", &value));
  align->left_super = value == "LEFT_LEFT" || value == "LEFT_RIGHT";
  align->left_sub = value == "LEFT_LEFT" || value == "RIGHT_LEFT";
  return absl::OkStatus();
}

// The diagonals [lower, upper] of rows x cols matrices, each stored in max_len slots.
struct Band {
  int64_t lower = 0;
  int64_t upper = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t max_len = 0;
  Alignment align;

  int64_t num_diags() const { return upper - lower + 1; }
  // Slots of one matrix's diagonals.
  int64_t DiagSize() const { return num_diags() * max_len; }
  // Elements of diagonal d inside the matrix; <= 0 when d misses it.
  int64_t Length(int64_t d) const {
    return std::min(rows + std::min<int64_t>(d, 0), cols - std::max<int64_t>(d, 0));
  }
  // The slot of diagonal d's first element: a right-aligned one starts after its padding.
  int64_t Offset(int64_t d) const {
    const bool left = (d >= 0 && align.left_super) || (d <= 0 && align.left_sub);
    return left ? 0 : max_len - Length(d);
  }
};

// Calls fn(element, slot) for each element of the band in one matrix: its flat index in
// the rows x cols matrix and in the [num_diags, max_len] diagonals. Every op here is this
// walk with a different copy direction.
// Only diagonals that meet the matrix (d in [1 - rows, cols - 1]) are visited: a k range
// far outside it would otherwise cost an empty iteration per diagonal.
template <typename Fn>
void ForEachBandElement(const Band& band, Fn&& fn) {
  const int64_t first_m = std::max<int64_t>(0, band.upper - (band.cols - 1));
  const int64_t end_m = std::min<int64_t>(band.num_diags(), band.upper + band.rows);
  for (int64_t m = first_m; m < end_m; ++m) {
    const int64_t d = band.upper - m;
    const int64_t first = std::max<int64_t>(-d, 0) * band.cols + std::max<int64_t>(d, 0);
    const int64_t slot = m * band.max_len + band.Offset(d);
    for (int64_t n = 0, len = band.Length(d); n < len; ++n) {
      fn(first + n * (band.cols + 1), slot + n);
    }
  }
}

// k as TF reads it: a scalar or a vector of one or two int32s, [lower, upper].
// `empty_text`: the op's words for an empty k (MatrixSetDiag's differ).
absl::Status ReadDiagRange(const OpKernelContext& ctx, const Tensor& k, const char* empty_text,
                           Band* band) {
  if (k.shape().dims() > 1) {
    return KernelError(
        ctx, "diag_index must be a scalar or vector, received shape: ", k.shape().DebugString());
  }
  const int64_t n = k.NumElements();
  if (n == 0) return KernelError(ctx, empty_text);
  if (n > 2) {
    return KernelError(ctx, "diag_index must have only one or two elements, received ", n,
                       " elements.");
  }
  band->lower = k.data<int32_t>()[0];
  band->upper = k.data<int32_t>()[n - 1];
  return absl::OkStatus();
}

absl::Status CheckOrder(const OpKernelContext& ctx, const Band& band) {
  if (band.lower <= band.upper) return absl::OkStatus();
  return KernelError(ctx, "lower_diag_index must not be larger than upper_diag_index: ", band.lower,
                     " > ", band.upper);
}

// The input matrices' size (MatrixDiagPart, MatrixSetDiag).
absl::Status ReadMatrixSize(const OpKernelContext& ctx, const TensorShape& shape, Band* band) {
  const int rank = shape.dims();
  if (rank < 2) {
    return KernelError(ctx, "input must be at least 2-dim, received shape: ", shape.DebugString());
  }
  band->rows = shape.dim_size(rank - 2);
  band->cols = shape.dim_size(rank - 1);
  return absl::OkStatus();
}

// k within the input matrices, then the longest diagonal's length. TF accepts k = 0 out of
// bounds (empty matrices); its DiagPart text puts a period before "It must", SetDiag's
// does not (`lower_sep`).
absl::Status CheckBounds(const OpKernelContext& ctx, const char* lower_sep, Band* band) {
  const int64_t rows = band->rows;
  const int64_t cols = band->cols;
  auto inside = [&](int64_t k) { return (-rows < k && k < cols) || k == 0; };
  if (!inside(band->lower)) {
    return KernelError(ctx, "lower_diag_index is out of bound: ", band->lower, lower_sep,
                       "It must be between ", -rows, " and ", cols);
  }
  if (!inside(band->upper)) {
    return KernelError(ctx, "upper_diag_index is out of bound: ", band->upper,
                       " It must be between ", -rows, " and ", cols);
  }
  DFLOW_RETURN_IF_ERROR(CheckOrder(ctx, *band));
  band->max_len =
      std::min(rows + std::min<int64_t>(band->upper, 0), cols - std::max<int64_t>(band->lower, 0));
  return absl::OkStatus();
}

// The diagonals' shape for matrices of `input`'s shape: its batch dims, num_diags when
// more than one, max_len (MatrixDiagPart's output, MatrixSetDiag's expected diagonal).
// Checked: an empty input's batch dims times a large band can overflow.
absl::StatusOr<TensorShape> DiagonalsShape(const TensorShape& input, const Band& band) {
  absl::Span<const int64_t> dims = input.dim_sizes();
  std::vector<int64_t> out(dims.begin(), dims.end() - 2);
  if (band.num_diags() > 1) out.push_back(band.num_diags());
  out.push_back(band.max_len);
  return TensorShape::Make(absl::MakeConstSpan(out));
}

// Writes the band of each output matrix from its diagonals. With `pad` the rest of the
// matrix is filled first (MatrixDiag); without, it already holds the input (SetDiag).
template <typename T>
void WriteBand(OpKernelContext* ctx, const Band& band, const T* diag, const T* pad,
               const Tensor& output) {
  const int64_t matrix_size = band.rows * band.cols;
  const int64_t batches = output.NumElements() / matrix_size;
  T* out = output.data<T>();
  const int64_t cost = band.DiagSize() + (pad == nullptr ? 1 : matrix_size);
  ParallelForElements(ctx, batches, cost, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      T* matrix = out + b * matrix_size;
      const T* diags = diag + b * band.DiagSize();
      if (pad != nullptr) std::fill(matrix, matrix + matrix_size, *pad);
      ForEachBandElement(band, [&](int64_t e, int64_t s) { matrix[e] = diags[s]; });
    }
  });
}

// Reads each input matrix's band into its padded diagonals (MatrixDiagPart).
template <typename T>
void ReadBand(OpKernelContext* ctx, const Band& band, const T* input, T pad, const Tensor& output) {
  const int64_t matrix_size = band.rows * band.cols;
  const int64_t batches = output.NumElements() / band.DiagSize();
  T* out = output.data<T>();
  ParallelForElements(ctx, batches, band.DiagSize(), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      T* diags = out + b * band.DiagSize();
      const T* matrix = input + b * matrix_size;
      std::fill(diags, diags + band.DiagSize(), pad);
      ForEachBandElement(band, [&](int64_t e, int64_t s) { diags[s] = matrix[e]; });
    }
  });
}

// --- MatrixDiag ---

// MatrixDiag's requested matrix size (-1: inferred) and padding (null: V1's zero).
struct DiagSizes {
  int64_t rows = -1;
  int64_t cols = -1;
  const Tensor* padding = nullptr;
};

absl::Status ReadSize(const OpKernelContext& ctx, const Tensor& t, const char* name,
                      int64_t* size) {
  if (t.shape().dims() != 0) return KernelError(ctx, name, " must be a scalar");
  *size = t.data<int32_t>()[0];
  return absl::OkStatus();
}

// V2 and V3's k, num_rows, num_cols and padding_value, checked in TF's order.
absl::Status ReadDiagInputs(const OpKernelContext& ctx, Band* band, DiagSizes* sizes) {
  DFLOW_RETURN_IF_ERROR(
      ReadDiagRange(ctx, ctx.input(1), "Expected diag_index to have at least 1 element", band));
  DFLOW_RETURN_IF_ERROR(ReadSize(ctx, ctx.input(2), "num_rows", &sizes->rows));
  DFLOW_RETURN_IF_ERROR(ReadSize(ctx, ctx.input(3), "num_cols", &sizes->cols));
  if (ctx.input(4).shape().dims() != 0) {
    return KernelError(ctx, "padding_value must be a scalar");
  }
  sizes->padding = &ctx.input(4);
  return absl::OkStatus();
}

// The diagonals' count against k, and their length. TF 2.21 aborts on a range of
// diagonals in a 1-D `diagonal`; here that is a count mismatch.
absl::Status CheckDiagonals(const OpKernelContext& ctx, const TensorShape& shape, Band* band) {
  const int rank = shape.dims();
  if (rank < 1) {
    return KernelError(ctx,
                       "diagonal must be at least 1-dim, received shape: ", shape.DebugString());
  }
  DFLOW_RETURN_IF_ERROR(CheckOrder(ctx, *band));
  if (band->num_diags() > 1 && (rank < 2 || shape.dim_size(rank - 2) != band->num_diags())) {
    return KernelError(ctx,
                       "The number of diagonals provided in the input does not match the "
                       "lower_diag_index and upper_diag_index range.");
  }
  band->max_len = shape.dim_size(rank - 1);
  // An empty tensor may claim any length; the matrix size adds k to it.
  if (band->max_len > (int64_t{1} << 62)) {
    return KernelError(ctx, "diagonal length ", band->max_len, " is too large");
  }
  return absl::OkStatus();
}

// The output matrices' size: as requested, or the smallest that holds the band (square
// when neither is given). One of the two must be that smallest, as in TF.
absl::Status InferMatrixSize(const OpKernelContext& ctx, const DiagSizes& sizes, Band* band) {
  const int64_t min_rows = band->max_len - std::min<int64_t>(band->upper, 0);
  const int64_t min_cols = band->max_len + std::max<int64_t>(band->lower, 0);
  if (sizes.rows != -1 && sizes.rows < min_rows) {
    return KernelError(ctx, "The number of rows is too small.");
  }
  if (sizes.cols != -1 && sizes.cols < min_cols) {
    return KernelError(ctx, "The number of columns is too small.");
  }
  const bool square = sizes.rows == -1 && sizes.cols == -1;
  const int64_t side = std::max(min_rows, min_cols);
  band->rows = square ? side : (sizes.rows == -1 ? min_rows : sizes.rows);
  band->cols = square ? side : (sizes.cols == -1 ? min_cols : sizes.cols);
  if (band->rows != min_rows && band->cols != min_cols) {
    return KernelError(ctx,
                       "The number of rows or columns is not consistent with the specified "
                       "d_lower, d_upper, and diagonal.");
  }
  return absl::OkStatus();
}

// The diagonal's batch dims, then rows and cols.
std::vector<int64_t> MatrixDims(const TensorShape& diagonal, const Band& band) {
  absl::Span<const int64_t> dims = diagonal.dim_sizes();
  const int batch_rank = diagonal.dims() - (band.num_diags() > 1 ? 2 : 1);
  std::vector<int64_t> out(dims.begin(), dims.begin() + batch_rank);
  out.push_back(band.rows);
  out.push_back(band.cols);
  return out;
}

class MatrixDiagOp : public OpKernel {
 public:
  explicit MatrixDiagOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadAlignment(*c, &align_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& diagonal = ctx->input(0);
    Band band;
    band.align = align_;
    DiagSizes sizes;
    if (ctx->num_inputs() > 1) OP_REQUIRES_OK(ctx, ReadDiagInputs(*ctx, &band, &sizes));
    OP_REQUIRES_OK(ctx, CheckDiagonals(*ctx, diagonal.shape(), &band));
    OP_REQUIRES_OK(ctx, InferMatrixSize(*ctx, sizes, &band));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape,
                        OutputShape(*ctx, MatrixDims(diagonal.shape(), band)));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    if (output->NumElements() == 0) return;
    // Zero is the all-zero bit pattern of every dtype here, so V1's padding is T{}.
    DispatchByElementSize(diagonal.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T pad = sizes.padding == nullptr ? T{} : sizes.padding->data<T>()[0];
      WriteBand<T>(ctx, band, diagonal.data<T>(), &pad, *output);
    });
  }

 private:
  Alignment align_;
};

// --- MatrixDiagPart ---

// V2 and V3's k and padding_value. TF counts padding's elements, so a [1] one passes.
absl::Status ReadPartInputs(const OpKernelContext& ctx, Band* band, const Tensor** padding) {
  DFLOW_RETURN_IF_ERROR(
      ReadDiagRange(ctx, ctx.input(1), "Expected diag_index to have at least 1 element", band));
  if (ctx.input(2).NumElements() != 1) return KernelError(ctx, "Padding must be scalar.");
  *padding = &ctx.input(2);
  return absl::OkStatus();
}

class MatrixDiagPartOp : public OpKernel {
 public:
  explicit MatrixDiagPartOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadAlignment(*c, &align_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    Band band;
    band.align = align_;
    const Tensor* padding = nullptr;  // V1: zeros
    if (ctx->num_inputs() > 1) OP_REQUIRES_OK(ctx, ReadPartInputs(*ctx, &band, &padding));
    OP_REQUIRES_OK(ctx, ReadMatrixSize(*ctx, input.shape(), &band));
    OP_REQUIRES_OK(ctx, CheckBounds(*ctx, ". ", &band));
    OP_ASSIGN_OR_RETURN(ctx, const TensorShape shape, DiagonalsShape(input.shape(), band));
    OP_ASSIGN_OR_RETURN(ctx, Tensor * output, ctx->allocate_output(0, shape));
    if (output->NumElements() == 0) return;
    DispatchByElementSize(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T pad = padding == nullptr ? T{} : padding->data<T>()[0];
      ReadBand<T>(ctx, band, input.data<T>(), pad, *output);
    });
  }

 private:
  Alignment align_;
};

// --- MatrixSetDiag ---

// `diagonal`'s shape against the band, in TF's order and words.
absl::Status CheckSetDiagonal(const OpKernelContext& ctx, const TensorShape& input,
                              const TensorShape& diagonal, const Band& band) {
  const int input_rank = input.dims();
  if (band.num_diags() > 1 && diagonal.dims() <= input_rank - 2) {
    return KernelError(ctx,
                       "Diagonal tensor rank must be large enough to contain a "
                       "diagonal-count dimension. Input rank: ",
                       input_rank, ", Expected diagonal rank >= ", input_rank - 1,
                       ", Received diagonal rank: ", diagonal.dims());
  }
  if (band.num_diags() > 1 && diagonal.dim_size(input_rank - 2) != band.num_diags()) {
    return KernelError(ctx,
                       "The number of diagonals provided in `diag` is not consistent with "
                       "`lower_diag_index` and `upper_diag_index`");
  }
  DFLOW_ASSIGN_OR_RETURN(const TensorShape expected, DiagonalsShape(input, band));
  if (diagonal == expected) return absl::OkStatus();
  return KernelError(ctx,
                     "Either first dimensions of diagonal don't match input.shape[:-2], or "
                     "diagonal.shape[:-1] is not equal to the longests diagonal in range "
                     "[lower_diag_index:upper_diag_index].\nInput shape: ",
                     input.DebugString(), "\nDiagonal shape: ", diagonal.DebugString(),
                     "\nExpected diagonal shape: ", expected.DebugString());
}

class MatrixSetDiagOp : public OpKernel {
 public:
  explicit MatrixSetDiagOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ReadAlignment(*c, &align_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& diagonal = ctx->input(1);
    Band band;
    band.align = align_;
    if (ctx->num_inputs() > 2) {
      OP_REQUIRES_OK(ctx, ReadDiagRange(*ctx, ctx->input(2),
                                        "diag_index must have at least one element", &band));
    }
    OP_REQUIRES_OK(ctx, ReadMatrixSize(*ctx, input.shape(), &band));
    OP_REQUIRES(ctx, diagonal.shape().dims() >= 1,
                KernelError(*ctx, "diagonal must be at least 1-dim, received shape: ",
                            diagonal.shape().DebugString()));
    OP_REQUIRES_OK(ctx, CheckBounds(*ctx, " ", &band));
    OP_REQUIRES_OK(ctx, CheckSetDiagonal(*ctx, input.shape(), diagonal.shape(), band));
    if (input.NumElements() == 0) {  // no matrix element to set: the input is the output
      ctx->set_output(0, input);
      return;
    }
    const TensorShape shape = input.shape();  // forwarding empties input(0)
    Tensor* output = ctx->ForwardInputToOutput(0, 0, shape);
    if (output == nullptr) {
      OP_ASSIGN_OR_RETURN(ctx, output, ctx->allocate_output(0, shape));
      CopyTensorContents(ctx, input, *output);
    }
    DispatchByElementSize(diagonal.dtype(), [&](auto zero) {
      using T = decltype(zero);
      WriteBand<T>(ctx, band, diagonal.data<T>(), nullptr, *output);
    });
  }

 private:
  Alignment align_;
};

// TF 2.21's CPU list (TF_CALL_POD_TYPES): every number type and bool, no strings.
std::vector<DataType> DiagTypes() {
  std::vector<DataType> types = NumericOrHalfTypes();
  types.insert(types.end(), {DT_COMPLEX64, DT_COMPLEX128});
  return types;
}

// Registers kernel K for each of `ops` (the versions share a kernel, as in TF).
template <typename K>
absl::Status RegisterVersions(KernelRegistry* registry, std::initializer_list<const char*> ops) {
  for (const char* op : ops) {
    DFLOW_RETURN_IF_ERROR(registry->Register<K>(CpuKernel(op).TypeConstraint("T", DiagTypes())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterMatrixDiagKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(
      RegisterVersions<MatrixDiagOp>(registry, {"MatrixDiag", "MatrixDiagV2", "MatrixDiagV3"}));
  DFLOW_RETURN_IF_ERROR(RegisterVersions<MatrixDiagPartOp>(
      registry, {"MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3"}));
  return RegisterVersions<MatrixSetDiagOp>(registry,
                                           {"MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3"});
}

}  // namespace dflow
