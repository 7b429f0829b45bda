#!/bin/bash
# A round's final bench: the round's end against its start, run.py in PAIRS pairs whose order
# alternates (odd pairs end first, even pairs start first), then phases.py on each tree.
#
#   bench/inspect_speed/paired_runs.sh START_TREE END_TREE OUT_DIR [PAIRS]     (PAIRS: 3 unless given)
#
# START_TREE / END_TREE: `git archive` extracts of the two commits (each is run with its own run.py
# and phases.py). Writes OUT_DIR/r<N>_now.md, r<N>_start.md (run.py's output), ph_now.md and
# ph_start.md (phases.py's). Each results/<round>/ names the exact invocation it ran.
set -e
start=$(cd "$1" && pwd); now=$(cd "$2" && pwd); mkdir -p "$3"; out=$(cd "$3" && pwd); pairs=${4:-3}
run() { (cd "$1" && python3 bench/inspect_speed/run.py --runs 5 2>/dev/null > "$2"); }
for i in $(seq "$pairs"); do
  if [ $((i % 2)) -eq 1 ]; then run "$now" "$out/r${i}_now.md"; run "$start" "$out/r${i}_start.md"
  else run "$start" "$out/r${i}_start.md"; run "$now" "$out/r${i}_now.md"; fi
done
(cd "$now" && python3 bench/inspect_speed/phases.py --runs 3 > "$out/ph_now.md" 2>&1)
(cd "$start" && python3 bench/inspect_speed/phases.py --runs 3 > "$out/ph_start.md" 2>&1)
