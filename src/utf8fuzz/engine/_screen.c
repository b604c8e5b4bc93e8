/* utf8fuzz.engine._screen: the differ's screening loop (screen_many) and its judge
 * of a whole screen (judge), in C. The screening loop runs for every decoder on
 * every fuzz input, and a handful of decoders with known bugs differ on most
 * inputs: in Python, the loop with its comparisons and the judging of those misses
 * cost more than the screens' library calls.
 *
 * Both read the reference walks (utf8fuzz.profiles._walk.Walk) in C: the struct is
 * walk.h's, and the few functions of _walk they call come through its capsule
 * (walk_capi), imported in module init.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../profiles/walk.h"

static const walk_capi *W;

/* View names, interned at import: the same objects _walk's view_index knows. */
static PyObject *S_TOKENS, *S_SPANS, *S_STRICT, *S_IGNORE;

/* ---- judging a whole screen (the differ's _Ref.compare_views, common cases) ---- */

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
    PyObject *replace = W->cached(r, C_TEXT_REPLACE);
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

/* judge(walk, seen, order): _Ref.compare_views(seen, order) for a whole screen
 * `seen` (a dict of views) against a C walk, in the cases the fuzz loop meets on
 * nearly every input: the first differing view is strict or spans (iconv:
 * a span somewhere else), ignore where the decoder substituted (PyICU), or packed
 * tokens (ICU's CESU-8 converters). Returns
 * (class, anchor token, view, detail) as the Python does, None when every view
 * shown agrees, or NotImplemented for anything else - the differ's Python then
 * judges it. Why in C: a handful of decoders with known bugs differ on most fuzz
 * inputs, and judging them in Python cost more than all the screens together.
 * tests/engine/test_judge.py holds it equal to compare_views. */
static PyObject *judge(PyObject *walk, PyObject *seen, PyObject *order) {
    if (!Py_IS_TYPE(walk, W->walk_type) || !PyDict_CheckExact(seen) || !PyTuple_Check(order))
        Py_RETURN_NOTIMPLEMENTED;
    Walk *r = (Walk *)walk;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(order); i++) {
        PyObject *v = PyTuple_GET_ITEM(order, i);
        PyObject *mine = PyDict_GetItemWithError(seen, v); /* borrowed */
        if (!mine) {
            if (PyErr_Occurred()) return NULL;
            continue;
        }
        int c = W->view_index(v, 0);
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
                PyObject *text = W->cached(r, c - C_REPLACE + C_TEXT_REPLACE);
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
                PyObject *packed = W->cached(r, C_PACKED);
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
            PyObject *ref = W->cached(r, c);
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
                        if (W->view_index(PyTuple_GET_ITEM(order, j), 0) == C_STRICT) has_strict = 1;
                    if (has_strict && (strict = W->cached(r, C_STRICT))) {
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
 * whole screen) and judge could name the difference, else None.
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
                        ok = W->agrees(PyTuple_GET_ITEM(jwalks, w), seen, views);
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

/* ---- the cheapest alignment of a replace view (classify._Ref._replace_alignment) ---- */

/* classify._spelled: the value data[a:b] spells by the bit layout alone, or -1. */
static long long spelled(const unsigned char *d, Py_ssize_t a, Py_ssize_t b) {
    if (a >= b) return -1;
    unsigned lead = d[a];
    if (lead < 0x80) return b - a == 1 ? (long long)lead : -1;
    int n = 0;
    while (n < 8 && (lead & (0x80u >> n))) n++;
    if (n < 2 || n > 6 || b - a != n) return -1;
    long long value = lead & (0x7Fu >> n);
    for (Py_ssize_t i = a + 1; i < b; i++) {
        if ((d[i] & 0xC0) != 0x80) return -1;
        value = value << 6 | (d[i] & 0x3F);
    }
    return value;
}

/* A sequence of exact ints (None: -1) into a new array of n, or NULL with
 * *unusual set (anything else: the Python then decides). */
static long long *ints(PyObject *seq, Py_ssize_t n, int *unusual) {
    long long *out = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(long long));
    if (!out) { PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        if (x == Py_None) { out[i] = -1; continue; }
        if (!exact_ll(x, &out[i]) || out[i] < 0) {
            PyMem_Free(out);
            *unusual = 1;
            return NULL;
        }
    }
    return out;
}

