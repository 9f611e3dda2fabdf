"""Report sections of the local ellipsoid metrics (Abou-Moustafa 2017 and 2007): the MVCE solver
check (Newton and Titterington against CVXPY), and the papers' claims beside our runs (z-test win / loss
counts of RMVEM, the chosen neighbourhood sizes, which GQD form beats the Euclidean metric)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ... import vocabulary as voc
from ...measure import statistics
from .. import palette, papers, tables
from ..base import Context, Section, export_table, html_table, methods_as_rows

REFERENCES = ("rmvem", "minivenn")
#: the columns (headers) of the first of the two tables of the MVCE solver check, how well the
#: solvers agree with CVXPY; the second has the others, what they cost (and the update as
#: printed): each narrow enough for the page
AGREEMENT = ("check", "d", "m", "r", "problems", "CVXPY failed", "rel. Δ log det N",
             "rel. Δ log det T", "gap N", "gap T", "gap CVXPY")


def mvce_check(ctx: Context) -> Section | None:
    """Agreement and speed of the MVCE solvers against the CVXPY reference (the
    `mvce_validation` runs of the experiment), with the failed checks named."""
    frame = ctx.runs.load_kind(voc.RunKind.MVCE_VALIDATION) if ctx.runs else pd.DataFrame()
    if frame.empty:
        return None
    frame = (frame.sort_values("start_time").drop_duplicates(["dataset", "m"], keep="last")
             .sort_values(["dataset", "m"]))
    sec = Section("mvce-check", "MVCE solver check: Newton and Titterington against CVXPY",
                  "Sampled query neighbourhoods of each data set (m nearest points minus the "
                  "query, eps as configured) solved by the interior-point Newton method "
                  "(`solver: newton`), by Titterington's algorithm (normalised update, stopped "
                  "on the duality gap) and by CVXPY (Clarabel, SCS as fallback, log det in the "
                  "span of the neighbours, preconditioned). A check passes when CVXPY solved "
                  "every problem and each solver converged with relative log-det difference "
                  "|L - L_C| / max(1, |L_C|) at most 1e-6. Columns: the largest relative "
                  "log-det difference and duality gap (max_j delta_j - sum_j w_j delta_j, an "
                  "upper bound on the log-det shortfall) per solver, the time ratios CVXPY / "
                  "solver on the same problems (one at a time; at CVXPY's own gap), and the "
                  "update as printed (w_j delta_j / d): its log-det shortfall and weight sum.")
    columns = {"d": ("d", 0), "m": ("m", 0), "r": ("r", 0), "n_problems": ("problems", 0),
               "reference_failures": ("CVXPY failed", 0),
               "newton_rel_logdet_diff_max": ("rel. Δ log det N", "e"),
               "titterington_rel_logdet_diff_max": ("rel. Δ log det T", "e"),
               "newton_gap_max": ("gap N", "e"), "titterington_gap_max": ("gap T", "e"),
               "cvxpy_gap_max": ("gap CVXPY", "e"),
               "newton_iterations_mean": ("steps N", 1),
               "titterington_iterations_mean": ("iterations T", 0),
               "cvxpy_time_s": ("CVXPY (s)", 2),
               "newton_speed_ratio": ("CVXPY / N", 1), "titterington_speed_ratio": ("CVXPY / T", 1),
               "newton_speed_ratio_equal_gap": ("CVXPY / N at CVXPY's gap", 1),
               "titterington_speed_ratio_equal_gap": ("CVXPY / T at CVXPY's gap", 1),
               "printed_logdet_shortfall_mean": ("printed: log-det shortfall", 2),
               "printed_weight_sum_mean": ("printed: sum w", 3)}
    present = {k: v for k, v in columns.items() if k in frame}
    numbers = frame.set_index(frame["dataset"] + " m=" + frame["m"].astype(int).astype(str))
    passed = numbers["check_passed"] if "check_passed" in numbers else pd.Series(1.0, numbers.index)
    numbers = numbers[list(present)].rename(columns={k: v[0] for k, v in present.items()})
    text = pd.DataFrame({v[0]: numbers[v[0]].map(
        lambda x, p=v[1]: "–" if pd.isna(x) else (f"{x:.1e}" if p == "e" else f"{x:.{p}f}"))
        for v in present.values()})
    text.insert(0, "check", passed.map(lambda x: "passed" if x == 1 else "FAILED"))
    files = export_table(ctx, numbers.assign(check_passed=passed), "mvce_check")
    agreement = [c for c in text.columns if c in AGREEMENT]
    cost = [c for c in text.columns if c not in AGREEMENT]
    for shown, what in ((agreement, "agreement"), (cost, "iterations, time and the update as "
                                                         "printed")):
        if shown:
            sec.table(html_table(text[shown]), "Each solver (N: Newton, T: Titterington) "
                      f"against CVXPY per data set and m: {what}", files)
    failed = list(passed.index[passed != 1])
    if failed:
        sec.note(f"FAILED checks: {', '.join(failed)} (CVXPY found no solution for some "
                 "problems, or a solver disagreed or did not converge; the validation files "
                 "results/<benchmark>/mvce_validation/<data set>.json say which and why).")
    key = "rel_logdet_diff_max"
    if key in frame and frame[key].notna().any():
        sec.note(f"Largest relative log-det difference over all {int(frame['n_problems'].sum())} "
                 f"problems and solvers: {frame[key].max():.1e}." + "".join(
                     f" CVXPY / {label} time ratio from {frame[c].min():.1f} to "
                     f"{frame[c].max():.1f} (median {frame[c].median():.1f})."
                     for c, label in (("newton_speed_ratio", "Newton"),
                                      ("titterington_speed_ratio", "Titterington"))
                     if c in frame and frame[c].notna().any()))
    sec.figure(ctx.figure("mvce_check.png", _speed_figure, frame), "Time ratio CVXPY / solver (one problem at a time; "
               "to the configured tolerance and to the gap of CVXPY's solution) against the "
               "dimension r = min(m, d) of the span problem; the log-det agreement on the right.")
    return sec


def _speed_figure(frame: pd.DataFrame):
    ratios = {f"{s}_speed_ratio{suffix}": f"{s.capitalize()}{label}"
              for s in ("newton", "titterington")
              for suffix, label in (("", " to the configured tol"), ("_equal_gap", " to CVXPY's gap"))}
    long = frame.melt(id_vars=["dataset", "r"], value_vars=[c for c in ratios if c in frame],
                      var_name="comparison", value_name="ratio").dropna(subset=["ratio"])
    long["comparison"] = long["comparison"].map(ratios)
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 3.8))
    sns.scatterplot(data=long, x="r", y="ratio", hue="comparison", style="comparison", s=60,
                    ax=axes[0])
    axes[0].axhline(1.0, color="grey", linewidth=0.8)
    axes[0].set_yscale("log")
    axes[0].set_xlabel("r = min(m, d)")
    axes[0].set_ylabel("CVXPY time / solver time")
    axes[0].legend(fontsize="small")
    diffs = frame.melt(id_vars=["dataset", "r"],
                       value_vars=[c for c in ("newton_rel_logdet_diff_max",
                                               "titterington_rel_logdet_diff_max") if c in frame],
                       var_name="solver", value_name="diff").dropna(subset=["diff"])
    diffs["solver"] = diffs["solver"].str.split("_").str[0]
    sns.scatterplot(data=diffs, x="r", y=diffs["diff"].clip(lower=1e-17), hue="dataset",
                    style="solver", s=60, ax=axes[1])
    axes[1].set_yscale("log")
    axes[1].set_xlabel("r = min(m, d)")
    axes[1].set_ylabel("max relative log-det difference")
    axes[1].legend(bbox_to_anchor=(1.01, 1), loc="upper left", fontsize="small")
    fig.tight_layout()
    return fig


def pooled_accuracy(splits: pd.DataFrame, ks: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(accuracy, n): the share of correctly classified test points pooled over the splits and
    the number of test points, one row per (data set, k), one column per method (with 10-fold
    cross-validation every point is tested once)."""
    rows = []
    for k in ks:
        part = splits.assign(k=k, correct=splits[voc.accuracy(k)] * splits["n_test"],
                             n=splits["n_test"])
        rows.append(part.groupby(["dataset", "k", "method"])[["correct", "n"]].sum())
    both = pd.concat(rows)
    return (both["correct"] / both["n"]).unstack("method"), both["n"].unstack("method")


