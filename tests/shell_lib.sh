# Shared helpers for the shell tests of every area (sourced, not run).
set -u

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# check_contains FILE TEXT: TEXT (fixed string) must be in FILE.
check_contains() {
    if ! grep -qF -- "$2" "$1"; then
        echo "--- $1:" >&2
        cat "$1" >&2
        fail "'$2' not found in $1"
    fi
}

# check_status WANTED GOT WHAT
check_status() {
    [[ "$2" == "$1" ]] || fail "$3: exit status $2, expected $1"
}

# The test is skipped (CTest SKIP_RETURN_CODE 77) without a node image.
skip_without_image() {
    if [[ ! -f "$1" ]]; then
        echo "SKIP: node image $1 is not built (run ./tori build qemu-virt)"
        exit 77
    fi
}

# Pids of live processes whose command line contains TEXT (zombies have none).
processes_with() {
    local p cmd
    for p in /proc/[0-9]*; do
        [[ "${p#/proc/}" == "$$" ]] && continue
        cmd=$(tr '\0' ' ' 2>/dev/null < "$p/cmdline") || continue  # gone: skip, quietly
        [[ "$cmd" == *"$1"* ]] && echo "${p#/proc/}"
    done
    return 0
}

# wait_for_no_processes TEXT SECONDS: fails if any survive that long.
wait_for_no_processes() {
    local left=$(( $2 * 10 )) survivors
    while :; do
        survivors=$(processes_with "$1")
        [[ -z "$survivors" ]] && return 0
        (( left-- > 0 )) || break
        sleep 0.1
    done
    for p in $survivors; do
        echo "survivor $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)" >&2
        kill -KILL "$p" 2>/dev/null
    done
    fail "processes of $1 survived their launcher"
}

# wait_for_line FILE TEXT SECONDS PID: waits until TEXT is in FILE while PID lives.
wait_for_line() {
    local left=$(( $3 * 10 ))
    while ! grep -qF -- "$2" "$1" 2>/dev/null; do
        kill -0 "$4" 2>/dev/null || { cat "$1" >&2; fail "launcher ended before '$2'"; }
        (( left-- > 0 )) || { cat "$1" >&2; fail "no '$2' after $3 s"; }
        sleep 0.1
    done
}

# check_jsonl FILE: every line is a JSON object with event, node and t_ns.
check_jsonl() {
    python3 - "$1" <<'PY' || fail "$1 holds lines that are not event JSON"
import json, sys
with open(sys.argv[1]) as f:
    for number, text in enumerate(f, 1):
        event = json.loads(text)
        assert isinstance(event, dict), number
        assert isinstance(event["event"], str), number
        assert isinstance(event["node"], int), number
        assert isinstance(event["t_ns"], int), number
PY
}

# count_events FILE NAME: how many JSON lines have event NAME, distinct nodes.
count_ready_nodes() {
    python3 - "$1" "$2" <<'PY'
import json, sys
nodes = set()
with open(sys.argv[1]) as f:
    for text in f:
        event = json.loads(text)
        if event["event"] == sys.argv[2]:
            nodes.add(event["node"])
print(len(nodes))
PY
}

# check_refused DIR NAME PROGRAM EXPECTED ARGS...: PROGRAM ARGS is bad input:
# exit 2, exactly one line on stderr holding "NAME: EXPECTED", nothing on
# stdout (DIR keeps the two outputs).
check_refused() {
    local dir=$1 name=$2 program=$3 expected=$4
    shift 4
    "$program" "$@" > "$dir/refused.out" 2> "$dir/refused.err"
    check_status 2 $? "$name $*"
    [[ $(wc -l < "$dir/refused.err") == 1 ]] ||
        { cat "$dir/refused.err" >&2; fail "$name $*: not one line"; }
    check_contains "$dir/refused.err" "$name: $expected"
    [[ ! -s "$dir/refused.out" ]] || { cat "$dir/refused.out" >&2; fail "$name $*: printed on stdout"; }
}

# check_plot_files DIR NAME...: DIR/NAME.png is a PNG, DIR/NAME.svg parses
# as an SVG with something drawn, DIR/NAME.dat holds data (tools/plot/tori-plot).
check_plot_files() {
    local dir=$1; shift
    local name
    for name in "$@"; do
        [[ $(head -c 8 "$dir/$name.png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] \
            || fail "$dir/$name.png is not a PNG"
        python3 -c '
import sys, xml.etree.ElementTree as tree
root = tree.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg"), root.tag
assert len(list(root.iter())) > 20, "an empty picture"
' "$dir/$name.svg" > "$dir/$name.svg-check" 2>&1 \
            || fail "$dir/$name.svg: $(tail -1 "$dir/$name.svg-check")"
        rm -f "$dir/$name.svg-check"
        grep -qv '^#' "$dir/$name.dat" || fail "$dir/$name.dat holds no data"
    done
}

# draw_bench_plots RECORDS DIR NAME...: a benchmark's records drawn into DIR
# by tools/plot/tori-plot (what ./tori bench ... --plot DIR does), checked.
draw_bench_plots() {
    local records=$1 dir=$2; shift 2
    command -v gnuplot >/dev/null || fail "gnuplot is not installed (./tori test installs gnuplot-nox)"
    python3 "$(dirname "${BASH_SOURCE[0]}")/../tools/plot/tori-plot" "$records" -o "$dir" \
        > "$dir.out" 2>&1
    check_status 0 $? "tori-plot $records -o $dir (see $dir.out)"
    check_plot_files "$dir" "$@"
}
