/* The fast path's whole screen (screen.c), registered by _fast.c's module. Include
 * after Python.h. */
#ifndef UTF8FUZZ_FAST_SCREEN_H
#define UTF8FUZZ_FAST_SCREEN_H

extern const char fast_screen_doc[];
PyObject *fast_screen(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
/* The interned names the screen's dict is made of; 0, or -1 with an exception set. */
int fast_screen_init(void);

#endif
