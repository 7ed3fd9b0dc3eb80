/* xray_model.c - X-Ray's parity run of ckbatch.h (ck_xray_run): the oracle and its cases opened by
 * the xray room, the model they run on opened here like every other model (ck_model_open_for_xray;
 * the speech circuit for a speech capture, the prosody circuit for a token-side one), then the run
 * and the report (xray_run.c, xray_speech.c). */
#include <string.h>

#include "model_internal.h"
#include "op_table.h"
#include "synth_weights.h"
#include "xray.h"

ck_xray_params ck_xray_default_params(void)
{
    ck_xray_params p;
    memset(&p, 0, sizeof p);
    p.seed = CK_SYNTH_DEFAULT_SEED;
    return p;
}

int ck_xray_run(const ck_xray_params *p, ck_error *err)
{
    if (p == NULL) {
        return ck_fail(err, CK_E_ARG, "xray: null params");
    }
    ck_xray_run_options o = {.oracle = p->oracle,
                             .manifest = p->manifest,
                             .profile = p->profile,
                             .report = p->report,
                             .capture_out = p->capture_out,
                             .capture_ids = p->capture_ids,
                             .seed = p->seed,
                             .log = p->log,
                             .log_ctx = p->log_ctx,
                             .precision = ck_precision_dtype(p->precision)};
    ck_xray_session *x = NULL;
    ck_model *m = NULL;
    int rc = ck_xray_session_open(&x, &o, err);
    if (rc == CK_OK) {
        ck_model_params mp = ck_model_default_params();
        /* a speech capture (tests/fixtures/speech) runs on the speech circuit unless told; a
         * token-side one (no noise, no decoder stage: the edge capture) on the prosody circuit */
        mp.circuit = p->circuit != NULL || !ck_xray_session_is_speech(x) ? p->circuit
                     : ck_xray_session_is_token_side(x) ? ck_prosody_circuit_path()
                                                        : ck_speech_circuit_path();
        mp.weights = p->weights;
        mp.seed = ck_xray_session_seed(x);
        mp.precision = p->precision;
        mp.compiled = p->compiled;
        mp.parity = 1;
        rc = ck_model_open_for_xray(&m, &mp, ck_xray_session_longest(x),
                                    ck_xray_session_frames(x), err);
    }
    if (rc == CK_OK) {
        const ck_xray_engine engine = {.circuit = &m->circuit,
                                       .weights = m->weights,
                                       .executor = m->executor,
                                       .library = &m->library};
        rc = ck_xray_session_run(x, &engine, err);
    }
    ck_model_free(m);
    ck_xray_session_free(x);
    return rc;
}
