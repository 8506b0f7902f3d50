#!/bin/bash
# ./tori installs only what the command at hand needs, one line per package
# group, apt's own output kept in build/install.log (shown on failure).
# Nothing is installed: dpkg-query, apt-get and id are fakes first on PATH.
#   test_install.sh packages SOURCE_DIR WORK   which groups each command needs
#   test_install.sh install SOURCE_DIR WORK    the install step itself
set -u
CASE=$1
SOURCE=$2
WORK=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

if [[ "$CASE" == packages ]]; then
    source "$SOURCE/tori"
    # expect_groups "COMMAND [ARG]" GROUPS...
    expect_groups() {
        local got
        got=$(command_groups $1)
        [[ "$got" == "${*:2}" ]] || fail "./tori $1 installs groups '$got', expected '${*:2}'"
        echo "./tori $1: ${*:2}"
    }
    expect_groups "personality" host
    expect_groups "sim" host
    expect_groups "bench membership" host
    expect_groups "bench phoenix" host
    expect_groups "build host" host mpi
    expect_groups "build host-asan" host
    expect_groups "build qemu-virt" host arm
    expect_groups "build all" host arm mpi
    expect_groups "build" host arm mpi
    expect_groups "emu" host arm qemu
    expect_groups "emu --dims 2x2x2 --board host --ping" host arm qemu
    expect_groups "emu --dims 2x2x2 --inject kill_1_at_1s" host arm qemu plot
    expect_groups "emu --dims 2x2x2 --chaos seed=7" host arm qemu plot
    expect_groups "emu --dims 2x2x2 --board mpi" host arm qemu mpi
    expect_groups "emu --dims 2x2x2 --board mpi --inject kill_3_at_2s" host arm qemu plot mpi
    expect_groups "demo" host arm qemu plot
    expect_groups "bench link" host arm qemu
    expect_groups "bench faults" host arm qemu
    expect_groups "bench recovery" host arm qemu
    expect_groups "bench membership --plot plots" host plot
    expect_groups "bench comm --plot plots" host arm qemu plot
    expect_groups "cert" host arm qemu checkers
    expect_groups "test" host arm qemu checkers fuzz capture plot report mpi proofs
    expect_groups "plot" host plot
    expect_groups "emu --dims 2x2x2 --inject kill_1_at_1s --plot" host arm qemu plot
    expect_groups "fuzz" host fuzz
    expect_groups "build fuzz" host fuzz
    [[ "${GROUP_PACKAGES[qemu]}" == qemu-system-arm ]] || fail "QEMU group: ${GROUP_PACKAGES[qemu]}"
    [[ "${GROUP_PACKAGES[checkers]}" == "cppcheck clang-tidy" ]] \
        || fail "checkers group: ${GROUP_PACKAGES[checkers]}"
    [[ "${GROUP_PACKAGES[fuzz]}" == "clang libclang-rt-14-dev" ]] \
        || fail "fuzz group: ${GROUP_PACKAGES[fuzz]}"
    [[ "${GROUP_PACKAGES[capture]}" == tshark ]] || fail "capture group: ${GROUP_PACKAGES[capture]}"
    [[ "${GROUP_PACKAGES[plot]}" == gnuplot-nox ]] || fail "plot group: ${GROUP_PACKAGES[plot]}"
    [[ "${GROUP_PACKAGES[report]}" == chromium ]] || fail "report group: ${GROUP_PACKAGES[report]}"
    [[ "${GROUP_PACKAGES[mpi]}" == "mpich libmpich-dev" ]] || fail "mpi group: ${GROUP_PACKAGES[mpi]}"
    [[ "${GROUP_PACKAGES[proofs]}" == spin ]] || fail "proofs group: ${GROUP_PACKAGES[proofs]}"
    # tshark's install must not stop to ask who may capture.
    [[ "${GROUP_PRESEED[capture]}" == "wireshark-common wireshark-common/install-setuid boolean false" ]] \
        || fail "capture group preseed: ${GROUP_PRESEED[capture]:-none}"
    # ./tori test installs every group there is.
    for group in "${!GROUP_PACKAGES[@]}"; do
        [[ " $(command_groups test) " == *" $group "* ]] || fail "./tori test misses group $group"
    done
    echo "tori packages: all checks passed"
    exit 0
fi
[[ "$CASE" == install ]] || fail "unknown case $CASE"

