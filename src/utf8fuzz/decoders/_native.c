/* utf8fuzz.decoders._native: the per-call glue of the ICU and iconv adapters.
 *
 * The adapters used to drive both libraries through ctypes; per 64-byte fuzz
 * input that cost tens of microseconds (buffer copies, string_at, a Python
 * callback per ICU error, up to five more ctypes iconv() calls per EILSEQ). Here
 * the same calls are made from C and only compact results cross back.
 *
 * ICU. The adapter loads two different ICUs (the system's and icu4py's bundled
 * copy) whose symbols carry version suffixes, so this file neither links ICU nor
 * includes its headers: Python loads each library with ctypes and passes the
 * function addresses and the converter pointer as integers. The few ICU types used
 * are declared below from ICU's public, stable C API (ucnv.h, ucnv_err.h).
 *
 * iconv. glibc's iconv is libc, so it is called through <iconv.h>; the
 * conversion descriptor is opened by the adapter (ctypes) and passed as an integer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profiles/packed_tokens.h"
#include "../small_tuples.h"

/* ---- ICU's public C API, declared here (ucnv_err.h, ucnv.h) ------------------ */

typedef int8_t UBool;
typedef int UErrorCode;  /* a C enum */
typedef uint16_t UChar;

typedef struct {
    uint16_t size;
    UBool flush;
    void *converter;
    const char *source;
    const char *sourceLimit;
    UChar *target;
    const UChar *targetLimit;
    int32_t *offsets;
} UConverterToUnicodeArgs;

enum { U_ZERO_ERROR = 0, U_TRUNCATED_CHAR_FOUND = 11 };
enum { UCNV_IRREGULAR = 2 };  /* reasons above it are reset/close/clone, not errors */

typedef void (*ToUCallback)(const void *context, UConverterToUnicodeArgs *args,
                            const char *codeUnits, int32_t length, int reason,
                            UErrorCode *err);
typedef void (*ToUnicodeFn)(void *cnv, UChar **target, const UChar *targetLimit,
                            const char **source, const char *sourceLimit,
                            int32_t *offsets, UBool flush, UErrorCode *err);
typedef void (*ResetFn)(void *cnv);
typedef void (*SetToUCallBackFn)(void *cnv, ToUCallback action, const void *context,
                                 ToUCallback *oldAction, const void **oldContext,
                                 UErrorCode *err);

/* ---- small growable arrays -------------------------------------------------- */

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

#define GROW(ptr, len, cap, stackbuf)                                               \
    do {                                                                            \
        if ((len) == (cap)) {                                                       \
            size_t ncap_ = (cap) * 2;                                               \
            void *np_ = ((ptr) == (stackbuf)) ? malloc(ncap_ * sizeof *(ptr))       \
                                              : realloc((ptr), ncap_ * sizeof *(ptr)); \
            if (!np_) { oom = 1; break; }                                          \
            if ((ptr) == (stackbuf)) memcpy(np_, (ptr), (len) * sizeof *(ptr));     \
            (ptr) = np_;                                                            \
            (cap) = ncap_;                                                          \
        }                                                                           \
    } while (0)

/* ---- the recording to-Unicode callback --------------------------------------- */

/* What the callback records for one ucnv_toUnicode call. ICU calls the callback for
 * each illegal, irregular or truncated sequence with args->source already past its
 * bytes; the whole input is one call with flush set, so the error's absolute end is
 * args->source minus the input's address. */
#define STACK_EV 64
typedef struct {
    const char *base;
    Py_ssize_t n;
    const UChar *dst;
    Event *ev;
    size_t nev, cap;
    Event ev_stack[STACK_EV];
    Py_ssize_t *cuts;  /* UTF-16 units written when each error was met */
    size_t ncuts, cutcap;
    Py_ssize_t cut_stack[STACK_EV];
    int mismatch;
    Py_ssize_t mm_start, mm_end;
    int oom;
} Rec;

static void record_error(const void *context, UConverterToUnicodeArgs *args,
                         const char *codeUnits, int32_t length, int reason,
                         UErrorCode *err)
{
    Rec *r = (Rec *)context;
    int oom = 0;
    if (reason > UCNV_IRREGULAR)
        return;
    Py_ssize_t end = args->source - r->base, start = end - length;
    /* ICU's error bytes must be the input's own (the last mismatch is reported) */
    if (start < 0 || end > r->n || length < 0 ||
        memcmp(r->base + start, codeUnits, (size_t)length) != 0) {
        r->mismatch = 1;
        r->mm_start = start;
        r->mm_end = end;
    }
    GROW(r->ev, r->nev, r->cap, r->ev_stack);
    GROW(r->cuts, r->ncuts, r->cutcap, r->cut_stack);
    if (oom) {
        r->oom = 1;  /* leave the error set: ICU stops, the caller reports it */
        return;
    }
    r->ev[r->nev++] = (Event){start, end, *err == U_TRUNCATED_CHAR_FOUND};
    /* UTF-16 units on either side of an error must not be paired (a lone D83F,
     * an error, a lone DC00 is not U+1FC00): remember where the output stood. */
    r->cuts[r->ncuts++] = args->target ? (Py_ssize_t)(args->target - r->dst) : 0;
    *err = U_ZERO_ERROR;  /* skip: nothing written, go on */
}

static void rec_free(Rec *r)
{
    if (r->ev != r->ev_stack) free(r->ev);
    if (r->cuts != r->cut_stack) free(r->cuts);
}

/* ---- tiling (the same walk as utf8fuzz.decoders._tiling.tile) ------------------ */

static int utf8_encode(uint32_t cp, unsigned char *out)
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
static int cesu8_encode(uint32_t cp, unsigned char *out)
{
    if (cp <= 0xFFFF)
        return utf8_encode(cp, out);
    uint32_t v = cp - 0x10000;
    utf8_encode(0xD800 + (v >> 10), out);
    utf8_encode(0xDC00 + (v & 0x3FF), out + 3);
    return 6;
}

/* Events sorted as Python sorts (start, end, reason) tuples: "illegal" < "truncated".
 * ICU reports them in order already; insertion sort keeps that cheap. */
static int event_less(const Event *a, const Event *b)
{
    if (a->start != b->start) return a->start < b->start;
    if (a->end != b->end) return a->end < b->end;
    return a->truncated < b->truncated;
}

static void sort_events(Event *ev, size_t n)
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
 * the message tile() raises, written to msg, and -1. */
