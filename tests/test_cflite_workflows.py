"""ClusterFuzzLite's GitHub Actions workflows (.github/workflows/cflite_*.yml) are laid
out as its documentation lays them out: build_fuzzers then run_fuzzers, for Python
(the language of .clusterfuzzlite/project.yaml), in the mode each file is for.

PyYAML is not a dependency: the files are read by :func:`parse`, a strict reader of
the block-style subset of YAML they are written in, which rejects anything else."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
BUILD = "google/clusterfuzzlite/actions/build_fuzzers@v1"
RUN = "google/clusterfuzzlite/actions/run_fuzzers@v1"

Node = dict[str, "Node"] | list["Node"] | str | int | bool | None


def _scalar(text: str) -> Node:
    """A plain or quoted scalar, with any trailing comment removed."""
    m = re.fullmatch(r"""('[^']*'|"[^"\\]*")\s*(#.*)?""", text)
    if m:
        return m.group(1)[1:-1]
    if text[:1] in "[{&*|>!%@`'\"":
        raise ValueError(f"not in the subset: {text!r}")
    text = re.sub(r"\s+#.*$", "", text).strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return {"true": True, "false": False, "": None}.get(text, text)


def parse(source: str) -> Node:
    lines: list[tuple[int, str]] = []
    for raw in source.splitlines():
        if "\t" in raw:
            raise ValueError(f"tab: {raw!r}")
        text = raw.strip()
        if text and not text.startswith("#"):
            lines.append((len(raw) - len(raw.lstrip(" ")), text))

    def block(i: int, indent: int) -> tuple[Node, int]:
        if lines[i][1].startswith("- ") or lines[i][1] == "-":
            items: list[Node] = []
            while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("-"):
                rest = lines[i][1][1:]
                col = indent + 1 + len(rest) - len(rest.lstrip())
                if not rest.strip():
                    item, i = block(i + 1, lines[i + 1][0])
                elif re.match(r"[\w.-]+:(\s|$)", rest.strip()):
                    lines[i] = (col, rest.strip())  # a mapping begins on the dash's line
                    item, i = block(i, col)
                else:
                    item, i = _scalar(rest.strip()), i + 1
                items.append(item)
            return items, i
        mapping: dict[str, Node] = {}
        while i < len(lines) and lines[i][0] == indent:
            m = re.fullmatch(r"([\w.-]+):(?:\s+(.*))?", lines[i][1])
            if not m or m.group(1) in mapping:
                raise ValueError(f"line not in the subset or key repeated: {lines[i][1]!r}")
            i += 1
            if m.group(2) and not m.group(2).startswith("#"):
                mapping[m.group(1)] = _scalar(m.group(2))
            elif i < len(lines) and (lines[i][0] > indent or (
                    lines[i][0] == indent and lines[i][1].startswith("-"))):
                mapping[m.group(1)], i = block(i, lines[i][0])
            else:
                mapping[m.group(1)] = None
        if i < len(lines) and lines[i][0] > indent:
            raise ValueError(f"bad indentation: {lines[i][1]!r}")
        return mapping, i

    node, end = block(0, lines[0][0])
    if end != len(lines):
        raise ValueError(f"bad indentation: {lines[end][1]!r}")
    return node


def test_the_reader_reads_the_subset_and_rejects_the_rest():
    assert parse("a: 1\nb:\n  - x  # c\n  - k: 'v # w'\n    n: true\nc:\n- y\n") == {
        "a": 1, "b": ["x", {"k": "v # w", "n": True}], "c": ["y"]}
    for bad in ("a: [1, 2]\n", "a: |\n  x\n", "a: 1\na: 2\n", "a: 1\n   b: 2\n", "a:\n\tb: 1\n"):
        with pytest.raises(ValueError):
            parse(bad)


def workflow(name):
    return parse((WORKFLOWS / name).read_text(encoding="utf-8"))


def steps(wf):
    """(build step, run step) of each job."""
    for job in wf["jobs"].values():
        build, run = job["steps"]
        yield build, run


def language():
    (line,) = [x for x in (ROOT / ".clusterfuzzlite" / "project.yaml").read_text().splitlines()
               if x.startswith("language:")]
    return line.split(":", 1)[1].strip()


@pytest.mark.parametrize(("name", "modes"), [
    ("cflite_pr.yml", ["code-change"]),
    ("cflite_batch.yml", ["batch"]),
    ("cflite_cron.yml", ["prune"]),
])
def test_each_workflow_builds_the_python_targets_and_runs_them_in_its_mode(name, modes):
    wf = workflow(name)
    assert wf["permissions"] == "read-all"
    assert language() == "python"
    assert [run["with"]["mode"] for _, run in steps(wf)] == modes
    for (build, run), job in zip(steps(wf), wf["jobs"].values(), strict=True):
        assert (build["uses"], build["id"], run["uses"], run["id"]) == (BUILD, "build", RUN, "run")
        assert build["with"]["language"] == language()
        assert run["with"]["github-token"] == "${{ secrets.GITHUB_TOKEN }}"
        assert run["with"]["fuzz-seconds"] > 0
        # the sanitizer is ASan, the one build_fuzzers uses when none is named
        sanitizers = job.get("strategy", {}).get("matrix", {}).get("sanitizer", ["address"])
        assert sanitizers == ["address"]
        assert build["with"].get("sanitizer") == run["with"].get("sanitizer")


def test_pr_fuzzing_runs_when_the_targets_or_their_build_change():
    on = workflow("cflite_pr.yml")["on"]
    paths = on["pull_request"]["paths"]
    for needed in ("src/**", "fuzz/**", "corpus/**", ".clusterfuzzlite/**", "setup.py",
                   "pyproject.toml"):
        assert needed in paths
    for f in ("project.yaml", "Dockerfile", "build.sh"):  # what build_fuzzers reads
        assert (ROOT / ".clusterfuzzlite" / f).is_file()


@pytest.mark.parametrize("name", ["cflite_batch.yml", "cflite_cron.yml"])
def test_batch_fuzzing_and_pruning_run_on_a_schedule(name):
    (entry,) = workflow(name)["on"]["schedule"]
    assert len(entry["cron"].split()) == 5
