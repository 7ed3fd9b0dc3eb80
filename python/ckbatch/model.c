/* model.c - the Model type of the ckbatch extension: a ck_model, one call at a time, every call
 * with the GIL released; its results are numpy arrays that own the library's buffers. The GIL
 * and Ctrl-C policy is in _ckbatch.c's opening comment. */
#include "ckpy.h"

#include <pythread.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(size_t) == sizeof(int64_t), "size_t arrays are handed to numpy as int64");

/* ---- arrays over library buffers ---- */

static void free_capsule(PyObject *capsule)
{
    free(PyCapsule_GetPointer(capsule, "ckbatch.buffer"));
}

/* An array over malloc'd `data` (ownership taken: freed with the array's last view, or now on
 * failure); zero elements make a fresh empty array. */
static PyObject *owned_array(void *data, int nd, npy_intp *dims, int typenum)
{
    npy_intp n = 1;
    for (int i = 0; i < nd; i++) {
        n *= dims[i];
    }
    if (data == NULL || n == 0) {
        free(data);
        return PyArray_ZEROS(nd, dims, typenum, 0);
    }
    PyObject *arr = PyArray_SimpleNewFromData(nd, dims, typenum, data);
    PyObject *cap = arr != NULL ? PyCapsule_New(data, "ckbatch.buffer", free_capsule) : NULL;
    if (cap == NULL) {
        Py_XDECREF(arr);
        free(data);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, cap) != 0) { /* steals cap even on failure */
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* ---- messages collected while the GIL is released ---- */

typedef struct {
    char **items;
    size_t n, cap;
} msg_list;

static void msg_list_free(msg_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i]);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ck_log_fn of the encode calls: keeps warnings (dropped symbols, undefined ids); never touches
 * Python. A message that cannot be stored is lost, not fatal. */
static void collect_warning(void *ctx, ck_log_level level, const char *message)
{
    msg_list *l = ctx;
    if (level != CK_LOG_WARNING) {
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        char **items = realloc(l->items, cap * sizeof *items);
        if (items == NULL) {
            return;
        }
        l->items = items;
        l->cap = cap;
    }
    char *copy = strdup(message);
    if (copy != NULL) {
        l->items[l->n++] = copy;
    }
}

static PyObject *msg_list_to_py(const msg_list *l)
{
    PyObject *list = PyList_New((Py_ssize_t)l->n);
    for (size_t i = 0; list != NULL && i < l->n; i++) {
        PyObject *s = PyUnicode_DecodeUTF8(l->items[i], (Py_ssize_t)strlen(l->items[i]), "replace");
        if (s == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, s);
    }
    return list;
}

/* ---- the model ---- */

typedef struct {
    PyObject_HEAD
    ck_model *model;
    PyThread_type_lock lock;  /* one call at a time on a ck_model (ckbatch.h) */
    unsigned long owner;      /* thread ident of the call holding lock, 0 when none */
    int check_signals;        /* this call runs on the main thread: cancel looks for Ctrl-C */
    int stopped;              /* an exception is kept in exc_*: stop at the next batch */
    PyObject *exc_type, *exc_value, *exc_tb;
    PyObject *progress, *log; /* run(): the Python callables, or NULL */
} model_object;

/* With the GIL held: keeps the current exception (the first one wins) and asks for a stop. */
static void keep_exception(model_object *self)
{
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    if (self->stopped) {
        Py_XDECREF(t), Py_XDECREF(v), Py_XDECREF(tb);
        return;
    }
    self->exc_type = t, self->exc_value = v, self->exc_tb = tb;
    self->stopped = 1;
}

