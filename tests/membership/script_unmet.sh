#!/bin/bash
# The script driver's own messages: a script whose expectations do not hold
# (tests/membership/unmet/*.txt) must exit 1 and print exactly the lines
# its `# unmet: LINE: MESSAGE` comments give, each as FILE:LINE: MESSAGE.
DRIVER=$1
SCRIPT=$2
fail() { echo "membership.script_unmet: $*" >&2; exit 1; }
expected=$(sed -n "s|^# unmet: \([0-9]*\): \(.*\)\$|$SCRIPT:\1: \2|p" "$SCRIPT")
[[ -n "$expected" ]] || fail "$SCRIPT has no '# unmet: LINE: MESSAGE' line"
got=$("$DRIVER" "$SCRIPT" 2>&1 >/dev/null)
status=$?
[[ $status == 1 ]] || fail "exit $status, expected 1 (expectations failed)"
[[ "$got" == "$expected" ]] ||
    fail "$(printf 'the driver said:\n%s\nexpected:\n%s' "$got" "$expected")"
echo "membership.script_unmet: $(basename "$SCRIPT" .txt): as expected"
