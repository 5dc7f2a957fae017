"""The MNIST test digits as float32 pixels/255 [N, 784] and uint8 labels (IDX, gzipped)."""
import gzip

import numpy as np


def load(images_path, labels_path):
    with gzip.open(images_path, "rb") as f:
        raw = f.read()
    n, rows, cols = (int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(3))
    images = (np.frombuffer(raw, np.uint8, offset=16).reshape(n, rows * cols) / 255.0).astype(np.float32)
    with gzip.open(labels_path, "rb") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    return images, labels


def measure(classify, images, labels, batch, repeats, peer, threads, variant):
    """Times `classify` (float32 [B,784] -> class ids [B]) over all images; prints one
    JSON line per the peers' schema (unit images/s; median/min/max over repeats) and
    checks the accuracy so a wrong model cannot post a number."""
    import json
    import time
    predictions = np.concatenate([classify(images[i:i + batch]) for i in range(0, len(images), batch)])
    accuracy = float((predictions == labels).mean())
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(0, len(images), batch):
            classify(images[i:i + batch])
        rates.append(len(images) / (time.perf_counter() - start))
    rates.sort()
    print(json.dumps({"suite": "lenet5", "peer": peer, "bench": "lenet5_mnist_b%d" % batch,
                      "variant": variant, "threads": threads, "unit": "images/s",
                      "median": round(rates[len(rates) // 2], 1), "min": round(rates[0], 1),
                      "max": round(rates[-1], 1), "n": repeats, "accuracy": accuracy}), flush=True)
