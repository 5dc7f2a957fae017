#include "kernels/sim/gpu_kernel_list.h"

namespace dflow {
namespace {

// The dtype families of the CUDA kernels (kernels/cuda): their element-wise templates are
// instantiated for kNumeric, the floating-point-only math for kReal, cuBLAS-free NN
// kernels for float only; kMovable is what the data-movement kernels (no arithmetic)
// accept.
std::vector<DataType> Float() { return {DT_FLOAT}; }
std::vector<DataType> Real() { return {DT_FLOAT, DT_DOUBLE}; }
std::vector<DataType> Numeric() { return {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64}; }
std::vector<DataType> Castable() { return {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL}; }
std::vector<DataType> Movable() {
  return {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL, DT_UINT8, DT_INT8, DT_INT16};
}
std::vector<DataType> Index() { return {DT_INT32, DT_INT64}; }

// Training (issue 13): what a gradient step of an MLP or a CNN with resource variables
// runs, so that a whole step stays on the GPU as in TF.
void AddTrainingSpecs(std::vector<GpuKernelSpec>* specs) {
  auto t_only = [specs](const char* op, std::vector<DataType> types,
                        std::vector<std::string> host_memory = {}) {
    specs->push_back({op, {{"T", std::move(types)}}, std::move(host_memory)});
  };
  // Activation gradients, BiasAddGrad, the cross-entropies (kernels/cuda/train_kernels.cu).
  for (const char* op : {"ReluGrad", "Relu6Grad", "SigmoidGrad", "TanhGrad", "EluGrad",
                         "SeluGrad", "LeakyReluGrad", "SoftplusGrad", "SoftsignGrad"}) {
    t_only(op, Real());
  }
  t_only("BiasAddGrad", Real());
  t_only("SoftmaxCrossEntropyWithLogits", Float());
  specs->push_back({"SparseSoftmaxCrossEntropyWithLogits",
                    {{"T", Float()}, {"Tlabels", Index()}}, {}});
  // Comparisons (bool out), selects, ArgMax, the broadcasts and Transpose: what losses,
  // accuracies and the gradients of Mean/Sum/Tile build around them. Axes, shapes,
  // multiples and permutations stay on the host.
  for (const char* op : {"Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual"}) {
    t_only(op, Numeric());
  }
  for (const char* op : {"Select", "SelectV2"}) t_only(op, Numeric());
  specs->push_back({"ArgMax", {{"T", Numeric()}, {"Tidx", Index()}, {"output_type", Index()}},
                    {"dimension"}});
  specs->push_back({"BroadcastTo", {{"T", Numeric()}, {"Tidx", Index()}}, {"shape"}});
  specs->push_back({"Tile", {{"T", Numeric()}, {"Tmultiples", Index()}}, {"multiples"}});
  specs->push_back({"Transpose", {{"T", Movable()}, {"Tperm", Index()}}, {"perm"}});
  // Convolution and pooling gradients, NHWC (kernels/cuda/conv_grad_kernels.cu); the
  // sizes inputs stay on the host.
  t_only("Conv2DBackpropInput", Float(), {"input_sizes"});
  t_only("Conv2DBackpropFilter", Float(), {"filter_sizes"});
  t_only("MaxPoolGrad", Float());
  t_only("AvgPoolGrad", Float(), {"orig_input_shape"});
  // Random initializers and dropout masks (kernels/cuda/host_computed_kernels.cc): TF's
  // Philox numbers, made on the host by the CPU kernel and uploaded, so that a variable's
  // initializer (colocated with it by TF 1 graphs) does not pull the variable to the CPU.
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    specs->push_back({op, {{"dtype", Real()}, {"T", Index()}}, {"shape"}});
  }
  // Resource variables and the dense optimizer updates (kernels/cuda/resource_kernels.cc):
  // handles live in host memory, values and hyperparameters in device memory (the update
  // kernels read the scalars on the GPU, as TF's do).
  for (const char* op : {"VarHandleOp", "ReadVariableOp", "AssignVariableOp"}) {
    specs->push_back({op, {{"dtype", Movable()}}, {"resource"}});
  }
  for (const char* op : {"AssignAddVariableOp", "AssignSubVariableOp"}) {
    specs->push_back({op, {{"dtype", Numeric()}}, {"resource"}});
  }
  specs->push_back({"VarIsInitializedOp", {}, {"resource", "is_initialized"}});
  for (const char* op : {"ResourceApplyGradientDescent", "ResourceApplyMomentum",
                         "ResourceApplyKerasMomentum", "ResourceApplyAdam",
                         "ResourceApplyRMSProp", "ResourceApplyCenteredRMSProp",
                         "ResourceApplyAdagrad", "ResourceApplyAdagradV2"}) {
    t_only(op, Real(), {"var", "accum", "m", "v", "ms", "mom", "mg"});
  }
}

std::vector<GpuKernelSpec> BuildSpecs() {
  std::vector<GpuKernelSpec> specs;
  auto t_only = [&](const char* op, std::vector<DataType> types,
                    std::vector<std::string> host_memory = {}) {
    specs.push_back({op, {{"T", std::move(types)}}, std::move(host_memory)});
  };
  // Math (kernels/cuda/math_kernels.cc, nn_kernels.cc).
  t_only("MatMul", Real());
  for (const char* op :
       {"Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference", "Neg", "Abs",
        "Square", "AddN"}) {
    t_only(op, Numeric());
  }
  for (const char* op : {"RealDiv", "Sqrt", "Rsqrt", "Exp", "Log"}) t_only(op, Real());
  // NN.
  t_only("BiasAdd", Numeric());
  for (const char* op : {"Relu", "Relu6", "Sigmoid", "Tanh"}) t_only(op, Real());
  for (const char* op : {"Softmax", "Conv2D", "MaxPool", "AvgPool"}) t_only(op, Float());
  // Activations and float math (kernels/cuda/cwise_kernels.cu).
  for (const char* op : {"Elu", "Selu", "LeakyRelu", "Softsign", "Softplus", "Erf", "Erfc",
                         "Rint", "DivNoNan", "MulNoNan"}) {
    t_only(op, Real());
  }
  t_only("Round", Numeric());
  for (const char* op : {"IsNan", "IsInf", "IsFinite"}) t_only(op, Real());
  // Vision layers (kernels/cuda/image_kernels.cu): depthwise convolution in NHWC and
  // NCHW, batch norm (inference and training) in NHWC/NCHW/NDHWC/NCDHW, resizes in NHWC
  // with the output size on the host.
  t_only("DepthwiseConv2dNative", Float());
  t_only("FusedBatchNorm", Float());
  for (const char* op : {"FusedBatchNormV2", "FusedBatchNormV3"}) {
    specs.push_back({op, {{"T", Float()}, {"U", Float()}}, {}});
  }
  for (const char* op : {"ResizeBilinear", "ResizeBicubic"}) t_only(op, Float(), {"size"});
  t_only("ResizeNearestNeighbor", Numeric(), {"size"});
  // Reductions: the axes stay on the host, where the kernel plans its passes.
  for (const char* op : {"Sum", "Mean", "Max"}) t_only(op, Numeric(), {"reduction_indices"});
  // Array. Shapes and axes stay on the host; so does Shape's output.
  specs.push_back({"Fill", {{"T", Numeric()}, {"index_type", Index()}}, {"dims"}});
  specs.push_back({"Cast", {{"SrcT", Castable()}, {"DstT", Castable()}}, {}});
  for (const char* op : {"ZerosLike", "OnesLike"}) t_only(op, Numeric());
  t_only("Identity", Movable());
  specs.push_back({"Const", {{"dtype", Movable()}}, {}});
  specs.push_back({"Reshape", {{"T", Movable()}, {"Tshape", Index()}}, {"shape"}});
  specs.push_back({"Shape", {{"T", Movable()}, {"out_type", Index()}}, {"output"}});
  specs.push_back({"ExpandDims", {{"T", Movable()}, {"Tdim", Index()}}, {"dim"}});
  t_only("Squeeze", Movable());
  AddTrainingSpecs(&specs);
  return specs;
}

}  // namespace

const std::vector<GpuKernelSpec>& GpuKernelSpecs() {
  static const std::vector<GpuKernelSpec>* specs = new std::vector<GpuKernelSpec>(BuildSpecs());
  return *specs;
}

const GpuKernelSpec* FindGpuKernelSpec(absl::string_view op) {
  for (const GpuKernelSpec& spec : GpuKernelSpecs()) {
    if (spec.op == op) return &spec;
  }
  return nullptr;
}

KernelDef GpuKernelDef(const GpuKernelSpec& spec) {
  KernelDef def;
  def.op = spec.op;
  def.device_type = "GPU";
  def.type_constraints = spec.type_constraints;
  def.host_memory_args = spec.host_memory_args;
  return def;
}

}  // namespace dflow
