#!/usr/bin/env python3
"""Runs QEMU nodes cabled into a small torus and checks the virtio-net link driver.

usage: virtio_net_test.py CASE --qemu QEMU --linktest-elf ELF --personality-tool TOOL
                          [--timeout S]

The image is node-linktest.elf (tests/board/qemu-virt/linktest.c): the qemu-virt
board with the link driver and the console commands `linktest [COUNT
[PAYLOAD]]` and `linkstats`.  Links are cabled the way the launcher does it:
per link one UDP socket opened here with a 4 MiB receive buffer, bound to
127.0.0.1 and connected to its peer's socket, handed to QEMU as -netdev
dgram,local.type=fd (QEMU 7.2 accepts no remote.* with a local fd), and a
virtio-net-device on bus=virtio-mmio-bus.SLOT whose MAC is 02:74:RR:RR:RR:LL;
the peer of (node, link L) is (neighbour, L ^ 1).

Cases (one per CTest test, see tests/board/qemu-virt/CMakeLists.txt):
  links          2x2 torus, 4 nodes;
                 node 3's NICs sit in reversed slots and node 0 has a
                 virtio-rng device too.  Every node finds its 4 links, one
                 frame crosses every link both ways with the right source
                 and source link, then 100 maximum-size frames per link
                 arrive complete, in order, with no drop counted.
  idle-cpu       1-D torus of 2 (x+ and x- both cabled to the neighbour):
                 after traffic, each idle node costs its QEMU < 2% of a core.
  rtt            1-D torus of 2: 50 echo round trips over x+, one at a time
                 (`linkrtt`), all answered; prints min/median/p90/max as a
                 measurement (no time is asserted).
  foreign-mac    a NIC whose MAC names another rank: the exact halt line,
                 no ready, ~0% CPU after.
  absent-link    a NIC naming a link (y+) the 1-D torus does not have.
  duplicate-link two NICs naming the same link.
  not-tori-mac   a NIC with QEMU's usual 52:54:00:... address.
  legacy         QEMU without -global virtio-mmio.force-legacy=false.

QEMU is started, read, stopped and cleaned up by qemu_harness.py (every
process killed on any exit; console lines echoed for the CTest log).
Exit status: 0 pass, 1 fail, 2 usage or environment error.
"""

import os
import re
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import qemu_harness as harness  # noqa: E402  (tests/board/qemu-virt/qemu_harness.py)
from qemu_harness import TestFailure, event_fields  # noqa: E402

RCVBUF_BYTES = 4 << 20
IDLE_MEASURE_SECONDS = 4.0
BULK_FRAMES = 100
MAX_PAYLOAD = 1450  # CONFIG_MAX_FRAME 1514 - the 64-byte header: full-size frames
LINK_NAMES = ["x+", "x-", "y+", "y-", "z+", "z-", "u+", "u-", "v+", "v-", "w+", "w-"]
COUNTERS = ("sent", "send_busy", "send_errors", "received", "receive_drops",
            "good", "bad", "out_of_order", "unsent", "echoed")
RTT_COUNT = 50


def link_mac(rank, link):
    return f"02:74:{(rank >> 16) & 0xff:02x}:{(rank >> 8) & 0xff:02x}:{rank & 0xff:02x}:{link:02x}"


class Torus:
    """Rank <-> coordinates and neighbours of an all-torus shape (dim 0 fastest)."""

    def __init__(self, sizes):
        self.sizes = sizes
        self.count = 1
        for size in sizes:
            self.count *= size

    def links(self, rank):
        # No link in a dimension of size 1 (as in net/torus/geometry.h).
        return [2 * d + s for d, size in enumerate(self.sizes) if size > 1 for s in (0, 1)]

    def neighbour(self, rank, link):
        dim, minus = divmod(link, 2)
        stride = 1
        for size in self.sizes[:dim]:
            stride *= size
        coord = (rank // stride) % self.sizes[dim]
        step = -1 if minus else 1
        return rank + (((coord + step) % self.sizes[dim]) - coord) * stride

    def dims_text(self):
        return "x".join(str(size) for size in self.sizes)


def open_link_socket():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF_BYTES)
    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) < RCVBUF_BYTES:
        try:  # above net.core.rmem_max: only CAP_NET_ADMIN may force it
            sock.setsockopt(socket.SOL_SOCKET, 33, RCVBUF_BYTES)  # SO_RCVBUFFORCE
        except OSError:
            pass
    sock.bind(("127.0.0.1", 0))
    return sock


