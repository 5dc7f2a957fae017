"""Extracts LeNet-5's frozen weights from the TensorFlow GraphDef into an .npz, so the
peers (ONNX Runtime, PyTorch) run the same network with the same weights as dflow.

    python3 export_weights.py GRAPH.pb OUT.npz        (needs the `tensorflow` package)
"""
import sys

import numpy as np
import tensorflow as tf

WEIGHTS = ["first/Variable", "first/Variable_1", "second/Variable", "second/Variable_1",
           "third/Variable", "third/Variable_1", "dense1/Variable", "dense1/Variable_1",
           "dense2/Variable", "dense2/Variable_1"]


def main(graph_path, out_path):
    graph = tf.compat.v1.GraphDef()
    with open(graph_path, "rb") as f:
        graph.ParseFromString(f.read())
    consts = {n.name: tf.make_ndarray(n.attr["value"].tensor) for n in graph.node if n.op == "Const"}
    missing = [w for w in WEIGHTS if w not in consts]
    if missing:
        sys.exit(f"{graph_path}: not the LeNet-5 graph (missing {missing})")
    np.savez(out_path, **{w.replace("/", "_"): consts[w] for w in WEIGHTS})


if __name__ == "__main__":
    main(*sys.argv[1:3])
