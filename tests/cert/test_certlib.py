#!/usr/bin/env python3
"""Unit tests of tori-cert's parsers and graph algorithms (cert/certlib)."""
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cert"))

from certlib import conf, disasm  # noqa: E402
from certlib.callgraph import Edge, shortest_cycle  # noqa: E402
from certlib.checks import runtime  # noqa: E402
from certlib.linkmap import LinkMap  # noqa: E402


def insn(text, comment=""):
    mnemonic, _, operands = text.partition(" ")
    i = disasm.Instruction(0x1000, mnemonic, operands, comment)
    disasm.classify(i)
    return i


class Classify(unittest.TestCase):
    def test_stack_decrements(self):
        self.assertEqual(insn("push {r4, r5, r6, lr}").stack_change, ("dec", 16))
        self.assertEqual(insn("sub sp, sp, #44").stack_change, ("dec", 44))
        self.assertEqual(insn("sub sp, #16").stack_change, ("dec", 16))
        self.assertEqual(insn("sub.w sp, sp, #4096").stack_change, ("dec", 4096))
        self.assertEqual(insn("strd r4, r5, [sp, #-16]!").stack_change, ("dec", 16))
        self.assertEqual(insn("str lr, [sp, #-4]!").stack_change, ("dec", 4))
        self.assertEqual(insn("stmdb sp!, {r4, r5, r6, r7, r8, r9, lr}").stack_change, ("dec", 28))
        self.assertEqual(insn("vpush {d8-d9}").stack_change, ("dec", 16))

    def test_stack_releases_and_plain_uses(self):
        for text in ("pop {r4, pc}", "ldmia.w sp!, {r4, r5, pc}", "add sp, sp, #44",
                     "stm sp, {r3, r8}", "stmib sp, {r1, r2}", "ldrd r4, r5, [sp], #16",
                     "str r0, [sp, #4]", "add r3, sp, #8"):
            self.assertIsNone(insn(text).stack_change, text)

    def test_stack_unbounded_and_reset(self):
        self.assertEqual(insn("sub sp, sp, r3").stack_change[0], "dynamic")
        self.assertEqual(insn("mov sp, r2").stack_change[0], "dynamic")
        self.assertEqual(insn("ldr sp, [pc, #80]", "40200080 <_start+0x80>").stack_change[0], "reset")

    def test_transfers(self):
        self.assertEqual(insn("bl 40200118 <board_init>").kind, "call")
        self.assertEqual(insn("bl 40200118 <board_init>").target, 0x40200118)
        self.assertEqual(insn("blx 40201c44 <memset>").kind, "call")
        self.assertEqual(insn("blx r3").kind, "icall")
        self.assertEqual(insn("bx lr").kind, "return")
        self.assertEqual(insn("bx r3").kind, "ijump")
        self.assertEqual(insn("mov pc, r3").kind, "ijump")
        self.assertEqual(insn("ldr pc, [sp], #4").kind, "return")
        self.assertEqual(insn("ldr pc, [pc, #-4]", "8224 <__malloc_from_arm+0x4>").kind, "literal-jump")
        self.assertEqual(insn("popne {r4, pc}").kind, "return")
        self.assertEqual(insn("subs pc, lr, #4").kind, "exception-return")
        self.assertEqual(insn("eret").kind, "exception-return")

    def test_branch_mnemonics_are_not_calls(self):
        for text in ("bls 40201000 <f+0x10>", "ble 40201000 <f+0x10>", "blt 40201000 <f>",
                     "blo 40201000 <f>", "b.w 40201000 <g>", "bne.n 40201000 <f>"):
            self.assertEqual(insn(text).kind, "branch", text)
        self.assertTrue(insn("bls 40201000 <f+0x10>").conditional)
        self.assertFalse(insn("b.w 40201000 <g>").conditional)
        self.assertEqual(insn("cbz r3, 40201000 <f+0x8>").kind, "branch")
        self.assertEqual(insn("bleq 40201000 <g>").kind, "call")

    def test_literal_load(self):
        i = insn("ldr r0, [pc, #108]", "40200078 <_start+0x78>")
        self.assertEqual(i.literal, 0x40200078)
        self.assertEqual(i.writes, "r0")


