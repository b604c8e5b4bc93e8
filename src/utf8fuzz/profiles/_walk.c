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
 *
 * The differ's screening loop and judge (engine/_screen.c) read walks in C: walk.h
 * declares the Walk struct, and the capsule _C_API gives them the few functions
 * they call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "walk.h"
#include "../small_tuples.h"

/* The policies, in utf8fuzz.policies.POLICIES order (walk.py passes the index). */
enum { P_MAXIMAL, P_SEQUENCE, P_BYTE, P_RUN };

/* Interned names, made once at import. */
static PyObject *S_CHAR, *S_ERROR, *S_RESERVED, *S_ILLEGAL, *S_TRUNCATED;
static PyObject *S_TEXT, *S_VIEW;
static PyObject *S_TOKENS, *S_SPANS, *S_STRICT, *S_REASON, *S_REPLACE, *S_IGNORE, *S_ESCAPE,
    *S_ACCEPT;

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

struct Walker {
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
};

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
    if (policy < P_MAXIMAL || policy > P_RUN) {
        PyErr_SetString(PyExc_ValueError, "policy must be 0, 1, 2 or 3");
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
        } else if (w->policy == P_RUN) {
            end = i + 1;
            if (k >= 2 && toks[k - 2].kind == K_ERROR && toks[k - 2].end == i) {
                /* the run goes on: one error from its start (counted once) */
                t = &toks[--k - 1];
                i = t->start;
                r->nerr--;
            }
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

/* ---- coverage features (loop/coverage.py's keys; walk.feature_key decodes) ---- */

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

/* The accept view (a validator's: is the input well-formed?), read off strict: it
 * is not cached as a view of its own, since only validators are compared at it. */
static int is_accept(PyObject *name) {
    return name == S_ACCEPT
           || (PyUnicode_Check(name) && PyUnicode_Compare(name, S_ACCEPT) == 0);
}

static PyObject *accept_view(Walk *r) {
    PyObject *strict = cached(r, C_STRICT);
    if (!strict) return NULL;
    PyObject *v = PyBool_FromLong(strict == Py_None);
    Py_DECREF(strict);
    return v;
}

static PyObject *walk_view(Walk *r, PyObject *name) {
    int c = view_index(name, 0);
    if (c < 0) {
        if (PyErr_Occurred()) return NULL;
        if (is_accept(name)) return accept_view(r);
        PyErr_Format(PyExc_ValueError,
                     "unknown view %R; views are tokens, spans, strict, reason, accept, "
                     "replace, ignore, escape", name);
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

/* token_index(offset): token_at (walk.h) on any int. */
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
        if (!text && is_accept(name)) return accept_view((Walk *)walk);
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

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Token, make_outcome): the Token class to build, and "
     "make_outcome(tokens, length, provenance, data) -> Outcome."},
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
        {&S_ACCEPT, "accept"}, {&S_TEXT, "text"}, {&S_VIEW, "view"},
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
    static walk_capi capi = {sizeof capi, &WalkType, cached, view_index, agrees};
    PyObject *capsule = PyCapsule_New(&capi, WALK_CAPI_NAME, NULL);
    if (!capsule || PyModule_AddObject(m, "_C_API", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