rm -rf "$WORK"
mkdir -p "$WORK/bin" "$WORK/root/build"
# A stand-in for the repository root whose build/ is its own (install.log
# lands there), with the real built trees inside.
for entry in "$SOURCE"/* "$SOURCE"/.[!.]*; do
    [[ "$(basename "$entry")" == build ]] || ln -s "$entry" "$WORK/root/"
done
for tree in host qemu-virt; do ln -s "$SOURCE/build/$tree" "$WORK/root/build/$tree"; done

cat > "$WORK/bin/dpkg-query" <<'EOF'
#!/bin/bash
# dpkg-query -W -f=FORMAT PACKAGE: installed when PACKAGE is in $FAKE_INSTALLED.
echo "dpkg-query $*" >> "$FAKE_LOG"
package=${!#}
[[ " $FAKE_INSTALLED " == *" $package "* ]] || exit 1
printf 'install ok installed'
EOF
cat > "$WORK/bin/apt-get" <<'EOF'
#!/bin/bash
# Records its arguments, prints a screenful, fails for $FAKE_APT_FAIL.
echo "apt-get $*" >> "$FAKE_LOG"
for i in $(seq 40); do echo "apt noise line $i"; done
for argument; do
    if [[ "$argument" == "${FAKE_APT_FAIL:-}" ]]; then
        echo "E: Unable to locate package $argument" >&2
        exit 100
    fi
done
EOF
cat > "$WORK/bin/id" <<'EOF'
#!/bin/bash
echo "${FAKE_UID:-0}"
EOF
chmod +x "$WORK/bin/"*
export FAKE_LOG="$WORK/calls.log"

# run NAME ENV... -- TORI_ARGS...: runs ./tori from the stand-in root.
run() {
    local name=$1; shift
    local env=()
    while [[ "$1" != -- ]]; do env+=("$1"); shift; done
    shift
    : > "$FAKE_LOG"
    rm -f "$WORK/root/build/install.log"
    (cd "$WORK/root" && env -u TORI_NO_INSTALL PATH="$WORK/bin:$PATH" FAKE_INSTALLED= "${env[@]}" \
        ./tori "$@" > "$WORK/$name.out" 2> "$WORK/$name.err")
    echo $? > "$WORK/$name.status"
    echo "--- ./tori $* (${env[*]}): exit $(cat "$WORK/$name.status")"
    grep '^tori: \(installing\|updating\|missing\)' "$WORK/$name.err"
    cp "$FAKE_LOG" "$WORK/$name.calls"
}
status() { cat "$WORK/$1.status"; }
has() { grep -qxF -- "$2" "$WORK/$1" || { cat "$WORK/$1" >&2; fail "$1 lacks: $2"; }; }
lacks() { ! grep -qF -- "$2" "$WORK/$1" || { cat "$WORK/$1" >&2; fail "$1 has: $2"; }; }
apt_calls() { grep -c '^apt-get ' "$WORK/$1.calls"; }

HOST="cmake ninja-build gcc libc6-dev python3"
ARM="gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi"
APT_INSTALL="apt-get install -y -q --no-install-recommends -o Dpkg::Use-Pty=0"

# The personality tool on a machine with nothing: the host toolchain only.
run personality -- personality --help
[[ $(status personality) == 0 ]] || fail "personality: exit $(status personality)"
has personality.err "tori: updating the package lists (apt-get update)"
has personality.err "tori: installing the host toolchain ($HOST)"
[[ $(grep -c '^tori: installing' "$WORK/personality.err") == 1 ]] || fail "more than the host group"
has personality.calls "apt-get update -q"
has personality.calls "$APT_INSTALL $HOST"
[[ $(apt_calls personality) == 2 ]] || fail "apt-get ran $(apt_calls personality) times, expected 2"
lacks personality.err "apt noise"
lacks personality.out "apt noise"
grep -q "apt noise line 40" "$WORK/root/build/install.log" || fail "apt's output is not in build/install.log"
grep -q -- "--node" "$WORK/personality.out" || fail "tori-personality --help did not run"

# cert with cmake and QEMU present: the rest of its four groups, one update.
run cert "FAKE_INSTALLED=cmake qemu-system-arm" -- cert --help
[[ $(status cert) == 0 ]] || fail "cert: exit $(status cert)"
has cert.err "tori: installing the host toolchain (ninja-build gcc libc6-dev python3)"
has cert.err "tori: installing the ARM toolchain ($ARM)"
has cert.err "tori: installing the code checkers (cppcheck clang-tidy)"
lacks cert.err "installing QEMU"
[[ $(grep -c '^apt-get update' "$WORK/cert.calls") == 1 ]] || fail "apt-get update not run once"
[[ $(apt_calls cert) == 4 ]] || fail "apt-get ran $(apt_calls cert) times, expected 4"
lacks cert.err "apt noise"

# Everything present: no apt-get, no line.
run present "FAKE_INSTALLED=$HOST" -- sim --help
[[ $(status present) == 0 ]] || fail "sim: exit $(status present)"
[[ $(apt_calls present) == 0 ]] || fail "apt-get ran with everything installed"
lacks present.err "tori: installing"

# A failed install: its line, then apt's output and exit 2; nothing after.
run failed "FAKE_APT_FAIL=qemu-system-arm" -- cert --help
[[ $(status failed) == 2 ]] || fail "failed install: exit $(status failed), expected 2"
has failed.err "tori: installing QEMU (qemu-system-arm)"
grep -qF "tori: installing QEMU failed; the end of apt's output" "$WORK/failed.err" || fail "no failure line"
grep -qF "E: Unable to locate package qemu-system-arm" "$WORK/failed.err" || fail "apt's error not shown"
lacks failed.err "installing the code checkers"
lacks failed.out "usage"

# Not root: the apt-get line for the command's packages, and nothing run.
run user "FAKE_UID=1000" -- personality --help
[[ $(status user) == 1 ]] || fail "not root: exit $(status user), expected 1"
has user.err "  apt-get update && apt-get install -y --no-install-recommends $HOST"
[[ $(apt_calls user) == 0 ]] || fail "apt-get ran without root"

# TORI_NO_INSTALL=1: not even a look.
run skipped "TORI_NO_INSTALL=1" -- sim --help
[[ $(status skipped) == 0 ]] || fail "TORI_NO_INSTALL: exit $(status skipped)"
[[ ! -s "$WORK/skipped.calls" ]] || fail "TORI_NO_INSTALL=1 still ran $(head -1 "$WORK/skipped.calls")"

# Help and bad arguments install nothing.
run build_help -- build --help
run build_bad -- build nosuch
[[ ! -s "$WORK/build_help.calls" && ! -s "$WORK/build_bad.calls" ]] || fail "build --help or a bad board installed"
# Several boards: each is checked before anything is installed or built (a
# second board was once ignored in silence).
run build_bad_second -- build host nosuch
[[ $(status build_bad_second) != 0 ]] || fail "build host nosuch: exit 0"
[[ ! -s "$WORK/build_bad_second.calls" ]] || fail "build host nosuch installed something"
has build_bad_second.err "tori: unknown board 'nosuch' (expected qemu-virt, host, host-asan, fuzz, host-ft-off, qemu-virt-ft-off or all)"

# ./tori fuzz: a bad target or duration is one line and exit 2, before
# anything is installed or built; --list names every target.
fuzz_refuses() {
    local name=$1 expected=$2; shift 2
    run "$name" -- fuzz "$@"
    [[ $(status "$name") == 2 ]] || fail "fuzz $*: exit $(status "$name"), expected 2"
    [[ $(wc -l < "$WORK/$name.err") == 1 ]] || { cat "$WORK/$name.err" >&2; fail "fuzz $*: not one line"; }
    grep -qF -- "$expected" "$WORK/$name.err" || { cat "$WORK/$name.err" >&2; fail "fuzz $*: lacks '$expected'"; }
    [[ ! -s "$WORK/$name.calls" ]] || fail "fuzz $* installed something"
}
fuzz_refuses fuzz_target "tori: fuzz: unknown target 'nosuch' (expected one of: frame " nosuch
fuzz_refuses fuzz_zero "tori: fuzz: --seconds '0' is not a whole number of seconds" --seconds 0 frame
fuzz_refuses fuzz_words "tori: fuzz: --seconds 'ten' is not a whole number of seconds" --seconds ten
fuzz_refuses fuzz_missing "tori: fuzz: --seconds needs a number of seconds" --seconds
fuzz_refuses fuzz_two "tori: fuzz: one target at most (got 'frame' and 'link')" frame link
fuzz_refuses fuzz_option "tori: fuzz: unknown option '--runs'" --runs 5
run fuzz_list -- fuzz --list
[[ $(status fuzz_list) == 0 ]] || fail "fuzz --list: exit $(status fuzz_list)"
for target in $(grep -o '^[a-z_]*' "$SOURCE/tests/fuzz/targets.txt" | grep .); do
    grep -q "^$target " "$WORK/fuzz_list.out" || fail "fuzz --list lacks $target"
    [[ -d "$SOURCE/tests/fuzz/corpus/$target" ]] || fail "fuzz target $target has no seed corpus"
done
[[ ! -s "$WORK/fuzz_list.calls" ]] || fail "fuzz --list installed something"
echo "tori install: all checks passed"
