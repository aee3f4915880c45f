#include "THGeneral.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const THDtypeInfo THDtype_info[TH_NDTYPES] = {
  [TH_Bool]     = {"bool", "Bool", 1, false, false},
  [TH_UInt8]    = {"uint8", "Byte", 1, false, false},
  [TH_Int8]     = {"int8", "Char", 1, false, true},
  [TH_Int16]    = {"int16", "Short", 2, false, true},
  [TH_Int32]    = {"int32", "Int", 4, false, true},
  [TH_Int64]    = {"int64", "Long", 8, false, true},
  [TH_Half]     = {"float16", "Half", 2, true, true},
  [TH_BFloat16] = {"bfloat16", "BFloat16", 2, true, true},
  [TH_Float]    = {"float32", "Float", 4, true, true},
  [TH_Double]   = {"float64", "Double", 8, true, true},
  [TH_ComplexFloat]  = {"complex64", "ComplexFloat", 8, false, true},
  [TH_ComplexDouble] = {"complex128", "ComplexDouble", 16, false, true},
};

static _Thread_local THErrorKind err_kind;
static _Thread_local char err_msg[2048];

void THError_set(THErrorKind kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err_msg, sizeof err_msg, fmt, ap);
  va_end(ap);
  err_kind = kind;
}
THErrorKind THError_kind(void) { return err_kind; }
const char *THError_message(void) { return err_kind ? err_msg : ""; }
void THError_clear(void) { err_kind = TH_ERR_NONE; err_msg[0] = 0; }

/* A tiny ring of pending warnings; more than a few per op never happens. */
#define TH_NWARN 4
static _Thread_local char warn_buf[TH_NWARN][512];
static _Thread_local int warn_head, warn_count;
static _Thread_local char warn_out[512];

void THWarn(const char *fmt, ...) {
  if (warn_count == TH_NWARN) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(warn_buf[(warn_head + warn_count) % TH_NWARN], 512, fmt, ap);
  va_end(ap);
  warn_count++;
}
const char *THWarn_pop(void) {
  if (!warn_count) return NULL;
  memcpy(warn_out, warn_buf[warn_head], 512);
  warn_head = (warn_head + 1) % TH_NWARN;
  warn_count--;
  return warn_out;
}
