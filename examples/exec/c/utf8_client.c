/* A utf8fuzz exec client in C11: a UTF-8 decoder that cuts errors into maximal
 * subparts (Unicode Standard, chapter 3, Table 3-7 and "U+FFFD Substitution of
 * Maximal Subparts"), speaking the protocol of docs/protocol.md on stdin/stdout.
 *
 *   cc -std=c11 -O2 -Wall -Wextra -o utf8_client utf8_client.c
 *   utf8fuzz diff --decoder exec:./utf8_client "61 F1 80 80 E1 80 C2 62"
 *
 * It offers the three modes (strict, replace, validate) and names error reasons. Requests are
 * read in whatever chunks the pipe gives, every whole request in a chunk is
 * answered, and the answers go out in one write before the next read: the
 * harness may pipeline many requests, and the client never waits for input while
 * holding answers back.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MODE_STRICT = 1, MODE_REPLACE = 2, MODE_VALIDATE = 3 };
enum { DECODED = 0, REJECTED = 1 };
enum { WELL_FORMED = 0, ILL_FORMED = 1 }; /* the status of a validate-mode reply */
enum { ILLEGAL = 1, TRUNCATED = 2 };
enum { FLAG_STRICT = 1, FLAG_REPLACE = 2, FLAG_REASONS = 4, FLAG_VALIDATE = 8 };

typedef struct {
    uint8_t *p;
    size_t len, cap;
} buf_t;

static void die(const char *what) {
    fprintf(stderr, "utf8_client: %s\n", what);
    exit(2);
}

static void reserve(buf_t *b, size_t more) {
    if (b->cap - b->len >= more) return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2) die("out of memory");
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) die("out of memory");
    b->p = p;
    b->cap = cap;
}

static void put8(buf_t *b, uint8_t v) { b->p[b->len++] = v; }

static void put32(buf_t *b, uint32_t v) {
    for (int k = 0; k < 4; k++) b->p[b->len++] = (uint8_t)(v >> (8 * k));
}

