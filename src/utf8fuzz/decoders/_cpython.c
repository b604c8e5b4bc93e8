/* utf8fuzz.decoders._cpython: the CPython codec adapters' per-call glue
 * (utf8fuzz.decoders.cpython): the recording error handlers, the tiling of a
 * recorded decode's text, the one-shot screens and the incremental decoder's
 * loops. The codec calls stay CPython's own; only what runs around them per error,
 * per character or per chunk of every fuzz input is C, where as Python it cost
 * about as much as the decodes themselves.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glue.h"
#include "tiling.h"

static PyObject *S_empty, *S_end_of_data;

/* ---- tiling a recorded decode's text --------------------------------------------- */

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

/* ---- the recording error handlers ------------------------------------------------ */

/* The full path records every error of every sampled fuzz input (about 20 on a
 * 64-byte one) through a handler registered with codecs; as a Python function it
 * cost more than the codec's decode itself. These do what cpython.py's Python
 * handlers do: append (start, end, reason) to the module's list `recorded` and
 * return ("", end), nothing in place of the error, go on after it. record_based
 * also adds `base` (set by record_base()) to the offsets and appends the codec's
 * own (start, end) to `recorded_raw`. */
static PyObject *recorded, *recorded_raw;
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

/* ---- the one-shot screens ----------------------------------------------------------- */

/* codec_screen's how: cpython.py's HOW_* constants. */
enum {
    HOW_STRICT = 0,    /* decode with errors that raise (strict, surrogatepass) */
    HOW_VIEW = 1,      /* one handler's view: {view: the text} */
    HOW_RECORDING = 2, /* replace text, and a strict decode's first error if it has U+FFFD */
};

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
"(PyUnicode_DecodeUTF8, what bytes.decode('utf-8', errors) calls). how HOW_STRICT\n"
"(0): decode with errors (strict or surrogatepass) - every text view when it\n"
"succeeds, else the error's strict span and reason (Strict.screen,\n"
"SurrogatePass.screen); HOW_VIEW (1): {view: the text} (Handler.screen);\n"
"HOW_RECORDING (2): the replace text and, when it has a U+FFFD, the first error of\n"
"a strict decode (Recording.screen). None on any other exception.");

/* Called for five decoders on every fuzz input: as Python methods their frames and
 * try blocks cost about as much as the decodes themselves. */
static PyObject *codec_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
    long how;
    if (nargs != 4 || (how = PyLong_AsLong(args[0])) < HOW_STRICT || how > HOW_RECORDING ||
        !PyUnicode_Check(args[1]) || !PyBytes_Check(args[3])) {
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
        if (how == HOW_STRICT && (res = first_error_views()))
            return res;
        goto other;
    }
    if (how == HOW_VIEW) {
        res = PyDict_New();
        if (res && PyDict_SetItem(res, args[2], text) < 0)
            Py_CLEAR(res);
    } else if (how == HOW_STRICT ||
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

/* ---- the incremental decoder, written out ----------------------------------------- */

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

/* ---- the module ----------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"tile_text", (PyCFunction)(void (*)(void))tile_text_entry, METH_FASTCALL,
     tile_text_doc},
    {"record", record, METH_O, record_doc},
    {"record_based", record_based, METH_O, record_based_doc},
    {"record_pass", record_pass, METH_O, record_pass_doc},
    {"record_base", record_base, METH_O, record_base_doc},
    {"codec_screen", (PyCFunction)(void (*)(void))codec_screen, METH_FASTCALL, codec_screen_doc},
    {"incremental_decode", (PyCFunction)(void (*)(void))incremental_decode, METH_FASTCALL,
     incremental_decode_doc},
    {"incremental_screen", (PyCFunction)(void (*)(void))incremental_screen, METH_FASTCALL,
     incremental_screen_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cpython",
    "The CPython codec adapters' per-call glue (see utf8fuzz.decoders.cpython).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cpython(void)
{
    if (glue_init() < 0 || tiling_init() < 0)
        return NULL;
    if (!(S_empty = PyUnicode_New(0, 0)) ||
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