/* ck_cancel_fn: called with the GIL released, on the calling thread, before every batch. */
static int cancel_cb(void *ctx)
{
    model_object *self = ctx;
    if (self->stopped || !self->check_signals) {
        return self->stopped;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    if (PyErr_CheckSignals() != 0) {
        keep_exception(self);
    }
    PyGILState_Release(g);
    return self->stopped;
}

static void progress_cb(void *ctx, const ck_progress *p)
{
    model_object *self = ctx;
    if (self->progress == NULL || self->stopped) {
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallFunction(self->progress, "KKKnndddi", p->input_bytes, p->bytes_done,
                                        p->bytes_read, (Py_ssize_t)p->lines, (Py_ssize_t)p->tokens,
                                        p->seconds, p->tokens_per_second, p->eta_seconds, p->final);
    if (r == NULL) {
        keep_exception(self);
    }
    Py_XDECREF(r);
    PyGILState_Release(g);
}

static void log_cb(void *ctx, ck_log_level level, const char *message)
{
    model_object *self = ctx;
    if (self->log == NULL || self->stopped) {
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallFunction(self->log, "is", (int)level, message);
    if (r == NULL) {
        keep_exception(self);
    }
    Py_XDECREF(r);
    PyGILState_Release(g);
}

/* Takes the model for one call (waiting with the GIL released while another thread has it). */
static int begin_call(model_object *self)
{
    unsigned long me = PyThread_get_thread_ident();
    if (self->owner == me) { /* a callback of this thread's own call: the lock would never come */
        ck_error e = {CK_E_ARG, "model: called from a callback of its own running call"};
        ckpy_raise(&e);
        return -1;
    }
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    if (self->model == NULL) {
        PyThread_release_lock(self->lock);
        ck_error e = {CK_E_ARG, "model: closed"};
        ckpy_raise(&e);
        return -1;
    }
    self->owner = me;
    self->check_signals = me == ckpy_main_thread;
    self->stopped = 0;
    return 0;
}

/* Ends a call: the kept exception wins over the library's code (a cancelled call reports why it
 * was cancelled); returns 0 when the call succeeded. */
static int end_call(model_object *self, int rc, const ck_error *err)
{
    self->progress = self->log = NULL;
    self->owner = 0;
    PyThread_release_lock(self->lock);
    if (self->stopped) {
        PyErr_Restore(self->exc_type, self->exc_value, self->exc_tb);
        self->exc_type = self->exc_value = self->exc_tb = NULL;
        self->stopped = 0;
        return -1;
    }
    if (rc != CK_OK) {
        ckpy_raise(err);
        return -1;
    }
    return 0;
}

static int model_init(model_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"weights", "config", "threads", "parity", "max_batch_tokens", "seed",
                            "circuit", "weights_manifest", "precision", "compiled", NULL};
    PyObject *weights = NULL, *config = NULL, *circuit = NULL, *manifest = NULL, *compiled = NULL;
    int threads = 0, parity = 0, precision = CK_PRECISION_FP32;
    Py_ssize_t max_batch = 2048;
    unsigned long long seed = 20261129ULL;
    if (self->model != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "model: already loaded");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O&O&ipnKO&O&iO&", names, ckpy_path_or_none,
                                     &weights, ckpy_path_or_none, &config, &threads, &parity,
                                     &max_batch, &seed, ckpy_path_or_none, &circuit,
                                     ckpy_path_or_none, &manifest, &precision, ckpy_path_or_none,
                                     &compiled)) {
        return -1;
    }
    ck_model_params p = ck_model_default_params();
    p.weights = ckpy_path_str(weights);
    p.config = ckpy_path_str(config);
    p.circuit = ckpy_path_str(circuit);
    p.weights_manifest = ckpy_path_str(manifest);
    p.compiled = ckpy_path_str(compiled);
    p.threads = threads;
    p.parity = parity;
    p.precision = (ck_precision)precision; /* checked by ck_model_load */
    p.max_batch_tokens = max_batch > 0 ? (size_t)max_batch : 0;
    p.seed = seed;
    p.cancel = cancel_cb;
    p.cancel_ctx = self;
    ck_error err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ck_model_load(&self->model, &p, &err);
    Py_END_ALLOW_THREADS
    Py_XDECREF(weights), Py_XDECREF(config), Py_XDECREF(circuit), Py_XDECREF(manifest);
    Py_XDECREF(compiled);
    if (rc != CK_OK) {
        ckpy_raise(&err);
        return -1;
    }
    return 0;
}

