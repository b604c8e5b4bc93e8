/* The lookup tables of Keiser & Lemire's UTF-8 validation ("Validating UTF-8 In
 * Less Than One Instruction Per Byte", 2021), shared by every SIMD path that has a
 * byte shuffle (ssse3, avx2 on 128-bit lanes, avx512 on its four 128-bit lanes).
 *
 * Each byte is checked with the one before it: three 16-entry tables, indexed by
 * the previous byte's high nibble, its low nibble and this byte's high nibble,
 * give a set of error classes each; their AND is non-zero exactly for a bad pair.
 * The 3- and 4-byte leads' later continuation bytes are checked separately (see
 * TWO_CONTS in the kernels).
 */
#ifndef UTF8FUZZ_LOOKUP_H
#define UTF8FUZZ_LOOKUP_H

#include "fast.h"

/* The error classes of Keiser & Lemire, section 6 (one bit each, two share bit 6
 * because they are told apart by the other two tables). */
#define TOO_SHORT (1 << 0)      /* lead followed by a non-continuation */
#define TOO_LONG (1 << 1)       /* ASCII followed by a continuation */
#define OVERLONG_3 (1 << 2)     /* E0 80..9F */
#define TOO_LARGE (1 << 3)      /* F4 90..BF, F5..FF 80..BF */
#define SURROGATE (1 << 4)      /* ED A0..BF */
#define OVERLONG_2 (1 << 5)     /* C0, C1 */
#define TOO_LARGE_1000 (1 << 6) /* F5..FF 80..8F */
#define OVERLONG_4 (1 << 6)     /* F0 80..8F */
#define TWO_CONTS (1 << 7)      /* continuation after continuation */
#define CARRY (TOO_SHORT | TOO_LONG | TWO_CONTS)

/* Table of the first byte's high nibble, its low nibble, the second byte's high nibble. */
#define T1H                                                                                  \
    TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,          \
        TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS, TOO_SHORT | OVERLONG_2, TOO_SHORT,       \
        TOO_SHORT | OVERLONG_3 | SURROGATE, TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4
#define T1L                                                                                  \
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4, CARRY | OVERLONG_2, CARRY, CARRY,          \
        CARRY | TOO_LARGE, CARRY | TOO_LARGE | TOO_LARGE_1000,                               \
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,              \
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,              \
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,              \
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,  \
        CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000
#define T2H                                                                                  \
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,  \
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,         \
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,                          \
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,                           \
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE, TOO_SHORT, TOO_SHORT,      \
        TOO_SHORT, TOO_SHORT

/* A token boundary at or before every error a block check can report: the
 * checks of block k look back at most 3 bytes, and everything before was
 * consistent, so the first non-continuation byte at or after k-4 is where a
 * decoding from 0 is (see fast.h, scan_fn). */
static inline size_t back_to_boundary(const uint8_t *s, size_t k) {
    size_t p = k >= 4 ? k - 4 : 0;
    if (p > 0)
        while (p < k && is_cont(s[p])) p++;
    return p;
}

#endif
