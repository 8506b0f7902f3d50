/*
 * The hook of the test variants of the node image: each file in this folder
 * but variant_services.c defines cert_variant_run(), which the variant
 * image's services module calls right after the heap is sealed, in the run
 * phase (TORI_TEST_VARIANT, see variants.cmake).  Each certification
 * variant breaks exactly one promise that ./tori cert checks, so that the
 * check can be seen to reject it and name the offender; malloc-after-init
 * shows the sealed heap catching a late allocation on QEMU.
 */
#ifndef TESTS_CERT_VARIANTS_CERT_VARIANT_H
#define TESTS_CERT_VARIANTS_CERT_VARIANT_H

void cert_variant_run(void);

#endif /* TESTS_CERT_VARIANTS_CERT_VARIANT_H */
