// CTCLoss, CTCLossV2 and CTCGreedyDecoder. Expected values and messages from TF 2.21,
// printed by testdata/ctc_tf.py (CTCLossV2's from tf.nn.ctc_loss(..., blank_index=0) on
// CPU, since TF has only a cuDNN kernel for it).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/register_cpu_kernels.h"
#include "tests/testing/op_tester.h"

namespace dflow {
namespace {

using testing::CheckNear;
using testing::DimsOf;
using testing::Filled;
using testing::OpTester;
using testing::Values;
using testing::Vec;
using Dims = std::vector<int64_t>;
using Result = absl::StatusOr<std::vector<Tensor>>;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kTolerance = 1e-5;  // relative, and absolute near 0

const KernelRegistry& Registry() { return testing::TestKernelRegistry(RegisterCtcKernels); }

// ctc_tf.py's logits: ((7t + 13b + 5c + 3tc) % 17 - 8) / 4, exact in float and double.
template <typename T>
Tensor Logits(int64_t max_time, int64_t batch, int64_t classes) {
  std::vector<T> values;
  for (int64_t t = 0; t < max_time; ++t) {
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t c = 0; c < classes; ++c) {
        values.push_back(static_cast<T>(((7 * t + 13 * b + 5 * c + 3 * t * c) % 17 - 8) / 4.0));
      }
    }
  }
  return Filled<T>({max_time, batch, classes}, values);
}

// CTCLoss's sparse labels: labels_indices [n, 2] and labels_values [n].
struct Labels {
  Tensor indices;
  Tensor values;
};

// The labels of each item in turn, indexed [b, 0], [b, 1], ...
Labels SparseLabels(const std::vector<std::vector<int32_t>>& per_item) {
  std::vector<int64_t> indices;
  std::vector<int32_t> values;
  for (size_t b = 0; b < per_item.size(); ++b) {
    for (size_t i = 0; i < per_item[b].size(); ++i) {
      indices.push_back(static_cast<int64_t>(b));
      indices.push_back(static_cast<int64_t>(i));
      values.push_back(per_item[b][i]);
    }
  }
  const int64_t n = static_cast<int64_t>(values.size());
  return {Filled<int64_t>({n, 2}, indices), Filled<int32_t>({n}, values)};
}

// Labels given as index rows (flattened [b, i] pairs) and values.
Labels RowLabels(const std::vector<int64_t>& rows, const std::vector<int32_t>& values) {
  return {Filled<int64_t>({static_cast<int64_t>(rows.size()) / 2, 2}, rows),
          Vec<int32_t>(values)};
}

// The test batch: max_time 6, batch 3, 5 classes (blank 4); labels of 2 and 3 (with a
// repeat) and 1 labels, sequence lengths 6, 5 and 4.
const std::vector<std::vector<int32_t>> kMain = {{1, 2}, {3, 3, 0}, {2}};
const std::vector<int32_t> kSeq = {6, 5, 4};

struct CtcAttrs {
  bool collapse = false;  // preprocess_collapse_repeated
  bool merge = true;      // ctc_merge_repeated
  bool ignore = false;    // ignore_longer_outputs_than_inputs
};

// CTCLoss or CTCLossV2 (no T attr).
Result RunCtc(const std::string& op, const Tensor& inputs, const Labels& labels,
              const Tensor& seq_len, const CtcAttrs& attrs = {}) {
  OpTester tester(op, Registry());
  if (op == "CTCLoss") tester.Attr("T", inputs.dtype());
  return tester.Attr("preprocess_collapse_repeated", attrs.collapse)
      .Attr("ctc_merge_repeated", attrs.merge)
      .Attr("ignore_longer_outputs_than_inputs", attrs.ignore)
      .Input(inputs)
      .Input(labels.indices)
      .Input(labels.values)
      .Input(seq_len)
      .Run();
}

Result CtcLoss(const Tensor& inputs, const Labels& labels, const std::vector<int32_t>& seq_len,
               const CtcAttrs& attrs = {}) {
  return RunCtc("CTCLoss", inputs, labels, Vec<int32_t>(seq_len), attrs);
}

// The loss and gradient of a run, against TF's.
template <typename T>
void CheckLossAndGradient(const Result& result, const std::vector<T>& loss,
                          const std::vector<T>& gradient, const Dims& dims = {6, 3, 5}) {
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  REQUIRE(result->size() == 2);
  CHECK(DimsOf((*result)[0]) == Dims{dims[1]});
  CHECK(DimsOf((*result)[1]) == dims);
  CheckNear(Values<T>((*result)[0]), loss, kTolerance);
  CheckNear(Values<T>((*result)[1]), gradient, kTolerance);
}