class Nic:
    """One NIC of a node: its slot, MAC and, when cabled, socket and peer port."""

    def __init__(self, link, slot, mac, sock=None, peer_port=None):
        self.link = link
        self.slot = slot
        self.mac = mac
        self.sock = sock
        self.peer_port = peer_port


class Node(harness.QemuNode):
    """One qemu-system-arm running node-linktest.elf with its NICs cabled."""

    def __init__(self, args, work_dir, rank, personality, nics, modern=True, extra=()):
        self.rank = rank
        command = harness.node_command(args.qemu, args.linktest_elf, personality,
                                       console_input=True)
        if modern:
            command += ["-global", "virtio-mmio.force-legacy=false"]
        fds = []
        try:
            for nic in nics:
                sock = nic.sock if nic.sock is not None else open_link_socket()
                nic.sock = sock
                fds.append(sock.fileno())
                # QEMU 7.2 refuses remote.* next to local.type=fd ("don't set
                # remote with local.fd"): the socket itself is connected to the peer.
                sock.connect(("127.0.0.1", nic.peer_port))
                netdev = f"dgram,id=l{nic.slot},local.type=fd,local.str={sock.fileno()}"
                command += ["-netdev", netdev, "-device",
                            f"virtio-net-device,netdev=l{nic.slot},mac={nic.mac},"
                            f"bus=virtio-mmio-bus.{nic.slot}"]
            command += list(extra)
            super().__init__(command, work_dir, name=f"node {rank}", console_input=True,
                             pass_fds=fds)
        finally:
            for nic in nics:  # QEMU has its copies now
                if nic.sock is not None:
                    nic.sock.close()


def write_personality(tool, work_dir, rank, dims):
    path = os.path.join(work_dir, f"personality{rank}.bin")
    harness.write_personality(tool, path, rank, dims)
    return path


def start_torus(args, work_dir, started, torus, reversed_slots=(), extra=None):
    """Opens every link socket, then starts one node per rank, cabled."""
    sockets = {}
    ports = {}
    for rank in range(torus.count):
        for link in torus.links(rank):
            sockets[(rank, link)] = open_link_socket()
            ports[(rank, link)] = sockets[(rank, link)].getsockname()[1]
    nodes = []
    for rank in range(torus.count):
        nics = []
        links = torus.links(rank)
        for index, link in enumerate(links):
            peer = (torus.neighbour(rank, link), link ^ 1)
            slot = links[len(links) - 1 - index] if rank in reversed_slots else link
            nics.append(Nic(link, slot, link_mac(rank, link), sockets[(rank, link)],
                            ports[peer]))
        personality = write_personality(args.personality_tool, work_dir, rank,
                                        torus.dims_text())
        node = Node(args, work_dir, rank, personality, nics,
                    extra=(extra or {}).get(rank, ()))
        started.append(node)
        nodes.append(node)
    return nodes


def expect_ready_with_links(node, torus, timeout):
    expected = sum(1 << link for link in torus.links(node.rank))
    _, match = node.wait_for(r"tori node=\d+ event=linktest-links .*", timeout)
    fields = event_fields(match.group(0))
    if fields.get("driver") != "virtio-net":
        raise TestFailure(f"node {node.rank}: driver {fields.get('driver')}, expected virtio-net")
    if int(fields["mask"], 16) != expected:
        raise TestFailure(f"node {node.rank}: link mask {fields['mask']}, expected {expected:#x}")
    for link in torus.links(node.rank):
        node.wait_for(rf"tori node={node.rank} event=linktest-link t_ns=\d+ "
                      rf"link={re.escape(LINK_NAMES[link])} "
                      rf"peer={torus.neighbour(node.rank, link)} "
                      rf"peer_link={re.escape(LINK_NAMES[link ^ 1])}", timeout)
    # The linktest-links line above is the image's own (linktest.c).
    node.wait_for(rf"tori node={node.rank} event=ready t_ns=\d+ .*", timeout)


