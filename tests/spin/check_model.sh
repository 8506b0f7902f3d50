#!/bin/bash
# Checks the Promela model of the membership protocol with SPIN: generates
# the verifier (spin -a), compiles it, runs an exhaustive safety search.
#   check_model.sh MODEL WORK CC            every property must hold
#   check_model.sh MODEL WORK CC --planted  the planted bug must be found,
#                                           its error trail printed
# SPIN (Debian package spin) comes with ./tori test (the proofs group).
set -u
MODEL=$1
WORK=$2
CC=$3
PLANTED=${4:-}
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v spin >/dev/null \
    || fail "spin is not installed (./tori test installs it: apt-get install spin)"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || fail "cannot use $WORK"
cp "$MODEL" model.pml
defines=()
[[ "$PLANTED" == --planted ]] && defines=(-DPLANTED)
spin "${defines[@]}" -a model.pml > spin.log 2>&1 || { cat spin.log; fail "spin -a failed"; }
# Safety only; states stored compressed, a 2^22-slot hash table: about 200 MB.
"$CC" -O2 -DSAFETY -DCOLLAPSE -o pan pan.c 2> cc.log || { cat cc.log; fail "pan did not compile"; }
./pan -m200000 -w22 > pan.log 2>&1
cat pan.log
if [[ "$PLANTED" == --planted ]]; then
    grep -qE "errors: [1-9]" pan.log || fail "SPIN did not find the planted bug"
    [[ -f model.pml.trail ]] || fail "no error trail written"
    echo "--- the error trail (spin -t):"
    spin "${defines[@]}" -t -p model.pml | grep -vE "^\s+(registry|alive|started|hasview|view|epoch|known_dead|failed|joins|reported|inround|round_epoch|parent|pending)\[" | tail -60
    echo "planted bug found"
    exit 0
fi
grep -q "errors: 0" pan.log || fail "SPIN found a property violated (trail: $WORK/model.pml.trail)"
grep -q "Search not completed" pan.log && fail "the search did not complete (depth bound -m)"
echo "every property holds"