static PyObject *model_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args, (void)kw;
    model_object *self = (model_object *)type->tp_alloc(type, 0);
    if (self != NULL && (self->lock = PyThread_allocate_lock()) == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void model_dealloc(model_object *self)
{
    ck_model_free(self->model);
    if (self->lock != NULL) {
        PyThread_free_lock(self->lock);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *model_close(model_object *self, PyObject *unused)
{
    (void)unused;
    if (self->owner == PyThread_get_thread_ident()) {
        ck_error e = {CK_E_ARG, "model: closed from a callback of its own running call"};
        return ckpy_raise(&e);
    }
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
    ck_model_free(self->model);
    self->model = NULL;
    PyThread_release_lock(self->lock);
    Py_RETURN_NONE;
}

/* The sequence set as (features, offsets, line, chunk, phonemes, warnings); takes its arrays. */
static PyObject *sequence_set_to_py(ck_sequence_set *s, size_t cols, const msg_list *warnings)
{
    npy_intp rows_dims[2] = {(npy_intp)s->n_tokens, (npy_intp)cols};
    npy_intp off_dims[1] = {(npy_intp)s->n_sequences + 1}, seq_dims[1] = {(npy_intp)s->n_sequences};
    PyObject *rows = owned_array(s->rows, 2, rows_dims, NPY_FLOAT32);
    PyObject *offsets = owned_array(s->offsets, 1, off_dims, NPY_INT64);
    PyObject *line = owned_array(s->line, 1, seq_dims, NPY_INT64);
    PyObject *chunk = owned_array(s->chunk, 1, seq_dims, NPY_INT64);
    s->rows = NULL, s->offsets = NULL, s->line = NULL, s->chunk = NULL; /* now the arrays' */
    PyObject *phonemes = PyList_New((Py_ssize_t)s->n_sequences);
    for (size_t i = 0; phonemes != NULL && i < s->n_sequences; i++) {
        PyObject *ph = PyUnicode_DecodeUTF8(s->phonemes[i], (Py_ssize_t)strlen(s->phonemes[i]),
                                            "replace");
        if (ph == NULL) {
            Py_CLEAR(phonemes);
            break;
        }
        PyList_SET_ITEM(phonemes, (Py_ssize_t)i, ph);
    }
    PyObject *warn = msg_list_to_py(warnings);
    PyObject *out = NULL;
    if (rows && offsets && line && chunk && phonemes && warn) {
        out = PyTuple_Pack(6, rows, offsets, line, chunk, phonemes, warn);
    }
    Py_XDECREF(rows), Py_XDECREF(offsets), Py_XDECREF(line), Py_XDECREF(chunk);
    Py_XDECREF(phonemes), Py_XDECREF(warn);
    return out;
}

/* The lines of a Python sequence of str as UTF-8 pointers into the str objects (kept by fast). */
static const char **utf8_lines(PyObject *fast, Py_ssize_t n)
{
    const char **lines = PyMem_Calloc((size_t)n + 1, sizeof *lines);
    if (lines == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        Py_ssize_t len = 0;
        if (!PyUnicode_Check(item)) {
            PyErr_Format(PyExc_TypeError, "lines[%zd]: expected str, got %.80s", i,
                         Py_TYPE(item)->tp_name);
        } else if ((lines[i] = PyUnicode_AsUTF8AndSize(item, &len)) != NULL &&
                   strlen(lines[i]) != (size_t)len) {
            ck_error e = {CK_E_ARG, ""};
            snprintf(e.message, sizeof e.message, "tokenize: line %zd holds a NUL character",
                     i + 1);
            ckpy_raise(&e);
        }
        if (PyErr_Occurred()) {
            PyMem_Free(lines);
            return NULL;
        }
    }
    return lines;
}

static PyObject *model_encode_lines(model_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"lines", "format", "lang", "strict_symbols", "layer", "g2p",
                            "lexicon_dir", NULL};
    PyObject *seq, *lexicon_dir = NULL;
    int format = CK_INPUT_PHONEMES, strict = 0, layer = CK_LAYER_FEATURES;
    const char *lang = NULL, *g2p = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|izpizO&", names, &seq, &format, &lang, &strict,
                                     &layer, &g2p, ckpy_path_or_none, &lexicon_dir)) {
        return NULL;
    }
    PyObject *fast = PySequence_Fast(seq, "lines: expected a sequence of str");
    if (fast == NULL) {
        Py_XDECREF(lexicon_dir);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    const char **lines = utf8_lines(fast, n);
    if (lines == NULL || begin_call(self) != 0) {
        PyMem_Free(lines);
        Py_DECREF(fast);
        Py_XDECREF(lexicon_dir);
        return NULL;
    }
    msg_list warnings = {0};
    ck_lines_params lp = ck_lines_default_params();
    lp.format = (ck_input_format)format;
    lp.lang = lang;
    lp.strict_symbols = strict;
    lp.g2p = g2p;
    lp.lexicon_dir = ckpy_path_str(lexicon_dir);
    lp.log = collect_warning;
    lp.log_ctx = &warnings;
    ck_sequence_set s;
    ck_error err = {0};
    size_t cols = ck_model_cols(self->model, (ck_layer)layer);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = ck_model_encode_lines(self->model, lines, (size_t)n, &lp, (ck_layer)layer, &s, &err);
    Py_END_ALLOW_THREADS
    PyObject *out = end_call(self, rc, &err) == 0 ? sequence_set_to_py(&s, cols, &warnings) : NULL;
    ck_sequence_set_free(&s);
    msg_list_free(&warnings);
    PyMem_Free(lines);
    Py_DECREF(fast);
    Py_XDECREF(lexicon_dir);
    return out;
}

/* Sequence s's words as a list of (phonemes, start, end), None for a time Kokoro does not give. */
static PyObject *words_to_py(const ck_prosody *p, const char *phonemes, size_t s)
{
    PyObject *list = PyList_New(0);
    for (size_t w = p->word_offsets[s]; list != NULL && w < p->word_offsets[s + 1]; w++) {
        const ck_word_time *t = &p->words[w];
        PyObject *text = PyUnicode_DecodeUTF8(phonemes + t->byte, (Py_ssize_t)t->bytes, "replace");
        /* NaN: a word Kokoro gives no time */
        PyObject *start = Py_IS_NAN(t->start) ? Py_NewRef(Py_None)
                                              : PyFloat_FromDouble(t->start);
        PyObject *end = Py_IS_NAN(t->end) ? Py_NewRef(Py_None) : PyFloat_FromDouble(t->end);
        PyObject *item = text && start && end ? PyTuple_Pack(3, text, start, end) : NULL;
        Py_XDECREF(text), Py_XDECREF(start), Py_XDECREF(end);
        if (item == NULL || PyList_Append(list, item) != 0) {
            Py_XDECREF(item);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(item);
    }
    return list;
}

/* (durations, offsets, frame_offsets, line, chunk, phonemes, words, warnings); the arrays take
 * over s's and p's buffers. */
static PyObject *prosody_to_py(ck_sequence_set *s, ck_prosody *p, const msg_list *warnings)
{
    npy_intp tok_dims[1] = {(npy_intp)p->n_tokens}, off_dims[1] = {(npy_intp)s->n_sequences + 1};
    PyObject *words = PyList_New((Py_ssize_t)s->n_sequences);
    for (size_t i = 0; words != NULL && i < s->n_sequences; i++) {
        PyObject *w = words_to_py(p, s->phonemes[i], i);
        if (w == NULL) {
            Py_CLEAR(words);
            break;
        }
        PyList_SET_ITEM(words, (Py_ssize_t)i, w);
    }
    PyObject *durations = owned_array(p->durations, 1, tok_dims, NPY_INT32);
    npy_intp curve_dims[1] = {(npy_intp)(2 * p->frame_offsets[s->n_sequences])};
    PyObject *frames = owned_array(p->frame_offsets, 1, off_dims, NPY_INT64);
    PyObject *f0 = p->f0 != NULL ? owned_array(p->f0, 1, curve_dims, NPY_FLOAT32)
                                 : (Py_INCREF(Py_None), Py_None);
    PyObject *n = p->n != NULL ? owned_array(p->n, 1, curve_dims, NPY_FLOAT32)
                               : (Py_INCREF(Py_None), Py_None);
    p->durations = NULL, p->frame_offsets = NULL, p->f0 = NULL, p->n = NULL; /* the arrays' */
    /* the set's own tuple: rows (none here), offsets, line, chunk, phonemes, warnings */
    PyObject *set = sequence_set_to_py(s, 0, warnings), *out = NULL;
    if (set != NULL && words != NULL && durations != NULL && frames != NULL && f0 != NULL &&
        n != NULL) {
        out = Py_BuildValue("(OOOOOOOOOO)", durations, PyTuple_GET_ITEM(set, 1), frames,
                            PyTuple_GET_ITEM(set, 2), PyTuple_GET_ITEM(set, 3),
                            PyTuple_GET_ITEM(set, 4), words, PyTuple_GET_ITEM(set, 5), f0, n);
    }
    Py_XDECREF(set), Py_XDECREF(words), Py_XDECREF(durations), Py_XDECREF(frames);
    Py_XDECREF(f0), Py_XDECREF(n);
    return out;
}

static PyObject *model_prosody(model_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"lines", "format", "lang", "strict_symbols", "g2p", "lexicon_dir",
                            "voice", "speed", NULL};
    PyObject *seq, *lexicon_dir = NULL, *voice = NULL;
    int format = CK_INPUT_PHONEMES, strict = 0;
    const char *lang = NULL, *g2p = NULL;
    double speed = 1.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|izpzO&O&d", names, &seq, &format, &lang, &strict,
                                     &g2p, ckpy_path_or_none, &lexicon_dir, ckpy_path_or_none,
                                     &voice, &speed)) {
        return NULL;
    }
    PyObject *fast = PySequence_Fast(seq, "lines: expected a sequence of str"), *out = NULL;
    Py_ssize_t n = fast != NULL ? PySequence_Fast_GET_SIZE(fast) : 0;
    const char **lines = fast != NULL ? utf8_lines(fast, n) : NULL;
    if (lines != NULL && begin_call(self) == 0) {
        msg_list warnings = {0};
        ck_lines_params lp = ck_lines_default_params();
        lp.format = (ck_input_format)format;
        lp.lang = lang;
        lp.strict_symbols = strict;
        lp.g2p = g2p;
        lp.lexicon_dir = ckpy_path_str(lexicon_dir);
        lp.log = collect_warning;
        lp.log_ctx = &warnings;
        ck_sequence_set s;
        ck_prosody p;
        memset(&p, 0, sizeof p);
        ck_error err = {0};
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ck_model_tokenize(self->model, lines, (size_t)n, &lp, &s, &err);
        if (rc == CK_OK) {
            rc = ck_model_prosody(self->model, &s, ckpy_path_str(voice), speed, &p, &err);
        }
        Py_END_ALLOW_THREADS
        out = end_call(self, rc, &err) == 0 ? prosody_to_py(&s, &p, &warnings) : NULL;
        ck_prosody_free(&p);
        ck_sequence_set_free(&s);
        msg_list_free(&warnings);
    }
    PyMem_Free(lines);
    Py_XDECREF(fast);
    Py_XDECREF(lexicon_dir);
    Py_XDECREF(voice);
    return out;
}

