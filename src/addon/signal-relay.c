// relaySignals(numbers, callback): the signals baton forwards but Node cannot listen to (the real-time ones, which
// have no name in Node) or cannot tell the sender of (SIGPIPE and SIGXFSZ, which the kernel also raises on baton itself
// when one of its own writes fails; the faults, which the kernel raises on a crash of baton's own). A handler of its
// own (SA_SIGINFO) writes each signal's number, one byte, to a pipe that the event loop polls; the callback gets the
// numbers on the main thread (src/process/signals.ts). Only a signal another process sent is relayed (si_pid, which
// the kernel sets to the process whose write failed, or si_code > 0 for a fault): a SIGPIPE or SIGXFSZ of baton's own is
// dropped, as Node's SIG_IGN did; a fault of baton's own (or one it raised itself) gets what was there before (Node's
// handler, or the default action: baton dies of it, as it would have). The handler only writes (async-signal-safe); a
// full pipe (65536 signals not yet read) drops the byte, as a burst of one standard signal coalesces.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "signal-relay.h"

static int relay_fds[2] = {-1, -1};
static pid_t own_pid;
static struct sigaction previous[65];

static bool is_fault(int sig) {
  return sig == SIGILL || sig == SIGTRAP || sig == SIGBUS || sig == SIGFPE || sig == SIGSEGV || sig == SIGSYS;
}

// A fault of baton's own: the action that was there before, as if this handler never was.
static void as_before(int sig, siginfo_t *info, void *context) {
  struct sigaction *before = &previous[sig];
  if ((before->sa_flags & SA_SIGINFO) && before->sa_sigaction != NULL) {
    before->sa_sigaction(sig, info, context);
  } else if (before->sa_handler != SIG_DFL && before->sa_handler != SIG_IGN) {
    before->sa_handler(sig);
  } else {
    // The default action (a fault that is ignored would fault again for ever): restored, and raised. The signal is
    // blocked while this handler runs, so it is delivered, and ends baton, as the handler returns.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigaction(sig, &fallback, NULL);
    raise(sig);
  }
}

static void relay_handler(int sig, siginfo_t *info, void *context) {
  bool own = info == NULL || info->si_code > 0 || info->si_pid == own_pid;
  if (is_fault(sig) && own) {
    as_before(sig, info, context);
    return;
  }
  if ((sig == SIGPIPE || sig == SIGXFSZ) && own) return;
  int saved = errno;
  unsigned char byte = (unsigned char)sig;
  ssize_t ignored = write(relay_fds[1], &byte, 1);
  (void)ignored;
  errno = saved;
}

typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
} relay;

static void on_relayed(uv_poll_t *poll, int status, int flags) {
  (void)status;
  (void)flags;
  relay *r = poll->data;
  unsigned char bytes[64];
  ssize_t n = read(relay_fds[0], bytes, sizeof bytes);
  if (n <= 0) return;
  napi_handle_scope scope;
  napi_open_handle_scope(r->env, &scope);
  napi_value callback, global, number;
  napi_get_reference_value(r->env, r->callback, &callback);
  napi_get_global(r->env, &global);
  for (ssize_t i = 0; i < n; i++) {
    napi_create_int32(r->env, bytes[i], &number);
    napi_make_callback(r->env, NULL, global, callback, 1, &number, NULL);
  }
  napi_close_handle_scope(r->env, scope);
}

// relaySignals(numbers, callback): once per process. 0, or an errno (then nothing is relayed).
static napi_value relay_signals(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  uint32_t count = 0;
  napi_valuetype type;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 || napi_get_array_length(env, argv[0], &count) != napi_ok ||
      napi_typeof(env, argv[1], &type) != napi_ok || type != napi_function) {
    napi_throw_type_error(env, NULL, "relaySignals(numbers, callback)");
    return NULL;
  }
  napi_value result;
  if (relay_fds[0] != -1) {
    napi_create_int32(env, EALREADY, &result);
    return result;
  }
  uv_loop_t *loop;
  relay *r = calloc(1, sizeof *r);
  int rc = 0;
  if (r == NULL) rc = ENOMEM;
  else if (napi_get_uv_event_loop(env, (struct uv_loop_s **)&loop) != napi_ok) rc = EINVAL;
  else if (pipe2(relay_fds, O_CLOEXEC | O_NONBLOCK) == -1) rc = errno;
  else if (uv_poll_init(loop, &r->poll, relay_fds[0]) != 0) rc = EINVAL;
  if (rc != 0) {
    if (relay_fds[0] != -1) close(relay_fds[0]), close(relay_fds[1]);
    relay_fds[0] = relay_fds[1] = -1;
    free(r);
    napi_create_int32(env, rc, &result);
    return result;
  }
  r->env = env;
  r->poll.data = r;
  napi_create_reference(env, argv[1], 1, &r->callback);
  uv_poll_start(&r->poll, UV_READABLE, on_relayed);
  uv_unref((uv_handle_t *)&r->poll);  // a signal listener does not keep the loop alive; neither does this
  own_pid = getpid();
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = relay_handler;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigfillset(&action.sa_mask);
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    int32_t sig = 0;
    if (napi_get_element(env, argv[0], i, &element) != napi_ok || napi_get_value_int32(env, element, &sig) != napi_ok) continue;
    if (sig > 0 && sig < 65) sigaction(sig, &action, &previous[sig]);  // glibc refuses its own (32, 33): left as they are
  }
  napi_create_int32(env, 0, &result);
  return result;
}

void define_signal_relay(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"relaySignals", NULL, relay_signals, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, 1, functions);
}
