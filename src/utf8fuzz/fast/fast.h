/* utf8fuzz.fast: shared declarations of the code paths (scalar, sse2, ssse3, avx2,
 * avx512).
 *
 * A code path is a table of kernels. Every kernel is memory-safe on any input
 * (it never reads s[n] or beyond, never writes out[cap] or beyond), but only
 * *correct* on the input its contract names (valid UTF-8 whose code points fit
 * the output kind). The caller checks that a kernel consumed all its input and
 * produced exactly the expected count, so that a buffer changed under our feet
 * (shared memory) is an error and never an overflow.
 */
#ifndef UTF8FUZZ_FAST_H
#define UTF8FUZZ_FAST_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t ncont;  /* continuation bytes (80..BF): code points = n - ncont */
    unsigned maxb; /* largest lead byte seen (0 when all ASCII): gives the PEP 393 kind */
} u8stats;

/* Validate s[0:n) against Unicode Corrigendum #1, Table 3.1B (with the surrogate
 * split of Unicode 3.2 / RFC 3629). On success return 1 and fill *st. On failure
 * return 0 and set *restart to a token boundary at or before the first error, from
 * which the scalar walker finds the exact maximal subpart. */
typedef int (*scan_fn)(const uint8_t *s, size_t n, u8stats *st, size_t *restart);

/* Transcode valid UTF-8 s[i:n) into out[o:cap); return the new o and set *pi to
 * the input position reached. */
typedef size_t (*ucs1_fn)(const uint8_t *s, size_t n, size_t i, uint8_t *out, size_t o,
                          size_t cap, size_t *pi);
typedef size_t (*ucs2_fn)(const uint8_t *s, size_t n, size_t i, uint16_t *out, size_t o,
                          size_t cap, size_t *pi);
typedef size_t (*ucs4_fn)(const uint8_t *s, size_t n, size_t i, uint32_t *out, size_t o,
                          size_t cap, size_t *pi);

/* Decode Corrected UTF-8's ASCII run starting at s[i] into u32 code points; returns
 * the new i (stops at the first non-ASCII byte, at n, or when out is full). */
typedef size_t (*ascii32_fn)(const uint8_t *s, size_t n, size_t i, uint32_t *out, size_t *o,
                             size_t cap);

/* Corrected UTF-8 blocks (simd.c): decode whole 16-byte blocks of lead bytes up to
 * F7 while they are well-formed; returns the new i, at a token boundary. */
typedef size_t (*c8_blocks_fn)(const uint8_t *s, size_t n, size_t i, uint32_t *out, size_t *o,
                               size_t cap);

typedef struct {
    const char *name;
    scan_fn scan;
    ucs1_fn to_ucs1;
    ucs2_fn to_ucs2;
    ucs4_fn to_ucs4;
    ascii32_fn ascii32;
    c8_blocks_fn c8_blocks; /* NULL: scalar only */
} fast_path;

/* In order of preference: the dispatcher takes the last one this CPU runs. */
enum { PATH_SCALAR, PATH_SSE2, PATH_SSSE3, PATH_AVX2, PATH_AVX512, PATH_COUNT };

/* scalar.c */
extern const fast_path fast_scalar;
int scan_scalar(const uint8_t *s, size_t n, u8stats *st, size_t *restart);
size_t to_ucs1_scalar(const uint8_t *s, size_t n, size_t i, uint8_t *out, size_t o, size_t cap,
                      size_t *pi);
size_t to_ucs2_scalar(const uint8_t *s, size_t n, size_t i, uint16_t *out, size_t o, size_t cap,
                      size_t *pi);
size_t to_ucs4_scalar(const uint8_t *s, size_t n, size_t i, uint32_t *out, size_t o, size_t cap,
                      size_t *pi);
size_t ascii32_scalar(const uint8_t *s, size_t n, size_t i, uint32_t *out, size_t *o, size_t cap);