/* One spoken line as the speak callback copies it (no Python object: the GIL is released). */
typedef struct {
    size_t line, samples, n_words;
    float *audio;
    ck_word_time *words;
    char **texts;   /* [n_words] each word's phonemes, NUL-terminated */
} spoken_line;

typedef struct {
    const ck_sequence_set *set;
    spoken_line *lines;
    size_t n, cap;
} spoken;

static int keep_line(void *user, const ck_speech_line *l, ck_error *err)
{
    spoken *sp = user;
    if (sp->n == sp->cap) {
        size_t cap = sp->cap ? 2 * sp->cap : 16;
        spoken_line *q = realloc(sp->lines, cap * sizeof *q);
        if (q == NULL) {
            err->code = CK_E_MEMORY;
            snprintf(err->message, sizeof err->message, "speak: cannot allocate");
            return CK_E_MEMORY;
        }
        sp->lines = q, sp->cap = cap;
    }
    spoken_line *o = &sp->lines[sp->n];
    memset(o, 0, sizeof *o);
    o->line = l->line;
    o->samples = l->samples;
    o->audio = malloc((l->samples + 1) * sizeof(float));
    o->words = malloc((l->n_words + 1) * sizeof *o->words);
    o->texts = calloc(l->n_words + 1, sizeof *o->texts);
    int ok = o->audio && o->words && o->texts;
    sp->n++;
    if (ok) {
        memcpy(o->audio, l->audio, l->samples * sizeof(float));
        for (size_t c = 0; ok && c < l->chunks; c++) {
            const char *ph = sp->set->phonemes[l->first_sequence + c];
            for (size_t w = l->chunk_words[c]; ok && w < l->chunk_words[c + 1]; w++) {
                o->words[w] = l->words[w];
                o->texts[w] = malloc(l->words[w].bytes + 1);
                ok = o->texts[w] != NULL;
                if (ok) {
                    memcpy(o->texts[w], ph + l->words[w].byte, l->words[w].bytes);
                    o->texts[w][l->words[w].bytes] = '\0';
                    o->n_words = w + 1;
                }
            }
        }
    }
    if (!ok) {
        err->code = CK_E_MEMORY;
        snprintf(err->message, sizeof err->message, "speak: cannot allocate");
        return CK_E_MEMORY;
    }
    return CK_OK;
}

