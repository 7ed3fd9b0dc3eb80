/* xray_main.c - the `ckbatch xray` subcommand: compares a candidate capture file with an oracle
 * capture and writes the report. Parses its own options; runs no model. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "circuit_default.h"
#include "cli.h"
#include "xray.h"

typedef struct {
    const char *candidate, *oracle, *profile, *report, *manifest;
    int quiet;
} xray_args;

static int parse_args(int argc, char **argv, xray_args *a)
{
    static const struct option opts[] = {
        {"candidate", required_argument, NULL, 'c'}, {"oracle", required_argument, NULL, 'o'},
        {"profile", required_argument, NULL, 'p'},   {"report", required_argument, NULL, 'r'},
        {"manifest", required_argument, NULL, 'm'},  {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    const char **dst[] = {&a->candidate, &a->oracle, &a->profile, &a->report, &a->manifest};
    static const char letters[] = "coprm";
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        const char *slot = ch > 0 ? strchr(letters, ch) : NULL;
        if (ch == 'q') {
            a->quiet = 1;
        } else if (slot != NULL) {
            *dst[slot - letters] = optarg;
        } else {
            return -1;
        }
    }
    return optind == argc && a->candidate != NULL && a->oracle != NULL ? 0 : -1;
}

/* Verifies the oracle's manifest when it has one (a second candidate as "oracle" has none). */
static int verify_oracle(const xray_args *a, void **manifest, ck_error *err)
{
    char path[4096];
    const char *m = a->manifest;
    if (m == NULL && ck_xray_manifest_path(a->oracle, path, sizeof path, err) == CK_OK) {
        FILE *f = fopen(path, "rb");
        m = f != NULL ? path : NULL;
        if (f != NULL) {
            fclose(f);
        }
    }
    if (m == NULL) {
        fprintf(stderr, "ckbatch: xray: %s has no manifest: bytes not verified\n", a->oracle);
        return CK_OK;
    }
    return ck_xray_verify_fixture(a->oracle, m, manifest, err);
}

static int compare(const xray_args *a, ck_xray_report *rep, void *manifest, ck_error *err)
{
    ck_st_file *cand = NULL, *oracle = NULL;
    ck_circuit c;
    memset(&c, 0, sizeof c);
    const char **ids = NULL;
    size_t n_ids = 0;
    ck_xray_profile profile = {0};
    int rc = ck_st_open(&cand, a->candidate, err);
    if (rc == CK_OK) {
        rc = ck_st_open(&oracle, a->oracle, err);
    }
    if (rc == CK_OK) {
        rc = ck_xray_profile_load(&profile, a->profile, err);
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
                           "(not recorded by the candidate)", "", a->candidate, a->oracle,
                           oracle_json, 0};
    if (rc == CK_OK && a->report != NULL) {
        rc = ck_xray_report_write(rep, &id, a->report, err);
    }
    free(oracle_json);
    free(ids);
    ck_circuit_free(&c);
    ck_xray_profile_free(&profile);
    ck_st_close(cand);
    ck_st_close(oracle);
    return rc;
}

int ck_xray_main(int argc, char **argv)
{
    xray_args a = {0};
    if (parse_args(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: ckbatch xray --candidate A.safetensors --oracle B.safetensors "
                "[--profile P.json] [--report R.json] [--manifest M.json] [--quiet]\n");
        return 2;
    }
    ck_error err = {0};
    ck_xray_report rep = {0};
    void *manifest = NULL;
    int rc = verify_oracle(&a, &manifest, &err);
    if (rc == CK_OK) {
        rc = compare(&a, &rep, manifest, &err);
    }
    if (rc == CK_OK && !a.quiet) {
        ck_xray_report_print(&rep, stderr);
    }
    int status = rc == CK_OK ? ck_xray_report_status(&rep) : rc;
    if (rc != CK_OK) {
        fprintf(stderr, "ckbatch: error: %s\n", err.message);
    }
    ck_xray_report_free(&rep);
    ck_xray_manifest_free(manifest);
    return status == CK_OK ? 0 : 1;
}
