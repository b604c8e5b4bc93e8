/* The x86-64 SIMD code paths.
 *
 * sse2   (every x86-64 CPU): 16-byte ASCII runs in SIMD, everything else scalar.
 *        SSE2 has no byte shuffle (PSHUFB is SSSE3), so the lookup-table
 *        validation below cannot be done at this level.
 * avx2   Keiser & Lemire's lookup-table validation ("Validating UTF-8 In Less
 *        Than One Instruction Per Byte", 2021) on 64-byte blocks, counting
 *        continuation bytes and the largest byte in the same pass; then one
 *        transcoding kernel per PEP 393 kind (compress by shuffle tables).
 * avx512 the same validation on 512-bit vectors (AVX-512BW); transcoding kernels
 *        shared with avx2 (every AVX-512 CPU has AVX2).
 *
 * Each function carries __attribute__((target(...))) so that the package is built
 * without -march: the choice is made at run time (see _fast.c), and a wheel built
 * here runs on any x86-64.
 */
#include <string.h>

#include "fast.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_X86 1
#include <immintrin.h>

#define TGT_AVX2 __attribute__((target("avx2,popcnt")))
#define TGT_AVX512 __attribute__((target("avx512f,avx512bw,avx2,popcnt")))

/* -- compress tables: gather the kept lanes of a vector to its front ---------- */

static uint8_t tab_u8[256][8];    /* 8 byte lanes, mask of 8 bits */
static uint8_t tab_u16[256][16];  /* 8 u16 lanes, mask of 8 bits */
static uint8_t tab_u32[16][16];   /* 4 u32 lanes, mask of 4 bits */

void fast_simd_init(void) {
    for (int m = 0; m < 256; m++) {
        int k = 0;
        memset(tab_u8[m], 0x80, 8);
        memset(tab_u16[m], 0x80, 16);
        for (int j = 0; j < 8; j++) {
            if (m & (1 << j)) {
                tab_u8[m][k] = (uint8_t)j;
                tab_u16[m][2 * k] = (uint8_t)(2 * j);
                tab_u16[m][2 * k + 1] = (uint8_t)(2 * j + 1);
                k++;
            }
        }
    }
    for (int m = 0; m < 16; m++) {
        int k = 0;
        memset(tab_u32[m], 0x80, 16);
        for (int j = 0; j < 4; j++) {
            if (m & (1 << j)) {
                for (int b = 0; b < 4; b++) tab_u32[m][4 * k + b] = (uint8_t)(4 * j + b);
                k++;
            }
        }
    }
}

int fast_cpu_has(int path) {
    __builtin_cpu_init();
    switch (path) {
    case PATH_SCALAR:
    case PATH_SSE2:
        return 1; /* SSE2 is part of x86-64 */
    case PATH_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    case PATH_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    }
    return 0;
}

/* A token boundary at or before every error a block check can report: the
 * checks of block k look back at most 3 bytes, and everything before was
 * consistent, so the first non-continuation byte at or after k-4 is where a
 * decoding from 0 is (see fast.h, scan_fn). */
static size_t back_to_boundary(const uint8_t *s, size_t k) {
    size_t p = k >= 4 ? k - 4 : 0;
    if (p > 0)
        while (p < k && is_cont(s[p])) p++;
    return p;
}

/* -- sse2 ----------------------------------------------------------------------- */

static int scan_sse2(const uint8_t *s, size_t n, u8stats *st, size_t *restart) {
    size_t i = 0, ncont = 0;
    unsigned maxb = 0;
    while (i < n) {
        if (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            if (!_mm_movemask_epi8(v)) {
                i += 16;
                continue;
            }
        }
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t len;
        if (u8_token(s, n, i, &cp, &len)) {
            *restart = i;
            return 0;
        }
        ncont += len - 1;
        if (s[i] > maxb) maxb = s[i];
        i += len;
    }
    st->ncont = ncont;
    st->maxb = maxb;
    return 1;
}

