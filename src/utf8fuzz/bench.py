"""The fast path's benchmark: ``fast.decode`` against ``bytes.decode`` in one process.

Speed is measured, never asserted: this module produces numbers and the targets
they are read against (as ratios to CPython in the same run, on the same input),
and no test fails because of them.

Inputs. One generator per class, each from a fixed seed, so that every run times
the same bytes: ASCII; Latin-1-range text (mostly ASCII with accented letters, so
the result is a 1-byte-kind str); Cyrillic; CJK; emoji; a realistic mix of all of
these; and the mix with 10% of its bytes replaced by bytes that are ill-formed
where they land (decoded with ``errors="replace"``). Each class is made at 64 KiB
and 1 MiB, cut at a character boundary.

Timing. For each input, the two decoders run alternately in the same process
(``cpython, fast, cpython, fast, ...``), each repeat a batch of calls long enough
to time with CPU time (``time.process_time_ns``); the figure is the median over
repeats. Interleaving keeps frequency scaling and cache state from favouring one
side. Corrected UTF-8 has no CPython counterpart: its figure is
``fast.decode_corrected`` MB/s on the mix, converted to Corrected UTF-8.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from utf8fuzz.outcome import Outcome

SIZES = {"64KiB": 64 * 1024, "1MiB": 1024 * 1024}

#: Targets at 64 KiB, as ratios to CPython's bytes.decode in the same run.
TARGETS = {
    "ascii": 1.0,
    "latin1": 2.0,
    "cyrillic": 1.5,
    "cjk": 1.5,
    "emoji": 1.8,
    "mix": 1.5,
    "invalid10": 1.0,
}
#: Corrected UTF-8 decode of the mix, MB/s (10^6 bytes per second).
CORRECTED_TARGET_MBS = 1000.0

_ASCII_TEXT = (
    "the of and to in is was that for it with as his on be at by had not are but from or "
    "have an they which one you were her all she there would their we him been has when who "
    "will more no if out so said what up its about into than them can only other new some "
    "could time these two may then do first any my now such like our over man me even most "
    "made after also did many before must through data decoder byte stream unicode error value"
)
_ASCII_WORDS = tuple(_ASCII_TEXT.split())
_LATIN1 = "àâäçéèêëîïôöùûüÿñßæáíóúåøÀÉÈÇÖÜÑ"  # all below U+0100: a 1-byte-kind str
_CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЖЗИКЛМНОПРСТУФХЦЧШЭЮЯ"
_CJK = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着"
    "去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主"
    "行方又如前所本见经头面公同三已老从动两长"
)
_EMOJI = (
    "😀😃😄😁😆😅😂🤣😊😇🙂🙃😉😌😍🥰😘😗😙😚😋😛😝😜🤪🤨🧐🤓😎🤩"
    "🥳😏😒😞😔😟😕🙁😣😖😫😩🥺😢😭😤😠😡🤬🤯😳🥵🥶😱😨😰😥😓🤗🤔"
    "🤭🤫🤥😶😐😑😬🙄😯😦😧😮😲🥱😴🤤😪😵🤐🥴🤢🤮🤧😷🤒🤕👍👎👌✌"
    "🤞🤟🤘🤙👈👉👆👇☝✋🤚🖐🖖👋🤝🙏💪🦾🔥✨🎉🎊💯❤🧡💛💚💙💜🖤"
    "🤍🤎💔"
)


def _latin1_word(rng: random.Random) -> str:
    w = list(rng.choice(_ASCII_WORDS))
    if rng.random() < 0.45:  # about one word in two carries an accented letter
        w[rng.randrange(len(w))] = rng.choice(_LATIN1)
    return "".join(w)


def _script_word(rng: random.Random, alphabet: str, lo: int, hi: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def _text(rng: random.Random, kind: str, size: int) -> str:
    out: list[str] = []
    total = 0
    while total < size:
        if kind == "ascii":
            w = rng.choice(_ASCII_WORDS)
        elif kind == "latin1":
            w = _latin1_word(rng)
        elif kind == "cyrillic":
            w = _script_word(rng, _CYRILLIC, 2, 10)
        elif kind == "cjk":
            w = _script_word(rng, _CJK, 4, 20) + rng.choice("，。、")
        elif kind == "emoji":
            w = _script_word(rng, _EMOJI, 1, 4)
        else:  # mix: a multilingual page, sentence by sentence
            sub = rng.choices(["ascii", "latin1", "cyrillic", "cjk", "emoji"],
                              weights=[45, 20, 15, 15, 5])[0]
            w = " ".join(_text(rng, sub, 40).split(" ")[:8])
        sep = "" if kind == "cjk" else (". " if rng.random() < 0.08 else " ")
        out.append(w + sep)
        total += len(w.encode()) + len(sep)
    return "".join(out)


def _cut(data: bytes, size: int) -> bytes:
    """At most ``size`` bytes, cut at a character boundary."""
    end = min(size, len(data))
    while end > 0 and end < len(data) and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end]


def make_input(kind: str, size: int, seed: int = 2024) -> bytes:
    """The benchmark input of a class, the same bytes for the same (kind, size, seed)."""
    rng = random.Random(f"{seed}:{kind}:{size}")
    if kind == "invalid10":
        data = bytearray(make_input("mix", size, seed))
        bad = [0x80, 0xBF, 0xC0, 0xC1, 0xF5, 0xFF, 0xFE, 0xE0, 0xED]
        for i in rng.sample(range(len(data)), len(data) // 10):
            data[i] = rng.choice(bad)
        return bytes(data)
    return _cut(_text(rng, kind, size + 64).encode(), size)


@dataclass
class Row:
    cls: str
    size: str
    nbytes: int
    cpython_mbs: float
    fast_mbs: float
    ratio: float
    target: float | None


def _batch(fn: Callable[[], object], calls: int) -> int:
    t0 = time.process_time_ns()
    for _ in range(calls):
        fn()
    return time.process_time_ns() - t0


def _calibrate(fn: Callable[[], object], budget_ns: int) -> int:
    calls = 1
    while True:
        t = _batch(fn, calls)
        if t >= budget_ns // 4 or calls >= 1 << 20:
            return max(1, int(calls * budget_ns / max(t, 1)))
        calls *= 4


def time_pair(a: Callable[[], object], b: Callable[[], object], nbytes: int,
              repeats: int = 7, budget_ms: float = 30.0) -> tuple[float, float]:
    """MB/s of ``a`` and ``b``: the median of interleaved repeats."""
    budget = int(budget_ms * 1e6)
    ca, cb = _calibrate(a, budget), _calibrate(b, budget)
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(repeats):
        ta.append(_batch(a, ca) / ca)
        tb.append(_batch(b, cb) / cb)
    return nbytes / statistics.median(ta) * 1e3, nbytes / statistics.median(tb) * 1e3


def time_one(fn: Callable[[], object], nbytes: int, repeats: int = 7,
             budget_ms: float = 30.0) -> float:
    calls = _calibrate(fn, int(budget_ms * 1e6))
    return nbytes / statistics.median(_batch(fn, calls) / calls for _ in range(repeats)) * 1e3


def run(classes: list[str] | None = None, sizes: list[str] | None = None, repeats: int = 7,
        budget_ms: float = 30.0) -> dict[str, object]:
    """Run the benchmark; a JSON-safe dict (rows, corrected figure, path, machine)."""
    from utf8fuzz import fast

    rows: list[Row] = []
    for size_name in sizes or list(SIZES):
        size = SIZES[size_name]
        for cls in classes or list(TARGETS):
            data = make_input(cls, size)
            errors = "replace" if cls == "invalid10" else "strict"
            if fast.decode(data, errors) != data.decode("utf-8", errors):
                raise AssertionError(f"fast.decode differs from CPython on the {cls} input")

            def cpython_decode(d: bytes = data, e: str = errors) -> str:
                return d.decode("utf-8", e)

            def fast_decode(d: bytes = data, e: str = errors) -> str:
                return fast.decode(d, e)

            cpy, fst = time_pair(cpython_decode, fast_decode, len(data), repeats, budget_ms)
            rows.append(Row(cls, size_name, len(data), round(cpy, 1), round(fst, 1),
                            round(fst / cpy, 2), TARGETS[cls] if size_name == "64KiB" else None))
    corrected: list[dict[str, object]] = []
    for size_name in sizes or list(SIZES):
        mix = make_input("mix", SIZES[size_name]).decode()
        cdata = fast.encode_corrected(mix)

        def decode_corrected(d: bytes = cdata) -> array[int]:
            return fast.decode_corrected(d)

        mbs = time_one(decode_corrected, len(cdata), repeats, budget_ms)
        corrected.append({"size": size_name, "nbytes": len(cdata), "mbs": round(mbs, 1),
                          "target_mbs": CORRECTED_TARGET_MBS})
    return {
        "rows": [asdict(r) for r in rows],
        "corrected": corrected,
        "fast": fast.info(),
        "machine": machine(),
    }


def machine() -> dict[str, object]:
    import os
    import platform

    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform()}


#: The batch sizes of :func:`exec_run`: one input per exchange (``run``), the fuzz
#: loop's round, and a bulk batch.
EXEC_BATCHES = (1, 32, 1024)
EXEC_INPUT_SIZE = 64


def exec_inputs(count: int, size: int = EXEC_INPUT_SIZE) -> list[bytes]:
    """``count`` inputs of ``size`` bytes: windows of the ``invalid10`` class (the
    mix with one byte in ten ill-formed where it lands), at successive offsets of
    one buffer, so most hold a few errors, as fuzz inputs do."""
    data = make_input("invalid10", SIZES["64KiB"])
    if count + size > len(data):
        data = make_input("invalid10", SIZES["1MiB"])
    if count + size > len(data):
        raise ValueError(f"at most {len(data) - size} inputs")
    return [data[i : i + size] for i in range(count)]


def exec_run(decode_many: Callable[[Sequence[bytes]], list[Outcome]], inputs: int = 5000,
             runs: int = 5, batches: tuple[int, ...] = EXEC_BATCHES,
             worker_cpu: Callable[[], float | None] | None = None) -> dict[str, object]:
    """Inputs per second through an out-of-process decoder's ``decode_many`` (an exec
    client, docs/protocol.md, or a plug-in in its worker: ``utf8fuzz bench --exec``,
    ``--plugin``): ``inputs`` 64-byte inputs (:func:`exec_inputs`) in batches of each
    size, ``runs`` times. The figure is the median of the runs in wall-clock time
    (the work is split between two processes), with the harness's own CPU time per
    input beside it, and the worker's where ``worker_cpu`` tells its CPU seconds so
    far (None: not known). The first pass, untimed, warms the client up and counts
    the inputs it did not decode."""
    data = exec_inputs(inputs)
    failed = sum(not o.ok for o in decode_many(data))
    rows: list[dict[str, object]] = []
    for b in batches:
        rates, cpu, theirs = [], [], []
        for _ in range(runs):
            w0 = worker_cpu() if worker_cpu is not None else None
            t0, c0 = time.perf_counter(), time.process_time()
            for i in range(0, len(data), b):
                decode_many(data[i : i + b])
            rates.append(len(data) / (time.perf_counter() - t0))
            cpu.append((time.process_time() - c0) / len(data) * 1e6)
            w1 = worker_cpu() if worker_cpu is not None else None
            if w0 is not None and w1 is not None and w1 >= w0:  # (not restarted)
                theirs.append((w1 - w0) / len(data) * 1e6)
        # the harness's own CPU per input: steadier than wall clock on a busy machine
        rows.append({"batch": b, "inputs_per_s": round(statistics.median(rates)),
                     "harness_cpu_us": round(statistics.median(cpu), 1)})
        if theirs:
            rows[-1]["worker_cpu_us"] = round(statistics.median(theirs), 1)
    return {"inputs": len(data), "size": EXEC_INPUT_SIZE,
            "input": "64-byte windows of the invalid10 class (64 KiB, seed 2024)",
            "failed": failed, "runs": runs, "rows": rows, "machine": machine()}


def process_cpu(pid: int) -> float | None:
    """The CPU seconds (user and system) process ``pid`` has used, from
    ``/proc/PID/stat``; None where that cannot be read (not Linux, gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def pure_python_utf8(data: bytes) -> str:
    """A user's pure-Python decoder, to time a plug-in in its worker with
    (``utf8fuzz bench --plugin utf8fuzz.bench:pure_python_utf8``, docs/performance.md):
    the plain shape (``str``, or UnicodeDecodeError at the first maximal subpart), a
    byte at a time, as CPython's strict UTF-8 codec decodes."""
    out: list[int] = []
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            out.append(b)
            i += 1
            continue
        if 0xC2 <= b <= 0xDF:
            need, cp, lo, hi = 1, b & 0x1F, 0x80, 0xBF
        elif 0xE0 <= b <= 0xEF:
            need, cp = 2, b & 0x0F
            lo, hi = (0xA0, 0xBF) if b == 0xE0 else (0x80, 0x9F) if b == 0xED else (0x80, 0xBF)
        elif 0xF0 <= b <= 0xF4:
            need, cp = 3, b & 0x07
            lo, hi = (0x90, 0xBF) if b == 0xF0 else (0x80, 0x8F) if b == 0xF4 else (0x80, 0xBF)
        else:
            raise UnicodeDecodeError("utf-8", data, i, i + 1, "invalid start byte")
        j = i + 1
        for _ in range(need):
            if j >= n:
                raise UnicodeDecodeError("utf-8", data, i, j, "unexpected end of data")
            if not lo <= data[j] <= hi:
                raise UnicodeDecodeError("utf-8", data, i, j, "invalid continuation byte")
            cp, lo, hi = (cp << 6) | (data[j] & 0x3F), 0x80, 0xBF
            j += 1
        out.append(cp)
        i = j
    return "".join(map(chr, out))
