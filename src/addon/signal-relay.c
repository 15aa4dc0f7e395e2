// relaySignals(numbers, callback): the signals baton forwards but Node cannot listen to (the real-time ones, which
// have no name in Node) or cannot tell the sender of (SIGPIPE and SIGXFSZ, which the kernel also raises on baton itself
// when one of its own writes fails; the faults, which the kernel raises on a crash of baton's own). A handler of its
// own (SA_SIGINFO) writes each signal's number, one byte, to a pipe that the event loop polls; the callback gets the
// numbers on the main thread (src/process/signals.ts). Only a signal another process sent is relayed (si_pid, which
// the kernel sets to the process whose write failed, or si_code > 0 for a fault): a SIGPIPE or SIGXFSZ of baton's own is
// dropped, as Node's SIG_IGN did; a fault of baton's own (or one it raised itself) gets what was there before (Node's
// handler, or the default action: baton dies of it, as it would have). The handler only writes (async-signal-safe).
// The main thread takes most of these signals (Node's platform threads block them all), so a neighbour that sends them
// without pause, faster than a handler's turn, kept the main thread in this handler for as long as it went on: no
// JavaScript ran, and baton, its post file written, did not exit (a storm of real-time signals, which the kernel
// queues, livelocked it one run in two). So a full pipe (65536 signals not yet read) holds them instead: the handler
// adds them to the mask the interrupted code gets back as it returns, the kernel queues them meanwhile (and refuses
// more to their sender once the queue is full, as it would for the command), and the reader lets them through again
// once it has emptied the pipe; the one that found the pipe full is counted and relayed then.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <ucontext.h>
#include <unistd.h>
#include <uv.h>

#include "signal-relay.h"

static int relay_fds[2] = {-1, -1};
static pid_t own_pid;
static struct sigaction previous[65];
// The relayed signals that are not faults: those held while the pipe is full (a fault is never held: blocked, the
// kernel would kill baton for a real one without its handler).
static sigset_t holdable;
// Set by the handler when it held them; cleared by the reader on the main thread as it lets them through again.
static volatile sig_atomic_t held;
// Signals that found the pipe full, by number: relayed when they are let through again.
static sig_atomic_t overflow[65];

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
  if (write(relay_fds[1], &byte, 1) == -1 && errno == EAGAIN && context != NULL) {
    // Atomic: a thread Node started before its mask was set (the standalone build's thread pool blocks SIGUSR1 only)
    // may take one too, while the main thread lets them through; that thread keeps them held, and others take them.
    __atomic_fetch_add(&overflow[sig], 1, __ATOMIC_RELAXED);
    ucontext_t *interrupted = context;
    for (int n = 1; n < 65; n++)
      if (sigismember(&holdable, n) == 1) sigaddset(&interrupted->uc_sigmask, n);
    held = 1;
  }
  errno = saved;
}

typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
} relay;

static void deliver(relay *r, int sig) {
  napi_value callback, global, number;
  napi_get_reference_value(r->env, r->callback, &callback);
  napi_get_global(r->env, &global);
  napi_create_int32(r->env, sig, &number);
  napi_make_callback(r->env, NULL, global, callback, 1, &number, NULL);
}

// The pipe is empty and the signals were held: those that found it full, then the signals let through again (a
// queued one's handler runs as the mask changes). On the main thread, whose mask the handler changed.
static void release(relay *r) {
  for (int sig = 1; sig < 65; sig++)
    for (int n = __atomic_exchange_n(&overflow[sig], 0, __ATOMIC_RELAXED); n > 0; n--) deliver(r, sig);
  held = 0;
  pthread_sigmask(SIG_UNBLOCK, &holdable, NULL);
}

static void on_relayed(uv_poll_t *poll, int status, int flags) {
  (void)status;
  (void)flags;
  relay *r = poll->data;
  unsigned char bytes[64];
  napi_handle_scope scope;
  napi_open_handle_scope(r->env, &scope);
  // 64 at most per turn of the event loop, held or not, so that baton's own work goes on between them. Once held, no
  // handler writes: when this read emptied the pipe (a read of exactly 64 may have: FIONREAD says), they go through
  // again, since an empty pipe would not wake this callback.
  ssize_t n = read(relay_fds[0], bytes, sizeof bytes);
  for (ssize_t i = 0; i < n; i++) deliver(r, bytes[i]);
  int left = 0;
  if (held && (n < (ssize_t)sizeof bytes || (ioctl(relay_fds[0], FIONREAD, &left) == 0 && left == 0))) release(r);
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
  sigemptyset(&holdable);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = relay_handler;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigfillset(&action.sa_mask);
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    int32_t sig = 0;
    if (napi_get_element(env, argv[0], i, &element) != napi_ok || napi_get_value_int32(env, element, &sig) != napi_ok) continue;
    if (sig <= 0 || sig >= 65) continue;
    // glibc refuses its own (32, 33): left as they are
    if (sigaction(sig, &action, &previous[sig]) == 0 && !is_fault(sig)) sigaddset(&holdable, sig);
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