static Py_ssize_t tile(const unsigned char *data, Py_ssize_t n, Py_ssize_t offset,
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

/* UTF-16 units to code points, as Python's utf-16-le with surrogatepass decodes
 * each piece between two cuts: a high surrogate then a low one is a pair, any other
 * surrogate stays alone, and nothing pairs across a cut. */
static Py_ssize_t utf16_codepoints(const UChar *u, Py_ssize_t nu, const Py_ssize_t *cuts,
                                   size_t ncuts, uint32_t *out)
{
    Py_ssize_t no = 0, a = 0;
    for (size_t k = 0; k <= ncuts; k++) {
        Py_ssize_t b = k < ncuts ? cuts[k] : nu;
        if (b > nu) b = nu;
        for (Py_ssize_t i = a; i < b; i++) {
            uint32_t c = u[i];
            if (c >= 0xD800 && c <= 0xDBFF && i + 1 < b && u[i + 1] >= 0xDC00 &&
                u[i + 1] <= 0xDFFF) {
                out[no++] = 0x10000 + ((c - 0xD800) << 10) + (u[i + 1] - 0xDC00);
                i++;
            } else {
                out[no++] = c;
            }
        }
        /* Python slices units[a:b] for consecutive cut pairs; a later, smaller
         * cut (never seen) would give an empty piece */
        a = b;
    }
    return no;
}

static PyObject *span(Py_ssize_t a, Py_ssize_t b)
{
    return ssize_tuple(a, b, NULL); /* small_tuples.h */
}

/* ---- module state: Token and the interned strings ---------------------------- */

static PyObject *Token, *S_char, *S_error, *S_illegal, *S_truncated, *S_reserved;
static PyObject *S_surrogateescape, *S_no_spans;
static PyObject *K_strict, *K_spans, *K_reason, *K_replace, *K_tokens, *K_ignore, *K_escape;

static PyObject *make_token(const Tok *t)
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
static PyObject *tiled_tuple(const Tok *toks, Py_ssize_t nt, const char *msg)
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

/* ---- ICU ---------------------------------------------------------------------- */

static int get_ptr(PyObject *o, void **out)
{
    *out = PyLong_AsVoidPtr(o);
    return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

/* The result of one recorded conversion, tiled. */
typedef struct {
    Tok *toks;
    Py_ssize_t ntoks;
    Tok tok_stack[128];
} Tiled;

static void tiled_free(Tiled *t)
{
    if (t->toks != t->tok_stack) free(t->toks);
}

/* Returns 0 with *tiled filled; 1 with *result set to what the caller returns
 * instead (an int ICU error code, or a str message for TilingError); -1 with a
 * Python exception set. */
static int icu_convert(PyObject *const *args, Py_ssize_t nargs, Tiled *tiled,
                       PyObject **result)
{
    void *to_unicode, *reset, *set_cb, *cnv;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "expected (ucnv_toUnicode, ucnv_reset, ucnv_setToUCallBack, "
                        "converter, data, cesu8)");
        return -1;
    }
    if (get_ptr(args[0], &to_unicode) || get_ptr(args[1], &reset) ||
        get_ptr(args[2], &set_cb) || get_ptr(args[3], &cnv))
        return -1;
    if (!to_unicode || !reset || !set_cb || !cnv) {
        PyErr_SetString(PyExc_ValueError, "a null ICU function or converter");
        return -1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[4], &view, PyBUF_SIMPLE) < 0)
        return -1;
    int cesu8 = PyObject_IsTrue(args[5]);
    if (cesu8 < 0) {
        PyBuffer_Release(&view);
        return -1;
    }
    const char *src = view.buf;
    Py_ssize_t n = view.len;
    /* Each input byte gives at most one UTF-16 unit (a 4-byte form gives two):
     * n + 8 units, as the ctypes adapter allowed. */
    Py_ssize_t room = n + 8;
    UChar dst_stack[256];
    uint32_t cps_stack[256];
    UChar *dst = room <= 256 ? dst_stack : malloc((size_t)room * sizeof(UChar));
    uint32_t *cps = room <= 256 ? cps_stack : malloc((size_t)room * sizeof(uint32_t));
    Rec rec = {.base = src, .n = n, .dst = dst, .ev = NULL, .cap = STACK_EV,
               .cutcap = STACK_EV};
    rec.ev = rec.ev_stack;
    rec.cuts = rec.cut_stack;
    tiled->toks = tiled->tok_stack;
    int ret = -1;
    if (!dst || !cps) {
        PyErr_NoMemory();
        goto done;
    }
    UErrorCode err = U_ZERO_ERROR;
    ((ResetFn)reset)(cnv);
    ((SetToUCallBackFn)set_cb)(cnv, record_error, &rec, NULL, NULL, &err);
    if (err > U_ZERO_ERROR) {
        *result = PyLong_FromLong(err);
        ret = *result ? 1 : -1;
        goto done;
    }
    UChar *t = dst;
    const char *s = src;
    ((ToUnicodeFn)to_unicode)(cnv, &t, dst + room, &s, src + n, NULL, 1, &err);
    /* the context points at this stack frame: take it back from the converter */
    UErrorCode err2 = U_ZERO_ERROR;
    ((SetToUCallBackFn)set_cb)(cnv, record_error, NULL, NULL, NULL, &err2);
    if (rec.oom) {
        PyErr_NoMemory();
        goto done;
    }
    if (err > U_ZERO_ERROR) {
        *result = PyLong_FromLong(err);
        ret = *result ? 1 : -1;
        goto done;
    }
    char msg[160];
    if (rec.mismatch) {
        snprintf(msg, sizeof msg, "ICU's error bytes at [%zd,%zd) are not the input's",
                 rec.mm_start, rec.mm_end);
        *result = PyUnicode_FromString(msg);
        ret = *result ? 1 : -1;
        goto done;
    }
    Py_ssize_t ncps = utf16_codepoints(dst, t - dst, rec.cuts, rec.ncuts, cps);
    size_t maxtoks = (size_t)ncps + rec.nev;
    if (maxtoks > sizeof tiled->tok_stack / sizeof(Tok)) {
        tiled->toks = malloc(maxtoks * sizeof(Tok));
        if (!tiled->toks) {
            tiled->toks = tiled->tok_stack;
            PyErr_NoMemory();
            goto done;
        }
    }
    tiled->ntoks = tile((const unsigned char *)src, n, 0, cps, ncps, rec.ev, rec.nev, cesu8,
                        tiled->toks, msg, sizeof msg);
    if (tiled->ntoks < 0) {
        *result = PyUnicode_FromString(msg);
        ret = *result ? 1 : -1;
        goto done;
    }
    ret = 0;
done:
    if (ret != 0)
        tiled_free(tiled);
    rec_free(&rec);
    if (dst != dst_stack) free(dst);
    if (cps != cps_stack) free(cps);
    PyBuffer_Release(&view);
    return ret;
}

PyDoc_STRVAR(icu_decode_doc,
"icu_decode(to_unicode, reset, set_to_u_callback, converter, data, cesu8)\n\n"
"One ucnv_toUnicode call over data with a recording callback, tiled. Returns the\n"
"tuple of Tokens; or an int (ICU's error code) when ICU failed; or a str, the\n"
"message of the TilingError the caller raises.");

static PyObject *icu_decode(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    Tiled tiled;
    PyObject *result = NULL;
    int r = icu_convert(args, nargs, &tiled, &result);
    if (r != 0)
        return r < 0 ? NULL : result;
    PyObject *out = PyTuple_New(tiled.ntoks);
    for (Py_ssize_t i = 0; out && i < tiled.ntoks; i++) {
        PyObject *tok = make_token(&tiled.toks[i]);
        if (!tok) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, i, tok);
    }
    tiled_free(&tiled);
    return out;
}

PyDoc_STRVAR(icu_screen_doc,
"icu_screen(to_unicode, reset, set_to_u_callback, converter, data, cesu8)\n\n"
"The same conversion as icu_decode, as a complete screen: {'tokens': the tokens\n"
"packed (bytes, see utf8fuzz.outcome.pack_tokens)}, every view following from them;\n"
"or None where icu_decode would not return tokens.");

/* Only the tokens: the differ compares them first, and when they are equal every
 * other view is (all are made from them); when they differ, the tokens name the
 * difference. Building the six other views cost a str or a tuple each, made and
 * freed on every fuzz input for nothing. */
static PyObject *icu_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    Tiled tiled;
    PyObject *result = NULL;
    int r = icu_convert(args, nargs, &tiled, &result);
    if (r != 0) {
        if (r < 0)
            return NULL;
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    PyObject *d = NULL;
    PyObject *packed = PyBytes_FromStringAndSize(NULL, tiled.ntoks * (Py_ssize_t)sizeof(packed_tok));
    if (packed) {
        packed_tok *pk = (packed_tok *)PyBytes_AS_STRING(packed);
        for (Py_ssize_t i = 0; i < tiled.ntoks; i++) {
            const Tok *t = &tiled.toks[i];
            pk[i] = (packed_tok){
                t->kind ? PK_ERROR | (int64_t)(t->truncated ? PR_TRUNCATED : PR_ILLEGAL) << 8
                        : PK_CHAR,
                t->start, t->end, t->kind ? -1 : (int64_t)t->value};
        }
        if ((d = PyDict_New()) && PyDict_SetItem(d, K_tokens, packed) < 0)
            Py_CLEAR(d);
        Py_DECREF(packed);
    }
    tiled_free(&tiled);
    return d;
}

