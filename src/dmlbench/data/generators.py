"""Generators for data sets that are a definition rather than a measurement.

- balance-scale (UCI): all 5^4 combinations of (left weight, left distance, right weight, right
  distance), each in 1..5, in UCI's lexicographic order; the class is the side with the larger
  torque weight x distance, B (balanced) when equal.
- monks-1/2/3 (UCI, Thrun 1991): the 432 combinations of a1..a6 in the order of the UCI
  `monks-N.test` files (a1 slowest), labelled by the three target concepts of `monks.names`;
  `monks_partition` adds a training set of the UCI size drawn from them by seed (monks-3 with 5%
  of its training labels flipped) as a given train/test split.
- crings (Chang 2012, section 4): five equiprobable classes on concentric rings in the first two
  dimensions, Gaussian noise in the third.
- waveform (Breiman et al. 1984; Hastie, Tibshirani & Friedman, ESL section 12.7): 21 features,
  each class a random convex combination of two of three triangular waveforms plus N(0, 1) noise.
- gaussian: classes N(sep * e_c, I_d) in d dimensions, for hubness studies (d is free).
- mnist_like: MNIST's shape (70 000 images of 28 x 28 integer pixels in 0..255, 10 classes)
  from a low-rank class model plus pixel noise, for timing and memory at MNIST size offline.

Random generators take a `seed` (numpy `default_rng`); the registry fixes it, so a registered
generated data set is the same on every machine.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .embedded import RawData

#: value ranges of the six MONK attributes (monks.names, section 7)
MONKS_VALUES = ((1, 2, 3), (1, 2, 3), (1, 2), (1, 2, 3), (1, 2, 3, 4), (1, 2))


def balance_scale() -> RawData:
    """The 625 balance-scale configurations with class L, B or R."""
    X = np.array(list(itertools.product(range(1, 6), repeat=4)), dtype=float)
    left, right = X[:, 0] * X[:, 1], X[:, 2] * X[:, 3]
    y = np.where(left > right, "L", np.where(left < right, "R", "B"))
    names = ["left_weight", "left_distance", "right_weight", "right_distance"]
    return RawData(X=X, y=y, feature_names=names)


def monks_concept(problem: int, A: np.ndarray) -> np.ndarray:
    """Target concept of MONK's problem 1, 2 or 3 for attribute rows `A` (columns a1..a6)."""
    a1, a2, a3, a4, a5, a6 = (A[:, j] for j in range(6))
    if problem == 1:
        return (a1 == a2) | (a5 == 1)
    if problem == 2:
        return (A == 1).sum(axis=1) == 2
    if problem == 3:
        return ((a5 == 3) & (a4 == 1)) | ((a5 != 4) & (a2 != 3))
    raise ValueError(f"MONK's problem must be 1, 2 or 3, got {problem!r}")


def monks(problem: int) -> RawData:
    """All 432 MONK attribute combinations labelled by concept `problem` (class 1 = in concept).

    The attributes are kept as their integer codes, as most k-NN studies of these data do.
    """
    A = np.array(list(itertools.product(*MONKS_VALUES)), dtype=float)
    y = monks_concept(problem, A).astype(int).astype(str)
    return RawData(X=A, y=y, feature_names=[f"a{j}" for j in range(1, 7)])


#: training-set sizes of the UCI MONK's problems (monks.names)
MONKS_TRAIN_SIZES = {1: 124, 2: 169, 3: 122}
#: share of monks-3 training labels that are wrong (monks.names: "5% class noise")
MONKS3_NOISE = 0.05


def monks_partition(problem: int, seed: int = 0) -> RawData:
    """MONK's problem `problem` as UCI distributes it: a training set of 124 / 169 / 122 of the
    432 attribute combinations (drawn without replacement by `seed`), followed by all 432 as the
    test set, with a given split. For problem 3, round(5% x 122) = 6 training labels are flipped
    (the UCI monks-3.train has exactly 6 wrong labels); the test labels are noise free.

    Rows: training part first (n = 124 + 432 = 556, 601, 554, the sizes Abou-Moustafa 2017
    lists, who pool both parts).
    """
    full = monks(problem)
    rng = np.random.default_rng(seed)
    n_train = MONKS_TRAIN_SIZES[problem]
    train = np.sort(rng.choice(len(full.y), size=n_train, replace=False))
    y_train = full.y[train].copy()
    if problem == 3:
        flip = rng.choice(n_train, size=round(MONKS3_NOISE * n_train), replace=False)
        y_train[flip] = np.where(y_train[flip] == "1", "0", "1")
    X = np.vstack([full.X[train], full.X])
    y = np.concatenate([y_train, full.y])
    split = {"train": np.arange(n_train), "test": np.arange(n_train, n_train + len(full.y))}
    return RawData(X=X, y=y, feature_names=full.feature_names, given_split=split)


#: crings construction (Chang 2012 gives only its shape; these numbers are our choice)
CRINGS_CLASSES = 5
CRINGS_RING_WIDTH = 1.0  # ring k (1..5) holds radii in [2k - 1.5, 2k - 0.5]
CRINGS_NOISE_SD = 5.0  # third dimension ~ N(0, 5^2): its variance (25) exceeds that of x1, x2