std::string ErrorOf(const Result& result,
                    absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == code);
  return std::string(result.status().message());
}

// `gradient` ([6, 3, 5]) with item b's rows set to 0.
std::vector<float> WithoutItem(std::vector<float> gradient, int64_t b) {
  for (int64_t t = 0; t < 6; ++t) {
    for (int64_t c = 0; c < 5; ++c) gradient[(t * 3 + b) * 5 + c] = 0;
  }
  return gradient;
}

// TF 2.21's values, one line per step and item ([t][b][c]).
// Default attrs.
const std::vector<float> kDefaultLoss = {6.55812216, 8.37460136, 4.40977335};
const std::vector<float> kDefaultGrad = {
    0.01631031, -0.568318844, 0.198700249, 0.69353199, -0.340223491,
    0.253351092, 0.0126136085, 0.0440258197, -0.202252656, -0.107737839,
    0.13536109, 0.472456604, -0.0128492899, 0.0821006522, -0.677069187,
    0.0643956885, -0.476019293, 0.0413827188, 0.370571613, -0.000330816954,
    0.0643956885, 0.475823373, 0.0501514152, -0.458043337, -0.13232708,
    0.388679177, 0.0409664884, -0.0652759671, 0.0319047309, -0.396274805,
    0.449338853, -0.396892488, -0.0908395573, 0.349945456, -0.311552346,
    0.17648986, 0.0393802077, 0.616010129, -0.0144848973, -0.817395031,
    0.0565778278, 0.01262422, -0.18916291, 0.0440628566, 0.0758976936,
    0.0357214287, 0.00699441507, -0.307818472, 0.263947666, 0.00115460902,
    -0.00710209273, 0.546121776, 0.257969648, -0.813375115, 0.0163860172,
    0.54034102, 0.25523901, -0.657290637, 0.0569515266, -0.195241183,
    0.200000003, 0.198456377, -0.377780318, 0.200000003, -0.220676377,
    -0.788202643, 0.200000003, 0.200000003, 0.200000003, 0.188203231,
    0, 0, 0, 0, 0,
    0.0269019976, 0.0569515303, -0.00480299443, 0.25523904, -0.334290028,
    0, 0, 0, 0, 0,
    0, 0, 0, 0, 0,
};
// preprocess_collapse_repeated: item 1's labels [3, 3, 0] are [3, 0].
const std::vector<float> kCollapseLoss = {6.55812216, 5.93401718, 4.40977335};
const std::vector<float> kCollapseGrad = {
    0.01631031, -0.568318844, 0.198700249, 0.69353199, -0.340223491,
    0.253351092, 0.0126136085, 0.0440258197, -0.074349761, -0.235640824,
    0.13536109, 0.472456604, -0.0128492899, 0.0821006522, -0.677069187,
    0.0643956885, -0.476019293, 0.0413827188, 0.370571613, -0.000330816954,
    0.0511321537, 0.475823373, 0.0501514152, -0.555553436, -0.0215539075,
    0.388679177, 0.0409664884, -0.0652759671, 0.0319047309, -0.396274805,
    0.449338853, -0.396892488, -0.0908395573, 0.349945456, -0.311552346,
    -0.151334345, 0.0393802077, 0.616010129, -0.472601175, -0.0314553902,
    0.0565778278, 0.01262422, -0.18916291, 0.0440628566, 0.0758976936,
    0.0357214287, 0.00699441507, -0.307818472, 0.263947666, 0.00115460902,
    -0.217655689, 0.546121776, 0.257969648, -0.234050751, -0.352385581,
    0.54034102, 0.25523901, -0.657290637, 0.0569515266, -0.195241183,
    0.200000003, 0.198456377, -0.377780318, 0.200000003, -0.220676377,
    -0.473201931, 0.200000003, 0.200000003, 0.200000003, -0.126798794,
    0, 0, 0, 0, 0,
    0.0269019976, 0.0569515303, -0.00480299443, 0.25523904, -0.334290028,
    0, 0, 0, 0, 0,
    0, 0, 0, 0, 0,
};
// ctc_merge_repeated false.
const std::vector<float> kNoMergeLoss = {8.93629456, 7.15416241, 4.86860657};
const std::vector<float> kNoMergeGrad = {
    0.01631031, -0.0724702328, 0.198700249, 0.69353199, -0.836072683,
    0.253351092, 0.0126136085, 0.0440258197, -0.0488249362, -0.2611655,
    0.13536109, 0.472456604, 0.0101409201, 0.0821006522, -0.700059295,
    0.0643956885, -0.311564237, 0.0273138247, 0.370571613, -0.150717646,
    0.0643956885, 0.475823373, 0.0501514152, -0.518275261, -0.0720958561,
    0.388679177, 0.0409664884, 0.0933848172, 0.0319047309, -0.554935336,
    0.449338853, 0.0212396309, -0.0203773249, 0.349945456, -0.800146759,
    0.0284639448, 0.0393802077, 0.616010129, -0.485622525, -0.19823195,
    0.0565778278, 0.01262422, 0.150770679, 0.0440628566, -0.264035344,
    0.0357214287, 0.0150878904, -0.172002316, 0.263947666, -0.142755359,
    -0.109642275, 0.546121776, 0.257969648, -0.163734406, -0.530714929,
    0.54034102, 0.25523901, -0.610028148, 0.0569515266, -0.242503464,
    0.200000003, 0.197592944, 0.0354810506, 0.200000003, -0.633074284,
    -0.525840819, 0.200000003, 0.200000003, 0.200000003, -0.0741596967,
    0, 0, 0, 0, 0,
    0.0269019976, 0.0569515303, 0.0814501941, 0.25523904, -0.420542777,
    0, 0, 0, 0, 0,
    0, 0, 0, 0, 0,
};
// Labels [1, 4], [3, 3, 0], [7]: [1] and no label at all for item 2 (l' = [blank]).
const std::vector<float> kNullLabelsLoss = {8.96249294, 8.37460136, 3.04040194};
const std::vector<float> kNullLabelsGrad = {
    0.01631031, -0.550740957, 0.198700249, 0.69353199, -0.357801914,
    0.253351092, 0.0126136085, 0.0440258197, -0.202252656, -0.107737839,
    0.13536109, 0.472456604, 0.0235222317, 0.0821006522, -0.713440537,
    0.0643956885, -0.471084028, 0.0501514152, 0.370571613, -0.014034953,
    0.0643956885, 0.475823373, 0.0501514152, -0.458043337, -0.13232708,
    0.388679177, 0.0409664884, 0.302703649, 0.0319047309, -0.764254153,
    0.449338853, -0.50757885, 0.0223712642, 0.349945456, -0.314077258,
    0.17648986, 0.0393802077, 0.616010129, -0.0144848973, -0.817395031,
    0.0565778278, 0.01262422, 0.197476029, 0.0440628566, -0.310740948,
    0.0357214287, -0.121070385, 0.558777213, 0.263947666, -0.737376332,
    -0.00710209273, 0.546121776, 0.257969648, -0.813375115, 0.0163860172,
    0.54034102, 0.25523901, 0.120566383, 0.0569515266, 0.000704759732,
    0.200000003, 0.1153339, 0.200000003, 0.200000003, -0.715334535,
    -0.788202643, 0.200000003, 0.200000003, 0.200000003, 0.188203231,
    0, 0, 0, 0, 0,
    0.0269019976, 0.0477114618, 0.12056639, 0.25523904, -0.450419784,
    0, 0, 0, 0, 0,
    0, 0, 0, 0, 0,
};
// Labels [1, 2], [3, 3], [2], sequence lengths 6, 2, 4: item 1 has no path.
const std::vector<float> kNoPathLoss = {6.55812216, kInf, 4.40977335};
const std::vector<float> kNoPathGrad = {
    0.01631031, -0.568318844, 0.198700249, 0.69353199, -0.340223491,
    0.253351092, 0.0126136085, 0.0440258197, 0.153665215, 0.53634429,
    0.13536109, 0.472456604, -0.0128492899, 0.0821006522, -0.677069187,
    0.0643956885, -0.476019293, 0.0413827188, 0.370571613, -0.000330816954,
    0.0643956885, 0.475823373, 0.0501514152, 0.370571613, 0.0390579589,
    0.388679177, 0.0409664884, -0.0652759671, 0.0319047309, -0.396274805,
    0.449338853, -0.396892488, -0.0908395573, 0.349945456, -0.311552346,
    0, 0, 0, 0, 0,
    0.0565778278, 0.01262422, -0.18916291, 0.0440628566, 0.0758976936,
    0.0357214287, 0.00699441507, -0.307818472, 0.263947666, 0.00115460902,
    0, 0, 0, 0, 0,
    0.54034102, 0.25523901, -0.657290637, 0.0569515266, -0.195241183,
    0.200000003, 0.198456377, -0.377780318, 0.200000003, -0.220676377,
    0, 0, 0, 0, 0,
    0, 0, 0, 0, 0,
    0.0269019976, 0.0569515303, -0.00480299443, 0.25523904, -0.334290028,
    0, 0, 0, 0, 0,
    0, 0, 0, 0, 0,
};
// CTCLossV2, labels [2, 3], [4, 4, 1], [3] (kMain's classes moved up one).
const std::vector<float> kV2Loss = {7.06692076, 7.87553549, 5.83464813};
const std::vector<float> kV2Grad = {
    -0.0532706343, 0.0569285676, -0.731718838, 0.69353193, 0.0345289223,
    0.200432196, 0.0126136085, 0.0440258197, 0.153665215, -0.410736978,
    -0.480097413, 0.472456604, 0.0235222317, -0.302440763, 0.286559433,
    -0.211153135, 0.475823313, -0.16813311, -0.135595411, 0.0390579551,
    -0.770656466, 0.475823313, 0.0501514114, 0.370571584, -0.125890136,
    -0.476353794, 0.0409664921, 0.302703679, -0.10306225, 0.235745877,
    0.141496301, 0.100261047, -0.0113796536, -0.308461517, 0.0780833811,
    -0.173163116, 0.0393802077, 0.616010129, 0.137450442, -0.619677365,
    -0.407505065, 0.01262422, 0.197476029, -0.491854668, 0.689259052,
    -0.0292947888, 0.0168736093, 0.482264519, -0.594523907, 0.12468005,
    0.00729553308, -0.0629323125, 0.257969648, 0.121856242, -0.324189186,
    -0.350591004, 0.25523904, 0.12056639, -0.0521164313, 0.0269019976,
    0.0622908175, 0.200000003, 0.174352318, -0.636643171, 0.200000003,
    -0.104526892, -0.495472729, 0.200000003, 0.200000003, 0.200000003,
    0, 0, 0, 0, 0,
    -0.142723233, 0.0569515303, 0.12056639, -0.575136065, 0.540341079,
    0, 0, 0, 0, 0,
    0, 0, 0, 0, 0,
};
// Default attrs, double.
const std::vector<double> kDoubleLoss = {6.5581218209423389, 8.3746018592653222,
                                         4.4097730369939541};