static void spoken_free(spoken *sp)
{
    for (size_t i = 0; i < sp->n; i++) {
        free(sp->lines[i].audio);
        for (size_t w = 0; sp->lines[i].texts && w < sp->lines[i].n_words; w++) {
            free(sp->lines[i].texts[w]);
        }
        free(sp->lines[i].texts);
        free(sp->lines[i].words);
    }
    free(sp->lines);
    memset(sp, 0, sizeof *sp);
}

/* [(line, audio float32 array, [(phonemes, start, end), ...]), ...]; audio buffers taken over. */
static PyObject *spoken_to_py(spoken *sp)
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list != NULL && i < sp->n; i++) {
        spoken_line *l = &sp->lines[i];
        npy_intp dims[1] = {(npy_intp)l->samples};
        PyObject *audio = owned_array(l->audio, 1, dims, NPY_FLOAT32);
        if (audio != NULL) {
            l->audio = NULL; /* now the array's */
        }
        PyObject *words = PyList_New(0);
        for (size_t w = 0; words != NULL && w < l->n_words; w++) {
            const ck_word_time *t = &l->words[w];
            PyObject *text = PyUnicode_DecodeUTF8(l->texts[w], (Py_ssize_t)strlen(l->texts[w]),
                                                  "replace");
            PyObject *start = Py_IS_NAN(t->start) ? Py_NewRef(Py_None)
                                                  : PyFloat_FromDouble(t->start);
            PyObject *end = Py_IS_NAN(t->end) ? Py_NewRef(Py_None) : PyFloat_FromDouble(t->end);
            PyObject *item = text && start && end ? PyTuple_Pack(3, text, start, end) : NULL;
            Py_XDECREF(text), Py_XDECREF(start), Py_XDECREF(end);
            if (item == NULL || PyList_Append(words, item) != 0) {
                Py_XDECREF(item);
                Py_CLEAR(words);
                break;
            }
            Py_DECREF(item);
        }
        PyObject *item = audio && words ? Py_BuildValue("(nOO)", (Py_ssize_t)l->line, audio, words)
                                        : NULL;
        Py_XDECREF(audio), Py_XDECREF(words);
        if (item == NULL || PyList_Append(list, item) != 0) {
            Py_XDECREF(item);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(item);
    }
    return list;
}

