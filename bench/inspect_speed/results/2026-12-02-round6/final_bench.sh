#!/bin/bash
# Round 6's final bench. WORK: a scratch folder holding `base/`, a `git archive` of the round's start
# (78d4899); REPO: a clone of tiletune (its main was at ff71f9a).
# What ran: ../../paired_runs.sh's procedure, four pairs, with phases.py after the third pair rather
# than after the fourth (the order of those runs is the only difference).
set -e
rm -rf "$WORK/final" && mkdir -p "$WORK/final" && git -C "$REPO" archive main | tar -x -C "$WORK/final"
git -C "$REPO" rev-parse --short main > "$WORK/final.rev"
"$REPO/bench/inspect_speed/paired_runs.sh" "$WORK/base" "$WORK/final" "$WORK" 4
