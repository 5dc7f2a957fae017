// The CPU kernel library's one entry point (explicit registration, docs/STYLE.md #14).
#ifndef DFLOW_KERNELS_CPU_REGISTER_CPU_KERNELS_H_
#define DFLOW_KERNELS_CPU_REGISTER_CPU_KERNELS_H_

#include "absl/status/status.h"
#include "runtime/kernel_registry.h"

namespace dflow {

// Registers every CPU kernel into `registry`.
absl::Status RegisterCpuKernels(KernelRegistry* registry);

// The groups RegisterCpuKernels is made of (each in its own file and target).
absl::Status RegisterArrayKernels(KernelRegistry* registry);      // array_ops.cc
absl::Status RegisterCwiseKernels(KernelRegistry* registry);      // cwise_ops.cc, nn_ops.cc
absl::Status RegisterReductionKernels(KernelRegistry* registry);  // reduction_ops.cc
absl::Status RegisterMatMulKernels(KernelRegistry* registry);     // matmul_op.cc
absl::Status RegisterConvKernels(KernelRegistry* registry);       // conv_ops.cc
absl::Status RegisterScaleShiftKernels(KernelRegistry* registry);  // scale_shift_op.cc
absl::Status RegisterFusedMatMulKernels(KernelRegistry* registry);  // fused_matmul_op.cc
absl::Status RegisterPoolingKernels(KernelRegistry* registry);    // pooling_ops.cc
absl::Status RegisterSendRecvKernels(KernelRegistry* registry);   // sendrecv_ops.cc
absl::Status RegisterControlFlowKernels(KernelRegistry* registry);  // control_flow_ops.cc
// list_kernels.cc; registers list_scatter_concat_kernels.cc's and
// list_arithmetic_kernels.cc's too.
absl::Status RegisterListKernels(KernelRegistry* registry);
absl::Status RegisterListScatterConcatKernels(KernelRegistry* registry);
absl::Status RegisterListArithmeticKernels(KernelRegistry* registry);
absl::Status RegisterTensorArrayKernels(KernelRegistry* registry);  // tensor_array_ops.cc
absl::Status RegisterStackKernels(KernelRegistry* registry);        // stack_ops.cc
absl::Status RegisterSliceKernels(KernelRegistry* registry);      // slice_ops.cc
// strided_slice_grad_op.cc
absl::Status RegisterStridedSliceGradKernels(KernelRegistry* registry);
absl::Status RegisterDynamicStitchKernels(KernelRegistry* registry);  // dynamic_stitch_op.cc
absl::Status RegisterPadTileKernels(KernelRegistry* registry);    // pad_tile_ops.cc
absl::Status RegisterSplitKernels(KernelRegistry* registry);      // split_ops.cc
absl::Status RegisterGatherKernels(KernelRegistry* registry);     // gather_ops.cc
absl::Status RegisterSelectKernels(KernelRegistry* registry);     // select_op.cc
absl::Status RegisterRandomKernels(KernelRegistry* registry);     // random_ops.cc
absl::Status RegisterNnGradKernels(KernelRegistry* registry);     // nn_grad_ops.cc
absl::Status RegisterSummaryKernels(KernelRegistry* registry);    // summary_ops.cc
absl::Status RegisterFusedBatchNormKernels(KernelRegistry* registry);  // fused_batch_norm_op.cc
absl::Status RegisterMaxPoolGradKernels(KernelRegistry* registry);  // max_pool_grad_op.cc
absl::Status RegisterGatherNdKernels(KernelRegistry* registry);   // gather_nd_op.cc
absl::Status RegisterScatterNdKernels(KernelRegistry* registry);  // scatter_nd_op.cc
absl::Status RegisterTopKKernels(KernelRegistry* registry);       // topk_op.cc
absl::Status RegisterBincountKernels(KernelRegistry* registry);   // bincount_op.cc
absl::Status RegisterConcatOffsetKernel(KernelRegistry* registry);  // concat_offset_op.cc
absl::Status RegisterResizeKernels(KernelRegistry* registry);      // resize_ops.cc
absl::Status RegisterSegmentKernels(KernelRegistry* registry);     // segment_ops.cc
absl::Status RegisterUnsortedSegmentKernels(KernelRegistry* registry);  // unsorted_segment_ops.cc
absl::Status RegisterRangeKernels(KernelRegistry* registry);       // range_op.cc
absl::Status RegisterBroadcastToKernels(KernelRegistry* registry);  // broadcast_to_op.cc
absl::Status RegisterReverseKernels(KernelRegistry* registry);  // reverse_op.cc
absl::Status RegisterScanKernels(KernelRegistry* registry);  // scan_ops.cc
absl::Status RegisterWhereKernels(KernelRegistry* registry);  // where_op.cc
absl::Status RegisterRollKernels(KernelRegistry* registry);  // roll_op.cc
absl::Status RegisterInvertPermutationKernels(KernelRegistry* registry);  // invert_permutation_op.cc
absl::Status RegisterReverseSequenceKernels(KernelRegistry* registry);  // reverse_sequence_op.cc
absl::Status RegisterUniqueKernels(KernelRegistry* registry);  // unique_op.cc
absl::Status RegisterListDiffKernels(KernelRegistry* registry);  // list_diff_op.cc
absl::Status RegisterMatrixBandPartKernels(KernelRegistry* registry);  // matrix_band_part_op.cc
absl::Status RegisterLinalgKernels(KernelRegistry* registry);  // linalg_ops.cc
absl::Status RegisterDecompositionKernels(KernelRegistry* registry);  // decomposition_ops.cc
absl::Status RegisterCandidateSamplerKernels(KernelRegistry* registry);  // candidate_sampler_ops.cc
absl::Status RegisterSparseToDenseKernels(KernelRegistry* registry);  // sparse_to_dense_op.cc
// sparse_dense_matmul_op.cc
absl::Status RegisterSparseDenseMatMulKernels(KernelRegistry* registry);
absl::Status RegisterMatrixDiagKernels(KernelRegistry* registry);  // matrix_diag_ops.cc
absl::Status RegisterResizeGradKernels(KernelRegistry* registry);  // resize_grad_ops.cc
absl::Status RegisterLrnKernels(KernelRegistry* registry);  // lrn_ops.cc
absl::Status RegisterSparseSegmentKernels(KernelRegistry* registry);  // sparse_segment_ops.cc
absl::Status RegisterConv3DKernels(KernelRegistry* registry);  // conv3d_ops.cc
absl::Status RegisterCtcKernels(KernelRegistry* registry);  // ctc_loss_op.cc
absl::Status RegisterPool3DKernels(KernelRegistry* registry);  // pool3d_ops.cc
absl::Status RegisterSpaceToBatchKernels(KernelRegistry* registry);  // space_to_batch_ops.cc
absl::Status RegisterNonMaxSuppressionKernels(KernelRegistry* registry);  // non_max_suppression_op.cc
absl::Status RegisterCropAndResizeKernels(KernelRegistry* registry);  // crop_and_resize_op.cc
absl::Status RegisterAssertKernels(KernelRegistry* registry);  // assert_op.cc
absl::Status RegisterConvBackpropInputKernels(KernelRegistry* registry);  // conv_backprop_input_op.cc
absl::Status RegisterConvBackpropFilterKernels(KernelRegistry* registry);  // conv_backprop_filter_op.cc
// depthwise_conv_grad_ops.cc
absl::Status RegisterDepthwiseConvGradKernels(KernelRegistry* registry);
absl::Status RegisterFusedBatchNormGradKernels(KernelRegistry* registry);  // fused_batch_norm_grad_op.cc
absl::Status RegisterAvgPoolGradKernels(KernelRegistry* registry);  // avg_pool_grad_op.cc
absl::Status RegisterEinsumKernels(KernelRegistry* registry);  // einsum_op.cc
absl::Status RegisterStringCaseLengthKernels(KernelRegistry* registry);  // string_ops.cc
absl::Status RegisterAsStringKernels(KernelRegistry* registry);  // as_string_op.cc
absl::Status RegisterStringToNumberKernels(KernelRegistry* registry);  // string_to_number_op.cc
absl::Status RegisterStringSplitKernels(KernelRegistry* registry);  // string_split_op.cc
absl::Status RegisterRegexReplaceKernels(KernelRegistry* registry);  // regex_replace_op.cc
absl::Status RegisterRaggedToTensorKernels(KernelRegistry* registry);  // ragged_to_tensor_op.cc

}  // namespace dflow

#endif  // DFLOW_KERNELS_CPU_REGISTER_CPU_KERNELS_H_