PyDoc_STRVAR(tile_doc,
"tile(data, codepoints, events, cesu8)\n\n"
"The C walk icu_decode tiles with, on given code points (each <= 0x10FFFF) and\n"
"(start, end, reason) events: the tuple of Tokens, or the str message of the\n"
"TilingError. For tests, which hold it equal to utf8fuzz.decoders._tiling.tile.");

static PyObject *tile_entry(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "expected (data, codepoints, events, cesu8)");
        return NULL;
    }
    int cesu8 = PyObject_IsTrue(args[3]);
    if (cesu8 < 0)
        return NULL;
    PyObject *cpl = PySequence_Fast(args[1], "codepoints must be a sequence");
    if (!cpl)
        return NULL;
    PyObject *evl = PySequence_Fast(args[2], "events must be a sequence");
    if (!evl) {
        Py_DECREF(cpl);
        return NULL;
    }
    Py_buffer view = {0};
    Py_ssize_t ncps = PySequence_Fast_GET_SIZE(cpl), nev = PySequence_Fast_GET_SIZE(evl);
    uint32_t *cps = malloc(((size_t)ncps + 1) * sizeof *cps);
    Event *ev = malloc(((size_t)nev + 1) * sizeof *ev);
    Tok *toks = malloc(((size_t)ncps + (size_t)nev + 1) * sizeof *toks);
    PyObject *res = NULL;
    if (!cps || !ev || !toks) {
        PyErr_NoMemory();
        goto done;
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        view.obj = NULL;
        goto done;
    }
    for (Py_ssize_t i = 0; i < ncps; i++) {
        unsigned long v = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(cpl, i));
        if (PyErr_Occurred())
            goto done;
        if (v > 0x10FFFF) {
            PyErr_SetString(PyExc_ValueError, "a code point above U+10FFFF");
            goto done;
        }
        cps[i] = (uint32_t)v;
    }
    for (Py_ssize_t i = 0; i < nev; i++) {
        PyObject *reason;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(evl, i), "nnU", &ev[i].start,
                              &ev[i].end, &reason))
            goto done;
        ev[i].truncated = PyUnicode_CompareWithASCIIString(reason, "truncated") == 0;
    }
    char msg[160];
    Py_ssize_t nt = tile(view.buf, view.len, 0, cps, ncps, ev, (size_t)nev, cesu8, toks, msg,
                         sizeof msg);
    res = tiled_tuple(toks, nt, msg);
done:
    if (view.obj)
        PyBuffer_Release(&view);
    free(cps);
    free(ev);
    free(toks);
    Py_DECREF(cpl);
    Py_DECREF(evl);
    return res;
}

PyDoc_STRVAR(tile_text_doc,
"tile_text(data, text, events, offset)\n\n"
"utf8fuzz.decoders._tiling.tile_text in C: tokens for data[offset:] from the str a\n"
"recording CPython codec returned and its (start, end, reason) events (absolute).\n"
"Returns the tuple of Tokens, or the str message of the TilingError.");

/* The CPython adapters' full path tiles every sampled fuzz input; in Python that was
 * about as costly as the decode itself. The code points are read from the str as
 * they are, and the events are the recorder's (start, end, reason) tuples. */
static PyObject *tile_text_entry(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyBytes_Check(args[0]) || !PyUnicode_Check(args[1]) ||
        !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "expected (bytes, str, list of events, offset)");
        return NULL;
    }
    Py_ssize_t offset = PyLong_AsSsize_t(args[3]);
    if (offset == -1 && PyErr_Occurred())
        return NULL;
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]);
    PyObject *text = args[1], *evl = args[2];
    Py_ssize_t ncps = PyUnicode_GET_LENGTH(text), nev = PyList_GET_SIZE(evl);
    if (offset < 0 || offset > n) {
        PyErr_SetString(PyExc_ValueError, "offset outside the input");
        return NULL;
    }
    /* 64-byte fuzz inputs fit the stack buffers */
    uint32_t cps_stack[128];
    Event ev_stack[64];
    Tok tok_stack[192];
    uint32_t *cps = ncps <= 128 ? cps_stack : malloc((size_t)ncps * sizeof *cps);
    Event *ev = nev <= 64 ? ev_stack : malloc((size_t)nev * sizeof *ev);
    size_t ntok = (size_t)ncps + (size_t)nev;
    Tok *toks = ntok <= 192 ? tok_stack : malloc(ntok * sizeof *toks);
    PyObject *res = NULL;
    if (!cps || !ev || !toks) {
        PyErr_NoMemory();
        goto done;
    }
    int kind = PyUnicode_KIND(text);
    const void *udata = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < ncps; i++)
        cps[i] = PyUnicode_READ(kind, udata, i);
    for (Py_ssize_t i = 0; i < nev; i++) {
        PyObject *t = PyList_GET_ITEM(evl, i), *reason;
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3) {
            PyErr_SetString(PyExc_TypeError, "an event is not a (start, end, reason) tuple");
            goto done;
        }
        ev[i].start = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 0));
        ev[i].end = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 1));
        if (PyErr_Occurred())
            goto done;
        reason = PyTuple_GET_ITEM(t, 2);
        /* the recorder's literals are interned: identity first */
        if (reason == S_truncated || reason == S_illegal) {
            ev[i].truncated = reason == S_truncated;
        } else if (PyUnicode_Check(reason)) {
            ev[i].truncated = PyUnicode_CompareWithASCIIString(reason, "truncated") == 0;
        } else {
            PyErr_SetString(PyExc_TypeError, "an event's reason is not a str");
            goto done;
        }
    }
    char msg[160];
    Py_ssize_t nt = tile(data, n, offset, cps, ncps, ev, (size_t)nev, 0, toks, msg,
                         sizeof msg);
    res = tiled_tuple(toks, nt, msg);
done:
    if (cps && cps != cps_stack) free(cps);
    if (ev && ev != ev_stack) free(ev);
    if (toks && toks != tok_stack) free(toks);
    return res;
}

/* ---- CPython's recording error handlers ------------------------------------- */

/* The CPython adapters' full path records every error of every sampled fuzz input
 * (about 20 on a 64-byte one) through a handler registered with codecs; as a Python
 * function it cost more than the codec's decode itself. These do what
 * utf8fuzz.decoders.cpython's Python handlers do: append (start, end, reason) to the
 * module's list `recorded` and return ("", end), nothing in place of the error, go
 * on after it. record_based also adds `base` (set by record_base()) to the offsets
 * and appends the codec's own (start, end) to `recorded_raw`. */
static PyObject *recorded, *recorded_raw, *S_empty, *S_end_of_data;
static Py_ssize_t record_base_value;

static PyObject *record_one(PyObject *exc, int raw)
{
    if (!PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_UnicodeDecodeError)) {
        if (PyExceptionInstance_Check(exc))
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);  /* as `raise exc` */
        else
            PyErr_SetString(PyExc_TypeError, "the handler expects a UnicodeDecodeError");
        return NULL;
    }
    Py_ssize_t start, end;
    if (PyUnicodeDecodeError_GetStart(exc, &start) < 0 ||
        PyUnicodeDecodeError_GetEnd(exc, &end) < 0)
        return NULL;
    PyObject *reason = PyUnicodeDecodeError_GetReason(exc);
    if (!reason)
        return NULL;
    int eq = PyUnicode_Compare(reason, S_end_of_data);
    Py_DECREF(reason);
    if (eq == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t b = raw ? record_base_value : 0;
    PyObject *ev = ssize_tuple(b + start, b + end, eq == 0 ? S_truncated : S_illegal);
    if (!ev)
        return NULL;
    int r = PyList_Append(recorded, ev);
    Py_DECREF(ev);
    if (r < 0)
        return NULL;
    if (raw) {
        PyObject *rw = span(start, end);
        if (!rw)
            return NULL;
        r = PyList_Append(recorded_raw, rw);
        Py_DECREF(rw);
        if (r < 0)
            return NULL;
    }
    PyObject *at = PyLong_FromSsize_t(end);
    PyObject *res = at ? PyTuple_Pack(2, S_empty, at) : NULL;
    Py_XDECREF(at);
    return res;
}

