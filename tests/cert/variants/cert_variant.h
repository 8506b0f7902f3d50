/*
 * The hook of the certification test variants: each file in this folder
 * defines cert_variant_run(), which kernel_main calls in the run phase of a
 * test-only image (TORI_TEST_VARIANT, see variants.cmake).  Each breaks
 * exactly one promise that ./tori cert checks, so that the check can be
 * seen to reject it and name the offender.
 */
#ifndef TESTS_CERT_VARIANTS_CERT_VARIANT_H
#define TESTS_CERT_VARIANTS_CERT_VARIANT_H

void cert_variant_run(void);

#endif /* TESTS_CERT_VARIANTS_CERT_VARIANT_H */
