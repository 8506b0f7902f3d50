# Test variants of the node image (tests only, never a shipped image): each
# adds one deliberately bad source file, whose cert_variant_run() the
# variant's services module (variant_services.c) calls right after the heap
# is sealed; the image otherwise runs the node's own services.  Included by
# the top-level CMakeLists.txt when TORI_TEST_VARIANT is set; sets
# TORI_SERVICES, the services module the board's images link.
set(TORI_TEST_VARIANTS
    malloc-after-init    # QEMU test: the sealed heap catches a late malloc
    # Certification variants (tests/cert):
    run-phase-malloc     # allocator audit: malloc called in the run phase
    recursion            # stack: two functions calling each other
    pthread-symbol       # threads: a thread-library symbol in the image
    vla                  # code and stack: a variable-length array
    big-frame            # stack and code: one frame over frame_max
    unannotated-call     # stack: a function-pointer call cert does not know
    unconfigured-table   # sizing: a per-node table sized by a literal
    hidden-stack         # runtime: stack use the static bound cannot see
    foreign-region       # sections: RAM outside the image written by another function
)
if(NOT TORI_TEST_VARIANT IN_LIST TORI_TEST_VARIANTS)
  string(REPLACE ";" ", " known "${TORI_TEST_VARIANTS}")
  message(FATAL_ERROR "TORI_TEST_VARIANT='${TORI_TEST_VARIANT}' is not a known variant "
                      "(expected ${known})")
endif()
string(REPLACE "-" "_" tori_variant_file "${TORI_TEST_VARIANT}")
set(tori_variant_source ${CMAKE_CURRENT_LIST_DIR}/${tori_variant_file}.c)
add_library(tori_variant_services OBJECT
            ${CMAKE_CURRENT_LIST_DIR}/variant_services.c ${tori_variant_source})
target_link_libraries(tori_variant_services PUBLIC tori_node)
# The code checks must see the warnings these files provoke (-Wvla,
# -Wstack-usage), so they build with warnings that are not errors.
set_source_files_properties(${tori_variant_source} PROPERTIES COMPILE_OPTIONS "-Wno-error")
set(TORI_SERVICES tori_variant_services)