PyDoc_STRVAR(record_doc,
"record(exc)\n\n"
"A codecs error handler: appends (exc.start, exc.end, reason) to\n"
"`recorded` (reason 'truncated' for CPython's 'unexpected end of data', else\n"
"'illegal') and returns ('', exc.end). Any other exception is raised.");

static PyObject *record(PyObject *mod, PyObject *exc)
{
    return record_one(exc, 0);
}

PyDoc_STRVAR(record_based_doc,
"record_based(exc)\n\n"
"record(exc) with base (record_base()) added to the offsets, and (exc.start,\n"
"exc.end) appended to `recorded_raw`.");

static PyObject *record_based(PyObject *mod, PyObject *exc)
{
    return record_one(exc, 1);
}

PyDoc_STRVAR(record_pass_doc,
"record_pass(exc)\n\n"
"surrogatepass, recording what it cannot pass: CPython's own surrogatepass handler\n"
"on an error starting with ED (the lead byte of every encoded surrogate), record(exc)\n"
"on any other error and on one surrogatepass raises for.");

static PyObject *surrogatepass_handler;

static PyObject *record_pass(PyObject *mod, PyObject *exc)
{
    if (PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_UnicodeDecodeError)) {
        /* anything but ED surrogatepass would raise for, at the cost of an exception */
        Py_ssize_t start;
        PyObject *obj = PyUnicodeDecodeError_GetObject(exc);
        if (!obj)
            return NULL;
        int ed = PyUnicodeDecodeError_GetStart(exc, &start) == 0 &&
                 start < PyBytes_GET_SIZE(obj) &&
                 (unsigned char)PyBytes_AS_STRING(obj)[start] == 0xED;
        Py_DECREF(obj);
        if (!ed)
            return PyErr_Occurred() ? NULL : record_one(exc, 0);
    }
    PyObject *r = PyObject_CallOneArg(surrogatepass_handler, exc);
    if (r || !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        return r;
    PyErr_Clear();  /* it raised the error itself: record it instead */
    return record_one(exc, 0);
}

PyDoc_STRVAR(record_base_doc,
"record_base(base)\n\n"
"The absolute offset of the first byte of what the codec decodes next (added to\n"
"the offsets record_based appends); 0 after import.");

static PyObject *record_base(PyObject *mod, PyObject *arg)
{
    Py_ssize_t b = PyLong_AsSsize_t(arg);
    if (b == -1 && PyErr_Occurred())
        return NULL;
    record_base_value = b;
    Py_RETURN_NONE;
}

/* ---- CPython's one-shot screens ----------------------------------------------- */

/* What a screen whose call raised returns: None, the full path telling (a crash
 * outcome) - except when memory ran out, which is raised: the differ's loop turns
 * it into None itself, and tests can tell it from an answer. */
static PyObject *screen_failed(void)
{
    if (PyErr_ExceptionMatches(PyExc_Exception) && !PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return NULL;
}

/* _no_error(text) of cpython.py: a decode that met no error - its text is every text
 * view, and there are no spans. */
static PyObject *no_error(PyObject *text)
{
    PyObject *d = PyDict_New();
    if (d && (PyDict_SetItem(d, K_replace, text) < 0 || PyDict_SetItem(d, K_ignore, text) < 0 ||
              PyDict_SetItem(d, K_escape, text) < 0 || PyDict_SetItem(d, K_spans, S_no_spans) < 0 ||
              PyDict_SetItem(d, K_strict, Py_None) < 0 || PyDict_SetItem(d, K_reason, Py_None) < 0))
        Py_CLEAR(d);
    return d;
}

/* The UnicodeDecodeError being raised, taken: its span, offsets shifted by base (a
 * new tuple), and its reason as a view says it (truncated for CPython's "unexpected
 * end of data", else illegal; a new reference). 0 with the error cleared - only the
 * values are kept, not the exception (whose traceback would hold frames); -1 with
 * an exception set. */
static int take_decode_error(Py_ssize_t base, PyObject **span_out, PyObject **reason_out)
{
    PyObject *type, *exc, *tb;
    PyErr_Fetch(&type, &exc, &tb);
    PyErr_NormalizeException(&type, &exc, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    Py_ssize_t a, b;
    PyObject *reason = NULL;
    int ok = PyUnicodeDecodeError_GetStart(exc, &a) == 0 &&
             PyUnicodeDecodeError_GetEnd(exc, &b) == 0 &&
             (reason = PyUnicodeDecodeError_GetReason(exc));
    if (ok) {
        int eq = PyUnicode_Compare(reason, S_end_of_data);
        ok = !(eq == -1 && PyErr_Occurred()) && (*span_out = span(base + a, base + b));
        if (ok)
            *reason_out = Py_NewRef(eq == 0 ? S_truncated : S_illegal);
    }
    Py_XDECREF(reason);
    Py_DECREF(exc);
    return ok ? 0 : -1;
}

/* The UnicodeDecodeError being raised as {"strict": (start, end), "reason": ...}, the
 * error cleared; NULL with the error kept when it is anything else. */
static PyObject *first_error_views(void)
{
    if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        return NULL;
    PyObject *sp, *reason, *d = NULL;
    if (take_decode_error(0, &sp, &reason) < 0)
        return NULL;
    if ((d = PyDict_New()) &&
        (PyDict_SetItem(d, K_strict, sp) < 0 || PyDict_SetItem(d, K_reason, reason) < 0))
        Py_CLEAR(d);
    Py_DECREF(sp);
    Py_DECREF(reason);
    return d;
}

PyDoc_STRVAR(codec_screen_doc,
"codec_screen(how, errors, view, data)\n\n"
"A screen of utf8fuzz.decoders.cpython, in C, with CPython's own UTF-8 codec\n"
"(PyUnicode_DecodeUTF8, what bytes.decode('utf-8', errors) calls). how 0: decode\n"
"with errors (strict or surrogatepass) - every text view when it succeeds, else the\n"
"error's strict span and reason (Strict.screen, SurrogatePass.screen); 1: {view:\n"
"the text} (Handler.screen); 2: the replace text and, when it has a U+FFFD, the\n"
"first error of a strict decode (Recording.screen). None on any other exception.");

/* Called for five decoders on every fuzz input: as Python methods their frames and
 * try blocks cost about as much as the decodes themselves. */
static PyObject *codec_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    long how;
    if (nargs != 4 || (how = PyLong_AsLong(args[0])) < 0 || how > 2 || !PyUnicode_Check(args[1]) ||
        !PyBytes_Check(args[3])) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "expected (0, 1 or 2, errors, view, bytes)");
        return NULL;
    }
    const char *errors = PyUnicode_AsUTF8(args[1]);
    if (!errors)
        return NULL;
    const char *p = PyBytes_AS_STRING(args[3]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[3]);
    PyObject *text = PyUnicode_DecodeUTF8(p, n, errors), *res = NULL;
    if (!text) {
        if (how == 0 && (res = first_error_views()))
            return res;
        goto other;
    }
    if (how == 1) {
        res = PyDict_New();
        if (res && PyDict_SetItem(res, args[2], text) < 0)
            Py_CLEAR(res);
    } else if (how == 0 ||
               PyUnicode_FindChar(text, 0xFFFD, 0, PyUnicode_GET_LENGTH(text), 1) < 0) {
        res = no_error(text);  /* no U+FFFD: no error was met (each gives one) */
    } else {
        PyObject *strict = PyUnicode_DecodeUTF8(p, n, "strict");
        if (strict) {
            Py_DECREF(strict);
            res = no_error(text);  /* the U+FFFD was the input's */
        } else if ((res = first_error_views())) {
            if (PyDict_SetItem(res, K_replace, text) < 0)
                Py_CLEAR(res);
        }
    }
    Py_DECREF(text);
    if (res)
        return res;
other:
    return screen_failed();
}

/* ---- the CPython incremental decoder, written out ------------------------------- */

