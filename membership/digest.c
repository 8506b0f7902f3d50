/* View digests (see digest.h). */
#include "membership/digest.h"

uint64_t membership_id_digest(uint32_t id)
{
    return membership_mix64((uint64_t)id + UINT64_C(0x9e3779b97f4a7c15));
}

/*
 * The digest of the initial view (ids 0..member_count-1): a seed derived
 * from the member count.  The plain XOR-of-ids set digest shifted by a
 * per-configuration constant, so equal views give equal digests, and the
 * initial view's digest costs O(1) instead of O(N).
 */
uint64_t membership_initial_digest(uint32_t member_count)
{
    return membership_mix64(UINT64_C(0xd1ce5eed00000000) ^ member_count);
}
