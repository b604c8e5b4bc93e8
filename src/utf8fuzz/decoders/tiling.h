/* The tiling walk (the same walk as utf8fuzz.decoders._tiling.tile): a library's
 * decoded code points and its recorded error spans into tokens that tile the
 * input, each character's span the length of its encoding. Shared by the ICU glue
 * (its recording callback's output) and the CPython glue (a recording handler's
 * text). Include after Python.h and glue.h; call tiling_init() in module init. */
#ifndef UTF8FUZZ_TILING_H
#define UTF8FUZZ_TILING_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "glue.h"

typedef struct {
    Py_ssize_t start, end;
    int truncated;
} Event;

typedef struct {
    int kind;  /* 0 char, 1 error */
    uint32_t value;
    Py_ssize_t start, end;
    int truncated;
} Tok;

/* utf8fuzz.outcome.Token, and its kinds */
static PyObject *Token, *S_char, *S_error;

static inline int tiling_init(void)
{
    if (!Token) {
        PyObject *outcome = PyImport_ImportModule("utf8fuzz.outcome");
        if (!outcome)
            return -1;
        Token = PyObject_GetAttrString(outcome, "Token");
        Py_DECREF(outcome);
        if (!Token)
            return -1;
    }
    if (!PyType_Check(Token) || !PyType_IsSubtype((PyTypeObject *)Token, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "utf8fuzz.outcome.Token is not a tuple type");
        return -1;
    }
    if ((!S_char && !(S_char = PyUnicode_InternFromString("char"))) ||
        (!S_error && !(S_error = PyUnicode_InternFromString("error"))))
        return -1;
    return 0;
}

static inline int utf8_encode(uint32_t cp, unsigned char *out)
{
    if (cp < 0x80) { out[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {  /* surrogates too, as CPython's surrogatepass writes them */
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* CESU-8 writes a supplementary code point as its UTF-16 pair, each half in three
 * bytes (Unicode Technical Report #26, section 2). */
static inline int cesu8_encode(uint32_t cp, unsigned char *out)
{
    if (cp <= 0xFFFF)
        return utf8_encode(cp, out);
    uint32_t v = cp - 0x10000;
    utf8_encode(0xD800 + (v >> 10), out);
    utf8_encode(0xDC00 + (v & 0x3FF), out + 3);
    return 6;
}

/* Events sorted as Python sorts (start, end, reason) tuples: "illegal" < "truncated".
 * The libraries report them in order already; insertion sort keeps that cheap. */
static inline int event_less(const Event *a, const Event *b)
{
    if (a->start != b->start) return a->start < b->start;
    if (a->end != b->end) return a->end < b->end;
    return a->truncated < b->truncated;
}

static inline void sort_events(Event *ev, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        Event x = ev[i];
        size_t j = i;
        while (j > 0 && event_less(&x, &ev[j - 1])) {
            ev[j] = ev[j - 1];
            j--;
        }
        ev[j] = x;
    }
}

/* Tokens for data[offset:] from its code points and error events; on a disagreement,
 * the message _tiling.tile raises, written to msg, and -1. */
static inline Py_ssize_t tile(const unsigned char *data, Py_ssize_t n, Py_ssize_t offset,
                              const uint32_t *cps, Py_ssize_t ncps, Event *ev, size_t nev,
                              int cesu8, Tok *out, char *msg, size_t msgsz)
{
    Py_ssize_t pos = offset, ci = 0, nt = 0;
    sort_events(ev, nev);
    for (size_t k = 0; k <= nev; k++) {
        int sentinel = k == nev;
        Py_ssize_t start = sentinel ? n : ev[k].start, end = sentinel ? n : ev[k].end;
        if (start < pos || end > n || (!sentinel && end <= start)) {
            snprintf(msg, msgsz, "error span [%zd,%zd) overlaps or leaves the input",
                     start, end);
            return -1;
        }
        while (pos < start) {
            if (ci >= ncps) {
                snprintf(msg, msgsz, "output ends but input bytes %zd..%zd were not reported",
                         pos, start);
                return -1;
            }
            uint32_t cp = cps[ci];
            unsigned char enc[8];
            int len = cesu8 ? cesu8_encode(cp, enc) : utf8_encode(cp, enc);
            if (pos + len > n || memcmp(data + pos, enc, (size_t)len) != 0) {
                snprintf(msg, msgsz, "output U+%04X does not encode the input at byte %zd",
                         (unsigned)cp, pos);
                return -1;
            }
            out[nt++] = (Tok){0, cp, pos, pos + len, 0};
            pos += len;
            ci++;
        }
        if (pos != start) {
            snprintf(msg, msgsz, "a character spans the error starting at byte %zd", start);
            return -1;
        }
        if (!sentinel) {
            out[nt++] = (Tok){1, 0, start, end, ev[k].truncated};
            pos = end;
        }
    }
    if (ci != ncps) {
        snprintf(msg, msgsz, "%zd output code point(s) left after the input ended",
                 ncps - ci);
        return -1;
    }
    return nt;
}

static inline PyObject *make_token(const Tok *t)
{
    PyObject *kind = t->kind ? S_error : S_char;
    PyObject *value = t->kind ? Py_None : PyLong_FromUnsignedLong(t->value);
    PyObject *start = PyLong_FromSsize_t(t->start), *end = PyLong_FromSsize_t(t->end);
    PyObject *reason = t->kind ? (t->truncated ? S_truncated : S_illegal) : Py_None;
    if (!value || !start || !end) {
        if (!t->kind) Py_XDECREF(value);
        Py_XDECREF(start);
        Py_XDECREF(end);
        return NULL;
    }
    Py_INCREF(kind);
    Py_INCREF(reason);
    if (t->kind) Py_INCREF(value);
    PyObject *items[5] = {kind, value, start, end, reason};
#if PY_VERSION_HEX < 0x030E0000
    /* Token is a NamedTuple (a tuple subclass with no slots of its own): what
     * tuple.__new__(Token, items) does, without building the argument tuple. */
    PyTypeObject *tp = (PyTypeObject *)Token;
    PyObject *tok = tp->tp_alloc(tp, 5);
    if (!tok) {
        for (int i = 0; i < 5; i++) Py_DECREF(items[i]);
        return NULL;
    }
    for (int i = 0; i < 5; i++) PyTuple_SET_ITEM(tok, i, items[i]);
    return tok;
#else
    PyObject *tup = PyTuple_New(5);
    if (!tup) {
        for (int i = 0; i < 5; i++) Py_DECREF(items[i]);
        return NULL;
    }
    for (int i = 0; i < 5; i++) PyTuple_SET_ITEM(tup, i, items[i]);
    PyObject *tok = PyObject_CallMethod((PyObject *)&PyTuple_Type, "__new__", "OO", Token, tup);
    Py_DECREF(tup);
    return tok;
#endif
}

/* What tile() made, for Python: a tuple of tokens, or (nt < 0) its complaint as a str. */
static inline PyObject *tiled_tuple(const Tok *toks, Py_ssize_t nt, const char *msg)
{
    if (nt < 0)
        return PyUnicode_FromString(msg);
    PyObject *res = PyTuple_New(nt);
    if (!res)
        return NULL;
    for (Py_ssize_t i = 0; i < nt; i++) {
        PyObject *tok = make_token(&toks[i]);
        if (!tok) {
            Py_DECREF(res);
            return NULL;
        }
        PyTuple_SET_ITEM(res, i, tok);
    }
    return res;
}

#endif