const std::vector<double> kDoubleGrad = {
    0.016310308463371219, -0.56831908701988376, 0.19870023435223061,
    0.69353196361732561, -0.34022338961072113, 0.25335109468164307,
    0.012613608271988137, 0.044025818800316217, -0.20225248558827341,
    -0.10773803616567401, 0.13536108612992639, 0.47245661368797431,
    -0.012849284474631583, 0.082100648869802853, -0.6770690493119107,
    0.064395687419448649, -0.47601925919614874, 0.041382722901330306,
    0.37057159514718774, -0.00033077979943078872, 0.064395687419448649,
    0.47582334687150873, 0.050151411788688018, -0.45804335503286597,
    -0.1323270612444572, 0.38867922534320326, 0.040966488954479748,
    -0.065275781854256865, 0.031904733677434891, -0.39627466612086104,
    0.44933885190470646, -0.39689244079537533, -0.090839585323822553,
    0.3499454497277914, -0.31155229786504168, 0.17648986163002864,
    0.039380211090082509, 0.61601014560378531, -0.01448497103817481,
    -0.81739520258223797, 0.056577829357790009, 0.01262422012545422,
    -0.18916285152856083, 0.044062857808327173, 0.075897884632344592,
    0.035721433198859134, 0.0069944160590746166, -0.30781815755342945,
    0.26394767384057388, 0.0011546344549217824, -0.0071021082848166418,
    0.54612181072393029, 0.25796967710834384, -0.81337537894640188,
    0.016386012437460518, 0.54034105076648031, 0.25523903945501991,
    -0.657290441589931, 0.056951527749729995, -0.19524120618362162,
    0.20000000000000001, 0.1984563677571714, -0.37778012752532958,
    0.20000000000000001, -0.22067623138427733, -0.78820322751998906,
    0.20000000000000001, 0.20000000000000001, 0.20000000000000001,
    0.18820322379469873, 0, 0,
    0, 0, 0,
    0.026901996836474196, 0.056951527749729995, -0.0048028655820879507,
    0.25523903945501991, -0.33428969845913614, 0,
    0, 0, 0,
    0, 0, 0,
    0, 0, 0,
};

