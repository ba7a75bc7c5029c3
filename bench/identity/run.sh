#!/bin/bash
# Outputs of why --json / stats --json / stats --json --no-findings over every corpus, from the
# inspector source tree SRC (default: this checkout), into OUTDIR; no result cache, empty token cache.
#   SRC=/tmp/main-src bench/identity/run.sh /tmp/before   (git archive main | tar -x -C /tmp/main-src)
#   bench/identity/run.sh /tmp/after && bench/identity/compare.sh /tmp/before /tmp/after
set -u
out=$1; mkdir -p "$out"
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
P=$root/.venv/bin/python
SRC=${SRC:-$root}
export CONTEXT_INSPECTOR_NO_RESULT_CACHE=1
run() { # name args...
  local name=$1; shift
  local d; d=$(mktemp -d)
  CONTEXT_INSPECTOR_CACHE_DIR=$d $P bench/identity/runsrc.py "$SRC" "$@" > "$out/$name.out" 2> "$out/$name.err"
  echo "rc=$?" >> "$out/$name.out"
  rm -rf "$d"
}
i=0
for src in sample_dumps /work/shared/reference/openjiuwen /work/shared/reference/standard \
    /work/shared/reference/parity tests/data bench/out/folder-5000-50-tiny; do
  i=$((i+1))
  run why$i why --json $src
  run stats$i stats --json $src
  run statsnf$i stats --json --no-findings $src
done
run statsnf_big stats --json --no-findings bench/out/folder-5000-50
