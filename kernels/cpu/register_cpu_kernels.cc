#include "kernels/cpu/register_cpu_kernels.h"

#include "graph/status_macros.h"

namespace dflow {

absl::Status RegisterCpuKernels(KernelRegistry* registry) {
  DFLOW_RETURN_IF_ERROR(RegisterArrayKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterCwiseKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterReductionKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterMatMulKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterConvKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterScaleShiftKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterFusedMatMulKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterPoolingKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSendRecvKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterControlFlowKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTensorArrayKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterStackKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSliceKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterStridedSliceGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterDynamicStitchKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterPadTileKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSplitKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterGatherKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSelectKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRandomKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterNnGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSummaryKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterFusedBatchNormKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterMaxPoolGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterGatherNdKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterScatterNdKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterTopKKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterBincountKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterConcatOffsetKernel(registry));
  DFLOW_RETURN_IF_ERROR(RegisterResizeKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSegmentKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUnsortedSegmentKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRangeKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterBroadcastToKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterReverseKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterScanKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterWhereKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRollKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterInvertPermutationKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterReverseSequenceKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterUniqueKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterListDiffKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterMatrixBandPartKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterLinalgKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterDecompositionKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterCandidateSamplerKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSparseToDenseKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSparseDenseMatMulKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterMatrixDiagKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterResizeGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterLrnKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSparseSegmentKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterConv3DKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterCtcKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterPool3DKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterSpaceToBatchKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterNonMaxSuppressionKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterCropAndResizeKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterAssertKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterConvBackpropInputKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterConvBackpropFilterKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterDepthwiseConvGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterFusedBatchNormGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterAvgPoolGradKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterEinsumKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterStringCaseLengthKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterAsStringKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterStringToNumberKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterStringSplitKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRegexReplaceKernels(registry));
  DFLOW_RETURN_IF_ERROR(RegisterRaggedToTensorKernels(registry));
  return absl::OkStatus();
}

}  // namespace dflow
