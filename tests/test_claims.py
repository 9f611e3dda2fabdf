"""The papers' claims and their checks (report/claims.py) on hand-made runs."""

import inspect

import numpy as np
import pandas as pd
import pytest

from dmlbench.methods import REGISTRY
from dmlbench.report import claims, papers


def runs(values: dict[str, dict[str, float]], metric="accuracy_k1", fit=None):
    """Parent runs from {method: {data set: value}} (method label = registered name)."""
    rows = []
    for method, per_set in values.items():
        for ds, v in per_set.items():
            rows.append({"dataset": ds, "method": method, "method_name": method,
                         f"{metric}_mean": v, "error_k1_mean": 1 - v,
                         "fit_wall_s_mean": (fit or {}).get(method, 1.0)})
    return pd.DataFrame(rows)


def test_lower_on_every_dataset_counts_exceptions():
    p = runs({"a": {"x": 0.1, "y": 0.5}, "b": {"x": 0.2, "y": 0.4}}, metric="skewness_n10")
    v = claims.lower_on_every_dataset(p, None, [1], "a", "b", "skewness_n10")
    assert v.verdict == claims.NOT_HELD and "1 of 2" in v.evidence and "not on y" in v.evidence
    v = claims.lower_on_every_dataset(p, None, [1], "a", "b", "skewness_n10", except_at_most=1)
    assert v.verdict == claims.HELD


def test_rank_at_most_uses_the_shared_better_rank_for_ties():
    p = runs({"a": {"x": 0.9, "y": 0.7, "z": 0.5}, "b": {"x": 0.9, "y": 0.8, "z": 0.6},
              "c": {"x": 0.1, "y": 0.9, "z": 0.7}})
    # a: rank 1 (tie) on x, 3 on y, 3 on z -> best or second on 1 of 3
    assert claims.rank_at_most(p, None, [1], "a", 2, 0.3).verdict == claims.HELD
    assert claims.rank_at_most(p, None, [1], "a", 2, 0.5).verdict == claims.NOT_HELD


def test_rank_at_most_counts_ties_broken_against_the_method_and_names_them():
    """a ties b for first on x (rank 1 shared, 2 against) and c for second on y (2 shared, 3
    against): rank <= 2 on 2 of 2 with ties shared, on 1 with ties broken against a."""
    p = runs({"a": {"x": 0.9, "y": 0.8}, "b": {"x": 0.9, "y": 0.9}, "c": {"x": 0.1, "y": 0.8}})
    v = claims.rank_at_most(p, None, [1], "a", 2, 1.0)
    assert v.verdict == claims.HELD
    assert "rank <= 2 on 2 of 2 data sets (3 methods with accuracy_k1)" in v.evidence
    assert "on 1 with ties broken against it (tied on 2: x with b; y with c)" in v.evidence


def test_lowest_average_error_for_every_k():
    p = runs({"a": {"x": 0.9, "y": 0.9}, "b": {"x": 0.85, "y": 0.86}})
    p["accuracy_k3_mean"], p["error_k3_mean"] = [0.7, 0.7, 0.9, 0.9], [0.3, 0.3, 0.1, 0.1]
    v = claims.lowest_average_error(p, None, [1, 3], "a")
    assert v.verdict == claims.NOT_HELD and "k = 3" in v.evidence  # a wins at k = 1 only
    assert claims.lowest_average_error(p, None, [1], "a").verdict == claims.HELD


def test_wins_over_pools_splits_and_counts_z_tests():
    splits = pd.DataFrame({"dataset": ["x"] * 4 + ["y"] * 4,
                           "method": ["a", "b"] * 4, "method_name": ["a", "b"] * 4,
                           "accuracy_k1": [0.99, 0.60, 0.99, 0.60, 0.80, 0.80, 0.80, 0.80],
                           "n_test": [100] * 8})
    parents = splits.drop_duplicates(["dataset", "method"])
    v = claims.wins_over(parents, splits, [1], "a", "b")
    assert v.verdict == claims.HELD and "1 wins / 1 ties / 0 losses of 2 cases" in v.evidence


