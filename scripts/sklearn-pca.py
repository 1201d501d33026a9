#!/usr/bin/env python3
"""Peer PCA for parscope's comparison: scikit-learn on the same state matrix.

Usage: sklearn-pca.py MATRIX ROWS COLS K

MATRIX holds ROWS x COLS signed bytes, row-major (the block id of every
process in every state, as parscope's pca tests write it). Prints one JSON
object: the seconds spent in PCA.fit (not in reading), and the explained
variance (population, ddof 0, to match parscope) and explained-variance
ratio of the top K components. svd_solver="arpack" gives exact components
(to ARPACK's tolerance) without forming an n x n factor.
"""
import json
import sys
import time

import numpy as np
from sklearn.decomposition import PCA


def main():
    path, rows, cols, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    x = np.fromfile(path, dtype=np.int8)
    if x.size != rows * cols:
        sys.exit(f"{path}: {x.size} bytes, want {rows}x{cols}={rows * cols}")
    x = x.reshape(rows, cols).astype(np.float64)
    t0 = time.perf_counter()
    pca = PCA(n_components=k, svd_solver="arpack", copy=False, random_state=0)
    pca.fit(x)
    secs = time.perf_counter() - t0
    scale = (rows - 1) / rows  # sklearn divides by n-1, parscope by n
    json.dump({
        "seconds": secs,
        "explained_variance": [v * scale for v in pca.explained_variance_],
        "explained_variance_ratio": list(pca.explained_variance_ratio_),
        "sklearn": __import__("sklearn").__version__,
    }, sys.stdout)


if __name__ == "__main__":
    main()