/* One step of the written-out BufferedIncrementalDecoder: the next cut of
 * input_splits (or the flush, final, once the input is used up), and decode
 * (codecs.utf_8_decode) on (held-back bytes + chunk), data[*base:cut], with errors.
 * Returns the (str, used) tuple decode gave, with *chunk its input (a new
 * reference), *cut and *final set; NULL with an exception set. The caller adds
 * used to *base. Both loops below run on every fuzz input (about 15 chunks on a
 * 64-byte one): the codec calls stay the same Python-level calls, only the loop
 * around them is C. */
static PyObject *incremental_step(PyObject *decode, PyObject *data, PyObject *errors,
                                  Py_ssize_t base, Py_ssize_t *prev, PyObject **chunk,
                                  PyObject **final, int *flushed)
{
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t n = PyBytes_GET_SIZE(data), cut;
    if (*prev < n) {
        cut = *prev + 1 + (p[*prev] & 3);  /* input_splits' rule */
        if (cut > n) cut = n;
    } else {
        cut = n;  /* the flush: what is held back, final */
        *flushed = 1;
    }
    *final = cut == n ? Py_True : Py_False;
    *chunk = PyBytes_FromStringAndSize((const char *)p + base, cut - base);
    if (!*chunk)
        return NULL;
    PyObject *cargs[3] = {*chunk, errors, *final};
    PyObject *r = PyObject_Vectorcall(decode, cargs, 3, NULL);
    if (r && (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 ||
              !PyUnicode_Check(PyTuple_GET_ITEM(r, 0)) || !PyLong_Check(PyTuple_GET_ITEM(r, 1)))) {
        PyErr_SetString(PyExc_TypeError, "decode did not return (str, int)");
        Py_CLEAR(r);
    }
    if (!r)
        Py_CLEAR(*chunk);
    *prev = cut;
    return r;
}

PyDoc_STRVAR(incremental_screen_doc,
"incremental_screen(decode, data)\n\n"
"utf8fuzz.decoders.cpython.Incremental._screen_buffered for input_splits' cuts, in C: the\n"
"written-out incremental decoder, decode (codecs.utf_8_decode) called on (held-back\n"
"bytes + chunk) in replace mode for each chunk of input_splits(data) and the flush,\n"
"the first call whose text has a U+FFFD repeated in strict mode. Returns (text,\n"
"None) or (text, (start, end), reason) for the first error, offsets absolute.");

static PyObject *incremental_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "expected (decode, bytes)");
        return NULL;
    }
    PyObject *decode = args[0], *data = args[1];
    Py_ssize_t base = 0, prev = 0;
    PyObject *parts = PyList_New(0), *first = NULL, *reason = NULL, *res = NULL;
    if (!parts)
        return NULL;
    for (int flushed = 0; !flushed;) {
        PyObject *chunk, *fin;
        Py_ssize_t used;
        PyObject *r = incremental_step(decode, data, K_replace, base, &prev, &chunk, &fin,
                                       &flushed);
        if (!r)
            goto done;
        PyObject *text = PyTuple_GET_ITEM(r, 0);
        int bad = (used = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1))) == -1 && PyErr_Occurred();
        bad = bad || PyList_Append(parts, text) < 0;
        if (!bad && !first &&
            PyUnicode_FindChar(text, 0xFFFD, 0, PyUnicode_GET_LENGTH(text), 1) >= 0) {
            PyObject *sargs[3] = {chunk, K_strict, fin};
            PyObject *ok = PyObject_Vectorcall(decode, sargs, 3, NULL);
            if (ok) {
                Py_DECREF(ok);  /* the U+FFFD was the input's */
            } else if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                bad = take_decode_error(base, &first, &reason) < 0;
            } else {
                bad = 1;
            }
        }
        Py_DECREF(r);
        Py_DECREF(chunk);
        if (bad)
            goto done;
        base += used;
    }
    PyObject *text = PyUnicode_Join(S_empty, parts);
    if (!text)
        goto done;
    res = first ? PyTuple_Pack(3, text, first, reason) : PyTuple_Pack(2, text, Py_None);
    Py_DECREF(text);
done:
    Py_DECREF(parts);
    Py_XDECREF(first);
    Py_XDECREF(reason);
    return res;
}

PyDoc_STRVAR(incremental_decode_doc,
"incremental_decode(decode, data, errors)\n\n"
"Incremental.run's feeding loop for input_splits' cuts, in C: the written-out\n"
"incremental decoder, decode (codecs.utf_8_decode) on (held-back bytes + chunk)\n"
"with the error handler named errors (the based recording handler), record_base()\n"
"set to each call's absolute start first. Returns the joined text.");

/* The full outcome's loop: in Python it cost ten times the codec calls' own time
 * on the fuzz loop's sampled inputs (a method call per chunk, a getstate() per
 * base). */
static PyObject *incremental_decode(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[1]) || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "expected (decode, bytes, str)");
        return NULL;
    }
    Py_ssize_t base = 0, prev = 0;
    PyObject *parts = PyList_New(0), *res = NULL;
    if (!parts)
        return NULL;
    for (int flushed = 0; !flushed;) {
        PyObject *chunk, *fin;
        Py_ssize_t used;
        record_base_value = base;
        PyObject *r = incremental_step(args[0], args[1], args[2], base, &prev, &chunk, &fin,
                                       &flushed);
        if (!r)
            goto done;
        Py_DECREF(chunk);
        int bad = (used = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1))) == -1 && PyErr_Occurred();
        bad = bad || PyList_Append(parts, PyTuple_GET_ITEM(r, 0)) < 0;
        Py_DECREF(r);
        if (bad)
            goto done;
        base += used;
    }
    res = PyUnicode_Join(S_empty, parts);
done:
    Py_DECREF(parts);
    return res;
}

/* ---- the fast path's complete screen ------------------------------------------- */

/* A span (start, end) as two Py_ssize_t; 0 on success, -1 when o is not one. */
static int read_span(PyObject *o, Py_ssize_t *a, Py_ssize_t *b)
{
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) < 2)
        return -1;
    *a = PyLong_AsSsize_t(PyTuple_GET_ITEM(o, 0));
    if (*a == -1 && PyErr_Occurred())
        return -1;
    *b = PyLong_AsSsize_t(PyTuple_GET_ITEM(o, 1));
    return *b == -1 && PyErr_Occurred() ? -1 : 0;
}

enum { FR_NONE = 0, FR_ILLEGAL = PR_ILLEGAL, FR_TRUNCATED = PR_TRUNCATED, FR_RESERVED = 3 };

/* _Fast._strict: the first error's span and reason (FR_*) from strict(data), checked
 * against validate(data) when there is one. Returns 1 with the values; 0 when the
 * two disagree or strict gave something else (the full outcome tells); -1 with an
 * exception set. */
static int fast_strict(PyObject *strict, PyObject *validate, PyObject *data, int has_reserved,
                       Py_ssize_t *a, Py_ssize_t *b, int *reason)
{
    PyObject *first = PyObject_CallOneArg(strict, data);
    if (!first)
        return -1;
    int ok = 1;
    *reason = FR_NONE;
    if (first != Py_None) {
        if (read_span(first, a, b) < 0 || PyTuple_GET_SIZE(first) != 3 ||
            !PyUnicode_Check(PyTuple_GET_ITEM(first, 2))) {
            ok = 0;
        } else {
            PyObject *why = PyTuple_GET_ITEM(first, 2);
            *reason = PyUnicode_Compare(why, S_end_of_data) == 0 ? FR_TRUNCATED
                      : has_reserved && PyUnicode_CompareWithASCIIString(
                            why, "reserved sequence (FE/FF)") == 0 ? FR_RESERVED
                      : FR_ILLEGAL;
        }
    }
    if (ok && validate != Py_None) {
        PyObject *v = PyObject_CallOneArg(validate, data);
        if (!v) {
            Py_DECREF(first);
            return -1;
        }
        Py_ssize_t va, vb;
        if (v == Py_None)
            ok = first == Py_None;
        else
            ok = first != Py_None && read_span(v, &va, &vb) == 0 &&
                 PyTuple_GET_SIZE(v) == 2 && va == *a && vb == *b;
        Py_DECREF(v);
    }
    Py_DECREF(first);
    if (PyErr_Occurred())
        return -1;
    return ok;
}

