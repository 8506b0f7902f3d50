#!/bin/bash
# A host node's console commands with bad arguments: a command that takes
# none refuses extra words, one that takes some refuses trailing ones; each
# gets exactly one console-error line and nothing else happens (halt with
# words does not halt).  `stack` answers on the host board too, saying
# that it does not measure its stack.  A `ping fan` naming a node twice,
# itself, junk or a node beyond the torus is refused.
# usage: test_node_commands.sh PERSONALITY_TOOL NODE OUT
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
NODE=$2
OUT=$3
rm -rf "$OUT"
mkdir -p "$OUT"
"$TOOL" --node 0 --dims 2 -o "$OUT/node0.personality" || fail "personality"
printf '%s\n' 'stack' 'stack now' 'view extra' 'stats x' 'start x' 'help x' 'halt x' \
    'link x+ off extra' 'start' 'suspect 1 extra' 'view started' 'ping all extra' \
    'flood stats extra' 'ping fan 1,1' 'ping fan 0' 'ping fan 1,x' 'ping fan 5' 'halt' |
    timeout 20 "$NODE" --personality "$OUT/node0.personality" > "$OUT/console.log" 2>&1
status=$?
cat "$OUT/console.log"
[[ $status == 124 ]] && fail "the node did not halt"
count() { grep -cF -- "$1" "$OUT/console.log"; }
check_contains "$OUT/console.log" \
    'reason="stack: not measured on the host board (the process stack belongs to the OS)"'
for refused in "stack: takes no arguments (got 'now')" "view: takes no arguments (got 'extra')" \
    "view: takes no arguments (got 'started')" \
    "stats: takes no arguments (got 'x')" "start: takes no arguments (got 'x')" \
    "help: takes no arguments (got 'x')" "halt: takes no arguments (got 'x')" \
    "link: expected 'link DIR off|on'" "suspect: expected a node id" \
    "ping: expected 'all', 'fan A,B,...' or a node id" "flood: expected 'flood DST COUNT SIZE'" \
    "ping: fan names a node twice"; do
    [[ $(count "reason=\"$refused") == 1 ]] || fail "not one console-error: $refused"
done
[[ $(count 'reason="ping: fan expects up to 8 distinct other node ids') == 3 ]] ||
    fail "not three refusals of a fan naming itself, junk or a node beyond the torus"
[[ $(count 'event=console-error') == 16 ]] || fail "not 16 console-error lines"
[[ $(count 'event=started') == 1 ]] || fail "not one start ('start x' refused, 'start' obeyed)"
[[ $(count 'event=view-state') == 0 ]] || fail "'view started' answered"
[[ $(count 'event=help') == 0 && $(count 'event=stats') == 0 ]] || fail "a refused command ran"
[[ $(count 'event=halt') == 1 ]] || fail "not one halt"
[[ $(tail -n 1 "$OUT/console.log") == *"event=halt"* ]] || fail "halted before the last command"
echo "emu.node_commands: all checks passed"
