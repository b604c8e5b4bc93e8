/* A utf8fuzz exec client in C11: a UTF-8 decoder that cuts errors into maximal
 * subparts (Unicode Standard, chapter 3, Table 3-7 and "U+FFFD Substitution of
 * Maximal Subparts"), speaking the protocol of docs/protocol.md on stdin/stdout.
 *
 *   cc -std=c11 -O2 -Wall -Wextra -o utf8_client utf8_client.c
 *   utf8fuzz diff --decoder exec:./utf8_client "61 F1 80 80 E1 80 C2 62"
 *   utf8fuzz diff --decoder exec:'./utf8_client --stream' "F2 90 80 80 41"
 *
 * It offers the three modes (strict, replace, validate) and names error reasons.
 * It answers history requests (hello flag 64: inputs decoded before the input, by
 * the same decoder, their answers dropped) and placed requests (flag 128: the input
 * decoded as offset and length in a larger buffer of guard bytes).
 * With --stream it also streams (hello flag 32): a stream request's input comes as
 * chunks, which it decodes as a streaming decoder does, holding back a sequence cut
 * off at the end of a chunk until the next one (or the end of the input) completes
 * it. (Opt-in: a client that says flag 32 gets a second decoder per mode.) With
 * --stream-validate only its validator streams (flag 256). Requests are
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
enum { FLAG_STRICT = 1, FLAG_REPLACE = 2, FLAG_REASONS = 4, FLAG_VALIDATE = 8,
       FLAG_STREAM = 32, FLAG_HISTORY = 64, FLAG_PLACED = 128, FLAG_STREAM_VALIDATE = 256 };
/* Or'ed into a request's mode (at most one): its input comes in chunks, after a
 * history, or placed in a larger buffer. */
enum { STREAM = 0x80, HISTORY = 0x40, PLACED = 0x20, MODE_MASK = 0x1F };

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

/* A reply being built: where its frame, status and counts are in out, and the
 * errors, which are written after the code points. */
typedef struct {
    buf_t *out;
    size_t frame_at, status_at, counts_at;
    uint32_t *errs;
    uint32_t ncp, nerr;
    uint8_t mode;
    int done; /* a strict rejection or a validate answer was written */
} reply_t;

static void reply_open(reply_t *r, buf_t *out, uint32_t id, uint8_t mode, size_t n) {
    r->out = out;
    r->mode = mode;
    r->ncp = r->nerr = 0;
    r->done = 0;
    /* at most one code point and one error record per byte */
    reserve(out, 4 + 17 + 16 * n);
    r->frame_at = out->len;
    out->len += 4;
    put32(out, id);
    r->status_at = out->len;
    put8(out, DECODED);
    r->counts_at = out->len;
    if (mode == MODE_VALIDATE) {
        r->errs = NULL;
        return;
    }
    out->len += 8;
    r->errs = malloc(sizeof(uint32_t) * 3 * (n ? n : 1));
    if (!r->errs) die("out of memory");
}

/* One error [start, end): a rejection ends a strict or validate reply. */
static void reply_error(reply_t *r, size_t start, size_t end, int reason) {
    buf_t *out = r->out;
    if (r->mode == MODE_VALIDATE) {
        out->p[r->status_at] = ILL_FORMED;
        r->done = 1;
        return;
    }
    if (r->mode == MODE_STRICT) {
        out->len = r->status_at;
        put8(out, REJECTED);
        put32(out, (uint32_t)start);
        put32(out, (uint32_t)end);
        put32(out, (uint32_t)reason);
        r->done = 1;
        return;
    }
    put32(out, 0xFFFD);
    r->ncp++;
    r->errs[3 * r->nerr] = (uint32_t)start;
    r->errs[3 * r->nerr + 1] = (uint32_t)end;
    r->errs[3 * r->nerr + 2] = (uint32_t)reason;
    r->nerr++;
}

