#!/bin/bash
# The strict qemu-system-arm (tests/board/qemu-virt/strict-bin) that every test finds
# first on PATH: it refuses a virt command line leaning on QEMU's default
# devices with one line naming the flag, and otherwise runs the next
# qemu-system-arm on PATH with the same arguments and exit status.  A fake
# "real" QEMU records what it was given, so no QEMU is needed.
# usage: test_strict_wrapper.sh STRICT_BIN_DIR WORK_DIR
set -u
STRICT=$1
WORK=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

# This very test runs with the wrapper first on PATH (CTest's environment).
[[ "$(command -v qemu-system-arm)" == "$STRICT/qemu-system-arm" ]] \
    || fail "qemu-system-arm on this test's PATH is $(command -v qemu-system-arm), not $STRICT/qemu-system-arm"

rm -rf "$WORK"
mkdir -p "$WORK/real"
cat > "$WORK/real/qemu-system-arm" <<EOF
#!/bin/sh
printf '%s\n' "\$@" > "$WORK/real.args"
exit 3
EOF
chmod +x "$WORK/real/qemu-system-arm"
ln -s "$STRICT" "$WORK/strict-link"
# The wrapper twice (once through a symlink) before the fake real QEMU.
TEST_PATH="$STRICT:$WORK/strict-link:$WORK/real:/usr/bin:/bin"

# refused WANTED_TEXT QEMU_ARGS...: exits non-zero with one line naming it.
refused() {
    local wanted=$1; shift
    rm -f "$WORK/real.args"
    PATH=$TEST_PATH qemu-system-arm "$@" > "$WORK/out" 2> "$WORK/err"
    local status=$?
    [[ $status -ne 0 ]] || fail "accepted: $*"
    [[ ! -e "$WORK/real.args" ]] || fail "ran QEMU for: $*"
    [[ $(wc -l < "$WORK/err") -eq 1 ]] || { cat "$WORK/err" >&2; fail "not one line for: $*"; }
    grep -qF -- "$wanted" "$WORK/err" || { cat "$WORK/err" >&2; fail "'$wanted' not named for: $*"; }
    echo "refused ($wanted): $*"
}

# passed QEMU_ARGS...: the fake QEMU got exactly these arguments, status 3.
passed() {
    rm -f "$WORK/real.args"
    PATH=$TEST_PATH qemu-system-arm "$@" > "$WORK/out" 2> "$WORK/err"
    local status=$?
    [[ $status -eq 3 ]] || { cat "$WORK/err" >&2; fail "exit $status (the real QEMU's 3 expected) for: $*"; }
    [[ "$(cat "$WORK/real.args")" == "$(printf '%s\n' "$@")" ]] || fail "arguments changed for: $*"
    echo "passed: $*"
}

PERSONALITY=loader,file=node0.personality,addr=0x40100000,force-raw=on
# cert's runtime check before -nodefaults (issue 11).
refused -nodefaults -M virt -cpu cortex-a15 -m 128M -display none -monitor none \
    -serial stdio -no-reboot -kernel node.elf -device "$PERSONALITY"
# The README's hand-boot command before -nodefaults.
refused -nographic -M virt -cpu cortex-a15 -m 128M -nographic -kernel node.elf -device "$PERSONALITY"
refused -nographic -M virt -nodefaults -nographic -kernel node.elf
refused "-display none" -M virt -nodefaults -serial mon:stdio -kernel node.elf
refused -nodefaults -machine type=virt,highmem=off -display none -kernel node.elf
refused -nodefaults --machine virt-7.2 --display none -kernel node.elf

passed -M virt -cpu cortex-a15 -m 128M -nodefaults -display none -serial mon:stdio \
    -kernel node.elf -device "$PERSONALITY"
passed --machine virt --nodefaults --display none -kernel 'a file with spaces.elf'
passed --version
passed -M vexpress-a15 -kernel node.elf

# Without a real QEMU after it on PATH, it says so instead of looping.
mkdir "$WORK/tools"
for tool in bash readlink; do ln -s "$(command -v $tool)" "$WORK/tools/$tool"; done
PATH="$STRICT:$WORK/strict-link:$WORK/tools" qemu-system-arm --version > "$WORK/out" 2> "$WORK/err"
[[ $? -ne 0 ]] || fail "succeeded without a real qemu-system-arm"
grep -qF "no qemu-system-arm on PATH besides this wrapper" "$WORK/err" || fail "$(cat "$WORK/err")"
echo "strict qemu-system-arm: all checks passed"
