# Cross toolchain for the qemu-virt node image: Debian's gcc-arm-none-eabi
# with newlib-nano.
#
# ABI: ARM state (-marm) on a Cortex-A15, soft float.  Debian's multilib set
# has no ARM-state A-profile libraries; for these flags gcc picks
# thumb/v7-a/nofp (check: arm-none-eabi-gcc <flags> -print-multi-directory),
# whose Thumb-2 code interworks with ours through BLX.  Soft float means the
# kernel never touches the FPU, so start-up code need not enable it and
# nothing has FPU state to keep; tori computes time in integers anyway.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(TORI_CROSS_PREFIX arm-none-eabi-)
set(CMAKE_C_COMPILER ${TORI_CROSS_PREFIX}gcc)
set(CMAKE_ASM_COMPILER ${TORI_CROSS_PREFIX}gcc)
set(CMAKE_OBJCOPY ${TORI_CROSS_PREFIX}objcopy CACHE FILEPATH "objcopy for the node image")
set(CMAKE_SIZE ${TORI_CROSS_PREFIX}size CACHE FILEPATH "size for the node image")

# No host-style executables can be linked before our start-up code and
# linker script exist, so CMake's compiler checks build static libraries.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(TORI_ARM_FLAGS "-mcpu=cortex-a15 -marm -mfloat-abi=soft")

# -ffunction-sections/-fdata-sections + --gc-sections drop unused code;
# -fstack-usage and -fcallgraph-info=su leave .su/.ci files next to every
# object for the certification's stack bound; -g only grows node.elf (panic
# caller addresses resolve with addr2line), never node.bin.
set(CMAKE_C_FLAGS_INIT
    "${TORI_ARM_FLAGS} --specs=nano.specs -g -fno-common -ffunction-sections -fdata-sections -fno-unwind-tables -fno-asynchronous-unwind-tables -fstack-usage -fcallgraph-info=su")
set(CMAKE_ASM_FLAGS_INIT "${TORI_ARM_FLAGS} -g")
# CMake links with the C flags too (so --specs=nano.specs is not repeated
# here: gcc refuses it twice).  Our own start-up code replaces crt0;
# newlib's system calls are board/qemu-virt/newlib_syscalls.c.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles -Wl,--gc-sections")

# Find headers and libraries in the cross sysroot only, programs on the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
