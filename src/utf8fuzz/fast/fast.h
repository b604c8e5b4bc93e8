/* utf8fuzz.fast: shared declarations of the code paths (scalar, sse2, avx2, avx512).
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

typedef struct {
    const char *name;
    scan_fn scan;
    ucs1_fn to_ucs1;
    ucs2_fn to_ucs2;
    ucs4_fn to_ucs4;
    ascii32_fn ascii32;
} fast_path;

enum { PATH_SCALAR, PATH_SSE2, PATH_AVX2, PATH_AVX512, PATH_COUNT };

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

/* One token of the unicode profile at s[i] (i < n), maximal-subpart policy.
 * Returns 0 for a character (*cp, *len set), 1 for an illegal error and 2 for a
 * truncated one (*len = the error's length). */
int u8_token(const uint8_t *s, size_t n, size_t i, uint32_t *cp, size_t *len);

/* simd.c: NULL entries when the compiler could not build that path. */
extern const fast_path *const fast_simd_paths[PATH_COUNT];
int fast_cpu_has(int path);
void fast_simd_init(void);

static inline int is_cont(uint8_t b) { return (b & 0xC0) == 0x80; }

#endif
