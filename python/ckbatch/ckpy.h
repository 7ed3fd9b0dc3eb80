/* ckpy.h - what the two files of the ckbatch extension share (_ckbatch.c: module, errors, features
 * file; model.c: the Model type). Private to python/ckbatch; includes Python, numpy, ckbatch.h. */
#ifndef CKPY_H
#define CKPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL ckpy_ARRAY_API  /* numpy's C API table, filled once by _ckbatch.c */
#ifndef CKPY_MODULE_INIT
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <ckbatch.h>

/* threading.main_thread().ident, set at import: the thread that sees signals. */
extern unsigned long ckpy_main_thread;

/* The Model type (model.c). */
extern PyTypeObject ckpy_model_type;

/* Sets the ckbatch.Error subclass of err->code (ckbatch._errors) as the current exception;
 * returns NULL. */
PyObject *ckpy_raise(const ck_error *err);

/* "O&" converter: None -> NULL, str / bytes / os.PathLike -> a bytes object (file system
 * encoding) kept in *out. */
int ckpy_path_or_none(PyObject *obj, void *out);

/* The path in a converted bytes object, or NULL for None. */
const char *ckpy_path_str(PyObject *bytes);

#endif