static void reply_close(reply_t *r) {
    buf_t *out = r->out;
    if (!r->done && r->mode != MODE_VALIDATE) {
        for (uint32_t k = 0; k < 3 * r->nerr; k++) put32(out, r->errs[k]);
        set32(out->p + r->counts_at, r->ncp);
        set32(out->p + r->counts_at + 4, r->nerr);
    }
    free(r->errs);
    set32(out->p + r->frame_at, (uint32_t)(out->len - r->frame_at - 4));
}

/* Decode s[0, n), whose first byte is input byte `base`, into the reply. Not
 * `final`: a sequence cut off by the end of s is not an error but held back; the
 * return value is how many bytes were consumed (the rest is held back). */
static size_t decode_part(reply_t *r, const uint8_t *s, size_t n, size_t base, int final) {
    size_t i = 0;
    while (i < n && !r->done) {
        uint32_t cp = 0;
        int reason = 0;
        long got = step(s, n, i, &cp, &reason);
        if (got > 0) {
            if (r->mode != MODE_VALIDATE) {
                put32(r->out, cp);
                r->ncp++;
            }
            i += (size_t)got;
            continue;
        }
        if (reason == TRUNCATED && !final) return i; /* the next chunk may complete it */
        reply_error(r, base + i, base + i + (size_t)(-got), reason);
        i += (size_t)(-got);
    }
    return n;
}

/* The reply to one request (id, mode, input), appended to out as a frame. */
static void answer(buf_t *out, uint32_t id, uint8_t mode, const uint8_t *s, size_t n) {
    reply_t r;
    reply_open(&r, out, id, mode, n);
    decode_part(&r, s, n, 0, 1);
    reply_close(&r);
}

/* The reply to a stream request: k chunks of the given lengths, n bytes in all.
 * Each chunk is decoded after the bytes held back from the one before, which is
 * all a streaming decoder keeps (at most 3 bytes); the end of the input is the
 * final call, with no new bytes. */
