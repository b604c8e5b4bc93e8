/* The x86-64 SIMD code paths.
 *
 * sse2   (every x86-64 CPU, the baseline): 16-byte ASCII runs in SIMD, everything
 *        else scalar. SSE2 has no byte shuffle (PSHUFB is SSSE3), so neither the
 *        lookup-table validation nor the shuffle-table transcoding can be done here.
 * ssse3  Keiser & Lemire's lookup-table validation ("Validating UTF-8 In Less
 *        Than One Instruction Per Byte", 2021; tables in lookup.h, the scan
 *        written once in validate.h) on 64-byte blocks of four 16-byte vectors,
 *        counting continuation bytes and the largest byte in the same pass;
 *        then one transcoding kernel per PEP 393
 *        kind (k128.h: compress by shuffle tables). SSSE3 only: no POPCNT, no
 *        SSE4.1, so it runs on every CPU that has PSHUFB.
 * avx2   the same validation on 32-byte vectors, the same kernels compiled for
 *        AVX2 (32-byte ASCII copies, POPCNT), and Corrected UTF-8 blocks.
 * avx512 the same validation on 64-byte vectors (AVX-512BW, avx512.c); the avx2
 *        transcoding kernels (every AVX-512BW CPU has AVX2).
 *
 * Each function carries __attribute__((target(...))) so that the package is built
 * without -march: the choice is made at run time (see _fast.c), and a wheel built
 * here runs on any x86-64.
 */
#include <stdio.h>
#include <string.h>

#include "fast.h"
#include "lookup.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_X86 1
#include <immintrin.h>

#define TGT_SSSE3 __attribute__((target("ssse3")))
#define TGT_AVX2 __attribute__((target("avx2,popcnt")))

/* -- compress tables: gather the kept lanes of a vector to its front ---------- */

static uint8_t tab_u8[256][8];    /* 8 byte lanes, mask of 8 bits */
static uint8_t tab_u16[256][16];  /* 8 u16 lanes, mask of 8 bits */
static uint8_t tab_u32[16][16];   /* 4 u32 lanes, mask of 4 bits */
static uint8_t pop8[256];         /* bits set: the ssse3 path may not use POPCNT */

