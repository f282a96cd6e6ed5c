"""Gather the benchmark results (benchmarks/results/*.md) into docs/benchmarks.md.

    .venv/bin/python scripts/benchmarks_doc.py

`make bench` runs every benchmark and then this script. Figures are what the last run measured on
its machine; nothing here is typed in by hand.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = (
    "bench_startup",
    "bench_engine",
    "bench_irr",
    "bench_batch",
    "bench_simulator",
    "bench_app",
)

HEADER = """# Benchmarks

Speed is measured, not asserted: each script in `benchmarks/` times econ against the naive way in the
same run (a per-scenario pandas ledger with numpy-financial's IRR, loops of pyxirr and
numpy-financial, a bare Python process importing the same libraries) and writes its table to
`benchmarks/results/`; `make bench` runs them all and gathers the tables here. Ratios come first:
machines differ by several times in absolute speed (the naive ledger's own time per scenario is
given beside each ratio, so a reader can place their machine), while a ratio measured in one run
holds. The engine and batch figures cover the synthetic base and the ready-made scenarios users
run (the seed, the seed with its capital stack, a 10 MW hall). The machine is the project's: 2
cores shared with whatever else runs, so figures move by tens of percent between runs, and on a
busy day the ratios move too: the engine's passes over large arrays slow down with the machine's
memory traffic more than the naive ledger's interpreter-bound loop does, so the same engine code
has measured from under half to the whole of its best ratio on different days. Compare two
versions of econ by running both in one session, not against a table here. A table says when a
run used reduced sizes or skipped a part. Tests never assert timings.

"""


def main() -> None:
    results = ROOT / "benchmarks" / "results"
    found = {p.stem: p for p in results.glob("*.md")}
    parts = [HEADER]
    for name in [*ORDER, *sorted(set(found) - set(ORDER))]:
        if name in found:
            text = found[name].read_text().strip()
            if text.startswith("# "):
                text = "#" + text  # one level down under this page's title
            parts.append(text + "\n")
    (ROOT / "docs" / "benchmarks.md").write_text("\n".join(parts))
    print("wrote docs/benchmarks.md")


if __name__ == "__main__":
    main()