/* align(data, errors, values, starts, ends, theirs) -> (anchor token, rank) or None:
 * the first edit of a cheapest alignment, the earliest among equals, exactly as
 * _Ref._replace_alignment's dynamic program (which documents the costs); token k
 * is an error when errors[k] is nonzero, else a character of value values[k]; it
 * spans data[starts[k]:ends[k]]. NotImplemented for values that are not exact
 * non-negative ints (the Python decides). tests/engine/test_judge.py holds it equal
 * to the Python on arbitrary outputs. Why in C: a peer with a known difference in
 * its replacement text (the JDK's String) is aligned on nearly every input it is
 * sent, and in Python that was most of judging the peers. */
static PyObject *align(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 6 || !PyBytes_Check(args[0]) || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "align(data: bytes, errors: bytes, values, starts, ends, theirs)");
        return NULL;
    }
    enum { ACC = 0, REP = 1, REJ = 2, CPT = 3 };
    const long long REPL = 0xFFFD, BIG = 1LL << 62, NONE = (1LL << 62) - 1;
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t data_len = PyBytes_GET_SIZE(args[0]);
    const char *err = PyBytes_AS_STRING(args[1]);
    Py_ssize_t n_t = PyBytes_GET_SIZE(args[1]);
    PyObject *seqs[4] = {NULL, NULL, NULL, NULL};
    long long *arr[4] = {NULL, NULL, NULL, NULL};
    long long *cost = NULL, *first = NULL, *run_end = NULL, *near = NULL;
    PyObject *result = NULL;
    int unusual = 0;
    for (int i = 0; i < 4; i++) {
        seqs[i] = PySequence_Fast(args[2 + i], "align: sequences expected");
        if (!seqs[i]) goto done;
        Py_ssize_t want = i < 3 ? n_t : PySequence_Fast_GET_SIZE(seqs[i]);
        if (PySequence_Fast_GET_SIZE(seqs[i]) != want) {
            PyErr_SetString(PyExc_ValueError, "align: one value, start and end per token");
            goto done;
        }
        arr[i] = ints(seqs[i], want, &unusual);
        if (!arr[i]) goto done;
    }
    long long *value = arr[0], *start = arr[1], *end = arr[2], *theirs = arr[3];
    Py_ssize_t n_p = PySequence_Fast_GET_SIZE(seqs[3]);
    for (Py_ssize_t k = 0; k < n_t; k++)
        if (start[k] > end[k] || end[k] > data_len) {
            PyErr_SetString(PyExc_ValueError, "align: a token outside the data");
            goto done;
        }
    Py_ssize_t width = n_p + 1, cells = (n_t + 1) * width;
    cost = PyMem_Malloc((size_t)cells * sizeof(long long));
    first = PyMem_Malloc((size_t)cells * sizeof(long long));
    run_end = PyMem_Malloc((size_t)(n_t + 1) * sizeof(long long));
    near = PyMem_Malloc((size_t)(n_t + 1) * sizeof(long long));
    if (!cost || !first || !run_end || !near) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < cells; i++) { cost[i] = BIG; first[i] = NONE; }
    cost[0] = 0;
    /* the end of the run of errors from each error */
    long long e_end = n_t;
    for (Py_ssize_t i = n_t - 1; i >= 0; i--) {
        if (!err[i]) e_end = i;
        run_end[i] = err[i] ? e_end : i;
    }
    /* near[t]: the error nearest to the gap before token t, the earlier on a tie */
    {
        long long after = -1, before = -1;
        long long *aft = near; /* first the first error at or after t, in place */
        aft[n_t] = -1;
        for (Py_ssize_t i = n_t - 1; i >= 0; i--) aft[i] = err[i] ? i : aft[i + 1];
        for (Py_ssize_t i = 0; i <= n_t; i++) {
            after = aft[i];
            near[i] = (before < 0 || (after >= 0 && after - i < i - 1 - before)) ? after
                                                                                 : before;
            if (i < n_t && err[i]) before = i;
        }
    }
