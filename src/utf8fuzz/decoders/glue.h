/* What the decoder families' glue (_icu.c, _iconv.c, _cpython.c) and the fast
 * path's screen share: the interned view names and reasons a screen's dict is
 * made of, and the few small helpers around them. Each extension is its own
 * translation unit, so these statics are one copy per module, set by glue_init()
 * in its module init. Include after Python.h. */
#ifndef UTF8FUZZ_GLUE_H
#define UTF8FUZZ_GLUE_H

#include "../small_tuples.h"

/* View names (the screen dict's keys), the reasons, and the empty spans view. */
static PyObject *K_strict, *K_spans, *K_reason, *K_replace, *K_tokens, *K_ignore, *K_escape;
static PyObject *S_illegal, *S_truncated, *S_no_spans;

static inline int glue_init(void)
{
    struct { PyObject **slot; const char *text; } names[] = {
        {&K_strict, "strict"}, {&K_spans, "spans"}, {&K_reason, "reason"},
        {&K_replace, "replace"}, {&K_tokens, "tokens"}, {&K_ignore, "ignore"},
        {&K_escape, "escape"}, {&S_illegal, "illegal"}, {&S_truncated, "truncated"},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!*names[k].slot && !(*names[k].slot = PyUnicode_InternFromString(names[k].text)))
            return -1;
    if (!S_no_spans && !(S_no_spans = PyTuple_New(0)))
        return -1;
    return 0;
}

/* A pointer passed from Python as an int (ctypes gives addresses so). */
static inline int get_ptr(PyObject *o, void **out)
{
    *out = PyLong_AsVoidPtr(o);
    return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

static inline PyObject *span(Py_ssize_t a, Py_ssize_t b)
{
    return ssize_tuple(a, b, NULL);
}

/* What a screen whose call raised returns: None, the full path telling (a crash
 * outcome) - except when memory ran out, which is raised: the differ's loop turns
 * it into None itself, and tests can tell it from an answer. */
static inline PyObject *screen_failed(void)
{
    if (PyErr_ExceptionMatches(PyExc_Exception) && !PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return NULL;
}

#endif
