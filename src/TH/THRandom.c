#include "THRandom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

THGenerator *THGenerator_new(void) {
  THGenerator *g = calloc(1, sizeof *g);
  if (!g) { THError_set(TH_ERR_MEMORY, "out of memory"); return NULL; }
  pthread_mutex_init(&g->mutex, NULL);
  THGenerator_manualSeed(g, 67280421310721ULL);   /* PyTorch's default seed value */
  return g;
}

void THGenerator_free(THGenerator *g) {
  if (!g) return;
  pthread_mutex_destroy(&g->mutex);
  free(g);
}

static THGenerator *default_gen;
static void init_default(void) { default_gen = THGenerator_new(); }

THGenerator *THGenerator_default(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, init_default);
  return default_gen;
}

void THGenerator_manualSeed(THGenerator *g, uint64_t seed) {
  g->seed = seed;
  g->state[0] = (uint32_t)(seed & 0xffffffffu);
  for (int j = 1; j < TH_MT_N; j++)
    g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + j;
  g->left = 0;
  g->read_out = false;
  g->has_next_normal = false;
}

uint64_t THGenerator_seedRandomly(THGenerator *g) {
  uint64_t s = 0;
  FILE *f = fopen("/dev/urandom", "rb");
  if (!f || fread(&s, sizeof s, 1, f) != 1) s = (uint64_t)time(NULL) ^ (uint64_t)clock();
  if (f) fclose(f);
  THGenerator_manualSeed(g, s);
  return s;
}

void THGenerator_getState(THGenerator *g, THGeneratorState *out) {
  memset(out, 0, sizeof *out);
  out->the_initial_seed = g->seed;
  out->left = g->left + 1;
  out->seeded = 1;
  out->next = g->left || g->read_out ? (uint64_t)(TH_MT_N - g->left) : 0;   /* torch's fresh seed: left 1, next 0 */
  for (int i = 0; i < TH_MT_N; i++) out->state[i] = g->state[i];
  out->normal_is_valid = g->has_next_normal;
  out->normal_y = g->has_next_normal ? g->next_normal : 0.0;
}

int THGenerator_setState(THGenerator *g, const THGeneratorState *in) {
  /* torch's engine reads state[next] after --left; ours reads state[N - left] after checking left */
  if (in->left < 1 || in->left > TH_MT_N + 1 || (in->left > 1 && in->next != (uint64_t)(TH_MT_N + 1 - in->left))) {
    THError_set(TH_ERR_RUNTIME, "Invalid mt19937 state");
    return -1;
  }
  g->seed = in->the_initial_seed;
  for (int i = 0; i < TH_MT_N; i++) g->state[i] = (uint32_t)in->state[i];
  g->left = in->left - 1;
  g->read_out = g->left == 0 && in->next != 0;
  g->has_next_normal = in->normal_is_valid != 0;
  g->next_normal = in->normal_y;
  return 0;
}

static void regenerate(THGenerator *g) {
  static const uint32_t mag[2] = {0, 0x9908b0dfu};
  uint32_t *s = g->state;
  int k;
  for (k = 0; k < TH_MT_N - 397; k++) {
    uint32_t y = (s[k] & 0x80000000u) | (s[k + 1] & 0x7fffffffu);
    s[k] = s[k + 397] ^ (y >> 1) ^ mag[y & 1];
  }
  for (; k < TH_MT_N - 1; k++) {
    uint32_t y = (s[k] & 0x80000000u) | (s[k + 1] & 0x7fffffffu);
    s[k] = s[k + (397 - TH_MT_N)] ^ (y >> 1) ^ mag[y & 1];
  }
  uint32_t y = (s[TH_MT_N - 1] & 0x80000000u) | (s[0] & 0x7fffffffu);
  s[TH_MT_N - 1] = s[396] ^ (y >> 1) ^ mag[y & 1];
  g->left = TH_MT_N;
  g->read_out = true;   /* from now on a left of 0 means every word was read */
}

