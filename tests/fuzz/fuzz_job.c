/*
 * The job block (kernel/job.h): any bytes where the loader puts it.  An
 * accepted block validates and encodes back to its own 128 bytes; a refused
 * one gets one line, cut to fit and terminated, that names a field and
 * never the job key.
 */
#include <string.h>

#include "kernel/job.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct job job;
    struct personality_error error;
    memset(&error, 0, sizeof error);
    if (!job_decode(data, size, &job, &error)) {
        char line[192];
        for (unsigned capacity = 1; capacity <= sizeof line; capacity += 47) {
            memset(line, 'x', sizeof line);
            unsigned length = job_format_error(&error, line, capacity);
            FUZZ_CHECK(length < capacity && line[length] == '\0' && strlen(line) == length,
                       "error line of %u bytes in %u", length, capacity);
        }
        FUZZ_CHECK(strncmp(line, "job: ", 5) == 0, "error line '%s'", line);
        FUZZ_CHECK(error.field == NULL || strstr(error.field, "key") == NULL || error.value == 0,
                   "an error line shows the job key");
        return 0;
    }
    FUZZ_CHECK(size >= JOB_SIZE, "accepted %zu bytes", size);
    FUZZ_CHECK(job_validate(&job, &error), "decoded but invalid: %s",
               error.field != NULL ? error.field : "(block)");
    FUZZ_CHECK(job_app_name(job.app) != NULL, "app %u has no name", job.app);
    uint8_t block[JOB_SIZE];
    job_encode(&job, block);
    FUZZ_CHECK(memcmp(block, data, JOB_SIZE) == 0,
               "an accepted block does not encode back to its bytes");
    return 0;
}
