/* utf8fuzz.profiles._walk: the reference walk (utf8fuzz.policies.decode_tokens) in C.
 *
 * This is an interpreter of a profile's compiled table, not a decoder of its own:
 * a Walker is handed the very DFA that profiles/table.py built from the spec's rows
 * (trans, accept, live_after, single, the reserved and recognized leads, each row's
 * offset and value function) and walks it exactly as decode_tokens does, statement
 * for statement. walk.py documents the design; tests/profiles/test_walk.py keeps
 * the two equal.
 *
 * A walk records compact arrays only (one tok_t per token). Everything a caller
 * asks for - the Token tuple, each view, each view as a str, the coverage features
 * - is built from them on first use and kept.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packed_tokens.h"
#include "../small_tuples.h"

/* A token's kind and reason, numbered as in the packed form. */
enum { K_CHAR = PK_CHAR, K_ERROR = PK_ERROR, K_RESERVED = PK_RESERVED };
enum { R_NONE = PR_NONE, R_ILLEGAL = PR_ILLEGAL, R_TRUNCATED = PR_TRUNCATED };
enum { P_MAXIMAL, P_SEQUENCE, P_BYTE };

/* Interned names, made once at import. */
static PyObject *S_CHAR, *S_ERROR, *S_RESERVED, *S_ILLEGAL, *S_TRUNCATED;
static PyObject *S_TEXT, *S_VIEW;
static PyObject *S_TOKENS, *S_SPANS, *S_STRICT, *S_REASON, *S_REPLACE, *S_IGNORE, *S_ESCAPE;

/* Set by configure(): the Token NamedTuple class, and the function that makes an
 * Outcome (outcome.py is the one place that knows how). */
static PyTypeObject *g_token_type = NULL;
static PyObject *g_make_outcome = NULL;

#define REPLACEMENT 0xFFFD
#define MAX_UNICODE 0x10FFFF
/* bits_value distributes payload bits for rows of up to 7 bytes (RFC 2279's lead
 * byte carries 7 - n bits; at 8 the Python raises). Longer rows need a value_fn. */
#define MAX_BITS_ROW 7

/* ---------------------------------------------------------------- Walker ---- */

typedef struct {
    PyObject_HEAD
    Py_ssize_t nstates;
    int32_t *trans;     /* nstates * 256: next state or -1 (DEAD) */
    int32_t *accept;    /* nstates: row completed in the state, or -1 */
    uint8_t *live;      /* nstates: live_after */
    int64_t single[256];
    int32_t single_row[256]; /* the row a lone byte completes, for coverage */
    uint8_t reserved[256], recognized[256];
    int32_t start;
    Py_ssize_t max_length;
    Py_ssize_t nrows;
    int64_t *offset;    /* per row */
    PyObject **value_fn; /* per row: the row's value function, or NULL (bits + offset) */
    uint8_t *utf16_pair; /* per row: valued as _pairs.pair_value, in C (see pair_value) */
    int policy;
    vectorcallfunc vectorcall;
    /* Feature ids as int objects, made once per walker (see feature_int), each with
     * the counter cover_owner maps it to, once cover has looked it up (-1 before). */
    struct id_slot { long id; PyObject *obj; Py_ssize_t counter; } *ids;
    size_t ids_cap, ids_used; /* cap a power of two, or 0 */
    PyObject *cover_owner; /* the counters dict the slots' counters come from */
} Walker;

/* A token as the walk records it. end is kept although tokens tile (end is the
 * next start): views would otherwise need a case for the last one. */
typedef struct {
    int64_t value;
    Py_ssize_t start, end;
    int32_t row;
    uint8_t kind, reason;
} tok_t;

enum { C_TOKENS, C_SPANS, C_STRICT, C_REASON, C_REPLACE, C_IGNORE, C_ESCAPE,
       C_TEXT_REPLACE, C_TEXT_IGNORE, C_TEXT_ESCAPE, C_FEATURES, C_PACKED, C_COUNT };

typedef struct {
    PyObject_VAR_HEAD
    Walker *walker;
    PyObject *data;      /* bytes */
    Py_ssize_t ntok;
    Py_ssize_t nerr;     /* tokens that are not chars */
    Py_ssize_t first_err; /* index of the first one, or -1 */
    int64_t max_value;   /* largest char value */
    PyObject *cache[C_COUNT];
    tok_t toks[1];
} Walk;

static PyTypeObject WalkerType;
static PyTypeObject WalkType;
static PyObject *walker_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames);

static void walker_dealloc(Walker *w) {
    PyMem_Free(w->trans);
    PyMem_Free(w->accept);
    PyMem_Free(w->live);
    PyMem_Free(w->offset);
    PyMem_Free(w->utf16_pair);
    for (size_t k = 0; k < w->ids_cap; k++) Py_XDECREF(w->ids[k].obj);
    PyMem_Free(w->ids);
    Py_XDECREF(w->cover_owner);
    if (w->value_fn) {
        for (Py_ssize_t r = 0; r < w->nrows; r++) Py_XDECREF(w->value_fn[r]);
        PyMem_Free(w->value_fn);
    }
    Py_TYPE(w)->tp_free((PyObject *)w);
}

/* A set of byte values (any iterable of ints 0..255) into a 256-entry mask. */
static int byte_mask(PyObject *obj, uint8_t mask[256], const char *what) {
    memset(mask, 0, 256);
    PyObject *it = PyObject_GetIter(obj);
    if (!it) return -1;
    PyObject *x;
    while ((x = PyIter_Next(it))) {
        long b = PyLong_AsLong(x);
        Py_DECREF(x);
        if (b == -1 && PyErr_Occurred()) break;
        if (b < 0 || b > 255) {
            PyErr_Format(PyExc_ValueError, "%s: %ld is not a byte", what, b);
            break;
        }
        mask[b] = 1;
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

static int64_t as_int64(PyObject *x, int *err) {
    long long v = PyLong_AsLongLong(x);
    if (v == -1 && PyErr_Occurred()) *err = 1;
    return (int64_t)v;
}

/* Walker(trans, accept, live_after, single, start, reserved_leads, recognized_leads,
 *        max_length, rows, policy) where rows is a sequence of (length, offset, value):
 *        value None for bit concatenation plus offset, "utf16-pair" for the row of
 *        profiles/_pairs.py, or the row's value function. walk.py extracts these
 *        from a Profile. */
static PyObject *walker_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *trans, *accept, *live, *single, *reserved, *recognized, *rows;
    int start, policy;
    Py_ssize_t max_length;
    static char *kwlist[] = {"trans", "accept", "live_after", "single", "start",
                             "reserved_leads", "recognized_leads", "max_length", "rows",
                             "policy", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOiOOnOi:Walker", kwlist, &trans, &accept,
                                     &live, &single, &start, &reserved, &recognized,
                                     &max_length, &rows, &policy))
        return NULL;
    if (policy < P_MAXIMAL || policy > P_BYTE) {
        PyErr_SetString(PyExc_ValueError, "policy must be 0, 1 or 2");
        return NULL;
    }
    Walker *w = (Walker *)type->tp_alloc(type, 0);
    if (!w) return NULL;
    w->vectorcall = walker_vectorcall;
    w->policy = policy;
    w->max_length = max_length;
    PyObject *tr = NULL, *ac = NULL, *lv = NULL, *sg = NULL, *rw = NULL;
    int err = 0;
    tr = PySequence_Fast(trans, "trans must be a sequence");
    ac = tr ? PySequence_Fast(accept, "accept must be a sequence") : NULL;
    lv = ac ? PySequence_Fast(live, "live_after must be a sequence") : NULL;
    sg = lv ? PySequence_Fast(single, "single must be a sequence") : NULL;
    rw = sg ? PySequence_Fast(rows, "rows must be a sequence") : NULL;
    if (!rw) goto fail;
    Py_ssize_t ns = PySequence_Fast_GET_SIZE(tr);
    w->nstates = ns;
    w->nrows = PySequence_Fast_GET_SIZE(rw);
    if (ns < 1 || ns > INT32_MAX / 2 || PySequence_Fast_GET_SIZE(ac) != ns ||
        PySequence_Fast_GET_SIZE(lv) != ns || PySequence_Fast_GET_SIZE(sg) != 256 ||
        start < 0 || start >= ns || max_length < 1 || max_length > 127) {
        PyErr_SetString(PyExc_ValueError, "inconsistent DFA tables");
        goto fail;
    }
    w->start = start;
    if (byte_mask(reserved, w->reserved, "reserved_leads") < 0 ||
        byte_mask(recognized, w->recognized, "recognized_leads") < 0)
        goto fail;
    w->trans = PyMem_Calloc((size_t)ns * 256, sizeof(int32_t));
    w->accept = PyMem_Calloc((size_t)ns, sizeof(int32_t));
    w->live = PyMem_Calloc((size_t)ns, 1);
    w->offset = PyMem_Calloc((size_t)w->nrows + 1, sizeof(int64_t));
    w->value_fn = PyMem_Calloc((size_t)w->nrows + 1, sizeof(PyObject *));
    w->utf16_pair = PyMem_Calloc((size_t)w->nrows + 1, 1);
    if (!w->trans || !w->accept || !w->live || !w->offset || !w->value_fn || !w->utf16_pair) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t s = 0; s < ns; s++) {
        PyObject *rowt = PySequence_Fast(PySequence_Fast_GET_ITEM(tr, s), "a trans row");
        if (!rowt) goto fail;
        if (PySequence_Fast_GET_SIZE(rowt) != 256) {
            Py_DECREF(rowt);
            PyErr_SetString(PyExc_ValueError, "a trans row has 256 entries");
            goto fail;
        }
        for (int b = 0; b < 256 && !err; b++) {
            int64_t t = as_int64(PySequence_Fast_GET_ITEM(rowt, b), &err);
            if (!err && (t < -1 || t >= ns)) {
                PyErr_SetString(PyExc_ValueError, "a transition leaves the DFA");
                err = 1;
            }
            w->trans[s * 256 + b] = (int32_t)t;
        }
        Py_DECREF(rowt);
        if (err) goto fail;
        int64_t a = as_int64(PySequence_Fast_GET_ITEM(ac, s), &err);
        if (!err && (a < -1 || a >= w->nrows)) {
            PyErr_SetString(PyExc_ValueError, "accept names no row");
            err = 1;
        }
        w->accept[s] = (int32_t)a;
        int t = PyObject_IsTrue(PySequence_Fast_GET_ITEM(lv, s));
        if (t < 0) err = 1;
        w->live[s] = (uint8_t)(t > 0);
        if (err) goto fail;
    }
    for (int b = 0; b < 256 && !err; b++) {
        w->single[b] = as_int64(PySequence_Fast_GET_ITEM(sg, b), &err);
        int32_t s = w->trans[w->start * 256 + b];
        w->single_row[b] = s >= 0 ? w->accept[s] : -1;
    }
    if (err) goto fail;
    for (Py_ssize_t r = 0; r < w->nrows; r++) {
        PyObject *spec = PySequence_Fast_GET_ITEM(rw, r);
        PyObject *len_o, *off_o, *fn;
        if (!PyArg_ParseTuple(spec, "OOO:row", &len_o, &off_o, &fn)) goto fail;
        int64_t len = as_int64(len_o, &err);
        if (!err) w->offset[r] = as_int64(off_o, &err);
        if (err) goto fail;
        if (PyUnicode_Check(fn) && PyUnicode_CompareWithASCIIString(fn, "utf16-pair") == 0) {
            if (len != 6) {
                PyErr_SetString(PyExc_ValueError, "a utf16-pair row is 6 bytes");
                goto fail;
            }
            w->utf16_pair[r] = 1;
        } else if (fn != Py_None) {
            if (!PyCallable_Check(fn)) {
                PyErr_SetString(PyExc_TypeError, "a row's value is None, 'utf16-pair' or callable");
                goto fail;
            }
            Py_INCREF(fn);
            w->value_fn[r] = fn;
        } else if (len < 1 || len > MAX_BITS_ROW || w->offset[r] > INT64_MAX / 2 ||
                   w->offset[r] < INT64_MIN / 2) {
            PyErr_SetString(PyExc_ValueError,
                            "a row without value_fn must be 1..7 bytes with an int64 offset");
            goto fail;
        }
    }
    Py_DECREF(tr); Py_DECREF(ac); Py_DECREF(lv); Py_DECREF(sg); Py_DECREF(rw);
    return (PyObject *)w;