static void set32(uint8_t *p, uint32_t v) {
    for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One step of the decoder at s[i]: a scalar value (*cp, return the length) or an
 * error (return minus its length, *reason set). Table 3-7: the second byte's range
 * depends on the first; the others are 80..BF. The error is the maximal subpart:
 * the longest prefix of a well-formed sequence, at least one byte. */
static long step(const uint8_t *s, size_t n, size_t i, uint32_t *cp, int *reason) {
    uint8_t b = s[i];
    int need;
    uint8_t lo = 0x80, hi = 0xBF;
    uint32_t v;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
        need = 1;
        v = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        need = 2;
        v = b & 0x0F;
        if (b == 0xE0) lo = 0xA0;      /* no overlong 3-byte forms */
        else if (b == 0xED) hi = 0x9F; /* no surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 3;
        v = b & 0x07;
        if (b == 0xF0) lo = 0x90;      /* no overlong 4-byte forms */
        else if (b == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    } else { /* 80..C1, F5..FF begin no well-formed sequence */
        *reason = ILLEGAL;
        return -1;
    }
    for (int k = 1; k <= need; k++) {
        if (i + (size_t)k >= n) {
            *reason = TRUNCATED;
            return -(long)k;
        }
        uint8_t c = s[i + (size_t)k];
        if (c < lo || c > hi) {
            *reason = ILLEGAL;
            return -(long)k;
        }
        v = v << 6 | (c & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    *cp = v;
    return need + 1;
}

/* The reply to a validate-mode request: its id and whether the input is
 * well-formed, nothing else (5 bytes). */
static void validate(buf_t *out, uint32_t id, const uint8_t *s, size_t n) {
    uint8_t status = WELL_FORMED;
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        int reason = 0;
        long got = step(s, n, i, &cp, &reason);
        if (got < 0) {
            status = ILL_FORMED;
            break;
        }
        i += (size_t)got;
    }
    reserve(out, 4 + 5);
    put32(out, 5);
    put32(out, id);
    put8(out, status);
}

/* The reply to one request (id, mode, input), appended to out as a frame. */
static void answer(buf_t *out, uint32_t id, uint8_t mode, const uint8_t *s, size_t n) {
    if (mode == MODE_VALIDATE) {
        validate(out, id, s, n);
        return;
    }
    /* at most one code point and one error record per byte */
    reserve(out, 4 + 13 + 16 * n);
    size_t frame_at = out->len;
    out->len += 4;
    put32(out, id);
    size_t status_at = out->len;
    put8(out, DECODED);
    size_t counts_at = out->len;
    out->len += 8;
    /* errors are written after the code points: collect them first */
    uint32_t *errs = malloc(sizeof(uint32_t) * 3 * (n ? n : 1));
    if (!errs) die("out of memory");
    uint32_t ncp = 0, nerr = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        int reason = 0;
        long got = step(s, n, i, &cp, &reason);
        if (got > 0) {
            put32(out, cp);
            ncp++;
            i += (size_t)got;
            continue;
        }
        size_t end = i + (size_t)(-got);
        if (mode == MODE_STRICT) {
            out->len = status_at;
            put8(out, REJECTED);
            put32(out, (uint32_t)i);
            put32(out, (uint32_t)end);
            put32(out, (uint32_t)reason);
            free(errs);
            set32(out->p + frame_at, (uint32_t)(out->len - frame_at - 4));
            return;
        }
        put32(out, 0xFFFD);
        ncp++;
        errs[3 * nerr] = (uint32_t)i;
        errs[3 * nerr + 1] = (uint32_t)end;
        errs[3 * nerr + 2] = (uint32_t)reason;
        nerr++;
        i = end;
    }
    for (uint32_t k = 0; k < 3 * nerr; k++) put32(out, errs[k]);
    free(errs);
    set32(out->p + counts_at, ncp);
    set32(out->p + counts_at + 4, nerr);
    set32(out->p + frame_at, (uint32_t)(out->len - frame_at - 4));
}

static void write_all(const uint8_t *p, size_t n) {
    while (n) {
        ssize_t w = write(1, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            exit(0); /* the harness went away */
        }
        p += w;
        n -= (size_t)w;
    }
}

int main(void) {
    static const char name[] = "c-maximal-subpart";
    static const char about[] = "examples/exec/c/utf8_client.c";
    buf_t in = {0}, out = {0};
    reserve(&out, 64);
    put32(&out, (uint32_t)(10 + sizeof name - 1 + sizeof about - 1));
    memcpy(out.p + out.len, "U8FZ", 4);
    out.len += 4;
    put8(&out, 1); /* version, u16 */
    put8(&out, 0);
    put8(&out, FLAG_STRICT | FLAG_REPLACE | FLAG_REASONS | FLAG_VALIDATE);
    put8(&out, 0);
    put8(&out, (uint8_t)(sizeof name - 1)); /* name length, u16 */
    put8(&out, 0);
    memcpy(out.p + out.len, name, sizeof name - 1);
    out.len += sizeof name - 1;
    memcpy(out.p + out.len, about, sizeof about - 1);
    out.len += sizeof about - 1;
    write_all(out.p, out.len);
    out.len = 0;

    for (;;) {
        reserve(&in, 1 << 16);
        ssize_t r = read(0, in.p + in.len, in.cap - in.len);
        if (r == 0) return 0; /* end of requests */
        if (r < 0) {
            if (errno == EINTR) continue;
            die("cannot read stdin");
        }
        in.len += (size_t)r;
        size_t pos = 0;
        while (in.len - pos >= 4) {
            uint32_t len = get32(in.p + pos);
            if (in.len - pos - 4 < len) {
                reserve(&in, (size_t)len + 4 - (in.len - pos)); /* room for the rest */
                break;
            }
            if (len < 5) die("a request shorter than its id and mode");
            const uint8_t *req = in.p + pos + 4;
            uint8_t mode = req[4];
            if (mode != MODE_STRICT && mode != MODE_REPLACE && mode != MODE_VALIDATE)
                die("unknown mode");
            answer(&out, get32(req), mode, req + 5, len - 5);
            pos += 4 + (size_t)len;
        }
        memmove(in.p, in.p + pos, in.len - pos);
        in.len -= pos;
        write_all(out.p, out.len);
        out.len = 0;
    }
}
