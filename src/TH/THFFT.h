/* The DFT core shared by the complex dtypes' fft_rows (generic/THTensorComplex.c):
 * a plan for one length and direction, run on rows of interleaved (re, im)
 * doubles. Float rows are widened to double so they lose nothing to the
 * twiddles. */
#ifndef TH_FFT_H
#define TH_FFT_H
#include <stdint.h>

typedef struct THFFTPlan THFFTPlan;

/* sign -1: forward (exp(-2 pi i jk/n)), +1: backward (unscaled). NULL when out of memory. */
THFFTPlan *THFFT_plan(int64_t n, int sign);
void THFFT_plan_free(THFFTPlan *p);
/* doubles of scratch one row's run needs (besides the row itself) */
int64_t THFFT_work_size(const THFFTPlan *p);
/* x: n complex values, interleaved; transformed in place. work: THFFT_work_size doubles. */
void THFFT_run(const THFFTPlan *p, double *x, double *work);

#endif
