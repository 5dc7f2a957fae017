"""LeNet-5 over the MNIST test digits in PyTorch (eager, torch.inference_mode, and
TorchScript-traced), same weights as the frozen TensorFlow graph.

    /usr/bin/python3 torch_lenet.py WEIGHTS.npz IMAGES.gz LABELS.gz --threads N [--batch 500]
"""
import argparse
import os


def main():
    p = argparse.ArgumentParser()
    p.add_argument("weights"); p.add_argument("images"); p.add_argument("labels")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=500)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import torch
    import torch.nn.functional as F

    import mnist_data
    torch.set_num_threads(a.threads)
    w = {k: torch.from_numpy(v) for k, v in np.load(a.weights).items()}
    conv = [(w[l + "_Variable"].permute(3, 2, 0, 1).contiguous(), w[l + "_Variable_1"]) for l in ("first", "second", "third")]
    d1, b1, d2, b2 = w["dense1_Variable"], w["dense1_Variable_1"], w["dense2_Variable"], w["dense2_Variable_1"]

    def net(x):
        x = F.pad(x.view(-1, 1, 28, 28), (2, 2, 2, 2))
        x = F.max_pool2d(F.conv2d(x, *conv[0]), 2)
        x = F.max_pool2d(F.conv2d(x, *conv[1]), 2)
        x = F.conv2d(x, *conv[2]).view(-1, 120)
        return torch.argmax(torch.softmax((x @ d1 + b1) @ d2 + b2, dim=1), dim=1)

    images, labels = mnist_data.load(a.images, a.labels)
    with torch.inference_mode():
        traced = torch.jit.trace(net, torch.from_numpy(images[:a.batch]))
        for name, fn in (("eager", net), ("jit.trace", traced)):
            mnist_data.measure(lambda x: fn(torch.from_numpy(x)).numpy(), images, labels, a.batch, a.repeats,
                               "torch " + torch.__version__, a.threads, name + ", inference_mode")


if __name__ == "__main__":
    main()