static PyObject *model_speak(model_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"lines", "format", "lang", "strict_symbols", "g2p", "lexicon_dir",
                            "voice", "speed", "seed", "noise_scale", NULL};
    PyObject *seq, *lexicon_dir = NULL, *voice = NULL;
    int format = CK_INPUT_PHONEMES, strict = 0;
    const char *lang = NULL, *g2p = NULL;
    double speed = 1.0, noise_scale = 1.0;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|izpzO&O&dKd", names, &seq, &format, &lang,
                                     &strict, &g2p, ckpy_path_or_none, &lexicon_dir,
                                     ckpy_path_or_none, &voice, &speed, &seed, &noise_scale)) {
        return NULL;
    }
    PyObject *fast = PySequence_Fast(seq, "lines: expected a sequence of str"), *out = NULL;
    Py_ssize_t n = fast != NULL ? PySequence_Fast_GET_SIZE(fast) : 0;
    const char **lines = fast != NULL ? utf8_lines(fast, n) : NULL;
    if (lines != NULL && begin_call(self) == 0) {
        msg_list warnings = {0};
        ck_lines_params lp = ck_lines_default_params();
        lp.format = (ck_input_format)format;
        lp.lang = lang;
        lp.strict_symbols = strict;
        lp.g2p = g2p;
        lp.lexicon_dir = ckpy_path_str(lexicon_dir);
        lp.log = collect_warning;
        lp.log_ctx = &warnings;
        ck_speak_options o;
        ck_speak_options_init(&o);
        o.voice = ckpy_path_str(voice);
        o.speed = speed;
        o.seed = (uint64_t)seed;
        o.noise_scale = (float)noise_scale;
        ck_sequence_set s;
        memset(&s, 0, sizeof s);
        spoken sp = {0};
        ck_error err = {0};
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ck_model_tokenize(self->model, lines, (size_t)n, &lp, &s, &err);
        if (rc == CK_OK) {
            sp.set = &s;
            rc = ck_model_speak(self->model, &s, &o, keep_line, &sp, &err);
        }
        Py_END_ALLOW_THREADS
        out = end_call(self, rc, &err) == 0 ? spoken_to_py(&sp) : NULL;
        spoken_free(&sp);
        ck_sequence_set_free(&s);
        msg_list_free(&warnings);
    }
    PyMem_Free(lines);
    Py_XDECREF(fast);
    Py_XDECREF(lexicon_dir);
    Py_XDECREF(voice);
    return out;
}

