"""The answer first: what was run, the best methods with their mean rank and the verdict of the
Bayesian hierarchical test against the reference metric (the signed-rank test's outcome beside
it, in its own words), what they cost, the verdicts per k (and with k tuned), how to read the
verdicts (`report.verdicts`, said once on the page here), and, for a reproduction, how many
published cells and claims held. Every number comes from the sections below (shared through the
context's memo), which give the details."""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd

from ... import vocabulary as voc
from .. import (claims, comparisons, hierarchical, k_tuned, papers, ranking, settings, tables,
               verdicts)
from ..base import FEW_DATASETS, Context, Section, few_datasets_text

#: how many methods the summary names
TOP = 3


def protocol_words(protocol: str | None) -> str:
    """A protocol (the runs' JSON parameter) in a few words, e.g. '70/30 holdout x 4'."""
    try:
        spec = json.loads(protocol)
    except (TypeError, ValueError):
        return "unknown protocol"
    kind = spec.get("kind")
    repeats = int(spec.get("repeats", 1))
    if kind == "holdout":
        train = round(100 * float(spec.get("train_fraction", 0.7)))
        return f"stratified {train}/{100 - train} holdout × {repeats}"
    if kind == "kfold":
        return f"stratified {spec.get('folds')}-fold CV" + (f" × {repeats}" if repeats > 1 else "")
    return {"loo": "leave-one-out", "given": "each data set's own train/test split",
            "given_folds": "each data set's published folds"}.get(kind, str(kind))


def _swatch(colour: str | None) -> str:
    return f"<span class='swatch' style='background:{colour}'></span>" if colour else ""


def summary(ctx: Context) -> Section:
    sec = Section("summary", "At a glance")
    k = ctx.ks[0]
    bayes = comparisons.results(ctx, k)
    ranking.critical_difference(ctx, k)  # submitted now, drawn while the sections go on
    tests = {k: hierarchical.results(ctx, k) for k in ctx.ks}
    tests[k_tuned.LABEL] = k_tuned.results(ctx)
    sec.later(lambda part: part.html(_summary_html(ctx, k, bayes, tests)))
    return sec


def _summary_html(ctx: Context, k: int, bayes, tests: dict) -> str:
    p, s = ctx.parents, ctx.splits
    families = p.drop_duplicates("method")["family"].nunique()
    protocols = "; ".join(sorted({protocol_words(x) for x in p["protocol"].dropna()})) or "–"
    cpu = tables.cpu_seconds(s) if len(s) else 0.0
    lines = [f"<p><b>Run:</b> {p['method'].nunique()} methods ({families} families) on "
             f"{p['dataset'].nunique()} data sets, {html.escape(protocols)}, k = "
             f"{', '.join(map(str, ctx.ks))}: {len(s)} split runs, "
             f"{tables.duration(cpu)} of CPU time (fit, tuning and evaluation, summed over "
             "the splits; <a href='#provenance'>provenance</a>).</p>"]
    ranks = ranking.ranks(ctx)
    order = [m for m in ranking.order(ctx) if m in ranks.index
             and pd.notna(ranks.at[m, ranks.columns[0]])]
    n_sets = ranking.scores(ctx, k).shape[0]
    if order:
        colours = ranking.colours(ctx)
        against, reference = pd.DataFrame(), None
        if bayes is not None:
            reference = comparisons.reference_method(list(ranking.scores(ctx, k).columns))
            against = comparisons.against_reference(bayes.result(), reference)
        decided = pd.DataFrame()
        if tests.get(k) is not None:
            reference = hierarchical.references(ctx, k)[0]
            table = tests[k].result()
            decided = table[table["against"] == reference].set_index("method")
        fit = tables.values(p, voc.mean(voc.wall_seconds("fit"))).median()
        items = []
        for method in order[:TOP]:
            rank = ranks.at[method, ranks.columns[0]]
            text = (f"{_swatch(colours.get(method))}<b>{html.escape(method)}</b>: mean rank "
                    f"{rank:.2f}")
            if method in decided.index:
                text += f"; against {html.escape(reference)}: " + _decided(decided.loc[method])
            if method in against.index:
                row = against.loc[method]
                text += (f"; signed-rank test: {row['outcome']} (P(ahead) "
                         f"{verdicts.probability(row['P(better)'])})")
            if method in fit.index and pd.notna(fit[method]):
                text += f"; fit {fit[method]:.3g} s per split (median over data sets)"
            items.append(f"<li>{text}</li>")
        lines.append(f"<p><b>Best at {k}-NN</b> (mean rank of the test accuracy over the "
                     f"{n_sets} data sets every method ran on; 1 = best of {len(order)}):</p>"
                     f"<ol class='top'>{''.join(items)}</ol>")
        detail = []
        if reference in order:
            detail.append(f"{html.escape(reference)}, the reference, is number "
                          f"{order.index(reference) + 1} (mean rank "
                          f"{ranks.at[reference, ranks.columns[0]]:.2f})")
        friedman = ranking.friedman_p(ctx, k)
        cd = ranking.critical_difference(ctx, k)
        if friedman is not None:
            detail.append(f"Friedman p = {friedman:.2g}"
                          + (" (the methods differ)" if friedman < 0.05 else
                             " (no evidence that the methods differ)")
                          + (f"; Nemenyi critical difference {cd[1]:.1f} ranks" if cd else ""))
        if len(decided):
            detail.append(f"verdicts: Bayesian hierarchical test, rope "
                          f"{settings.rope_words(ctx.config)}, decision at "
                          f"P ≥ {verdicts.DECISION}")
        if len(fit.dropna()):
            slow = fit.dropna().idxmax()
            detail.append(f"slowest to fit: {html.escape(slow)} ({fit[slow]:.3g} s per split)")
        lines.append("<p>" + "; ".join(detail) + ". Details: " + _details_links(ctx, tests)
                     + ".</p>")
    lines += _headline_lines(ctx, tests)
    named = hierarchical.references(ctx, k)
    if named is not None and any(future is not None for future in tests.values()):
        lines.append("<p class='how-to-read'>" + html.escape(
            verdicts.how_to_read(settings.rope(ctx.config), named[0])) + "</p>")
    if order and n_sets < FEW_DATASETS:
        tests_here = ("every test over data sets on this page (Friedman, Nemenyi, Wilcoxon, "
                      "the Bayesian signed-rank and hierarchical tests)")
        lines.append(f"<p class='warning'>{html.escape(few_datasets_text(n_sets, tests_here))}"
                     "</p>")
    lines += _papers_lines(ctx)
    return "<div class='summary'>" + "".join(lines) + "</div>"


