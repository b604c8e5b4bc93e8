/* The avx512 path's validation: validate.h's scan on 64-byte vectors (AVX-512BW),
 * one vector per block; its operations below are the only code of this path. The
 * development machine has no AVX-512: tests/fast/test_avx512_emulated.py runs it
 * against an emulation of the intrinsics. Transcoding reuses the avx2 kernels
 * (simd.c): every AVX-512BW CPU has AVX2, and the dispatcher checks both.
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

TGT_AVX512 static inline uint64_t avx512_sum_bytes(__m512i v) {
    uint64_t q[8], sum = 0; /* eight u64 sums: once every 63 blocks, so kept simple */
    _mm512_storeu_si512((void *)q, _mm512_sad_epu8(v, _mm512_setzero_si512()));
    for (int k = 0; k < 8; k++) sum += q[k];
    return sum;
}

#define V_TGT TGT_AVX512
#define V_NAME(name) avx512_##name
#define V __m512i
#define V_BYTES 64
#define V_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define V_STORE(p, v) _mm512_storeu_si512((void *)(p), (v))
#define V_ZERO() _mm512_setzero_si512()
#define V_SET1(b) _mm512_set1_epi8(b)
/* VPSHUFB looks up within each 128-bit lane: the table is repeated in every lane */
#define V_TABLE(T) _mm512_broadcast_i32x4(_mm_setr_epi8(T))
#define V_OR _mm512_or_si512
#define V_AND _mm512_and_si512
#define V_XOR _mm512_xor_si512
#define V_SUB8 _mm512_sub_epi8
#define V_SUBS_U8 _mm512_subs_epu8
#define V_MAX_U8 _mm512_max_epu8
#define V_SRL4(v) _mm512_srli_epi16((v), 4)
#define V_SHUF _mm512_shuffle_epi8
/* PALIGNR works within 128-bit lanes: give each lane of `in` the lane before it
 * (lane 3 of prev for lane 0). VALIGNQ by 6 quadwords of prev:in gives prev[6],
 * prev[7], in[0..5], i.e. lanes (prev 3, in 0, in 1, in 2). */
#define V_BEHIND(in, prev) _mm512_alignr_epi64((in), (prev), 6)
#define V_PREV(in, behind, k) _mm512_alignr_epi8((in), (behind), 16 - (k))
#define V_LT(a, b) _mm512_movm_epi8(_mm512_cmplt_epi8_mask((a), (b)))
#define V_HIGH(v) _mm512_movepi8_mask(v)
#define V_ANY(v) (_mm512_test_epi8_mask((v), (v)) != 0)
#define V_SUM_BYTES(v) avx512_sum_bytes(v)
#include "validate.h"

TGT_AVX512 int scan_avx512(const uint8_t *s, size_t n, u8stats *st, size_t *restart) {
    return avx512_scan(s, n, st, restart);
}
#endif
