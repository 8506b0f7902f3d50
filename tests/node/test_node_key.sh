#!/bin/bash
# The host node's job key options (issue 20): a node with links and no key
# stops before it starts, with one panic line saying what it expects; a bad
# --key-file (missing, not 16 bytes, open to others) or --auth value is one
# line on stderr and exit 2; a good key file or --auth off lets it start,
# and its network event says auth=siphash or auth=off, never the key.
# usage: test_node_key.sh PERSONALITY_TOOL NODE OUT
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
NODE=$2
OUT=$3
rm -rf "$OUT" && mkdir -p "$OUT"
"$TOOL" --node 0 --dims 2 -o "$OUT/node0.personality" > /dev/null || fail "personality"
# Two free UDP ports for the node's links (their peer never answers),
# chosen again when another process took one meanwhile.
pick_ports() {
    read -r PORT_A PORT_B < <(python3 -c 'import socket
s=[socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
    LINKS=(--link "x+:bind=127.0.0.1:$PORT_A:peer=127.0.0.1:9"
           --link "x-:bind=127.0.0.1:$PORT_B:peer=127.0.0.1:9")
}
pick_ports
node() {
    local status
    for attempt in 1 2 3 4 5; do
        echo halt | timeout 10 "$NODE" --personality "$OUT/node0.personality" "$@" \
            > "$OUT/console.log" 2>&1
        status=$?
        grep -q 'Address already in use' "$OUT/console.log" || return $status
        pick_ports
        local args=() a
        for a in "$@"; do
            case $a in
                x+:bind=*) args+=("x+:bind=127.0.0.1:$PORT_A:peer=127.0.0.1:9") ;;
                x-:bind=*) args+=("x-:bind=127.0.0.1:$PORT_B:peer=127.0.0.1:9") ;;
                *) args+=("$a") ;;
            esac
        done
        set -- "${args[@]}"
    done
    return $status
}

# No key, links: refused at bring-up, naming the ways out.
node "${LINKS[@]}"
status=$?
[[ $status != 0 && $status != 124 ]] || fail "no key: exit $status, expected a refusal"
[[ $(grep -c 'event=panic' "$OUT/console.log") == 1 ]] || fail "no key: not one panic line"
check_contains "$OUT/console.log" "network: no job key"
check_contains "$OUT/console.log" "--key-file FILE, or --auth off"

# refuses "REASON" ARGS...: exit 2 and REASON on one line, nothing started.
refuses() {
    local reason=$1; shift
    node "$@" "${LINKS[@]}"
    local status=$?
    [[ $status == 2 ]] || fail "$*: exit $status, expected 2"
    [[ $(wc -l < "$OUT/console.log") == 1 ]] || { cat "$OUT/console.log" >&2; fail "$*: not one line"; }
    check_contains "$OUT/console.log" "$reason"
    grep -q "event=boot" "$OUT/console.log" && fail "$*: the node started"
    return 0
}
head -c 16 /dev/urandom > "$OUT/key" && chmod 600 "$OUT/key"
head -c 15 /dev/urandom > "$OUT/short" && chmod 600 "$OUT/short"
head -c 17 /dev/urandom > "$OUT/long" && chmod 600 "$OUT/long"
cp "$OUT/key" "$OUT/open" && chmod 644 "$OUT/open"
refuses "cannot open key file '$OUT/missing'" --key-file "$OUT/missing"
refuses "key file '$OUT/short' must hold exactly 16 bytes" --key-file "$OUT/short"
refuses "key file '$OUT/long' must hold exactly 16 bytes" --key-file "$OUT/long"
refuses "key file '$OUT/open' is open to group or others (expected mode 0600 or 0400)" \
    --key-file "$OUT/open"
node --key-file
[[ $? == 2 ]] && check_contains "$OUT/console.log" "--key-file needs a file name" ||
    fail "--key-file without a file name"
refuses "--auth takes only 'off'" --auth on
refuses "--key-file and --auth off contradict each other" --key-file "$OUT/key" --auth off

# A key file, or --auth off: the node starts and says which, never the key.
node --key-file "$OUT/key" "${LINKS[@]}" || fail "--key-file: the node did not run"
check_contains "$OUT/console.log" "auth=siphash"
key_hex=$(od -An -tx1 "$OUT/key" | tr -d ' \n')
grep -qi "$key_hex" "$OUT/console.log" && fail "the key was printed"
node --auth off "${LINKS[@]}" || fail "--auth off: the node did not run"
check_contains "$OUT/console.log" "auth=off"
# No link, no key: nothing on a wire to protect.
node || fail "no link: the node did not run"
check_contains "$OUT/console.log" "auth=off"
echo "node.node_key: all checks passed"
