/* utf8fuzz.decoders._icu: the ICU adapter's per-call glue (utf8fuzz.decoders.icu).
 *
 * Through ctypes, per 64-byte fuzz input, the conversion cost tens of
 * microseconds (buffer copies, string_at, a Python callback per error). Here the
 * same calls are made from C and only compact results cross back.
 *
 * The adapter loads two different ICUs (the system's and icu4py's bundled copy)
 * whose symbols carry version suffixes, so this file neither links ICU nor
 * includes its headers: Python loads each library with ctypes and passes the
 * function addresses and the converter pointer as integers. The few ICU types used
 * are declared below from ICU's public, stable C API (ucnv.h, ucnv_err.h).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profiles/packed_tokens.h"
#include "glue.h"
#include "tiling.h"

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

/* ---- the recording to-Unicode callback --------------------------------------- */

/* A growable array that starts in a stack buffer; sets oom (a local) on failure. */
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

/* ---- one recorded conversion, tiled -------------------------------------------- */

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
    PyObject *out = tiled_tuple(tiled.toks, tiled.ntoks, NULL);
    tiled_free(&tiled);
    return out;
}

PyDoc_STRVAR(icu_screen_doc,
"icu_screen(to_unicode, reset, set_to_u_callback, converter, data, cesu8)\n\n"
"The same conversion as icu_decode, as a whole screen: {'tokens': the tokens\n"
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

/* ---- the module ----------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"icu_decode", (PyCFunction)(void (*)(void))icu_decode, METH_FASTCALL, icu_decode_doc},
    {"icu_screen", (PyCFunction)(void (*)(void))icu_screen, METH_FASTCALL, icu_screen_doc},
    {"tile", (PyCFunction)(void (*)(void))tile_entry, METH_FASTCALL, tile_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_icu",
    "The ICU adapter's per-call glue (see utf8fuzz.decoders.icu).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__icu(void)
{
    if (glue_init() < 0 || tiling_init() < 0)
        return NULL;
    return PyModule_Create(&module);
}
