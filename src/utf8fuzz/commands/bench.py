"""``utf8fuzz bench``: the fast path against CPython's ``bytes.decode``, same process.

A benchmark, not a test: it prints MB/s for both and their ratio per input class
(see :mod:`utf8fuzz.bench` for the inputs and the timing method), the target
ratio at 64 KiB, and Corrected UTF-8 decode MB/s on the mix. It exits 0 whether
or not targets are met; ``--json`` gives every figure with the machine and the
code path.

``utf8fuzz bench --loop`` measures the fuzz loop instead: executions per CPU-second
of ``Finder.queue`` on a fixed input stream, and with ``--callgrind`` instructions
per input; beside it a stream of long inputs (``--long-inputs``, 0 for none):
executions and bytes per CPU-second, and the loop's peak RSS growth over it; then
issue 27's figures (``--parts``): every decoder in the loop, the Hypothesis engine
and structured inputs, a pure-Python plug-in in its worker, and the inputs to find
the planted bugs. ``--compare SRC`` runs another source tree in interleaved pairs (see
:mod:`utf8fuzz.loop.loop_bench` and docs/performance.md). It exits 1 when a part
failed in a tree (its row says why), 0 whether or not targets are met.

``utf8fuzz bench --exec CMD`` measures an exec client (docs/protocol.md), and
``utf8fuzz bench --plugin SPEC`` a plug-in in its worker process: 64-byte inputs per
second through ``decode_many``, one input, 32 and 1,024 per batch, and the CPU time
per input of the harness and of the process (:func:`utf8fuzz.bench.exec_run`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from utf8fuzz import safe
from utf8fuzz.errors import UsageError

if TYPE_CHECKING:
    from utf8fuzz.decoders.exec import ExecDecoder
    from utf8fuzz.decoders.plugin import IsolatedDecoder

HELP = ("time the fast path against CPython's bytes.decode (MB/s and ratios per input class); "
        "--loop: the fuzz loop's executions per second; --exec: an exec client's inputs per "
        "second; --plugin: a plug-in's in its worker")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from utf8fuzz.bench import SIZES, TARGETS
    from utf8fuzz.loop import loop_bench

    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--class", dest="classes", action="append", metavar="C", default=[],
                   help=f"only this input class; repeatable ({', '.join(TARGETS)})")
    p.add_argument("--size", dest="sizes", action="append", metavar="S", default=[],
                   help=f"only this size; repeatable ({', '.join(SIZES)})")
    p.add_argument("--repeats", type=int, default=7,
                   help="timed repeats per decoder; the median is reported (default 7)")
    p.add_argument("--path", metavar="P",
                   help="force a code path of the fast path (scalar, sse2, ssse3, avx2, avx512)")
    p.add_argument("--loop", action="store_true",
                   help="time the fuzz loop on a fixed input stream instead (options below)")
    p.add_argument("--exec", dest="exec_cmd", metavar="CMD",
                   help="time an exec client instead: 64-byte inputs per second through "
                   "the protocol (docs/protocol.md), in batches; uses --inputs and --runs")
    p.add_argument("--plugin", metavar="SPEC",
                   help="time a plug-in in its worker process instead (module:attr[...], "
                   "as --decoder takes it), as --exec does")
    loop_bench.add_arguments(p)


def run(args: argparse.Namespace) -> int:
    from utf8fuzz import bench

    if args.exec_cmd is not None or args.plugin is not None:
        return _exec(args)
    if args.loop:
        return _loop(args)
    if args.callgrind or args.compare or args.tree:
        raise UsageError("--callgrind, --compare and --tree go with --loop")

    for c in args.classes:
        if c not in bench.TARGETS:
            raise UsageError(f"unknown class {c!r}; classes are {', '.join(bench.TARGETS)}")
    for s in args.sizes:
        if s not in bench.SIZES:
            raise UsageError(f"unknown size {s!r}; sizes are {', '.join(bench.SIZES)}")
    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    try:
        from utf8fuzz import fast
    except ImportError as e:
        raise UsageError(f"the fast path is not available: {e}") from None
    if args.path:
        try:
            fast.set_path(args.path)
        except ValueError as e:
            raise UsageError(str(e)) from None
    result = bench.run(args.classes or None, args.sizes or None, repeats=args.repeats)
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
        return 0
    _print(result)
    return 0


def _loop(args: argparse.Namespace) -> int:
    from utf8fuzz.loop import loop_bench

    if args.classes or args.sizes or args.path:
        raise UsageError("--class, --size and --path are for the fast path bench, not --loop")
    try:
        result = loop_bench.bench(**loop_bench.bench_args(args))
    except (ValueError, OSError) as e:
        raise UsageError(str(e)) from None
    except RuntimeError as e:  # a tree whose loop does not run: say so, no traceback
        # (the message ends with that tree's stderr, which may quote anything)
        print(_escaped_lines(f"utf8fuzz bench --loop: {e}"), file=sys.stderr)
        return 1
    # not loop_bench.run_args, which prints the trees' paths as they are
    print(json.dumps(result, indent=2, ensure_ascii=True) if args.json
          else _escaped_lines(loop_bench.format_text(result)))
    # a part that failed in a tree is reported in its row (the others still ran)
    return 1 if any("error" in r for r in result.get("summary", ())) else 0


def _exec(args: argparse.Namespace) -> int:
    from utf8fuzz import bench
    from utf8fuzz.decoders import exec as exec_adapter

    if (args.loop or args.classes or args.sizes or args.path or args.callgrind or args.compare
            or args.tree):
        raise UsageError("--exec and --plugin time an out-of-process decoder: not with "
                         "--loop and its options, --class, --size or --path")
    if args.inputs < 1 or args.runs < 1:
        raise UsageError("--inputs and --runs must be at least 1")
    if args.exec_cmd is not None and args.plugin is not None:
        raise UsageError("--exec or --plugin: one out-of-process decoder at a time")
    decs, spec = _out_of_process(args.exec_cmd, args.plugin)
    # the replace mode when there is one: the larger replies
    dec = next((d for d in decs if d.name.split("@")[0].endswith(":replace")), decs[0])
    worker = dec.proc.worker if isinstance(dec, exec_adapter.ExecDecoder) else dec.worker

    def worker_cpu() -> float | None:
        return bench.process_cpu(worker.proc.pid) if worker.proc is not None else None

    try:
        result = bench.exec_run(dec.decode_many, inputs=args.inputs, runs=args.runs,
                                worker_cpu=worker_cpu)
    except ValueError as e:  # more inputs than the input class holds
        raise UsageError(str(e)) from None
    finally:
        for d in decs:
            d.close()
    result.update(decoder=dec.name, spec=spec, versions=dec.versions())
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=True))
        return 0
    m, rows = result["machine"], result["rows"]
    assert isinstance(m, dict) and isinstance(rows, list)
    lines = [f"{result['decoder']} ({result['spec']}): {result['inputs']} inputs, "
             f"{result['input']}; wall clock, median of {result['runs']} runs; "
             f"{result['failed']} not decoded",
             f"{m['cpu']}, {m['cores']} cores, Python {m['python']}"]
    for row in rows:
        theirs = (f", its process {row['worker_cpu_us']} us/input"
                  if "worker_cpu_us" in row else "")
        lines.append(f"  batch {row['batch']:>5}: {row['inputs_per_s']:>9,} inputs/s, "
                     f"harness CPU {row['harness_cpu_us']} us/input{theirs}")
    print(_escaped_lines("\n".join(lines)))
    return 0


def _out_of_process(exec_cmd: str | None, plugin_spec: str | None,
                    ) -> tuple[list[ExecDecoder | IsolatedDecoder], str]:
    """The decoders ``--exec CMD`` or ``--plugin SPEC`` names, and the spec."""
    from utf8fuzz.decoders import UnknownDecoder, plugin
    from utf8fuzz.decoders import exec as exec_adapter

    try:
        if plugin_spec is not None:
            loaded = plugin.load_all(plugin_spec)
            isolated = [d for d in loaded if isinstance(d, plugin.IsolatedDecoder)]
            if not isolated:
                for d in loaded:
                    d.close()
                raise UsageError("--plugin times a plug-in in its worker process: not "
                                 "with +inprocess")
            return list(isolated), plugin_spec
        spec = str(exec_cmd)
        if not spec.startswith(exec_adapter.PREFIX):
            spec = exec_adapter.PREFIX + spec
        return [d for d in exec_adapter.load(spec)
                if isinstance(d, exec_adapter.ExecDecoder)], spec
    except UnknownDecoder as e:
        raise UsageError(str(e)) from None


def _escaped_lines(s: str) -> str:
    """Each line through safe.text, the line breaks kept: multi-line output stays
    readable and nothing else unprintable gets through."""
    return "\n".join(safe.text(ln, None) for ln in s.splitlines())


def _print(result: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    from utf8fuzz.commands._console import console as make_console

    info, machine = result["fast"], result["machine"]
    # the CPU's name is the machine's (a VM's can be anything): escaped, and Text, not markup
    table = Table(
        title=Text(safe.text(f"fast.decode vs bytes.decode - path {info['selected']} "
                             f"({info['mode']})")),
        caption=Text(safe.text(f"{machine['cpu']}, {machine['cores']} cores, Python "
                               f"{machine['python']}; CPU time, median of repeats, interleaved")),
    )
    for col in ("class", "size", "CPython MB/s", "fast MB/s", "ratio", "target"):
        table.add_column(col, justify="left" if col in ("class", "size") else "right")
    for r in result["rows"]:
        target = "" if r["target"] is None else (
            f"≥ {r['target']:.1f}× " + ("met" if r["ratio"] >= r["target"] else "MISSED"))
        table.add_row(r["cls"], r["size"], f"{r['cpython_mbs']:,.0f}", f"{r['fast_mbs']:,.0f}",
                      f"{r['ratio']:.2f}×", target)
    console = make_console()
    console.print(table)
    for c in result["corrected"]:
        verdict = "met" if c["mbs"] >= c["target_mbs"] else "MISSED"
        console.print(f"Corrected UTF-8 decode, mix {c['size']}: {c['mbs']:,.0f} MB/s "
                      f"(target ≥ {c['target_mbs']:,.0f} MB/s: {verdict})")
