"""Measure triage (issue 25): how many findings ``utf8fuzz fuzz`` reports per real
cause, on decoders nobody tuned the explanation rules to.

For each planted decoder of ``tests/triage/planted`` in each shape it has, and for
each engine, one ``utf8fuzz fuzz`` run as a user starts it: a fresh temporary corpus
holding the seeds ``utf8fuzz init`` writes, ``--jobs 1``, a fixed ``--seed`` and
``--runs`` where this utf8fuzz has them (else ``--time`` alone bounds the run), and
``--json``. The findings are the summary's ``findings`` (one per decoder family and
explanation); the table compares their count with the causes planted.

    .venv/bin/python scripts/triage_measure.py                 # every planted decoder
    .venv/bin/python scripts/triage_measure.py --only overlong --engine hypothesis
    .venv/bin/python scripts/triage_measure.py --decoder 'mydecoder:decode' --causes 3 \\
        --pythonpath /tmp/mydecoder                           # any decoder spec
    .venv/bin/python scripts/triage_measure.py --json out.json  # the rows, for docs
    .venv/bin/python scripts/triage_measure.py --real           # README's + real decoders

``--real`` measures the README's example decoder (its code block, written to a
temporary ``mydecoder.py``) and the real decoders of :data:`REAL`, with the causes
established by hand (``scripts/triage_real/models.py`` checks each set of causes
against its library). They must be installed outside the repository first::

    mkdir -p /tmp/triage-npm && (cd /tmp/triage-npm && npm init -y && npm install \
        fastestsmallesttextencoderdecoder@1.0.22 mutf-8@1.2.4 text-encoding@0.7.0 \
        @polkadot/x-textdecoder@14.0.3 fast-text-encoding@1.0.6)
    .venv/bin/pip install --target /tmp/triage-py ujson==6.1.0 python-rapidjson==1.25

Run from the repository's root (the planted decoders import as ``tests.triage.planted``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.triage.planted import PLANTED  # noqa: E402

from utf8fuzz import safe  # noqa: E402
from utf8fuzz.engine.boundaries import seed_files  # noqa: E402

_CLIENT = "exec:node scripts/triage_real/textdecoder_client.js"
#: name, --decoder spec, causes established by hand (scripts/triage_real/models.py;
#: fastestsmallesttextencoderdecoder's third is in the call: it decodes its view's
#: whole ArrayBuffer, which the checks of the call find; mutf-8's third is in stream
#: mode, which the exec client's strict error records go through).
REAL: tuple[tuple[str, str, int], ...] = (
    ("README mydecoder", "mydecoder:decode", 4),
    ("fastestsmallesttextencoderdecoder 1.0.22",
     f"{_CLIENT} fastestsmallesttextencoderdecoder/NodeJS/EncoderAndDecoderNodeJS.min.js "
     "TextDecoder", 3),
    ("mutf-8 1.2.4 (npm)", f"{_CLIENT} mutf-8 MUtf8Decoder fatal@mutf8", 3),
    ("@polkadot/x-textdecoder 14.0.3 fallback",
     f"{_CLIENT} @polkadot/x-textdecoder/fallback TextDecoder", 1),
    ("text-encoding 0.7.0", f"{_CLIENT} text-encoding TextDecoder fatal", 0),
    ("fast-text-encoding 1.0.6", f"{_CLIENT} fast-text-encoding TextDecoder", 0),
    ("ujson 6.1.0", "models:ujson_valid+validator", 1),
    ("python-rapidjson 1.25", "models:rapidjson_valid+validator", 0),
)


def readme_decoder(directory: Path) -> Path:
    """The README's example decoder, its code block as written, as
    ``directory/mydecoder.py``."""
    import re

    text = (ROOT / "README.md").read_text()
    m = re.search(r"```python\n(# mydecoder\.py.*?)```", text, re.S)
    if m is None:
        raise SystemExit("README.md has no mydecoder.py code block")
    (directory / "mydecoder.py").write_text(m.group(1))
    return directory


def fuzz_help() -> str:
    exe = Path(sys.executable).parent / "utf8fuzz"
    return subprocess.run([str(exe), "fuzz", "--help"], capture_output=True, text=True).stdout


def one_run(spec: str, engine: str, seconds: float, runs: int | None, seed: int,
            pythonpath: str, help_text: str) -> dict[str, Any]:
    """One ``utf8fuzz fuzz`` on ``spec`` and its summary's findings."""
    exe = Path(sys.executable).parent / "utf8fuzz"
    with tempfile.TemporaryDirectory(prefix="triage-") as tmp:
        corpus = Path(tmp) / "corpus"
        (corpus / "seeds").mkdir(parents=True)
        for name, data in seed_files().items():
            (corpus / "seeds" / name).write_bytes(data)
        args = [str(exe), "fuzz", "--decoder", spec, "--engine", engine, "--jobs", "1",
                "--time", str(seconds), "--corpus", str(corpus), "--no-report", "--json"]
        if "--seed" in help_text:
            args += ["--seed", str(seed)]
        if runs is not None and "--runs" in help_text:
            args += ["--runs", str(runs)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (pythonpath, str(ROOT)) if p)}
        p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env=env,
                           timeout=seconds * 4 + 300)
        try:
            out = json.loads(p.stdout)
        except ValueError:
            return {"exit": p.returncode, "error": safe.text(p.stderr[-500:], 500)}
    if "error" in out:
        return {"exit": p.returncode, "error": out["error"]}
    return {"exit": p.returncode, "executions": out["executions"],
            # "new" has one item per entry: another cause's entry may share a signature
            "signatures": len({x["signature"] for x in out["new"] + out["known"]}),
            "findings": [{"rule": f["rule"], "id": f["id"], "explanation": f["explanation"],
                          "signatures": len(f["signatures"])} for f in out["findings"]],
            "failures": out["failures"]}