def expect_one_frame_per_link(nodes, torus, timeout):
    """linktest on every node: every link reports one frame from the right peer."""
    marks = [len(node.lines) for node in nodes]
    for node in nodes:
        node.command("linktest")
    for node, mark in zip(nodes, marks):
        for link in torus.links(node.rank):
            node.wait_for(rf"tori node={node.rank} event=linktest-rx t_ns=\d+ "
                          rf"link={re.escape(LINK_NAMES[link])} "
                          rf"source={torus.neighbour(node.rank, link)} "
                          rf"source_link={re.escape(LINK_NAMES[link ^ 1])} "
                          rf"sequence=\d+ bytes=69", timeout, start=mark)  # 64 + 5
        bad = [line for line in node.lines[mark:] if " event=linktest-bad " in line]
        if bad:
            raise TestFailure(f"node {node.rank}: bad frames: {bad}")


def link_stats(node, link_count, timeout):
    """Asks for linkstats; returns {link name: {counter: value}}."""
    mark = len(node.lines)
    node.command("linkstats")
    stats = {}
    index = mark
    while len(stats) < link_count:
        index, match = node.wait_for(rf"tori node={node.rank} event=linkstats .*", timeout,
                                     start=index)
        fields = event_fields(match.group(0))
        stats[fields["link"]] = {name: int(fields[name]) for name in COUNTERS}
        index += 1
    return stats


def expect_bulk(nodes, torus, timeout):
    """COUNT full-size frames per link: all arrive, in order, nothing dropped."""
    for node in nodes:
        node.command(f"linktest {BULK_FRAMES} {MAX_PAYLOAD}")
    total = BULK_FRAMES + 1  # the single frame of expect_one_frame_per_link
    until = time.monotonic() + timeout
    for node in nodes:
        while True:
            stats = link_stats(node, len(torus.links(node.rank)), timeout)
            if all(s["good"] >= total and s["unsent"] == 0 for s in stats.values()):
                break
            if time.monotonic() > until:
                raise TestFailure(f"node {node.rank}: not all {total} frames arrived "
                                  f"within {timeout:g} s: {stats}")
            node.drain(0.2)
        for name, s in stats.items():
            problems = {k: s[k] for k in ("send_errors", "receive_drops", "bad",
                                          "out_of_order") if s[k] != 0}
            if s["sent"] != total or s["received"] != total or s["good"] != total:
                problems["sent/received/good"] = (s["sent"], s["received"], s["good"])
            if problems:
                raise TestFailure(f"node {node.rank} link {name}: {problems} "
                                  f"(expected {total} sent, received and good, no errors)")
        print(f"node {node.rank}: {total} frames per link both ways; send_busy "
              f"{ {name: s['send_busy'] for name, s in stats.items()} }", flush=True)


def expect_halt(node, reason, timeout, measure_cpu=False):
    harness.expect_halt(node, str(node.rank), reason, timeout, cause="the bad NIC",
                        measure_cpu=measure_cpu)


def single_node(args, work_dir, started, nics, modern=True):
    """Node 0 of a 1-D torus of 2, with the given NICs cabled to a socket
    that nobody reads (the node halts before it sends anything)."""
    sink = open_link_socket()
    for nic in nics:
        nic.peer_port = sink.getsockname()[1]
    personality = write_personality(args.personality_tool, work_dir, 0, "2")
    node = Node(args, work_dir, 0, personality, nics, modern=modern)
    node.sink = sink  # kept open while the node runs
    started.append(node)
    return node