class Conf(unittest.TestCase):
    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_indirect_calls(self):
        c = conf.IndirectCalls(self.write(
            "poll_once call:poll_register:2 a b  # pollers\n"
            "udiv local -\n"
            'address-only vectors "installed in VBAR, never called"\n'))
        self.assertEqual(c.entries["poll_once"].sources, [("call", "poll_register", 2)])
        self.assertEqual(c.entries["poll_once"].targets, ["a", "b"])
        self.assertEqual(c.entries["udiv"].targets, [])
        self.assertIn("vectors", c.address_only)

    def test_indirect_calls_errors_name_the_line(self):
        with self.assertRaisesRegex(conf.ConfError, r":1: bad source 'call:f:9'"):
            conf.IndirectCalls(self.write("x call:f:9 a\n"))
        with self.assertRaisesRegex(conf.ConfError, r":2: second entry for x"):
            conf.IndirectCalls(self.write("x local -\nx local -\n"))

    def test_budgets(self):
        text = "".join(f"{name} 1K\n" for name in conf.Budgets.KNOWN)
        b = conf.Budgets(self.write(text))
        self.assertEqual(b["stack"], 1024)
        with self.assertRaisesRegex(conf.ConfError, "unknown budget 'heap'"):
            conf.Budgets(self.write(text + "heap 4\n"))
        with self.assertRaisesRegex(conf.ConfError, "budgets missing: stack"):
            conf.Budgets(self.write(text.replace("stack 1K\n", "")))
        with self.assertRaisesRegex(conf.ConfError, "'lots' is not a size"):
            conf.Budgets(self.write(text.replace("stack 1K", "stack lots")))

    def test_deviations_need_a_justification(self):
        with self.assertRaisesRegex(conf.ConfError, "real justification"):
            conf.Deviations(self.write('misra-c2012-21.3 kernel/x.c "because"\n'))
        d = conf.Deviations(self.write(
            'misra-c2012-21.3 kernel/x.c:12 "the test-only image must call malloc late"\n'))
        self.assertIsNotNone(d.match("misra-c2012-21.3", "kernel/x.c", 12))
        self.assertIsNone(d.match("misra-c2012-21.3", "kernel/x.c", 13))
        self.assertIsNone(d.match("misra-c2012-17.2", "kernel/x.c", 12))

    def test_sizing(self):
        s = conf.Sizing(self.write('object node@node/node.c "sizeof(struct node)" node/node.h\n'
                                   'part m "sizeof(struct membership)" membership/membership.h\n'))
        self.assertEqual((s.objects[0].symbol, s.objects[0].source), ("node", "node/node.c"))
        self.assertTrue(s.measures[0].part)


class Graph(unittest.TestCase):
    def test_shortest_cycle_follows_real_edges(self):
        class G:
            pass
        class F:
            def __init__(self, label):
                self.label = label
        a, b, c, d = F("a"), F("b"), F("c"), F("d")
        g = G()
        g.edges = {a: [Edge(a, b, "call", 1)], b: [Edge(b, c, "call", 2), Edge(b, d, "call", 3)],
                   c: [Edge(c, a, "indirect", 4)], d: [Edge(d, b, "call", 5)]}
        path, edges = shortest_cycle(g, [a, b, c, d])
        self.assertEqual([f.label for f in path], ["a", "b", "c", "a"])
        self.assertEqual([e.kind for e in edges], ["call", "call", "indirect"])


class Map(unittest.TestCase):
    def test_input_sections(self):
        text = ("Linker script and memory map\n\n"
                " .text.board_init\n"
                "                0x40200118       0x50 board/x/CMakeFiles/node.dir/board.c.obj\n"
                "                0x40200118                board_init\n"
                " .text.put_key  0x40200a58       0x24 kernel/libtori_kernel.a(event.c.obj)\n"
                " .text.memset   0x40201c44       0xa8 /usr/lib/x/libg_nano.a(lib_a-memset.o)\n")
        f = tempfile.NamedTemporaryFile("w", suffix=".map", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        m = LinkMap(f.name)
        self.assertEqual(m.at(0x40200120).object, "board/x/CMakeFiles/node.dir/board.c.obj")
        self.assertEqual(m.at(0x40200a60).object, "kernel/libtori_kernel.a(event.c.obj)")
        self.assertTrue(m.at(0x40201c50).library)
        self.assertIsNone(m.at(0x40200200))


class RuntimeQemu(unittest.TestCase):
    def test_qemu_that_cannot_start_says_why(self):
        # As QEMU stops on a fresh machine when a default device's ROM is missing.
        command = ["sh", "-c", "echo 'qemu-system-arm: failed to find romfile \"efi-virtio.rom\"'; exit 1"]
        output, halted, reason = runtime._run_qemu(command, "halt\n")
        self.assertFalse(halted)
        self.assertEqual(reason, 'qemu exited (1): qemu-system-arm: failed to find romfile "efi-virtio.rom"')


if __name__ == "__main__":
    unittest.main()
