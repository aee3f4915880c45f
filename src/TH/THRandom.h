/* Random number generation: a Mersenne Twister (mt19937) per generator,
 * so the same seed gives the same stream in every process. */
#ifndef TH_RANDOM_H
#define TH_RANDOM_H

#include "THGeneral.h"
#include <pthread.h>

#define TH_MT_N 624

typedef struct THGenerator {
  uint64_t seed;
  uint32_t state[TH_MT_N];
  int left;                 /* words left before the state is regenerated */
  bool read_out;            /* left is 0 because every word was read (not a fresh seed): torch's next is N */
  bool has_next_normal;     /* Box-Muller makes normals in pairs */
  double next_normal;
  pthread_mutex_t mutex;    /* ops that draw hold it for their whole fill */
} THGenerator;

/* The serialized state (get_rng_state / set_rng_state): torch's CPUGeneratorImplState byte for byte (5056
 * bytes), so a state saved by either library restores in the other. Its mt19937 counts as torch's engine
 * does: `left` is the words not yet read plus one (1 when freshly seeded), `next` the index of the next word;
 * the words are stored as uint64. torch's cached double normal (normal_y, with normal_is_valid) carries ours;
 * normal_x/normal_rho and the float normal are torch's and kept as zero/false. */
typedef struct {
  uint64_t the_initial_seed;
  int32_t left;
  int32_t seeded;
  uint64_t next;
  uint64_t state[TH_MT_N];
  double normal_x;
  double normal_y;
  double normal_rho;
  int32_t normal_is_valid;
  int32_t pad_;                    /* the end of torch's legacy struct (8-byte aligned) */
  float next_float_normal_sample;
  uint8_t is_next_float_normal_sample_valid;
  uint8_t tail_pad_[3];
} THGeneratorState;
_Static_assert(sizeof(THGeneratorState) == 5056, "torch's CPUGeneratorImplState is 5056 bytes");

TH_API THGenerator *THGenerator_new(void);
TH_API void THGenerator_free(THGenerator *g);
TH_API THGenerator *THGenerator_default(void);
TH_API void THGenerator_manualSeed(THGenerator *g, uint64_t seed);
TH_API uint64_t THGenerator_seedRandomly(THGenerator *g);   /* from /dev/urandom; returns the seed */
TH_API void THGenerator_getState(THGenerator *g, THGeneratorState *out);
TH_API int THGenerator_setState(THGenerator *g, const THGeneratorState *in);

/* Draws; callers hold g->mutex. */
TH_API uint32_t THRandom_random(THGenerator *g);
TH_API uint64_t THRandom_random64(THGenerator *g);
TH_API double THRandom_uniform(THGenerator *g);          /* [0, 1) with 53 random bits */
TH_API float THRandom_uniformFloat(THGenerator *g);      /* [0, 1) with 24 random bits */
/* n uniform draws in [from, to) into a contiguous array (float: 24-bit draws) */
TH_API void THRandom_fillUniformFloat(THGenerator *g, float *out, int64_t n, float from, float to);
TH_API void THRandom_fillUniform(THGenerator *g, double *out, int64_t n, double from, double to);
TH_API void THRandom_fillBernoulli(THGenerator *g, void *out, bool dbl, int64_t n, double p);
TH_API double THRandom_normal(THGenerator *g);           /* standard normal */

#endif