/* One character at s[i] (valid input, bounds checked): 0 when it would run past n. */
#define ONE_CHAR(T)                                                                          \
    do {                                                                                     \
        uint32_t b = s[i];                                                                   \
        if (b < 0x80) {                                                                      \
            out[o++] = (T)b;                                                                 \
            i++;                                                                             \
        } else if (b < 0xE0) {                                                               \
            if (i + 2 > n) goto done;                                                        \
            out[o++] = (T)(((b & 0x1F) << 6) | (s[i + 1] & 0x3F));                           \
            i += 2;                                                                          \
        } else if (b < 0xF0) {                                                               \
            if (i + 3 > n) goto done;                                                        \
            out[o++] = (T)(((b & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) |         \
                           (s[i + 2] & 0x3F));                                               \
            i += 3;                                                                          \
        } else {                                                                             \
            if (i + 4 > n) goto done;                                                        \
            out[o++] = (T)(((b & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |        \
                           ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F));          \
            i += 4;                                                                          \
        }                                                                                    \
    } while (0)

static size_t to_ucs1_sse2(const uint8_t *s, size_t n, size_t i, uint8_t *out, size_t o,
                           size_t cap, size_t *pi) {
    while (i < n && o < cap) {
        if (i + 16 <= n && o + 16 <= cap) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            if (!_mm_movemask_epi8(v)) {
                _mm_storeu_si128((__m128i *)(out + o), v);
                i += 16;
                o += 16;
                continue;
            }
        }
        ONE_CHAR(uint8_t);
    }
done:
    *pi = i;
    return o;
}

static size_t to_ucs2_sse2(const uint8_t *s, size_t n, size_t i, uint16_t *out, size_t o,
                           size_t cap, size_t *pi) {
    const __m128i z = _mm_setzero_si128();
    while (i < n && o < cap) {
        if (i + 16 <= n && o + 16 <= cap) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            if (!_mm_movemask_epi8(v)) {
                _mm_storeu_si128((__m128i *)(out + o), _mm_unpacklo_epi8(v, z));
                _mm_storeu_si128((__m128i *)(out + o + 8), _mm_unpackhi_epi8(v, z));
                i += 16;
                o += 16;
                continue;
            }
        }
        ONE_CHAR(uint16_t);
    }
done:
    *pi = i;
    return o;
}

static size_t ascii32_sse2(const uint8_t *s, size_t n, size_t i, uint32_t *out, size_t *po,
                           size_t cap) {
    const __m128i z = _mm_setzero_si128();
    size_t o = *po;
    while (i + 16 <= n && o + 16 <= cap) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        if (_mm_movemask_epi8(v)) break;
        __m128i lo = _mm_unpacklo_epi8(v, z), hi = _mm_unpackhi_epi8(v, z);
        _mm_storeu_si128((__m128i *)(out + o), _mm_unpacklo_epi16(lo, z));
        _mm_storeu_si128((__m128i *)(out + o + 4), _mm_unpackhi_epi16(lo, z));
        _mm_storeu_si128((__m128i *)(out + o + 8), _mm_unpacklo_epi16(hi, z));
        _mm_storeu_si128((__m128i *)(out + o + 12), _mm_unpackhi_epi16(hi, z));
        i += 16;
        o += 16;
    }
    *po = o;
    return ascii32_scalar(s, n, i, out, po, cap);
}

static size_t to_ucs4_sse2(const uint8_t *s, size_t n, size_t i, uint32_t *out, size_t o,
                           size_t cap, size_t *pi) {
    while (i < n && o < cap) {
        if (s[i] < 0x80) {
            i = ascii32_sse2(s, n, i, out, &o, cap);
            continue;
        }
        ONE_CHAR(uint32_t);
    }
done:
    *pi = i;
    return o;
}

static const fast_path path_sse2 = {
    "sse2", scan_sse2, to_ucs1_sse2, to_ucs2_sse2, to_ucs4_sse2, ascii32_sse2, NULL,
};

