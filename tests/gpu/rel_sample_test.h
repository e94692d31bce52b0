/* Test helper for the GPU's REL sample (sleek_sample_index): positions it
 * does not read, where a test can hide an extreme from it. */
#ifndef REL_SAMPLE_TEST_H
#define REL_SAMPLE_TEST_H

#include <stdint.h>
#include <stdlib.h>

#include "../../src/codecs/sleek/sleek_xform.h"
#include "test_util.h"

/* The first position >= from that the sample over n values does not read. */
static inline size_t unsampled_at_or_after(size_t from, size_t n) {
    const uint64_t m = n < SLEEK_SAMPLE ? n : SLEEK_SAMPLE;
    uint8_t *seen = (uint8_t *)calloc(n, 1);
    CHECK(seen != NULL);
    for (uint64_t k = 0; k < m; k++)
        seen[sleek_sample_index(k, n, m)] = 1;
    size_t i = from;
    while (i < n && seen[i])
        i++;
    free(seen);
    CHECK(i < n);
    return i;
}

#endif /* REL_SAMPLE_TEST_H */