fail:
    Py_XDECREF(tr); Py_XDECREF(ac); Py_XDECREF(lv); Py_XDECREF(sg); Py_XDECREF(rw);
    Py_DECREF(w);
    return NULL;
}

/* table.bits_value (RFC 2279 section 2, decoding), for 1 <= n <= 7. */
static int64_t bits_value(const unsigned char *seq, Py_ssize_t n) {
    if (n == 1) return seq[0];
    int64_t v = seq[0] & ((1 << (7 - n)) - 1);
    for (Py_ssize_t k = 1; k < n; k++) v = (v << 6) | (seq[k] & 0x3F);
    return v;
}

/* _pairs.pair_value: the supplementary code point a UTF-16 surrogate pair stands
 * for (Unicode section 3.9, D91), from the two three-byte halves. */
static int64_t pair_value(const unsigned char *seq) {
    int64_t hi = bits_value(seq, 3), lo = bits_value(seq + 3, 3);
    return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
}

/* Profile.is_prefix: is seq a proper, non-empty prefix of a well-formed sequence? */
static int is_prefix(const Walker *w, const unsigned char *seq, Py_ssize_t n) {
    int32_t s = w->start;
    for (Py_ssize_t k = 0; k < n; k++) {
        s = w->trans[s * 256 + seq[k]];
        if (s < 0) return 0;
    }
    return n > 0 && w->live[s];
}

/* structural_length (RFC 2279 section 2): the leading 1 bits of a lead, if 2..6. */
static Py_ssize_t structural_length(unsigned b) {
    int ones = 0;
    while (ones < 8 && (b & (0x80u >> ones))) ones++;
    return (ones >= 2 && ones <= 6) ? ones : 1;
}

/* decode_tokens, statement for statement (policies.py). */
static int walk_run(Walk *r, const Walker *w, const unsigned char *d, Py_ssize_t n) {
    const int32_t *trans = w->trans, *accept = w->accept;
    const uint8_t *live = w->live;
    Py_ssize_t near_end = n - w->max_length;
    Py_ssize_t i = 0, k = 0;
    tok_t *toks = r->toks;
    int64_t max_value = -1;
    r->nerr = 0;
    r->first_err = -1;
    while (i < n) {
        unsigned b = d[i];
        tok_t *t = &toks[k++];
        t->start = i;
        t->reason = R_NONE;
        int64_t cp = w->single[b];
        if (cp >= 0) { /* a byte that is a whole sequence alone */
            t->kind = K_CHAR;
            t->value = cp;
            t->row = w->single_row[b];
            t->end = ++i;
            if (cp > max_value) max_value = cp;
            continue;
        }
        if (w->reserved[b]) {
            Py_ssize_t j = i + 1;
            while (j < n && !w->recognized[d[j]]) j++;
            t->kind = K_RESERVED;
            t->value = -1;
            t->row = -1;
            t->end = i = j;
            if (r->first_err < 0) r->first_err = k - 1;
            r->nerr++;
            continue;
        }
        /* Walk the DFA from i: the longest well-formed sequence, and how far the
         * bytes stay a prefix of one. */
        int32_t s = w->start;
        Py_ssize_t j = i, best = -1;
        int32_t best_row = -1;
        while (j < n) {
            s = trans[s * 256 + d[j]];
            if (s < 0) break;
            j++;
            if (accept[s] >= 0) {
                best = j;
                best_row = accept[s];
            }
            if (!live[s]) break;
        }
        if (best >= 0) {
            PyObject *fn = w->value_fn[best_row];
            if (w->utf16_pair[best_row]) {
                cp = pair_value(d + i);
            } else if (fn) {
                PyObject *seq = PyBytes_FromStringAndSize((const char *)d + i, best - i);
                if (!seq) return -1;
                PyObject *v = PyObject_CallOneArg(fn, seq);
                Py_DECREF(seq);
                if (!v) return -1;
                int err = 0;
                cp = as_int64(v, &err);
                Py_DECREF(v);
                if (err) return -1;
            } else {
                cp = bits_value(d + i, best - i) + w->offset[best_row];
            }
            t->kind = K_CHAR;
            t->value = cp;
            t->row = best_row;
            t->end = i = best;
            if (cp > max_value) max_value = cp;
            continue;
        }
        Py_ssize_t end;
        if (w->policy == P_MAXIMAL) {
            end = j > i + 1 ? j : i + 1;
        } else if (w->policy == P_BYTE) {
            end = i + 1;
        } else {
            end = i + 1;
            Py_ssize_t want = structural_length(b);
            while (end < n && end - i < want && d[end] >= 0x80 && d[end] <= 0xBF) end++;
        }
        t->kind = K_ERROR;
        t->value = -1;
        t->row = -1;
        t->reason = (i > near_end && is_prefix(w, d + i, n - i)) ? R_TRUNCATED : R_ILLEGAL;
        t->end = i = end;
        if (r->first_err < 0) r->first_err = k - 1;
        r->nerr++;
    }
    r->ntok = k;
    r->max_value = max_value;
    return 0;
}