void fast_simd_init(void) {
    for (int m = 0; m < 256; m++) {
        int k = 0;
        pop8[m] = (uint8_t)__builtin_popcount((unsigned)m);
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

/* The CPU features each path's target attributes use. Each is checked on its own
 * so that refusing a path names what this CPU lacks. */
static const char *const NEEDS[PATH_COUNT][5] = {
    [PATH_SSSE3] = {"ssse3", NULL},
    [PATH_AVX2] = {"avx2", "popcnt", NULL},
    [PATH_AVX512] = {"avx512f", "avx512bw", "avx2", "popcnt", NULL},
};

static int cpu_feature(const char *f) {
    /* __builtin_cpu_supports takes a string literal only, hence the chain */
    if (strcmp(f, "ssse3") == 0) return __builtin_cpu_supports("ssse3");
    if (strcmp(f, "popcnt") == 0) return __builtin_cpu_supports("popcnt");
    if (strcmp(f, "avx2") == 0) return __builtin_cpu_supports("avx2");
    if (strcmp(f, "avx512f") == 0) return __builtin_cpu_supports("avx512f");
    if (strcmp(f, "avx512bw") == 0) return __builtin_cpu_supports("avx512bw");
    return 0;
}

const char *fast_cpu_missing(int path, char *buf, size_t size) {
    size_t len = 0;
    __builtin_cpu_init();
    buf[0] = '\0';
    if (path < 0 || path >= PATH_COUNT) return buf;
    for (const char *const *f = NEEDS[path]; *f; f++) {
        if (cpu_feature(*f)) continue;
        int w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", *f);
        if (w < 0 || (size_t)w >= size - len) break; /* truncated: still non-empty */
        len += (size_t)w;
    }
    return buf;
}

int fast_cpu_has(int path) {
    char buf[64];
    return path >= 0 && path < PATH_COUNT && fast_cpu_missing(path, buf, sizeof buf)[0] == '\0';
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
        if (!scan_step(s, n, &i, &ncont, &maxb)) {
            *restart = i;
            return 0;
        }
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

/* -- ssse3 and avx2: validation (validate.h) ---------------------------------------- */

TGT_SSSE3 static inline uint64_t ssse3_sum_bytes(__m128i v) {
    __m128i sums = _mm_sad_epu8(v, _mm_setzero_si128()); /* two u64 sums */
    return (uint64_t)_mm_cvtsi128_si64(sums) +
           (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
}

#define V_TGT TGT_SSSE3
#define V_NAME(name) ssse3_##name
#define V __m128i
#define V_BYTES 16
#define V_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define V_STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define V_ZERO() _mm_setzero_si128()
#define V_SET1(b) _mm_set1_epi8(b)
#define V_TABLE(T) _mm_setr_epi8(T)
#define V_OR _mm_or_si128
#define V_AND _mm_and_si128
#define V_XOR _mm_xor_si128
#define V_SUB8 _mm_sub_epi8
#define V_SUBS_U8 _mm_subs_epu8
#define V_MAX_U8 _mm_max_epu8
#define V_SRL4(v) _mm_srli_epi16((v), 4)
#define V_SHUF _mm_shuffle_epi8
#define V_BEHIND(in, prev) (prev)
#define V_PREV(in, behind, k) _mm_alignr_epi8((in), (behind), 16 - (k))
#define V_LT _mm_cmplt_epi8
#define V_HIGH(v) _mm_movemask_epi8(v)
#define V_ANY(v) (_mm_movemask_epi8(_mm_cmpeq_epi8((v), _mm_setzero_si128())) != 0xFFFF)
#define V_SUM_BYTES(v) ssse3_sum_bytes(v)
#include "validate.h"

TGT_AVX2 static inline uint64_t avx2_sum_bytes(__m256i v) {
    __m256i sums = _mm256_sad_epu8(v, _mm256_setzero_si256()); /* four u64 sums */
    __m128i two = _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    return (uint64_t)_mm_cvtsi128_si64(two) +
           (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(two, two));
}

#define V_TGT TGT_AVX2
#define V_NAME(name) avx2_##name
#define V __m256i
#define V_BYTES 32
#define V_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define V_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define V_ZERO() _mm256_setzero_si256()
#define V_SET1(b) _mm256_set1_epi8(b)
#define V_TABLE(T) _mm256_setr_epi8(T, T)
#define V_OR _mm256_or_si256
#define V_AND _mm256_and_si256
#define V_XOR _mm256_xor_si256
#define V_SUB8 _mm256_sub_epi8
#define V_SUBS_U8 _mm256_subs_epu8
#define V_MAX_U8 _mm256_max_epu8
#define V_SRL4(v) _mm256_srli_epi16((v), 4)
#define V_SHUF _mm256_shuffle_epi8
/* PALIGNR works within 128-bit lanes: lane 0 of `in` looks back into prev's lane 1 */
#define V_BEHIND(in, prev) _mm256_permute2x128_si256((prev), (in), 0x21)
#define V_PREV(in, behind, k) _mm256_alignr_epi8((in), (behind), 16 - (k))
#define V_LT(a, b) _mm256_cmpgt_epi8((b), (a))
#define V_HIGH(v) _mm256_movemask_epi8(v)
#define V_ANY(v) (!_mm256_testz_si256((v), (v)))
#define V_SUM_BYTES(v) avx2_sum_bytes(v)
#include "validate.h"

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

/* The transcoding kernels, once per path with PSHUFB (k128.h). */
#define K_ASCII_WIDE 0
#define K_TGT TGT_SSSE3
#define K(name) name##_ssse3
#define K_POP8(m) ((size_t)pop8[(m)])
#define K_ASCII32 ascii32_sse2
#include "k128.h"
#undef K_ASCII_WIDE
#undef K_TGT
#undef K
#undef K_POP8
#undef K_ASCII32

#define K_ASCII_WIDE 1
#define K_TGT TGT_AVX2
#define K(name) name##_avx2
#define K_POP8(m) ((size_t)__builtin_popcount(m))
#define K_ASCII32 ascii32_avx2
#include "k128.h"
#undef K_ASCII_WIDE
#undef K_TGT
#undef K
#undef K_POP8
#undef K_ASCII32

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

static const fast_path path_ssse3 = {
    "ssse3", ssse3_scan, to_ucs1_ssse3, to_ucs2_ssse3, to_ucs4_ssse3, ascii32_sse2, NULL,
};

static const fast_path path_avx2 = {
    "avx2", avx2_scan, to_ucs1_avx2, to_ucs2_avx2, to_ucs4_avx2, ascii32_avx2, c8_blocks_avx2,
};

/* Validation on 64-byte vectors (avx512.c), transcoding by the avx2 kernels. */
static const fast_path path_avx512 = {
    "avx512", scan_avx512, to_ucs1_avx2, to_ucs2_avx2, to_ucs4_avx2, ascii32_avx2, c8_blocks_avx2,
};

#else /* not x86-64: only the scalar path */
void fast_simd_init(void) {}
int fast_cpu_has(int path) { return path == PATH_SCALAR; }
const char *fast_cpu_missing(int path, char *buf, size_t size) {
    snprintf(buf, size, "%s", path == PATH_SCALAR ? "" : "x86-64");
    return buf;
}
#endif

#ifdef HAVE_X86
const fast_path *const fast_simd_paths[PATH_COUNT] = {&fast_scalar, &path_sse2, &path_ssse3,
                                                      &path_avx2, &path_avx512};
#else
const fast_path *const fast_simd_paths[PATH_COUNT] = {&fast_scalar, NULL, NULL, NULL, NULL};
#endif
