"""One reading of the verdicts on a report page (`report.verdicts`): the hierarchical test
decides, in the words better / equivalent / worse / not shown better (undecided) / borderline,
the signed-rank test supports in its own words, no probability is rounded across 0.95; the
summary says one thing; Holm against the control, the rope sensitivity and the k-tuned view
(`report.k_tuned`) against hand computations on small fake runs."""

import numpy as np
import pandas as pd
import pytest

from dmlbench.measure.statistics import wilcoxon_holm_control
from dmlbench.report import hierarchical, k_tuned, verdicts
from dmlbench.report.base import Context


@pytest.mark.parametrize("p, text", [(0.9496, "0.949"), (0.94999999, "0.949"), (0.95, "0.950"),
                                     (0.9504, "0.950"), (0.96151, "0.962"), (0.12345, "0.123"),
                                     (1.0, "1.000"), (0.0, "0.000"), (float("nan"), "–")])
def test_probabilities_are_never_rounded_across_the_threshold(p, text):
    assert verdicts.probability(p) == text


def test_the_verdict_words():
    assert verdicts.hierarchical(0.96, 0.04, 0.0) == "better"
    assert verdicts.hierarchical(0.0, 0.04, 0.96) == "worse"
    assert verdicts.hierarchical(0.01, 0.97, 0.02) == "equivalent"
    assert verdicts.hierarchical(0.949, 0.05, 0.001) == "undecided"
    assert verdicts.sentence("undecided") == "not shown better (undecided)"
    assert [verdicts.sentence(w) for w in ("better", "equivalent", "worse", "borderline")] == [
        "better", "equivalent", "worse", "borderline"]
    # the signed-rank test's own words: none of the hierarchical ones
    words = {verdicts.signed_rank(*p) for p in ((0.96, 0.04, 0), (0, 0.04, 0.96),
                                                (0.01, 0.97, 0.02), (0.5, 0.3, 0.2))}
    assert words == {"ahead", "behind", "within rope", "inconclusive"}
    assert not words & set(verdicts.HIERARCHICAL)
    assert verdicts.rope_text(0.01) == "±1 accuracy point"
    assert verdicts.rope_text(0.005) == "±0.5 accuracy points"


def test_a_verdict_in_words_shows_the_probability_it_turns_on_with_its_error():
    row = {"P(better)": 0.9496, "P(rope)": 0.0004, "P(worse)": 0.05, "s.e. P(better)": 0.0016,
           "s.e. P(rope)": 0.0001, "s.e. P(worse)": 0.0016, "verdict": "undecided"}
    assert hierarchical.verdict_text(row) == "undecided: better 0.949 ± 0.0016"
    row.update({"P(better)": 0.962, "verdict": "better"})
    assert hierarchical.verdict_text(row) == "better: 0.962 ± 0.0016"
    row.update({"P(better)": 0.9501, "verdict": "borderline"})
    assert hierarchical.verdict_text(row) == "borderline: better 0.950 ± 0.0016"


def fold_runs(shifts: dict[str, float], n_sets: int = 8, folds: int = 5, spread=None):
    """(parents, splits) of a k = 3 benchmark: each method's fold accuracies are Euclidean's
    plus its shift (and, for the methods of `spread`, a per-data-set shift of that sd)."""
    rng = np.random.default_rng(0)
    spread = spread or {}
    rows = []
    for d in range(n_sets):
        base = 0.7 + 0.03 * d + rng.normal(0, 0.02, folds)
        for method, shift in shifts.items():
            own = shift + rng.normal(0, spread.get(method, 0.0))
            for i, acc in enumerate(base + own + (0 if method == "euclidean" else
                                                  rng.normal(0, 0.002, folds))):
                rows.append({"dataset": f"d{d}", "method": method, "split": str(i),
                             "run_id": f"{d}{method}{i}", "accuracy_k3": acc,
                             "n_train": 80, "n_test": 20,
                             "start_time": pd.Timestamp(len(rows), unit="s")})
    splits = pd.DataFrame(rows)
    parents = (splits.groupby(["dataset", "method"], as_index=False)["accuracy_k3"].mean()
               .rename(columns={"accuracy_k3": "accuracy_k3_mean"})
               .assign(run_id=lambda f: f["dataset"] + f["method"], experiment_id="1",
                       family="baseline", protocol=None, k="[3]", n_splits=folds,
                       n_test_total=20 * folds, fit_wall_s_mean=0.01))
    return parents, splits


