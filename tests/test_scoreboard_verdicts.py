"""The scoreboard's verdict per paper (report/scoreboard.py: `verdict`, `paper_verdicts`) on
hand-made counts and on a fake reports folder, and its table of readings
(report/paper_tables/readings.yaml) against the pages it cites."""

import numpy as np
import pandas as pd
import pytest

from conftest import REPO
from dmlbench.report import scoreboard
from test_docs import anchors


@pytest.mark.parametrize("held, not_held, within, outside, expected", [
    (2, 0, 8, 2, scoreboard.REPRODUCED),        # every claim, 80 % of the cells
    (2, 0, 0, 0, scoreboard.REPRODUCED),        # claims alone
    (0, 0, 3, 1, scoreboard.REPRODUCED),        # cells alone, exactly 3/4
    (2, 0, 7, 3, scoreboard.IN_PART),           # every claim, but 70 % of the cells
    (2, 1, 10, 0, scoreboard.IN_PART),          # a claim not held
    (1, 1, 0, 0, scoreboard.IN_PART),           # half the claims: not "fewer than half"
    (1, 0, 3, 7, scoreboard.IN_PART),           # claims held, cells mostly outside
    (0, 3, 0, 0, scoreboard.NOT_REPRODUCED),    # claims alone, none held
    (1, 6, 0, 0, scoreboard.NOT_REPRODUCED),    # 1 of 7
    (0, 1, 11, 34, scoreboard.NOT_REPRODUCED),  # no claim, a quarter of the cells
    (0, 0, 4, 6, scoreboard.NOT_REPRODUCED),    # cells alone, 40 %
    (0, 1, 6, 4, scoreboard.IN_PART),           # no claim held but most cells within
    (0, 0, 0, 0, scoreboard.NOT_ASSESSED),
])
def test_the_verdict_rule(held, not_held, within, outside, expected):
    assert scoreboard.verdict(held, not_held, within, outside) == expected


def _report(root, name, cells=(), claims=()):
    folder = root / name
    (folder / "tables").mkdir(parents=True)
    (folder / "index.html").write_text("<html></html>")
    if cells:
        pd.DataFrame(cells).to_csv(folder / "tables" / "paper_0_shigeto-2017_table3a.csv")
    if claims:
        pd.DataFrame(claims).to_csv(folder / "tables" / "claims.csv")


def _claim(paper, text, verdict):
    return {"paper": paper, "claim": text, "paper's evidence": "e", "ours": "o",
            "verdict": verdict}


def test_verdicts_of_a_fake_scoreboard(tmp_path):
    """Shigeto: its claims held and 3 of 4 cells within, reproduced; Chang: none of its two
    claims held, not reproduced under the readings listed for it, the first claim not held
    named; Oneata: one of two claims held, in part; a paper with nothing run, not assessed."""
    cell = {"table": "shigeto-2017_table3a", "metric": "accuracy_pct", "setting": "",
            "paper ±": np.nan, "ours ±": 1.0, "method": "original metric", "splits": 4}
    cells = [{**cell, "data set": ds, "paper": 90.0, "ours": 90.0 + d, "difference": d,
              "reproduced": abs(d) < 1} for ds, d in
             (("iris", 0.1), ("wine", 0.2), ("ionosphere", -0.3), ("balance-scale", -5.0))]
    _report(tmp_path, "shigeto-2017", cells, [_claim("shigeto-2017", "S holds", "held"),
                                              _claim("shigeto-2017", "S2", "not testable here")])
    _report(tmp_path, "chang-2012", claims=[
        _claim("chang-2012", "BoostMDM-G is the best or the second best method on most data "
                             "sets, a claim long enough to be shortened on the page", "not held"),
        _claim("chang-2012", "I-MFA beats MFA", "not held")])
    _report(tmp_path, "oneata-2011", claims=[_claim("oneata-2011", "O1", "held"),
                                             _claim("oneata-2011", "O2", "not held")])
    cells_counts = scoreboard.table_counts(scoreboard.compared_cells(tmp_path))
    table = scoreboard.paper_verdicts(cells_counts, scoreboard.claim_rows(tmp_path),
                                      ["shigeto-2017", "chang-2012", "oneata-2011"])
    assert table.at["shigeto-2017", "verdict"] == "reproduced"
    assert table.at["shigeto-2017", "reason"] == "1 of 1 claims held; 3 of 4 cells within"
    n = len(scoreboard.readings_of()["chang-2012"]["readings"])
    assert table.at["chang-2012", "verdict"] == f"not reproduced under {n} readings"
    reason = table.at["chang-2012", "reason"]
    assert reason.startswith("0 of 2 claims held; not held: \u201cBoostMDM-G is the best")
    assert reason.endswith("\u2026\u201d") and "I-MFA" not in reason
    assert table.at["oneata-2011", "verdict"] == "reproduced in part"
    assert table.at["abou-moustafa-2007", "verdict"] == "not assessed"
    assert table.at["abou-moustafa-2007", "reason"] == "nothing compared"
    page = scoreboard.write(tmp_path).read_text()
    verdicts = page[page.index("<h2 id='verdicts'>"):page.index("<h2 id='reports'>")]
    assert "not reproduced under" in verdicts and "reproduced in part" in verdicts


