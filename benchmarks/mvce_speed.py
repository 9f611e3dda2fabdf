"""Speed of the MVCE solvers and of RMVEM prediction, measured against references in one run.

1. Per problem (random neighbourhoods, eps = 1e-4, one BLAS thread, CPU time), m in d+1..3d
   (where the optimum is not the uniform start) and two m < d shapes: the CVXPY reference
   (`dmlbench.solvers.mvce.cvxpy_reference`, Clarabel, preconditioned) and the plain CVXPY
   formulation the issue measured, against the default `solve` (auto: the interior-point Newton
   method when m > d), one problem at a time and batched, to gap 1e-7 (log det within 1e-7 of
   the optimum); Titterington (Alg. 2, normalised) to the same gap, one at a time and batched;
   a Frank-Wolfe method with away steps (Wolfe-Atwood / Todd-Yildirim, Kumar-Yildirim start),
   the other candidate, written here. Ratios: CVXPY / solve (goal >= 300), Titterington / solve
   (goal >= 30), batched per-problem throughput / one at a time (goal >= 1).
2. RMVEM prediction on USPS-sized synthetic data (n = 7291, d = 256, m = 50): cost per query,
   all queries batched against one query at a time, and the peak memory added by the search
   for two query counts (bounded by the chunk, not by the number of queries).

    python benchmarks/mvce_speed.py            # the full run (d up to 60: CVXPY needs minutes)
    python benchmarks/mvce_speed.py --quick    # d up to 20, fewer problems

1b. The same on real neighbourhoods (raw features, m in RMVEM's grid d+1..3d): segment, wdbc,
   and in the full run iris, wine, ionosphere and satimage.
3. The Newton method's implementations on the same problems (compiled, one problem at a
   time, against numpy's two linear-algebra paths: batched LU, two solves per step, and one
   Cholesky factorisation per problem and step) and the Newton steps of its step fraction
   against 0.99 on the embedded sets' neighbourhoods (m = d+1, 2d, 3d).
4. Support hints over RMVEM's m grid (its selection: every training point of the first fold of
   abou-moustafa-2017's protocol a leave-one-out query, nested neighbourhoods for m in the
   default grid): the solver's CPU time with the hints of `mvce.nested_support` against
   without, the Newton steps, the hint's size against m, and the largest log-det difference.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
from threadpoolctl import threadpool_limits

from dmlbench.measure.evaluation import PeakMemory
from dmlbench.methods import make
from dmlbench.solvers import mvce

TOL = 1e-7


def cpu(fn):
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def problems(b: int, m: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, m, d])
    return rng.normal(size=(b, m, d)) * rng.uniform(0.5, 2.0, size=d)


def frank_wolfe_away(Z: np.ndarray, eps: float, tol: float, max_iter: int, seed: int = 0):
    """Wolfe-Atwood / Todd-Yildirim for the fixed-centre regularised MVCE, one problem:
    Kumar-Yildirim start (uniform weights on r points picked along successive orthogonal
    directions), then at each iteration the better of a toward step (the point of largest
    delta) and an away step (the support point of smallest delta), with exact line search.
    With eps > 0 a step changes A by lambda (z z^T + eps I - A), not a rank-one update, so
    each costs O(r^3 + m r^2). Returns (log det, gap, iterations)."""
    C, _ = mvce.span_coordinates(Z[None])
    C = C[0]
    m, r = C.shape
    rng = np.random.default_rng(seed)
    picked, basis = [], np.zeros((r, 0))
    for _ in range(r):
        u = rng.normal(size=r)
        u -= basis @ (basis.T @ u)
        j = int(np.argmax(np.abs(C @ u)))
        if j in picked:
            break
        picked.append(j)
        v = C[j] - basis @ (basis.T @ C[j])
        basis = np.column_stack([basis, v / np.linalg.norm(v)])
    w = np.zeros(m)
    w[picked] = 1.0 / len(picked)
    for it in range(max_iter + 1):
        A = C.T @ (C * w[:, None]) + eps * np.eye(r)
        L = np.linalg.cholesky(A)
        S = np.linalg.solve(L, C.T)
        delta = np.einsum("rm,rm->m", S, S)
        mean = w @ delta
        gap = delta.max() - mean
        if gap <= tol or it == max_iter:
            return 2 * np.log(np.diag(L)).sum(), gap, it
        j = int(np.argmax(delta))
        support = np.flatnonzero(w > 0)
        k = int(support[np.argmin(delta[support])])
        toward = delta[j] - mean >= mean - delta[k]
        i, low, high = (j, 0.0, 1.0) if toward else (k, -w[k] / (1.0 - w[k]), 0.0)
        # phi(lambda) = log det(A + lambda (c_i c_i^T + eps I - A)); its derivative from the
        # eigenvalues mu of L^{-1} (c_i c_i^T + eps I) L^{-T}, by bisection
        Li = np.linalg.solve(L, np.eye(r))
        mu = np.linalg.eigvalsh(Li @ (np.outer(C[i], C[i]) + eps * np.eye(r)) @ Li.T) - 1.0
        for _ in range(60):
            mid = 0.5 * (low + high)
            if np.sum(mu / (1.0 + mid * mu)) > 0:
                low = mid
            else:
                high = mid
        lam = 0.5 * (low + high)
        w *= 1.0 - lam
        w[i] += lam
        w[w < 1e-15] = 0.0
        w /= w.sum()


def cvxpy_plain(Z: np.ndarray, eps: float = 1e-4) -> float:
    """The CVXPY formulation the issue measured (Clarabel, log det of C^T diag(w) C + eps I in
    the span, not preconditioned); the time only (nan when Clarabel fails)."""
    import cvxpy as cp

    C, _ = mvce.span_coordinates(Z[None])
    w = cp.Variable(Z.shape[0], nonneg=True)
    A = C[0].T @ cp.diag(w) @ C[0] + eps * np.eye(C.shape[2])
    try:
        cp.Problem(cp.Maximize(cp.log_det((A + A.T) / 2)), [cp.sum(w) == 1]).solve(
            solver="CLARABEL")
    except cp.error.SolverError:
        return np.nan
    return 0.0


def solver_comparison(d_values, per_shape: int, batch: int, fw_cap: int) -> None:
    print(f"1. MVCE solvers per problem (CPU ms, eps = 1e-4, to gap {TOL:g}; solve = "
          "mvce.solve(solver='auto'); '1' one problem at a time, 'b' batched)")
    print(f"{'m':>4} {'d':>3} {'CVXPY0':>8} {'CVXPY':>8} {'solve1':>7} {'solveb':>7} "
          f"{'Titt1':>8} {'Tittb':>8} {'Tit':>5} {'FWaway':>7} {'FWit':>5} {'C0/b':>6} {'C/b':>6} "
          f"{'C/1':>5} {'T1/1':>5} {'Tb/b':>5} {'1/b':>5} {'steps':>5} {'rel dL':>7}")
    shapes = [(m, d) for d in d_values for m in (d + 1, 2 * d, 3 * d)]
    shapes += [(20, 60), (50, 256)]
    rows = []
    for m, d in shapes:
        Z = problems(per_shape, m, d, seed=0)
        big = problems(int(np.clip(batch * 20000 // (m * m * d), 16, batch)), m, d, seed=1)
        plain, t_plain = cpu(lambda: [cvxpy_plain(z) for z in Z])
        ref, t_ref = cpu(lambda: [mvce.cvxpy_reference(z) for z in Z])
        one, t_one = cpu(lambda: [mvce.solve(z, tol=TOL) for z in Z])
        _, t_batch = cpu(lambda: mvce.solve(big, tol=TOL))
        nb = big.shape[0]
        tits, t_tit = cpu(lambda: [mvce.solve(z, tol=TOL, solver="titterington",
                                              max_iter=10 ** 6) for z in Z])
        _, t_tit_b = cpu(lambda: mvce.solve(big, tol=TOL, solver="titterington", max_iter=10 ** 6))
        fw, t_fw = cpu(lambda: [frank_wolfe_away(z, 1e-4, TOL, fw_cap) for z in Z])
        L1, LC = np.array([o.logdet for o in one]), np.array([o.logdet for o in ref])
        row = {"m": m, "d": d, "plain": t_plain / per_shape, "cvxpy": t_ref / per_shape,
               "one": t_one / per_shape, "batched": t_batch / nb,
               "tit": t_tit / per_shape, "tit_b": t_tit_b / nb, "fw": t_fw / per_shape,
               "tit_iter": np.mean([t.n_iter for t in tits]),
               "fw_iter": np.mean([f[2] for f in fw]), "fw_done": all(f[1] <= TOL for f in fw),
               "plain_failed": int(np.isnan(plain).sum()),
               "steps": np.mean([o.n_iter for o in one]),
               "rel": np.max(np.abs(L1 - LC) / np.abs(LC))}
        rows.append(row)
        fw_it = f"{row['fw_iter']:.0f}" + ("" if row["fw_done"] else "+")
        failed = f"({row['plain_failed']} failed)" if row["plain_failed"] else ""
        print(f"{m:>4} {d:>3} {1e3 * row['plain']:>8.1f} {1e3 * row['cvxpy']:>8.1f} "
              f"{1e3 * row['one']:>7.3f} {1e3 * row['batched']:>7.3f} {1e3 * row['tit']:>8.2f} "
              f"{1e3 * row['tit_b']:>8.2f} {row['tit_iter']:>5.1f} {1e3 * row['fw']:>7.1f} "
              f"{fw_it:>5} "
              f"{row['plain'] / row['batched']:>6.0f} {row['cvxpy'] / row['batched']:>6.0f} "
              f"{row['cvxpy'] / row['one']:>5.0f} {row['tit'] / row['one']:>5.0f} "
              f"{row['tit_b'] / row['batched']:>5.0f} {row['one'] / row['batched']:>5.1f} "
              f"{row['steps']:>5.1f} {row['rel']:>7.1e} {failed}", flush=True)
    hard = [r for r in rows if r["m"] > r["d"]]

    def span(key_num, key_den):
        values = [r[key_num] / r[key_den] for r in hard]
        return f"{min(values):.0f}-{max(values):.0f}x"

    print(f"m in d+1..3d, d in {list(d_values)}: CVXPY / solve batched {span('cvxpy', 'batched')}"
          f" (the issue's plain CVXPY formulation: {span('plain', 'batched')}), one at a time "
          f"{span('cvxpy', 'one')} (goal 300x); Titterington / solve {span('tit', 'one')} one at "
          f"a time, {span('tit_b', 'batched')} batched (goal 30x); batched / one at a time "
          f"throughput {min(r['one'] / r['batched'] for r in hard):.1f}-"
          f"{max(r['one'] / r['batched'] for r in hard):.1f}x (goal >= 1); largest relative "
          f"log-det difference to CVXPY {max(r['rel'] for r in rows):.1e}. CVXPY0: the plain "
          f"formulation, CVXPY: the preconditioned reference; Tit: Titterington's mean "
          f"iterations; FW-away: '+' = stopped at {fw_cap} iterations above the gap. A solver "
          f"that certifies its gap evaluates delta at least once, which costs about one "
          f"Titterington iteration (a Cholesky factorisation of A and a triangular solve with "
          f"the m points), so it can be at most about Tit + 1 times faster than Titterington: "
          f"at m = d + 1 Tit is "
          + ", ".join(f"{r['tit_iter']:.1f} (d = {r['d']})" for r in hard if r['m'] == r['d'] + 1)
          + ".")


def real_comparison(cases, count: int, cache: str) -> None:
    """Real query neighbourhoods (raw features, as in the abou-moustafa-2017 config) at m of
    RMVEM's grid: CVXPY (preconditioned), solve and Titterington per problem."""
    from dmlbench import data
    from dmlbench.studies.mvce_validation import neighbourhoods

    print(f"\n1b. Real neighbourhoods ({count} per case, CPU ms per problem, to gap {TOL:g})")
    print(f"{'data set':>10} {'m':>4} {'d':>3} {'CVXPY':>8} {'solve1':>7} {'solveb':>7} "
          f"{'Titt1':>8} {'Tittb':>8} {'C/1':>6} {'C/b':>6} {'T1/1':>5} {'Tb/b':>5} {'rel dL':>7}")
    for name, m in cases:
        X = data.ensure(name, cache).X.astype(float)
        Z = neighbourhoods(X, m, count, seed=0)
        ref, t_ref = cpu(lambda: [mvce.cvxpy_reference(z) for z in Z])
        one, t_one = cpu(lambda: [mvce.solve(z, tol=TOL) for z in Z])
        _, t_b = cpu(lambda: mvce.solve(Z, tol=TOL))
        _, t_t = cpu(lambda: [mvce.solve(z, tol=TOL, solver="titterington", max_iter=10 ** 6)
                              for z in Z])
        _, t_tb = cpu(lambda: mvce.solve(Z, tol=TOL, solver="titterington", max_iter=10 ** 6))
        LC = np.array([r.logdet for r in ref])
        rel = np.max(np.abs(np.array([o.logdet for o in one]) - LC) / np.abs(LC))
        d = X.shape[1]
        print(f"{name:>10} {m:>4} {d:>3} {1e3 * t_ref / count:>8.1f} {1e3 * t_one / count:>7.3f} "
              f"{1e3 * t_b / count:>7.3f} {1e3 * t_t / count:>8.2f} {1e3 * t_tb / count:>8.2f} "
              f"{t_ref / t_one:>6.0f} {t_ref / t_b:>6.0f} {t_t / t_one:>5.0f} {t_tb / t_b:>5.0f} "
              f"{rel:>7.1e}", flush=True)


