"""The sections of the benchmark report, in page order. A section is a function taking the
`report.base.Context` and returning a `report.base.Section`, or None when it has nothing to show
(e.g. the boosting section of a benchmark without boosted methods). To add one, write it in its
own module here and list it in `SECTIONS`; sections import only `report.base` and the helpers
(tables, figures, runs, papers), never each other or this package."""

from __future__ import annotations

from . import (
    bayesian,
    boosting,
    budget_study,
    claims,
    cost,
    hierarchical,
    hubness,
    hubness_reduction,
    hubness_study,
    k_tuned,
    leaderboard,
    learning_curves,
    local_metrics,
    nca_variants,
    papers,
    provenance,
    readings,
    statistics,
    summary,
    tuning,
)

SECTIONS = [
    summary.summary,
    leaderboard.leaderboard,
    leaderboard.accuracy,
    leaderboard.average_error,
    statistics.statistics,
    bayesian.bayesian_section,
    hierarchical.section,
    k_tuned.section,
    learning_curves.section,
    tuning.section,
    budget_study.section,
    hubness.hubness,
    cost.cost,
    cost.cost_accuracy,
    papers.paper_tables,
    claims.claims_section,
    hubness_study.hubness_study,
    hubness_reduction.section,
    local_metrics.mvce_check,
    local_metrics.local_metrics,
    readings.section,
    boosting.boosting_section,
    nca_variants.section,
    provenance.provenance,
]