/* w(data): called once per reference per fuzz input, so by vectorcall. */
static PyObject *walker_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    Walker *w = (Walker *)self;
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "a walker takes one argument, the input");
        return NULL;
    }
    PyObject *arg = args[0];
    PyObject *data;
    if (PyBytes_CheckExact(arg)) {
        Py_INCREF(arg);
        data = arg;
    } else {
        data = PyBytes_FromObject(arg);
        if (!data) return NULL;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    Walk *r = PyObject_NewVar(Walk, &WalkType, n ? n : 1);
    if (!r) {
        Py_DECREF(data);
        return NULL;
    }
    Py_INCREF(w);
    r->walker = w;
    r->data = data;
    r->ntok = 0;
    for (int c = 0; c < C_COUNT; c++) r->cache[c] = NULL;
    if (walk_run(r, w, (const unsigned char *)PyBytes_AS_STRING(data), n) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "utf8fuzz.profiles._walk.Walker",
    .tp_basicsize = sizeof(Walker),
    .tp_dealloc = (destructor)walker_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Walker, vectorcall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A profile's compiled table under one policy; call it on bytes for a Walk.",
    .tp_new = walker_new,
};

/* ------------------------------------------------------------------ Walk ---- */

static void walk_dealloc(Walk *r) {
    for (int c = 0; c < C_COUNT; c++) Py_XDECREF(r->cache[c]);
    Py_XDECREF(r->data);
    Py_XDECREF(r->walker);
    PyObject_Free(r);
}

static PyObject *new_pair(Py_ssize_t a, Py_ssize_t b) { return ssize_tuple(a, b, NULL); }

/* (start, end) of a one-byte error below offset 64, shared as the tokens are
 * (make_tokens): most spans of a fuzz input are these. */
static PyObject *g_byte_span[64];

static PyObject *pair(Py_ssize_t a, Py_ssize_t b) {
    if (a >= 0 && a < 64 && b == a + 1) {
        PyObject **slot = &g_byte_span[a];
        if (!*slot && !(*slot = new_pair(a, b))) return NULL;
        Py_INCREF(*slot);
        return *slot;
    }
    return new_pair(a, b);
}

static PyObject *new_token(PyTypeObject *tt, const tok_t *t) {
    /* A NamedTuple instance is a tuple of its fields (no __dict__: checked by
     * configure), so its own allocator and the tuple slots make one. */
    PyObject *tok = tt->tp_alloc(tt, 5);
    if (!tok) return NULL;
    PyObject *kind, *value, *reason;
    if (t->kind == K_CHAR) {
        kind = S_CHAR;
        value = PyLong_FromLongLong(t->value);
        if (!value) {
            Py_DECREF(tok);
            return NULL;
        }
        reason = Py_None;
    } else {
        kind = t->kind == K_ERROR ? S_ERROR : S_RESERVED;
        value = Py_None;
        Py_INCREF(value);
        reason = t->reason == R_TRUNCATED ? S_TRUNCATED
               : t->reason == R_ILLEGAL ? S_ILLEGAL : Py_None;
    }
    Py_INCREF(kind);
    Py_INCREF(reason);
    PyTuple_SET_ITEM(tok, 0, kind);
    PyTuple_SET_ITEM(tok, 1, value);
    PyTuple_SET_ITEM(tok, 4, reason);
    PyObject *s = PyLong_FromSsize_t(t->start), *e = s ? PyLong_FromSsize_t(t->end) : NULL;
    if (!e) {
        Py_XDECREF(s);
        Py_DECREF(tok);
        return NULL;
    }
    PyTuple_SET_ITEM(tok, 2, s);
    PyTuple_SET_ITEM(tok, 3, e);
    return tok;
}

/* Tokens are immutable values, so the commonest ones are made once and shared:
 * one-byte characters below U+0100 and one-byte errors, at offsets below 64 (the
 * fuzz inputs' length). Building a fresh Token is most of what r.tokens costs. */
#define SHARED_POS 64
static PyObject *g_char_tok[SHARED_POS][256];
static PyObject *g_err_tok[SHARED_POS][2];

static void clear_shared(void) {
    for (int p = 0; p < SHARED_POS; p++) {
        for (int v = 0; v < 256; v++) Py_CLEAR(g_char_tok[p][v]);
        Py_CLEAR(g_err_tok[p][0]);
        Py_CLEAR(g_err_tok[p][1]);
    }
}

static PyObject *make_tokens(Walk *r) {
    PyTypeObject *tt = g_token_type;
    if (!tt) {
        PyErr_SetString(PyExc_RuntimeError, "utf8fuzz.profiles._walk is not configured");
        return NULL;
    }
    PyObject *out = PyTuple_New(r->ntok);
    if (!out) return NULL;
    for (Py_ssize_t k = 0; k < r->ntok; k++) {
        const tok_t *t = &r->toks[k];
        PyObject **slot = NULL;
        if (t->start < SHARED_POS && t->end == t->start + 1) {
            if (t->kind == K_CHAR && t->value >= 0 && t->value < 256)
                slot = &g_char_tok[t->start][t->value];
            else if (t->kind == K_ERROR)
                slot = &g_err_tok[t->start][t->reason == R_TRUNCATED];
        }
        PyObject *tok;
        if (slot) {
            if (!*slot && !(*slot = new_token(tt, t))) goto fail;
            tok = *slot;
            Py_INCREF(tok);
        } else if (!(tok = new_token(tt, t))) {
            goto fail;
        }
        PyTuple_SET_ITEM(out, k, tok);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *make_spans(Walk *r, int first_only) {
    if (first_only) {
        if (r->first_err < 0) Py_RETURN_NONE;
        const tok_t *t = &r->toks[r->first_err];
        return pair(t->start, t->end);
    }
    PyObject *out = PyTuple_New(r->nerr);
    if (!out) return NULL;
    Py_ssize_t m = 0;
    for (Py_ssize_t k = 0; k < r->ntok; k++) {
        const tok_t *t = &r->toks[k];
        if (t->kind == K_CHAR) continue;
        PyObject *p = pair(t->start, t->end);
        if (!p) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, m++, p);
    }
    return out;
}

static PyObject *make_reason(Walk *r) {
    if (r->first_err < 0) Py_RETURN_NONE;
    const tok_t *t = &r->toks[r->first_err];
    PyObject *s = t->kind == K_RESERVED ? S_RESERVED
                : t->reason == R_TRUNCATED ? S_TRUNCATED
                : t->reason == R_ILLEGAL ? S_ILLEGAL : Py_None;
    Py_INCREF(s);
    return s;
}

enum { V_REPLACE, V_IGNORE, V_ESCAPE };

static Py_ssize_t text_length(Walk *r, int how) {
    if (how == V_REPLACE) return r->ntok;
    if (how == V_IGNORE) return r->ntok - r->nerr;
    Py_ssize_t len = 0;
    for (Py_ssize_t k = 0; k < r->ntok; k++) {
        const tok_t *t = &r->toks[k];
        len += t->kind == K_CHAR ? 1 : t->end - t->start;
    }
    return len;
}

/* Calls emit(ctx, index, code point) for each code point of the view, in order. */
#define FOR_EACH_CP(r, how, EMIT)                                                  \
    do {                                                                           \
        const unsigned char *d_ = (const unsigned char *)PyBytes_AS_STRING((r)->data); \
        Py_ssize_t m_ = 0;                                                         \
        for (Py_ssize_t k_ = 0; k_ < (r)->ntok; k_++) {                             \
            const tok_t *t_ = &(r)->toks[k_];                                      \
            if (t_->kind == K_CHAR) {                                              \
                int64_t cp_ = t_->value;                                           \
                EMIT;                                                              \
                m_++;                                                              \
            } else if ((how) == V_REPLACE) {                                       \
                int64_t cp_ = REPLACEMENT;                                         \
                EMIT;                                                              \
                m_++;                                                              \
            } else if ((how) == V_ESCAPE) {                                        \
                for (Py_ssize_t b_ = t_->start; b_ < t_->end; b_++) {               \
                    int64_t cp_ = 0xDC00 + d_[b_];                                 \
                    EMIT;                                                          \
                    m_++;                                                          \
                }                                                                  \
            }                                                                      \
        }                                                                          \
    } while (0)

static PyObject *make_cps(Walk *r, int how) {
    PyObject *out = PyTuple_New(text_length(r, how));
    if (!out) return NULL;
    FOR_EACH_CP(r, how, {
        PyObject *v = PyLong_FromLongLong(cp_);
        if (!v) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, m_, v);
    });
    return out;
}

static PyObject *make_text(Walk *r, int how) {
    if (r->max_value > MAX_UNICODE) Py_RETURN_NONE;
    /* The widest code point decides the str's kind (PEP 393). */
    Py_UCS4 maxchar = r->max_value > 0 ? (Py_UCS4)r->max_value : 0;
    if (r->nerr && how == V_REPLACE && maxchar < REPLACEMENT) maxchar = REPLACEMENT;
    if (r->nerr && how == V_ESCAPE && maxchar < 0xDCFF) maxchar = 0xDCFF;
    PyObject *s = PyUnicode_New(text_length(r, how), maxchar);
    if (!s) return NULL;
    int kind = PyUnicode_KIND(s);
    void *buf = PyUnicode_DATA(s);
    FOR_EACH_CP(r, how, { PyUnicode_WRITE(kind, buf, m_, (Py_UCS4)cp_); });
    return s;
}

/* ---- coverage features (engine/coverage.py's keys; walk.feature_key decodes) ---- */

#define F_CHAR 0
#define F_ERROR 1
#define F_RESERVED 2
#define F_NEXT 3
#define F_BLOCK 4
#define F_SHIFT 20
#define COARSE_START 254
#define COARSE_END 255

/* ("char", n) -> n; ("error", min(n, 7), reason) -> 128 + 2 * (len - 1) + truncated;
 * ("reserved", min(n, 4)) -> 144 + len. */
static int coarse_of(const tok_t *t) {
    Py_ssize_t n = t->end - t->start;
    if (t->kind == K_CHAR) return (int)n; /* <= max_length <= 127 */
    if (t->kind == K_ERROR)
        return 128 + 2 * (int)((n < 7 ? n : 7) - 1) + (t->reason == R_TRUNCATED);
    return 144 + (int)(n < 4 ? n : 4);
}

/* Adds id to the sorted, unique ids[0..*u): a token's keys mostly repeat earlier
 * ones (a run of ASCII is one key over and over), so a binary search finds most,
 * and the few new ones are inserted in place; no sort at the end. */
static void add_id(long *ids, Py_ssize_t *u, long id) {
    Py_ssize_t lo = 0, hi = *u;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < *u && ids[lo] == id) return;
    memmove(ids + lo + 1, ids + lo, sizeof(long) * (size_t)(*u - lo));
    ids[lo] = id;
    (*u)++;
}