def usps_like(n: int, d: int, classes: int = 10, seed: int = 1):
    """Class means plus noise in a 30-dimensional subspace per class, plus isotropic noise."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    means = rng.normal(size=(classes, d))
    bases = rng.normal(size=(classes, 30, d)) / np.sqrt(d)
    X = means[y] + np.einsum("nk,nkd->nd", rng.normal(size=(n, 30)) * 3, bases[y])
    return X + 0.3 * rng.normal(size=(n, d)), y


def rmvem_prediction(n: int, d: int, m: int, queries: list[int], single: int) -> None:
    print(f"\n2. RMVEM prediction, synthetic data n = {n}, d = {d}, m = {m} (wall time)")
    X, y = usps_like(n, d)
    Q = usps_like(max(queries), d, seed=2)[0]
    start = time.perf_counter()
    est = make("rmvem", {"m": m}).fit(X, y)
    print(f"fit (training neighbourhood lists only, m fixed): {time.perf_counter() - start:.1f} s")
    for q in queries:
        memory: dict = {}
        with PeakMemory(memory):
            start = time.perf_counter()
            est.kneighbors(Q[:q], 10)
            t_batch = time.perf_counter() - start
        print(f"batched, {q:>4} queries: {1000 * t_batch / q:7.2f} ms per query, peak memory "
              f"added {memory['peak_rss_delta_mb']:.0f} MiB")
    start = time.perf_counter()
    ind_1 = np.vstack([est.kneighbors(Q[i:i + 1], 10)[1] for i in range(single)])
    per_one = (time.perf_counter() - start) / single
    print(f"one query at a time ({single} queries): {1000 * per_one:7.2f} ms per query")
    print(f"ratio one-at-a-time / batched: {per_one / (t_batch / queries[-1]):.1f}")
    ind_b = est.kneighbors(Q[:single], 10)[1]
    print(f"batched and one-at-a-time neighbour lists equal: {np.array_equal(ind_b, ind_1)}")


def newton_paths(shapes, batch: int, cases, count: int, cache: str) -> None:
    """The Newton method's implementations on the same problems: compiled one problem at a
    time (`mvce_compiled`, which `newton` runs up to m = COMPILED_UP_TO_M) against numpy's,
    whose two linear-algebra paths are batched LU (two solves per step) and per-problem LAPACK
    (one Cholesky factorisation per step), chosen from PER_PROBLEM_FROM_M /
    KERNEL_PER_PROBLEM_FROM_MR; and the step counts of the step fraction STEP against 0.99 on
    real neighbourhoods (numpy implementation: the compiled one fixes STEP when it compiles)."""
    from dmlbench import data
    from dmlbench.solvers import mvce_newton
    from dmlbench.studies.mvce_validation import neighbourhoods

    print("\n3. Newton implementations (CPU us per problem, batched, to gap 1e-9, best of 3)")
    print(f"{'m':>4} {'d':>3} {'compiled':>9} {'batched LU':>11} {'per problem':>12} "
          f"{'numpy default':>14} {'numpy/compiled':>15}")
    saved = (mvce.COMPILED_UP_TO_M, mvce_newton.PER_PROBLEM_FROM_M,
             mvce_newton.KERNEL_PER_PROBLEM_FROM_MR)

    def timed(Z, settings):
        (mvce.COMPILED_UP_TO_M, mvce_newton.PER_PROBLEM_FROM_M,
         mvce_newton.KERNEL_PER_PROBLEM_FROM_MR) = settings
        best = min(cpu(lambda: mvce.newton(Z, tol=1e-9))[1] for _ in range(3))
        return 1e6 * best / Z.shape[0]
    try:
        for m, d in shapes:
            Z = problems(batch, m, d, seed=3)
            compiled, lu, pp, numpy_default = (timed(Z, t) for t in (
                (10 ** 9,) + saved[1:], (0, 10 ** 9, 10 ** 9), (0, 1, 1), (0,) + saved[1:]))
            print(f"{m:>4} {d:>3} {compiled:>9.0f} {lu:>11.0f} {pp:>12.0f} {numpy_default:>14.0f} "
                  f"{numpy_default / compiled:>15.2f}", flush=True)
        print(f"(newton runs the compiled implementation up to m = {saved[0]})")
        mvce.COMPILED_UP_TO_M = 0
        print(f"Newton steps to gap 1e-9, mean over {count} neighbourhoods: step fraction 0.99 / "
              f"{mvce_newton.STEP} (the default)")
        step = mvce_newton.STEP
        try:
            for name in cases:
                X = data.ensure(name, cache).X.astype(float)
                d = X.shape[1]
                row = []
                for m in sorted({d + 1, 2 * d, 3 * d}):
                    Z = neighbourhoods(X, m, count, seed=1)
                    counts = []
                    for fraction in (0.99, step):
                        mvce_newton.STEP = fraction
                        counts.append(mvce.newton(Z, tol=1e-9).n_iter.mean())
                    row.append(f"m = {m}: {counts[0]:.2f} / {counts[1]:.2f}")
                print(f"{name:>12}  " + ", ".join(row), flush=True)
        finally:
            mvce_newton.STEP = step
    finally:
        (mvce.COMPILED_UP_TO_M, mvce_newton.PER_PROBLEM_FROM_M,
         mvce_newton.KERNEL_PER_PROBLEM_FROM_MR) = saved


def solve_grid(Z: np.ndarray, grid: list[int], hints: bool):
    """Every m of `grid` solved on the first m columns of Z (nested neighbourhoods), each with
    the hint of the solution before it (`hints`) or without; the results and the hints' sizes
    as fractions of m."""
    out, hint, sizes = [], None, []
    for i, m in enumerate(grid):
        out.append(mvce.solve(Z[:, :m], tol=1e-9, support=hint))
        if hints and i + 1 < len(grid):
            hint = mvce.nested_support(out[-1], grid[i + 1])
            sizes.append(hint.sum(axis=1).mean() / grid[i + 1])
    return out, sizes


def nested_hints(names, cache: str) -> None:
    """Section 4: solving RMVEM's m grid for every training point of a fold with and without
    the hint the solution for one m gives the next (`mvce.nested_support`)."""
    from dmlbench import data
    from dmlbench.measure.neighbours import euclidean_kneighbors
    from dmlbench.methods.local import default_m_grid
    from dmlbench.run import protocols

    print("\n4. Support hints over RMVEM's m grid (first fold, every training point; CPU s to "
          "gap 1e-9)")
    print(f"{'data set':>10} {'n':>5} {'d':>3} {'m grid':>9} {'no hint':>8} {'hints':>7} "
          f"{'ratio':>6} {'steps':>11} {'hint / m':>9} {'max dL':>8}")
    for name in names:
        ds = data.ensure(name, cache)
        split = protocols.make_splits(ds.y, {"kind": "kfold", "folds": 10}, seed=0)[0]
        X = ds.X.astype(float)[split.train]
        n, d = X.shape
        grid = default_m_grid(d, n, 12)
        nbr = euclidean_kneighbors(X, X, max(grid), exclude_self=True)[1]
        Z = X[nbr] - X[:, None, :]
        (plain, _), t_plain = cpu(partial(solve_grid, Z, grid, hints=False))
        (nested, sizes), t_nested = cpu(partial(solve_grid, Z, grid, hints=True))
        steps = [np.mean([r.n_iter.mean() for r in rs]) for rs in (plain, nested)]
        dl = max(np.max(np.abs(a.logdet - b.logdet) / np.abs(a.logdet))
                 for a, b in zip(plain, nested))
        print(f"{name:>10} {n:>5} {d:>3} {f'{grid[0]}..{grid[-1]}':>9} {t_plain:>8.2f} "
              f"{t_nested:>7.2f} {t_plain / t_nested:>6.2f} {steps[0]:>5.2f}/{steps[1]:<5.2f} "
              f"{np.mean(sizes):>9.2f} {dl:>8.1e}", flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller problems, fewer repeats")
    p.add_argument("--cache", default="resources", help="data cache (embedded sets are built)")
    args = p.parse_args(argv)
    mvce.cvxpy_reference(problems(1, 5, 4, seed=9)[0])  # CVXPY's first call imports and compiles
    mvce.solve(problems(1, 5, 4, seed=9)[0])            # loads (or compiles) the numba kernel
    with threadpool_limits(1):
        if args.quick:
            solver_comparison([4, 10, 20], per_shape=2, batch=128, fw_cap=3000)
            real_comparison([("segment", 36), ("wdbc", 60)], count=16, cache=args.cache)
            rmvem_prediction(n=2000, d=256, m=50, queries=[200, 800], single=20)
            newton_paths([(12, 4), (30, 10), (60, 20), (90, 30), (108, 36), (240, 60)], batch=128,
                         cases=["iris", "wdbc"], count=32, cache=args.cache)
            nested_hints(["wdbc", "segment"], cache=args.cache)
        else:
            solver_comparison([4, 10, 20, 30, 60], per_shape=3, batch=256, fw_cap=20000)
            real_comparison([("iris", 8), ("wine", 26), ("segment", 36), ("wdbc", 60),
                             ("ionosphere", 66), ("satimage", 72)], count=32, cache=args.cache)
            rmvem_prediction(n=7291, d=256, m=50, queries=[1000, 3000], single=50)
            newton_paths([(12, 4), (20, 10), (24, 12), (30, 10), (40, 20), (60, 20), (90, 30),
                          (108, 36), (120, 60), (240, 60), (256, 128), (320, 100), (400, 128)],
                         batch=256,
                         cases=["balance-scale", "iris", "pima", "wine", "housevotes", "segment",
                                "wdbc", "ionosphere", "satimage", "digits"],
                         count=128, cache=args.cache)
            nested_hints(["wine", "housevotes", "wdbc", "ionosphere", "segment", "satimage"],
                         cache=args.cache)


if __name__ == "__main__":
    main()
