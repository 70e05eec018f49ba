#!/usr/bin/env bash
# Studies over MPI processes against the one-process run (issue 14 items 6-7), every registered
# algorithm among them:
#  1. a federated study (server on rank 0, clients on the others) and 2. a sharded ordinary study
#     give the one-process summary.json values and curves.csv bit for bit;
#  3. a lost client update is reported with its client and round, every process exits non-zero
#     and nothing is written to --out;
#  4. a client process that dies ends the whole run within seconds, nothing written.
# Usage: check_mpi_study.sh OMKL MPIEXEC WORK_DIR
set -uo pipefail
omkl=$1; mpiexec=$2; work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
mpi() { "$mpiexec" --allow-run-as-root --oversubscribe "$@"; }
# summary.json without the fields that legitimately differ (times, the process count, the device,
# the command line).
values() { grep -v -e '"seconds_mean"' -e '"seconds_std"' -e '"client_seconds_per_client"' -e '"processes"' -e '"device"' -e '"command"' "$1"; }

"$omkl" gen --kind dataset2 --samples 700 --out stream.csv >/dev/null || fail "gen"

fed=(study --preset fed-pofmkl --rounds 50 --data stream.csv --seeds 3
     --algo pof-mkl:M=25 --algo vm-kofl --algo em-kofl --algo em-kofl:variant=global_only
     --algo perfedavg --algo ofskl:local_steps=5 --algo ofskl --algo ofmkl-avg)
"$omkl" "${fed[@]}" --out one >/dev/null || fail "one-process federated study"
mpi -np 3 "$omkl" "${fed[@]}" --out three >/dev/null || fail "federated study on 3 processes"
grep -q '"processes": 3' three/summary.json || fail "summary.json does not record 3 processes"
diff <(values one/summary.json) <(values three/summary.json) || fail "federated summary differs"
cmp one/curves.csv three/curves.csv || fail "federated curves differ"

# Every registered algorithm of the other families (`omkl list`: name, family, summary), with its
# defaults, dealt out to the ranks; m-forgetron classifies, so it has a study of its own below.
every=()
while read -r name family _; do
  case "$family" in federated) ;; *) [ "$name" = m-forgetron ] || every+=(--algo "$name") ;; esac
done < <("$omkl" list | sed -n '2,/^presets:/p' | grep '^  ')
[ "${#every[@]}" -ge 40 ] || fail "omkl list named only $(( ${#every[@]} / 2 )) algorithms"
plain=(study --data synthetic:dataset2:300 --seeds 5 --algo raker:D=8 --algo adaraker:D=8 --algo 'rf-ogd:D=8,eta=0.1|0.5'
       "${every[@]}")
"$omkl" "${plain[@]}" --out plain-one >/dev/null || fail "one-process study"
mpi -np 2 "$omkl" "${plain[@]}" --out plain-two >/dev/null || fail "sharded study on 2 processes"
diff <(values plain-one/summary.json) <(values plain-two/summary.json) || fail "sharded summary differs"
grep -q '"grids"' plain-two/summary.json || fail "the sharded study lost its grid"
cmp plain-one/curves.csv plain-two/curves.csv || fail "sharded curves differ"
printf 'a,b,y\n' > classes.csv
for i in $(seq 1 120); do echo "$(( i % 7 )).5,$(( i % 3 )),$(( (i % 5 > 1) * 2 - 1 ))"; done >> classes.csv
classify=(study --data classes.csv --seeds 3 --algo m-forgetron --algo oks++:loss=logistic --algo raker:loss=logistic,D=8)
"$omkl" "${classify[@]}" --out classify-one >/dev/null || fail "one-process classification study"
mpi -np 2 "$omkl" "${classify[@]}" --out classify-two >/dev/null || fail "sharded classification study"
diff <(values classify-one/summary.json) <(values classify-two/summary.json) || fail "sharded classification summary differs"

start=$(date +%s)
mpi -np 3 -x OMKL_FEDERATED_DROP_CLIENT=4 -x OMKL_FEDERATED_DROP_ROUND=7 \
  "$omkl" "${fed[@]}" --message-timeout 5 --out dropped >out.txt 2>err.txt
code=$?
[ "$code" -ne 0 ] || fail "a lost update did not fail the run"
grep -q "no update from client 4 (rank 1) for round 7" err.txt || { cat err.txt >&2; fail "the lost update is not named"; }
[ ! -e dropped ] || fail "a failed run left dropped/"

mpi -np 3 -x OMKL_FEDERATED_KILL_RANK=2 -x OMKL_FEDERATED_KILL_ROUND=5 \
  "$omkl" "${fed[@]}" --message-timeout 5 --out killed >out.txt 2>err.txt
code=$?
[ "$code" -ne 0 ] || fail "a dead client process did not fail the run"
[ ! -e killed ] || fail "a failed run left killed/"
elapsed=$(( $(date +%s) - start ))
[ "$elapsed" -le 60 ] || fail "the failing runs took ${elapsed} s"

mpi -np 2 "$omkl" list >out.txt 2>err.txt && fail "omkl list under mpirun should be refused"
grep -q "only \`omkl study\` runs over several processes" err.txt || { cat err.txt >&2; fail "no message for list"; }
echo "mpi studies: OK"
