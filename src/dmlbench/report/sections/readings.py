"""The section "Readings": a method read several ways (config entries with other parameters,
data sets with other preprocessing), each counted against a reference method on the same data
sets under four counting rules, beside the paper's counts (`report.readings` of the config;
`report.readings`, the module, defines readings and rules)."""

from __future__ import annotations

import pandas as pd

from .. import papers, readings, settings
from ..base import Context, Section, export_table, html_table, methods_as_rows


def section(ctx: Context) -> Section | None:
    spec = settings.readings(ctx.config)
    if not spec or "split" not in ctx.splits:
        return None
    found, ref = readings.find(ctx.parents, spec["method"], spec["reference"])
    if not found:
        return None
    base = readings.published(found, spec.get("published", spec["method"]))
    names = dict(zip(ctx.parents["dataset"], ctx.parents["dataset_name"]))
    paper = spec.get("paper")
    published = None
    if paper:
        table = papers.win_loss_counts(paper)
        if (spec["method"], spec["reference"]) in table.index:
            published = table.loc[(spec["method"], spec["reference"])]
    sec = Section("readings", f"Readings: {spec['method']} against {ref}",
                  f"Each reading changes one thing from the published one ({base.name(base)} "
                  "with the parameters the paper prints): a parameter of the method, or the "
                  "preprocessing of every data set (the reference then runs on the same "
                  "preprocessed sets). Cases are (data set, k); a win is a case where "
                  f"{spec['method']} is the better, under each counting rule: the pooled "
                  "z-test for two proportions on the misclassified test points summed over "
                  "the splits at alpha = 0.05 and at alpha = 0.0005 (the paper's \"0.05 %\" "
                  "read literally), the paired t-test over the splits' accuracies at 0.05, "
                  "and the mean accuracies compared without a test.")
    rows, per_case, outcome = {}, [], {}
    for reading in found:
        table = readings.cases(ctx.splits, ctx.ks, reading, ref)
        counts = readings.count(table)
        name = reading.name(base)
        row = {"differs from the published reading": reading.describe(ctx.parents, base),
               "data sets": len(reading.datasets), "cases": len(table)}
        row.update({title: "{win} / {tie} / {loss}".format(**counts[rule])
                    for rule, title in readings.RULES.items()})
        row["mean accuracy difference (points)"] = round(100 * table["mean difference"].mean(), 2)
        rows[name] = row
        per_case.append(table.assign(reading=name))
        significant = table["p_z"] < 0.05
        better = table["accuracy"] > table["reference accuracy"]
        marks = pd.Series("T", index=table.index).where(~significant,
                                                        better.map({True: "W", False: "L"}))
        table = table.assign(name=table["dataset"].map(names), mark=marks)
        outcome[name] = table.groupby("name", sort=False)["mark"].agg(" ".join)
    frame = pd.DataFrame(rows).T
    if published is not None:
        cases = int(published["cases"])
        ties = cases - int(published["wins"]) - int(published["losses"])
        paper_row = {c: "–" for c in frame.columns}
        paper_row.update({"differs from the published reading": "as printed (sect. 5.3)",
                          "data sets": cases // len(ctx.ks), "cases": cases,
                          readings.RULES["z05"]: f"{published['wins']} / {ties} / "
                                                 f"{published['losses']}"})
        frame = pd.concat([pd.DataFrame({f"paper ({paper})": paper_row}).T, frame])
    sec.table(html_table(frame), f"{spec['method']} against {ref}: wins / ties / losses per "
              "reading and counting rule", export_table(ctx, frame, "readings"))
    if published is not None:
        near = readings.closest(ctx.parents, ctx.splits, ctx.ks, spec["method"],
                                spec["reference"], int(published["wins"]),
                                int(published["losses"]), int(published["cases"]),
                                spec.get("published"))
        top = near.iloc[0]
        sec.note(f"Closest to the paper's {published['wins']} wins / {published['losses']} "
                 f"losses of {published['cases']} (by |w / c - W / C| + |l / c - L / C|): "
                 f"{top['reading']} ({top['description']}) under "
                 f"{readings.RULES[top['rule']]}, {top['win']} / {top['tie']} / {top['loss']} "
                 f"of {top['cases']}, distance {top['distance']:.2f}; {len(found)} readings, "
                 f"{len(readings.RULES)} rules.")
    missing = spec.get("missing") or {}
    if missing:
        sec.note(f"Cases are counted of {len(base.datasets) * len(ctx.ks)} where the paper "
                 f"counts {published['cases'] if published is not None else 'more'}: not run "
                 + "; ".join(f"{name} ({why})" for name, why in missing.items()) + ".")
    detail = pd.DataFrame(outcome).fillna("–").sort_index()
    detail.index.name = "data set"
    sec.table(html_table(detail, transpose=methods_as_rows(detail)),
              "Per data set and reading: the z-test at 0.05 "
              f"for k = {', '.join(map(str, ctx.ks))} (W: {spec['method']} significantly "
              f"better, L: worse, T: no significant difference)",
              export_table(ctx, detail, "readings_per_dataset"), folded=True)
    cases_frame = pd.concat(per_case, ignore_index=True)
    export_table(ctx, cases_frame, "readings_cases")
    return sec