/* The int object for a feature id, shared by every walk of this walker: no
 * allocation per id, and the coverage dict (whose keys are these very objects,
 * handed back by cover) finds them by identity, without comparing ints. A
 * profile has a few thousand ids at most (rows, error shapes by lead byte,
 * pairs of coarse kinds), so the table stays small. Open addressing, half full
 * at most. Returns a borrowed reference. */
static size_t id_hash(long id) { /* Fibonacci hashing: the product's high bits */
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32);
}

/* The slot of a feature id (made with its int object the first time); NULL with an
 * exception set. The pointer is good until the next slot is made. */
static struct id_slot *slot_of(Walker *w, long id) {
    if (2 * (w->ids_used + 1) > w->ids_cap) {
        size_t cap = w->ids_cap ? 2 * w->ids_cap : 256;
        struct id_slot *tab = PyMem_Calloc(cap, sizeof *tab);
        if (!tab) return (struct id_slot *)PyErr_NoMemory();
        for (size_t k = 0; k < w->ids_cap; k++) {
            if (!w->ids[k].obj) continue;
            size_t h = id_hash(w->ids[k].id) & (cap - 1);
            while (tab[h].obj) h = (h + 1) & (cap - 1);
            tab[h] = w->ids[k];
        }
        PyMem_Free(w->ids);
        w->ids = tab;
        w->ids_cap = cap;
    }
    size_t mask = w->ids_cap - 1;
    size_t h = id_hash(id) & mask;
    while (w->ids[h].obj) {
        if (w->ids[h].id == id) return &w->ids[h];
        h = (h + 1) & mask;
    }
    PyObject *v = PyLong_FromLong(id);
    if (!v) return NULL;
    w->ids[h] = (struct id_slot){id, v, -1};
    w->ids_used++;
    return &w->ids[h];
}

static PyObject *feature_int(Walker *w, long id) {
    struct id_slot *slot = slot_of(w, id);
    return slot ? slot->obj : NULL;
}

/* The walk's feature ids, sorted and unique, into ids (room for 5 * ntok + 1: at
 * most 2 + 3 blocks per token, plus the end); returns how many. */
static Py_ssize_t feature_ids(const Walk *r, long *ids) {
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(r->data);
    Py_ssize_t u = 0;
    int prev = COARSE_START;
    long last_what = -1, last_next = -1;
    static const int block_shift[3] = {4, 5, 6}; /* 16, 32, 64: no division per token */
    for (Py_ssize_t k = 0; k < r->ntok; k++) {
        const tok_t *t = &r->toks[k];
        Py_ssize_t n = t->end - t->start;
        int coarse = coarse_of(t);
        long what;
        if (t->kind == K_CHAR)
            what = ((long)F_CHAR << F_SHIFT) | t->row;
        else if (t->kind == K_ERROR)
            what = ((long)F_ERROR << F_SHIFT) | ((long)(n < 7 ? n : 7) << 10)
                 | ((long)(t->reason == R_TRUNCATED) << 8) | d[t->start];
        else
            what = ((long)F_RESERVED << F_SHIFT) | (n < 4 ? n : 4);
        /* A run of like tokens (ASCII, most often) repeats both keys: skip the search. */
        long next = ((long)F_NEXT << F_SHIFT) | (prev << 8) | coarse;
        if (what != last_what) add_id(ids, &u, last_what = what);
        if (next != last_next) add_id(ids, &u, last_next = next);
        prev = coarse;
        if (n > 1 || t->kind != K_CHAR)
            for (int bi = 0; bi < 3; bi++)
                if (t->start >> block_shift[bi] != (t->end - 1) >> block_shift[bi])
                    add_id(ids, &u, ((long)F_BLOCK << F_SHIFT) | (bi << 8) | coarse);
    }
    add_id(ids, &u, ((long)F_NEXT << F_SHIFT) | (prev << 8) | COARSE_END);
    return u;
}

static PyObject *make_features(Walk *r) {
    long *ids = PyMem_Malloc(sizeof(long) * (size_t)(5 * r->ntok + 1));
    if (!ids) return PyErr_NoMemory();
    Py_ssize_t u = feature_ids(r, ids);
    PyObject *out = PyTuple_New(u);
    for (Py_ssize_t k = 0; out && k < u; k++) {
        PyObject *v = feature_int(r->walker, ids[k]);
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        Py_INCREF(v);
        PyTuple_SET_ITEM(out, k, v);
    }
    PyMem_Free(ids);
    return out;
}

/* A token in its packed form (packed_tokens.h). */
static packed_tok pack(const tok_t *t) {
    return (packed_tok){t->kind | (int64_t)t->reason << 8, t->start, t->end,
                        t->kind == K_CHAR ? t->value : -1};
}

static PyObject *make_packed(Walk *r) {
    PyObject *b = PyBytes_FromStringAndSize(NULL, r->ntok * (Py_ssize_t)sizeof(packed_tok));
    if (!b) return NULL;
    packed_tok *p = (packed_tok *)PyBytes_AS_STRING(b);
    for (Py_ssize_t k = 0; k < r->ntok; k++) p[k] = pack(&r->toks[k]);
    return b;
}

/* ---- lazy getters ---- */

static PyObject *cached(Walk *r, int c) {
    PyObject *v = r->cache[c];
    if (!v) {
        switch (c) {
        case C_TOKENS: v = make_tokens(r); break;
        case C_SPANS: v = make_spans(r, 0); break;
        case C_STRICT: v = make_spans(r, 1); break;
        case C_REASON: v = make_reason(r); break;
        case C_REPLACE: v = make_cps(r, V_REPLACE); break;
        case C_IGNORE: v = make_cps(r, V_IGNORE); break;
        case C_ESCAPE: v = make_cps(r, V_ESCAPE); break;
        case C_TEXT_REPLACE: v = make_text(r, V_REPLACE); break;
        case C_TEXT_IGNORE: v = make_text(r, V_IGNORE); break;
        case C_TEXT_ESCAPE: v = make_text(r, V_ESCAPE); break;
        case C_FEATURES: v = make_features(r); break;
        case C_PACKED: v = make_packed(r); break;
        }
        if (!v) return NULL;
        r->cache[c] = v;
    }
    Py_INCREF(v);
    return v;
}

static int view_index(PyObject *name, int text) {
    PyObject *const names[] = {S_TOKENS, S_SPANS, S_STRICT, S_REASON,
                               S_REPLACE, S_IGNORE, S_ESCAPE};
    const int first = text ? C_REPLACE : C_TOKENS;
    for (int c = first; c <= C_ESCAPE; c++)
        if (name == names[c]) return text ? c - C_REPLACE + C_TEXT_REPLACE : c;
    if (!PyUnicode_Check(name)) return -1;
    for (int c = first; c <= C_ESCAPE; c++)
        if (PyUnicode_Compare(name, names[c]) == 0)
            return text ? c - C_REPLACE + C_TEXT_REPLACE : c;
    return -1;
}