SHIFTS = {"euclidean": 0.0, "lda": 0.05, "nca": 0.0005, "rca": -0.04, "klhp": 0.015}


@pytest.fixture(scope="module")
def fake_report(tmp_path_factory):
    """The statistics sections and the summary of a fake benchmark: lda 5 points better, nca
    equal, rca 4 worse, klhp 1.5 better on average with a spread of 4 points over the sets."""
    from dmlbench.report.sections import hierarchical as section
    from dmlbench.report.sections import statistics, summary

    tmp = tmp_path_factory.mktemp("verdicts")
    parents, splits = fold_runs(SHIFTS, spread={"klhp": 0.04})
    ctx = Context(parents, splits, tmp, 10, [3], config={"report": {"rope": 0.01}})
    sections = {s.id: s.resolve() for s in (section.section(ctx), statistics.statistics(ctx))}
    page = summary._summary_html(ctx, 3, None, {3: hierarchical.results(ctx, 3)})
    return ctx, sections, page, tmp


def test_the_summary_says_one_thing(fake_report):
    """Every method named in "Best at" carries, in bold, the hierarchical verdict the headline
    lists it under; undecided is said "not shown better (undecided)"."""
    ctx, _, page, tmp = fake_report
    table = pd.read_csv(tmp / "tables/hierarchical_k3.csv")
    table = table[table["against"] == "euclidean"].set_index("method")
    assert table.at["klhp", "verdict"] == "undecided" and table.at["lda", "verdict"] == "better"
    best, headline = page.split("Practically better than euclidean?")
    for item in best.split("<li>")[1:]:
        method = item.split("</b>")[0].split("<b>")[-1]
        word = verdicts.sentence(table.at[method, "verdict"])
        assert f"against euclidean: <b>{word}</b>" in item
        group = headline.split(f"<b>{word}</b>: ")[1].split(";")[0].split("</li>")[0]
        assert method in group.split(", ")
    assert "<b>not shown better (undecided)</b>: klhp" in headline
    assert "not better" not in page.replace("not shown better", "")
    assert "How to read the verdicts: the Bayesian hierarchical test decides" in page


def test_holm_against_the_control_is_exported_beside_all_pairs(fake_report):
    from dmlbench.report import tables

    ctx, sections, _, tmp = fake_report
    exported = pd.read_csv(tmp / "tables/wilcoxon_control_k3.csv").set_index("method")
    scores = tables.complete(tables.values(ctx.parents, "accuracy_k3_mean"))
    expected = wilcoxon_holm_control(scores, "euclidean").set_index("method")
    assert sorted(exported.index) == ["klhp", "lda", "nca", "rca"]
    pd.testing.assert_series_equal(exported["p_holm"], expected["p_holm"], check_like=True)
    assert (tmp / "tables/wilcoxon_k3.csv").exists()
    captions = [b.get("caption", "") for b in sections["statistics"].blocks]
    assert any("against euclidean (the control)" in c and "over the 4 comparisons" in c
               for c in captions)


def test_the_rope_sensitivity_reuses_the_main_comparisons(fake_report):
    """At the config's rope the sensitivity rows are the main table's; lda (5 points) is
    better and nca (0.05 points) equivalent at every rope."""
    _, sections, _, tmp = fake_report
    ropes = pd.read_csv(tmp / "tables/hierarchical_rope_k3.csv")
    main = pd.read_csv(tmp / "tables/hierarchical_k3.csv")
    assert sorted(set(ropes["rope"])) == [0.005, 0.01, 0.02]
    at_config = ropes[ropes["rope"] == 0.01].drop(columns="rope").set_index("method")
    main = main[main["against"] == "euclidean"].set_index("method")
    pd.testing.assert_frame_equal(at_config.sort_index(), main.sort_index())
    verdict = ropes.set_index(["method", "rope"])["verdict"]
    assert all(verdict[("lda", r)] == "better" for r in (0.005, 0.01, 0.02))
    assert all(verdict[("nca", r)] == "equivalent" for r in (0.005, 0.01, 0.02))
    assert any("Rope sensitivity, 3-NN" in b.get("caption", "")
               for b in sections["hierarchical"].blocks)


