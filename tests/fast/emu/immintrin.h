/* Test harness only (tests/fast/test_avx512_emulated.py): stands in for the
 * compiler's <immintrin.h> so that avx512.c runs on a CPU without AVX-512, its
 * intrinsics emulated by SIMDe (the system's libsimde-dev headers, not copied).
 * Two that this SIMDe lacks are written here from Intel's descriptions:
 *   _mm512_alignr_epi64(a, b, imm): a:b (a high) as 16 quadwords, shifted right
 *     by imm quadwords, the low 8;
 *   _mm512_alignr_epi8(a, b, imm): in each 16-byte block j, a_j:b_j (a high)
 *     shifted right by imm bytes, the low 16.
 */
#include <stdint.h>
#include <string.h>
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

static inline simde__m512i emu_alignr_epi64(simde__m512i a, simde__m512i b, int imm) {
    uint64_t t[16], r[8];
    simde__m512i out;
    memcpy(t, &b, 64);
    memcpy(t + 8, &a, 64);
    for (int k = 0; k < 8; k++) r[k] = t[k + imm];
    memcpy(&out, r, 64);
    return out;
}

static inline simde__m512i emu_alignr_epi8(simde__m512i a, simde__m512i b, int imm) {
    uint8_t A[64], B[64], R[64], t[32];
    simde__m512i out;
    memcpy(A, &a, 64);
    memcpy(B, &b, 64);
    for (int j = 0; j < 4; j++) {
        memcpy(t, B + 16 * j, 16);
        memcpy(t + 16, A + 16 * j, 16);
        for (int k = 0; k < 16; k++) R[16 * j + k] = (k + imm < 32) ? t[k + imm] : 0;
    }
    memcpy(&out, R, 64);
    return out;
}

#define _mm512_alignr_epi64 emu_alignr_epi64
#define _mm512_alignr_epi8 emu_alignr_epi8