/* -- avx2: validation ------------------------------------------------------------ */

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

typedef struct {
    __m256i t1h, t1l, t2h, nib, m3, m4, b80, incomplete, cont_lim;
} avx2_consts;

TGT_AVX2 static inline __m256i avx2_check(const avx2_consts *c, __m256i in, __m256i prev_in) {
    __m256i sh = _mm256_permute2x128_si256(prev_in, in, 0x21);
    __m256i p1 = _mm256_alignr_epi8(in, sh, 15);
    __m256i p2 = _mm256_alignr_epi8(in, sh, 14);
    __m256i p3 = _mm256_alignr_epi8(in, sh, 13);
    __m256i b1h = _mm256_shuffle_epi8(c->t1h, _mm256_and_si256(_mm256_srli_epi16(p1, 4), c->nib));
    __m256i b1l = _mm256_shuffle_epi8(c->t1l, _mm256_and_si256(p1, c->nib));
    __m256i b2h = _mm256_shuffle_epi8(c->t2h, _mm256_and_si256(_mm256_srli_epi16(in, 4), c->nib));
    __m256i sc = _mm256_and_si256(_mm256_and_si256(b1h, b1l), b2h);
    /* A continuation must be the 2nd or 3rd after a 3- or 4-byte lead exactly where
     * the tables flagged TWO_CONTS: the XOR cancels expected cases and flags others. */
    __m256i must = _mm256_or_si256(_mm256_subs_epu8(p2, c->m3), _mm256_subs_epu8(p3, c->m4));
    return _mm256_xor_si256(_mm256_and_si256(must, c->b80), sc);
}

TGT_AVX2 static inline size_t avx2_ncont(const avx2_consts *c, __m256i v) {
    /* signed v < -64 <=> 80..BF */
    return (size_t)__builtin_popcount(
        (unsigned)_mm256_movemask_epi8(_mm256_cmpgt_epi8(c->cont_lim, v)));
}

TGT_AVX2 static int scan_avx2(const uint8_t *s, size_t n, u8stats *st, size_t *restart) {
    avx2_consts c;
    c.t1h = _mm256_setr_epi8(T1H, T1H);
    c.t1l = _mm256_setr_epi8(T1L, T1L);
    c.t2h = _mm256_setr_epi8(T2H, T2H);
    c.nib = _mm256_set1_epi8(0x0F);
    c.m3 = _mm256_set1_epi8((char)(0xE0 - 0x80));
    c.m4 = _mm256_set1_epi8((char)(0xF0 - 0x80));
    c.b80 = _mm256_set1_epi8((char)0x80);
    c.cont_lim = _mm256_set1_epi8(-64);
    /* The last three bytes may not begin a sequence longer than what remains. */
    c.incomplete = _mm256_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                    (char)(0xF0 - 1), (char)(0xE0 - 1), (char)(0xC0 - 1));
    __m256i prev_in = _mm256_setzero_si256(), prev_inc = _mm256_setzero_si256();
    __m256i err = _mm256_setzero_si256(), vmax = _mm256_setzero_si256();
    size_t ncont = 0, i = 0;
    uint8_t buf[64];
    while (i < n) {
        const uint8_t *p = s + i;
        if (i + 64 > n) { /* the tail, padded with ASCII NULs */
            memset(buf, 0, sizeof buf);
            memcpy(buf, s + i, n - i);
            p = buf;
        }
        __m256i a = _mm256_loadu_si256((const __m256i *)p);
        __m256i b = _mm256_loadu_si256((const __m256i *)(p + 32));
        __m256i ab = _mm256_or_si256(a, b);
        if (!_mm256_movemask_epi8(ab)) {
            err = _mm256_or_si256(err, prev_inc);
            prev_inc = _mm256_setzero_si256();
        } else {
            err = _mm256_or_si256(err, avx2_check(&c, a, prev_in));
            err = _mm256_or_si256(err, avx2_check(&c, b, a));
            prev_inc = _mm256_subs_epu8(b, c.incomplete);
            vmax = _mm256_max_epu8(vmax, _mm256_max_epu8(a, b));
            ncont += avx2_ncont(&c, a) + avx2_ncont(&c, b);
        }
        prev_in = b;
        if (!_mm256_testz_si256(err, err)) {
            *restart = back_to_boundary(s, i);
            return 0;
        }
        i += 64;
    }
    if (!_mm256_testz_si256(prev_inc, prev_inc)) {
        *restart = back_to_boundary(s, n);
        return 0;
    }
    uint8_t m[32];
    _mm256_storeu_si256((__m256i *)m, vmax);
    unsigned mx = 0;
    for (int k = 0; k < 32; k++)
        if (m[k] > mx) mx = m[k];
    st->ncont = ncont;
    st->maxb = mx;
    return 1;
}

