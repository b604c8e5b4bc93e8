/* The scalar code path: the definition the SIMD paths are tested against, the
 * path for short inputs and CPUs without SSE2, and the tails of the SIMD loops. */
#include <string.h>

#include "fast.h"

#define ASCII_MASK 0x8080808080808080ULL

int scan_scalar(const uint8_t *s, size_t n, u8stats *st, size_t *restart) {
    size_t i = 0, ncont = 0;
    unsigned maxb = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & ASCII_MASK)) {
                i += 8;
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

/* The transcoders trust validity for the values but never for the bounds: a lead
 * whose sequence would run past n stops the loop (the caller reports it). */
#define DEFINE_SCALAR_TO(NAME, T)                                                            \
    size_t NAME(const uint8_t *s, size_t n, size_t i, T *out, size_t o, size_t cap,          \
                size_t *pi) {                                                                \
        while (i < n && o < cap) {                                                           \
            uint32_t b = s[i];                                                               \
            if (b < 0x80) {                                                                  \
                while (i + 8 <= n && o + 8 <= cap) {                                         \
                    uint64_t w;                                                              \
                    memcpy(&w, s + i, 8);                                                    \
                    if (w & ASCII_MASK) break;                                               \
                    for (int k = 0; k < 8; k++) out[o + k] = (T)s[i + k];                    \
                    i += 8;                                                                  \
                    o += 8;                                                                  \
                }                                                                            \
                if (i < n && o < cap && s[i] < 0x80) out[o++] = (T)s[i++];                   \
                continue;                                                                    \
            }                                                                                \
            if (b < 0xE0) {                                                                  \
                if (i + 2 > n) break;                                                        \
                out[o++] = (T)(((b & 0x1F) << 6) | (s[i + 1] & 0x3F));                       \
                i += 2;                                                                      \
            } else if (b < 0xF0) {                                                           \
                if (i + 3 > n) break;                                                        \
                out[o++] = (T)(((b & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) |     \
                               (s[i + 2] & 0x3F));                                           \
                i += 3;                                                                      \
            } else {                                                                         \
                if (i + 4 > n) break;                                                        \
                out[o++] = (T)(((b & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) |    \
                               ((uint32_t)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F));      \
                i += 4;                                                                      \
            }                                                                                \
        }                                                                                    \
        *pi = i;                                                                             \
        return o;                                                                            \
    }

DEFINE_SCALAR_TO(to_ucs1_scalar, uint8_t)
DEFINE_SCALAR_TO(to_ucs2_scalar, uint16_t)
DEFINE_SCALAR_TO(to_ucs4_scalar, uint32_t)

size_t ascii32_scalar(const uint8_t *s, size_t n, size_t i, uint32_t *out, size_t *o,
                      size_t cap) {
    size_t k = *o;
    while (i < n && k < cap && s[i] < 0x80) out[k++] = s[i++];
    *o = k;
    return i;
}

const fast_path fast_scalar = {
    "scalar", scan_scalar, to_ucs1_scalar, to_ucs2_scalar, to_ucs4_scalar, ascii32_scalar, NULL,
};
