/* Test harness only: scan_avx512 (avx512.c, intrinsics emulated, see immintrin.h)
 * against scan_scalar, the definition, on pieces placed around every 16-byte
 * boundary to 260 and on 50,000 random concatenations (cut anywhere). Exit 1 and
 * the input in hex on the first disagreement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fast.h"

static size_t first_error(const uint8_t *s, size_t n, size_t i) {
    while (i < n) {
        uint32_t cp; size_t len;
        if (s[i] < 0x80) { i++; continue; }
        if (u8_token(s, n, i, &cp, &len)) return i;
        i += len;
    }
    return (size_t)-1;
}

static const char *pieces[] = {
    "a", "\xc2\x80", "\xc3\xa9", "\xd0\x96", "\xdf\xbf", "\xe0\xa0\x80", "\xe4\xb8\xad",
    "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf0\x9f\x98\x80",
    "\xf4\x8f\xbf\xbf", "\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xc2", "\xe0\x80\x80", "\xe0\xa0",
    "\xe1", "\xed\xa0\x80", "\xf0\x80\x80\x80", "\xf0\x90\x80", "\xf4\x90\x80\x80", "\xf5\x80",
    "\xf8\x88\x80\x80\x80", "\xfe", "\xff", "\xfe\x80\xff", "\xc0", "\xc1", "\xf0", "\xf4", "\xf5", "\xe0", "\xed",
};
#define NP (sizeof pieces / sizeof pieces[0])
#define NVALID 13

static unsigned long long rng = 88172645463325252ULL;
static unsigned rnd(unsigned m) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (unsigned)(rng % m); }

static long checks = 0, oks = 0;
static void check(const uint8_t *src, size_t n) {
    uint8_t *s = malloc(n ? n : 1);  /* exact size: ASan sees any over-read */
    memcpy(s, src, n);
    u8stats a = {0, 0}, b = {0, 0};
    size_t ra = 0, rb = 0;
    int ka = scan_scalar(s, n, &a, &ra), kb = scan_avx512(s, n, &b, &rb);
    checks++;
    if (ka != kb || (ka && (a.ncont != b.ncont || a.maxb != b.maxb)) ||
        (!ka && (rb > ra || first_error(s, n, rb) != ra))) {
        printf("MISMATCH n=%zu ka=%d kb=%d ncont %zu/%zu maxb %u/%u restart %zu/%zu\n", n, ka, kb,
               a.ncont, b.ncont, a.maxb, b.maxb, ra, rb);
        for (size_t k = 0; k < n; k++) printf("%02x", s[k]);
        printf("\n");
        exit(1);
    }
    oks += ka;
    free(s);
}

int main(void) {
    static uint8_t buf[4096];
    /* each piece placed at, before and after every 16-byte boundary up to 256, in fillers */
    const char *fill[] = {"a", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80"};
    for (size_t f = 0; f < 4; f++)
        for (size_t p = 0; p < NP; p++)
            for (size_t start = 0; start < 260; start++) {
                size_t n = 0, fl = strlen(fill[f]);
                while (n + fl <= start) { memcpy(buf + n, fill[f], fl); n += fl; }
                while (n < start) buf[n++] = 'x';
                size_t pl = strlen(pieces[p]);
                memcpy(buf + n, pieces[p], pl); n += pl;
                for (size_t tail = 0; tail < 70; tail += 23) {
                    size_t m = n;
                    for (size_t t = 0; t < tail; t++) buf[m++] = (t % 2) ? 'y' : 'z';
                    check(buf, m);
                }
            }
    /* random concatenations of pieces, mostly valid, every length to 400 */
    for (int r = 0; r < 50000; r++) {
        size_t n = 0, want = rnd(400);
        int bad = rnd(3) == 0;
        while (n < want) {
            if (rnd(4) == 0) { size_t k = rnd(70); while (k-- && n < sizeof buf - 8) buf[n++] = 'q'; continue; }
            const char *pc = pieces[bad ? rnd(NP) : rnd(NVALID)];
            size_t pl = strlen(pc); memcpy(buf + n, pc, pl); n += pl;
        }
        if (rnd(8) == 0 && n) buf[rnd((unsigned)n)] = (uint8_t)rnd(256);
        check(buf, n);
        check(buf, n > 0 ? n - 1 : 0); /* cut anywhere */
    }
    printf("ok: %ld inputs, %ld valid, scan_avx512 (emulated) == scan_scalar\n", checks, oks);
    return 0;
}