TEST_CASE("CTCLoss gives TF's loss and gradient, zero past each sequence's end",
          "[kernels][ctc]") {
  CheckLossAndGradient(CtcLoss(Logits<float>(6, 3, 5), SparseLabels(kMain), kSeq),
                       kDefaultLoss, kDefaultGrad);
}

TEST_CASE("CTCLoss collapses repeated labels first with preprocess_collapse_repeated",
          "[kernels][ctc]") {
  CtcAttrs attrs;
  attrs.collapse = true;
  CheckLossAndGradient(CtcLoss(Logits<float>(6, 3, 5), SparseLabels(kMain), kSeq, attrs),
                       kCollapseLoss, kCollapseGrad);
}

TEST_CASE("CTCLoss without ctc_merge_repeated keeps a label on one step", "[kernels][ctc]") {
  CtcAttrs attrs;
  attrs.merge = false;
  CheckLossAndGradient(CtcLoss(Logits<float>(6, 3, 5), SparseLabels(kMain), kSeq, attrs),
                       kNoMergeLoss, kNoMergeGrad);
}

TEST_CASE("CTCLoss in double", "[kernels][ctc]") {
  CheckLossAndGradient(CtcLoss(Logits<double>(6, 3, 5), SparseLabels(kMain), kSeq),
                       kDoubleLoss, kDoubleGrad);
}

