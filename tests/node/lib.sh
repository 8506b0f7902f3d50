# Shared helpers for the tests/node shell tests (sourced, not run).
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

check_status() {
    [[ "$2" == "$1" ]] || fail "$3: exit status $2, expected $1"
}
