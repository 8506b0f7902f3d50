#!/bin/bash
# tori-emu refuses bad set-ups with one clear line and exit 2, before it
# creates anything: bad dims, too many nodes for the port range, QEMU or the
# image or the node program missing, bad options.
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
rm -rf "$OUT" && mkdir -p "$OUT"
NOT_CREATED="$OUT/not-created"

refused() {
    local expected=$1
    shift
    check_refused "$OUT" tori-emu "$EMU" "$expected" "$@" --out "$NOT_CREATED"
    [[ ! -e "$NOT_CREATED" ]] || fail "tori-emu $* created its output directory"
}

refused "--dims '2x0x2' is invalid: dimension y has size 0" --dims 2x0x2 --board host
refused "--dims 'cube' is invalid" --dims cube --board host
refused "--dims '2x2x2x2x2x2x2' is invalid" --dims 2x2x2x2x2x2x2 --board host
refused "--dims is missing" --board host
# The MPI board (issue 18): a rank cannot come back, before anything starts.
refused "--inject: 'restart 1 at 2s': an MPI rank cannot come back or join (expected kill, hang or link faults with --board mpi)" \
    --dims 2x2 --board mpi --inject 'kill 1 at 1s; restart 1 at 2s'
refused "--chaos: kill, restart, reboot and join need a node that comes back" \
    --dims 2x2 --board mpi --chaos seed=1,kinds=kill,hang
refused "--mpiexec '/nonexistent/mpiexec' is not an executable program" \
    --dims 2x2 --board mpi --mpiexec /nonexistent/mpiexec
refused "512 nodes need 3072 UDP ports but --base-port 65000 leaves only 536 (65000..65535)" \
    --dims 8x8x8 --board host --base-port 65000
refused "node image '/nonexistent/node.elf' not found (expected a built image: run ./tori build qemu-virt" \
    --dims 2x2x2 --image /nonexistent/node.elf
# The image, before anything starts: a readable 32-bit ARM ELF executable
# (--qemu /bin/true: the QEMU check passes wherever QEMU is installed or not).
printf 'not an image\n' > "$OUT/text.img"
head -c 40 /dev/zero > "$OUT/zero.img"
python3 - "$OUT" <<'PY'
import struct, sys
def elf(name, klass, machine, kind):
    ident = b"\x7fELF" + bytes([klass, 1, 1]) + bytes(9)
    header = ident + struct.pack("<HHI", kind, machine, 1) + bytes(64 - 16 - 8)
    open(sys.argv[1] + "/" + name, "wb").write(header)
elf("x86.img", 2, 62, 2)      # an x86-64 executable
elf("object.img", 1, 40, 1)   # an ARM relocatable object
elf("arm64.img", 2, 40, 2)    # ARM's machine number, 64-bit class
data = open(sys.argv[1] + "/object.img", "rb").read()
open(sys.argv[1] + "/short.img", "wb").write(data[:30])
PY
refused "node image '$OUT' is a directory (expected a 32-bit ARM ELF node image such as build/qemu-virt/node.elf)" \
    --dims 2x2 --qemu /bin/true --image "$OUT"
refused "node image '$OUT/text.img' is not an ELF file (expected a 32-bit ARM ELF node image" \
    --dims 2x2 --qemu /bin/true --image "$OUT/text.img"
refused "node image '$OUT/zero.img' is not an ELF file" \
    --dims 2x2 --qemu /bin/true --image "$OUT/zero.img"
refused "node image '$OUT/x86.img' is an ELF file for machine 62 (x86-64), not ARM" \
    --dims 2x2 --qemu /bin/true --image "$OUT/x86.img"
refused "node image '$OUT/arm64.img' is a 64-bit little-endian ARM ELF file, not 32-bit little-endian" \
    --dims 2x2 --qemu /bin/true --image "$OUT/arm64.img"
refused "node image '$OUT/short.img' is a truncated ELF file" \
    --dims 2x2 --qemu /bin/true --image "$OUT/short.img"
refused "node image '$OUT/object.img' is an ARM ELF object file, not an executable" \
    --dims 2x2 --qemu /bin/true --image "$OUT/object.img"
refused "node image '/dev/null' is not a regular file" --dims 2x2 --qemu /bin/true --image /dev/null
refused "node image '$OUT/text.img' is not an ELF file" \
    --dims 2x2 --board mixed --qemu /bin/true --image "$OUT/text.img" --node-binary /bin/true
refused "node program '$OUT' is a directory (expected a built tori-node" \
    --dims 2x2 --board host --node-binary "$OUT"
refused "node program '$OUT/text.img' is not executable (expected a built tori-node" \
    --dims 2x2 --board host --node-binary "$OUT/text.img"