static PyObject *walk_view(Walk *r, PyObject *name) {
    int c = view_index(name, 0);
    if (c < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError,
                         "unknown view %R; views are tokens, spans, strict, reason, replace, "
                         "ignore, escape", name);
        return NULL;
    }
    return cached(r, c);
}

static PyObject *walk_text(Walk *r, PyObject *name) {
    int c = view_index(name, 1);
    if (c < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError,
                         "text(%R): only replace, ignore and escape are text", name);
        return NULL;
    }
    return cached(r, c);
}

static PyObject *walk_outcome(Walk *r, PyObject *provenance) {
    if (!g_make_outcome) {
        PyErr_SetString(PyExc_RuntimeError, "utf8fuzz.profiles._walk is not configured");
        return NULL;
    }
    PyObject *toks = cached(r, C_TOKENS);
    if (!toks) return NULL;
    PyObject *n = PyLong_FromSsize_t(PyBytes_GET_SIZE(r->data));
    if (!n) {
        Py_DECREF(toks);
        return NULL;
    }
    PyObject *out = PyObject_CallFunctionObjArgs(g_make_outcome, toks, n, provenance, r->data,
                                                 NULL);
    Py_DECREF(toks);
    Py_DECREF(n);
    return out;
}

/* ---- for the fuzz loop: coverage and classification without Token objects ---- */

/* cover(counters, region): TableCoverage.feed_walk's loop over the feature ids.
 * Each id found in counters (a dict, feature id -> counter index) bumps that
 * 8-bit counter of region (a writable buffer, the one libFuzzer reads after the
 * input), saturating at 255 as SanitizerCoverage's inline counters may. All
 * in C: no call per id (Atheris's _trace_branch cost a pybind11 call each). The
 * ids not found are returned, in order, for the caller to give counters to (that
 * needs feature_key and the pool, which are Python's); None when there are none,
 * the common case once the run is warm.
 *
 * The counter an id maps to is kept in the walker's slot for the id, for the last
 * counters dict seen (held, so that its identity cannot be reused): a dict look-up
 * per id cost 11,000 instructions an input (callgrind, 3,000 inputs recorded from
 * the fuzz loop). So an id, once in counters, must keep its counter - as
 * TableCoverage's do: it only adds. */
static PyObject *walk_cover(Walk *r, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "cover(counters, region) takes two arguments");
        return NULL;
    }
    PyObject *counters = args[0];
    if (!PyDict_Check(counters)) {
        PyErr_SetString(PyExc_TypeError, "cover: counters must be a dict");
        return NULL;
    }
    Py_buffer region;
    if (PyObject_GetBuffer(args[1], &region, PyBUF_WRITABLE) < 0)
        return NULL;
    unsigned char *cells = region.buf;
    Walker *w = r->walker;
    if (w->cover_owner != counters) {
        /* another coverage (a test's): forget the counters learnt from the last */
        for (size_t k = 0; k < w->ids_cap; k++) w->ids[k].counter = -1;
        Py_INCREF(counters);
        Py_XSETREF(w->cover_owner, counters);
    }
    long stack[256];
    size_t room = (size_t)(5 * r->ntok + 1);
    long *ids = room <= 256 ? stack : PyMem_Malloc(sizeof(long) * room);
    if (!ids) {
        PyBuffer_Release(&region);
        return PyErr_NoMemory();
    }
    Py_ssize_t n = feature_ids(r, ids);
    PyObject *missing = NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        struct id_slot *slot = slot_of(w, ids[k]);
        if (!slot) goto fail;
        Py_ssize_t i = slot->counter;
        if (i < 0) {
            PyObject *c = PyDict_GetItemWithError(counters, slot->obj); /* borrowed */
            if (!c) {
                if (PyErr_Occurred()) goto fail;
                if ((!missing && !(missing = PyList_New(0))) ||
                    PyList_Append(missing, slot->obj) < 0)
                    goto fail;
                continue;
            }
            i = PyLong_AsSsize_t(c); /* an int: no code runs */
            if (i == -1 && PyErr_Occurred()) goto fail;
            if (i >= 0) slot->counter = i; /* the dict keeps it for good */
        }
        if (i < 0 || i >= region.len) {
            PyErr_Format(PyExc_IndexError, "cover: counter %zd is outside the region (%zd)",
                         i, region.len);
            goto fail;
        }
        if (cells[i] != 255) cells[i]++;
    }
    if (ids != stack) PyMem_Free(ids);
    PyBuffer_Release(&region);
    if (missing) return missing;
    Py_RETURN_NONE;
fail:
    if (ids != stack) PyMem_Free(ids);
    PyBuffer_Release(&region);
    Py_XDECREF(missing);
    return NULL;
}

/* token_index(offset): max(0, bisect_right([t.start for t in tokens], offset) - 1),
 * the token holding a byte offset (the last one past the end; 0 when there are
 * none), by binary search on the starts. */
static Py_ssize_t token_at(const Walk *r, long long off) {
    Py_ssize_t lo = 0, hi = r->ntok; /* count the starts <= off */
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if ((long long)r->toks[mid].start <= off) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 ? lo - 1 : 0;
}

static PyObject *walk_token_index(Walk *r, PyObject *arg) {
    PyObject *o = PyNumber_Index(arg);
    if (!o) return NULL;
    int overflow = 0;
    long long off = PyLong_AsLongLongAndOverflow(o, &overflow);
    Py_DECREF(o);
    if (off == -1 && PyErr_Occurred()) return NULL;
    if (overflow) off = overflow > 0 ? LLONG_MAX : LLONG_MIN; /* past every start, or before */
    return PyLong_FromSsize_t(token_at(r, off));
}

/* One view of any walk (the C one's cache, or a PyWalk's method): text(view) when
 * text, else view(view). A new reference. */
static PyObject *walk_get(PyObject *walk, PyObject *name, int text) {
    if (Py_IS_TYPE(walk, &WalkType)) {
        int c = view_index(name, text);
        if (c >= 0) return cached((Walk *)walk, c);
        if (PyErr_Occurred()) return NULL;
    }
    return PyObject_CallMethodOneArg(walk, text ? S_TEXT : S_VIEW, name);
}

/* The packed tokens of any walk (the C one's cache, or a PyWalk's attribute). */
static PyObject *walk_packed(PyObject *walk) {
    if (Py_IS_TYPE(walk, &WalkType)) return cached((Walk *)walk, C_PACKED);
    return PyObject_GetAttrString(walk, "packed");
}

/* agrees(walk, seen, views): the differ's _Ref.agrees - every view of the screen
 * `seen` that is in `views` equals the walk's (a str text view against text(v),
 * tokens given as bytes against the packed tokens, anything else against
 * view(v)), and at least one was compared; equal tokens end it (every other view
 * is made from them). 1, 0, or -1 on an error. */
static int agrees(PyObject *walk, PyObject *seen, PyObject *views) {
    Py_ssize_t pos = 0;
    PyObject *v, *val;
    int compared = 0;
    while (PyDict_Next(seen, &pos, &v, &val)) {
        int in = PySet_Contains(views, v);
        if (in < 0) return -1;
        if (!in) continue;
        Py_INCREF(v);
        Py_INCREF(val); /* the comparison may run code that changes seen */
        int text = PyUnicode_CheckExact(val) && view_index(v, 1) >= 0; /* a text view */
        int packed = PyBytes_CheckExact(val) && view_index(v, 0) == C_TOKENS;
        PyObject *ref = packed ? walk_packed(walk) : walk_get(walk, v, text);
        int eq = ref ? PyObject_RichCompareBool(val, ref, Py_EQ) : -1;
        Py_XDECREF(ref);
        Py_DECREF(v);
        Py_DECREF(val);
        if (eq <= 0) return eq;
        /* equal tokens are equal everything: every view of an outcome with tokens
         * is made from them (as compare does with a full outcome) */
        if (packed) return 1;
        compared = 1;
    }
    return compared;
}

/* ---- judging a complete screen (the differ's _Ref.compare_views, common cases) ---- */

/* Class names, interned at import (signature.CLASSES). */
static PyObject *S_ACCEPTS, *S_REJECTS, *S_OFFSET, *S_REPLACEMENT, *S_CODE_POINT,
    *S_REASON_CLASS;

/* (class, token, view, detail), stealing detail. */
static PyObject *found(PyObject *klass, Py_ssize_t token, PyObject *view, PyObject *detail) {
    PyObject *t = PyLong_FromSsize_t(token);
    PyObject *res = t ? PyTuple_Pack(4, klass, t, view, detail) : NULL;
    Py_XDECREF(t);
    Py_DECREF(detail);
    return res;
}

/* An exact int that fits a long long; 0 if x is anything else (the differ's own
 * code then judges it, as it would anything unusual). */