def local_metrics(ctx: Context) -> Section | None:
    """The papers' claims beside our runs, for benchmarks with local metrics."""
    parents = ctx.parents
    if "family" not in parents or not (parents["family"] == "local").any():
        return None
    names = dict(zip(parents["method"], parents["method_name"]))
    ks = ctx.ks
    sec = Section("local-metrics", "Local ellipsoid metrics against the papers' claims",
                  "RMVEM / MiniVenn (Abou-Moustafa 2017, 2007) against every other method: "
                  "per (data set, k), a pooled z-test for two proportions at 0.05 on the "
                  "misclassified test points summed over the splits (each point is tested "
                  "once per outer fold), counted as in sect. 5.3 of Abou-Moustafa 2017.")
    sec.note("Abou-Moustafa 2017: " + " ".join(papers.claims("abou-moustafa-2017"))
             + " Abou-Moustafa 2007: " + " ".join(papers.claims("abou-moustafa-2007")))
    if "n_test" not in ctx.splits:
        sec.note("These runs carry no test-part sizes (n_test): ingest them again to get the "
                 "z-test counts.")
        return sec
    acc, n = pooled_accuracy(ctx.splits, ks)
    references = [m for m in acc.columns if names.get(m) in REFERENCES]
    for ref in references:
        table = statistics.win_tie_loss(acc, n, ref)
        table["cases"] = table.sum(axis=1)
        published = papers.win_loss_counts("abou-moustafa-2017")
        table["paper 2017 (win / loss)"] = [
            _published_counts(published, names.get(ref), names.get(m)) for m in table.index]
        sec.table(html_table(table), f"{ref}: significantly better (win) / not (tie) / worse "
                  f"(loss) against each method over the (data set, k) cases",
                  export_table(ctx, table, f"win_tie_loss_{ref}"))
    if references and "euclidean" in names.values():
        euc = next(m for m, name in names.items() if name == "euclidean")
        local = [m for m in acc.columns if names.get(m) in ("rmvem", "rmle", "minivenn")]
        rows = {m: statistics.win_tie_loss(acc[[m, euc]], n[[m, euc]], m).loc[euc] for m in local}
        vs_euc = pd.DataFrame(rows).T
        avg = tables.average_error(parents, ks).reindex(local + [euc])
        vs_euc = vs_euc.join(avg.map(lambda v: round(v, 2)), how="outer")
        sec.table(html_table(vs_euc.fillna("–")), "Each local metric against EUC (z-test "
                  "counts) and the average test error over data sets (%): which GQD form "
                  "reproduces 'consistently better than the Euclidean metric'",
                  export_table(ctx, vs_euc, "local_vs_euclidean"))
    chosen = chosen_m(ctx.splits, parents, ks)
    if chosen is not None:
        files = export_table(ctx, chosen, "chosen_m")
        for k, table in chosen_m_per_k(chosen, ks).items():
            text = table.fillna("–")
            sec.table(html_table(text, transpose=methods_as_rows(text)),
                      f"Neighbourhood size m chosen on the "
                      f"leave-one-out training error for {k}-NN: median over the splits "
                      "[min, max]; m_opt of Abou-Moustafa 2007 (Table 1, MVEM-sim) where "
                      "printed", files)
    if references and names.get(references[0]) == "rmvem":
        wins = statistics.win_tie_loss(acc, n, references[0])
        beside = win_loss_beside_paper(wins, names, ctx.splits, references[0])
        if not beside.empty:  # the scoreboard counts these published cells (tables/paper_*.csv)
            export_table(ctx, beside, f"paper_win_loss_{references[0]}")
        sec.figure(ctx.figure("local_win_loss.png", _wins_figure, wins, names),
                   f"{references[0]} against each method: cases significantly better / worse, "
                   "ours and as printed in Abou-Moustafa 2017.")
    return sec