TEST_CASE("CTCLoss with ignore_longer_outputs_than_inputs gives 0 to items without the time",
          "[kernels][ctc]") {
  CtcAttrs attrs;
  attrs.ignore = true;
  // Item 1's 3 labels in 2 steps, then item 2 with no steps: loss 0 and a zero gradient,
  // the other items as by default.
  CheckLossAndGradient(
      CtcLoss(Logits<float>(6, 3, 5), SparseLabels(kMain), {6, 2, 4}, attrs),
      std::vector<float>{kDefaultLoss[0], 0, kDefaultLoss[2]}, WithoutItem(kDefaultGrad, 1));
  CheckLossAndGradient(
      CtcLoss(Logits<float>(6, 3, 5), SparseLabels(kMain), {6, 5, 0}, attrs),
      std::vector<float>{kDefaultLoss[0], kDefaultLoss[1], 0}, WithoutItem(kDefaultGrad, 2));
}

TEST_CASE("CTCLoss ends an item's labels at its first null label (>= blank)",
          "[kernels][ctc]") {
  // Item 2 has only a null label: l' is [blank], where TF's backward pass starts one more
  // state at log 1 (ctc_loss_calculator.h); the loss is TF's all the same.
  CheckLossAndGradient(
      CtcLoss(Logits<float>(6, 3, 5), SparseLabels({{1, 4}, {3, 3, 0}, {7}}), kSeq),
      kNullLabelsLoss, kNullLabelsGrad);
  // With one class every label is null: TF's loss is -log 2 and the gradient 0.5 at the
  // last step.
  CheckLossAndGradient(CtcLoss(Logits<float>(6, 3, 1), SparseLabels(kMain), kSeq),
                       std::vector<float>(3, -0.693147182f),
                       std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5, 0, 0.5, 0, 0.5,
                                          0, 0},
                       {6, 3, 1});
}

TEST_CASE("CTCLoss without a path gives an infinite loss and the softmax as gradient",
          "[kernels][ctc]") {
  // [3, 3] needs 3 steps when repeats merge; item 1 has 2.
  CheckLossAndGradient(
      CtcLoss(Logits<float>(6, 3, 5), SparseLabels({{1, 2}, {3, 3}, {2}}), {6, 2, 4}),
      kNoPathLoss, kNoPathGrad);
}

TEST_CASE("CTCLoss takes each item's label values in row order, gaps allowed",
          "[kernels][ctc]") {
  CheckLossAndGradient(
      CtcLoss(Logits<float>(6, 3, 5),
              RowLabels({0, 0, 0, 2, 1, 0, 1, 1, 1, 2, 2, 0}, {1, 2, 3, 3, 0, 2}), kSeq),
      kDefaultLoss, kDefaultGrad);
}

