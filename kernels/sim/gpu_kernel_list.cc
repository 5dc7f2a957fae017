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
