#!/usr/bin/env python3
"""PyTorch's side of run.py: the same MLP 784-512-512-10 (Relu) SGD step, batch 64, in
eager mode (forward, cross-entropy, backward, SGD step; no gradient for the images, as in
TF's graph after grappler). Prints the median step time in microseconds.

    /tmp/torchvenv/bin/python bench/training/torch_mlp_step.py --threads 1 --runs 200
"""
import argparse
import time

import numpy as np
import torch


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--threads", type=int, default=1)
  parser.add_argument("--runs", type=int, default=200)
  args = parser.parse_args()
  torch.set_num_threads(args.threads)
  torch.manual_seed(2021)
  model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                              torch.nn.Linear(512, 512), torch.nn.ReLU(),
                              torch.nn.Linear(512, 10))
  opt = torch.optim.SGD(model.parameters(), lr=0.01)
  x = torch.from_numpy(np.random.default_rng(1).uniform(0, 1, (64, 784)).astype(np.float32))
  y = torch.zeros(64, dtype=torch.long)

  def step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()

  for _ in range(20):
    step()
  samples = []
  for _ in range(args.runs):
    t = time.perf_counter()
    step()
    samples.append((time.perf_counter() - t) * 1e6)
  print("%.1f" % float(np.median(samples)))


if __name__ == "__main__":
  main()
