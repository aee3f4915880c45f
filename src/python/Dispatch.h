/* The dispatch point: where every op call is seen before and after it runs.
 *
 * Every declared op has one VT function (generated: tools/generate_code.py)
 * that its Python binding, the operator slots, indexing and backward formulas
 * all call. A Python composite (an op written in terms of declared ops) is a
 * registry entry, a `_C._Op` object wrapping the Python function
 * (cthtorch/_ops/__init__.py). Factories written by hand are `_C._Op`s too.
 * Both report to one observer, so a profiler or a tracer plugs in once, here:
 *
 *   binding -> [sparse layout] -> VT: observer.enter(name)
 *                                     autograd (record the node) + device kernel
 *                                     observer.exit(token, name, schema, args, kwargs, result)
 *
 * The observer is a Python object (cthtorch/_ops/dispatch.py fans it out to
 * the profiler and the JIT tracer). While it runs, its own op calls are not
 * observed. With no observer set the cost is one pointer test per call. */
#ifndef THP_DISPATCH_H
#define THP_DISPATCH_H
#include "THP.h"

extern PyObject *THP_dispatch_observer;   /* NULL when nothing observes */
extern _Thread_local int THP_dispatch_busy;

static inline bool THP_dispatch_active(void) { return THP_dispatch_observer && !THP_dispatch_busy; }

/* observer.enter(name) -> token (new reference); NULL with an error set. */
PyObject *THP_dispatch_enter(const char *name);
/* observer.exit(token, name, schema, inputs, None, result). Steals tok and
 * result (result may be NULL: the op raised, and its error is kept).
 * Returns result, or NULL if the op or the observer raised. */
PyObject *THP_dispatch_exit(PyObject *tok, const char *name, const char *schema, int n, PyObject **inputs,
                            PyObject *result);

/* observer.int_from_tensor(t) when the observer has that method: the
 * argument parser turned the 0-dim tensor t into an int argument. 0 or -1
 * with an error set. */
int THP_dispatch_note_int(PyObject *t);

/* _C._Op: a callable registry entry (a Python composite or a hand-written
 * binding) reporting to the observer under its aten:: name. */
extern PyTypeObject THPOpType;
PyObject *THPOp_new(const char *name, PyObject *fn);
int THP_initDispatch(PyObject *module);

#endif
