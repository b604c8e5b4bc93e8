/* The lookup-table validation (Keiser & Lemire; tables and error classes in
 * lookup.h), written once over a vector abstraction and instantiated for each
 * code path that has a byte shuffle: ssse3 and avx2 (simd.c), avx512 (avx512.c).
 *
 * The scan reads 64-byte blocks of 64 / V_BYTES vectors. A block of ASCII only
 * needs no check but one: that the previous block did not end inside a sequence.
 * Any other block is checked vector by vector against the vector before it, and
 * also counts its continuation bytes and keeps the largest byte, which the
 * transcoding kernels need (the PEP 393 kind and the output length).
 *
 * Continuation bytes are counted per byte lane: a block adds at most 64 / V_BYTES
 * (at most 4) to a lane, so the lanes are summed every 63 blocks, before one can
 * wrap. That needs no POPCNT, which SSSE3 lacks.
 *
 * Before each inclusion the path defines:
 *   V_TGT           its target attribute;
 *   V_NAME(name)    the name of a function for that path;
 *   V, V_BYTES      its vector type and width in bytes (16, 32 or 64);
 *   V_LOAD(p), V_STORE(p, v), V_ZERO(), V_SET1(b)
 *   V_TABLE(T)      the 16-entry table T (lookup.h) in every 128-bit lane;
 *   V_OR, V_AND, V_XOR, V_SUB8, V_SUBS_U8, V_MAX_U8 (a, b): per byte;
 *   V_SRL4(v)       each byte's high nibble in its low bits, plus bits of its
 *                   neighbour that V_NIB masks off (a 16-bit shift);
 *   V_SHUF(t, i)    t's byte i & 15 within each 128-bit lane (PSHUFB);
 *   V_BEHIND(in, prev)        what V_PREV looks back into (prev's last lane);
 *   V_PREV(in, behind, k)     the byte k (1..3) before each byte of in;
 *   V_LT(a, b)      0xFF in each byte where a < b as signed, else 0;
 *   V_HIGH(v)       non-zero when a byte of v is 80..FF;
 *   V_ANY(v)        non-zero when a byte of v is non-zero;
 *   V_SUM_BYTES(v)  the sum of v's bytes (uint64_t).
 * It defines V_NAME(consts), V_NAME(check) and V_NAME(scan), static, and undefines
 * those macros at its end. No include guard: it is meant to be included more than
 * once.
 */

#define V_BLOCK_VECTORS (64 / V_BYTES)

typedef struct {
    V t1h, t1l, t2h, nib, m3, m4, b80, cont_lim;
} V_NAME(consts);

/* The error classes of each byte of `in` (non-zero: an error), `prev` being the
 * V_BYTES bytes before it. */
V_TGT static inline V V_NAME(check)(const V_NAME(consts) *c, V in, V prev) {
    V behind = V_BEHIND(in, prev);
    V p1 = V_PREV(in, behind, 1);
    V p2 = V_PREV(in, behind, 2);
    V p3 = V_PREV(in, behind, 3);
    V b1h = V_SHUF(c->t1h, V_AND(V_SRL4(p1), c->nib));
    V b1l = V_SHUF(c->t1l, V_AND(p1, c->nib));
    V b2h = V_SHUF(c->t2h, V_AND(V_SRL4(in), c->nib));
    V sc = V_AND(V_AND(b1h, b1l), b2h);
    /* A continuation must be the 2nd or 3rd after a 3- or 4-byte lead exactly where
     * the tables flagged TWO_CONTS: the XOR cancels expected cases and flags others. */
    V must = V_OR(V_SUBS_U8(p2, c->m3), V_SUBS_U8(p3, c->m4));
    return V_XOR(V_AND(must, c->b80), sc);
}

/* The scan of fast.h's scan_fn: 1 and the stats when s[0:n] is well-formed, else 0
 * and a token boundary at or before the first error in *restart. */
V_TGT static int V_NAME(scan)(const uint8_t *s, size_t n, u8stats *st, size_t *restart) {
    /* The last three bytes of a block may not begin a sequence longer than what
     * remains (a byte above the limit, minus it, is non-zero). */
    static const uint8_t INCOMPLETE[64] = {
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0 - 1, 0xE0 - 1, 0xC0 - 1};
    V_NAME(consts) c;
    c.t1h = V_TABLE(T1H);
    c.t1l = V_TABLE(T1L);
    c.t2h = V_TABLE(T2H);
    c.nib = V_SET1(0x0F);
    c.m3 = V_SET1((char)(0xE0 - 0x80));
    c.m4 = V_SET1((char)(0xF0 - 0x80));
    c.b80 = V_SET1((char)0x80);
    c.cont_lim = V_SET1(-64);
    const V incomplete = V_LOAD(INCOMPLETE + 64 - V_BYTES);
    const V z = V_ZERO();
    V prev = z, prev_inc = z, err = z, vmax = z, cnt8 = z;
    uint64_t ncont = 0;
    unsigned pending = 0;
    size_t i = 0;
    uint8_t buf[64];
    while (i < n) {
        const uint8_t *p = s + i;
        if (i + 64 > n) { /* the tail, padded with ASCII NULs */
            memset(buf, 0, sizeof buf);
            memcpy(buf, s + i, n - i);
            p = buf;
        }
        V v[V_BLOCK_VECTORS];
        V any = z;
        for (int k = 0; k < V_BLOCK_VECTORS; k++) {
            v[k] = V_LOAD(p + k * V_BYTES);
            any = V_OR(any, v[k]);
        }
        if (!V_HIGH(any)) {
            /* all ASCII: only a sequence cut off at the previous block's end is wrong */
            err = V_OR(err, prev_inc);
            prev_inc = z;
        } else {
            for (int k = 0; k < V_BLOCK_VECTORS; k++) {
                err = V_OR(err, V_NAME(check)(&c, v[k], k ? v[k - 1] : prev));
                vmax = V_MAX_U8(vmax, v[k]);
                /* signed v < -64 <=> 80..BF: -1 per continuation byte */
                cnt8 = V_SUB8(cnt8, V_LT(v[k], c.cont_lim));
            }
            prev_inc = V_SUBS_U8(v[V_BLOCK_VECTORS - 1], incomplete);
            if (++pending == 63) {
                ncont += V_SUM_BYTES(cnt8);
                cnt8 = z;
                pending = 0;
            }
        }
        prev = v[V_BLOCK_VECTORS - 1];
        if (V_ANY(err)) {
            *restart = back_to_boundary(s, i);
            return 0;
        }
        i += 64;
    }
    if (V_ANY(prev_inc)) {
        *restart = back_to_boundary(s, n);
        return 0;
    }
    ncont += V_SUM_BYTES(cnt8);
    uint8_t m[V_BYTES];
    V_STORE(m, vmax);
    unsigned mx = 0;
    for (int k = 0; k < V_BYTES; k++)
        if (m[k] > mx) mx = m[k];
    st->ncont = (size_t)ncont;
    st->maxb = mx;
    return 1;
}

#undef V_BLOCK_VECTORS
#undef V_TGT
#undef V_NAME
#undef V
#undef V_BYTES
#undef V_LOAD
#undef V_STORE
#undef V_ZERO
#undef V_SET1
#undef V_TABLE
#undef V_OR
#undef V_AND
#undef V_XOR
#undef V_SUB8
#undef V_SUBS_U8
#undef V_MAX_U8
#undef V_SRL4
#undef V_SHUF
#undef V_BEHIND
#undef V_PREV
#undef V_LT
#undef V_HIGH
#undef V_ANY
#undef V_SUM_BYTES
