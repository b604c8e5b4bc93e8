#!/bin/bash
# Runs .clusterfuzzlite/build.sh outside Docker, as OSS-Fuzz's base-builder-python
# image runs it: from the checkout, with $OUT, and with a compile_python_fuzzer
# that does what OSS-Fuzz's does (infra/base-images/base-builder/compile_python_fuzzer):
# PyInstaller packs a target, with the project and its dependencies, into the
# one-file executable $OUT/<name>.pkg (not executable), beside a wrapper script
# $OUT/<name> that runs it (what OSS-Fuzz and ClusterFuzzLite run).
#
#   scripts/oss-fuzz-build.sh DIR [TARGET...]
#
# builds into DIR/out (DIR/work holds PyInstaller's work files); TARGETs are
# fuzz/*.py names without .py, default all of them, as OSS-Fuzz does.
# Where it differs from the image, and why:
# - build.sh's `pip3 install .[fuzz]` does nothing: $PYTHON's environment has the
#   package already (the venv's editable install, its C extensions built), and
#   installing over it would replace that install;
# - PyInstaller's work and spec files go under DIR/work, not $SRC or the current
#   directory (fuzz/ in the checkout);
# - the wrapper preloads $OUT/sanitizer_with_fuzzer.so only if it exists (the image
#   provides it; here the C extensions are not built with a sanitizer);
# - $EXTRA_PYINSTALLER_ARGS (split on white space) are added to PyInstaller's
#   arguments: tests pack a planted decoder with it;
# - with TARGETs, the others' dictionaries and seed zips are removed: $OUT holds
#   what was built, nothing else;
# - without a `zip` command, Python's zipfile packs the seeds (the image has zip);
# - PyInstaller's cache is under DIR/work too ($PYINSTALLER_CONFIG_DIR), not ~/.cache.
# Needs: PyInstaller in $PYTHON's environment (the `ossfuzz` extra).
set -eu

if [ $# -lt 1 ]; then
  echo "usage: scripts/oss-fuzz-build.sh DIR [TARGET...]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
dir=$(cd "$1" && pwd)
shift
PYTHON=${PYTHON:-$root/.venv/bin/python}
case $PYTHON in  # absolute, symlinks kept (a venv's python is one)
  /*) ;;
  */*) PYTHON=$PWD/$PYTHON ;;
  *) PYTHON=$(command -v "$PYTHON" || echo "$PYTHON") ;;
esac
if ! "$PYTHON" -c 'import PyInstaller, atheris, utf8fuzz' 2>/dev/null; then
  echo "oss-fuzz-build: $PYTHON cannot import PyInstaller, atheris and utf8fuzz;" \
       "make oss-fuzz-build installs them" >&2
  exit 2
fi
for t in "$@"; do
  if [ ! -f "$root/fuzz/$t.py" ]; then
    echo "oss-fuzz-build: no fuzz target fuzz/$t.py" >&2
    exit 2
  fi
done

rm -rf "$dir/out" "$dir/work" "$dir/bin"
mkdir -p "$dir/out" "$dir/work" "$dir/bin"

cat > "$dir/bin/pip3" <<'EOF'
#!/bin/sh
echo "oss-fuzz-build: skipped: pip3 $*  (the package is installed already)"
EOF

cat > "$dir/bin/compile_python_fuzzer" <<'EOF'
#!/bin/bash
set -eu
fuzzer_path=$1
shift
name=$(basename -s .py "$fuzzer_path")
if [ -n "$ONLY_TARGETS" ] && [[ " $ONLY_TARGETS " != *" $name "* ]]; then
  echo "oss-fuzz-build: $name not asked for, not built"
  exit 0
fi
work=$WORK/pyfuzzworkdir/$name
rm -rf "$work"
mkdir -p "$work"
echo "oss-fuzz-build: packing $fuzzer_path into $OUT/$name.pkg"
# shellcheck disable=SC2086  # EXTRA_PYINSTALLER_ARGS is a list of words
"$PYTHON" -m PyInstaller --distpath "$OUT" --workpath "$work" --specpath "$work" \
  --noconfirm --log-level WARN --onefile --name "$name.pkg" "$@" \
  $EXTRA_PYINSTALLER_ARGS "$fuzzer_path"
chmod -x "$OUT/$name.pkg"
cat > "$OUT/$name" <<WRAPPER
#!/bin/sh
# LLVMFuzzerTestOneInput for fuzzer detection.
this_dir=\$(dirname "\$0")
chmod +x "\$this_dir/$name.pkg"
if [ -f "\$this_dir/sanitizer_with_fuzzer.so" ]; then
  export LD_PRELOAD="\$this_dir/sanitizer_with_fuzzer.so"
fi
ASAN_OPTIONS=\$ASAN_OPTIONS:symbolize=1:external_symbolizer_path=\$this_dir/llvm-symbolizer:detect_leaks=0 \\
  "\$this_dir/$name.pkg" "\$@"
WRAPPER
chmod +x "$OUT/$name"
EOF
chmod +x "$dir/bin/pip3" "$dir/bin/compile_python_fuzzer"

if ! command -v zip >/dev/null; then  # build.sh runs `zip -q ARCHIVE FILE...`
  cat > "$dir/bin/zip" <<'EOF'
#!/bin/sh
[ "$1" = -q ] && shift
exec "$PYTHON" -m zipfile -c "$@"
EOF
  chmod +x "$dir/bin/zip"
fi

cd "$root"
PATH="$dir/bin:$PATH" OUT="$dir/out" WORK="$dir/work" PYTHON="$PYTHON" \
  ONLY_TARGETS="$*" EXTRA_PYINSTALLER_ARGS="${EXTRA_PYINSTALLER_ARGS:-}" \
  PYINSTALLER_CONFIG_DIR="${PYINSTALLER_CONFIG_DIR:-$dir/work/pyinstaller-config}" \
  ASAN_OPTIONS="${ASAN_OPTIONS:-}" SANITIZER=address \
  bash -eu "$root/.clusterfuzzlite/build.sh"  # as OSS-Fuzz's compile runs it, less -x
for dict in "$dir"/out/*.dict; do  # build.sh packs these for every target
  name=$(basename "$dict" .dict)
  [ -f "$dir/out/$name" ] || rm -f "$dict" "$dir/out/${name}_seed_corpus.zip"
done
echo "oss-fuzz-build: built into $dir/out"