refused "qemu-system-nonexistent not found in PATH (expected QEMU for Arm" \
    --dims 2x2x2 --qemu qemu-system-nonexistent --image "$EMU"
refused "node program '/nonexistent/tori-node' not found (expected a built tori-node: run ./tori build host" \
    --dims 2x2x2 --board host --node-binary /nonexistent/tori-node
refused "node program '/nonexistent/tori-node' not found" \
    --dims 2x2x2 --board mixed --node-binary /nonexistent/tori-node --image "$EMU"
refused "--board 'arm' is invalid (expected qemu, host, mixed or mpi)" --dims 2x2 --board arm
refused "unknown option '--nodes'" --dims 2x2 --nodes 4
refused "--spares '4' is invalid (expected 0..3" --dims 2x2 --board host --spares 4

# Fault scripts: syntax and what cannot happen on this torus, before anything starts.
refused "--inject: 'kil 3 at 2s': unknown action 'kil' (expected kill, hang, resume, link, reboot, restart, join, suspect, block, partition, heal, appkill, leave, cut or ping)" \
    --dims 2x2x2 --board host --inject 'kil 3 at 2s'
refused "--inject: 'kill 8 at 1s': node 8 does not exist (expected 0..7)" \
    --dims 2x2x2 --board host --inject 'kill 2 at 0; kill 8 at 1s'
refused "--inject: 'restart 3 at 1s': node 3 is running (expected a killed node)" \
    --dims 2x2x2 --board host --inject 'restart 3 at 1s'
refused "--inject: 'join 2 at 1s': node 2 is not a spare (expected one of the last 1 ranks" \
    --dims 2x2x2 --board host --spares 1 --inject 'join 2 at 1s'
refused "--inject: 'link 1 z+ off at 1s': node 1 has no link z+" \
    --dims 2x2 --board host --inject 'link 1 z+ off at 1s'
# Issue 16: seed nodes are ids of the torus, at most 4, with a job.
refused "--seeds '0,8' is invalid (expected up to 4 node ids below 8, comma-separated, e.g. 0,7)" \
    --dims 2x2x2 --board host --app allreduce --seeds 0,8
refused "--seeds '0,1,2,3,4' is invalid (expected up to 4 node ids below 8" \
    --dims 2x2x2 --board host --app allreduce --seeds 0,1,2,3,4
refused "--seeds needs --app (expected --app NAME)" --dims 2x2x2 --board host --seeds 0
# Issue 16: groups and plane cuts, checked against the torus.
refused "--inject: 'kill x>=2 at 1s': the group holds no node of the torus" \
    --dims 2x2x2 --board host --inject 'kill x>=2 at 1s'
refused "--inject: 'cut x=0|1 except 4 at 1s': except 4 keeps every one of its 4 cables" \
    --dims 2x2x2 --board host --inject 'cut x=0|1 except 4 at 1s'
refused "--inject: 'restart 3 at 2s': node 3 is running (expected a killed node)" \
    --dims 2x2x2 --board host --inject 'kill x=1,y=0 at 1s; restart 3 at 2s'
refused "--inject: 'reboot 1 at 1s': node 1 is a host process (expected a QEMU node" \
    --dims 2x2 --board host --inject 'reboot 1 at 1s'
refused "--chaos: unknown key 'rat' (expected seed, rate, kinds, count, duration, hold)" \
    --dims 2x2 --board host --chaos 'seed=1,rat=2'
refused "--chaos: kinds=join needs spares (expected --spares K)" \
    --dims 2x2 --board host --chaos 'kinds=join'
refused "--fault-rates needs --chaos (expected --chaos seed=S,duration=D with the rates)" \
    --dims 2x2 --board host --fault-rates 'default: physical=1'
refused "--chaos: with --fault-rates the rates draw the faults over the duration (expected seed=S,duration=D[,hold=H], no rate, kinds or count)" \
    --dims 2x2 --board host --chaos 'seed=1,rate=2,duration=2s' --fault-rates 'default: physical=1'
refused "--fault-rates: the torus has no dimension z for group z<1" \
    --dims 2x2 --board host --chaos 'seed=1,duration=2s' --fault-rates 'z<1: physical=1'
refused "--sequential needs --inject" --dims 2x2 --board host --sequential
# Job runs (--app): the job block's options, checked as tori-personality checks them.
refused "--app 'fft' is invalid (expected allreduce, stencil, pingpong, greedy, stale or ftprobe)" \
    --dims 2x2 --board host --app fft
refused "--iterations '0' is invalid (expected a count in 1..1000000)" \
    --dims 2x2 --board host --app allreduce --iterations 0
refused "--iterations '1000001' is invalid (expected a count in 1..1000000)" \
    --dims 2x2 --board host --app allreduce --iterations 1000001
