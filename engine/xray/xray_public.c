/* xray_public.c - the comparison of two capture files (ck_xray_compare_captures of ckbatch.h). The
 * parity run (ck_xray_run) opens a model, so it lives in the api room (engine/api/xray_model.c). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit_default.h"
#include "xray.h"

/* Verifies the oracle's manifest when it has one (a second candidate as "oracle" has none). */
static int verify_oracle(const char *oracle, const char *manifest_path, void **manifest,
                         ck_log_fn log, void *log_ctx, ck_error *err)
{
    char path[4096];
    const char *m = manifest_path;
    if (m == NULL && ck_xray_manifest_path(oracle, path, sizeof path, err) == CK_OK) {
        FILE *f = fopen(path, "rb");
        m = f != NULL ? path : NULL;
        if (f != NULL) {
            fclose(f);
        }
    }
    if (m == NULL) {
        ck_log(log, log_ctx, CK_LOG_WARNING, "xray: %s has no manifest: bytes not verified", oracle);
        return CK_OK;
    }
    return ck_xray_verify_fixture(oracle, m, manifest, err);
}

static int compare(const char *candidate, const char *oracle_path, const char *profile_path,
                   const char *report, ck_xray_report *rep, void *manifest, ck_error *err)
{
    ck_st_file *cand = NULL, *oracle = NULL;
    ck_circuit c;
    memset(&c, 0, sizeof c);
    const char **ids = NULL;
    size_t n_ids = 0;
    ck_xray_profile profile = {0};
    int rc = ck_st_open(&cand, candidate, err);
    if (rc == CK_OK) {
        rc = ck_st_open(&oracle, oracle_path, err);
    }
    if (rc == CK_OK) {
        /* a bf16 (int8) run's capture says so: it is held to the bf16 (int8) budget */
        const char *prec = ck_st_metadata(cand, "precision");
        ck_dtype dtype = prec != NULL && strcmp(prec, "bf16") == 0   ? CK_DTYPE_BF16
                         : prec != NULL && strcmp(prec, "int8") == 0 ? CK_DTYPE_I8
                                                                      : CK_DTYPE_F32;
        rc = ck_xray_profile_load(&profile, profile_path, dtype, err);
    }
    if (rc == CK_OK) {
        rc = ck_circuit_load_default(&c, NULL, err);
    }
    if (rc == CK_OK) {
        rc = ck_xray_circuit_checkpoints(&c, &ids, &n_ids, err);
    }
    if (rc == CK_OK) {
        rc = ck_xray_compare_files(cand, oracle, ids, n_ids, &profile, rep, err);
    }
    char *oracle_json = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(manifest, "oracle"));
    const char *version = cand ? ck_st_metadata(cand, "engine_version") : NULL;
    ck_xray_identity id = {version ? version : "(not recorded)", ck_xray_build_flags(),
                           "(not recorded by the candidate)", "", candidate, oracle_path,
                           oracle_json, 0, "(not recorded by the candidate)", "", "", ""};
    if (rc == CK_OK && report != NULL) {
        rc = ck_xray_report_write(rep, &id, report, err);
    }
    free(oracle_json);
    free(ids);
    ck_circuit_free(&c);
    ck_xray_profile_free(&profile);
    ck_st_close(cand);
    ck_st_close(oracle);
    return rc;
}

int ck_xray_compare_captures(const char *candidate, const char *oracle, const char *profile,
                             const char *report, const char *manifest_path, ck_log_fn log,
                             void *log_ctx, ck_error *err)
{
    if (candidate == NULL || oracle == NULL) {
        return ck_fail(err, CK_E_ARG, "xray: a candidate and an oracle capture are required");
    }
    ck_xray_report rep = {0};
    void *manifest = NULL;
    int rc = verify_oracle(oracle, manifest_path, &manifest, log, log_ctx, err);
    if (rc == CK_OK) {
        rc = compare(candidate, oracle, profile, report, &rep, manifest, err);
    }
    if (rc == CK_OK) {
        rc = ck_xray_report_log(&rep, log, log_ctx, err);
    }
    if (rc == CK_OK && ck_xray_report_status(&rep) != CK_OK) {
        rc = ck_fail(err, CK_E_PARITY, "xray: %zu of %zu compared checkpoints failed", rep.failed,
                     rep.failed + rep.passed);
    }
    ck_xray_report_free(&rep);
    ck_xray_manifest_free(manifest);
    return rc;
}