TEST_CASE("CTCLoss computes items in parallel as it computes them alone", "[kernels][ctc]") {
  // 16 items of up to 20 steps: enough work for the pool.
  constexpr int64_t kTime = 20, kBatch = 16, kClasses = 6;
  const Tensor x = Logits<float>(kTime, kBatch, kClasses);
  const std::vector<float> all = Values<float>(x);
  std::vector<std::vector<int32_t>> labels;
  std::vector<int32_t> seq_len;
  for (int32_t b = 0; b < kBatch; ++b) {
    labels.emplace_back();
    for (int32_t i = 0; i <= b % 4; ++i) labels.back().push_back((b + 2 * i) % 5);
    seq_len.push_back(kTime - b % 5);
  }
  const Result batch = CtcLoss(x, SparseLabels(labels), seq_len);
  REQUIRE(batch.ok());
  const std::vector<float> loss = Values<float>((*batch)[0]);
  const std::vector<float> gradient = Values<float>((*batch)[1]);
  for (int64_t b = 0; b < kBatch; ++b) {
    INFO("item " << b);
    std::vector<float> item_logits;
    for (int64_t t = 0; t < kTime; ++t) {
      const auto row = all.begin() + (t * kBatch + b) * kClasses;
      item_logits.insert(item_logits.end(), row, row + kClasses);
    }
    const Result alone = CtcLoss(Filled<float>({kTime, 1, kClasses}, item_logits),
                                 SparseLabels({labels[b]}), {seq_len[b]});
    REQUIRE(alone.ok());
    CHECK(Values<float>((*alone)[0]) == std::vector<float>{loss[b]});
    const std::vector<float> item_gradient = Values<float>((*alone)[1]);
    for (int64_t t = 0; t < kTime; ++t) {
      for (int64_t c = 0; c < kClasses; ++c) {
        CHECK(item_gradient[t * kClasses + c] == gradient[(t * kBatch + b) * kClasses + c]);
      }
    }
  }
}