def crings(n_per_class: int = 100, seed: int = 0, noise_sd: float = CRINGS_NOISE_SD) -> RawData:
    """Chang 2012's "Crings": five classes with equal priors, class k on the ring of radii
    [2k - 1.5, 2k - 0.5] around the origin in (x1, x2) (radius uniform in the ring, angle
    uniform), x3 ~ N(0, noise_sd^2) for every class.

    Chang states only the shape ("five co-centric ring-shaped regions ... the third dimensions
    are Gaussian noises ... not small so that the main principal components cover the third
    dimension"); radii, ring width and noise_sd = 5 are our choice: Var(x3) = 25 exceeds
    Var(x1) = Var(x2) = E[r^2] / 2 = 16.5, so the first principal component is x3. The class
    sizes are exactly equal (n_per_class each; 5 x 100 = 500 as in Chang's Table 1).
    """
    rng = np.random.default_rng(seed)
    k = np.repeat(np.arange(1, CRINGS_CLASSES + 1), n_per_class)
    radius = rng.uniform(2 * k - 1.5, 2 * k - 1.5 + CRINGS_RING_WIDTH)
    angle = rng.uniform(0.0, 2 * math.pi, size=k.size)
    X = np.column_stack([radius * np.cos(angle), radius * np.sin(angle),
                         rng.normal(0.0, noise_sd, size=k.size)])
    return RawData(X=X, y=np.array([f"ring{c}" for c in k]), feature_names=["x1", "x2", "x3"])


def waveform_bases() -> np.ndarray:
    """The three base waveforms h1, h2, h3 at i = 1..21 (ESL 12.7): h1(i) = max(6 - |i - 11|, 0),
    h2(i) = h1(i - 4), h3(i) = h1(i + 4)."""
    i = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(i - 11), 0)
    return np.vstack([h1, np.maximum(6 - np.abs(i - 15), 0), np.maximum(6 - np.abs(i - 7), 0)])


#: the two base waveforms mixed in each class (ESL: class 1 = h1/h2, 2 = h1/h3, 3 = h2/h3)
WAVEFORM_PAIRS = {"1": (0, 1), "2": (0, 2), "3": (1, 2)}


def waveform(n: int = 800, seed: int = 0) -> RawData:
    """Breiman's waveform data: class c in {1, 2, 3} with equal probability;
    x_j = u h_a(j) + (1 - u) h_b(j) + e_j, u ~ U(0, 1), e_j ~ N(0, 1), j = 1..21, where (a, b) is
    the class's pair of base waveforms. n = 800 as in Chang 2012 (ESL's 300 + 500).

    UCI's waveform.data numbers the classes 0, 1, 2 for the pairs (h2, h3), (h1, h3), (h1, h2),
    i.e. UCI class = 3 - ours.
    """
    rng = np.random.default_rng(seed)
    labels = rng.choice(np.array(sorted(WAVEFORM_PAIRS)), size=n)
    pairs = np.array([WAVEFORM_PAIRS[c] for c in labels])
    h = waveform_bases()
    u = rng.uniform(0.0, 1.0, size=(n, 1))
    X = u * h[pairs[:, 0]] + (1 - u) * h[pairs[:, 1]] + rng.normal(size=(n, 21))
    return RawData(X=X, y=labels, feature_names=[f"x{j}" for j in range(1, 22)])


#: defaults of the `gauss-d<d>` data sets
GAUSS_N, GAUSS_CLASSES, GAUSS_SEPARATION = 1000, 2, 3.0


def gaussian(d: int, n: int = GAUSS_N, n_classes: int = GAUSS_CLASSES,
             separation: float = GAUSS_SEPARATION, seed: int = 0) -> RawData:
    """n points in d dimensions, class c (0..n_classes-1, sizes as equal as possible) drawn from
    N(separation * e_c, I_d): the classes differ in n_classes coordinates, every other coordinate
    is noise. With d growing the Euclidean k-NN degrades and hubness (skewed N_k) grows
    (Radovanovic et al. 2010), which is what the hubness studies vary.
    """
    if d < n_classes:
        raise ValueError(f"gaussian data: d = {d} must be at least the number of classes "
                         f"({n_classes})")
    if n < 2 * n_classes:
        raise ValueError(f"gaussian data: n = {n} must be at least 2 per class")
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, d))
    X[np.arange(n), y] += separation
    return RawData(X=X, y=np.array([f"c{c}" for c in y]))


#: shape of the `mnist-like` data set: MNIST's 70 000 images of 28 x 28 pixels in 10 classes
MNIST_LIKE_N, MNIST_LIKE_D, MNIST_LIKE_CLASSES = 70_000, 784, 10


def mnist_like(n: int = MNIST_LIKE_N, d: int = MNIST_LIKE_D, n_classes: int = MNIST_LIKE_CLASSES,
               rank: int = 40, seed: int = 0) -> RawData:
    """n images of d integer "pixels" in 0..255, classes of equal size in random order: each
    image is 100 + 60 B^T z + N(0, 20^2) per pixel, rounded and clipped, with z = m_c + N(0, I)
    in a random rank-`rank` subspace (B: rank x d, N(0, 1/rank) entries; class means m_c ~
    N(0, 0.36 I)). Like MNIST it is low-rank with integer pixels (exact ties between
    distances occur) and Euclidean k-NN works on it, with hubs (`benchmarks/memory.py` at
    n = 4 000: 1-NN accuracy 0.82, N5 skewness of the test queries 2.5). Built in chunks of
    5000 rows."""
    rng = np.random.default_rng(seed)
    basis = rng.normal(size=(rank, d)) / np.sqrt(rank)
    centres = rng.normal(scale=0.6, size=(n_classes, rank))
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    X = np.empty((n, d))
    for start in range(0, n, 5000):
        rows = slice(start, start + 5000)
        latent = centres[y[rows]] + rng.normal(size=(len(y[rows]), rank))
        noise = rng.normal(scale=20, size=(len(y[rows]), d))
        X[rows] = np.clip(np.rint(60 * latent @ basis + 100 + noise), 0, 255)
    return RawData(X=X, y=np.array([str(c) for c in y]))