def _published_counts(published: pd.DataFrame, reference: str, method: str) -> str:
    """'EUC: 42 / 11 of 60' where the paper counts the pair, else a dash."""
    if (reference, method) not in published.index:
        return "–"
    row = published.loc[(reference, method)]
    return f"{row['paper_method']}: {row['wins']} / {row['losses']} of {row['cases']}"


def _paper_mopt() -> pd.DataFrame:
    table = papers.data_table("abou-moustafa-2007_table1")
    table["dataset"] = [papers.registry_name("abou-moustafa-2007", d) for d in table["dataset"]]
    table["k"] = table["setting"].str.removeprefix("k=").astype(int)
    return table.pivot(index="dataset", columns="k", values="value")


def chosen_m(splits: pd.DataFrame, parents: pd.DataFrame, ks: list[int]) -> pd.DataFrame | None:
    """Data set x (method, k) table of the chosen m, with the 2007 paper's m_opt."""
    local = parents.loc[parents["family"] == "local", "method"].unique()
    columns = {}
    for k in ks:
        key = voc.fit(f"m_k{k}")
        if key not in splits:
            continue
        part = splits[splits["method"].isin(local)].dropna(subset=[key])
        for method, group in part.groupby("method"):
            stats_ = group.groupby("dataset")[key].agg(["median", "min", "max"])
            columns[f"{method} k={k}"] = stats_.apply(
                lambda r: f"{r['median']:g} [{r['min']:g}, {r['max']:g}]", axis=1)
    if not columns:
        return None
    table = pd.DataFrame(columns)
    mopt = _paper_mopt()
    for k in ks:
        if k in mopt:
            table[f"paper m_opt k={k}"] = mopt[k].reindex(table.index).map(
                lambda v: "–" if pd.isna(v) else f"{v:g}")
    return table.sort_index()


