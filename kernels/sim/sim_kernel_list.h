// The ops that have simulated-GPU kernels (kernels/sim), in ONE place.
//
// shared/DESIGN.md "Devices, streams, memory": simulated GPUs run exactly the ops that
// have CUDA kernels, so that placement on simulated GPUs predicts placement on real
// ones. THE CUDA KERNEL LIST (kernels/cuda, when it exists) MUST MATCH THIS LIST: add or
// remove an op here and there together. (_Send/_Recv are registered for "GPU" separately;
// _Arg/_Retval stay on the CPU, the client device.)
#ifndef DFLOW_KERNELS_SIM_SIM_KERNEL_LIST_H_
#define DFLOW_KERNELS_SIM_SIM_KERNEL_LIST_H_

namespace dflow::sim {

inline constexpr const char* kGpuKernelOps[] = {
    // Math.
    "MatMul", "Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
    "SquaredDifference", "Neg", "Abs", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "AddN",
    // NN.
    "BiasAdd", "Relu", "Relu6", "Sigmoid", "Tanh", "Softmax", "Conv2D", "MaxPool", "AvgPool",
    // Reductions.
    "Sum", "Mean", "Max",
    // Array.
    "Fill", "Cast", "Identity", "Const", "Reshape", "Shape", "ExpandDims", "Squeeze",
    "ZerosLike", "OnesLike",
};

}  // namespace dflow::sim

#endif  // DFLOW_KERNELS_SIM_SIM_KERNEL_LIST_H_
