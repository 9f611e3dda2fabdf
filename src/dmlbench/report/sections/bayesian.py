"""Report section: Bayesian signed-rank comparisons of pairs of methods over the data sets
(Benavoli et al. 2017; the statistical view of Suarez, Garcia & Herrera 2021), for any benchmark
with at least two methods and `MIN_DATASETS` data sets on which both ran.

Per k: for every pair (A, B) the posterior probabilities that A is practically better, that the
two are practically equivalent (mean k-NN test accuracies within +-rope, `report.rope` in the
config, default 0.01 = one point), and that B is better (`measure.statistics.bayesian_signed_rank`,
seeded per pair so the report is reproducible); and the posterior samples on the probability
simplex (the paper's triangle plots) of every method against a reference, Euclidean when the
benchmark has it. A verdict needs a probability of at least `DECISION` (the paper's 0.95).
"""

from __future__ import annotations

import itertools
import zlib

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ... import vocabulary as voc
from ...measure.statistics import bayesian_signed_rank
from .. import settings, tables
from ..base import Context, Section, export_table, html_table, save_figure

DECISION = 0.95
MIN_DATASETS = 2
N_SAMPLES = 50_000
PLOTTED_SAMPLES = 3000
_SQRT3 = np.sqrt(3.0)


def pair_seed(k: int, a: str, b: str) -> int:
    """The seed of one comparison: the same pair and k give the same draws in every report."""
    return zlib.crc32(f"{k}|{a}|{b}".encode())


def comparisons(scores: pd.DataFrame, rope: float, k: int) -> tuple[pd.DataFrame, dict]:
    """All pairs of the columns of a complete data sets x methods table: one row per pair
    (A, B) with the three probabilities, the mean difference A - B and the verdict; and the
    posterior samples by pair."""
    rows, samples = [], {}
    for a, b in itertools.combinations(scores.columns, 2):
        result = bayesian_signed_rank(scores[a], scores[b], rope=rope, n_samples=N_SAMPLES,
                                      random_state=pair_seed(k, a, b))
        samples[(a, b)] = result.samples
        rows.append({"A": a, "B": b, "P(A better)": result.p_a, "P(rope)": result.p_rope,
                     "P(B better)": result.p_b,
                     "mean A - B (points)": 100 * float(np.mean(scores[a] - scores[b])),
                     "verdict": verdict(result.p_a, result.p_rope, result.p_b, a, b)})
    return pd.DataFrame(rows), samples


def verdict(p_a: float, p_rope: float, p_b: float, a: str, b: str) -> str:
    if p_a >= DECISION:
        return f"{a} better"
    if p_b >= DECISION:
        return f"{b} better"
    if p_rope >= DECISION:
        return "equivalent"
    return "undecided"


def reference_method(methods: list[str]) -> str:
    """Euclidean if the benchmark has it (the display order puts it first), else the first."""
    return methods[0]


def simplex_points(samples: np.ndarray) -> np.ndarray:
    """Barycentric -> plane: A better at (0, 0), B better at (1, 0), rope at the top."""
    theta_a, theta_rope, theta_b = samples.T
    return np.column_stack([theta_b + 0.5 * theta_rope, _SQRT3 / 2 * theta_rope])


def _triangle(ax, samples: np.ndarray, a: str, b: str, probs: tuple[float, float, float]) -> None:
    points = simplex_points(samples[:PLOTTED_SAMPLES])
    corners = np.array([[0, 0], [1, 0], [0.5, _SQRT3 / 2], [0, 0]])
    centre = np.array([0.5, _SQRT3 / 6])
    ax.plot(corners[:, 0], corners[:, 1], color="black", linewidth=0.8)
    for mid in ([0.5, 0], [0.25, _SQRT3 / 4], [0.75, _SQRT3 / 4]):  # where two thetas are equal
        ax.plot([centre[0], mid[0]], [centre[1], mid[1]], color="grey", linewidth=0.6, ls="--")
    winner = np.argmax(samples[:PLOTTED_SAMPLES], axis=1)
    colours = np.array(["tab:blue", "tab:grey", "tab:red"])[winner]
    ax.scatter(points[:, 0], points[:, 1], s=3, c=colours, alpha=0.25, linewidths=0)
    ax.text(0, -0.06, f"{a}\n{probs[0]:.3f}", ha="center", va="top", fontsize=8)
    ax.text(1, -0.06, f"{b}\n{probs[2]:.3f}", ha="center", va="top", fontsize=8)
    ax.text(0.5, _SQRT3 / 2 + 0.04, f"rope {probs[1]:.3f}", ha="center", va="bottom", fontsize=8)
    ax.set_xlim(-0.15, 1.15)
    ax.set_ylim(-0.25, 1.0)
    ax.set_aspect("equal")
    ax.axis("off")


