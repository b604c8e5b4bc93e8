# utf8fuzz: `make fuzz` (the nightly-style job) and `make test` (the whole suite).
# Both set themselves up: system packages, .venv, and the package with its C
# extension. Targets further down are for developers.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
FUZZ_TIME ?= 60

.PHONY: fuzz test check setup lint clean fuzz-atheris fuzz-instrumented fuzz-seeds oss-fuzz-build

# Exit 1 from `utf8fuzz fuzz` means "new findings saved to corpus/": that is the
# job succeeding, so only 2 (usage) or worse fails `make fuzz`.
fuzz: setup
	$(VENV)/bin/utf8fuzz fuzz --time $(FUZZ_TIME) || [ $$? -eq 1 ]

# pytest-xdist: make check and make test run their tests on two workers; tests that
# share what one process makes once stay on one worker (tests/conftest.py, xdist
# groups). TEST_XDIST= (empty) runs make test in one process.
# Tests marked `alone` (they fail allocations of their whole process, xdist's threads
# included) run after, in one process, from the files that can hold them.
XDIST := -n 2 --dist loadgroup
TEST_XDIST ?= $(XDIST)
ALONE_FILES = $(shell grep -rlE "from tests(\.nomemory| import nomemory)" tests --include='*.py')

test: setup
	$(PY) -m ruff check src tests fuzz
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	if [ -z "$(TEST_XDIST)" ]; then $(PY) -m pytest -q; else \
	  $(PY) -m pytest -q $(TEST_XDIST) -m "not alone" && $(PY) -m pytest -q -m alone $(ALONE_FILES); fi

# The inner loop: lint, types, import contracts and the tests that start no process
# (tests/conftest.py marks the others `processes`; tests/README.md, "Tiers").
check: setup
	$(PY) -m ruff check src tests fuzz
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	UTF8FUZZ_CHECK_TIER=1 $(PY) -m pytest -q $(XDIST) -m "not processes and not exhaustive and not alone"
	UTF8FUZZ_CHECK_TIER=1 $(PY) -m pytest -q -m "alone and not processes and not exhaustive" $(ALONE_FILES)

setup: $(STAMP)

