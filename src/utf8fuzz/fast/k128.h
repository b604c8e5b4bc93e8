/* The 128-bit transcoding kernels (see "transcoding" in simd.c for how a block is
 * decoded), written once and instantiated by simd.c for each code path that has
 * PSHUFB (ssse3, avx2). Before each inclusion simd.c defines:
 *   K_TGT          the path's target attribute;
 *   K(name)        the kernel's name for that path;
 *   K_POP8(m)      the number of bits set in an 8-bit mask (POPCNT is not SSSE3);
 *   K_ASCII32      the path's ascii32 kernel, for to_ucs4's all-ASCII blocks;
 *   K_ASCII_WIDE   1 to copy a leading ASCII run 32 bytes at a time (AVX2).
 * No include guard: it is meant to be included more than once.
 */

K_TGT static size_t K(to_ucs1)(const uint8_t *s, size_t n, size_t i, uint8_t *out,
                               size_t o, size_t cap, size_t *pi) {
    size_t i0 = i;
    const __m128i lim = _mm_set1_epi8(-64), x3f = _mm_set1_epi8(0x3F),
                  xc0 = _mm_set1_epi8((char)0xC0);
    /* Head: one whole character until a byte of look-behind exists. */
    if (i == 0 && n > 0 && o < cap) o = to_ucs1_scalar(s, n, i, out, o, o + 1, &i);
    if (i >= 1) {
#if K_ASCII_WIDE
        /* leading ASCII: 32 bytes at a time */
        while (i + 32 <= n && o + 32 <= cap) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(s + i));
            if (_mm256_movemask_epi8(v)) break;
            _mm256_storeu_si256((__m256i *)(out + o), v);
            i += 32;
            o += 32;
        }
#endif
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
            o += K_POP8(mlo);
            _mm_storel_epi64((__m128i *)(out + o), hi);
            o += K_POP8(mhi);
            i += 16;
        }
        i = char_start(s, n, i, i0);
    }
    return to_ucs1_scalar(s, n, i, out, o, cap, pi);
}

/* Load the byte classes a block needs: v, the three bytes behind, one ahead. */
#ifndef BLOCK_LOADS
#define BLOCK_LOADS                                                                          \
    __m128i v = _mm_loadu_si128((const __m128i *)(s + i));                                   \
    __m128i p = _mm_loadu_si128((const __m128i *)(s + i - 1));                               \
    __m128i pp = _mm_loadu_si128((const __m128i *)(s + i - 2));                              \
    __m128i nx = _mm_loadu_si128((const __m128i *)(s + i + 1));                              \
    __m128i cv = _mm_cmplt_epi8(v, lim);                                                     \
    __m128i cp_ = _mm_cmplt_epi8(p, lim);                                                    \
    unsigned keep = ~(unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(nx, lim)) & 0xFFFF
#endif

K_TGT static size_t K(to_ucs2)(const uint8_t *s, size_t n, size_t i, uint16_t *out,
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
            o += K_POP8(mlo);
            _mm_storeu_si128((__m128i *)(out + o),
                             _mm_shuffle_epi8(vhi, _mm_loadu_si128((const __m128i *)tab_u16[mhi])));
            o += K_POP8(mhi);
            i += 16;
        }
        i = char_start(s, n, i, i0);
    }
    return to_ucs2_scalar(s, n, i, out, o, cap, pi);
}

K_TGT static size_t K(to_ucs4)(const uint8_t *s, size_t n, size_t i, uint32_t *out,
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
                K_ASCII32(s, i + 16, i, out, &o2, o + 16);
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
                o += K_POP8(m);
            }
            i += 16;
        }
        i = char_start(s, n, i, i0);
    }
    return to_ucs4_scalar(s, n, i, out, o, cap, pi);
}
