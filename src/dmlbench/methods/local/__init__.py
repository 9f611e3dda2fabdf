"""Local ellipsoid metrics: one generalised quadratic distance (GQD) per query, learnt from the
query's m nearest training points (Abou-Moustafa 2017: RMVEM, RMLE; Abou-Moustafa 2007: MiniVenn).

One room for the local-metric search: `metrics` (the estimators: neighbourhoods, MVCE weights,
the GQD, model selection), `search` (the nearest training points under one metric per query,
with the tie rule). Below it: the MVCE solvers (`dmlbench.solvers.mvce`), the exact Euclidean
search of the neighbourhoods (`dmlbench.measure.neighbours`) and the k-NN rule of the selection
(`dmlbench.measure.knn_rule`). The evaluation calls the estimators' hooks from above; nothing
here calls back up.

For a query x_q with neighbours x_1..x_m (z_j = x_j - x_q), A_q = sum_j w_j z_j z_j^T + eps I with
MVCE weights (`dmlbench.solvers.mvce.solve`: the interior-point Newton method when m > d,
Titterington's algorithm when m <= d; `solver` chooses) or uniform weights (RMLE); then every
training point y is ranked by d_q(y)^2 = (y - x_q)^T M_q (y - x_q), with M_q a spectral function
of A_q:

    literal  M = A          (Abou-Moustafa 2017, sect. 3: GQD sqrt((x-y)^T A (x-y)) as printed)
    inverse  M = A^{-1}     (the Mahalanobis reading of A as a covariance)
    MiniVenn M = V L~ V^T   (Abou-Moustafa 2007, Alg. 1: rho on the leading directions whose
                             normalised eigenvalue exceeds tau, 1/lambda on the others)

A_q has r = min(m, d) eigenpairs in the span of the neighbours and eigenvalue eps on the rest;
the search (`search`) never forms an n x n matrix, and for small d
computes all n distances of a block of queries with one matrix product. When m >= d and the GQD
keeps every direction (RMVEM, RMLE without `rank`), M_q = A_q or A_q^{-1} reaches the search
through its Cholesky factor (`gqd_factor`) instead of an eigendecomposition, about a tenth of
the flops; MiniVenn and rank truncation need the eigenpairs.

Tie rule: squared distances within a relative band of a group's smallest are ties, ordered by
Euclidean distance, then training index (`search`). The band is the
one the MVCE duality gap certifies, at least 1e-4: with the default tol = 1e-9 every squared
distance is within a factor 1 +- 4.5e-5 of its value at the optimum, so lists do not depend on
the solver's path. This matters for the inverse form: at the optimum every support point is at
the same A^{-1} distance (KKT), so with m <= d the m neighbours tie exactly and solver noise
used to pick the k nearest among them (wine, m = 8: 74 % of the test lists changed between
tol 1e-9 and 1e-11). RMLE (no solver) uses the band 1e-4.

Model selection (Abou-Moustafa 2017 sect. 5.2; 2007 sect. 3.2): for each k of `k_select`, the
neighbourhood size m (and rank, rho, tau) minimising the leave-one-out k-NN error on the training
part (each training point queried against the others, its neighbourhood excluding itself).
Ties go to the smaller m, then to the earlier candidate. The neighbour list used by the k-NN rule
therefore depends on k: `kneighbors_per_k` gives it to the evaluation; `kneighbors` and
`train_kneighbors` use the choice for the smallest k of `k_select`.

Readings of Abou-Moustafa 2017 (parameters; the published reading is every default):
- `owner`: whose matrix measures the distance of query q to training point y. 'query' (Alg. 1:
  d_q(y)^2 above); 'training': (q - y)^T M_y (q - y), M_y from y's m nearest other training
  points; 'symmetric': the mean of the two one-sided squared distances, (q - y)^T ((M_q + M_y)
  / 2) (q - y). The training points' metrics are solved once per m (`search.OwnedMetrics`; the
  Gram form with the roles of q and y exchanged, `search.search_owned`), so a leave-one-out
  query of the selection meets training points' metrics computed with it among their
  neighbours (solving them again without it would cost n solves per query).
- `selection`: 'loo' (sect. 5.2) or 'resubstitution': each training point classified among all
  training points, itself included (its own neighbourhood holds it at weight 0, and 1-NN finds
  it: the 1-NN resubstitution error is 0 up to duplicates, so k = 1 takes the smallest m).
- `update` (RMVEM, MiniVenn): Titterington's update as printed in Alg. 2 step 8, w_j delta_j /
  d, stopped on ||w(t+1) - w(t)||_2 <= `tol` (the paper's tau), with `solver='titterington'`;
  its weights leave the simplex (sum below 1 when m < d), so its gap certifies nothing and the
  tie band is 1e-4.
- `m_range` (lo, hi): the default grid floor(lo d) + 1 .. floor(hi d) ((1, 3): d+1..3d).
- feature scaling is the config's preprocessing (`preprocess: [zscore]` or `[minmax]` on a
  data set), not a parameter.

Deviations and choices (also in the README):
- The MVCE is solved to a duality gap of tol = 1e-9 (certified: log det within 1e-9 of the
  optimum) by the solver of `solver` (default "auto", see `dmlbench.solvers.mvce.solve`); the
  paper stops Titterington's algorithm on ||w(t) - w(t+1)|| <= tau with tau in {1e-2, 1e-3,
  1e-4} (sect. 5.2), a rule that certifies nothing. A looser `tol` widens the tie band
  (2 sqrt(2 tol) to first order).
- MiniVenn's rho grid (0, 0.25, ..., 1) and tau = 0.05 are ours: the 2007 paper selects rho by
  grid search and fixes tau per data set without printing either.
- Default m grid: the integers d+1..3d of Abou-Moustafa 2007 (sect. 4), capped at n - 1 and
  thinned to at most `grid_size` evenly spaced values to bound the cost; `m_grid` overrides it.
- `eps_scale="relative"` (an option, not in the papers) uses eps times the neighbourhood's mean
  eigenvalue sum_j |z_j|^2 / (m d); a neighbourhood with zero spread falls back to the absolute
  eps (counted in `fit_info()['relative_eps_fallbacks']`).
- A neighbour equal to the query has z_j = 0 and gets weight 0; a neighbourhood of points all
  equal to the query gives A = eps I (the metric is scaled Euclidean there). A query equal to a
  training point has that point as its first neighbour, at distance 0.
- `max_selection_queries` (default all, as the papers) can subsample the training points used
  as leave-one-out queries during selection. The selection solves each m of the grid for every
  training point (one neighbour list for the largest m serves the grid, and one search per m
  serves every k). The neighbourhoods of a point are nested, so the solution for one m tells
  the Newton method which points can carry weight at the next (`mvce.nested_support`): it
  solves on those first and adds any point the certificate needs, to the same duality gap
  (`benchmarks/mvce_speed.py`, section 4: 1.1x-1.6x less solver time over the grid on wine,
  housevotes, wdbc, ionosphere and segment; almost none where nearly every neighbour is a
  support point, as on satimage). `train_kneighbors` (the training set's leave-one-out lists,
  for its hubness) searches the same neighbourhoods at the chosen m, so it reuses the
  selection's MVCE weights instead of solving them again (when every training point was a
  selection query).
"""

from .metrics import (
    FORMS,
    LocalMetric,
    MiniVenn,
    RMLE,
    RMVEM,
    default_m_grid,
    gqd_factor,
    gqd_gains,
    minivenn_gains,
)

__all__ = ["FORMS", "LocalMetric", "MiniVenn", "RMLE", "RMVEM", "default_m_grid", "gqd_factor",
           "gqd_gains", "minivenn_gains"]