def test_a_comparison_on_the_threshold_is_borderline(monkeypatch):
    """A posterior whose P(better) is exactly 0.95 (draws from a known distribution): the
    report calls it borderline after the most chains, not better nor undecided."""
    from dmlbench.measure import hierarchical as h

    def sample(model, per_chain, warmup, rng):
        out = np.empty((len(model.mean), 1, 3, per_chain))
        wins = np.arange(per_chain) < round(0.95 * per_chain)
        for row in range(len(model.mean)):
            out[row, 0, 0] = np.where(rng.permutation(wins), -10.0, 10.0)
            out[row, 0, 1:] = [[1.0], [5.0]]
        return out

    monkeypatch.setattr(h, "_sample", sample)
    pair = {"datasets": ["d0", "d1"], "a": [np.array([0.5, 0.6])] * 2,
            "b": [np.array([0.6, 0.6])] * 2, "rho": [0.2, 0.2]}
    row = hierarchical.compare({("m", "euclidean"): pair}, 0.01, 1).iloc[0]
    assert row["P(better)"] == pytest.approx(0.95) and row["verdict"] == "borderline"
    assert row["draws"] == h.MAX_CHAINS * h.N_SAMPLES // h.CHAINS


def tuning_entry(scores, chosen):
    return {"inner_scores": scores, "chosen_index": chosen}


def test_the_k_tuned_choice_by_hand():
    """k whose winner has the best inner score; a tie to the smaller k; a k whose winner has
    no score is passed over; no inner scores, no choice."""
    entry = tuning_entry({"1": [0.80, 0.90], "3": [0.95, 0.70], "5": [0.95, None],
                          "7": [None, None]}, {"1": 1, "3": 0, "5": 0, "7": 1})
    assert k_tuned.choice(entry, [1, 3, 5, 7]) == (3, 0.95)
    assert k_tuned.choice(entry, [1, 5, 7]) == (5, 0.95)
    assert k_tuned.choice(entry, [1]) == (1, 0.90)
    same = tuning_entry({"1": [0.9], "3": [0.9]}, {"1": 0, "3": 0})  # KLHP ignores k
    assert k_tuned.choice(same, [1, 3]) == (1, 0.9)
    assert k_tuned.choice(tuning_entry(None, {"1": 0}), [1, 3]) is None
    splits = pd.DataFrame([
        {"run_id": "r1", "dataset": "a", "method": "m", "split": "0", "accuracy_k1": 0.5,
         "accuracy_k3": 0.7, "n_train": 30, "n_test": 10, "start_time": 0},
        {"run_id": "r2", "dataset": "a", "method": "euclidean", "split": "0",
         "accuracy_k1": 0.6, "accuracy_k3": 0.65, "n_train": 30, "n_test": 10,
         "start_time": 1}])
    entries = {"r1": tuning_entry({"1": [0.6], "3": [0.8]}, {"1": 0, "3": 0}),
               "r2": tuning_entry(None, {"1": 0, "3": 0})}
    frame = k_tuned.choices(splits, entries, [1, 3])
    assert frame.to_dict("records") == [{"dataset": "a", "method": "m", "split": 0, "k": 3,
                                         "inner score": 0.8, "accuracy": 0.7,
                                         "test_share": 0.25}]
    assert k_tuned.missing(splits, frame) == ["euclidean"]


class FakeRuns:
    def __init__(self, entries):
        self.entries = entries

    def split_tuning(self, run_ids):
        return {r: self.entries[r] for r in run_ids if r in self.entries}


