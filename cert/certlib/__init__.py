"""tori-cert: static-memory certification of the tori node image.

The package is split by concern: elf (reading the linked image), disasm
(objdump parsing and instruction classes), image (one built tree: ELF, map,
.su and .ci files), callgraph (whole-program graph and the queries the
checks need), conf (the committed cert/*.conf files), build (CMake trees),
probe (compile-time sizes), and one module per check under checks/.
Python 3.11 standard library only.
"""
