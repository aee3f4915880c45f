/* Random sampling ops. Each draws serially from one generator (under its
 * lock), so a seed gives the same stream in every process and thread count. */
#ifndef AT_RANDOM_H
#define AT_RANDOM_H

#include "ATen.h"
#include "../TH/THRandom.h"

/* in-place samplers: fill t (any layout) and return it retained */
AT_API THTensor *at_uniform_(THTensor *t, double from, double to, THGenerator *g);
AT_API THTensor *at_normal_(THTensor *t, double mean, double std, THGenerator *g);
AT_API THTensor *at_bernoulli_p_(THTensor *t, double p, THGenerator *g);
AT_API THTensor *at_bernoulli_t_(THTensor *t, const THTensor *p, THGenerator *g);
AT_API THTensor *at_exponential_(THTensor *t, double lambd, THGenerator *g);
AT_API THTensor *at_geometric_(THTensor *t, double p, THGenerator *g);
AT_API THTensor *at_log_normal_(THTensor *t, double mean, double std, THGenerator *g);
AT_API THTensor *at_cauchy_(THTensor *t, double median, double sigma, THGenerator *g);
/* the CUDA generator's state (tensors on a GPU draw from it, whatever generator is passed) */
AT_API void at_cuda_manual_seed(uint64_t seed);
AT_API uint64_t at_cuda_initial_seed(void);
AT_API void at_cuda_rng_state(uint64_t *seed, uint64_t *offset);
AT_API void at_cuda_set_rng_state(uint64_t seed, uint64_t offset);
/* random_(from, to): integers in [from, to); to absent: the dtype's range */
AT_API THTensor *at_random_(THTensor *t, int64_t from, ATOptInt to, THGenerator *g);

/* new tensors */
AT_API THTensor *at_bernoulli(const THTensor *p, THGenerator *g);
AT_API THTensor *at_bernoulli_float(const THTensor *self, double p, THGenerator *g);
AT_API THTensor *at_normal_tensors(const THTensor *mean, const THTensor *std, THGenerator *g);
AT_API THTensor *at_randperm(int64_t n, THDtype dtype, THGenerator *g);
AT_API THTensor *at_multinomial(const THTensor *probs, int64_t n, bool replacement, THGenerator *g);
AT_API THTensor *at_poisson(const THTensor *rates, THGenerator *g);
/* torch's _standard_gamma and _sample_dirichlet (CPU): its draws for a seed */
AT_API THTensor *at_standard_gamma(const THTensor *alpha, THGenerator *g);
AT_API THTensor *at_sample_dirichlet(const THTensor *alpha, THGenerator *g);

#endif
