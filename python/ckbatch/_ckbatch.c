/* _ckbatch.c - the CPython extension under the ckbatch package: the module, its errors, a features
 * file of include/ckbatch.h as read-only arrays; the Model type is in model.c. Includes no header
 * of ckbatch but ckbatch.h (through ckpy.h); keyword handling, result objects and docs for users
 * live in ckbatch/__init__.py.
 *
 * GIL policy: every ck_* call that can take longer than a moment (load, encode, run, open) runs
 * with the GIL released. The library calls its log, progress and cancel callbacks on the calling
 * thread only (never from an OpenMP worker, ckbatch.h), so those take the GIL back with
 * PyGILState_Ensure on that same thread: a Python callback never runs concurrently with other
 * Python code and cannot deadlock against a worker. Ctrl-C: the cancel callback, asked before
 * every batch, runs PyErr_CheckSignals on the main thread; a raised KeyboardInterrupt (or an
 * exception from the progress callback) is kept, the call stops with CK_E_CANCELLED and the kept
 * exception is raised instead. */
#define CKPY_MODULE_INIT
#include "ckpy.h"

#include <stdlib.h>
#include <string.h>

static PyObject *make_error;          /* ckbatch._errors._make(code, status, message) */
unsigned long ckpy_main_thread;      /* threading.main_thread().ident: where signals are seen */

PyObject *ckpy_raise(const ck_error *err)
{
    PyObject *msg = PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message), "replace");
    PyObject *exc = msg != NULL ? PyObject_CallFunction(make_error, "isO", err->code,
                                                        ck_status_name(err->code), msg) : NULL;
    if (exc != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    }
    Py_XDECREF(exc);
    Py_XDECREF(msg);
    return NULL;
}

int ckpy_path_or_none(PyObject *obj, void *out)
{
    if (obj == NULL) { /* cleanup call of O& */
        Py_CLEAR(*(PyObject **)out);
        return 1;
    }
    if (obj == Py_None) {
        *(PyObject **)out = NULL;
        return 1;
    }
    return PyUnicode_FSConverter(obj, out) ? Py_CLEANUP_SUPPORTED : 0;
}

const char *ckpy_path_str(PyObject *bytes)
{
    return bytes != NULL ? PyBytes_AS_STRING(bytes) : NULL;
}

/* ---- a features file (ck_features_open): arrays over its read-only mapping ---- */

typedef struct {
    PyObject_HEAD
    ck_features_file *file;
} file_object;

static void file_dealloc(file_object *self)
{
    ck_features_close(self->file);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject file_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ckbatch._ckbatch.FeaturesFile",
    .tp_basicsize = sizeof(file_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An open (mapped) features file; the arrays of tensor() keep it open.",
    .tp_dealloc = (destructor)file_dealloc,
};

/* open_features(path) -> FeaturesFile */
static PyObject *open_features(PyObject *module, PyObject *arg)
{
    (void)module;
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(arg, &path)) {
        return NULL;
    }
    ck_features_file *f = NULL;
    ck_error err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ck_features_open(&f, PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (rc != CK_OK) {
        return ckpy_raise(&err);
    }
    file_object *self = PyObject_New(file_object, &file_type);
    if (self == NULL) {
        ck_features_close(f);
        return NULL;
    }
    self->file = f;
    return (PyObject *)self;
}

/* tensor(file, name) -> read-only array over the mapping (its base keeps the file open), or None */
static PyObject *file_tensor(PyObject *module, PyObject *args)
{
    (void)module;
    file_object *file;
    const char *name;
    if (!PyArg_ParseTuple(args, "O!s", &file_type, &file, &name)) {
        return NULL;
    }
    const ck_tensor_view *t = ck_features_tensor(file->file, name);
    if (t == NULL) {
        Py_RETURN_NONE;
    }
    static const struct { const char *dtype; int typenum; } types[] = {
        {"F32", NPY_FLOAT32}, {"I64", NPY_INT64}, {"I32", NPY_INT32}, {"U8", NPY_UINT8},
        {"F16", NPY_FLOAT16},
    };
    int typenum = -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        typenum = strcmp(t->dtype, types[i].dtype) == 0 ? types[i].typenum : typenum;
    }
    if (typenum < 0 || t->rank > 8) {
        ck_error e = {CK_E_FORMAT, ""};
        snprintf(e.message, sizeof e.message, "tensor \"%s\": dtype %s is not read", name,
                 t->dtype);
        return ckpy_raise(&e);
    }
    npy_intp dims[8];
    for (size_t i = 0; i < t->rank; i++) {
        dims[i] = (npy_intp)t->shape[i];
    }
    /* little-endian data on a little-endian host (x86-64): the stored bytes are the values */
    PyObject *arr = PyArray_New(&PyArray_Type, (int)t->rank, dims, typenum, NULL, (void *)t->data,
                                0, 0, NULL);
    if (arr == NULL) {
        return NULL;
    }
    PyArray_CLEARFLAGS((PyArrayObject *)arr, NPY_ARRAY_WRITEABLE);
    Py_INCREF(file);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)file) != 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* metadata(file, key) -> str or None */
static PyObject *file_metadata(PyObject *module, PyObject *args)
{
    (void)module;
    file_object *file;
    const char *key;
    if (!PyArg_ParseTuple(args, "O!s", &file_type, &file, &key)) {
        return NULL;
    }
    const char *v = ck_features_metadata(file->file, key);
    if (v == NULL) {
        Py_RETURN_NONE;
    }
    return PyUnicode_DecodeUTF8(v, (Py_ssize_t)strlen(v), "replace");
}