/* avx512.c (x86-64 only): the avx512 path's validation. */
int scan_avx512(const uint8_t *s, size_t n, u8stats *st, size_t *restart);


/* simd.c: NULL entries when the compiler could not build that path. */
extern const fast_path *const fast_simd_paths[PATH_COUNT];
int fast_cpu_has(int path);
/* The CPU features `path` needs that this CPU lacks, comma-separated, into buf
 * ("" when it has them all); returns buf. */
const char *fast_cpu_missing(int path, char *buf, size_t size);
void fast_simd_init(void);

static inline int is_cont(uint8_t b) { return (b & 0xC0) == 0x80; }

/* One token of the unicode profile at s[i] (i < n), maximal-subpart policy.
 * Returns 0 for a character (*cp, *len set), 1 for an illegal error and 2 for a
 * truncated one (*len = the error's length). Inline: it is the error path's loop. */
/* Unicode Corrigendum #1, Table 3.1B: the second byte's range depends on the lead
 * (E0 A0..BF and F0 90..BF rule out non-shortest forms, F4 80..8F values above
 * U+10FFFF, ED 80..9F surrogates as in Unicode 3.2 / RFC 3629). */
static inline int u8_token(const uint8_t *s, size_t n, size_t i, uint32_t *cp, size_t *len) {
    uint32_t b0 = s[i];
    if (b0 < 0x80) {
        *cp = b0;
        *len = 1;
        return 0;
    }
    if (b0 < 0xC2 || b0 > 0xF4) { /* a continuation byte, C0, C1, F5..FF: starts nothing */
        *len = 1;
        return 1;
    }
    size_t need = b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b0 == 0xE0) lo = 0xA0;
    else if (b0 == 0xED) hi = 0x9F;
    else if (b0 == 0xF0) lo = 0x90;
    else if (b0 == 0xF4) hi = 0x8F;
    /* Maximal subpart: the longest prefix of a well-formed sequence is one error. */
    if (i + 1 >= n) { *len = 1; return 2; }
    uint8_t b1 = s[i + 1];
    if (b1 < lo || b1 > hi) { *len = 1; return 1; }
    if (need == 2) {
        *cp = ((b0 & 0x1F) << 6) | (b1 & 0x3F);
        *len = 2;
        return 0;
    }
    if (i + 2 >= n) { *len = 2; return 2; }
    uint8_t b2 = s[i + 2];
    if (!is_cont(b2)) { *len = 2; return 1; }
    if (need == 3) {
        *cp = ((b0 & 0x0F) << 12) | ((uint32_t)(b1 & 0x3F) << 6) | (b2 & 0x3F);
        *len = 3;
        return 0;
    }
    if (i + 3 >= n) { *len = 3; return 2; }
    uint8_t b3 = s[i + 3];
    if (!is_cont(b3)) { *len = 3; return 1; }
    *cp = ((b0 & 0x07) << 18) | ((uint32_t)(b1 & 0x3F) << 12) | ((uint32_t)(b2 & 0x3F) << 6) |
          (b3 & 0x3F);
    *len = 4;
    return 0;
}

/* One step of a validating scan, after the caller skipped what ASCII it could in
 * bulk: one ASCII byte, or one well-formed sequence, with the counts the single
 * PyUnicode_New needs (continuation bytes, widest lead). 0 at an ill-formed
 * sequence, *i left on it. Shared by the scalar and sse2 scans, which differ only
 * in how many ASCII bytes they skip at once. */
static inline int scan_step(const uint8_t *s, size_t n, size_t *i, size_t *ncont,
                            unsigned *maxb) {
    size_t k = *i;
    if (s[k] < 0x80) {
        *i = k + 1;
        return 1;
    }
    uint32_t cp;
    size_t len;
    if (u8_token(s, n, k, &cp, &len)) return 0;
    *ncont += len - 1;
    if (s[k] > *maxb) *maxb = s[k];
    *i = k + len;
    return 1;
}

#endif
