# Certification test variants (tests/cert): each adds one deliberately bad
# source file to the node image, called from kernel_main right after the
# heap is sealed (kernel/main.c, TORI_TEST_VARIANT_CERT).  Included by
# kernel/CMakeLists.txt when TORI_TEST_VARIANT is set to something other
# than malloc-after-init.  Never part of a shipped image.
set(TORI_CERT_VARIANTS
    run-phase-malloc     # allocator audit: malloc called in the run phase
    recursion            # stack: two functions calling each other
    pthread-symbol       # threads: a thread-library symbol in the image
    vla                  # code and stack: a variable-length array
    big-frame            # stack and code: one frame over frame_max
    unannotated-call     # stack: a function-pointer call cert does not know
    unconfigured-table   # sizing: a per-node table sized by a literal
    hidden-stack         # runtime: stack use the static bound cannot see
)
if(NOT TORI_TEST_VARIANT IN_LIST TORI_CERT_VARIANTS)
  string(REPLACE ";" ", " known "${TORI_CERT_VARIANTS}")
  message(FATAL_ERROR "TORI_TEST_VARIANT='${TORI_TEST_VARIANT}' is not a known variant "
                      "(expected malloc-after-init, ${known})")
endif()
string(REPLACE "-" "_" tori_cert_variant_file "${TORI_TEST_VARIANT}")
set(tori_cert_variant_source ${CMAKE_CURRENT_LIST_DIR}/${tori_cert_variant_file}.c)
target_sources(tori_kernel PRIVATE ${tori_cert_variant_source})
target_compile_definitions(tori_kernel PRIVATE TORI_TEST_VARIANT_CERT)
# The code checks must see the warnings these files provoke (-Wvla,
# -Wstack-usage), so they build with warnings that are not errors.
set_source_files_properties(${tori_cert_variant_source} PROPERTIES COMPILE_OPTIONS "-Wno-error")
