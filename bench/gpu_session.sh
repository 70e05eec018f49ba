#!/usr/bin/env bash
# One GPU session's checks and measurements for the CUDA backend (issue 4), in one command, so
# that a lent machine is used for what needs it and nothing else.
#
#   bench/gpu_session.sh BIN_DIR DATA_DIR OUT_DIR
#
# BIN_DIR holds a CUDA-enabled build's `omkl` and `omkl_tests` (and any shared libraries they
# need, e.g. libfmt); DATA_DIR holds naval_journal.csv and airfoil.csv (naval.csv: federated round). Everything lands in
# OUT_DIR as at most eight files (the device tool's limit):
#   device.txt     nvidia-smi and the build's CUDA runtime
#   tests.txt      the CUDA test suite with the native (default) and the generic per-step path
#                  (each run covers both trajectory layouts: the tests switch OMKL_CUDA_TRAJECTORIES)
#   sanitizer.txt  compute-sanitizer memcheck over the CUDA tests of the trajectory and per-step
#                  paths (PARTS=sanitizer) and, appended, over the resident walks, the federated
#                  rounds and the device draws, then racecheck and synccheck over the resident
#                  walks on the per-step seam, whose tests run both OMKL_CUDA_WALK_PAIRS modes
#                  (PARTS=sanitizer_optin; the name is older than these paths' defaults); each
#                  part has its own 540 s, so that one call of the device tool holds either
#   walk.txt       the graph family's resident walk in each launch shape (OMKL_CUDA_WALK_PLAN,
#                  OMKL_CUDA_WALK_THREADS, OMKL_CUDA_WALK_PAIRS) and its phase clock, then Raker's
#                  lean trajectory step against the generic one (PARTS=walk); and, appended
#                  (PARTS=projections), Raker (lean) with in-kernel and GEMM projections over 20-1 000 seeds
#   bench.json     every `omkl bench` matrix (see below), keyed by its file name
#   bench.txt      the printed tables of every benchmark, in order
# Benchmarks: Naval (T = 11 934), jmlr23-76 dictionary, D = 50, paper profile:
#   GPU: Raker at 1, 20, 100, 1000 seeds and AdaRaker at 1, 20, 100 (default layouts); Raker in
#        float at 20 and 1000, and with OMKL_CUDA_PROJECTIONS=gemm at 100 and 1000; the
#        OMKL_TIMING breakdown of Raker at 20 and 1000 and AdaRaker at 20 and 100; AdaRaker again
#        with OMKL_CUDA_TRAJECTORIES=per_slot; OMKL-GF/SFG/SFG-R at 1 seed on the generic
#        per-step path and at 1, 20, 100 seeds on the native one and as the resident walk.
#   CPU: the same algorithms at 100 seeds on all cores (the speed-up baseline of issue 4).
#   families.txt   the federated and bandit families (PARTS=families): POF-MKL at 20 and 1 000
#                  draws on every GPU round path, eM-KOFL, PerFedAvg, RF-OKS++/RF-IOKS, OKS++/IOKS
#                  host against resident, each against all CPU cores (wall time of `omkl study`)
#   draws.txt      OMKL_CUDA_DRAWS=device (frequency matrices drawn on the GPU, the default) against
#                  host draws: Raker at 1, 20, 100, 1000 seeds and AdaRaker at 20, 100, alternated,
#                  and the OMKL_TIMING construction breakdown of both at 20 and 1000 seeds; appended
#                  (PARTS=bandit_draws), RF-OKS++'s 1 000-repetition study with its Omega drawn on
#                  the host and on the device (OMKL_CUDA_BANDIT_DRAWS), alternated, and on the CPU
#   fresh.txt      sanitizers over the lean step and the team plan, the bandit walk's pair shapes, and
#                  the CPU side of the ratio targets (PARTS=fresh)
#                  Appended to walk.txt (PARTS=sums): the graph walk's sums and draws in the teams'
#                  tree order (OMKL_WALK_SUMS=tree, the GPU block's default): compute-sanitizer over
#                  its test, then ordered against tree alternated at 20 and 100 seeds, each one's phase clock;
#                  and (PARTS=state) each replicate's state in shared memory (OMKL_WALK_STATE=local)
#                  against device memory, likewise
# PARTS (default "tests sums walk projections sanitizer sanitizer_optin draws bench families"; `fresh`, run
# once for the fourth sitting's shapes, on request) picks what runs.
# SESSION_BUDGET_S (default 0: none) bounds the whole call: a part that would not fit the time
# left by its estimate below is skipped and named on stderr, so that every part fits one device
# call in the order of the file. From the pieces timed on an H200 (2026-11-26) they take 8–9
# minutes in all (tests ≈ 15 s, walk ≈ 70 s, fresh ≈ 70 s, bench ≈ 120 s), so a 560 s call holds
# most of them and names what it skipped:
#   SESSION_BUDGET_S=560 bash bench/gpu_session.sh .gpu/bin .gpu/data $OUT   (timeout_s 600)
# and the device tool returns the files of the parts that ran.
set -uo pipefail
PARTS=${PARTS:-tests sums walk projections sanitizer sanitizer_optin draws bench families}
SESSION_BUDGET_S=${SESSION_BUDGET_S:-0}
session_start=$(date +%s)
session_left() { echo $(( SESSION_BUDGET_S - ($(date +%s) - session_start) )); }
cap() {  # cap LIMIT_S: LIMIT_S, or the session's time left where that is less (at least 1)
  local limit=$1
  if [ "$SESSION_BUDGET_S" -gt 0 ] && [ "$(session_left)" -lt "$limit" ]; then limit=$(session_left); fi
  [ "$limit" -lt 1 ] && limit=1
  echo "$limit"
}
want() {  # want PART ESTIMATE_S: PART was asked for and fits the session's time left
  [[ " $PARTS " == *" $1 "* ]] || return 1
  [ "$SESSION_BUDGET_S" -gt 0 ] || return 0
  if [ "$(session_left)" -lt "$2" ]; then
    echo "gpu_session: skipped $1 (needs about $2 s, $(session_left) s left)" >&2
    return 1
  fi
}