static void answer_stream(buf_t *out, uint32_t id, uint8_t mode, const uint8_t *lens,
                          uint32_t k, const uint8_t *s, size_t n) {
    reply_t r;
    reply_open(&r, out, id, mode, n);
    uint8_t *work = malloc(n + 4);
    if (!work) die("out of memory");
    size_t held = 0, at = 0; /* held-back bytes at work[0..held), input offset of next */
    for (uint32_t c = 0; c < k && !r.done; c++) {
        size_t len = get32(lens + 4 * (size_t)c);
        memcpy(work + held, s + at, len);
        size_t total = held + len, base = at - held;
        size_t used = decode_part(&r, work, total, base, 0);
        memmove(work, work + used, total - used);
        held = total - used;
        at += len;
    }
    if (!r.done) decode_part(&r, work, held, at - held, 1); /* final: no more input */
    free(work);
    reply_close(&r);
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

/* The reply to a history request: k inputs of the given lengths at s, each decoded
 * and its reply dropped, then the input, s[sum, n). The decoder keeps no state
 * between calls, so nothing is reset: what a history request asks. */
static void answer_history(buf_t *out, buf_t *scratch, uint32_t id, uint8_t mode,
                           const uint8_t *lens, uint32_t k, const uint8_t *s, size_t n) {
    size_t at = 0;
    for (uint32_t c = 0; c < k; c++) {
        size_t len = get32(lens + 4 * (size_t)c);
        answer(scratch, 0, mode, s + at, len);
        scratch->len = 0;
        at += len;
    }
    answer(out, id, mode, s + at, n - at);
}

/* The reply to a placed request: the input decoded as the n bytes at `offset` of a
 * buffer of `total` bytes, the others all `guard`. */
static void answer_placed(buf_t *out, uint32_t id, uint8_t mode, size_t offset, size_t total,
                          uint8_t guard, const uint8_t *s, size_t n) {
    uint8_t *all = malloc(total ? total : 1);
    if (!all) die("out of memory");
    memset(all, guard, total);
    memcpy(all + offset, s, n);
    answer(out, id, mode, all + offset, n);
    free(all);
}

int main(int argc, char **argv) {
    int streams = argc == 2 && strcmp(argv[1], "--stream") == 0;
    int validator_streams = streams || (argc == 2 && strcmp(argv[1], "--stream-validate") == 0);
    if (argc > 1 && !validator_streams) die("usage: utf8_client [--stream | --stream-validate]");
    static const char name[] = "c-maximal-subpart";
    static const char about[] = "examples/exec/c/utf8_client.c";
    buf_t in = {0}, out = {0}, scratch = {0};
    reserve(&out, 64);
    put32(&out, (uint32_t)(10 + sizeof name - 1 + sizeof about - 1));
    memcpy(out.p + out.len, "U8FZ", 4);
    out.len += 4;
    put8(&out, 1); /* version, u16 */
    put8(&out, 0);
    unsigned flags = FLAG_STRICT | FLAG_REPLACE | FLAG_REASONS | FLAG_VALIDATE | FLAG_HISTORY |
                     FLAG_PLACED | (streams ? FLAG_STREAM : 0) |
                     (validator_streams ? FLAG_STREAM_VALIDATE : 0);
    put8(&out, (uint8_t)flags); /* flags, u16 */
    put8(&out, (uint8_t)(flags >> 8));
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
            uint8_t mode = req[4] & MODE_MASK, kind = req[4] & (uint8_t)~MODE_MASK;
            if (mode != MODE_STRICT && mode != MODE_REPLACE && mode != MODE_VALIDATE)
                die("unknown mode");
            if (kind != 0 && kind != STREAM && kind != HISTORY && kind != PLACED)
                die("a request of two kinds");
            if (kind == STREAM && !streams && !(validator_streams && mode == MODE_VALIDATE))
                die("a stream request without flag 32 (or 256 in validate mode)");
            if (kind == HISTORY) {
                /* u32 K, K u32 lengths, the K history inputs, then the input */
                if (len < 9) die("a history request without its count");
                uint32_t k = get32(req + 5);
                if ((len - 9) / 4 < k) die("a history request shorter than its table");
                const uint8_t *lens = req + 9, *s = lens + 4 * (size_t)k;
                size_t n = len - 9 - 4 * (size_t)k, sum = 0;
                for (uint32_t c = 0; c < k; c++) sum += get32(lens + 4 * (size_t)c);
                if (sum > n) die("a history request shorter than its history");
                answer_history(&out, &scratch, get32(req), mode, lens, k, s, n);
            } else if (kind == PLACED) {
                /* u32 offset, u32 total, u8 guard, then the input */
                if (len < 14) die("a placed request without its placement");
                size_t offset = get32(req + 5), total = get32(req + 9), n = len - 14;
                if (offset > total || total - offset < n) die("an input outside its buffer");
                answer_placed(&out, get32(req), mode, offset, total, req[13], req + 14, n);
            } else if (kind == STREAM) {
                /* u32 K, K u32 chunk lengths, then the input */
                if (len < 9) die("a stream request without its chunk count");
                uint32_t k = get32(req + 5);
                if ((len - 9) / 4 < k) die("a stream request shorter than its chunk table");
                const uint8_t *lens = req + 9, *s = lens + 4 * (size_t)k;
                size_t n = len - 9 - 4 * (size_t)k, sum = 0;
                for (uint32_t c = 0; c < k; c++) sum += get32(lens + 4 * (size_t)c);
                if (sum != n) die("a stream request whose chunks are not its input");
                answer_stream(&out, get32(req), mode, lens, k, s, n);
            } else {
                answer(&out, get32(req), mode, req + 5, len - 5);
            }
            pos += 4 + (size_t)len;
        }
        memmove(in.p, in.p + pos, in.len - pos);
        in.len -= pos;
        write_all(out.p, out.len);
        out.len = 0;
    }
}