TEST_CASE("CTCLoss rejects bad inputs with TF's messages", "[kernels][ctc]") {
  const Tensor x = Logits<float>(6, 3, 5);
  const Labels main = SparseLabels(kMain);
  CHECK(ErrorOf(CtcLoss(x, main, {7, 5, 4})) == "CTCLoss: sequence_length(0) <= 6");
  CHECK(ErrorOf(CtcLoss(x, main, {6, 2, 4})) ==
        "CTCLoss: Not enough time for target transition sequence (required: 3, available: "
        "2)1You can turn this error into a warning by using the flag "
        "ignore_longer_outputs_than_inputs");
  CHECK(ErrorOf(CtcLoss(x, main, {6, 5, 0})) ==
        "CTCLoss: Not enough time for target transition sequence (required: 1, available: "
        "0)2You can turn this error into a warning by using the flag "
        "ignore_longer_outputs_than_inputs");
  CHECK(ErrorOf(CtcLoss(x, SparseLabels({{4, 1}, {3, 3, 0}, {2}}), kSeq)) ==
        "CTCLoss: Saw a non-null label (index >= num_classes - 1) following a null label, "
        "batch: 0 num_classes: 5 labels: 4,1 labels seen so far: ");
  CHECK(ErrorOf(CtcLoss(x, SparseLabels({{1, 2}, {3, 3, 0}, {-1}}), kSeq)) ==
        "CTCLoss: All labels must be nonnegative integers, batch: 2 labels: -1");
  CHECK(ErrorOf(CtcLoss(x, main, {6, 5, -1})) == "CTCLoss: seq_len(2) < 0");
  CHECK(ErrorOf(CtcLoss(x, SparseLabels({{1, 2}, {3, 3, 0}, {}}), kSeq)) ==
        "CTCLoss: Labels length is zero in batch 2");
  const std::vector<int32_t> values = {1, 2, 3, 3, 0, 2};
  CHECK(ErrorOf(CtcLoss(x, RowLabels({0, 1, 0, 0, 1, 0, 1, 1, 1, 2, 2, 0}, values), kSeq)) ==
        "CTCLoss: label SparseTensor is not valid: indices[1] = [0,0] is out of order. Many "
        "sparse ops require sorted indices.\n    Use `tf.sparse.reorder` to create a "
        "correctly ordered copy.\n\n");
  CHECK(ErrorOf(CtcLoss(x, RowLabels({0, 0, 0, 0, 1, 0, 1, 1, 1, 2, 2, 0}, values), kSeq)) ==
        "CTCLoss: label SparseTensor is not valid: indices[1] = [0,0] is repeated");
  CHECK(ErrorOf(CtcLoss(x, RowLabels({0, 0, 0, 1, 1, 0, 1, 1, 1, 2, 3, 0}, values), kSeq)) ==
        "CTCLoss: label SparseTensor is not valid: indices[5] = [3,0] is out of bounds: need "
        "0 <= index < [3,3]");
  CHECK(ErrorOf(CtcLoss(x, RowLabels({0, 0, 0, 1, 1, 0, 1, 1, 1, 2, 2, -1}, values), kSeq)) ==
        "CTCLoss: label SparseTensor is not valid: indices[5] = [2,-1] is out of bounds: need "
        "0 <= index < [3,3]");
  CHECK(ErrorOf(CtcLoss(x, main, {6, 5})) ==
        "CTCLoss: len(sequence_length) != batch_size.  len(sequence_length):  2 batch_size: 3");
  CHECK(ErrorOf(CtcLoss(x, {main.indices, Vec<int32_t>({1, 2, 3, 3, 0})}, kSeq)) ==
        "CTCLoss: labels_indices and labels_values must contain the same number of rows, but "
        "saw shapes: [6,2] vs. [5]");
  CHECK(ErrorOf(CtcLoss(testing::Iota<float>({3, 5}), main, kSeq)) ==
        "CTCLoss: inputs is not a 3-Tensor");
  CHECK(ErrorOf(RunCtc("CTCLoss", x, main, Filled<int32_t>({3, 1}, {6, 5, 4}))) ==
        "CTCLoss: sequence_length is not a vector");
  CHECK(ErrorOf(CtcLoss(x, {Filled<int64_t>({6, 1}, {0, 0, 1, 1, 1, 2}), main.values}, kSeq)) ==
        "CTCLoss: labels_indices second dimension must be >= 1. Received 1");
  CHECK(ErrorOf(CtcLoss(x, {testing::Iota<int64_t>({6, 3}), main.values}, kSeq)) ==
        "CTCLoss: Order length must be SparseTensor rank.");
  CHECK(ErrorOf(CtcLoss(Logits<float>(0, 3, 5), main, {0, 0, 0})) ==
        "CTCLoss: Max time or first dimension of input cannot be 0.");
  CHECK(ErrorOf(CtcLoss(Logits<float>(6, 0, 5), main, {})) ==
        "CTCLoss: batch_size must not be 0");
}

TEST_CASE("CTCLossV2 computes tf.nn.ctc_loss with blank_index 0", "[kernels][ctc]") {
  const Labels labels = SparseLabels({{2, 3}, {4, 4, 1}, {3}});
  CheckLossAndGradient(RunCtc("CTCLossV2", Logits<float>(6, 3, 5), labels, Vec<int32_t>(kSeq)),
                       kV2Loss, kV2Grad);
  // TF's cuDNN kernel accepts only the default attrs.
  CtcAttrs attrs;
  attrs.collapse = true;
  CHECK(ErrorOf(RunCtc("CTCLossV2", Logits<float>(6, 3, 5), labels, Vec<int32_t>(kSeq),
                       attrs)) ==
        "GPU CTCLossOp requires preprocess_collapse_repeated to be false");
}

// CTCGreedyDecoder.
Result Greedy(const Tensor& inputs, const std::vector<int32_t>& seq_len, bool merge = false,
              int64_t blank = -1) {
  return OpTester("CTCGreedyDecoder", Registry())
      .Attr("T", inputs.dtype())
      .Attr("merge_repeated", merge)
      .Attr("blank_index", blank)
      .Input(inputs)
      .Input(Vec<int32_t>(seq_len))
      .Run();
}

template <typename T>
void CheckDecoded(const Result& result, const std::vector<int64_t>& indices,
                  const std::vector<int64_t>& values, const std::vector<int64_t>& shape,
                  const std::vector<T>& log_prob) {
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  REQUIRE(result->size() == 4);
  CHECK(DimsOf((*result)[0]) == Dims{static_cast<int64_t>(values.size()), 2});
  CHECK(Values<int64_t>((*result)[0]) == indices);
  CHECK(Values<int64_t>((*result)[1]) == values);
  CHECK(Values<int64_t>((*result)[2]) == shape);
  CHECK(DimsOf((*result)[3]) == Dims{static_cast<int64_t>(log_prob.size()), 1});
  CheckNear(Values<T>((*result)[3]), log_prob, kTolerance);
}