# The Go, Java and Rust peers' sources (and their builder): an edit rebuilds them.
PEER_SOURCES := $(wildcard src/utf8fuzz/decoders/peers/*.py src/utf8fuzz/decoders/peers/go/*.go src/utf8fuzz/decoders/peers/java/*.java src/utf8fuzz/decoders/peers/rust/*.rs)

$(STAMP): pyproject.toml setup.py $(wildcard src/utf8fuzz/*.h src/utf8fuzz/fast/*.c src/utf8fuzz/fast/*.h src/utf8fuzz/decoders/*.c src/utf8fuzz/decoders/*.h src/utf8fuzz/profiles/*.c src/utf8fuzz/profiles/*.h src/utf8fuzz/engine/*.c) $(PEER_SOURCES) scripts/system-deps.sh
	bash scripts/system-deps.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip "setuptools>=77" wheel  # asan-test builds with the venv's setuptools
	$(PY) -m pip install -q -e '.[test,peers,fuzz]'
	$(PY) -m utf8fuzz.decoders.peers.build  # each peer whose toolchain is here, into the venv
	touch $(STAMP)

lint: setup
	$(PY) -m ruff check src tests fuzz

clean:
	rm -rf build $(VENV) src/*.egg-info src/utf8fuzz/fast/*.so src/utf8fuzz/profiles/*.so \
	  src/utf8fuzz/decoders/*.so src/utf8fuzz/engine/*.so

# libFuzzer directly, on every core, one shared corpus (see fuzz/README.md); its
# corpus and crash files in corpus/work, as `utf8fuzz fuzz` keeps them, never in fuzz/.
# UTF8FUZZ_KEEP_GOING: save every finding and go on (a target run alone stops at one).
FUZZ_JOBS ?= $(shell nproc)
LIBFUZZER_WORK := -artifact_prefix=corpus/work/libfuzzer/ corpus/work/libfuzzer-corpus
fuzz-atheris: setup
	mkdir -p corpus/work/libfuzzer corpus/work/libfuzzer-corpus
	UTF8FUZZ_KEEP_GOING=1 $(PY) fuzz/differential.py -fork=$(FUZZ_JOBS) -ignore_crashes=1 \
	  -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=$(FUZZ_TIME) -max_len=64 \
	  -dict=fuzz/utf8.dict $(LIBFUZZER_WORK) corpus/seeds corpus/inputs

# The fast path built with clang, -fsanitize=fuzzer-no-link,address, into a copy of
# the package under build/instrumented (the tree's own build is left alone), with
# the ASan runtime Atheris ships preloaded, as Atheris documents for native code.
INSTR := build/instrumented
fuzz-instrumented: setup
	UTF8FUZZ_WITH_CLANG=1 bash scripts/system-deps.sh
	rm -rf $(INSTR) && mkdir -p $(INSTR) corpus/work/libfuzzer corpus/work/libfuzzer-corpus
	cp -r src/utf8fuzz $(INSTR)/
	CC=clang LDSHARED="clang -shared" CFLAGS="-fsanitize=fuzzer-no-link,address -g -O1" \
	  $(PY) setup.py -q build_ext --build-temp $(INSTR)/tmp --build-lib $(INSTR)
	ASAN_OPTIONS=detect_leaks=0,allocator_may_return_null=1 \
	  LD_PRELOAD="$$($(PY) -c 'import atheris; print(atheris.path())')/asan_with_fuzzer.so" \
	  UTF8FUZZ_KEEP_GOING=1 PYTHONPATH=$(INSTR) $(PY) fuzz/differential.py \
	  -max_total_time=$(FUZZ_TIME) -max_len=64 -dict=fuzz/utf8.dict $(LIBFUZZER_WORK) \
	  corpus/seeds corpus/inputs

# Regenerate corpus/seeds and fuzz/utf8.dict from utf8fuzz.engine.boundaries.
fuzz-seeds: setup
	$(PY) -m utf8fuzz.engine.boundaries .

# The fuzz targets packed as OSS-Fuzz and ClusterFuzzLite pack them (PyInstaller, by
# .clusterfuzzlite/build.sh), outside Docker: $(OSS_FUZZ_DIR)/out/<target> runs one
# (fuzz/README.md). OSS_FUZZ_TARGETS="differential" packs only those (~1 min each).
OSS_FUZZ_DIR ?= build/oss-fuzz
OSS_FUZZ_TARGETS ?=
oss-fuzz-build: setup
	$(PY) -c 'import PyInstaller' 2>/dev/null || $(PY) -m pip install -q -e '.[ossfuzz]'
	bash scripts/oss-fuzz-build.sh $(OSS_FUZZ_DIR) $(OSS_FUZZ_TARGETS)

# The fast path's tests under AddressSanitizer and UndefinedBehaviorSanitizer: the
# extension built with gcc -fsanitize=address,undefined into a copy of the package
# under build/asan (the tree's own build is left alone), libasan preloaded since
# python itself is not instrumented. Any UB report aborts the test run.
# PYTHONMALLOC=malloc: pymalloc carves small objects (most bytes objects under
# test) out of its own 256 KiB arenas, so an over-read past one lands in the same
# arena and ASan never sees it; with malloc each object is its own ASan allocation.
ASAN := build/asan
.PHONY: asan-test
asan-test: setup
	rm -rf $(ASAN) && mkdir -p $(ASAN) && cp -r src/utf8fuzz $(ASAN)/ && find $(ASAN) -name '*.so' -delete
	CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g" \
	  LDFLAGS="-fsanitize=address,undefined" \
	  $(PY) setup.py -q build_ext -j 2 --build-temp $(ASAN)/tmp --build-lib $(ASAN)
	PYTHONMALLOC=malloc ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  UTF8FUZZ_EXPECT_SANITIZED=$(ASAN) \
	  LD_PRELOAD="$$(gcc -print-file-name=libasan.so)" PYTHONPATH=$(ASAN) \
	  $(PY) -m pytest -q -p no:cacheprovider $(ASAN_PYTEST_ARGS) tests/fast tests/decoders/test_icu.py tests/decoders/test_iconv.py \
	  tests/decoders/test_c_glue_out_of_memory.py tests/decoders/test_cpython.py \
	  tests/decoders/test_tiling.py tests/profiles/test_walk.py tests/engine/test_judge.py \
	  tests/engine/test_screening_loop.py \
	  tests/loop/test_coverage.py::test_feed_walk_is_the_loop_over_feature_ids \
	  tests/loop/test_coverage.py::test_two_coverages_fed_by_one_walker_keep_their_own_counters

# The fuzz loop's executions per CPU-second on a fixed input stream, then issue
# 27's figures (every decoder, Hypothesis, a plug-in in its worker, inputs to find
# the planted bugs), one line each (docs/performance.md, "How to measure").
# BENCH_LOOP_ARGS="--compare ../other/src" adds another tree, in pairs;
# BENCH_LOOP_PARTS=none leaves issue 27's figures out (or names some of them:
# all-decoders,hypothesis,structured,plugin,planted);
# BENCH_LOOP_CALLGRIND=1 adds the instructions per input (valgrind: the longest
# part by far, some minutes per tree).
BENCH_LOOP_ARGS ?=
BENCH_LOOP_PARTS ?= all
BENCH_LOOP_CALLGRIND ?=
.PHONY: bench-loop
bench-loop: setup
	$(VENV)/bin/utf8fuzz bench --loop --parts $(BENCH_LOOP_PARTS) $(if $(BENCH_LOOP_CALLGRIND),--callgrind) $(BENCH_LOOP_ARGS)