def in_process(spec: str) -> dict[str, Any]:
    """The findings of ``spec`` on the fixed inputs, in this process."""
    from tests.triage.planted import inprocess

    found = inprocess.findings(spec)
    return {"exit": None, "executions": len(inprocess.inputs()),
            "signatures": sum(n for _, n in found.values()),
            "findings": [{"rule": rule, "id": fid, "explanation": "", "signatures": n}
                         for fid, (rule, n) in found.items()],
            "failures": []}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", action="append", choices=("hypothesis", "atheris", "in-process"),
                    help="engine (repeat; default hypothesis and atheris); in-process: the "
                         "fixed inputs of tests/triage/planted/inprocess.py through the "
                         "engine's Finder, in this process (Python plug-ins only)")
    ap.add_argument("--time", type=float, default=20.0, help="seconds per run (a limit)")
    ap.add_argument("--runs", type=int, default=None, help="inputs per run, where fuzz has --runs")
    ap.add_argument("--seed", type=int, default=1, help="where fuzz has --seed")
    ap.add_argument("--parallel", type=int, default=2, help="runs at once")
    ap.add_argument("--only", action="append", default=[],
                    help="planted decoders whose name contains this (repeat: any of them)")
    ap.add_argument("--shape", action="append", help="only these shapes (repeat)")
    ap.add_argument("--decoder", action="append", default=[],
                    help="measure this spec instead of the planted set (repeat)")
    ap.add_argument("--causes", type=int, action="append", default=[],
                    help="the causes established by hand of each --decoder, in order")
    ap.add_argument("--pythonpath", default="", help="added to PYTHONPATH (a user's module)")
    ap.add_argument("--real", action="store_true",
                    help="the README's decoder and the real decoders of REAL")
    ap.add_argument("--json", default=None, metavar="FILE", help="write the rows here")
    ap.add_argument("--summary", nargs="+", metavar="FILE",
                    help="print the rows of these --json files as one table, a row per "
                         "decoder and shape with each engine's count, and exit")
    a = ap.parse_args()
    if a.summary:
        print(summary([r for f in a.summary for r in json.loads(Path(f).read_text())]))
        return 0
    engines = a.engine or ["hypothesis", "atheris"]
    help_text = fuzz_help()
    jobs: list[tuple[str, str, str, int, str]] = []  # name, shape, spec, causes, engine
    if a.real:
        tmp = tempfile.mkdtemp(prefix="triage-readme-")
        a.pythonpath = os.pathsep.join(p for p in (
            a.pythonpath, str(readme_decoder(Path(tmp))), str(ROOT / "scripts" / "triage_real"),
            "/tmp/triage-py") if p)
        os.environ.setdefault("NODE_PATH", "/tmp/triage-npm/node_modules")
        for name, spec, n in REAL:
            shape = "exec" if spec.startswith("exec:") else \
                spec.rsplit("+", 1)[1] if "+" in spec else "function"
            jobs += [(name, shape, spec, n, e) for e in engines]
    elif a.decoder:
        causes = a.causes + [-1] * (len(a.decoder) - len(a.causes))
        for spec, n in zip(a.decoder, causes, strict=True):
            jobs += [(spec, "-", spec, n, e) for e in engines]
    else:
        for p in PLANTED:
            if a.only and not any(o in p.attr for o in a.only):
                continue
            for shape in p.shapes:
                if a.shape and shape not in a.shape:
                    continue
                jobs += [(p.attr, shape, p.spec(shape), p.expected(shape), e) for e in engines]
    print(f"{len(jobs)} runs, --time {a.time}"
          + (f", --runs {a.runs}" if a.runs and "--runs" in help_text else "")
          + (f", --seed {a.seed}" if "--seed" in help_text else ", no --seed in this utf8fuzz"),
          flush=True)

    def go(job: tuple[str, str, str, int, str]) -> dict[str, Any]:
        name, shape, spec, n, engine = job
        r = in_process(spec) if engine == "in-process" else \
            one_run(spec, engine, a.time, a.runs, a.seed, a.pythonpath, help_text)
        row = {"decoder": name, "shape": shape, "spec": spec, "causes": n, "engine": engine, **r}
        print(_line(row), flush=True)
        return row

    print("| decoder | causes | shape | engine | findings | signatures | finding rules |")
    print("|---|---|---|---|---|---|---|")
    with ThreadPoolExecutor(a.parallel) as pool:
        rows = list(pool.map(go, jobs))
    exact = sum(r.get("findings") is not None and len(r["findings"]) == r["causes"] for r in rows)
    print(f"\n{exact} of {len(rows)} runs report exactly one finding per cause")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