/* -- avx2: transcoding ------------------------------------------------------------
 *
 * Every kernel works on 16 input bytes at a time and emits the code point of each
 * character that *ends* in those 16 bytes (a byte ends a character when the next
 * byte is not a continuation). So a block needs no alignment with characters: it
 * looks back up to 3 bytes for the leads and ahead 1 byte for the ends, and
 * compresses the ending lanes to the front with the shuffle tables. The loop keeps
 * 16 lanes of room in out and 1 byte of lookahead in s; the scalar code does the
 * head (until 3 bytes of look-behind exist) and the tail.
 */

/* Back up from a block boundary to the start of the character it cuts. */
static size_t char_start(const uint8_t *s, size_t n, size_t i, size_t lo) {
    if (i >= n) return i;
    while (i > lo && is_cont(s[i])) i--;
    return i;
}

TGT_AVX2 static size_t to_ucs1_avx2(const uint8_t *s, size_t n, size_t i, uint8_t *out,
                                    size_t o, size_t cap, size_t *pi) {
    size_t i0 = i;
    const __m128i lim = _mm_set1_epi8(-64), x3f = _mm_set1_epi8(0x3F),
                  xc0 = _mm_set1_epi8((char)0xC0);
    /* Head: one whole character until a byte of look-behind exists. */
    if (i == 0 && n > 0 && o < cap) o = to_ucs1_scalar(s, n, i, out, o, o + 1, &i);
    if (i >= 1) {
        while (i + 32 <= n && o + 32 <= cap) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(s + i));
            if (_mm256_movemask_epi8(v)) break;
            _mm256_storeu_si256((__m256i *)(out + o), v);
            i += 32;
            o += 32;
        }
        while (i + 17 <= n && o + 16 <= cap) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            if (!_mm_movemask_epi8(v)) {
                _mm_storeu_si128((__m128i *)(out + o), v);
                i += 16;
                o += 16;
                continue;
            }
            __m128i p = _mm_loadu_si128((const __m128i *)(s + i - 1));
            __m128i nx = _mm_loadu_si128((const __m128i *)(s + i + 1));
            __m128i cv = _mm_cmplt_epi8(v, lim);
            /* U+0080..U+00FF: C2/C3 carry the top two bits. */
            __m128i two = _mm_or_si128(_mm_and_si128(_mm_slli_epi16(p, 6), xc0),
                                       _mm_and_si128(v, x3f));
            __m128i val = _mm_or_si128(_mm_and_si128(cv, two), _mm_andnot_si128(cv, v));
            unsigned keep = ~(unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(nx, lim)) & 0xFFFF;
            unsigned mlo = keep & 0xFF, mhi = keep >> 8;
            __m128i lo = _mm_shuffle_epi8(val, _mm_loadl_epi64((const __m128i *)tab_u8[mlo]));
            __m128i hsh = _mm_add_epi8(_mm_loadl_epi64((const __m128i *)tab_u8[mhi]),
                                       _mm_set1_epi8(8));
            __m128i hi = _mm_shuffle_epi8(val, hsh);
            _mm_storel_epi64((__m128i *)(out + o), lo);
            o += (size_t)__builtin_popcount(mlo);
            _mm_storel_epi64((__m128i *)(out + o), hi);
            o += (size_t)__builtin_popcount(mhi);
            i += 16;
        }
        i = char_start(s, n, i, i0);
    }
    return to_ucs1_scalar(s, n, i, out, o, cap, pi);
}

