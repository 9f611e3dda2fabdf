"""Job resources from the data-set size, with the config's overrides."""

from dmlbench.measure.neighbours import MAX_BLOCK_BYTES
from dmlbench.run import plan, resources

CFG = plan.check({
    "benchmark": "res",
    "datasets": {"iris": None, "digits": {"preprocess": [{"pca": 30}]}},
    "methods": {"euclidean": None, "lmnn": {"mem_mb": 12345, "runtime": 99, "threads": 2}},
})


def _job(dataset, method):
    return next(j for j in plan.jobs(CFG) if (j.dataset, j.method) == (dataset, method))


def test_memory_follows_the_formula_and_grows_with_the_data():
    n, d = 70000, 784
    expected = 1.5 * (resources.BASE_MB + (8 * n * d + 3 * 8 * n * 120 + 4 * MAX_BLOCK_BYTES) / 2**20)
    got = resources.job_mem_mb(n, d, ["zscore", {"pca": 120}])
    assert expected <= got < expected + 250 and got % 250 == 0
    assert resources.job_mem_mb(n, d, []) > got > resources.job_mem_mb(1000, d, [{"pca": 120}])


def test_runtime_grows_with_splits_and_working_dimension():
    assert resources.working_dimension(784, ["zscore", {"pca": 120}]) == 120
    assert resources.working_dimension(784, [{"pca": 0.95}]) == 784
    one = resources.job_runtime(70000, 784, [{"pca": 120}], 1)
    assert one == 350  # 10 + 70000 x 120 / 25000 = 346 minutes, rounded up to 5
    assert resources.job_runtime(70000, 784, [{"pca": 120}], 4) > one
    assert resources.job_runtime(150, 4, [], 4) == 15


def test_jobs_take_the_registry_size_unless_the_config_says_otherwise():
    small = plan.job_resources(CFG, _job("iris", "euclidean"))
    large = plan.job_resources(CFG, _job("digits", "euclidean"))
    assert small["threads"] == 1 and small["mem_mb"] <= large["mem_mb"]
    assert small["runtime"] <= large["runtime"]
    assert plan.job_resources(CFG, _job("iris", "lmnn")) == {"threads": 2, "mem_mb": 12345,
                                                            "runtime": 99}
    assert resources.for_dataset("iris")["runtime"] == 10


def test_limit_threads_holds_the_blas_pools_and_restores_them():
    from threadpoolctl import threadpool_info

    before = {(i["filepath"], i["num_threads"]) for i in threadpool_info()}
    for _ in range(2):  # the second time with the kept controller
        with resources.limit_threads(1):
            assert all(i["num_threads"] == 1 for i in threadpool_info())
    assert {(i["filepath"], i["num_threads"]) for i in threadpool_info()} == before
