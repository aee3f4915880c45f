/* swish(x) = x * sigmoid(beta * x), forward and backward, as a user's C
 * extension of cthtorch: it works on the tensors' own THTensor structs,
 * calls ATen for what ATen already does (making a tensor contiguous), and
 * reports bad input with THError_set, which reaches Python as an exception.
 *
 * Ownership follows TH's rule: what a *_new / at_* call returned is ours to
 * free or to return (a returned THTensor* becomes the Python tensor). */
#include <math.h>
#include <ATen/ATen.h>

static int check_floating(const char *fn, const THTensor *t) {
  if (t->dtype != TH_Float && t->dtype != TH_Double) {
    THError_set(TH_ERR_TYPE, "%s: expected a float32 or float64 tensor, got %s", fn,
                THDtype_info[t->dtype].name);
    return -1;
  }
  if (THTensor_device(t) != -1) {
    THError_set(TH_ERR_RUNTIME, "%s: expected a CPU tensor", fn);
    return -1;
  }
  return 0;
}

/* y = x * s, s = sigmoid(beta x); computed in double for both dtypes */
#define SWISH_FORWARD(T)                                            \
  do {                                                              \
    const T *x = (const T *)THTensor_data(in);                      \
    T *y = (T *)THTensor_data(out);                                 \
    for (int64_t i = 0; i < n; i++) {                               \
      double s = 1.0 / (1.0 + exp(-beta * (double)x[i]));           \
      y[i] = (T)((double)x[i] * s);                                 \
    }                                                               \
  } while (0)

THTensor *swish_forward(THTensor *input, double beta) {
  if (check_floating("swish_forward", input) < 0) return NULL;
  THTensor *in = at_contiguous(input);      /* input itself, retained, when already contiguous */
  if (!in) return NULL;
  THTensor *out = THTensor_new(in->dtype, in->ndim, in->sizes);
  if (!out) { THTensor_free(in); return NULL; }
  int64_t n = THTensor_numel(in);
  if (in->dtype == TH_Float) SWISH_FORWARD(float);
  else SWISH_FORWARD(double);
  THTensor_free(in);
  return out;
}

/* d swish / dx = s + beta x s (1 - s) */
#define SWISH_BACKWARD(T)                                                   \
  do {                                                                      \
    const T *g = (const T *)THTensor_data(go), *x = (const T *)THTensor_data(in); \
    T *gi = (T *)THTensor_data(grad_input);                                 \
    for (int64_t i = 0; i < n; i++) {                                       \
      double xi = (double)x[i], s = 1.0 / (1.0 + exp(-beta * xi));          \
      gi[i] = (T)((double)g[i] * (s + beta * xi * s * (1.0 - s)));           \
    }                                                                       \
  } while (0)

int swish_backward(THTensor *grad_output, THTensor *input, double beta, THTensor *grad_input) {
  if (check_floating("swish_backward", input) < 0 || check_floating("swish_backward", grad_input) < 0)
    return -1;
  if (grad_output->dtype != input->dtype || grad_input->dtype != input->dtype) {
    THError_set(TH_ERR_TYPE, "swish_backward: grad_output, input and grad_input must have one dtype");
    return -1;
  }
  int64_t n = THTensor_numel(input);
  if (THTensor_numel(grad_output) != n) {
    char a[256], b[256];
    THError_set(TH_ERR_RUNTIME, "swish_backward: grad_output of shape %s does not match input of shape %s",
                THTensor_sizeStr(grad_output->ndim, grad_output->sizes, a, sizeof a),
                THTensor_sizeStr(input->ndim, input->sizes, b, sizeof b));
    return -1;
  }
  /* out= style: grad_input takes input's shape, contiguous */
  if (THTensor_resize(grad_input, input->ndim, input->sizes) < 0) return -1;
  THTensor *go = at_contiguous(grad_output);
  if (!go) return -1;
  THTensor *in = at_contiguous(input);
  if (!in) { THTensor_free(go); return -1; }
  if (input->dtype == TH_Float) SWISH_BACKWARD(float);
  else SWISH_BACKWARD(double);
  THTensor_free(go);
  THTensor_free(in);
  return 0;
}