/* Load the byte classes a block needs: v, the three bytes behind, one ahead. */
#define BLOCK_LOADS                                                                          \
    __m128i v = _mm_loadu_si128((const __m128i *)(s + i));                                   \
    __m128i p = _mm_loadu_si128((const __m128i *)(s + i - 1));                               \
    __m128i pp = _mm_loadu_si128((const __m128i *)(s + i - 2));                              \
    __m128i nx = _mm_loadu_si128((const __m128i *)(s + i + 1));                              \
    __m128i cv = _mm_cmplt_epi8(v, lim);                                                     \
    __m128i cp_ = _mm_cmplt_epi8(p, lim);                                                    \
    unsigned keep = ~(unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(nx, lim)) & 0xFFFF

TGT_AVX2 static size_t to_ucs2_avx2(const uint8_t *s, size_t n, size_t i, uint16_t *out,
                                    size_t o, size_t cap, size_t *pi) {
    size_t i0 = i;
    const __m128i lim = _mm_set1_epi8(-64), x3f = _mm_set1_epi8(0x3F),
                  x7f = _mm_set1_epi8(0x7F), x40 = _mm_set1_epi8(0x40),
                  x0f = _mm_set1_epi8(0x0F), z = _mm_setzero_si128();
    /* Head: whole characters until two bytes of look-behind exist. */
    while (i < n && i < 2 && o < cap) {
        size_t before = i;
        o = to_ucs2_scalar(s, n, i, out, o, o + 1, &i);
        if (i == before) break;
    }
    if (i >= 2) {
        while (i + 17 <= n && o + 16 <= cap) {
            __m128i v0 = _mm_loadu_si128((const __m128i *)(s + i));
            if (!_mm_movemask_epi8(v0)) {
                _mm_storeu_si128((__m128i *)(out + o), _mm_unpacklo_epi8(v0, z));
                _mm_storeu_si128((__m128i *)(out + o + 8), _mm_unpackhi_epi8(v0, z));
                i += 16;
                o += 16;
                continue;
            }
            BLOCK_LOADS;
            /* value = low | mid << 6 | hi << 12, built from the lanes' own bytes:
             * low: 7 bits of ASCII or 6 of a continuation; mid: the byte before
             * (a 2-byte lead's 5 bits equal its low 6); hi: a 3-byte lead's 4 bits. */
            __m128i low = _mm_and_si128(v, _mm_xor_si128(x7f, _mm_and_si128(cv, x40)));
            __m128i mid = _mm_and_si128(_mm_and_si128(p, x3f), cv);
            __m128i hi = _mm_and_si128(_mm_and_si128(pp, x0f), _mm_and_si128(cv, cp_));
            __m128i hi4 = _mm_slli_epi16(hi, 4); /* < 0x100 per byte: no cross-lane bits */
            __m128i vlo = _mm_or_si128(_mm_unpacklo_epi8(low, hi4),
                                       _mm_slli_epi16(_mm_unpacklo_epi8(mid, z), 6));
            __m128i vhi = _mm_or_si128(_mm_unpackhi_epi8(low, hi4),
                                       _mm_slli_epi16(_mm_unpackhi_epi8(mid, z), 6));
            unsigned mlo = keep & 0xFF, mhi = keep >> 8;
            _mm_storeu_si128((__m128i *)(out + o),
                             _mm_shuffle_epi8(vlo, _mm_loadu_si128((const __m128i *)tab_u16[mlo])));
            o += (size_t)__builtin_popcount(mlo);
            _mm_storeu_si128((__m128i *)(out + o),
                             _mm_shuffle_epi8(vhi, _mm_loadu_si128((const __m128i *)tab_u16[mhi])));
            o += (size_t)__builtin_popcount(mhi);
            i += 16;
        }
        i = char_start(s, n, i, i0);
    }
    return to_ucs2_scalar(s, n, i, out, o, cap, pi);
}

