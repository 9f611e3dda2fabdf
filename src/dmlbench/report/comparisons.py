"""Bayesian signed-rank comparisons of pairs of methods over the data sets (Benavoli et al.
2017; the statistical view of Suarez, Garcia & Herrera 2021), computed once per report and k
and shared by the sections that show them (the Bayesian section, the leaderboard, the summary).

Per k: for every pair (A, B) of the methods that ran on every data set of the complete table
(at least `MIN_DATASETS`), the posterior probabilities that A is practically better, that the
two are practically equivalent (mean k-NN test accuracies within +-rope, `report.rope` in the
config, default 0.01 = one point), and that B is better (`measure.statistics.bayesian_signed_rank`,
seeded per pair so the report is reproducible); and the posterior samples on the probability
simplex (the paper's triangle plots) of every method against a reference, Euclidean when the
benchmark has it. An outcome needs a probability of at least `verdicts.DECISION` (the paper's
0.95); its words are the signed-rank test's own (`verdicts.signed_rank`: ahead, within rope,
behind, inconclusive), supporting evidence beside the hierarchical test's verdict.
The comparisons of one k, and their triangle figure, are one task of the renderer's pool.
"""

from __future__ import annotations

import itertools
import zlib
from concurrent.futures import Future
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import vocabulary as voc
from ..measure.statistics import bayesian_signed_rank
from . import settings, tables
from .base import Context, save_figure
from .figures import grid
from .palette import BLUE, VERMILLION
from .verdicts import probability, signed_rank

MIN_DATASETS = 2
#: Monte-Carlo draws per pair: independent draws, so a probability p has the standard error
#: sqrt(p (1 - p) / N_SAMPLES), at most 0.0035 (p = 0.5) and 0.0015 at the verdict's 0.95
N_SAMPLES = 20_000
PLOTTED_SAMPLES = 3000
_SQRT3 = np.sqrt(3.0)


def pair_seed(k: int, a: str, b: str) -> int:
    """The seed of one comparison: the same pair and k give the same draws in every report."""
    return zlib.crc32(f"{k}|{a}|{b}".encode())


def comparisons(scores: pd.DataFrame, rope: float, k: int,
                keep_samples_of: str | None = None) -> tuple[pd.DataFrame, dict]:
    """All pairs of the columns of a complete data sets x methods table: one row per pair
    (A, B) with the three probabilities, the mean difference A - B and the outcome; and the
    posterior samples of the pairs that include `keep_samples_of` (all pairs if None)."""
    rows, samples = [], {}
    for a, b in itertools.combinations(scores.columns, 2):
        result = bayesian_signed_rank(scores[a], scores[b], rope=rope, n_samples=N_SAMPLES,
                                      random_state=pair_seed(k, a, b))
        if keep_samples_of is None or keep_samples_of in (a, b):
            samples[(a, b)] = result.samples[:PLOTTED_SAMPLES]
        rows.append({"A": a, "B": b, "P(A better)": result.p_a, "P(rope)": result.p_rope,
                     "P(B better)": result.p_b,
                     "mean A - B (points)": 100 * float(np.mean(scores[a] - scores[b])),
                     "outcome": outcome(result.p_a, result.p_rope, result.p_b, a, b)})
    return pd.DataFrame(rows), samples


def outcome(p_a: float, p_rope: float, p_b: float, a: str, b: str) -> str:
    """The signed-rank outcome of a pair in its own words: "<a> ahead", "<b> ahead", "within
    rope" or "inconclusive"."""
    word = signed_rank(p_a, p_rope, p_b)
    return {"ahead": f"{a} ahead", "behind": f"{b} ahead"}.get(word, word)


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
    colours = np.array([BLUE, "#999999", VERMILLION])[winner]
    ax.scatter(points[:, 0], points[:, 1], s=3, c=colours, alpha=0.25, linewidths=0)
    ax.text(0, -0.06, f"{a}\n{probability(probs[0])}", ha="center", va="top", fontsize=8)
    ax.text(1, -0.06, f"{b}\n{probability(probs[2])}", ha="center", va="top", fontsize=8)
    ax.text(0.5, _SQRT3 / 2 + 0.04, f"rope {probability(probs[1])}", ha="center", va="bottom",
            fontsize=8)
    ax.set_xlim(-0.15, 1.15)
    ax.set_ylim(-0.25, 1.0)
    ax.set_aspect("equal")
    ax.axis("off")


def simplex_figure(pairs: pd.DataFrame, samples: dict, reference: str):
    """One triangle per method against `reference`, in a grid of four columns."""
    shown = pairs[(pairs["A"] == reference) | (pairs["B"] == reference)]
    fig, axes = grid(len(shown), 3.0, 2.9)
    for ax, (_, row) in zip(axes, shown.iterrows()):
        other = row["B"] if row["A"] == reference else row["A"]
        draws = samples[(row["A"], row["B"])]
        probs = (row["P(A better)"], row["P(rope)"], row["P(B better)"])
        if row["A"] == reference:  # put the other method on the left corner
            draws, probs = draws[:, ::-1], probs[::-1]
        _triangle(ax, draws, other, reference, probs)
    return fig


def figure_name(k: int) -> str:
    return f"bayesian_simplex_k{k}.png"


def compare_and_draw(scores: pd.DataFrame, rope: float, k: int, figure_dir: Path) -> pd.DataFrame:
    """The comparisons of one k (`comparisons`) and their triangle figure (`figure_name`); the
    renderer's task. Returns the table of pairs."""
    reference = reference_method(list(scores.columns))
    pairs, samples = comparisons(scores, rope, k, keep_samples_of=reference)
    save_figure(simplex_figure(pairs, samples, reference), figure_dir, figure_name(k))
    return pairs


def complete_scores(ctx: Context, k: int) -> pd.DataFrame:
    """Data sets x methods accuracy of k, on the data sets where every method ran."""
    return tables.complete(tables.values(ctx.parents, voc.mean(voc.accuracy(k))))


def results(ctx: Context, k: int) -> Future | None:
    """The comparisons of k (a future of `compare_and_draw`'s table), submitted once per
    report; None when fewer than two methods or `MIN_DATASETS` complete data sets."""
    def submit():
        scores = complete_scores(ctx, k)
        if scores.shape[1] < 2 or scores.shape[0] < MIN_DATASETS:
            return None
        ctx.figures_written.add(figure_name(k))
        return ctx.submit(compare_and_draw, scores, settings.rope(ctx.config), k,
                          ctx.figure_dir)

    return ctx.memo(("bayesian", k), submit)


def against_reference(pairs: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Per method other than `reference`: P(method better), P(rope), P(reference better) and
    the signed-rank outcome in its words (`verdicts.signed_rank`: "ahead", "within rope",
    "behind", "inconclusive")."""
    rows = {}
    for _, row in pairs.iterrows():
        if reference not in (row["A"], row["B"]):
            continue
        mine_first = row["B"] == reference
        other = row["A"] if mine_first else row["B"]
        better, worse = ((row["P(A better)"], row["P(B better)"]) if mine_first
                         else (row["P(B better)"], row["P(A better)"]))
        words = signed_rank(better, row["P(rope)"], worse)
        rows[other] = {"P(better)": better, "P(rope)": row["P(rope)"], "P(worse)": worse,
                       "outcome": words}
    return pd.DataFrame.from_dict(rows, orient="index")
