"""Seaborn figures of the report, each saved as a PNG and returned as its file name."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from ..files import atomic_path  # noqa: E402
from . import tables  # noqa: E402


def _save(fig, out_dir: Path, name: str) -> str:
    with atomic_path(out_dir / name) as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
    plt.close(fig)
    return name


def error_per_dataset(splits: pd.DataFrame, k: int, methods: list[str], out_dir: Path) -> str:
    """Test error per data set and method: mean over splits with 1 sd error bars."""
    frame = splits.assign(error=splits[f"error_k{k}"] * 100)
    datasets = sorted(frame["dataset"].unique())
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.12 * len(datasets) * (len(methods) + 2))))
    sns.pointplot(data=frame, y="dataset", x="error", hue="method", order=datasets,
                  hue_order=methods, errorbar="sd", dodge=0.6, linestyle="none", orient="h",
                  marker="o", markersize=5, capsize=0.08, err_kws={"linewidth": 1}, ax=ax)
    ax.set_xlim(left=0)
    ax.set_xlabel(f"test error of {k}-NN (%), mean ± sd over splits")
    ax.set_ylabel("")
    ax.legend(title="method", bbox_to_anchor=(1.01, 1), loc="upper left")
    return _save(fig, out_dir, f"error_per_dataset_k{k}.png")


def average_error(avg: pd.DataFrame, out_dir: Path) -> str:
    """Error averaged over data sets, per method and k (Abou-Moustafa 2017, Fig. 7 layout)."""
    frame = avg.reset_index(names="method").melt(id_vars="method", var_name="k",
                                                 value_name="error")
    fig, ax = plt.subplots(figsize=(7, 3.6))
    sns.barplot(data=frame, x="method", y="error", hue="k", ax=ax)
    ax.set_ylabel("average test error over data sets (%)")
    ax.set_xlabel("")
    ax.tick_params(axis="x", rotation=30)
    return _save(fig, out_dir, "average_error.png")


def fit_time(parents: pd.DataFrame, methods: list[str], out_dir: Path) -> str:
    """Mean fit time per data set (points) and method, on a log axis."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    sns.stripplot(data=parents, x="method", y="fit_wall_s_mean", hue="dataset", order=methods,
                  ax=ax, size=6, jitter=0.15)
    ax.set_yscale("log")
    ax.set_ylabel("fit time per split (s, log scale)")
    ax.set_xlabel("")
    ax.tick_params(axis="x", rotation=30)
    ax.legend(title="data set", bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    return _save(fig, out_dir, "fit_time.png")


def skewness_vs_accuracy(parents: pd.DataFrame, hubness_k: int, k: int, out_dir: Path) -> str:
    """Accuracy against N_k skewness, one point per (data set, method)."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    sns.scatterplot(data=parents, x=f"skewness_n{hubness_k}_mean", y=f"accuracy_k{k}_mean",
                    hue="method", style="method", ax=ax, s=50)
    ax.set_xlabel(f"skewness of N_{hubness_k}")
    ax.set_ylabel(f"{k}-NN test accuracy")
    ax.legend(bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    return _save(fig, out_dir, f"skewness_vs_accuracy_k{k}.png")


def all_figures(parents: pd.DataFrame, splits: pd.DataFrame, hubness_k: int,
                out_dir: Path) -> dict[str, str]:
    """Every figure of the main report, by role."""
    out_dir.mkdir(parents=True, exist_ok=True)
    _, methods = tables.order(parents)
    ks = tables.ks_of(parents)
    sns.set_theme(style="whitegrid", context="notebook")
    figs = {f"error_k{k}": error_per_dataset(splits, k, methods, out_dir) for k in ks}
    figs["average_error"] = average_error(tables.average_error(parents), out_dir)
    figs["fit_time"] = fit_time(parents, methods, out_dir)
    if f"skewness_n{hubness_k}_mean" in parents:
        figs["skewness_vs_accuracy"] = skewness_vs_accuracy(parents, hubness_k, ks[0], out_dir)
    return figs