/* A text view as the fast path gives it: a str, or (a Corrected UTF-8 text above
 * U+10FFFF) an array of 4-byte code points. */
typedef struct {
    PyObject *obj;
    Py_buffer buf; /* the array's, when obj is not a str */
    int kind;
    const void *data;
    Py_ssize_t len;
} Units;

static Py_UCS4 unit_at(const Units *u, Py_ssize_t i)
{
    return u->kind ? PyUnicode_READ(u->kind, u->data, i) : ((const uint32_t *)u->data)[i];
}

/* Reads what text(data, mode) gave, else array(data, mode) when text gave None and
 * there is an array function. Returns 1, 0 when it is neither a str nor an array of
 * 4-byte items (the full outcome tells), -1 with an exception set. */
static int get_units(PyObject *text, PyObject *array, PyObject *data, PyObject *mode, Units *u)
{
    PyObject *targs[2] = {data, mode};
    if (!(u->obj = PyObject_Vectorcall(text, targs, 2, NULL)))
        return -1;
    if (PyUnicode_Check(u->obj)) {
        u->kind = PyUnicode_KIND(u->obj);
        u->data = PyUnicode_DATA(u->obj);
        u->len = PyUnicode_GET_LENGTH(u->obj);
        return 1;
    }
    if (u->obj != Py_None || array == Py_None)
        return 0;
    Py_SETREF(u->obj, PyObject_Vectorcall(array, targs, 2, NULL));
    if (!u->obj)
        return -1;
    if (PyObject_GetBuffer(u->obj, &u->buf, PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (u->buf.itemsize != 4 || u->buf.len % 4) {
        PyBuffer_Release(&u->buf);
        return 0;
    }
    u->kind = 0;
    u->data = u->buf.buf;
    u->len = u->buf.len / 4;
    return 1;
}

static void units_release(Units *u)
{
    if (u->obj && !u->kind && u->data)
        PyBuffer_Release(&u->buf);
    Py_XDECREF(u->obj);
}

/* A text view for the screen: the str itself, or the array's code points as the
 * tuple of ints Outcome.view gives. */
static PyObject *units_view(const Units *u)
{
    if (u->kind)
        return Py_NewRef(u->obj);
    PyObject *t = PyTuple_New(u->len);
    for (Py_ssize_t i = 0; t && i < u->len; i++) {
        PyObject *v = PyLong_FromUnsignedLong(unit_at(u, i));
        if (!v)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

PyDoc_STRVAR(fast_screen_doc,
"fast_screen(strict, validate, error_spans, text, array, lengths, reserved, data)\n\n"
"utf8fuzz.decoders.fast._Fast.run's tokens and checks, in C, as a complete screen: the\n"
"fast path's own functions give the first error (strict; validate, or None), the\n"
"error spans and the replace, ignore and surrogateescape texts (text(data, errors), a\n"
"str; where it says None, array(data, errors), code points in 4-byte items, or None\n"
"for no such function); lengths[b] is the length a lead byte b begins (0: none),\n"
"reserved[b] is 1 where a span starting with b is a reserved unit. Returns every\n"
"view, tokens packed, as icu_screen does; or None where run() would not build its\n"
"outcome from tokens.");

/* The fast path differs from its reference on almost no input, and its full
 * outcome made its tokens in Python, per sampled input, at ten times the cost of
 * its six library calls; here the same derivation gives every view on every input. */
static PyObject *fast_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8 || !PyBytes_Check(args[5]) || PyBytes_GET_SIZE(args[5]) != 256 ||
        !PyBytes_Check(args[6]) || PyBytes_GET_SIZE(args[6]) != 256 || !PyBytes_Check(args[7])) {
        PyErr_SetString(PyExc_TypeError, "expected (strict, validate, error_spans, text, "
                                         "array, 256 lengths, 256 reserved flags, bytes)");
        return NULL;
    }
    PyObject *strict = args[0], *validate = args[1], *data = args[7];
    const unsigned char *len_of = (const unsigned char *)PyBytes_AS_STRING(args[5]);
    const unsigned char *reserved = (const unsigned char *)PyBytes_AS_STRING(args[6]);
    int has_reserved = memchr(reserved, 1, 256) != NULL;
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    PyObject *spans = NULL, *packed = NULL, *res = NULL, *views[3] = {NULL, NULL, NULL};
    PyObject *span_tuple = NULL, *strict_span = NULL;
    Units texts[3] = {{0}, {0}, {0}}; /* replace, ignore, escape */
    Py_ssize_t sa = 0, sb = 0;
    int sreason, got = fast_strict(strict, validate, data, has_reserved, &sa, &sb, &sreason);
    if (got <= 0)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    if (!(spans = PyObject_CallOneArg(args[2], data)))
        return NULL;
    PyObject *const modes[3] = {K_replace, K_ignore, S_surrogateescape};
    for (int v = 0; v < 3; v++) {
        int r = get_units(args[3], args[4], data, modes[v], &texts[v]);
        if (r < 0) goto done;
        if (r == 0) goto none;
    }
    if (!PyList_Check(spans))
        goto none;
    const Units *chars = &texts[0];
    Py_ssize_t nchars = chars->len, nspans = PyList_GET_SIZE(spans);
    /* at most one token per byte */
    if (!(packed = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(packed_tok))))
        goto done;
    packed_tok *tk = (packed_tok *)PyBytes_AS_STRING(packed);
    Py_ssize_t nt = 0, pos = 0, k = 0;
    for (Py_ssize_t i = 0; i <= nspans; i++) {
        Py_ssize_t a = n, b = n;
        if (i < nspans && read_span(PyList_GET_ITEM(spans, i), &a, &b) < 0) {
            if (PyErr_Occurred()) goto done;
            goto none;
        }
        while (pos < a) {  /* characters, each as long as its lead byte says */
            Py_ssize_t size = pos < n ? len_of[d[pos]] : 0;
            if (size == 0 || pos + size > a || k >= nchars)
                goto none;
            tk[nt++] = (packed_tok){PK_CHAR, pos, pos + size, (int64_t)unit_at(chars, k)};
            k++;
            pos += size;
        }
        if (pos != a || (a == n && b == n))
            break;
        if (k >= nchars || unit_at(chars, k) != 0xFFFD || b <= a || a >= n || b > n)
            goto none;
        k++;
        int64_t kind = reserved[d[a]] ? PK_RESERVED : PK_ERROR, why = PR_ILLEGAL;
        if (kind == PK_RESERVED) {
            why = PR_NONE;
        } else if (b >= n) {  /* only an error reaching the end can be truncated */
            PyObject *tail = PyBytes_FromStringAndSize((const char *)d + a, n - a);
            Py_ssize_t ta, tb;
            int treason, tgot = tail ? fast_strict(strict, validate, tail, has_reserved, &ta,
                                                   &tb, &treason) : -1;
            Py_XDECREF(tail);
            if (tgot < 0) goto done;
            if (tgot == 0 || treason == FR_RESERVED) goto none;
            why = treason == FR_TRUNCATED ? PR_TRUNCATED : PR_ILLEGAL;
        }
        tk[nt++] = (packed_tok){kind | why << 8, a, b, -1};
        pos = b;
    }
    if (pos != n || k != nchars)
        goto none;
    /* the direct views against the ones the tokens give (_Fast.run's checks) */
    Py_ssize_t first = -1;
    for (Py_ssize_t i = 0; i < nt && first < 0; i++)
        if (tk[i].kind_reason & 0xFF) first = i;
    if (first < 0 ? sreason != FR_NONE
                  : sreason == FR_NONE || tk[first].start != sa || tk[first].end != sb ||
                        ((tk[first].kind_reason & 0xFF) == PK_RESERVED
                             ? sreason != FR_RESERVED
                             : sreason != (tk[first].kind_reason >> 8)))
        goto none;
    for (int v = 1; v < 3; v++) {  /* ignore, then escape */
        const Units *t = &texts[v];
        Py_ssize_t m = 0;
        for (Py_ssize_t i = 0; i < nt; i++) {
            if ((tk[i].kind_reason & 0xFF) == PK_CHAR) {
                if (m >= t->len || unit_at(t, m) != (Py_UCS4)tk[i].value) goto none;
                m++;
            } else if (v == 2) {
                for (Py_ssize_t x = tk[i].start; x < tk[i].end; x++, m++)
                    if (m >= t->len || unit_at(t, m) != 0xDC00u + d[x]) goto none;
            }
        }
        if (m != t->len)
            goto none;
    }
    if (_PyBytes_Resize(&packed, nt * (Py_ssize_t)sizeof(packed_tok)) < 0)
        goto done;
    if (!(span_tuple = PyList_AsTuple(spans)))
        goto done;
    if (first < 0)
        strict_span = Py_NewRef(Py_None);
    else if (!(strict_span = span(sa, sb)))
        goto done;
    for (int v = 0; v < 3; v++)
        if (!(views[v] = units_view(&texts[v])))
            goto done;
    PyObject *reason = sreason == FR_NONE ? Py_None
                       : sreason == FR_TRUNCATED ? S_truncated
                       : sreason == FR_ILLEGAL ? S_illegal : S_reserved;
    if (!(res = PyDict_New()) || PyDict_SetItem(res, K_tokens, packed) < 0 ||
        PyDict_SetItem(res, K_strict, strict_span) < 0 ||
        PyDict_SetItem(res, K_spans, span_tuple) < 0 ||
        PyDict_SetItem(res, K_reason, reason) < 0 ||
        PyDict_SetItem(res, K_replace, views[0]) < 0 ||
        PyDict_SetItem(res, K_ignore, views[1]) < 0 ||
        PyDict_SetItem(res, K_escape, views[2]) < 0)
        Py_CLEAR(res);
    goto done;
none:
    res = Py_NewRef(Py_None);
done:
    Py_XDECREF(spans);
    Py_XDECREF(packed);
    Py_XDECREF(span_tuple);
    Py_XDECREF(strict_span);
    for (int v = 0; v < 3; v++) {
        Py_XDECREF(views[v]);
        units_release(&texts[v]);
    }
    return res;
}

/* ---- iconv ---------------------------------------------------------------------- */

enum { OUT_UTF32LE = 0, OUT_HOST32 = 1, OUT_UTF8 = 2 };

/* One iconv() over src[0:n] from the initial state into out (room bytes). Returns
 * the errno (0 when it converted everything) and sets *consumed and *written. */
/* An open iconv descriptor passed from Python as an integer. */
static int get_cd(PyObject *o, iconv_t *cd)
{
    void *p;
    if (get_ptr(o, &p))
        return -1;
    if (!p || p == (void *)-1) {
        PyErr_SetString(PyExc_ValueError, "not an open iconv descriptor");
        return -1;
    }
    *cd = (iconv_t)p;
    return 0;
}

static int iconv_once(iconv_t cd, const char *src, size_t n, char *out, size_t room,
                      size_t *consumed, size_t *written)
{
    char *in = (char *)src, *o = out;  /* iconv's prototype is not const-correct */
    size_t inleft = n, outleft = room;
    iconv(cd, NULL, NULL, NULL, NULL);  /* back to the initial state */
    errno = 0;
    size_t r = iconv(cd, &in, &inleft, &o, &outleft);
    int e = r == (size_t)-1 ? errno : 0;
    *consumed = (size_t)(in - src);
    *written = (size_t)(o - out);
    return r == (size_t)-1 && e == 0 ? -1 : e;
}

/* The code points glibc wrote. UTF-8 output is read with RFC 2279's bit layout
 * (glibc writes 5- and 6-byte forms for what it accepted); anything else is left
 * to the caller (returns -1). */
static Py_ssize_t out_codepoints(const unsigned char *o, size_t len, int kind,
                                 uint32_t *cps)
{
    Py_ssize_t n = 0;
    if (kind != OUT_UTF8) {
        for (size_t i = 0; i + 4 <= len; i += 4) {
            uint32_t v;
            if (kind == OUT_UTF32LE)
                v = (uint32_t)o[i] | (uint32_t)o[i + 1] << 8 | (uint32_t)o[i + 2] << 16 |
                    (uint32_t)o[i + 3] << 24;
            else
                memcpy(&v, o + i, 4);
            cps[n++] = v;
        }
        return len % 4 ? -1 : n;
    }
    for (size_t i = 0; i < len;) {
        unsigned b = o[i];
        int k = b < 0x80 ? 1 : b < 0xC0 ? 0 : b < 0xE0 ? 2 : b < 0xF0 ? 3
              : b < 0xF8 ? 4 : b < 0xFC ? 5 : b < 0xFE ? 6 : 0;
        if (k == 0 || i + (size_t)k > len)
            return -1;
        uint32_t v = k == 1 ? b : b & (0x7Fu >> k);
        for (int j = 1; j < k; j++) {
            if ((o[i + j] & 0xC0) != 0x80)
                return -1;
            v = v << 6 | (o[i + j] & 0x3F);
        }
        cps[n++] = v;
        i += (size_t)k;
    }
    return n;
}

PyDoc_STRVAR(iconv_run_doc,
"iconv_run(cd, data, kind, search) -> (consumed, errno, end, codepoints)\n\n"
"One iconv() over data from the initial state. errno is 0, EILSEQ, EINVAL or any\n"
"other errno of iconv() (there or in the search), for the caller to raise.\n"
"On EILSEQ at p with search true, end is p plus the longest t in 2..min(6, n-p)\n"
" for which data[p:p+t] alone gives EINVAL, else p + 1; without\n"
"it, -1. codepoints is the output's tuple of ints when errno is 0 (None when the\n"
"UTF-8 output is not RFC 2279-shaped, for the caller to read), else None.\n"
"kind: 0 UTF-32LE/UCS-4LE, 1 host-order 32-bit (WCHAR_T), 2 UTF-8.");

/* One iconv() over data, as iconv_run describes it: *p, *e and *end set, and the
 * code points (a tuple) when it converted everything and C could read them, else
 * None; NULL with an exception set. */
static PyObject *iconv_do(PyObject *cd_obj, PyObject *data, int kind, int search,
                          Py_ssize_t *p_out, int *e_out, Py_ssize_t *end_out, Py_ssize_t *n_out)
{
    iconv_t cd;
    if (get_cd(cd_obj, &cd))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *src = view.buf;
    size_t n = (size_t)view.len;
    size_t room = 8 * n + 16;  /* 6-byte forms to UCS-4 still fit: 4 bytes out per byte in */
    char out_stack[1024];
    char *out = room <= sizeof out_stack ? out_stack : malloc(room);
    PyObject *cps = NULL;
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    size_t p, written;
    int e = iconv_once(cd, src, n, out, room, &p, &written);
    Py_ssize_t end = -1;
    if (e == EILSEQ && search) {
        end = (Py_ssize_t)p + 1;
        size_t tmax = n - p < 6 ? n - p : 6;  /* glibc reads at most 6-byte forms */
        char piece_out[64];
        for (size_t t = 2; t <= tmax; t++) {
            size_t c2, w2;
            int e2 = iconv_once(cd, src + p, t, piece_out, sizeof piece_out, &c2, &w2);
            if (e2 != 0 && e2 != EILSEQ && e2 != EINVAL) {
                e = e2;  /* the caller raises it, as for the first call */
                break;
            }
            if (e2 == EINVAL)
                end = (Py_ssize_t)(p + t);
        }
    }
    if (e == 0) {
        uint32_t cps_stack[256];
        /* at most one code point per output byte */
        uint32_t *buf = written <= 256 ? cps_stack : malloc(written * sizeof *buf + 4);
        if (!buf) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t nc = out_codepoints((const unsigned char *)out, written, kind, buf);
        if (nc < 0) {
            cps = Py_NewRef(Py_None);
        } else if ((cps = PyTuple_New(nc))) {
            for (Py_ssize_t i = 0; i < nc; i++) {
                PyObject *v = PyLong_FromUnsignedLong(buf[i]);
                if (!v) {
                    Py_CLEAR(cps);
                    break;
                }
                PyTuple_SET_ITEM(cps, i, v);
            }
        }
        if (buf != cps_stack) free(buf);
    } else {
        cps = Py_NewRef(Py_None);
    }
    *p_out = (Py_ssize_t)p;
    *e_out = e;
    *end_out = end;
    *n_out = (Py_ssize_t)n;
done:
    if (out && out != out_stack) free(out);
    PyBuffer_Release(&view);
    return cps;
}

static PyObject *iconv_run(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "expected (cd, data, kind, search)");
        return NULL;
    }
    int kind = (int)PyLong_AsLong(args[2]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    int search = PyObject_IsTrue(args[3]);
    if (search < 0)
        return NULL;
    Py_ssize_t p, end, n;
    int e;
    PyObject *cps = iconv_do(args[0], args[1], kind, search, &p, &e, &end, &n);
    if (!cps)
        return NULL;
    PyObject *res = Py_BuildValue("(ninO)", p, e, end, cps);
    Py_DECREF(cps);
    return res;
}