#define RELAX(i, c, f) do { Py_ssize_t i_ = (i); long long c_ = (c), f_ = (f); \
        if (c_ < cost[i_] || (c_ == cost[i_] && f_ < first[i_])) { cost[i_] = c_; first[i_] = f_; } \
    } while (0)
    for (Py_ssize_t t = 0; t <= n_t; t++) {
        Py_ssize_t row = t * width;
        for (Py_ssize_t p = 0; p <= n_p; p++) {
            long long c = cost[row + p];
            if (c == BIG) continue;
            long long f = first[row + p];
            int has_y = p < n_p;
            long long y = has_y ? theirs[p] : -1, code;
            if (has_y) {
                long long a = near[t];
                if (a >= 0) code = a * 4 + REP;
                else code = (long long)(t < n_t - 1 ? t : (n_t - 1 > 0 ? n_t - 1 : 0)) * 4 +
                            (y == REPL ? REJ : CPT);
                RELAX(row + p + 1, c + 1, f != NONE ? f : code);
            }
            if (t == n_t) continue;
            Py_ssize_t nxt = row + width + p;
            if (!err[t]) {
                int swallowed = t > 0 && err[t - 1];
                if (has_y) {
                    if (y == value[t]) {
                        RELAX(nxt + 1, c, f);
                    } else {
                        if (y == REPL) code = swallowed ? (t - 1) * 4 + REP : t * 4 + REJ;
                        else code = t * 4 + CPT;
                        RELAX(nxt + 1, c + 1, f != NONE ? f : code);
                    }
                }
                code = swallowed ? (t - 1) * 4 + REP : t * 4 + REJ;
                RELAX(nxt, c + (swallowed ? 1 : 2), f != NONE ? f : code);
                continue;
            }
            RELAX(nxt, c + 1, f != NONE ? f : t * 4 + REP);
            if (!has_y) continue;
            if (y == REPL) {
                RELAX(nxt + 1, c, f);
                code = t * 4 + REP;
                for (long long j = t + 2; j <= run_end[t]; j++)
                    RELAX(j * width + p + 1, c + j - t - 1, f != NONE ? f : code);
            } else {
                code = t * 4 + ACC;
                for (long long j = t + 1; j <= run_end[t]; j++) {
                    int is = spelled(data, (Py_ssize_t)start[t], (Py_ssize_t)end[j - 1]) == y;
                    RELAX(j * width + p + 1, c + (is ? 1 : 1 + j - t), f != NONE ? f : code);
                }
            }
        }
    }
#undef RELAX
    {
        Py_ssize_t last = n_t * width + n_p;
        if (cost[last] == BIG || first[last] == NONE) result = Py_NewRef(Py_None);
        else result = Py_BuildValue("(LL)", first[last] / 4, first[last] % 4);
    }
done:
    if (unusual && !PyErr_Occurred() && !result) result = Py_NewRef(Py_NotImplemented);
    for (int i = 0; i < 4; i++) { Py_XDECREF(seqs[i]); PyMem_Free(arr[i]); }
    PyMem_Free(cost); PyMem_Free(first); PyMem_Free(run_end); PyMem_Free(near);
    return result;
}

static PyObject *judge_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyDict_Check(args[1]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "judge(walk, seen: dict, order: tuple)");
        return NULL;
    }
    return judge(args[0], args[1], args[2]);
}

static PyMethodDef methods[] = {
    {"align", (PyCFunction)(void (*)(void))align, METH_FASTCALL,
     "align(data, errors, values, starts, ends, theirs) -> (token, rank), None or "
     "NotImplemented: the replace view's cheapest alignment (see the comment in _screen.c)"},
    {"judge", (PyCFunction)(void (*)(void))judge_entry, METH_FASTCALL,
     "judge(walk, seen, order) -> (class, token, view, detail), None (agrees) or "
     "NotImplemented (see the comment in _screen.c)"},
    {"screen_many", (PyCFunction)(void (*)(void))screen_many, METH_FASTCALL,
     "screen_many(inputs, walks, plans) -> [(seens, misses, found)] per input, decoder-major "
     "(see the comment in _screen.c)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_screen",
    "The differ's screening loop and judge in C (see utf8fuzz.engine.differ).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__screen(void) {
    struct { PyObject **slot; const char *text; } names[] = {
        {&S_TOKENS, "tokens"}, {&S_SPANS, "spans"}, {&S_STRICT, "strict"},
        {&S_IGNORE, "ignore"},
        {&S_ACCEPTS, "accepts-ill-formed"}, {&S_REJECTS, "rejects-well-formed"},
        {&S_OFFSET, "different-error-offset"}, {&S_REPLACEMENT, "different-replacement"},
        {&S_CODE_POINT, "different-code-point"}, {&S_REASON_CLASS, "different-reason"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!*names[k].slot && !(*names[k].slot = PyUnicode_InternFromString(names[k].text)))
            return NULL;
    if (!W && !(W = walk_capi_import())) return NULL;
    return PyModule_Create(&module);
}
