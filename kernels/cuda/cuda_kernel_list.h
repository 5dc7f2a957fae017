// The ops that have CUDA kernels (kernels/cuda), as plain data. It MUST equal
// kernels/sim/sim_kernel_list.h (simulated GPUs run exactly these ops, so placement on
// them predicts placement on real GPUs); tests/kernels/cuda:cuda_kernel_list_test checks
// it on every machine, and RegisterCudaKernels checks that each op got a kernel.
#ifndef DFLOW_KERNELS_CUDA_CUDA_KERNEL_LIST_H_
#define DFLOW_KERNELS_CUDA_CUDA_KERNEL_LIST_H_

namespace dflow::cuda {

inline constexpr const char* kCudaKernelOps[] = {
    // math_kernels.cc
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference", "Neg",
    "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "AddN", "BiasAdd", "Relu", "Relu6",
    "Sigmoid", "Tanh", "Fill", "Cast", "ZerosLike", "OnesLike",
    // nn_kernels.cc
    "MatMul", "Softmax", "Conv2D", "MaxPool", "AvgPool", "Sum", "Mean", "Max",
    // array_kernels.cc
    "Identity", "Const", "Reshape", "Shape", "ExpandDims", "Squeeze",
};

}  // namespace dflow::cuda

#endif  // DFLOW_KERNELS_CUDA_CUDA_KERNEL_LIST_H_