def summary(rows: list[dict[str, Any]]) -> str:
    """A markdown table: per decoder and shape, the causes, each engine's findings (a
    mark where they are not the causes), and the rules both engines named."""
    by: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["decoder"], r["shape"]), {})[r["engine"]] = r
    engines = [e for e in ("in-process", "hypothesis", "atheris")
               if any(r["engine"] == e for r in rows)]
    out = [f"| decoder | shape | causes | {' | '.join(engines)} | finding rules (any engine) |",
           "|---|---|---|" + "---|" * len(engines) + "---|"]
    exact = total = 0
    for (name, shape), runs in by.items():
        causes = next(iter(runs.values()))["causes"]
        cells, rules = [], {}
        for engine in engines:
            r = runs.get(engine)
            if r is None or "error" in r:
                cells.append("-" if r is None else "error")
                continue
            n = len(r["findings"])
            total += 1
            exact += n == causes
            cells.append(f"{n}" if n == causes else f"**{n}**")
            for f in r["findings"]:
                rules[f["rule"]] = max(rules.get(f["rule"], 0), f["signatures"])
        named = ", ".join(f"`{safe.text(k, 80)}`" + (f" ×{v}" if v > 1 else "")
                          for k, v in sorted(rules.items()))
        out.append(f"| {name} | {shape} | {causes} | {' | '.join(cells)} | {named} |")
    out.append(f"\n{exact} of {total} runs: exactly one finding per cause (bold: not).")
    return "\n".join(out)


def _line(r: dict[str, Any]) -> str:
    if "error" in r:
        return f"| {r['decoder']} | {r['causes']} | {r['shape']} | {r['engine']} | error: " \
               f"{safe.text(r['error'], 200)} | | |"
    rules = ", ".join(f"`{safe.text(f['rule'], 80)}`"
                      + (f" ×{f['signatures']}" if f["signatures"] > 1 else "")
                      for f in r["findings"])
    mark = "" if len(r["findings"]) == r["causes"] else " ✗"
    return (f"| {r['decoder']} | {r['causes']} | {r['shape']} | {r['engine']} | "
            f"{len(r['findings'])}{mark} | {r['signatures']} | {rules} |")


if __name__ == "__main__":
    sys.exit(main())