uint32_t THRandom_random(THGenerator *g) {
  if (g->left == 0) regenerate(g);
  uint32_t y = g->state[TH_MT_N - g->left--];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t THRandom_random64(THGenerator *g) {
  uint64_t hi = THRandom_random(g), lo = THRandom_random(g);
  return (hi << 32) | lo;
}

/* PyTorch's transforms (ATen's TransformationHelper.h): the low 53 (24) bits
 * of a 64-bit (32-bit) draw, so seeded programs see torch's numbers. */
double THRandom_uniform(THGenerator *g) {
  return (double)(THRandom_random64(g) & ((1ULL << 53) - 1)) * (1.0 / 9007199254740992.0);
}

float THRandom_uniformFloat(THGenerator *g) {
  return (float)(THRandom_random(g) & 0xffffffu) * (1.0f / 16777216.0f);
}

/* Bulk forms of the two above for contiguous outputs: the same draws in the
 * same order, u * (to - from) + from in the output's precision, without a
 * call per element. The fma is torch's: its kernel is contracted (built for
 * AVX2), and ours must round once whether or not the build targets FMA. */
void THRandom_fillUniformFloat(THGenerator *g, float *out, int64_t n, float from, float to) {
  float span = to - from;
  for (int64_t i = 0; i < n; i++) out[i] = fmaf((float)(THRandom_random(g) & 0xffffffu) * (1.0f / 16777216.0f), span, from);
}

void THRandom_fillUniform(THGenerator *g, double *out, int64_t n, double from, double to) {
  double span = to - from;
  for (int64_t i = 0; i < n; i++) out[i] = fma(THRandom_uniform(g), span, from);
}

/* out[i] = (uniform() < p), 1 or 0 as float or double (dbl): torch's bernoulli_(p) draws in
 * order. Within a regenerated block the 64-bit draws are read straight from the state and
 * compared as integers (u < p <=> low53 < ceil(p * 2^53)), a loop that vectorizes; a draw that
 * straddles two blocks goes through THRandom_random64. */
static inline uint32_t temper(uint32_t y) {
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  return y ^ (y >> 18);
}
void THRandom_fillBernoulli(THGenerator *g, void *out, bool dbl, int64_t n, double p) {
  const uint64_t lim = (uint64_t)ceil(p * 9007199254740992.0), mask = (1ULL << 53) - 1;
  float *of = (float *)out;
  double *od = (double *)out;
  int64_t i = 0;
  while (i < n) {
    if (g->left < 2) {
      bool one = (THRandom_random64(g) & mask) < lim;
      if (dbl) od[i] = one; else of[i] = one;
      i++;
      continue;
    }
    const int64_t m = n - i < g->left / 2 ? n - i : g->left / 2;
    const uint32_t *s = g->state + (TH_MT_N - g->left);
    if (dbl)
      for (int64_t j = 0; j < m; j++)
        od[i + j] = ((((uint64_t)temper(s[2 * j]) << 32) | temper(s[2 * j + 1])) & mask) < lim;
    else
      for (int64_t j = 0; j < m; j++)
        of[i + j] = ((((uint64_t)temper(s[2 * j]) << 32) | temper(s[2 * j + 1])) & mask) < lim;
    g->left -= (int)(2 * m);
    i += m;
  }
}

/* Box-Muller in pairs as torch's normal_distribution<double>: u1 sets the
 * angle, u2 the radius; the sine half is cached in the generator. */
double THRandom_normal(THGenerator *g) {
  if (g->has_next_normal) { g->has_next_normal = false; return g->next_normal; }
  double u1 = THRandom_uniform(g), u2 = THRandom_uniform(g);
  double r = sqrt(-2.0 * log1p(-u2)), th = 2.0 * M_PI * u1;
  g->next_normal = r * sin(th);
  g->has_next_normal = true;
  return r * cos(th);
}
