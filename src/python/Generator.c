/* torch.Generator: a handle on a THGenerator (mt19937 state). */
#include "THP.h"
#include "../TH/THRandom.h"

static PyObject *default_gen_obj;

static PyObject *gen_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"device", NULL};
  PyObject *dev = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Generator", kwlist, &dev)) return NULL;
  int type, index;
  if (THPDevice_parse(dev, &type, &index) < 0) return NULL;
  THPGenerator *g = (THPGenerator *)tp->tp_alloc(tp, 0);
  if (!g) return NULL;
  g->gen = THGenerator_new();
  if (!g->gen) { Py_DECREF(g); return THP_raise(); }
  return (PyObject *)g;
}

static void gen_dealloc(THPGenerator *g) {
  if (g->gen && g->gen != THGenerator_default()) THGenerator_free(g->gen);
  Py_TYPE(g)->tp_free((PyObject *)g);
}

/* PyTorch's seed range: [-2**63, 2**64): a negative seed is taken modulo
 * 2**64, anything outside is a ValueError (not silently masked). */
static PyObject *gen_manual_seed(THPGenerator *g, PyObject *seed) {
  if (!PyLong_Check(seed) || PyBool_Check(seed)) {
    PyErr_Format(PyExc_RuntimeError, "manual_seed expected a long, but got %s", Py_TYPE(seed)->tp_name);
    return NULL;
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(seed);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    long long sv = PyLong_AsLongLong(seed);
    if (sv == -1 && PyErr_Occurred()) {
      PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
      return NULL;
    }
    v = (unsigned long long)sv;
  }
  pthread_mutex_lock(&g->gen->mutex);
  THGenerator_manualSeed(g->gen, v);
  pthread_mutex_unlock(&g->gen->mutex);
  return Py_NewRef(g);
}

static PyObject *gen_seed(THPGenerator *g, PyObject *u) {
  pthread_mutex_lock(&g->gen->mutex);
  uint64_t s = THGenerator_seedRandomly(g->gen);
  pthread_mutex_unlock(&g->gen->mutex);
  return PyLong_FromUnsignedLongLong(s);
}

static PyObject *gen_initial_seed(THPGenerator *g, PyObject *u) { return PyLong_FromUnsignedLongLong(g->gen->seed); }

static PyObject *gen_get_state(THPGenerator *g, PyObject *u) {
  int64_t n = sizeof(THGeneratorState);
  THTensor *t = THTensor_new(TH_UInt8, 1, &n);
  if (!t) return THP_raise();
  pthread_mutex_lock(&g->gen->mutex);
  THGenerator_getState(g->gen, (THGeneratorState *)THTensor_data(t));
  pthread_mutex_unlock(&g->gen->mutex);
  return THPTensor_wrap(t);
}

static PyObject *gen_set_state(THPGenerator *g, PyObject *state) {
  if (!THPTensor_Check(state)) {
    PyErr_Format(PyExc_TypeError, "expected a torch.ByteTensor, but got %s", Py_TYPE(state)->tp_name);
    return NULL;
  }
  THTensor *t = ((THPTensor *)state)->t;
  /* torch's check_rng_state, before the size: a meta or CUDA state has no host bytes to read */
  if (t->dtype != TH_UInt8 || THTensor_device(t) != -1) {
    PyErr_SetString(PyExc_TypeError, "RNG state must be a torch.ByteTensor");
    return NULL;
  }
  if (!THTensor_isContiguous(t)) {
    PyErr_SetString(PyExc_RuntimeError, "RNG state must be contiguous");
    return NULL;
  }
  int64_t n = THTensor_numel(t);
  if (n != (int64_t)sizeof(THGeneratorState)) {
    PyErr_Format(PyExc_RuntimeError, "Expected a CPUGeneratorImplState of size %d but found the input RNG state "
                 "size to be %lld", (int)sizeof(THGeneratorState), (long long)n);
    return NULL;
  }
  THGeneratorState st;
  memcpy(&st, THTensor_data(t), sizeof st);
  pthread_mutex_lock(&g->gen->mutex);
  int rc = THGenerator_setState(g->gen, &st);
  pthread_mutex_unlock(&g->gen->mutex);
  if (rc < 0) return THP_raise();
  return Py_NewRef(g);
}

static PyObject *gen_device(THPGenerator *g, void *c) { return Py_NewRef(THPDevice_cpu()); }

static PyMethodDef gen_methods[] = {
  {"manual_seed", (PyCFunction)gen_manual_seed, METH_O, NULL},
  {"seed", (PyCFunction)gen_seed, METH_NOARGS, NULL},
  {"initial_seed", (PyCFunction)gen_initial_seed, METH_NOARGS, NULL},
  {"get_state", (PyCFunction)gen_get_state, METH_NOARGS, NULL},
  {"set_state", (PyCFunction)gen_set_state, METH_O, NULL},
  {NULL}
};
static PyGetSetDef gen_getset[] = { {"device", (getter)gen_device, NULL, NULL, NULL}, {NULL} };

PyTypeObject THPGeneratorType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C.Generator",
  .tp_basicsize = sizeof(THPGenerator),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
  .tp_new = gen_new,
  .tp_dealloc = (destructor)gen_dealloc,
  .tp_methods = gen_methods,
  .tp_getset = gen_getset,
};

int THP_initGenerator(PyObject *m) {
  if (PyType_Ready(&THPGeneratorType) < 0) return -1;
  THPGenerator *g = PyObject_New(THPGenerator, &THPGeneratorType);
  if (!g) return -1;
  g->gen = THGenerator_default();
  if (!g->gen) return THP_raise_int();
  default_gen_obj = (PyObject *)g;
  if (PyModule_AddObjectRef(m, "default_generator", default_gen_obj) < 0) return -1;
  return PyModule_AddObjectRef(m, "Generator", (PyObject *)&THPGeneratorType);
}