TGT_AVX2 static size_t ascii32_avx2(const uint8_t *s, size_t n, size_t i, uint32_t *out,
                                    size_t *po, size_t cap) {
    size_t o = *po;
    while (i + 16 <= n && o + 16 <= cap) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        if (_mm_movemask_epi8(v)) break;
        _mm256_storeu_si256((__m256i *)(out + o), _mm256_cvtepu8_epi32(v));
        _mm256_storeu_si256((__m256i *)(out + o + 8),
                            _mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)));
        i += 16;
        o += 16;
    }
    *po = o;
    return ascii32_scalar(s, n, i, out, po, cap);
}

TGT_AVX2 static size_t to_ucs4_avx2(const uint8_t *s, size_t n, size_t i, uint32_t *out,
                                    size_t o, size_t cap, size_t *pi) {
    size_t i0 = i;
    const __m128i lim = _mm_set1_epi8(-64), x3f = _mm_set1_epi8(0x3F),
                  x7f = _mm_set1_epi8(0x7F), x40 = _mm_set1_epi8(0x40),
                  x0f = _mm_set1_epi8(0x0F), x30 = _mm_set1_epi8(0x30),
                  x07 = _mm_set1_epi8(0x07), z = _mm_setzero_si128();
    while (i < n && i < 3 && o < cap) {
        size_t before = i;
        o = to_ucs4_scalar(s, n, i, out, o, o + 1, &i);
        if (i == before) break;
    }
    if (i >= 3) {
        while (i + 17 <= n && o + 16 <= cap) {
            __m128i v0 = _mm_loadu_si128((const __m128i *)(s + i));
            if (!_mm_movemask_epi8(v0)) {
                size_t o2 = o;
                ascii32_avx2(s, i + 16, i, out, &o2, o + 16);
                i += 16;
                o += 16;
                continue;
            }
            BLOCK_LOADS;
            __m128i ppp = _mm_loadu_si128((const __m128i *)(s + i - 3));
            __m128i cpp = _mm_cmplt_epi8(pp, lim);
            __m128i c2 = _mm_and_si128(cv, cp_);
            __m128i low = _mm_and_si128(v, _mm_xor_si128(x7f, _mm_and_si128(cv, x40)));
            __m128i mid = _mm_and_si128(_mm_and_si128(p, x3f), cv);
            /* third byte back: 4 bits of a 3-byte lead, or 6 of a continuation */
            __m128i hmask = _mm_or_si128(x0f, _mm_and_si128(cpp, x30));
            __m128i hi = _mm_and_si128(_mm_and_si128(pp, hmask), c2);
            __m128i top = _mm_and_si128(_mm_and_si128(ppp, x07), _mm_and_si128(c2, cpp));
            /* 16-bit halves: L = low | mid << 6 (12 bits), H = hi | top << 6 (9 bits) */
            __m128i L0 = _mm_or_si128(_mm_unpacklo_epi8(low, z),
                                      _mm_slli_epi16(_mm_unpacklo_epi8(mid, z), 6));
            __m128i L1 = _mm_or_si128(_mm_unpackhi_epi8(low, z),
                                      _mm_slli_epi16(_mm_unpackhi_epi8(mid, z), 6));
            __m128i H0 = _mm_or_si128(_mm_unpacklo_epi8(hi, z),
                                      _mm_slli_epi16(_mm_unpacklo_epi8(top, z), 6));
            __m128i H1 = _mm_or_si128(_mm_unpackhi_epi8(hi, z),
                                      _mm_slli_epi16(_mm_unpackhi_epi8(top, z), 6));
            __m128i w[4];
            w[0] = _mm_or_si128(_mm_unpacklo_epi16(L0, z), _mm_slli_epi32(_mm_unpacklo_epi16(H0, z), 12));
            w[1] = _mm_or_si128(_mm_unpackhi_epi16(L0, z), _mm_slli_epi32(_mm_unpackhi_epi16(H0, z), 12));
            w[2] = _mm_or_si128(_mm_unpacklo_epi16(L1, z), _mm_slli_epi32(_mm_unpacklo_epi16(H1, z), 12));
            w[3] = _mm_or_si128(_mm_unpackhi_epi16(L1, z), _mm_slli_epi32(_mm_unpackhi_epi16(H1, z), 12));
            for (int q = 0; q < 4; q++) {
                unsigned m = (keep >> (4 * q)) & 0xF;
                _mm_storeu_si128((__m128i *)(out + o),
                                 _mm_shuffle_epi8(w[q], _mm_loadu_si128((const __m128i *)tab_u32[m])));
                o += (size_t)__builtin_popcount(m);
            }
            i += 16;
        }
        i = char_start(s, n, i, i0);
    }
    return to_ucs4_scalar(s, n, i, out, o, cap, pi);
}


