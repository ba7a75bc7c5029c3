#!/bin/bash
# compare.sh BEFORE AFTER: byte-compare every output of bench/identity/run.sh
fail=0
for f in "$1"/*.out; do
  if ! cmp -s "$f" "$2/$(basename "$f")"; then echo "DIFF $(basename "$f")"; fail=1; fi
done
[ $fail = 0 ] && echo "all $(ls "$1"/*.out | wc -l) outputs identical"
exit $fail