def tuned_context(tmp, with_reference: bool):
    """Fold runs at k = 1 and 3 whose inner scores pick k = 3 for lda (its test accuracy there
    5 points above Euclidean's), k = 1 for the others; Euclidean's records carry inner scores
    or none (`with_reference`)."""
    parents, splits = fold_runs({"euclidean": 0.0, "lda": 0.05, "nca": 0.0005})
    splits["accuracy_k1"] = splits["accuracy_k3"] - np.where(splits["method"] == "lda", 0.05, 0)
    parents["accuracy_k1_mean"] = parents["accuracy_k3_mean"] - np.where(
        parents["method"] == "lda", 0.05, 0)
    entries = {}
    for _, run in splits.iterrows():
        if run["method"] == "euclidean" and not with_reference:
            entries[run["run_id"]] = tuning_entry(None, {"1": 0, "3": 0})
            continue
        better_k3 = run["method"] == "lda"
        entries[run["run_id"]] = tuning_entry({"1": [0.8], "3": [0.9 if better_k3 else 0.7]},
                                              {"1": 0, "3": 0})
    return Context(parents, splits, tmp, 10, [1, 3], config={"report": {"rope": 0.01}},
                   runs=FakeRuns(entries))


def test_the_k_tuned_view_and_its_verdicts(tmp_path):
    from dmlbench.report.sections import k_tuned as section
    from dmlbench.report.sections import summary

    ctx = tuned_context(tmp_path, with_reference=True)
    sec = section.section(ctx).resolve()
    choices = pd.read_csv(tmp_path / "tables/k_tuned_choices.csv")
    assert set(choices.loc[choices["method"] == "lda", "k"]) == {3}
    assert set(choices.loc[choices["method"] != "lda", "k"]) == {1}
    merged = choices.merge(ctx.splits.assign(split=ctx.splits["split"].astype(int)),
                           on=["dataset", "method", "split"])
    np.testing.assert_allclose(merged["accuracy"], np.where(
        merged["k"] == 3, merged["accuracy_k3"], merged["accuracy_k1"]))
    table = pd.read_csv(tmp_path / "tables/hierarchical_ktuned.csv")
    table = table[table["against"] == "euclidean"].set_index("method")
    assert table.at["lda", "verdict"] == "better" and table.at["nca", "verdict"] == "equivalent"
    overview = pd.read_csv(tmp_path / "tables/k_tuned.csv").set_index("method")
    assert overview.at["lda", "k = 3 chosen (%)"] == 100 and overview.at["nca", "k = 1 chosen (%)"] == 100
    assert (tmp_path / "tables/hierarchical_rope_ktuned.csv").exists()
    assert (tmp_path / "figures" / hierarchical.figure_name("tuned")).stat().st_size > 0
    assert any(b["kind"] == "pair" for b in sec.blocks)
    tests = {1: hierarchical.results(ctx, 1), "tuned": k_tuned.results(ctx)}
    text = "".join(summary._headline_lines(ctx, tests))
    assert "<li>k tuned: <b>better</b>: lda; <b>equivalent</b>: nca" in text


def test_without_the_references_inner_scores_the_view_says_so(tmp_path):
    from dmlbench.report.sections import k_tuned as section
    from dmlbench.report.sections import summary

    ctx = tuned_context(tmp_path, with_reference=False)
    sec = section.section(ctx).resolve()
    notes = " ".join(b["text"] for b in sec.blocks if b["kind"] == "note")
    assert "Not in this view" in notes and "euclidean" in notes and "no verdicts" in notes
    assert k_tuned.results(ctx) is None
    assert not (tmp_path / "tables/hierarchical_ktuned.csv").exists()
    text = "".join(summary._headline_lines(ctx, {1: hierarchical.results(ctx, 1),
                                                 "tuned": k_tuned.results(ctx)}))
    assert "k tuned: no verdicts (euclidean's records carry no inner scores" in text


def test_no_view_without_tuning_entries(tmp_path):
    from dmlbench.report.sections import k_tuned as section

    parents, splits = fold_runs({"euclidean": 0.0, "lda": 0.05})
    ctx = Context(parents, splits, tmp_path, 10, [3], runs=FakeRuns({}))
    assert section.section(ctx) is None and k_tuned.results(ctx) is None