refused "--progress '11' is invalid (expected 0 (none) or a count up to --iterations)" \
    --dims 2x2 --board host --app allreduce --iterations 10 --progress 11
refused "--app-args '1,,2' is invalid (expected comma-separated signed 64-bit integers" \
    --dims 2x2 --board host --app allreduce --app-args 1,,2
refused "--app-args '1,2,3,4,5' is invalid (expected at most 4 integers)" \
    --dims 2x2 --board host --app allreduce --app-args 1,2,3,4,5
refused "--app-timeout 'soon' is invalid" --dims 2x2 --board host --app allreduce \
    --app-timeout soon
refused "--iterations needs --app (expected --app NAME)" --dims 2x2 --board host \
    --iterations 5
refused "--app-args needs --app (expected --app NAME)" --dims 2x2 --board host --app-args 1
refused "--comm-mode needs --app (expected --app NAME)" --dims 2x2 --board host \
    --comm-mode shrink
refused "--msg-mode needs --app (expected --app NAME)" --dims 2x2 --board host --msg-mode cont
refused "--comm-mode 'shrunk' is invalid (expected abort, blank, shrink or rebuild)" \
    --dims 2x2 --board host --app allreduce --comm-mode shrunk
refused "--msg-mode 'x' is invalid (expected nop or cont)" --dims 2x2 --board host \
    --app allreduce --msg-mode x
refused "--app and --job cannot be combined" --dims 2x2 --board host --app stencil \
    --job "$OUT/job.bin"
refused "--app and --ping cannot be combined" --dims 2x2 --board host --app stencil --ping
refused "--app and --duration cannot be combined" --dims 2x2 --board host --app stencil \
    --duration 1s
# Faults timed by iteration: only on a job whose nodes report that iteration.
refused "--inject: 'kill 3 at iteration 20': a fault timed by iteration needs a job (expected --app NAME" \
    --dims 2x2x2 --board host --inject 'kill 3 at iteration 20'
refused "--inject: 'kill 3 at iteration 70': the job runs only 60 iterations (expected N <= --iterations)" \
    --dims 2x2x2 --board host --app allreduce --iterations 60 --progress 10 \
    --inject 'kill 3 at iteration 70'
refused "--inject: 'hang 3 at iteration 25 for 1s': the nodes report progress every 10 iterations, never at 25 (expected a multiple of 10, e.g. 20 or 30)" \
    --dims 2x2x2 --board host --app allreduce --iterations 60 --progress 10 \
    --inject 'hang 3 at iteration 25 for 1s'
refused "--inject: 'kill 3 at iteration 5': the nodes report progress every 6 iterations (a tenth of --iterations), never at 5 (expected a multiple of 6, e.g. 6)" \
    --dims 2x2x2 --board host --app allreduce --iterations 60 --inject 'kill 3 at iteration 5'
refused "--inject: 'kill 3 at iteration 20': the nodes report no progress under --progress 0" \
    --dims 2x2x2 --board host --app allreduce --iterations 60 --progress 0 \
    --inject 'kill 3 at iteration 20'
refused "--inject: 'kill 7 at iteration 10': node 7 is a spare: it runs no application (expected a compute node, 0..6)" \
    --dims 2x2x2 --board host --spares 1 --app allreduce --iterations 60 --progress 10 \
    --inject 'kill 7 at iteration 10'
# Faults timed by recovery: only on a job whose communicators recover.
refused "--inject: 'kill 5 at recovery': a fault timed by recovery needs a job that recovers (expected --app NAME with --comm-mode shrink, blank or rebuild)" \
    --dims 2x2x2 --board host --inject 'kill 3 at 1s; kill 5 at recovery'
refused "--inject: 'kill 5 at recovery + 1ms': a fault timed by recovery needs a job that recovers" \
    --dims 2x2x2 --board host --app allreduce --iterations 60 \
    --inject 'kill 3 at iteration 30; kill 5 at recovery + 1ms'
refused "--inject: 'kill 5 at recovery 1ms': '1ms' after 'at recovery' (expected '+ D', 'for D' or the end" \
    --dims 2x2x2 --board host --app allreduce --comm-mode shrink --inject 'kill 5 at recovery 1ms'
refused "--inject: 'kill 7 at recovery': node 7 is a spare: it runs no application (expected a compute node, 0..6)" \
    --dims 2x2x2 --board host --spares 1 --app allreduce --comm-mode shrink \
    --inject 'kill 7 at recovery'

"$EMU" --help > "$OUT/help.txt" || fail "--help failed"
check_contains "$OUT/help.txt" "usage: tori-emu --dims DIMS"
check_contains "$OUT/help.txt" "--inject SCRIPT"
echo "emu.errors: all checks passed"
