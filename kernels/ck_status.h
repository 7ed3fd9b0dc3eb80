/* ck_status.h - the one status list of ckbatch (0 or a negative CK_E_* code) is the public one:
 * the kernels take it from include/ckbatch.h, where ck_status_name is declared too. */
#ifndef CK_STATUS_H
#define CK_STATUS_H

#include "ckbatch.h"

#endif
