/* The avx512 path's validation: Keiser & Lemire's lookup-table check (lookup.h)
 * on 64-byte vectors (AVX-512BW), one vector per block.
 *
 * It is the avx2 and ssse3 scans with wider vectors, kept line for line parallel to
 * them on purpose: the development machine has no AVX-512, so this code is compiled
 * (and warning-clean) but not executed there, and must be checkable by reading it
 * against the paths that are tested. Transcoding reuses the avx2 kernels (simd.c):
 * every AVX-512BW CPU has AVX2, and the dispatcher checks both.
 *
 * A separate file so that the target attribute is the only thing that differs
 * from a build of it for an emulation of the intrinsics (see TGT_AVX512).
 */
#include <string.h>

#include "fast.h"
#include "lookup.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* Defined elsewhere only by a harness that builds this file against an emulation
 * of the intrinsics on a CPU without AVX-512; the package always uses this one. */
#ifndef TGT_AVX512
#define TGT_AVX512 __attribute__((target("avx512f,avx512bw,avx2,popcnt")))
#endif

#define FF8 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
/* The last three bytes of a block may not begin a sequence longer than what
 * remains (a byte above the limit, minus it, is non-zero). */
static const uint8_t INCOMPLETE[64] = {FF8, FF8, FF8, FF8, FF8, FF8, FF8,
                                       0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                       0xF0 - 1, 0xE0 - 1, 0xC0 - 1};

typedef struct {
    __m512i t1h, t1l, t2h, nib, m3, m4, b80;
} avx512_consts;

/* The error classes of each byte of `in` (non-zero: an error), `prev` being the
 * 64 bytes before it. */
TGT_AVX512 static inline __m512i avx512_check(const avx512_consts *c, __m512i in,
                                              __m512i prev) {
    /* PALIGNR works within 128-bit lanes: give each lane of `in` the lane before it
     * (lane 3 of prev for lane 0). VALIGNQ by 6 quadwords of prev:in gives
     * prev[6], prev[7], in[0..5], i.e. lanes (prev 3, in 0, in 1, in 2). */
    __m512i sh = _mm512_alignr_epi64(in, prev, 6);
    __m512i p1 = _mm512_alignr_epi8(in, sh, 15); /* the byte before each byte */
    __m512i p2 = _mm512_alignr_epi8(in, sh, 14);
    __m512i p3 = _mm512_alignr_epi8(in, sh, 13);
    /* VPSHUFB looks up within each lane; the tables are repeated in every lane. */
    __m512i b1h = _mm512_shuffle_epi8(c->t1h, _mm512_and_si512(_mm512_srli_epi16(p1, 4), c->nib));
    __m512i b1l = _mm512_shuffle_epi8(c->t1l, _mm512_and_si512(p1, c->nib));
    __m512i b2h = _mm512_shuffle_epi8(c->t2h, _mm512_and_si512(_mm512_srli_epi16(in, 4), c->nib));
    __m512i sc = _mm512_and_si512(_mm512_and_si512(b1h, b1l), b2h);
    /* A continuation must be the 2nd or 3rd after a 3- or 4-byte lead exactly where
     * the tables flagged TWO_CONTS: the XOR cancels expected cases and flags others. */
    __m512i must = _mm512_or_si512(_mm512_subs_epu8(p2, c->m3), _mm512_subs_epu8(p3, c->m4));
    return _mm512_xor_si512(_mm512_and_si512(must, c->b80), sc);
}

TGT_AVX512 int scan_avx512(const uint8_t *s, size_t n, u8stats *st, size_t *restart) {
    avx512_consts c;
    c.t1h = _mm512_broadcast_i32x4(_mm_setr_epi8(T1H));
    c.t1l = _mm512_broadcast_i32x4(_mm_setr_epi8(T1L));
    c.t2h = _mm512_broadcast_i32x4(_mm_setr_epi8(T2H));
    c.nib = _mm512_set1_epi8(0x0F);
    c.m3 = _mm512_set1_epi8((char)(0xE0 - 0x80));
    c.m4 = _mm512_set1_epi8((char)(0xF0 - 0x80));
    c.b80 = _mm512_set1_epi8((char)0x80);
    const __m512i cont_lim = _mm512_set1_epi8(-64);
    const __m512i incomplete = _mm512_loadu_si512((const void *)INCOMPLETE);
    const __m512i z = _mm512_setzero_si512();
    __m512i prev = z, prev_inc = z, err = z, vmax = z;
    size_t ncont = 0, i = 0;
    uint8_t buf[64];
    while (i < n) {
        const uint8_t *p = s + i;
        if (i + 64 > n) { /* the tail, padded with ASCII NULs */
            memset(buf, 0, sizeof buf);
            memcpy(buf, s + i, n - i);
            p = buf;
        }
        __m512i v = _mm512_loadu_si512((const void *)p);
        if (_mm512_movepi8_mask(v) == 0) {
            /* all ASCII: only a sequence cut off at the previous block's end is wrong */
            err = _mm512_or_si512(err, prev_inc);
            prev_inc = z;
        } else {
            err = _mm512_or_si512(err, avx512_check(&c, v, prev));
            prev_inc = _mm512_subs_epu8(v, incomplete);
            vmax = _mm512_max_epu8(vmax, v);
            /* signed v < -64 <=> 80..BF */
            ncont += (size_t)__builtin_popcountll(_mm512_cmplt_epi8_mask(v, cont_lim));
        }
        prev = v;
        if (_mm512_test_epi8_mask(err, err) != 0) {
            *restart = back_to_boundary(s, i);
            return 0;
        }
        i += 64;
    }
    if (_mm512_test_epi8_mask(prev_inc, prev_inc) != 0) {
        *restart = back_to_boundary(s, n);
        return 0;
    }
    uint8_t m[64];
    _mm512_storeu_si512((void *)m, vmax);
    unsigned mx = 0;
    for (int k = 0; k < 64; k++)
        if (m[k] > mx) mx = m[k];
    st->ncont = ncont;
    st->maxb = mx;
    return 1;
}
#endif
