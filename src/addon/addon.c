// baton-reaper.node: the system calls Node does not expose: the three that reaping orphans needs, flock() for the
// liveness lock (src/handoff/liveness-lock.ts), _exit, and (wait-events.c) what a waiting baton blocks on.
// Plain Node-API (C, no C++ runtime), so one build loads into every Node >= 20 and into the standalone build.
// Every function here returns at once (WNOHANG); the policy (which pid to reap, when to look again) lives in
// src/run/reaper.ts, on the main thread, never inside a signal handler.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <errno.h>
#include <node_api.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wait-events.h"

static napi_value throw_errno(napi_env env, const char *syscall) {
  char message[160];
  int err = errno;
  strncpy(message, syscall, sizeof message - 1);
  message[sizeof message - 1] = '\0';
  strncat(message, ": ", sizeof message - strlen(message) - 1);
  strncat(message, strerror(err), sizeof message - strlen(message) - 1);
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value int_value(napi_env env, int value) {
  napi_value result;
  napi_create_int32(env, value, &result);
  return result;
}

// peekExited(): the pid of a child that has exited and is not reaped yet, without reaping it (WNOWAIT),
// so a child that libuv is about to reap keeps its exit status. 0 when no child has exited or there is none.
static napi_value peek_exited(napi_env env, napi_callback_info info) {
  (void)info;
  siginfo_t child;
  memset(&child, 0, sizeof child);  // si_pid stays 0 when WNOHANG finds nothing
  int rc;
  do rc = waitid(P_ALL, 0, &child, WEXITED | WNOHANG | WNOWAIT);
  while (rc == -1 && errno == EINTR);
  if (rc == -1) return errno == ECHILD ? int_value(env, 0) : throw_errno(env, "waitid");
  return int_value(env, child.si_pid);
}

// reap(pid): collect the exit status of that one child. Returns pid when reaped, 0 when it has not exited,
// -1 when it is not (or no longer) a child of this process.
static napi_value reap(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t pid = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &pid) != napi_ok || pid <= 0) {
    napi_throw_type_error(env, NULL, "reap(pid): pid must be a positive integer");
    return NULL;
  }
  int status, rc;
  do rc = waitpid(pid, &status, WNOHANG);
  while (rc == -1 && errno == EINTR);
  if (rc == -1) return errno == ECHILD ? int_value(env, -1) : throw_errno(env, "waitpid");
  return int_value(env, rc);
}

// becomeSubreaper(): orphans of our descendants are re-parented to us instead of to PID 1 (Linux >= 3.4).
static napi_value become_subreaper(napi_env env, napi_callback_info info) {
  (void)info;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1) return throw_errno(env, "prctl(PR_SET_CHILD_SUBREAPER)");
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

// flock(fd, operation): 0 on success, else the errno (EWOULDBLOCK: another process holds a conflicting lock).
// The caller passes LOCK_NB: this never blocks the main thread.
static napi_value flock_fd(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd = -1, operation = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || napi_get_value_int32(env, argv[1], &operation) != napi_ok ||
      fd < 0 || (operation & LOCK_NB) == 0) {
    napi_throw_type_error(env, NULL, "flock(fd, operation): a descriptor and an operation with LOCK_NB");
    return NULL;
  }
  int rc;
  do rc = flock(fd, operation);
  while (rc == -1 && errno == EINTR);
  return int_value(env, rc == -1 ? errno : 0);
}

// _exit(code): baton's last act, once everything is written. process.exit() first shuts down Node's platform, joining
// its worker threads, and a V8 worker parked in a concurrent compile waiting for a main-thread GC deadlocks that join
// (nodejs/node#54918, still open; seen here on Node 24 after a 200 MiB capture, baton stuck at exit for good).
static napi_value exit_now(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t code = 1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 1) napi_get_value_int32(env, argv[0], &code);
  _exit(code & 0xff);
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"peekExited", NULL, peek_exited, NULL, NULL, NULL, napi_enumerable, NULL},
      {"reap", NULL, reap, NULL, NULL, NULL, napi_enumerable, NULL},
      {"becomeSubreaper", NULL, become_subreaper, NULL, NULL, NULL, napi_enumerable, NULL},
      {"flock", NULL, flock_fd, NULL, NULL, NULL, napi_enumerable, NULL},
      {"exitNow", NULL, exit_now, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
  define_wait_functions(env, exports);
  return exports;
}

NAPI_MODULE(baton_reaper, init)
