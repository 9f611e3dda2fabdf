"""tools/run_in_pieces.py: the order of the pieces and the restore of published records."""
import gzip
import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("run_in_pieces", REPO / "tools" / "run_in_pieces.py")
pieces = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pieces)


def test_the_reality_check_runs_every_data_set_once_smallest_first(capsys):
    config = pieces.load(str(REPO / "config" / "reality-check.yaml"), [])
    labels = pieces.order(config)
    assert sorted(labels) == sorted(config["datasets"])
    sizes = [pieces.sources.dataset_spec(config, label) for label in labels]
    assert [s.n * s.d for s in sizes] == sorted(s.n * s.d for s in sizes)
    assert pieces.main([str(REPO / "config" / "reality-check.yaml"), "--dry-run",
                        "--skip-methods", "lmnn"]) == 0
    lines = capsys.readouterr().out.split()
    assert lines[0::2] == labels and set(lines[1::2]) == {"16"}  # 17 methods less LMNN


def test_published_records_are_restored_once_and_decompressed(tmp_path):
    published, results = tmp_path / "reports" / "b" / "records", tmp_path / "results" / "b"
    record = published / "runs" / "iris" / "pca" / "part0.json.gz"
    arrays = published / "runs" / "iris" / "pca" / "part0.arrays" / "split0.npz"
    arrays.parent.mkdir(parents=True)
    record.write_bytes(gzip.compress(json.dumps({"records": []}).encode()))
    arrays.write_bytes(b"npz")
    assert pieces.restore(results, published) == 2
    assert json.loads((results / "runs" / "iris" / "pca" / "part0.json").read_text()) == {
        "records": []}
    assert (results / "runs" / "iris" / "pca" / "part0.arrays" / "split0.npz").read_bytes() == b"npz"
    assert pieces.restore(results, published) == 0
    assert pieces.published_path(results, published, str(results / "runs/iris/pca/part0.json")) == record
