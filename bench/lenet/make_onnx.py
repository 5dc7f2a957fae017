"""Builds LeNet-5 as an ONNX model from export_weights.py's .npz: the same layers as the
frozen TensorFlow graph (Pad 2, three 5x5 VALID convolutions with bias, 2x2 max pools,
two dense layers, softmax, argmax; dropout at keep_prob=1 is the identity).

    /usr/bin/python3 make_onnx.py WEIGHTS.npz OUT.onnx      (needs the `onnx` package)
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(weights_path, out_path):
    w = np.load(weights_path)
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    # NHWC [N,28,28,1] and NCHW [N,1,28,28] are the same bytes when C=1.
    nodes.append(helper.make_node("Reshape", ["input", const("shape_in", np.array([-1, 1, 28, 28], np.int64))], ["x0"]))
    nodes.append(helper.make_node("Pad", ["x0", const("pads", np.array([0, 0, 2, 2, 0, 0, 2, 2], np.int64))], ["x1"]))
    x = "x1"
    for i, layer in enumerate(["first", "second", "third"]):
        kernel = w[layer + "_Variable"].transpose(3, 2, 0, 1)  # HWIO -> OIHW
        nodes.append(helper.make_node("Conv", [x, const(layer + "_w", kernel), const(layer + "_b", w[layer + "_Variable_1"])],
                                      [layer + "_conv"], kernel_shape=[5, 5]))
        x = layer + "_conv"
        if i < 2:
            nodes.append(helper.make_node("MaxPool", [x], [layer + "_pool"], kernel_shape=[2, 2], strides=[2, 2]))
            x = layer + "_pool"
    nodes.append(helper.make_node("Reshape", [x, const("shape_fc", np.array([-1, 120], np.int64))], ["flat"]))
    nodes.append(helper.make_node("Gemm", ["flat", const("d1_w", w["dense1_Variable"]), const("d1_b", w["dense1_Variable_1"])], ["d1"]))
    nodes.append(helper.make_node("Gemm", ["d1", const("d2_w", w["dense2_Variable"]), const("d2_b", w["dense2_Variable_1"])], ["logits"]))
    nodes.append(helper.make_node("Softmax", ["logits"], ["softmax"], axis=1))
    nodes.append(helper.make_node("ArgMax", ["softmax"], ["output"], axis=1, keepdims=0))
    graph = helper.make_graph(nodes, "lenet5",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 784])],
                              [helper.make_tensor_value_info("output", TensorProto.INT64, ["N"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out_path)


if __name__ == "__main__":
    main(*sys.argv[1:3])