static int exact_ll(PyObject *x, long long *out) {
    if (!PyLong_CheckExact(x)) return 0;
    int overflow = 0;
    *out = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (overflow || (*out == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* A strict-view value: None, or an exact (int, int) tuple. 1 with is_none, or a and b,
 * set; 0 if it is neither. */
static int span_value(PyObject *s, int *is_none, long long *a, long long *b) {
    *is_none = s == Py_None;
    if (*is_none) return 1;
    return PyTuple_CheckExact(s) && PyTuple_GET_SIZE(s) == 2 &&
           exact_ll(PyTuple_GET_ITEM(s, 0), a) && exact_ll(PyTuple_GET_ITEM(s, 1), b);
}

/* A difference's detail, formatted with snprintf (ASCII) and made a str once. Why
 * not PyUnicode_FromFormat: it builds the str piece by piece, and the judge words a
 * detail for each of the half-dozen known differences of a fuzz input; this way the
 * judge's instructions per input fell from 24,000 to 18,000 (callgrind, on 3,000
 * inputs recorded from the fuzz loop). */
static PyObject *detail_text(const char *fmt, ...) {
    char buf[320];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        PyErr_SetString(PyExc_SystemError, "judge: a detail could not be formatted");
        return NULL;
    }
    return PyUnicode_FromStringAndSize(buf, (size_t)n < sizeof buf ? n : (Py_ssize_t)sizeof buf - 1);
}

/* _span(s): "no error" or "error [a,b)". */
static void span_text(char *buf, size_t size, int none, long long a, long long b) {
    if (none) snprintf(buf, size, "no error");
    else snprintf(buf, size, "error [%lld,%lld)", a, b);
}

/* _Ref._span_pair: the reference's span ref against the decoder's span theirs.
 * A new (class, token, view, detail), or Py_NotImplemented when the values are not
 * the shapes the differ's own code would take the same way. */
static PyObject *span_pair(const Walk *r, PyObject *ref, PyObject *theirs, PyObject *view) {
    int an, bn;
    long long a0 = 0, a1 = 0, b0 = 0, b1 = 0;
    if (!span_value(ref, &an, &a0, &a1) || !span_value(theirs, &bn, &b0, &b1) || (an && bn))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *klass;
    long long at;
    if (an) klass = S_REJECTS, at = b0;
    else if (bn || b0 > a0) klass = S_ACCEPTS, at = a0;
    else if (b0 < a0) klass = S_REJECTS, at = b0;
    else klass = S_OFFSET, at = a0;
    char sa[64], sb[64];
    span_text(sa, sizeof sa, an, a0, a1);
    span_text(sb, sizeof sb, bn, b0, b1);
    PyObject *detail = detail_text("reference %s, decoder %s", sa, sb);
    if (!detail) return NULL;
    return found(klass, token_at(r, at), view, detail);
}

/* _cp(c): "nothing" (c < 0) or U+XXXX. */
static void cp_text(char *buf, size_t size, int64_t c) {
    if (c < 0) snprintf(buf, size, "nothing");
    else snprintf(buf, size, "U+%04llX", (unsigned long long)c);
}

/* _Ref._ignore's first case: the decoder's ignore view is the reference's replace
 * view - it substituted where errors are dropped (PyICU's "ignore" mode, met on
 * nearly every fuzz input). theirs is a str that differs from the walk's ignore
 * text. NotImplemented when its output is anything else. */
static PyObject *ignore_substituted(Walk *r, PyObject *theirs) {
    PyObject *replace = cached(r, C_TEXT_REPLACE);
    if (!replace) return NULL;
    int eq = replace != Py_None ? PyUnicode_Compare(theirs, replace) == 0 : 0;
    Py_DECREF(replace);
    if (PyErr_Occurred()) return NULL;
    if (!eq) Py_RETURN_NOTIMPLEMENTED;
    /* detail: the first output where they differ, as _Ref._ignore words it */
    Py_ssize_t n = PyUnicode_GET_LENGTH(theirs), k = 0;
    int64_t mine_k = -1;
    for (Py_ssize_t t = 0; t < r->ntok; t++) {
        if (r->toks[t].kind != K_CHAR) continue;
        if (k >= n || (int64_t)PyUnicode_READ_CHAR(theirs, k) != r->toks[t].value) {
            mine_k = r->toks[t].value;
            break;
        }
        k++;
    }
    int64_t x = k < n ? (int64_t)PyUnicode_READ_CHAR(theirs, k) : -1;
    char a[32], b[32];
    cp_text(a, sizeof a, mine_k);
    cp_text(b, sizeof b, x);
    PyObject *detail = detail_text("output %zd: reference %s, decoder %s", k, a, b);
    if (!detail) return NULL;
    return found(S_REPLACEMENT, r->first_err > 0 ? r->first_err : 0, S_IGNORE, detail);
}

/* _tok(t) of differ.py: "U+0041 [0,1)", "error [1,3) illegal", "reserved [4,5)". */
static void tok_text(char *buf, size_t size, const packed_tok *t) {
    int kind = (int)(t->kind_reason & 0xFF), reason = (int)(t->kind_reason >> 8);
    if (kind == PK_CHAR) {
        snprintf(buf, size, "U+%04llX [%lld,%lld)", (unsigned long long)t->value,
                 (long long)t->start, (long long)t->end);
        return;
    }
    snprintf(buf, size, "%s [%lld,%lld)%s", kind == PK_ERROR ? "error" : "reserved",
             (long long)t->start, (long long)t->end,
             reason == PR_ILLEGAL ? " illegal" : reason == PR_TRUNCATED ? " truncated" : "");
}

/* _Ref._tokens: the first token where the decoder's packed tokens differ from the
 * walk's, classed by the kinds on either side. NotImplemented for bytes that are
 * not a packing of tokens (the Python then says what is wrong with them). */
static PyObject *tokens_differ(Walk *r, PyObject *theirs) {
    Py_ssize_t nb = PyBytes_GET_SIZE(theirs);
    if (nb % (Py_ssize_t)sizeof(packed_tok)) Py_RETURN_NOTIMPLEMENTED;
    const packed_tok *d = (const packed_tok *)PyBytes_AS_STRING(theirs);
    Py_ssize_t nd = nb / (Py_ssize_t)sizeof(packed_tok);
    for (Py_ssize_t i = 0; i < nd; i++) {
        int kind = (int)(d[i].kind_reason & 0xFF), reason = (int)(d[i].kind_reason >> 8);
        if (kind > PK_RESERVED || reason > PR_TRUNCATED || d[i].kind_reason < 0 ||
            d[i].kind_reason >> 16 || (kind == PK_CHAR) != (d[i].value >= 0))
            Py_RETURN_NOTIMPLEMENTED;
    }
    for (Py_ssize_t i = 0; i < r->ntok && i < nd; i++) {
        packed_tok mine = pack(&r->toks[i]);
        const packed_tok *x = &d[i];
        if (!memcmp(&mine, x, sizeof mine)) continue;
        int rk = (int)(mine.kind_reason & 0xFF), dk = (int)(x->kind_reason & 0xFF);
        PyObject *klass = rk == PK_CHAR && dk == PK_CHAR ? S_CODE_POINT
                          : rk == PK_CHAR ? S_REJECTS
                          : dk == PK_CHAR ? S_ACCEPTS
                          : mine.start != x->start || mine.end != x->end ? S_REPLACEMENT
                          : S_REASON_CLASS;
        char a[96], b[96];
        tok_text(a, sizeof a, &mine);
        tok_text(b, sizeof b, x);
        PyObject *detail = detail_text("at byte %lld: reference %s, decoder %s",
                                       (long long)mine.start, a, b);
        if (!detail) return NULL;
        return found(klass, i, S_TOKENS, detail);
    }
    Py_ssize_t m = r->ntok < nd ? r->ntok : nd;
    PyObject *detail = PyUnicode_FromString("different number of tokens");
    if (!detail) return NULL;
    return found(S_REPLACEMENT, m > 1 ? m - 1 : 0, S_TOKENS, detail);
}

/* judge(walk, seen, order): _Ref.compare_views(seen, order) for a complete screen
 * `seen` (a dict of views) against a C walk, in the cases the fuzz loop meets on
 * nearly every input: the first differing view is strict or spans (iconv, mutf8:
 * a span somewhere else), ignore where the decoder substituted (PyICU), or packed
 * tokens (ICU's CESU-8 converters). Returns
 * (class, anchor token, view, detail) as the Python does, None when every view
 * shown agrees, or NotImplemented for anything else - the differ's Python then
 * judges it. Why in C: a handful of decoders with known bugs differ on most fuzz
 * inputs, and judging them in Python cost more than all the screens together.
 * tests/engine/test_judge.py holds it equal to compare_views. */
static PyObject *judge(PyObject *walk, PyObject *seen, PyObject *order) {
    if (!Py_IS_TYPE(walk, &WalkType) || !PyDict_CheckExact(seen) || !PyTuple_Check(order))
        Py_RETURN_NOTIMPLEMENTED;
    Walk *r = (Walk *)walk;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(order); i++) {
        PyObject *v = PyTuple_GET_ITEM(order, i);
        PyObject *mine = PyDict_GetItemWithError(seen, v); /* borrowed */
        if (!mine) {
            if (PyErr_Occurred()) return NULL;
            continue;
        }
        int c = view_index(v, 0);
        if (c < 0) {
            if (PyErr_Occurred()) return NULL;
            Py_RETURN_NOTIMPLEMENTED;
        }
        Py_INCREF(mine); /* a comparison may run code that changes seen */
        PyObject *result = NULL;
        int same = 0;
        if (c == C_REPLACE || c == C_IGNORE || c == C_ESCAPE) {
            if (!PyUnicode_CheckExact(mine)) {
                result = Py_NewRef(Py_NotImplemented);
            } else {
                PyObject *text = cached(r, c - C_REPLACE + C_TEXT_REPLACE);
                if (text) {
                    same = text != Py_None && PyUnicode_Compare(mine, text) == 0;
                    Py_DECREF(text);
                    if (PyErr_Occurred()) result = NULL;
                    else if (same) result = NULL;
                    else if (c == C_IGNORE) result = ignore_substituted(r, mine);
                    else result = Py_NewRef(Py_NotImplemented);
                }
            }
        } else if (c == C_TOKENS) {
            if (!PyBytes_CheckExact(mine)) {
                result = Py_NewRef(Py_NotImplemented);
            } else {
                PyObject *packed = cached(r, C_PACKED);
                if (packed) {
                    same = PyBytes_GET_SIZE(mine) == PyBytes_GET_SIZE(packed) &&
                           !memcmp(PyBytes_AS_STRING(mine), PyBytes_AS_STRING(packed),
                                   (size_t)PyBytes_GET_SIZE(mine));
                    Py_DECREF(packed);
                    /* equal tokens are equal everything, as in compare_views */
                    result = same ? Py_NewRef(Py_None) : tokens_differ(r, mine);
                }
            }
        } else {
            PyObject *ref = cached(r, c);
            if (ref) {
                same = PyObject_RichCompareBool(mine, ref, Py_EQ);
                if (same < 0) {
                    result = NULL;
                } else if (same) {
                    result = NULL;
                } else if (c == C_STRICT) {
                    result = span_pair(r, ref, mine, S_STRICT);
                } else if (c == C_SPANS && PyTuple_CheckExact(mine)) {
                    /* the first span where they part, as _Ref._spans */
                    Py_ssize_t na = PyTuple_GET_SIZE(ref), nb = PyTuple_GET_SIZE(mine), k = 0;
                    int e = 1;
                    while (k < na && k < nb &&
                           (e = PyObject_RichCompareBool(PyTuple_GET_ITEM(ref, k),
                                                         PyTuple_GET_ITEM(mine, k), Py_EQ)) == 1)
                        k++;
                    if (e >= 0)
                        result = span_pair(r, k < na ? PyTuple_GET_ITEM(ref, k) : Py_None,
                                           k < nb ? PyTuple_GET_ITEM(mine, k) : Py_None,
                                           S_SPANS);
                } else if (c == C_REASON) {
                    /* compare_views skips a reason when strict differs (it says more) */
                    PyObject *strict = NULL;
                    int has_strict = 0;
                    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(order); j++)
                        if (view_index(PyTuple_GET_ITEM(order, j), 0) == C_STRICT) has_strict = 1;
                    if (has_strict && (strict = cached(r, C_STRICT))) {
                        PyObject *theirs = PyDict_GetItemWithError(seen, S_STRICT);
                        int eq = theirs || !PyErr_Occurred()
                                     ? PyObject_RichCompareBool(strict, theirs ? theirs : Py_None,
                                                                Py_EQ)
                                     : -1;
                        Py_DECREF(strict);
                        if (eq == 0) same = 1; /* skipped, as compare_views does */
                        else if (eq == 1) result = Py_NewRef(Py_NotImplemented);
                    } else if (!PyErr_Occurred()) {
                        result = Py_NewRef(Py_NotImplemented);
                    }
                } else {
                    result = Py_NewRef(Py_NotImplemented);
                }
                Py_DECREF(ref);
            }
        }
        Py_DECREF(mine);
        if (result) return result;
        if (PyErr_Occurred()) return NULL;
    }
    Py_RETURN_NONE;
}