/* ---- module functions ---- */

static PyObject *write_demo_weights(PyObject *module, PyObject *args, PyObject *kw)
{
    (void)module;
    static char *names[] = {"path", "seed", NULL};
    PyObject *path = NULL;
    unsigned long long seed = 20261129ULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|K", names, PyUnicode_FSConverter, &path,
                                     &seed)) {
        return NULL;
    }
    char *identity = NULL;
    ck_error err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ck_demo_weights_write(PyBytes_AS_STRING(path), seed, &identity, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    PyObject *out = rc == CK_OK ? PyUnicode_FromString(identity) : ckpy_raise(&err);
    ck_free(identity);
    return out;
}

static PyObject *status_name(PyObject *module, PyObject *arg)
{
    (void)module;
    int code = (int)PyLong_AsLong(arg);
    return code == -1 && PyErr_Occurred() ? NULL : PyUnicode_FromString(ck_status_name(code));
}

static PyObject *library_info(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return Py_BuildValue("{s:s,s:s,s:i}", "version", ck_version(), "kernels_isa", ck_kernels_isa(),
                         "available_cpus", ck_available_cpus());
}

static PyObject *check_voice(PyObject *module, PyObject *arg)
{
    (void)module;
    PyObject *spec = NULL;
    if (!PyUnicode_FSConverter(arg, &spec)) {
        return NULL;
    }
    ck_error err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ck_voice_check(PyBytes_AS_STRING(spec), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(spec);
    if (rc != CK_OK) {
        return ckpy_raise(&err);
    }
    Py_RETURN_NONE;
}

static PyObject *prosody_circuit(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyUnicode_DecodeFSDefault(ck_prosody_circuit_path());
}

static PyObject *speech_circuit(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyUnicode_DecodeFSDefault(ck_speech_circuit_path());
}

static PyMethodDef module_methods[] = {
    {"speech_circuit", speech_circuit, METH_NOARGS, "speech_circuit() -> path of the shipped "
     "speech circuit."},
    {"check_voice", check_voice, METH_O, "check_voice(spec) -> None; raises for a bad voice."},
    {"prosody_circuit", prosody_circuit, METH_NOARGS, "prosody_circuit() -> path of the shipped "
     "prosody circuit."},
    {"open_features", open_features, METH_O, "open_features(path) -> FeaturesFile (mapped)."},
    {"tensor", file_tensor, METH_VARARGS, "tensor(file, name) -> read-only array or None."},
    {"metadata", file_metadata, METH_VARARGS, "metadata(file, key) -> str or None."},
    {"write_demo_weights", (PyCFunction)(void (*)(void))write_demo_weights,
     METH_VARARGS | METH_KEYWORDS, "write_demo_weights(path, seed=20261129) -> identity str."},
    {"status_name", status_name, METH_O, "status_name(code) -> 'CK_E_...'."},
    {"library_info", library_info, METH_NOARGS, "library_info() -> version, kernels_isa, cpus."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "ckbatch._ckbatch",
    "The C extension of ckbatch over include/ckbatch.h (use the ckbatch package).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

/* Status codes the Python layer maps to exception classes. */
static int add_codes(PyObject *m)
{
    static const struct { const char *name; int code; } codes[] = {
        {"CK_OK", CK_OK}, {"CK_E_ARG", CK_E_ARG}, {"CK_E_SIZE", CK_E_SIZE},
        {"CK_E_NONFINITE", CK_E_NONFINITE}, {"CK_E_RANGE", CK_E_RANGE}, {"CK_E_IO", CK_E_IO},
        {"CK_E_FORMAT", CK_E_FORMAT}, {"CK_E_CIRCUIT", CK_E_CIRCUIT},
        {"CK_E_MEMORY", CK_E_MEMORY}, {"CK_E_HASH", CK_E_HASH}, {"CK_E_PARITY", CK_E_PARITY},
        {"CK_E_INPUT", CK_E_INPUT}, {"CK_E_BACKEND", CK_E_BACKEND},
        {"CK_E_WEIGHTS", CK_E_WEIGHTS}, {"CK_E_CANCELLED", CK_E_CANCELLED},
        {"CK_E_STATE", CK_E_STATE},
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (PyModule_AddIntConstant(m, codes[i].name, codes[i].code) != 0) {
            return -1;
        }
    }
    return 0;
}

static unsigned long main_thread_ident(void)
{
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *t = threading != NULL ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *ident = t != NULL ? PyObject_GetAttrString(t, "ident") : NULL;
    unsigned long id = ident != NULL ? PyLong_AsUnsignedLong(ident) : 0;
    Py_XDECREF(ident), Py_XDECREF(t), Py_XDECREF(threading);
    return id;
}

PyMODINIT_FUNC PyInit__ckbatch(void)
{
    import_array();
    PyObject *errors = PyImport_ImportModule("ckbatch._errors");
    make_error = errors != NULL ? PyObject_GetAttrString(errors, "_make") : NULL;
    Py_XDECREF(errors);
    ckpy_main_thread = make_error != NULL ? main_thread_ident() : 0;
    if (make_error == NULL || PyErr_Occurred() || PyType_Ready(&ckpy_model_type) != 0 ||
        PyType_Ready(&file_type) != 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL || add_codes(m) != 0 || PyModule_AddObjectRef(m, "Model",
                                                               (PyObject *)&ckpy_model_type) != 0) {
        Py_XDECREF(m);
        return NULL;
    }
    return m;
}