def test_reaches_reference_sooner_needs_some_variant_on_every_set():
    p = runs({"nca": {"x": 0.90, "y": 0.90}, "fast": {"x": 0.895, "y": 0.85}},
             fit={"nca": 10.0, "fast": 1.0})
    v = claims.reaches_reference_sooner(p, None, [1], ["fast"], "nca", 0.01)
    assert v.verdict == claims.NOT_HELD and "on 1 of the 2 data sets both ran" in v.evidence


def test_reaches_reference_sooner_counts_only_the_data_sets_both_ran():
    p = runs({"nca": {"x": 0.90, "y": 0.90}, "fast": {"x": 0.895}, "other": {"z": 0.8}},
             fit={"nca": 10.0, "fast": 1.0, "other": 1.0})
    v = claims.reaches_reference_sooner(p, None, [1], ["fast", "other"], "nca", 0.01)
    assert v.verdict == claims.HELD
    assert "fast: within 0.01 and faster on 1 of the 1 data sets both ran" in v.evidence
    assert "other: no data set in common with nca" in v.evidence
    assert "nan" not in v.evidence


def test_a_claim_on_missing_methods_is_not_testable():
    p = runs({"a": {"x": 0.5}})
    claim = {"text": "t", "check": {"kind": "wins_over", "method": "a", "reference": "zzz"}}
    assert claims.check(claim, p, p, [1]).verdict == claims.NOT_TESTABLE


def test_every_claim_of_the_papers_is_well_formed():
    for paper, items in papers.all_claims().items():
        for claim in items:
            assert claim["text"] and claim["paper"], paper
            if "check" not in claim:
                assert claim.get("why_not"), claim["text"]
                continue
            spec = dict(claim["check"])
            fn = claims.CHECKS[spec.pop("kind")]
            inspect.signature(fn).bind(None, None, [1], **spec)  # parameters exist
            for key in ("method", "reference"):
                if key in spec:
                    assert spec[key] in REGISTRY, (claim["text"], spec[key])
            for name in spec.get("methods", []):
                assert name in REGISTRY, name
            assert claim["benchmarks"], claim["text"]


def test_an_unknown_check_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown check kind"):
        claims.check({"check": {"kind": "nope"}}, pd.DataFrame(), pd.DataFrame(), [1])



def test_scoreboard_counts_cells_and_lists_claims(tmp_path):
    """Two reports compare cells of Shigeto's Table 3(a); the scoreboard counts each cell once
    (the report with more splits), sorts the outcomes by the metric's direction, and puts the
    cells nobody compared into not run / needs a download / not obtainable."""
    from dmlbench.report import scoreboard

    def report(name, rows, claims_rows=()):
        folder = tmp_path / name
        (folder / "tables").mkdir(parents=True)
        (folder / "index.html").write_text("<html></html>")
        pd.DataFrame(rows).to_csv(folder / "tables" / "paper_0_shigeto-2017_table3a.csv")
        if claims_rows:
            pd.DataFrame(claims_rows).to_csv(folder / "tables" / "claims.csv")

    cell = {"table": "shigeto-2017_table3a", "metric": "accuracy_pct", "setting": "",
            "paper ±": np.nan, "ours ±": 1.0}
    report("a", [{**cell, "data set": "iris", "method": "original metric", "paper": 97.2, "ours": 97.8,
                  "splits": 4, "difference": 0.6, "reproduced": True,
                  "within published s.e.": False},
                 {**cell, "data set": "wine", "method": "original metric", "paper": 98.1, "ours": 96.2,
                  "splits": 4, "difference": -1.9, "reproduced": False,
                  "within published s.e.": False}],
           [{"paper": "shigeto-2017", "claim": "c", "paper's evidence": "e", "ours": "o",
             "verdict": "held"}])
    report("b", [{**cell, "data set": "wine", "method": "original metric", "paper": 98.1, "ours": 99.0,
                  "splits": 2, "difference": 0.9, "reproduced": False}])
    index = scoreboard.write(tmp_path)
    counts = pd.read_csv(tmp_path / "scoreboard.csv", index_col=0).loc["shigeto-2017_table3a"]
    published = papers.published("shigeto-2017_table3a")
    assert counts["cells"] == len(published) and counts["compared"] == 2
    assert (counts["within"], counts["outside, ours worse"], counts["outside, ours better"]) == (1, 1, 0)
    assert counts[scoreboard.OLD_WITHIN] == 0  # the old criterion, counted beside
    # glass is obtainable as a download, the rest of the UCI table is embedded
    assert counts["needs a download"] == (published["dataset"] == "glass").sum()
    outcomes = ["within", "outside, ours better", "outside, ours worse",
                "outside (no direction)", "no verdict"]
    assert counts[outcomes].sum() == counts["compared"]
    assert counts[["compared", "not run here", "needs a download", "not obtainable"]].sum() \
        == counts["cells"]
    page = index.read_text()
    assert "a/index.html" in page and "b/index.html" in page and "held" in page