/* screen_many(inputs, walks, plans) -> [(seens, misses, found), ...]: the differ's
 * screening loop (Differ.run_many), in C because it runs for every decoder on
 * every fuzz input and the Python loop and its comparisons cost more than most
 * screens' library calls.
 *
 * For input j, plans[j] is a tuple of (screen, walk index, views, order) - screen
 * a callable or None, order a tuple of views or None - and walks[j] the
 * references' walks of inputs[j]; every plan has one entry per decoder, in the
 * same order. Each screen is called on its input; if it returns a dict that
 * agrees with walks[j][index] at views, the decoder agrees on that input. For
 * each input: seens[k], what screen k returned (None if it raised an Exception,
 * as the differ treats a raising screen); misses, the indices of the entries that
 * did not agree (no screen, not a dict, or a difference), in order; and found,
 * one item per miss: judge(walk, seen, order) when the entry has an order (a
 * complete screen) and judge could name the difference, else None.
 *
 * Decoder-major: each decoder screens every input before the next decoder
 * starts. Some twenty libraries (CPython, ICU twice over, iconv, PyICU, ...)
 * taking turns on each input keep evicting each other's code and data from the
 * caches; one library at a time over a batch runs warm. Measured on the fuzz
 * corpus: the same screens took about half the time in batches of 32. */
static PyObject *screen_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) ||
        !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "screen_many(inputs: tuple, walks: tuple, plans: tuple)");
        return NULL;
    }
    PyObject *inputs = args[0], *walks = args[1], *plans = args[2];
    Py_ssize_t n = PyTuple_GET_SIZE(inputs), m = -1;
    if (PyTuple_GET_SIZE(walks) != n || PyTuple_GET_SIZE(plans) != n) {
        PyErr_SetString(PyExc_ValueError, "screen_many: one walks and one plan per input");
        return NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *plan = PyTuple_GET_ITEM(plans, j), *w = PyTuple_GET_ITEM(walks, j);
        if (!PyTuple_Check(plan) || !PyTuple_Check(w)) {
            PyErr_SetString(PyExc_TypeError, "screen_many: each plan and walks is a tuple");
            return NULL;
        }
        if (m >= 0 && PyTuple_GET_SIZE(plan) != m) {
            PyErr_SetString(PyExc_ValueError, "screen_many: plans of different lengths");
            return NULL;
        }
        m = PyTuple_GET_SIZE(plan);
    }
    if (m < 0) m = 0;
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *seens = PyList_New(m), *misses = PyList_New(0), *found = PyList_New(0);
        PyObject *pair = NULL;
        if (seens && misses && found) pair = PyTuple_Pack(3, seens, misses, found);
        Py_XDECREF(seens);
        Py_XDECREF(misses);
        Py_XDECREF(found);
        if (!pair) goto fail;
        PyList_SET_ITEM(out, j, pair);
        /* every slot filled before a screen runs: a list never holds NULL */
        for (Py_ssize_t k = 0; k < m; k++) {
            Py_INCREF(Py_None);
            PyList_SET_ITEM(seens, k, Py_None);
        }
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *data = PyTuple_GET_ITEM(inputs, j);
            PyObject *jwalks = PyTuple_GET_ITEM(walks, j);
            PyObject *pair = PyList_GET_ITEM(out, j);
            PyObject *seens = PyTuple_GET_ITEM(pair, 0), *misses = PyTuple_GET_ITEM(pair, 1);
            PyObject *found = PyTuple_GET_ITEM(pair, 2);
            PyObject *e = PyTuple_GET_ITEM(PyTuple_GET_ITEM(plans, j), k);
            if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 4) {
                PyErr_SetString(PyExc_TypeError,
                                "screen: a plan entry is (screen, walk index, views, order)");
                goto fail;
            }
            PyObject *screen = PyTuple_GET_ITEM(e, 0), *views = PyTuple_GET_ITEM(e, 2);
            PyObject *order = PyTuple_GET_ITEM(e, 3);
            Py_ssize_t w = PyLong_AsSsize_t(PyTuple_GET_ITEM(e, 1));
            if (w == -1 && PyErr_Occurred()) goto fail;
            if (w < 0 || w >= PyTuple_GET_SIZE(jwalks) || !PyAnySet_Check(views) ||
                (order != Py_None && !PyTuple_Check(order))) {
                PyErr_SetString(PyExc_ValueError, "screen: bad walk index, views or order");
                goto fail;
            }
            int ok = 0;
            if (screen != Py_None) {
                PyObject *seen = PyObject_Vectorcall(screen, &data, 1, NULL);
                if (!seen) {
                    /* a plug-in's screen that raises: decode in full, as the differ
                     * does (BaseExceptions such as KeyboardInterrupt go on up) */
                    if (!PyErr_ExceptionMatches(PyExc_Exception)) goto fail;
                    PyErr_Clear();
                } else {
                    if (PyDict_CheckExact(seen)) {
                        ok = agrees(PyTuple_GET_ITEM(jwalks, w), seen, views);
                        if (ok < 0) {
                            Py_DECREF(seen);
                            goto fail;
                        }
                    }
                    /* the list takes seen and drops its None placeholder */
                    PyObject *old = PyList_GET_ITEM(seens, k);
                    PyList_SET_ITEM(seens, k, seen);
                    Py_DECREF(old);
                }
            }
            if (!ok) {
                PyObject *i = PyLong_FromSsize_t(k);
                if (!i || PyList_Append(misses, i) < 0) {
                    Py_XDECREF(i);
                    goto fail;
                }
                Py_DECREF(i);
                PyObject *seen = PyList_GET_ITEM(seens, k), *f = NULL;
                if (order != Py_None && PyDict_CheckExact(seen)) {
                    Py_INCREF(seen);
                    f = judge(PyTuple_GET_ITEM(jwalks, w), seen, order);
                    Py_DECREF(seen);
                    if (!f) goto fail;
                    if (!PyTuple_Check(f)) Py_SETREF(f, Py_NewRef(Py_None));
                } else {
                    f = Py_NewRef(Py_None);
                }
                int bad = PyList_Append(found, f);
                Py_DECREF(f);
                if (bad < 0) goto fail;
            }
        }
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *walk_agrees(Walk *r, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyDict_Check(args[0]) || !PyAnySet_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "agrees(seen: dict, views: frozenset)");
        return NULL;
    }
    int ok = agrees((PyObject *)r, args[0], args[1]);
    if (ok < 0) return NULL;
    return PyBool_FromLong(ok);
}

