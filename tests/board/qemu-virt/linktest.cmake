# Test-only image node-linktest.elf, built by the qemu-virt preset next to
# node.elf (included by the top-level CMakeLists.txt): the board, its link
# driver and the kernel under linktest.c, the image's services module in
# place of the node's, which adds the console commands linktest, linkstats
# and linkrtt.  Booted by tests/board/qemu-virt (qemu.virtio_net_*);
# node.elf never contains it.
add_library(tori_linktest_services OBJECT ${CMAKE_CURRENT_LIST_DIR}/linktest.c)
tori_qemu_virt_image(node-linktest tori_linktest_services)