def test_scoreboard_opens_on_a_verdict_per_paper_and_the_reports(tmp_path):
    """Every paper with transcribed tables or claims has a verdict row (Chang 2012, whose
    results are figures, says so); the verdicts and the list of reports come before the tables;
    a claim's text is folded in <details>."""
    from dmlbench.report import scoreboard

    folder = tmp_path / "shigeto-2017"
    (folder / "tables").mkdir(parents=True)
    (folder / "index.html").write_text("<html></html>")
    claim = "A claim long enough to be folded " + "word " * 30
    pd.DataFrame([{"paper": "shigeto-2017", "claim": claim, "paper's evidence": "Table 3",
                   "ours": "3 of 5", "verdict": "held"}]).to_csv(folder / "tables" / "claims.csv")
    page = scoreboard.write(tmp_path).read_text()
    heads = [page.index(f"<h2 id='{h}'>") for h in ("verdicts", "reports", "tables", "claims")]
    assert heads == sorted(heads)
    verdicts = page[heads[0]:heads[1]]
    for paper in ("Abou-Moustafa 2007", "Abou-Moustafa 2017", "Chang 2012", "Oneata 2011",
                  "Shigeto 2017"):
        assert f"<th>{paper}</th>" in verdicts
    assert "no published results table" in verdicts and "claims: 1 held" in verdicts
    assert 'href="shigeto-2017/index.html"' in page[heads[1]:heads[2]]
    folded = page[heads[3]:]
    assert "<details><summary>A claim long enough" in folded and "\u2026</summary>" in folded
    assert "<b>Paper:</b> Table 3" in folded


def test_scoreboard_counts_each_variant_of_a_table_apart(tmp_path):
    """One report runs Shigeto's Table 3(a) under two readings of an open choice: a row per
    variant, and the totals take, per table, the variant with more cells within."""
    from dmlbench.report import scoreboard

    folder = tmp_path / "r"
    (folder / "tables").mkdir(parents=True)
    (folder / "index.html").write_text("<html></html>")
    cell = {"table": "shigeto-2017_table3a", "metric": "accuracy_pct", "setting": "",
            "paper ±": np.nan, "ours ±": 1.0, "method": "original metric", "splits": 4}
    rows = [{**cell, "variant": "x", "data set": "iris", "paper": 97.2, "ours": 97.8,
             "difference": 0.6, "reproduced": True},
            {**cell, "variant": "y", "data set": "iris", "paper": 97.2, "ours": 90.0,
             "difference": -7.2, "reproduced": False},
            {**cell, "variant": "y", "data set": "wine", "paper": 98.1, "ours": 90.0,
             "difference": -8.1, "reproduced": False},
            # a cell without a verdict turns the column into 1.0 / 0.0 / NaN
            {**cell, "variant": "x", "data set": "wine", "paper": 98.1, "ours": 98.0,
             "difference": -0.1, "reproduced": None}]
    pd.DataFrame(rows).to_csv(folder / "tables" / "paper_0_shigeto-2017_table3a.csv")
    scoreboard.write(tmp_path)
    counts = pd.read_csv(tmp_path / "scoreboard.csv", index_col=0)
    x, y = counts.loc["shigeto-2017_table3a [x]"], counts.loc["shigeto-2017_table3a [y]"]
    assert (x["compared"], x["within"], x["no verdict"]) == (2, 1, 1)
    assert x[scoreboard.OLD_WITHIN] == 1  # no published s.e.: the tolerance's verdict, both ways
    assert (y["compared"], y["within"], y["outside, ours worse"]) == (2, 0, 2)
    total = scoreboard.totals(counts)
    assert total["within"] == 1 and total["compared"] == 2
    assert total["cells"] == counts["cells"].drop(["shigeto-2017_table3a [y]"]).sum()


