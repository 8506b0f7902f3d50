#!/bin/bash
# A stand-in for tori-node that misbehaves on request, to test the
# launcher's error paths (builtins only: no grandchildren to orphan).
#   FAKE_NODE_MODE=ok | never-ready:R | panic:R | exit:R | ping-fail:R
#   FAKE_NODES=N  (the node count, for `ping all`)
personality=$2
rank=${personality##*/node}
rank=${rank%.personality}
mode=${FAKE_NODE_MODE:-ok}
target=${mode#*:}
nodes=${FAKE_NODES:-8}
printf 'tori node=- event=boot t_ns=1 board=fake\n'
if [[ "$mode" == "never-ready:$rank" ]]; then
    printf 'fake node %s: stuck in boot\n' "$rank"
    read -r _
    exit 0
fi
# Malformed before ready: the launcher has read it by the time all are ready.
printf 'tori node=%s event=broken t_ns=\n' "$rank"   # malformed: counted
printf 'tori node=%s event=ready t_ns=2 incarnation=1 nodes=%s\n' "$rank" "$nodes"
if [[ "$mode" == "panic:$rank" ]]; then
    printf 'tori node=%s event=panic t_ns=3 reason="fake failure in %s"\n' "$rank" "$rank"
fi
if [[ "$mode" == "exit:$rank" ]]; then
    printf 'fake node %s: leaving\n' "$rank"
    exit 3
fi
while read -r line; do
    case "$line" in
    "ping all")
        ok=0 failed=0
        for (( d = 0; d < nodes; d++ )); do
            (( d == rank )) && continue
            x=$(( d ^ rank ))
            hops=$(( (x & 1) + ((x >> 1) & 1) + ((x >> 2) & 1) ))
            if [[ "$mode" == "ping-fail:$rank" && $d == 0 ]]; then
                printf 'tori node=%s event=ping t_ns=4 dst=%s hops=%s rtt_ns=0 ok=0\n' \
                    "$rank" "$d" "$hops"
                failed=$(( failed + 1 ))
            else
                printf 'tori node=%s event=ping t_ns=4 dst=%s hops=%s rtt_ns=%s ok=1\n' \
                    "$rank" "$d" "$hops" $(( 1000 * hops + rank ))
                ok=$(( ok + 1 ))
            fi
        done
        printf 'tori node=%s event=ping-done t_ns=5 ok=%s failed=%s\n' "$rank" "$ok" "$failed"
        ;;
    halt) exit 0 ;;
    esac
done
