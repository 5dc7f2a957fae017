"""LeNet-5 over the MNIST test digits in ONNX Runtime (CPU EP, all graph optimizations,
sequential execution, intra-op threads = --threads).

    python3 ort_lenet.py MODEL.onnx IMAGES.gz LABELS.gz --threads N [--batch 500] [--repeats 5]
"""
import argparse

import onnxruntime as ort

import mnist_data


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model"); p.add_argument("images"); p.add_argument("labels")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(a.model, opts, providers=["CPUExecutionProvider"])
    images, labels = mnist_data.load(a.images, a.labels)
    mnist_data.measure(lambda x: session.run(["output"], {"input": x})[0], images, labels, a.batch,
                       a.repeats, "onnxruntime " + ort.__version__, a.threads, "InferenceSession.run, opt=all")


if __name__ == "__main__":
    main()