PyDoc_STRVAR(iconv_screen_doc,
"iconv_screen(decoder, kind, data)\n\n"
"utf8fuzz.decoders.iconv.Iconv.screen in C: iconv_run(decoder._cd, data, kind, True)\n"
"as the screen's views - every text view (a tuple) when it converted everything,\n"
"else the strict span and reason - or None (where C could not read the output, on\n"
"another errno, or with the descriptor closed: the full path tells). The descriptor\n"
"is read from the decoder at each call.");

/* Four converters on every fuzz input: as a Python method the screen's frame cost
 * about as much as the conversion. */
static PyObject *iconv_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "expected (decoder, kind, data)");
        return NULL;
    }
    int kind = (int)PyLong_AsLong(args[1]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    PyObject *cd = PyObject_GetAttrString(args[0], "_cd");
    Py_ssize_t p, end, n;
    int e;
    PyObject *cps = cd ? iconv_do(cd, args[2], kind, 1, &p, &e, &end, &n) : NULL;
    Py_XDECREF(cd);
    if (!cps)  /* a closed descriptor, a decoder gone: the full path tells (a crash) */
        return screen_failed();
    PyObject *d = NULL, *sp = NULL;
    if (e == 0 && cps != Py_None) {  /* accepted: what it wrote is every text view */
        if ((d = PyDict_New()) &&
            (PyDict_SetItem(d, K_strict, Py_None) < 0 || PyDict_SetItem(d, K_reason, Py_None) < 0 ||
             PyDict_SetItem(d, K_spans, S_no_spans) < 0 || PyDict_SetItem(d, K_replace, cps) < 0 ||
             PyDict_SetItem(d, K_ignore, cps) < 0 || PyDict_SetItem(d, K_escape, cps) < 0))
            Py_CLEAR(d);
    } else if (e == EINVAL || e == EILSEQ) {
        if ((sp = span(p, e == EINVAL ? n : end)) && (d = PyDict_New()) &&
            (PyDict_SetItem(d, K_strict, sp) < 0 ||
             PyDict_SetItem(d, K_reason, e == EINVAL ? S_truncated : S_illegal) < 0))
            Py_CLEAR(d);
        Py_XDECREF(sp);
    } else {
        d = Py_NewRef(Py_None);  /* the full path decides, or raises it: a crash */
    }
    Py_DECREF(cps);
    return d;
}