def test_a_paper_not_reproduced_needs_its_readings(monkeypatch):
    monkeypatch.setattr(scoreboard, "readings_of", lambda: {})
    claims = pd.DataFrame([{**_claim("chang-2012", "c", "not held"), "report": "chang-2012"}])
    with pytest.raises(ValueError, match="no readings of chang-2012"):
        scoreboard.paper_verdicts(pd.DataFrame(), claims, ["chang-2012"])


def test_every_paper_has_its_readings_on_a_page_that_documents_them():
    """readings.yaml names every paper of the scoreboard, at least one reading each, and a page
    of docs/papers/ with the section it cites."""
    table = scoreboard.readings_of()
    assert set(table) == set(scoreboard.papers_of())
    for paper, entry in table.items():
        assert entry["readings"], paper
        path, _, anchor = entry["page"].partition("#")
        assert path.startswith("docs/papers/") and (REPO / path).exists(), entry["page"]
        assert anchor in anchors(REPO / path), entry["page"]


def test_a_reading_of_some_cells_is_completed_by_the_published_ones(tmp_path):
    """A reading that reruns one of two compared cells of Oneata's Table B.1: its row counts
    its own cell and the published run's other one; the published row is unchanged."""
    cell = {"table": "oneata-2011_tableB.1", "metric": "accuracy_pct", "setting": "d=2;rule=1-NN",
            "data set": "glass", "method": "NCA SL", "paper": 60.0, "paper ±": 1.0,
            "ours": 60.5, "ours ±": 1.0, "splits": 20, "difference": 0.5, "reproduced": True}
    other = {**cell, "setting": "d=3;rule=1-NN", "ours": 66.0, "difference": 6.0,
             "reproduced": False}
    folder = tmp_path / "oneata-2011"
    (folder / "tables").mkdir(parents=True)
    (folder / "index.html").write_text("<html></html>")
    pd.DataFrame([{**cell, "variant": np.nan}, {**other, "variant": np.nan},
                  {**cell, "variant": "a reading", "ours": 70.0, "difference": 10.0,
                   "reproduced": False}]).to_csv(
        folder / "tables" / "paper_0_oneata-2011_tableB.1.csv")
    counts = scoreboard.table_counts(scoreboard.compared_cells(tmp_path))
    published, reading = (counts.loc["oneata-2011_tableB.1"],
                          counts.loc["oneata-2011_tableB.1 [a reading]"])
    assert published["compared"] == reading["compared"] == 2
    assert published["within"] == 1 and reading["within"] == 0
    assert reading["outside, ours better"] == 2
    for column in ("not run here", "needs a download", "not obtainable"):
        assert reading[column] == published[column]
