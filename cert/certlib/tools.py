"""External programs the certification uses, found once, with their versions."""
import os
import shutil
import subprocess

CROSS = "arm-none-eabi-"


class ToolError(Exception):
    pass


def run(command, cwd=None, env=None, check=True, timeout=None):
    """Runs a command, returns (returncode, stdout, stderr) as text."""
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)
    if check and result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-15:]
        raise ToolError(f"{' '.join(command)} failed (exit {result.returncode}):\n  "
                        + "\n  ".join(tail))
    return result.returncode, result.stdout, result.stderr


class Tools:
    def __init__(self):
        self.cc = self._need(CROSS + "gcc")
        self.objdump = self._need(CROSS + "objdump")
        self.addr2line_path = self._need(CROSS + "addr2line")
        self.nm = self._need(CROSS + "nm")
        self.cmake = self._need("cmake")
        self.ninja = self._need("ninja")
        self.host_cc = shutil.which("gcc")
        self.cppcheck = shutil.which("cppcheck")
        self.clang_tidy = shutil.which("clang-tidy")
        self.qemu = shutil.which("qemu-system-arm")
        self._lines = {}
        self._chains = {}

    @staticmethod
    def _need(name):
        path = shutil.which(name)
        if path is None:
            raise ToolError(f"{name} not found (expected the Debian package providing it; "
                            f"./tori installs it as root)")
        return path

    def versions(self):
        def first_line(cmd):
            if cmd[0] is None:
                return None
            try:
                _, out, err = run(cmd, check=False)
            except OSError:
                return None
            text = (out or err).strip().splitlines()
            return text[0] if text else None
        return {
            "cc": first_line([self.cc, "--version"]),
            "binutils": first_line([self.objdump, "--version"]),
            "newlib": self._newlib_version(),
            "host_cc": first_line([self.host_cc, "--version"]),
            "cmake": first_line([self.cmake, "--version"]),
            "cppcheck": first_line([self.cppcheck, "--version"]),
            "clang_tidy": " ".join(l.strip() for l in (run([self.clang_tidy, "--version"], check=False)[1].splitlines()[:2])) if self.clang_tidy else None,
            "qemu": first_line([self.qemu, "--version"]),
            "python": first_line(["python3", "--version"]),
        }

    def _newlib_version(self):
        code, out, _ = run([self.cc, "-dM", "-E", "-x", "c", "-include", "newlib.h", "/dev/null"],
                           check=False)
        if code != 0:
            return None
        for line in out.splitlines():
            if line.startswith("#define _NEWLIB_VERSION "):
                return "newlib " + line.split(None, 2)[2].strip('"')
        return None

    def addr2line(self, elf, addr, source_dir=None):
        """'file:line' of an address (cached; batches are done by prefetch)."""
        key = (elf, addr)
        if key not in self._lines:
            self.prefetch_lines(elf, [addr], source_dir)
        return self._lines.get(key)

    def prefetch_lines(self, elf, addrs, source_dir=None):
        todo = sorted({a for a in addrs if (elf, a) not in self._lines})
        if not todo:
            return
        _, out, _ = run([self.addr2line_path, "-e", elf] + [f"{a:x}" for a in todo], check=False)
        lines = out.splitlines()
        for a, line in zip(todo, lines):
            line = line.split(" (discriminator")[0].strip()
            if line.startswith("??"):
                self._lines[(elf, a)] = None
                continue
            if source_dir and line.startswith(os.path.abspath(source_dir) + os.sep):
                line = line[len(os.path.abspath(source_dir)) + 1:]
            self._lines[(elf, a)] = line

    def inline_chains(self, elf, addrs, source_dir=None):
        """{addr: [(function, 'file:line'), ...]}, innermost inlined function first."""
        todo = sorted({a for a in addrs if (elf, a) not in self._chains})
        if todo:
            _, out, _ = run([self.addr2line_path, "-a", "-f", "-i", "-e", elf]
                            + [f"{a:x}" for a in todo], check=False)
            current = None
            lines = out.splitlines()
            i = 0
            while i < len(lines):
                if lines[i].startswith("0x"):
                    current = int(lines[i], 16)
                    self._chains[(elf, current)] = []
                    i += 1
                    continue
                if i + 1 >= len(lines) or current is None:
                    break
                name, where = lines[i], lines[i + 1].split(" (discriminator")[0].strip()
                i += 2
                if name == "??":
                    continue
                if source_dir and where.startswith(os.path.abspath(source_dir) + os.sep):
                    where = where[len(os.path.abspath(source_dir)) + 1:]
                self._chains[(elf, current)].append((name, where))
        return {a: self._chains.get((elf, a), []) for a in addrs}