def simplex_figure(pairs: pd.DataFrame, samples: dict, reference: str, k: int, out_dir) -> str:
    """One triangle per method against `reference`, in a grid; returns the file name."""
    shown = pairs[(pairs["A"] == reference) | (pairs["B"] == reference)]
    n = len(shown)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.9 * rows), squeeze=False)
    for ax, (_, row) in zip(axes.ravel(), shown.iterrows()):
        other = row["B"] if row["A"] == reference else row["A"]
        draws = samples[(row["A"], row["B"])]
        probs = (row["P(A better)"], row["P(rope)"], row["P(B better)"])
        if row["A"] == reference:  # put the other method on the left corner
            draws, probs = draws[:, ::-1], probs[::-1]
        _triangle(ax, draws, other, reference, probs)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    return save_figure(fig, out_dir, f"bayesian_simplex_k{k}.png")


def bayesian_section(ctx: Context) -> Section | None:
    if ctx.parents["method"].nunique() < 2:
        return None
    rope = settings.rope(ctx.config)
    sec = Section("bayesian", "Bayesian comparisons (signed-rank test with a rope)",
                  "The Bayesian signed-rank test (Benavoli et al. 2017) over the data sets on "
                  "which both methods ran: the posterior probabilities that the first method (A) "
                  f"is better by more than {100 * rope:g} accuracy points (the region of "
                  "practical equivalence, rope), that the two are within it, and that B is "
                  f"better; a verdict needs a probability of at least {DECISION}. Prior: "
                  "Dirichlet process of strength 0.5 at a zero difference; "
                  f"{N_SAMPLES} Monte-Carlo draws, seeded per pair. The triangles show the "
                  "draws of each method against the reference (corners: left method better, "
                  "right method better, rope at the top; dashed lines bound where each is the "
                  "largest).")
    for k in ctx.ks:
        scores = tables.complete(tables.values(ctx.parents, voc.mean(voc.accuracy(k))))
        if scores.shape[1] < 2 or scores.shape[0] < MIN_DATASETS:
            continue
        pairs, samples = comparisons(scores, rope, k)
        sec.note(f"{k}-NN over {scores.shape[0]} data sets (every method ran on them), "
                 f"rope ±{rope:g}." + (" With fewer than 10 data sets the posterior leans "
                                       "on the prior." if scores.shape[0] < 10 else ""))
        shown = pairs.copy()
        for column in ("P(A better)", "P(rope)", "P(B better)"):
            shown[column] = pairs[column].map("{:.3f}".format)
        shown["mean A - B (points)"] = pairs["mean A - B (points)"].map("{:.2f}".format)
        shown.index = [f"{a} vs {b}" for a, b in zip(pairs["A"], pairs["B"])]
        sec.table(html_table(shown.drop(columns=["A", "B"])),
                  f"Bayesian signed-rank test, {k}-NN accuracy, rope ±{rope:g}",
                  export_table(ctx, pairs.set_index(["A", "B"]), f"bayesian_k{k}"))
        reference = reference_method(list(scores.columns))
        sec.figure(simplex_figure(pairs, samples, reference, k, ctx.figure_dir),
                   f"Posterior draws of each method against {reference}, {k}-NN (one triangle "
                   "per pair; blue: the left method is the most probable, red: the right one, "
                   "grey: the rope).")
    return sec if sec.blocks else None
