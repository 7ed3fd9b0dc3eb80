/* ckbench_speech.h - `ckbench --speech` (ckbench_speech.c). */
#ifndef CK_BENCH_SPEECH_H
#define CK_BENCH_SPEECH_H

/* Runs the speech benchmark on ckbench's argv (which holds --speech); prints its report. Exit
 * status: 0, 1 on a failed run, 2 on bad arguments. */
int ck_bench_speech_main(int argc, char **argv);

#endif