PyDoc_STRVAR(iconv_convert_doc,
"iconv_convert(cd, data) -> (consumed, errno, output bytes)\n\n"
"One iconv() over data from the initial state; errno 0 when all converted.");

static PyObject *iconv_convert(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    iconv_t cd;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "expected (cd, data)");
        return NULL;
    }
    if (get_cd(args[0], &cd))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    size_t n = (size_t)view.len, room = 8 * n + 16, p, written;
    char *out = malloc(room);
    PyObject *res = NULL;
    if (!out) {
        PyErr_NoMemory();
    } else {
        int e = iconv_once(cd, view.buf, n, out, room, &p, &written);
        res = Py_BuildValue("(niy#)", (Py_ssize_t)p, e, out, (Py_ssize_t)written);
        free(out);
    }
    PyBuffer_Release(&view);
    return res;
}

/* ---- the module ----------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"icu_decode", (PyCFunction)(void (*)(void))icu_decode, METH_FASTCALL, icu_decode_doc},
    {"icu_screen", (PyCFunction)(void (*)(void))icu_screen, METH_FASTCALL, icu_screen_doc},
    {"tile", (PyCFunction)(void (*)(void))tile_entry, METH_FASTCALL, tile_doc},
    {"tile_text", (PyCFunction)(void (*)(void))tile_text_entry, METH_FASTCALL,
     tile_text_doc},
    {"record", record, METH_O, record_doc},
    {"record_based", record_based, METH_O, record_based_doc},
    {"record_pass", record_pass, METH_O, record_pass_doc},
    {"record_base", record_base, METH_O, record_base_doc},
    {"incremental_decode", (PyCFunction)(void (*)(void))incremental_decode, METH_FASTCALL,
     incremental_decode_doc},
    {"incremental_screen", (PyCFunction)(void (*)(void))incremental_screen, METH_FASTCALL,
     incremental_screen_doc},
    {"codec_screen", (PyCFunction)(void (*)(void))codec_screen, METH_FASTCALL, codec_screen_doc},
    {"fast_screen", (PyCFunction)(void (*)(void))fast_screen, METH_FASTCALL, fast_screen_doc},
    {"iconv_run", (PyCFunction)(void (*)(void))iconv_run, METH_FASTCALL, iconv_run_doc},
    {"iconv_screen", (PyCFunction)(void (*)(void))iconv_screen, METH_FASTCALL, iconv_screen_doc},
    {"iconv_convert", (PyCFunction)(void (*)(void))iconv_convert, METH_FASTCALL,
     iconv_convert_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "The ICU and iconv adapters' per-call glue (see utf8fuzz.decoders.icu, .iconv).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *outcome = PyImport_ImportModule("utf8fuzz.outcome");
    if (!outcome)
        return NULL;
    Token = PyObject_GetAttrString(outcome, "Token");
    Py_DECREF(outcome);
    if (!Token)
        return NULL;
    if (!PyType_Check(Token) || !PyType_IsSubtype((PyTypeObject *)Token, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "utf8fuzz.outcome.Token is not a tuple type");
        return NULL;
    }
    if (!(S_char = PyUnicode_InternFromString("char")) ||
        !(S_error = PyUnicode_InternFromString("error")) ||
        !(S_illegal = PyUnicode_InternFromString("illegal")) ||
        !(S_truncated = PyUnicode_InternFromString("truncated")) ||
        !(S_reserved = PyUnicode_InternFromString("reserved")) ||
        !(S_surrogateescape = PyUnicode_InternFromString("surrogateescape")) ||
        !(S_no_spans = PyTuple_New(0)) ||
        !(K_strict = PyUnicode_InternFromString("strict")) ||
        !(K_spans = PyUnicode_InternFromString("spans")) ||
        !(K_reason = PyUnicode_InternFromString("reason")) ||
        !(K_replace = PyUnicode_InternFromString("replace")) ||
        !(K_tokens = PyUnicode_InternFromString("tokens")) ||
        !(K_ignore = PyUnicode_InternFromString("ignore")) ||
        !(K_escape = PyUnicode_InternFromString("escape")) ||
        !(S_empty = PyUnicode_New(0, 0)) ||
        !(S_end_of_data = PyUnicode_InternFromString("unexpected end of data")) ||
        !(recorded = PyList_New(0)) || !(recorded_raw = PyList_New(0)) ||
        !(surrogatepass_handler = PyCodec_LookupError("surrogatepass")))
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    /* the lists the record handlers append to */
    if (PyModule_AddObjectRef(m, "recorded", recorded) < 0 ||
        PyModule_AddObjectRef(m, "recorded_raw", recorded_raw) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