TEST_CASE("CTCGreedyDecoder takes each step's best class, without blanks", "[kernels][ctc]") {
  const std::vector<int64_t> indices = {0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 1, 0,
                                        1, 1, 1, 2, 1, 3, 2, 0, 2, 1, 2, 2};
  const std::vector<int64_t> values = {3, 1, 0, 2, 0, 1, 2, 1, 0, 1, 0, 0};
  CheckDecoded(Greedy(Logits<float>(6, 3, 5), kSeq), indices, values, {3, 5},
               std::vector<float>{-8.75, -5.75, -6.75});
  CheckDecoded(Greedy(Logits<double>(6, 3, 5), kSeq, /*merge=*/true), indices, values, {3, 5},
               std::vector<double>{-8.75, -5.75, -6.75});
  CheckDecoded(Greedy(Logits<float>(6, 3, 5), {6, 0, 3}, /*merge=*/false, /*blank=*/0),
               {0, 0, 0, 1, 0, 2, 0, 3, 2, 0, 2, 1}, {3, 1, 2, 4, 1, 4}, {3, 4},
               std::vector<float>{-8.75, 0, -5.5});
}

TEST_CASE("CTCGreedyDecoder merges repeats, breaks ties and meets NaN as TF does",
          "[kernels][ctc]") {
  // 4 classes (blank 3). Item 0: 1, 1, blank, 1, then a tie of 0 and 2 around a NaN;
  // item 1: a tie of all, blank, 0, 0, then NaN in column 0 (which keeps it).
  const Tensor x = Filled<float>(
      {5, 2, 4}, {0, 2, 1, 0, 1, 1, 1, 1,  0, 3, 1, 0, -1, -2, -3, -0.5,
                  0, 0, 0, 5, 0.5, 0.5, 0, 0,  1, 4, 0, 0, 0.5, 0.25, 0, 0,
                  2, kNaN, 2, 1, kNaN, 1, 0, 0});
  CheckDecoded(Greedy(x, {5, 4}), {0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 1, 2},
               {1, 1, 1, 0, 0, 0, 0}, {2, 4}, std::vector<float>{-16, -1.5});
  CheckDecoded(Greedy(x, {5, 5}, /*merge=*/true), {0, 0, 0, 1, 0, 2, 1, 0, 1, 1},
               {1, 1, 0, 0, 0}, {2, 3}, std::vector<float>{-16, kNaN});
}

TEST_CASE("CTCGreedyDecoder rejects bad inputs with TF's messages", "[kernels][ctc]") {
  const Tensor x = Logits<float>(6, 3, 5);
  CHECK(ErrorOf(Greedy(x, kSeq, false, 5)) ==
        "CTCGreedyDecoder: blank_index expected to be between -5 and 4 but was 5");
  CHECK(ErrorOf(Greedy(x, kSeq, false, -6)) ==
        "CTCGreedyDecoder: blank_index expected to be between -5 and 4 but was -6");
  CHECK(ErrorOf(Greedy(x, {7, 1, 1}), absl::StatusCode::kFailedPrecondition) ==
        "CTCGreedyDecoder: sequence_length(0) <= 6");
  CHECK(ErrorOf(Greedy(x, {6, 5}), absl::StatusCode::kFailedPrecondition) ==
        "CTCGreedyDecoder: len(sequence_length) != batch_size.  len(sequence_length):  2 "
        "batch_size: 3");
  CHECK(ErrorOf(Greedy(Logits<float>(6, 3, 0), kSeq)) ==
        "CTCGreedyDecoder: inputs must not be empty");
  CHECK(ErrorOf(Greedy(testing::Iota<float>({3, 5}), kSeq)) ==
        "CTCGreedyDecoder: inputs is not a 3-Tensor");
  const Result seq_2d = OpTester("CTCGreedyDecoder", Registry())
                            .Attr("T", DT_FLOAT)
                            .Input(x)
                            .Input(Filled<int32_t>({3, 1}, {6, 5, 4}))
                            .Run();
  CHECK(ErrorOf(seq_2d) == "CTCGreedyDecoder: sequence_length is not a vector");
}

}  // namespace
}  // namespace dflow
