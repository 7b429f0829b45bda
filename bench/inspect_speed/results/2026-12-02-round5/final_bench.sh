#!/bin/bash
# WORK: a scratch folder holding `base/`, a `git archive` of the round's start (c175c62); REPO: a clone of tiletune
# final round-5 bench: main's head vs the round's start (c175c62 = 1d2f4df's code + the paired run.py)
set -e
S7="$WORK"
rm -rf $S7/final && mkdir -p $S7/final && git -C "$REPO" archive main | tar -x -C $S7/final
git -C "$REPO" rev-parse --short main > $S7/final.rev
run() { (cd $1 && python3 bench/inspect_speed/run.py --runs 5 2>/dev/null > $2); }
run $S7/final $S7/r1_now.md; run $S7/base $S7/r1_start.md
run $S7/base $S7/r2_start.md; run $S7/final $S7/r2_now.md
run $S7/final $S7/r3_now.md; run $S7/base $S7/r3_start.md
(cd $S7/final && python3 bench/inspect_speed/phases.py --runs 3 > $S7/ph_now.md 2>&1)
(cd $S7/base && python3 bench/inspect_speed/phases.py --runs 3 > $S7/ph_start.md 2>&1)
echo done > $S7/final_bench.done
