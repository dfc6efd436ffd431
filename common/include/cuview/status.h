/* What cuview's C APIs share: status codes, the thread's last error message, dtypes and the
 * version. The client (cuview/client.h, libcuview.so) and the publisher (cuview/publisher.h,
 * libcuview-publisher.so, which uses libcuview.so for these) report failures the same way: a call
 * returns a cuview_status, and cuview_last_error() is the sentence naming what failed and what to
 * do, whichever of the two libraries failed. */
#ifndef CUVIEW_STATUS_H
#define CUVIEW_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CUVIEW_API __attribute__((visibility("default")))
#else
#define CUVIEW_API
#endif

/* One code per failure kind; the values are the wire's error names, in order (docs/protocol.md),
 * plus one: never renumbered. */
typedef enum cuview_status {
  CUVIEW_OK = 0,
  CUVIEW_BAD_MESSAGE = 1,
  CUVIEW_UNKNOWN_OP = 2,
  CUVIEW_VERSION_MISMATCH = 3,
  CUVIEW_UNKNOWN_FIELD = 4,
  CUVIEW_MISSING_FIELD = 5,
  CUVIEW_BAD_VALUE = 6,
  CUVIEW_OUT_OF_RANGE = 7,
  CUVIEW_NOT_ATTACHED = 8,
  CUVIEW_STALE_SESSION = 9,
  CUVIEW_TOO_MANY_CLIENTS = 10,
  CUVIEW_NO_DAEMON = 11,
  CUVIEW_DAEMON_GONE = 12,
  CUVIEW_TIMEOUT = 13,
  CUVIEW_ACCESS = 14,
  CUVIEW_ALREADY_RUNNING = 15,
  CUVIEW_CUDA = 16,
  CUVIEW_SYSTEM = 17,
  CUVIEW_INTERNAL = 18,
  CUVIEW_UNSUPPORTED = 19,
  CUVIEW_NO_FRAME = 100 /* no new frame within the timeout: not an error */
} cuview_status;

/* What a dtype of cuview_block is, for bindings that make arrays of it: bytes per value, NumPy's
 * array-interface typestr ("<f4"), DLPack's type code (kDLInt 0, kDLUInt 1, kDLFloat 2) and bits. */
typedef struct cuview_dtype_info {
  size_t bytes;
  const char* typestr; /* static */
  uint8_t dlpack_code, dlpack_bits;
} cuview_dtype_info;
/* CUVIEW_BAD_VALUE (naming the dtypes there are) for a name that is none of them. */
CUVIEW_API cuview_status cuview_dtype(const char* name, cuview_dtype_info* out);

/* The wire name of a status ("bad_value", ...; "ok", "no_frame"). */
CUVIEW_API const char* cuview_status_name(cuview_status status);
/* The message of the last failure on this thread ("" when none). */
CUVIEW_API const char* cuview_last_error(void);
/* "0.1.0" */
CUVIEW_API const char* cuview_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CUVIEW_STATUS_H */
