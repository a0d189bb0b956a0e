"""bench/dry_run_scale.py (BENCHMARKS.md "Dry run scale") measures what it says: each count's own dry run,
its jobs read from Snakemake's job table, and the ratio and marginal cost between counts."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from testdata import REPO

BENCH = REPO / "bench" / "dry_run_scale.py"


def dry_run_scale():
    sys.path.insert(0, str(BENCH.parent))  # the bench imports its harness as a sibling
    spec = importlib.util.spec_from_file_location("dry_run_scale", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_count_is_its_own_dry_run_with_six_jobs_a_tiny_backbone(capsys):
    benchmarks = (REPO / "BENCHMARKS.md").read_bytes()
    assert dry_run_scale().main(["5", "10"]) == 0
    rows = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines() if line.startswith("| this tree")]
    assert [cells[1].strip() for cells in rows] == ["5", "10"]
    jobs = [int(cells[2].strip().replace(",", "")) for cells in rows]
    # tiny_model, evaluate_en (mean, input embeddings), finetune_semeval, evaluate_frozen, figures
    assert jobs[1] - jobs[0] == 5 * 6
    assert rows[1][5].strip().endswith("(x2)") and rows[1][6].strip().endswith(" s")
    assert (REPO / "BENCHMARKS.md").read_bytes() == benchmarks  # written only with --write-md


@pytest.mark.parametrize("counts", [["3000"], ["6000", "3000"], ["0", "10"]])
def test_counts_must_be_two_or_more_increasing_and_positive(counts, capsys):
    with pytest.raises(SystemExit) as exit:
        dry_run_scale().main(counts)
    assert exit.value.code == 2 and "counts:" in capsys.readouterr().err
