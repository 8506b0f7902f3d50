/* The one seeded generator: splitmix64's published sequence for seed 0,
 * the same through the tests' wrapper (tests/check.h), and bounds. */
#include "tests/check.h"
#include "tools/splitmix.h"

int main(void)
{
    uint64_t state = 0;
    CHECK(splitmix64_next(&state) == UINT64_C(0xe220a8397b1dcdaf));
    CHECK(splitmix64_next(&state) == UINT64_C(0x6e789e6aa1b965f4));
    CHECK(splitmix64_next(&state) == UINT64_C(0x06c45d188009454f));
    unsigned long long test_state = 0;
    CHECK(test_random(&test_state) == 0xe220a8397b1dcdafull);
    state = 42;
    for (int i = 0; i < 1000; i++)
        CHECK(splitmix64_below(&state, 7) < 7);
    uint64_t before = state;
    CHECK(splitmix64_below(&state, 0) == 0 && state == before); /* no draw for nothing */
    return check_report("tools.splitmix");
}