def test_a_tie_counts_only_when_the_claim_is_not_strict():
    p = runs({"a": {"x": 0.9, "y": 0.8}, "b": {"x": 0.9, "y": 0.7}})
    assert claims.higher_on_every_dataset(p, None, [1], "a", "b", "accuracy_k1").verdict \
        == claims.NOT_HELD
    v = claims.higher_on_every_dataset(p, None, [1], "a", "b", "accuracy_k1", strict=False)
    assert v.verdict == claims.HELD and "at least as high as b on 2 of 2" in v.evidence


class _ClaimsRows:
    """The rows of the scoreboard page's claims table: (claim text, verdict, report name)."""

    def __init__(self, page: str):
        import html.parser

        section = page[page.index("<h2 id='claims'>"):]
        rows, row, cell = [], None, None

        class Parser(html.parser.HTMLParser):
            def handle_starttag(self, tag, attrs):
                nonlocal row, cell
                if tag == "tr":
                    row = []
                elif tag in ("td", "th") and row is not None:
                    cell = []

            def handle_endtag(self, tag):
                nonlocal row, cell
                if tag in ("td", "th") and cell is not None:
                    row.append(cell)
                    cell = None
                elif tag == "tr" and row:
                    rows.append(row)
                    row = None

            def handle_data(self, data):
                if cell is not None:
                    cell.append(data)

        Parser().feed(section)
        # cells: number, paper, claim (summary, full claim, evidence, ours), verdict, report
        self.rows = [(r[2][1], "".join(r[3]), "".join(r[4])) for r in rows[1:]]


def test_scoreboard_claims_rows_carry_their_own_verdicts(tmp_path):
    """Claims of alternating verdicts in two reports: each scoreboard row shows the verdict its
    report's claims.csv gives that claim (a frame indexed 1..n once took a column indexed
    0..n-1, and every row showed the next claim's verdict)."""
    from dmlbench.report import scoreboard

    expected = []
    for name, verdicts in (("shigeto-2017", ["not held", "held", "held", "not held"]),
                           ("oneata-2011", ["held"])):
        folder = tmp_path / name
        (folder / "tables").mkdir(parents=True)
        (folder / "index.html").write_text("<html></html>")
        rows = [{"paper": name, "claim": f"Claim {i} of {name}.", "paper's evidence": "Table",
                 "ours": "ours", "verdict": v} for i, v in enumerate(verdicts)]
        pd.DataFrame(rows).to_csv(folder / "tables" / "claims.csv")
        expected += [(r["claim"], r["verdict"], name) for r in rows]
    page = scoreboard.write(tmp_path).read_text()
    assert sorted(_ClaimsRows(page).rows) == sorted(expected)


def test_published_scoreboard_shows_every_report_claims_verdict():
    """The committed scoreboard (reports/index.html) lists every claim of every published
    report with the verdict of that report's tables/claims.csv."""
    from pathlib import Path

    reports = Path(__file__).resolve().parents[1] / "reports"
    expected = []
    for path in sorted(reports.glob("*/tables/claims.csv")):
        frame = pd.read_csv(path, index_col=0)
        expected += [(c, v, path.parents[1].name) for c, v in zip(frame["claim"],
                                                                 frame["verdict"])]
    assert expected, "no published claims found"
    assert sorted(_ClaimsRows((reports / "index.html").read_text()).rows) == sorted(expected)


def test_every_claims_benchmark_is_a_shipped_config():
    """A claim names the benchmarks that test it: each is the `benchmark` of a config under
    config/, so its rows reach the scoreboard once that config's report is published."""
    from pathlib import Path

    import yaml

    shipped = {yaml.safe_load(path.read_text()).get("benchmark")
               for path in (Path(__file__).parents[1] / "config").rglob("*.yaml")}
    for paper, items in papers.all_claims().items():
        for claim in items:
            for name in claim.get("benchmarks", []):
                assert name in shipped, (paper, claim["text"], name)