if [ $# -ne 3 ]; then
  echo "usage: $0 BIN_DIR DATA_DIR OUT_DIR" >&2
  exit 2
fi
BIN=$(cd "$1" && pwd)
DATA=$(cd "$2" && pwd)
OUT=$3
mkdir -p "$OUT"
# The JSON matrices, folded into bench.json at the end (the device tool brings back 8 files).
JSON="$OUT/.json"
mkdir -p "$JSON"
export LD_LIBRARY_PATH="$BIN:${LD_LIBRARY_PATH:-}"
NAVAL="$DATA/naval_journal.csv"
# The graph family's GPU runs (issue 16's graph targets): OMKL-GF / SFG / SFG-R on Naval, M = 10.
graph=(--data "$NAVAL" --preset jmlr23-graph --backend cuda --algo omkl-gf:M=10 --algo omkl-sfg:M=10
       --algo omkl-sfg-r:M=10)
for f in "$BIN/omkl" "$BIN/omkl_tests" "$NAVAL"; do
  [ -e "$f" ] || { echo "missing $f" >&2; exit 2; }
done

{
  nvidia-smi
  echo
  "$BIN/omkl" bench --data "$DATA/airfoil.csv" --algo raker --seeds 1 --repeat 1 --backend cuda 2>&1 | head -3
} > "$OUT/device.txt" 2>&1

# A failing parity test's own messages (what differed, where) come before gtest's summary: keep
# every failure with the lines after it, then the summary.
# Each run bounded: a kernel that waits at a barrier some of its threads never reach would
# otherwise hold the whole call (exit 124 says so).
want tests 80 && {
  for path in native generic; do
    echo "== OMKL_CUDA_STEP_SELECTED=$path"
    OMKL_CUDA_STEP_SELECTED=$path timeout "$(cap 150)" "$BIN/omkl_tests" --gtest_filter='Cuda*' > "$OUT/.tests.log" 2>&1
    echo "== exit $?"
    grep -E -A8 'Failure|exception' "$OUT/.tests.log" | head -300
    grep -E '^\[ +(OK|FAILED|SKIPPED) +\]' "$OUT/.tests.log"
    tail -15 "$OUT/.tests.log"
  done
  rm -f "$OUT/.tests.log"
} > "$OUT/tests.txt"

# The graph family's resident walk (issue 16's 20-seed target) in each of its launch shapes (the
# default since the third H200 lease: block, auto, warp): plan and learn by thread 0 or by the block's threads (OMKL_CUDA_WALK_PLAN,
# the team program of core/resident_team.h), blocks of 128 or 512 threads or `auto`
# (OMKL_CUDA_WALK_THREADS), a step with fewer pairs than warps by the whole block
# (OMKL_CUDA_WALK_PAIRS=auto); then thread 0's clock per phase (plan, features, learn, update)
# for the default and the widest shape. Their parity: CudaTest.ResidentGraphWalkEqualsTheHostPath.
# OMKL_WALK_SUMS is left at its default (auto): the block shapes sum in the tree order, the thread
# shapes in index order (the `sums` part compares the two orders on one shape).
want walk 130 && {
  for shape in thread:128:warp block:128:warp thread:512:warp block:512:warp block:auto:warp block:512:auto; do
    IFS=: read -r plan threads pairs <<< "$shape"
    echo "== GPU: graph-aided resident walk, OMKL_CUDA_WALK_PLAN=$plan OMKL_CUDA_WALK_THREADS=$threads OMKL_CUDA_WALK_PAIRS=$pairs"
    OMKL_CUDA_WALK_PLAN=$plan OMKL_CUDA_WALK_THREADS=$threads OMKL_CUDA_WALK_PAIRS=$pairs timeout "$(cap 60)" \
      "$BIN/omkl" bench "${graph[@]}" --repeat 3 --seeds 1 20 --json "$JSON/walk_${plan}_${threads}_${pairs}.json"
  done
  for shape in thread:128 block:512; do
    IFS=: read -r plan threads <<< "$shape"
    echo "== GPU: OMKL_TIMING=1, a resident walk's step by phase, OMKL_CUDA_WALK_PLAN=$plan OMKL_CUDA_WALK_THREADS=$threads"
    OMKL_CUDA_WALK_PLAN=$plan OMKL_CUDA_WALK_THREADS=$threads OMKL_TIMING=1 timeout "$(cap 40)" \
      "$BIN/omkl" bench "${graph[@]}" --repeat 1 --seeds 1 20 2>&1 | grep -v "cuda backend set-up"
  done
  echo "== GPU: the default shape again at 100 seeds, then the widest"
  for plan_threads in thread:128 block:512 block:auto; do
    IFS=: read -r plan threads <<< "$plan_threads"
    echo "-- OMKL_CUDA_WALK_PLAN=$plan OMKL_CUDA_WALK_THREADS=$threads"
    OMKL_CUDA_WALK_PLAN=$plan OMKL_CUDA_WALK_THREADS=$threads timeout "$(cap 40)" \
      "$BIN/omkl" bench "${graph[@]}" --repeat 3 --seeds 100
  done
  # Raker's lean trajectory step (the default; parity in tests.txt,
  # CudaTest.LeanTrajectoryStepMatchesTheGenericStepAndTheCpu) against the generic step
  # (OMKL_CUDA_TRAJECTORIES=generic), alternated: 20 seeds (GEMM projections) and 100, 1 000
  # (in-kernel projections).
  echo "== GPU: Raker, generic against lean trajectory step (alternated)"
  for trajectories in generic "" generic ""; do
    echo "-- OMKL_CUDA_TRAJECTORIES=${trajectories:-(default: lean)}"
    OMKL_CUDA_TRAJECTORIES=$trajectories timeout "$(cap 40)" "$BIN/omkl" bench --data "$NAVAL" --normalize minmax \
      --repeat 3 --backend cuda --algo raker:dict=jmlr23-76 --seeds 20 100 1000
  done
} > "$OUT/walk.txt" 2>&1

# RF-OKS++ (elevators, bandit-oks, square loss) at 100 and 1 000 repetitions with a warp per pair
# and with the whole block per pair (OMKL_CUDA_WALK_PAIRS=warp|auto; unset, the bandit walk takes
# the whole block), alternated: the walk's phase clock and the study's wall time, each run bounded
# by LIMIT_S (or the session's time left).
bandit_pair_modes() {  # bandit_pair_modes LIMIT_S
  [ -e "$DATA/elevators.csv" ] || return 0
  local reps pairs s
  for reps in 100 1000; do
    for pairs in warp auto warp auto; do
      echo "-- rf-oks++, $reps repetitions, OMKL_CUDA_WALK_PAIRS=$pairs"
      s=$(date +%s%N)
      OMKL_CUDA_WALK_PAIRS=$pairs OMKL_TIMING=1 timeout "$(cap "$1")" "$BIN/omkl" study --preset bandit-oks --loss square \
        --data "$DATA/elevators.csv" --backend cuda --algo rf-oks++ --seeds $reps --out "$OUT/.study" 2>&1 \
        | grep -E "resident walk|rf-oks"
      echo "wall $(( ($(date +%s%N) - s) / 1000000 )) ms"
      rm -rf "$OUT/.study"
    done
  done
}

# The fourth sitting's first device run of what had been built without one (PARTS=fresh, after `walk`):
# compute-sanitizer over the lean trajectory step's test (memcheck) and the team plan's test
# (synccheck, memcheck, racecheck); the random-feature bandit walk with a warp per pair against
# the whole block per pair (OMKL_CUDA_WALK_PAIRS) at 100 and 1 000 repetitions, alternated, with
# the phase clock; and the CPU baselines of the ratio targets (Raker and the graph family, all
# cores, 100 seeds), so that one call gives both sides of each ratio.
want fresh 150 && {
  if command -v compute-sanitizer > /dev/null; then
    for case in memcheck:CudaTest.LeanTrajectory* synccheck:CudaTest.ResidentGraphTeam* \
                memcheck:CudaTest.ResidentGraphTeam* racecheck:CudaTest.ResidentGraphTeam*; do
      tool=${case%%:*} filter=${case#*:}
      echo "== compute-sanitizer $tool: $filter"
      timeout "$(cap 60)" compute-sanitizer --tool "$tool" "$BIN/omkl_tests" --gtest_filter="$filter" 2>&1 | tail -6
      echo "== exit ${PIPESTATUS[0]}"
    done
  else
    echo "compute-sanitizer not found"
  fi
  bandit_pair_modes 40
  echo "== CPU, all cores: Raker and the graph family, 100 seeds"
  timeout "$(cap 60)" "$BIN/omkl" bench --data "$NAVAL" --normalize minmax --repeat 3 --backend cpu \
    --algo raker:dict=jmlr23-76 --seeds 100
  timeout "$(cap 60)" "$BIN/omkl" bench --data "$NAVAL" --preset jmlr23-graph --repeat 3 --backend cpu \
    --algo omkl-gf:M=10 --algo omkl-sfg:M=10 --algo omkl-sfg-r:M=10 --seeds 100
} > "$OUT/fresh.txt" 2>&1

# One switch of the graph walk against another value (PARTS=sums, state): the test that checks
# it under compute-sanitizer's three tools, then the walk with each value alternated twice at 20
# and 100 seeds (issue 16's graph targets), and each one's phase clock.
#   compare_graph_walk SWITCH TEST_FILTER VALUE_A VALUE_B
compare_graph_walk() {
  local switch=$1 filter=$2 a=$3 b=$4 value tool
  if command -v compute-sanitizer > /dev/null; then
    for tool in synccheck racecheck memcheck; do
      echo "== compute-sanitizer $tool: $filter"
      timeout "$(cap 60)" compute-sanitizer --tool "$tool" "$BIN/omkl_tests" --gtest_filter="$filter" 2>&1 | tail -4
      echo "== exit ${PIPESTATUS[0]}"
    done
  fi
  for value in "$a" "$b" "$a" "$b"; do
    echo "== GPU: graph-aided resident walk, $switch=$value"
    env "$switch=$value" timeout "$(cap 40)" "$BIN/omkl" bench "${graph[@]}" --repeat 3 --seeds 20 100 \
      --json "$JSON/${switch}_$value.json"
  done
  for value in "$a" "$b"; do
    echo "== GPU: OMKL_TIMING=1, the step by phase, $switch=$value"
    env "$switch=$value" OMKL_TIMING=1 timeout "$(cap 30)" "$BIN/omkl" bench "${graph[@]}" --repeat 1 --seeds 20 2>&1 \
      | grep -v "cuda backend set-up"
  done
}

# The graph walk's tree-order sums (PARTS=sums; core/team_reductions.h; the default on a GPU block,
# OMKL_WALK_SUMS=auto, since the H200 sitting of 2026-11-27): the team plan's test (thread 0
# against the block in index order; the block's tree order against the host's lanes), index-order
# against tree-order sums.
want sums 100 && compare_graph_walk OMKL_WALK_SUMS 'CudaTest.ResidentGraphTeam*' ordered tree >> "$OUT/walk.txt" 2>&1

# Each replicate's state in its block's shared memory (PARTS=state; OMKL_WALK_STATE=local, opt-in
# until measured, built 2026-12-02 without a GPU): the state in device memory (arena) against
# shared memory (local). If local is the faster and CudaTest.ResidentGraphLocalStateEqualsTheArena
# passes, local is the default to take.
want state 100 && compare_graph_walk OMKL_WALK_STATE 'CudaTest.ResidentGraphLocalState*' arena local \
  >> "$OUT/walk.txt" 2>&1

# Raker's projections with the lean step (PARTS=projections): the in-kernel projections'
# threshold (cuda_rf_backend.cu: in-kernel from 32 warps of trajectories per multiprocessor) was
# set on an H100 with the generic step; with the lean step one GEMM-projection run at 100 seeds
# was faster (83.8 against 91.5-119.6 ms, H200, 2026-11-26). auto, gemm and fused alternated
# twice over 20-1 000 seeds, to place the crossing.
want projections 60 && {
  for round in 1 2; do
    for projections in auto gemm fused; do
      echo "== GPU: Raker (lean), OMKL_CUDA_PROJECTIONS=$projections (round $round)"
      OMKL_CUDA_PROJECTIONS=$projections timeout "$(cap 40)" "$BIN/omkl" bench --data "$NAVAL" --normalize minmax \
        --repeat 3 --backend cuda --algo raker:dict=jmlr23-76 --seeds 20 50 100 200 500 1000 | grep raker
    done
  done
} >> "$OUT/walk.txt" 2>&1

# The resident walks', federated rounds' and device draws' tests apart from the others, so that
# each half fits one call's time under the sanitizer.
OPTIN='CudaTest.Resident*:CudaTest.Federated*:CudaTest.Native*:CudaTest.DeviceDraws*:CudaTest.AlgorithmsOnDeviceDrawn*:CudaTest.BanditDeviceDrawn*'
sanitize() {  # sanitize TOOL FILTER LABEL LIMIT_S
  if command -v compute-sanitizer > /dev/null; then
    echo "== compute-sanitizer $1: $3"
    timeout "$(cap "$4")" compute-sanitizer --tool "$1" "$BIN/omkl_tests" --gtest_filter="$2" 2>&1
    echo "== exit $?"
  else
    echo "compute-sanitizer not found"
  fi
}
want sanitizer 120 && sanitize memcheck "Cuda*:-$OPTIN" "trajectory and per-step paths" 540 >> "$OUT/sanitizer.txt"
# racecheck over the graph walk's own test takes minutes; the replicated streams walk omkl-sfg-r.
SEAM='CudaTest.ResidentBandit*:CudaTest.ResidentEmKofl*:CudaTest.ResidentPerFedAvg*:CudaTest.Replicated*'
want sanitizer_optin 120 && {
  sanitize memcheck "$OPTIN" "resident walks, federated rounds, device draws" 300
  sanitize racecheck "$SEAM" "resident walks on the per-step seam" 150
  sanitize synccheck "$SEAM" "resident walks on the per-step seam" 80
  # The graph program's team plan (OMKL_CUDA_WALK_PLAN=block; the test pins it and 256 threads):
  # synccheck for a barrier some threads miss, memcheck for a copy staged past its end, racecheck
  # for the shared word and copies. Its lanes' hand-offs through global memory, which racecheck
  # does not see, are checked on the CPU (ResidentGraphTest.ATeamOfLanes… under ThreadSanitizer).
  for tool in synccheck memcheck racecheck; do
    sanitize "$tool" "CudaTest.ResidentGraphTeam*" "the team plan" 60
  done
} >> "$OUT/sanitizer.txt"

common=(--data "$NAVAL" --normalize minmax --repeat 3)
want draws 90 && {
  for round in 1 2; do
    for draws in host device; do
      echo "== GPU: OMKL_CUDA_DRAWS=$draws (round $round)"
      OMKL_CUDA_DRAWS=$draws "$BIN/omkl" bench "${common[@]}" --backend cuda --algo raker:dict=jmlr23-76 \
        --seeds 1 20 100 1000
      OMKL_CUDA_DRAWS=$draws "$BIN/omkl" bench "${common[@]}" --backend cuda --algo adaraker:dict=jmlr23-76 \
        --seeds 20 100
    done
  done
  for draws in host device; do
    echo "== GPU: OMKL_CUDA_DRAWS=$draws, OMKL_TIMING=1 construction"
    OMKL_CUDA_DRAWS=$draws OMKL_TIMING=1 "$BIN/omkl" bench --data "$NAVAL" --normalize minmax --repeat 1 \
      --backend cuda --algo raker:dict=jmlr23-76 --seeds 20 1000 2>&1 | grep -v "cuda loop\|step_selected"
  done
} > "$OUT/draws.txt" 2>&1
# Appended to draws.txt (PARTS=bandit_draws): the random-feature bandit's 1 000-repetition study
# (RF-OKS++, elevators, bandit-oks, square loss; every repetition its own permutation, walked by
# rows with the stream in device memory) with its Omega_i/sigma_i uploaded from the host (the
# default) against drawn on the device (OMKL_CUDA_BANDIT_DRAWS=device; parity in tests.txt,
# CudaTest.BanditDeviceDrawnOmegaEqualsTheHostUpload), alternated, each with the resident walk's
# OMKL_TIMING line; then once on all CPU cores.
want bandit_draws 100 && [ -e "$DATA/elevators.csv" ] && {
  bandit_study=(study --preset bandit-oks --loss square --data "$DATA/elevators.csv" --algo rf-oks++ --seeds 1000)
  for draws in host device host device; do
    echo "== GPU: rf-oks++ elevators, 1 000 repetitions, OMKL_CUDA_BANDIT_DRAWS=$draws"
    s=$(date +%s%N)
    OMKL_CUDA_BANDIT_DRAWS=$draws OMKL_TIMING=1 timeout "$(cap 60)" "$BIN/omkl" "${bandit_study[@]}" --backend cuda \
      --out "$OUT/.study" 2>&1 | grep -E "resident walk|rf-oks|construct|draw"
    echo "wall $(( ($(date +%s%N) - s) / 1000000 )) ms"
    rm -rf "$OUT/.study"
  done
  echo "== CPU, all cores: rf-oks++ elevators, 1 000 repetitions"
  s=$(date +%s%N)
  timeout "$(cap 60)" "$BIN/omkl" "${bandit_study[@]}" --backend cpu --out "$OUT/.study" 2>&1 | tail -2
  echo "wall $(( ($(date +%s%N) - s) / 1000000 )) ms"
  rm -rf "$OUT/.study"
} >> "$OUT/draws.txt" 2>&1
want bench 240 && {
  echo "== GPU: Raker / AdaRaker"
  "$BIN/omkl" bench "${common[@]}" --backend cuda --algo raker:dict=jmlr23-76 --seeds 1 20 100 1000 \
    --json "$JSON/bench_gpu.json"
  "$BIN/omkl" bench "${common[@]}" --backend cuda --algo adaraker:dict=jmlr23-76 --seeds 1 20 100 \
    --json "$JSON/bench_gpu_adaraker.json"
  "$BIN/omkl" bench "${common[@]}" --backend cuda --algo raker:dict=jmlr23-76,precision=float --seeds 20 1000
  # Where construction and loop time go (device set-up / host frequency draws / upload; host
  # staging / stream wait / each launch's device time), a few lines per run.
  echo "== GPU: OMKL_TIMING=1 breakdown"
  OMKL_TIMING=1 "$BIN/omkl" bench --data "$NAVAL" --normalize minmax --repeat 1 --backend cuda \
    --algo raker:dict=jmlr23-76 --seeds 20 1000
  OMKL_TIMING=1 "$BIN/omkl" bench --data "$NAVAL" --normalize minmax --repeat 1 --backend cuda \
    --algo adaraker:dict=jmlr23-76 --seeds 20 100
  # AdaRaker with one warp per slot, against the per-kernel groups its default takes from 20 seeds.
  # Raker's projections from a GEMM, against the in-kernel ones its default takes at 100+ seeds.
  echo "== GPU: OMKL_CUDA_PROJECTIONS=gemm"
  OMKL_CUDA_PROJECTIONS=gemm "$BIN/omkl" bench "${common[@]}" --backend cuda \
    --algo raker:dict=jmlr23-76 --seeds 100 1000
  echo "== GPU: OMKL_CUDA_TRAJECTORIES=per_slot"
  OMKL_CUDA_TRAJECTORIES=per_slot "$BIN/omkl" bench "${common[@]}" --backend cuda \
    --algo adaraker:dict=jmlr23-76 --seeds 1 20 100 --json "$JSON/bench_gpu_per_slot.json"
  # The generic path copies θ to the host and back per pair and step (≈ 2 s per seed on Naval):
  # one seed is enough to compare; the native path gets the issue's seed counts. Each run is
  # bounded so that the whole command stays inside the device tool's 10 minutes.
  echo "== GPU: graph-aided, OMKL_CUDA_STEP_SELECTED=generic"
  OMKL_CUDA_STEP_SELECTED=generic timeout "$(cap 120)" "$BIN/omkl" bench --data "$NAVAL" --preset jmlr23-graph --repeat 1 \
    --backend cuda --algo omkl-gf:M=10,step_path=host --algo omkl-sfg:M=10,step_path=host \
    --algo omkl-sfg-r:M=10,step_path=host --seeds 1 --json "$JSON/bench_gpu_graph_generic.json"
  echo "== GPU: graph-aided, native per-step path (step_path=host)"
  timeout "$(cap 240)" "$BIN/omkl" bench --data "$NAVAL" --preset jmlr23-graph --repeat 3 --backend cuda \
    --algo omkl-gf:M=10,step_path=host --algo omkl-sfg:M=10,step_path=host --algo omkl-sfg-r:M=10,step_path=host \
    --seeds 1 20 100 \
    --json "$JSON/bench_gpu_graph_native.json"
  # The device-resident walk (step_path=resident, auto's choice on a GPU; issue 16 item 1): one launch per block of
  # samples, no host round trip per step. Its parity test runs in tests.txt
  # (CudaTest.ResidentGraphWalkEqualsTheHostPath).
  echo "== GPU: graph-aided, step_path=resident"
  timeout "$(cap 240)" "$BIN/omkl" bench --data "$NAVAL" --preset jmlr23-graph --repeat 3 --backend cuda \
    --algo omkl-gf:M=10,step_path=resident --algo omkl-sfg:M=10,step_path=resident \
    --algo omkl-sfg-r:M=10,step_path=resident --seeds 1 20 100 1000 --json "$JSON/bench_gpu_graph_resident.json"
  bandit_pair_modes 60
  echo "== CPU, all cores"
  "$BIN/omkl" bench "${common[@]}" --backend cpu --algo raker:dict=jmlr23-76 --algo adaraker:dict=jmlr23-76 \
    --seeds 100 --json "$JSON/bench_cpu.json"
  "$BIN/omkl" bench --data "$NAVAL" --preset jmlr23-graph --repeat 3 --backend cpu \
    --algo omkl-gf:M=10 --algo omkl-sfg:M=10 --algo omkl-sfg-r:M=10 --seeds 100
} > "$OUT/bench.txt" 2>&1

# The federated and bandit families on the GPU against all CPU cores of the same machine (issue 14
# item 9: POF-MKL at 20 and 1 000 draws; issue 15 item 5; issue 16's resident walks): wall time of
# each `omkl study`, every run bounded so that the part fits one call of the device tool.
# The part stops starting runs once FAMILIES_BUDGET_S (default 540) have passed, so that it fits
# one call of the device tool whatever hangs; a run cut by its own limit says so (exit 124).
timed_study() {  # timed_study LABEL LIMIT_S ARGS...: one study, its last lines and its wall time
  local label=$1 limit=$2
  shift 2
  echo "== $label"
  local now
  now=$(date +%s)
  local left=$(( ${FAMILIES_BUDGET_S:-540} - (now - families_start) ))
  if [ "$SESSION_BUDGET_S" -gt 0 ] && [ "$(session_left)" -lt "$left" ]; then left=$(session_left); fi
  if [ "$left" -le 0 ]; then
    echo "skipped: the part's time is spent"
    return
  fi
  [ "$left" -lt "$limit" ] && limit=$left
  local start
  start=$(date +%s%N)
  timeout "$limit" "$BIN/omkl" study "$@" --out "$OUT/.study" 2>&1 | tail -3
  local code=${PIPESTATUS[0]}
  echo "wall $(( ($(date +%s%N) - start) / 1000000 )) ms, exit $code$([ "$code" = 124 ] && echo " (cut at ${limit} s: not a measurement)")"
  rm -rf "$OUT/.study"
}
families_start=$(date +%s)
want families 60 && {
  if [ -e "$DATA/naval.csv" ]; then
    fed=(--preset fed-pofmkl --data "$DATA/naval.csv")
    # The round aggregated on the device (OMKL_CUDA_ROUND=native, the default with step_path=host),
    # the generic round, and the resident walk (step_path=auto's choice); then all CPU cores.
    # (The generic round at 1 000 draws is left out: 3.6 s at 20 draws on an H200, it would take
    # most of the part.)
    for seeds in 20 1000; do
      modes="generic native resident"
      [ "$seeds" = 1000 ] && modes="native resident"
      for mode in $modes; do
        round=$mode path=host
        [ "$mode" = resident ] && round=generic path=resident
        OMKL_CUDA_ROUND=$round timed_study "GPU: POF-MKL (M = 1) Naval, $seeds draws, OMKL_CUDA_ROUND=$round, step_path=$path" \
          120 "${fed[@]}" --algo "pof-mkl:M=1,step_path=$path" --seeds "$seeds" --backend cuda
      done
      timed_study "CPU, all cores: POF-MKL (M = 1) Naval, $seeds draws" 120 "${fed[@]}" --algo pof-mkl:M=1 \
        --seeds "$seeds" --backend cpu
    done
    # eM-KOFL and PerFedAvg as resident walks (resident_em_kofl.h, resident_perfedavg.h) against
    # their host paths (eM-KOFL: a round trip per client sample; PerFedAvg: host-only, a draw per
    # thread) and all CPU cores, 20 draws; parity in tests.txt.
    for algo in em-kofl perfedavg; do
      for path in host resident; do
        timed_study "GPU: $algo Naval, 20 draws, step_path=$path" 120 "${fed[@]}" --algo "$algo:step_path=$path" \
          --seeds 20 --backend cuda
      done
      timed_study "CPU, all cores: $algo Naval, 20 draws" 120 "${fed[@]}" --algo "$algo" --seeds 20 --backend cpu
    done
  fi
  # RF-OKS++ / RF-IOKS, then OKS++ / IOKS on support sets, as the resident walk on the GPU against
  # their host path and all CPU cores (elevators, 10 repetitions: the preset shuffles, so the host
  # path runs one repetition per task and the resident walk all ten in lockstep, each on its own
  # permutation); parity in tests.txt (CudaTest.ResidentBanditWalk…, CudaTest.ReplicatedStreams…).
  if [ -e "$DATA/elevators.csv" ]; then
    for family in "rf-oks++ rf-ioks" "oks++ ioks"; do
      for path in host resident; do
        algos=()
        for a in $family; do algos+=(--algo "$a:step_path=$path"); done
        timed_study "GPU: bandit $family, step_path=$path" 120 --preset bandit-oks --loss square \
          --data "$DATA/elevators.csv" --backend cuda "${algos[@]}" --seeds 10
      done
      algos=()
      for a in $family; do algos+=(--algo "$a"); done
      timed_study "CPU, all cores: bandit $family" 120 --preset bandit-oks --loss square \
        --data "$DATA/elevators.csv" --backend cpu "${algos[@]}" --seeds 10
    done
  fi
} > "$OUT/families.txt" 2>&1
# Every JSON matrix (Raker/AdaRaker, the graph paths, the walk shapes, the CPU) folded into one
# file, keyed by its name: the device tool brings back eight files.
python3 - "$JSON" "$OUT/bench.json" <<'EOF' || true
import json, os, sys
folder, target = sys.argv[1], sys.argv[2]
merged = {}
for name in sorted(os.listdir(folder)):
    if name.endswith(".json"):
        with open(os.path.join(folder, name)) as f:
            merged[name] = json.load(f)
if merged:
    with open(target, "w") as f:
        json.dump(merged, f, indent=1)
EOF
rm -rf "$JSON"
ls -la "$OUT"