/* -- avx2: Corrected UTF-8 ---------------------------------------------------------
 *
 * Corrected UTF-8 has UTF-8's shape (a lead announcing its length, then
 * continuation bytes) and every complete sequence is well-formed, so a block is
 * well-formed exactly when each byte is a continuation byte if and only if a lead
 * within the three bytes before it asks for one. Blocks start at a token boundary
 * and look at nothing before it; a sequence that runs past the block is left for
 * the next block (which starts at its lead). Blocks with a lead F8..FF (5- and
 * 6-byte sequences, reserved units) or any error are left to the scalar walk.
 * Values are the bits of the sequence plus the offset of its row ("Putting it all
 * together"), looked up by length, and for three bytes by which side of EC BD A0.
 */
TGT_AVX2 static size_t c8_blocks_avx2(const uint8_t *s, size_t n, size_t i, uint32_t *out,
                                      size_t *po, size_t cap) {
    const __m128i lim = _mm_set1_epi8(-64), x3f = _mm_set1_epi8(0x3F),
                  x7f = _mm_set1_epi8(0x7F), x40 = _mm_set1_epi8(0x40),
                  x0f = _mm_set1_epi8(0x0F), x30 = _mm_set1_epi8(0x30),
                  x07 = _mm_set1_epi8(0x07), xf7 = _mm_set1_epi8((char)0xF7),
                  xc0 = _mm_set1_epi8((char)0xC0), xe0 = _mm_set1_epi8((char)0xE0),
                  xf0 = _mm_set1_epi8((char)0xF0), z = _mm_setzero_si128();
    const __m256i offsets = _mm256_setr_epi32(0, 160, 2208, 69792, 0, 160, 4256, 69792);
    const __m256i cf5f = _mm256_set1_epi32(0xCF5F), four = _mm256_set1_epi32(4);
    size_t o = *po;
    while (i + 16 <= n && o + 16 <= cap) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        if (!_mm_movemask_epi8(v)) {
            _mm256_storeu_si256((__m256i *)(out + o), _mm256_cvtepu8_epi32(v));
            _mm256_storeu_si256((__m256i *)(out + o + 8), _mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)));
            i += 16;
            o += 16;
            continue;
        }
        if (!_mm_testz_si128(_mm_subs_epu8(v, xf7), _mm_subs_epu8(v, xf7))) break; /* F8..FF */
        __m128i c = _mm_cmplt_epi8(v, lim);
        __m128i l2 = _mm_cmpeq_epi8(_mm_max_epu8(v, xc0), v);
        __m128i l3 = _mm_cmpeq_epi8(_mm_max_epu8(v, xe0), v);
        __m128i l4 = _mm_cmpeq_epi8(_mm_max_epu8(v, xf0), v);
        __m128i must = _mm_or_si128(_mm_or_si128(_mm_slli_si128(l2, 1), _mm_slli_si128(l3, 2)),
                                    _mm_slli_si128(l4, 3));
        if (_mm_movemask_epi8(_mm_xor_si128(must, c))) break;
        unsigned cm = (unsigned)_mm_movemask_epi8(c);
        unsigned cross = ((unsigned)_mm_movemask_epi8(l2) & 0x8000) |
                         ((unsigned)_mm_movemask_epi8(l3) & 0xC000) |
                         ((unsigned)_mm_movemask_epi8(l4) & 0xE000);
        size_t step = cross ? (size_t)(31 - __builtin_clz(cross)) : 16;
        if (step == 0) break; /* one sequence longer than what is left of the block */
        unsigned keep = (~(cm >> 1) & 0x7FFF) | (cross ? 0 : 0x8000);
        __m128i p1 = _mm_slli_si128(v, 1), p2 = _mm_slli_si128(v, 2), p3 = _mm_slli_si128(v, 3);
        __m128i c1 = _mm_slli_si128(c, 1), c2 = _mm_slli_si128(c, 2);
        __m128i cc = _mm_and_si128(c, c1), ccc = _mm_and_si128(cc, c2);
        __m128i low = _mm_and_si128(v, _mm_xor_si128(x7f, _mm_and_si128(c, x40)));
        __m128i mid = _mm_and_si128(_mm_and_si128(p1, x3f), c);
        __m128i hi = _mm_and_si128(_mm_and_si128(p2, _mm_or_si128(x0f, _mm_and_si128(c2, x30))), cc);
        __m128i top = _mm_and_si128(_mm_and_si128(p3, x07), ccc);
        /* length class: 0 ASCII, 1 two bytes, 2 three, 3 four (at the last byte) */
        __m128i cls = _mm_sub_epi8(_mm_sub_epi8(_mm_sub_epi8(z, c), cc), ccc);
        for (int h = 0; h < 2; h++) {
            __m256i w = _mm256_or_si256(
                _mm256_or_si256(_mm256_cvtepu8_epi32(low),
                                _mm256_slli_epi32(_mm256_cvtepu8_epi32(mid), 6)),
                _mm256_or_si256(_mm256_slli_epi32(_mm256_cvtepu8_epi32(hi), 12),
                                _mm256_slli_epi32(_mm256_cvtepu8_epi32(top), 18)));
            __m256i idx = _mm256_or_si256(_mm256_cvtepu8_epi32(cls),
                                          _mm256_and_si256(_mm256_cmpgt_epi32(w, cf5f), four));
            w = _mm256_add_epi32(w, _mm256_permutevar8x32_epi32(offsets, idx));
            unsigned m = (keep >> (8 * h)) & 0xFF;
            __m256i perm = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)tab_u8[m]));
            _mm256_storeu_si256((__m256i *)(out + o), _mm256_permutevar8x32_epi32(w, perm));
            o += (size_t)__builtin_popcount(m);
            low = _mm_srli_si128(low, 8);
            mid = _mm_srli_si128(mid, 8);
            hi = _mm_srli_si128(hi, 8);
            top = _mm_srli_si128(top, 8);
            cls = _mm_srli_si128(cls, 8);
        }
        i += step;
    }
    *po = o;
    return i;
}

static const fast_path path_avx2 = {
    "avx2", scan_avx2, to_ucs1_avx2, to_ucs2_avx2, to_ucs4_avx2, ascii32_avx2, c8_blocks_avx2,
};

#else /* not x86-64: only the scalar path */
void fast_simd_init(void) {}
int fast_cpu_has(int path) { return path == PATH_SCALAR; }
#endif

#ifdef HAVE_X86
const fast_path *const fast_simd_paths[PATH_COUNT] = {&fast_scalar, &path_sse2, &path_avx2, NULL};
#else
const fast_path *const fast_simd_paths[PATH_COUNT] = {&fast_scalar, NULL, NULL, NULL};
#endif