def chosen_m_per_k(chosen: pd.DataFrame, ks: list[int]) -> dict[int, pd.DataFrame]:
    """The `chosen_m` table cut per k: data set x method (and the paper's m_opt) for each k
    that has a column, a table narrow enough for the page."""
    parts = {}
    for k in ks:
        suffix = f" k={k}"
        columns = [c for c in chosen.columns if c.endswith(suffix)]
        if columns:
            parts[k] = chosen[columns].rename(columns=lambda c: c.removesuffix(suffix))
    return parts


def win_loss_beside_paper(wins: pd.DataFrame, names: dict, splits: pd.DataFrame,
                          reference: str) -> pd.DataFrame:
    """Our z-test win and loss counts of `reference` (RMVEM) against each method beside those
    printed in section 5.3 of Abou-Moustafa 2017, one row per published count, in the columns
    of `papers.side_by_side` (no error is printed: no verdict)."""
    published = papers.published(papers.WIN_LOSS_TABLE)
    labels = {}
    for label, name in names.items():
        labels.setdefault(name, label)
    rows = []
    for _, cell in published.iterrows():
        method = labels.get(cell["method_name"])
        if cell["setting"] != f"reference={names.get(reference)}" or method not in wins.index:
            continue
        ours = float(wins.at[method, {"wins": "win", "losses": "loss"}[cell["metric"]]])
        rows.append({"table": papers.WIN_LOSS_TABLE, "variant": "", "metric": cell["metric"],
                     "data set": cell["dataset"], "method": cell["method"],
                     "setting": cell["setting"], "paper": float(cell["value"]),
                     "paper ±": np.nan, "ours": ours, "ours ±": np.nan,
                     "splits": int((splits["method"] == reference).sum()),
                     "difference": ours - float(cell["value"]),
                     "criterion": f"none (ours of {int(wins.loc[method].sum())} cases, "
                                  f"the paper's of {cell['cases']})",
                     "reproduced": None})
    return pd.DataFrame(rows)


def _wins_figure(table: pd.DataFrame, names: dict):
    """Our win / loss counts of RMVEM beside the published ones (Abou-Moustafa 2017)."""
    published = papers.win_loss_counts("abou-moustafa-2017")
    reference = "rmvem"
    rows = []
    for method, row in table.iterrows():
        rows += [{"method": method, "source": "ours", "outcome": "win", "cases": row["win"]},
                 {"method": method, "source": "ours", "outcome": "loss", "cases": row["loss"]}]
        key = (reference, names.get(method))
        if key in published.index:
            row = published.loc[key]
            rows += [{"method": method, "source": "paper", "outcome": outcome,
                      "cases": row[column]} for outcome, column in (("win", "wins"),
                                                                  ("loss", "losses"))]
    data = pd.DataFrame(rows)
    grid = sns.catplot(data=data, x="method", y="cases", hue="source", col="outcome", kind="bar",
                       height=3.4, aspect=1.5, palette=[palette.BLUE, palette.ORANGE])
    grid.set_xticklabels(rotation=30)
    return grid.figure