static PyObject *summary_to_py(const ck_corpus_summary *s)
{
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:d,s:d,s:n}", "lines",
                         (Py_ssize_t)s->lines,
                         "sequences", (Py_ssize_t)s->sequences, "tokens", (Py_ssize_t)s->tokens,
                         "chunked_lines", (Py_ssize_t)s->chunked_lines, "skipped_lines",
                         (Py_ssize_t)s->skipped_lines, "empty_lines", (Py_ssize_t)s->empty_lines,
                         "dropped_symbols", (Py_ssize_t)s->dropped_symbols, "resumed_tokens",
                         (Py_ssize_t)s->resumed_tokens, "seconds", s->seconds, "g2p_seconds",
                         s->g2p_seconds, "g2p_fallback_words", (Py_ssize_t)s->g2p_fallback_words);
}

static PyObject *model_run(model_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"input", "output", "format", "lang", "layer", "strict_symbols",
                            "skip_bad_lines", "resume", "progress", "progress_interval", "log",
                            "g2p", "lexicon_dir", "voice", "speed", NULL};
    PyObject *input = NULL, *output = NULL, *progress = Py_None, *log = Py_None;
    PyObject *lexicon_dir = NULL, *voice = NULL;
    int format = CK_INPUT_PHONEMES, layer = CK_LAYER_FEATURES, strict = 0, skip = 0, resume = 1;
    const char *lang = NULL, *g2p = NULL;
    double interval = 0.5, speed = 1.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|izippiOdOzO&O&d", names,
                                     PyUnicode_FSConverter, &input, PyUnicode_FSConverter, &output,
                                     &format, &lang, &layer, &strict, &skip, &resume, &progress,
                                     &interval, &log, &g2p, ckpy_path_or_none, &lexicon_dir,
                                     ckpy_path_or_none, &voice, &speed)) {
        Py_XDECREF(input);
        Py_XDECREF(output);
        return NULL;
    }
    PyObject *result = NULL;
    if (begin_call(self) == 0) {
        self->progress = progress != Py_None ? progress : NULL;
        self->log = log != Py_None ? log : NULL;
        ck_corpus_params cp = ck_corpus_default_params();
        cp.input = PyBytes_AS_STRING(input);
        cp.output = PyBytes_AS_STRING(output);
        cp.format = (ck_input_format)format;
        cp.lang = lang;
        cp.layer = (ck_layer)layer;
        cp.strict_symbols = strict;
        cp.skip_bad_lines = skip;
        cp.resume = resume;
        cp.progress = progress_cb;
        cp.progress_ctx = self;
        cp.progress_interval = interval;
        cp.g2p = g2p;
        cp.lexicon_dir = ckpy_path_str(lexicon_dir);
        cp.voice = ckpy_path_str(voice);
        cp.speed = speed;
        cp.log = log_cb;
        cp.log_ctx = self;
        ck_corpus_summary sum;
        memset(&sum, 0, sizeof sum);
        ck_error err = {0};
        int rc;
        Py_BEGIN_ALLOW_THREADS
        rc = ck_run_corpus(self->model, &cp, &sum, &err);
        Py_END_ALLOW_THREADS
        result = end_call(self, rc, &err) == 0 ? summary_to_py(&sum) : NULL;
    }
    Py_DECREF(input);
    Py_DECREF(output);
    Py_XDECREF(lexicon_dir);
    Py_XDECREF(voice);
    return result;
}