def run_case(args, work_dir, started):
    case = args.case
    if case == "links":
        torus = Torus([2, 2])
        extra = {0: ["-device", "virtio-rng-device,bus=virtio-mmio-bus.8"]}
        nodes = start_torus(args, work_dir, started, torus, reversed_slots=(3,),
                            extra=extra)
        for node in nodes:
            expect_ready_with_links(node, torus, args.timeout)
        expect_one_frame_per_link(nodes, torus, args.timeout)
        expect_bulk(nodes, torus, args.timeout)
    elif case == "idle-cpu":
        torus = Torus([2])
        nodes = start_torus(args, work_dir, started, torus)
        for node in nodes:
            expect_ready_with_links(node, torus, args.timeout)
        expect_one_frame_per_link(nodes, torus, args.timeout)
        for node in nodes:
            harness.expect_idle_cpu(node, IDLE_MEASURE_SECONDS,
                                    f"node {node.rank} (idle, 2 links, after traffic)",
                                    hint=" (InterruptACK missed?)")
        # Still alive after the idle period: one more frame each way.
        expect_one_frame_per_link(nodes, torus, args.timeout)
    elif case == "rtt":
        torus = Torus([2])
        nodes = start_torus(args, work_dir, started, torus)
        for node in nodes:
            expect_ready_with_links(node, torus, args.timeout)
        nodes[0].command(f"linkrtt {RTT_COUNT}")
        _, match = nodes[0].wait_for(r"tori node=0 event=linkrtt .*", args.timeout)
        fields = event_fields(match.group(0))
        if fields.get("link") != "x+" or int(fields["count"]) != RTT_COUNT or \
                int(fields["lost"]) != 0:
            raise TestFailure(f"linkrtt: {match.group(0)} (expected {RTT_COUNT} "
                              f"answered on x+, none lost)")
        print("one-hop round trip through the driver: " +
              ", ".join(f"{key} {int(fields[key]) / 1000:.0f} us"
                        for key in ("min_ns", "median_ns", "p90_ns", "max_ns")),
              flush=True)
        stats = link_stats(nodes[1], 2, args.timeout)
        if stats["x-"]["echoed"] != RTT_COUNT:
            raise TestFailure(f"node 1 echoed {stats['x-']['echoed']} on x-, "
                              f"expected {RTT_COUNT}")
    elif case == "foreign-mac":
        node = single_node(args, work_dir, started, [Nic(0, 0, link_mac(1, 0))])
        expect_halt(node, "virtio-net: slot 0 has MAC 02:74:00:00:01:00 naming node 1, "
                          "expected this node (0)", args.timeout, measure_cpu=True)
    elif case == "absent-link":
        node = single_node(args, work_dir, started,
                           [Nic(0, 0, link_mac(0, 0)), Nic(2, 1, link_mac(0, 2))])
        expect_halt(node, "virtio-net: slot 1 has MAC 02:74:00:00:00:02 naming link y+, "
                          "which node 0 does not have in its torus", args.timeout)
    elif case == "duplicate-link":
        node = single_node(args, work_dir, started,
                           [Nic(0, 3, link_mac(0, 0)), Nic(0, 5, link_mac(0, 0))])
        expect_halt(node, "virtio-net: slot 5 has MAC 02:74:00:00:00:00 naming link x+, "
                          "expected one NIC per link but slot 3 has it too", args.timeout)
    elif case == "not-tori-mac":
        node = single_node(args, work_dir, started, [Nic(0, 0, "52:54:00:12:34:56")])
        expect_halt(node, "virtio-net: slot 0 has MAC 52:54:00:12:34:56, expected a tori "
                          "link MAC 02:74:RR:RR:RR:LL (rank, link < 12)", args.timeout)
    elif case == "legacy":
        node = single_node(args, work_dir, started, [Nic(0, 0, link_mac(0, 0))],
                           modern=False)
        expect_halt(node, "virtio-net: slot 0 is a legacy virtio-mmio device (version 1), "
                          "expected version 2 (QEMU option -global "
                          "virtio-mmio.force-legacy=false)", args.timeout)
    else:
        raise TestFailure(f"unknown case '{case}'")


def main():
    parser = harness.argument_parser(__doc__.split("\n")[0], "--linktest-elf")
    args = parser.parse_args()

    return harness.run("virtio_net_test", args.case,
                       lambda work_dir, started: run_case(args, work_dir, started),
                       [(args.linktest_elf, "the qemu-virt build: cmake --preset qemu-virt "
                                            "&& cmake --build build/qemu-virt"),
                        (args.personality_tool, "tori-personality from the host build")])


if __name__ == "__main__":
    sys.exit(main())
