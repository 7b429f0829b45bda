#!/bin/bash
# WORK: a scratch folder holding `base/`, a `git archive` of the round's start (78d4899); REPO: a clone of tiletune
# round-6 final bench: main's head vs the round's start (78d4899), three paired runs alternating the order, then phases
set -e
S="$WORK"
rm -rf $S/final && mkdir -p $S/final && git -C "$REPO" archive main | tar -x -C $S/final
git -C "$REPO" rev-parse --short main > $S/final.rev
run() { (cd $1 && python3 bench/inspect_speed/run.py --runs 5 2>/dev/null > $2); }
run $S/final $S/r1_now.md; run $S/base $S/r1_start.md
run $S/base $S/r2_start.md; run $S/final $S/r2_now.md
run $S/final $S/r3_now.md; run $S/base $S/r3_start.md
(cd $S/final && python3 bench/inspect_speed/phases.py --runs 3 > $S/ph_now.md 2>&1)
(cd $S/base && python3 bench/inspect_speed/phases.py --runs 3 > $S/ph_start.md 2>&1)
echo done > $S/final_bench.done
# a fourth pair, run after the above (start first)
run $S/base $S/r4_start.md; run $S/final $S/r4_now.md