/* Model properties: one getter per ck_model_* query. */
static PyObject *model_info(model_object *self, PyObject *unused)
{
    (void)unused;
    if (self->model == NULL) {
        ck_error e = {CK_E_ARG, "model: closed"};
        return ckpy_raise(&e);
    }
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:s,s:s}", "features_cols",
                         (Py_ssize_t)ck_model_cols(self->model, CK_LAYER_FEATURES), "hidden_cols",
                         (Py_ssize_t)ck_model_cols(self->model, CK_LAYER_HIDDEN), "max_tokens",
                         (Py_ssize_t)ck_model_max_tokens(self->model), "vocab_rows",
                         (Py_ssize_t)ck_model_vocab_rows(self->model), "weights_identity",
                         ck_model_weights_identity(self->model), "backend",
                         ck_model_backend(self->model));
}

static PyObject *model_closed(model_object *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->model == NULL);
}

static PyMethodDef model_methods[] = {
    {"encode_lines", (PyCFunction)(void (*)(void))model_encode_lines, METH_VARARGS | METH_KEYWORDS,
     "encode_lines(lines, format=0, lang=None, strict_symbols=False, layer=0) -> (features, "
     "offsets, line, chunk, phonemes, warnings): ck_model_encode_lines, GIL released."},
    {"speak", (PyCFunction)(void (*)(void))model_speak, METH_VARARGS | METH_KEYWORDS,
     "speak(lines, format=0, lang=None, strict_symbols=False, g2p=None, lexicon_dir=None, "
     "voice=None, speed=1.0, seed=0, noise_scale=1.0) -> [(line, float32 audio, words)]: "
     "ck_model_tokenize + ck_model_speak, GIL released."},
    {"prosody", (PyCFunction)(void (*)(void))model_prosody, METH_VARARGS | METH_KEYWORDS,
     "prosody(lines, format=0, lang=None, strict_symbols=False, g2p=None, lexicon_dir=None, "
     "voice=None, speed=1.0) -> (durations, offsets, frame_offsets, line, chunk, phonemes, words, "
     "warnings): ck_model_tokenize + ck_model_prosody, GIL released."},
    {"run", (PyCFunction)(void (*)(void))model_run, METH_VARARGS | METH_KEYWORDS,
     "run(input, output, ...) -> summary dict: ck_run_corpus, GIL released."},
    {"info", (PyCFunction)model_info, METH_NOARGS, "info() -> dict of the model's dims."},
    {"close", (PyCFunction)model_close, METH_NOARGS, "close(): frees the model (idempotent)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef model_getset[] = {
    {"closed", (getter)model_closed, NULL, "True once close() ran.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject ckpy_model_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ckbatch._ckbatch.Model",
    .tp_basicsize = sizeof(model_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Model(weights=None, config=None, threads=0, parity=False, max_batch_tokens=2048, "
              "seed=20261129, circuit=None, weights_manifest=None): a loaded ck_model.",
    .tp_new = model_new,
    .tp_init = (initproc)model_init,
    .tp_dealloc = (destructor)model_dealloc,
    .tp_methods = model_methods,
    .tp_getset = model_getset,
};
