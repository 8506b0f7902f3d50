/*
 * Linker script of the qemu-virt node image.  It is run through the C
 * preprocessor so that every address comes from one place,
 * board/qemu-virt/memory_map.h.  One region holds the whole image, loaded
 * where it runs (so start-up code copies .data only if that ever changes);
 * the QEMU DTB and the personality page below it are never part of it.
 *
 * Symbols for start-up code and diagnostics:
 *   __image_start, __image_end      the whole image, stack included
 *   __text_start, __text_end        code (fault and panic addresses)
 *   __data_start, __data_end, __data_load_start
 *   __bss_start, __bss_end          zeroed by start-up code
 *   __stack_bottom, __stack_top     the one stack (CONFIG_STACK_SIZE bytes,
 *                                   the .stack input section of stack.c)
 */
#include "board/qemu-virt/memory_map.h"

OUTPUT_FORMAT("elf32-littlearm")
OUTPUT_ARCH(arm)
ENTRY(_start)

MEMORY
{
    IMAGE (rwx) : ORIGIN = QEMU_VIRT_IMAGE_ADDRESS, LENGTH = QEMU_VIRT_IMAGE_MAX_SIZE
}

SECTIONS
{
    .text : {
        __image_start = .;
        __text_start = .;
        KEEP(*(.text.tori.start))   /* _start: the ELF entry and node.bin's first byte */
        KEEP(*(.text.tori.vectors)) /* 32-byte aligned, installed in VBAR */
        *(.text .text.*)
        *(.glue_7 .glue_7t .vfp11_veneer .v4_bx)
        __text_end = .;
    } > IMAGE

    .rodata : ALIGN(8) {
        *(.rodata .rodata.*)
    } > IMAGE

    /* Unwind index of library code (tori's own code has no unwind tables). */
    .ARM.exidx : ALIGN(4) {
        __exidx_start = .;
        *(.ARM.exidx* .gnu.linkonce.armexidx.*)
        __exidx_end = .;
    } > IMAGE

    /* Constructor tables stay empty in C; kept so newlib finds its symbols. */
    .init_array : ALIGN(4) {
        __preinit_array_start = .;
        KEEP(*(.preinit_array))
        __preinit_array_end = .;
        __init_array_start = .;
        KEEP(*(SORT(.init_array.*)))
        KEEP(*(.init_array))
        __init_array_end = .;
        __fini_array_start = .;
        KEEP(*(SORT(.fini_array.*)))
        KEEP(*(.fini_array))
        __fini_array_end = .;
    } > IMAGE

    .data : ALIGN(8) {
        __data_start = .;
        *(.data .data.*)
        . = ALIGN(8);
        __data_end = .;
    } > IMAGE AT > IMAGE
    __data_load_start = LOADADDR(.data);

    .bss (NOLOAD) : ALIGN(8) {
        __bss_start = .;
        *(.bss .bss.* COMMON)
        . = ALIGN(8);
        __bss_end = .;
    } > IMAGE

    .stack (NOLOAD) : ALIGN(16) {
        __stack_bottom = .;
        KEEP(*(.stack))
        . = ALIGN(16);
        __stack_top = .;
    } > IMAGE

    __image_end = .;

    /* Debug sections: kept in node.elf, never loaded. */
    .comment 0 : { *(.comment) }
    .ARM.attributes 0 : { KEEP(*(.ARM.attributes)) }

    /DISCARD/ : { *(.note.GNU-stack) *(.gnu_debuglink) }
}

ASSERT(__stack_top - __stack_bottom > 0, "no .stack section: board/qemu-virt/stack.c must be linked")
ASSERT(__image_start >= QEMU_VIRT_JOB_ADDRESS + QEMU_VIRT_JOB_REGION_SIZE,
       "image overlaps the personality page")
ASSERT(__image_end <= QEMU_VIRT_RAM_BASE + QEMU_VIRT_RAM_SIZE, "image does not fit in RAM")