/* token(i): tokens[i] without the tuple of them all (the differ names the feature of
 * one token per divergence); None when i is out of range. */
static PyObject *walk_token(Walk *r, PyObject *arg) {
    Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (i == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return NULL;
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (i < 0 || i >= r->ntok) Py_RETURN_NONE;
    if (r->cache[C_TOKENS]) {
        PyObject *t = PyTuple_GET_ITEM(r->cache[C_TOKENS], i);
        Py_INCREF(t);
        return t;
    }
    if (!g_token_type) {
        PyErr_SetString(PyExc_RuntimeError, "utf8fuzz.profiles._walk is not configured");
        return NULL;
    }
    return new_token(g_token_type, &r->toks[i]);
}

static PyObject *get_tokens(Walk *r, void *c) { return cached(r, C_TOKENS); }
static PyObject *get_features(Walk *r, void *c) { return cached(r, C_FEATURES); }
static PyObject *get_packed(Walk *r, void *c) { return cached(r, C_PACKED); }
static PyObject *get_data(Walk *r, void *c) {
    Py_INCREF(r->data);
    return r->data;
}

static PyGetSetDef walk_getset[] = {
    {"tokens", (getter)get_tokens, NULL, "tuple[Token, ...], as decode_tokens gives them", NULL},
    {"features", (getter)get_features, NULL,
     "sorted, unique coverage feature ids (walk.feature_key decodes one)", NULL},
    {"data", (getter)get_data, NULL, "the input", NULL},
    {"packed", (getter)get_packed, NULL,
     "the tokens packed (utf8fuzz.outcome.pack_tokens), as bytes", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef walk_members[] = {
    {"first_error", T_PYSSIZET, offsetof(Walk, first_err), READONLY,
     "index of the first token that is not a char (error or reserved), or -1"},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef walk_methods[] = {
    {"cover", (PyCFunction)(void (*)(void))walk_cover, METH_FASTCALL,
     "cover(counters, region) -> list of the feature ids not in counters, or None; "
     "region[counters[id]] is bumped (saturating) for every other id (an id in counters "
     "must keep its counter)"},
    {"token", (PyCFunction)walk_token, METH_O,
     "token(i): tokens[i], or None when i is out of range"},
    {"token_index", (PyCFunction)walk_token_index, METH_O,
     "token_index(offset): index of the token holding byte offset (bisect on the starts)"},
    {"view", (PyCFunction)walk_view, METH_O, "view(name): as Outcome.view(name)"},
    {"text", (PyCFunction)walk_text, METH_O,
     "text(name): the replace/ignore/escape view as a str, or None past U+10FFFF"},
    {"outcome", (PyCFunction)walk_outcome, METH_O,
     "outcome(provenance) -> Outcome with these tokens"},
    {"agrees", (PyCFunction)(void (*)(void))walk_agrees, METH_FASTCALL,
     "agrees(seen, views): a screen's views in views equal this walk's, and one was compared"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WalkType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "utf8fuzz.profiles._walk.Walk",
    .tp_basicsize = offsetof(Walk, toks),
    .tp_itemsize = sizeof(tok_t),
    .tp_dealloc = (destructor)walk_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One input's walk: compact arrays, and views built on first use.",
    .tp_getset = walk_getset,
    .tp_methods = walk_methods,
    .tp_members = walk_members,
};

/* ---------------------------------------------------------------- module ---- */

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *tt, *mk;
    if (!PyArg_ParseTuple(args, "OO:configure", &tt, &mk)) return NULL;
    if (!PyType_Check(tt) || !PyType_IsSubtype((PyTypeObject *)tt, &PyTuple_Type) ||
        ((PyTypeObject *)tt)->tp_basicsize != PyTuple_Type.tp_basicsize ||
        ((PyTypeObject *)tt)->tp_itemsize != PyTuple_Type.tp_itemsize ||
        ((PyTypeObject *)tt)->tp_dictoffset != 0) {
        PyErr_SetString(PyExc_TypeError, "Token must be a NamedTuple class (a tuple, no __dict__)");
        return NULL;
    }
    if (!PyCallable_Check(mk)) {
        PyErr_SetString(PyExc_TypeError, "make_outcome must be callable");
        return NULL;
    }
    if ((PyTypeObject *)tt != g_token_type) clear_shared(); /* they are the old class's */
    Py_INCREF(tt);
    Py_XSETREF(g_token_type, (PyTypeObject *)tt);
    Py_INCREF(mk);
    Py_XSETREF(g_make_outcome, mk);
    Py_RETURN_NONE;
}

static PyObject *judge_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyDict_Check(args[1]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "judge(walk, seen: dict, order: tuple)");
        return NULL;
    }
    return judge(args[0], args[1], args[2]);
}

static PyMethodDef methods[] = {
    {"judge", (PyCFunction)(void (*)(void))judge_entry, METH_FASTCALL,
     "judge(walk, seen, order) -> (class, token, view, detail), None (agrees) or "
     "NotImplemented (see the comment in _walk.c)"},
    {"configure", configure, METH_VARARGS,
     "configure(Token, make_outcome): the Token class to build, and "
     "make_outcome(tokens, length, provenance, data) -> Outcome."},
    {"screen_many", (PyCFunction)(void (*)(void))screen_many, METH_FASTCALL,
     "screen_many(inputs, walks, plans) -> [(seens, misses, found)] per input, decoder-major "
     "(see the comment in _walk.c)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_walk",
    "The reference walk in C. Use utf8fuzz.profiles.walk, which documents it.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__walk(void) {
    struct { PyObject **slot; const char *text; } names[] = {
        {&S_CHAR, "char"}, {&S_ERROR, "error"}, {&S_RESERVED, "reserved"},
        {&S_ILLEGAL, "illegal"}, {&S_TRUNCATED, "truncated"}, {&S_TOKENS, "tokens"},
        {&S_SPANS, "spans"}, {&S_STRICT, "strict"}, {&S_REASON, "reason"},
        {&S_REPLACE, "replace"}, {&S_IGNORE, "ignore"}, {&S_ESCAPE, "escape"},
        {&S_TEXT, "text"}, {&S_VIEW, "view"},
        {&S_ACCEPTS, "accepts-ill-formed"}, {&S_REJECTS, "rejects-well-formed"},
        {&S_OFFSET, "different-error-offset"}, {&S_REPLACEMENT, "different-replacement"},
        {&S_CODE_POINT, "different-code-point"}, {&S_REASON_CLASS, "different-reason"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!*names[k].slot && !(*names[k].slot = PyUnicode_InternFromString(names[k].text)))
            return NULL;
    if (PyType_Ready(&WalkerType) < 0 || PyType_Ready(&WalkType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&WalkerType);
    Py_INCREF(&WalkType);
    if (PyModule_AddObject(m, "Walker", (PyObject *)&WalkerType) < 0 ||
        PyModule_AddObject(m, "Walk", (PyObject *)&WalkType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