def _details_links(ctx: Context, tests: dict) -> str:
    """Links to the sections that give the details, only to those the page has: with one data
    set there are no tests over data sets, so no hierarchical or signed-rank section."""
    links = [("leaderboard", "leaderboard")]
    if any(future is not None for future in tests.values()):
        links.append(("hierarchical", "hierarchical test"))
    if any(comparisons.results(ctx, k) is not None for k in ctx.ks):
        links.append(("bayesian", "signed-rank test"))
    links.append(("cost", "time and memory"))
    return ", ".join(f"<a href='#{anchor}'>{words}</a>" for anchor, words in links)


def _decided(row) -> str:
    """A method's hierarchical verdict in the summary: the verdict in its sentence form, in
    bold, with the three probabilities, the one it turns on with its Monte-Carlo standard
    error."""
    j = int(np.argmax([row[column] for column, _ in hierarchical.OUTCOMES]))
    shown = [verdicts.with_error(row[column], row[error]) if i == j
             else verdicts.probability(row[column])
             for i, ((column, _), error) in enumerate(zip(hierarchical.OUTCOMES,
                                                          hierarchical.ERRORS))]
    return (f"<b>{html.escape(verdicts.sentence(row['verdict']))}</b> (P(better) {shown[0]}, "
            f"P(equivalent) {shown[1]}, P(worse) {shown[2]})")


def _headline_lines(ctx: Context, tests: dict) -> list[str]:
    """Per k (and with k tuned), which methods the hierarchical test finds practically better
    than the reference, equivalent, worse (posterior >= `verdicts.DECISION`), which it leaves
    not shown better (undecided), and which are borderline."""
    items, reference = [], None
    for label, future in tests.items():
        if future is None:
            tuned = None if label in ctx.ks else k_tuned.view(ctx)
            if tuned is not None and tuned["reference"] is None and tuned["wanted_reference"]:
                items.append(f"<li>{hierarchical.view_name(label)}: no verdicts "
                             f"({html.escape(tuned['wanted_reference'])}'s records carry no "
                             "inner scores to choose its k)</li>")
            continue
        reference = (hierarchical.references(ctx, label)[0] if label in ctx.ks
                     else k_tuned.view(ctx)["reference"])
        groups = hierarchical.headline(future.result(), reference)
        parts = [f"<b>{html.escape(verdicts.sentence(word))}</b>: "
                 + (", ".join(html.escape(m) for m in groups[word]) or "none")
                 for word in verdicts.HIERARCHICAL
                 if groups[word] or word != verdicts.BORDERLINE]
        items.append(f"<li>{hierarchical.view_name(label)}: " + "; ".join(parts) + "</li>")
    if reference is None:
        return []
    return [f"<p><b>Practically better than {html.escape(reference)}?</b> Bayesian hierarchical "
            f"test on the fold accuracies, rope {settings.rope_words(ctx.config)}, "
            f"verdict at P ≥ {verdicts.DECISION} (<a href='#hierarchical'>details</a>"
            + (", <a href='#k-tuned'>k tuned</a>" if tests.get(k_tuned.LABEL) is not None
               else "") + "):</p>"
            f"<ul class='headline'>{''.join(items)}</ul>"]


def _papers_lines(ctx: Context) -> list[str]:
    """Published cells within the error and claims held, for a reproduction."""
    lines = []
    compared = papers.compared(ctx)
    if compared:
        total = {"cells": 0, "ran": 0, "judged": 0, "within": 0}
        for _, _, frame in compared:
            for key, value in papers.counts(frame).items():
                total[key] += value
        lines.append(f"<p><b>Beside the papers:</b> {total['ran']} of {total['cells']} "
                     f"published cells have a run here; {total['within']} of the "
                     f"{total['judged']} with an error or tolerance lie within it "
                     "(<a href='#papers'>tables</a>).</p>")
    table = claims.claim_table(ctx)
    if not table.empty:
        verdicts = table["verdict"].value_counts()
        lines.append(f"<p><b>Claims:</b> {verdicts.get(claims.HELD, 0)} of {len(table)} held, "
                     f"{verdicts.get(claims.NOT_HELD, 0)} not held, "
                     f"{verdicts.get(claims.NOT_TESTABLE, 0)} not testable here "
                     "(<a href='#claims'>claims</a>).</p>")
    return lines
