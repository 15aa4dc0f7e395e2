// What a waiting baton blocks on, without a timer (src/handoff/, docs/design.md "Waiting"):
// - waitUnlocked(fd, callback): a thread of its own blocks in fcntl(F_OFD_SETLKW, F_RDLCK) on the writer's liveness
//   file (liveness.c: the writer's write lock) and calls back (on the main thread) once the writer lets go: it handed
//   on, or it died. A read lock waits only for a write lock, which only the writer can hold. The kernel wakes the thread;
//   nothing is looked at in between.
// - makeFifo(path) and pollWake(fd, callback) / pollClose(handle): the wake FIFO beside a liveness file. The
//   writer puts one byte in it as it hands on, a second before it lets go of its lock; a waiter's event loop polls it
//   (no thread, no read: every waiter sees the byte), so the waiter is woken by the kernel directly rather than by
//   its lock thread's wake-up of the loop. The waiter keeps the FIFO open until its command has started, and the
//   writer, before it exits, waits for its waiters to let go of it (awaitNoReaders): its exit's unmapping is then not
//   on their way to their commands.
// - inotifyOpen(callback) and its add/remove/close: an inotify instance of this wait's own, read by the event loop
//   (uv_poll). Node's fs.watch shares one instance per event loop and never closes it, so a baton that watched once
//   would hold one of the node's instances (a per-user budget, 128 by default) until it exits; this one is closed as
//   soon as the wait no longer needs it.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include "wait-events.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

// The arguments (fd, callback) of waitUnlocked and pollWake: 0, or -1 with a TypeError thrown (usage names the call).
static int fd_and_callback(napi_env env, napi_callback_info info, const char *usage, int32_t *fd, napi_value *callback) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 || napi_get_value_int32(env, argv[0], fd) != napi_ok ||
      *fd < 0) {
    napi_throw_type_error(env, NULL, usage);
    return -1;
  }
  *callback = argv[1];
  return 0;
}

// Keeps a wait's JavaScript callback alive, with the async context (named for async_hooks) it is called back in.
static void hold_callback(napi_env env, napi_value callback, const char *name, napi_ref *ref, napi_async_context *context) {
  napi_value resource_name;
  napi_create_reference(env, callback, 1, ref);
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name);
  napi_async_init(env, NULL, resource_name, context);
}

// ---- waitUnlocked -----------------------------------------------------------------------------------------------

// The thread wakes the event loop with uv_async_send: no allocation in the thread (a threadsafe function's queue
// would malloc, and a thread's first malloc maps a new 64 MiB arena), so the hand-off's critical moment costs one
// eventfd write. The wait belongs to the main thread once the thread has sent (or never started).
typedef struct {
  uv_async_t async;
  int fd;
  int result;  // written by the thread before uv_async_send, read by the main thread in on_unlocked
  int forgotten;  // main thread only
  napi_env env;
  napi_ref callback;
  napi_async_context context;
} unlock_wait;

static void on_wait_closed(uv_handle_t *handle) {
  free(handle->data);
}

static void on_unlocked(uv_async_t *async) {
  unlock_wait *wait = async->data;
  napi_env env = wait->env;
  if (!wait->forgotten) {
    napi_handle_scope scope;
    napi_open_handle_scope(env, &scope);
    napi_value callback, global, result;
    napi_get_reference_value(env, wait->callback, &callback);
    napi_create_int32(env, wait->result, &result);
    napi_get_global(env, &global);
    napi_make_callback(env, wait->context, global, callback, 1, &result, NULL);
    napi_close_handle_scope(env, scope);
  }
  napi_delete_reference(env, wait->callback);
  napi_async_destroy(env, wait->context);
  uv_close((uv_handle_t *)&wait->async, on_wait_closed);
}

static void *unlock_thread(void *arg) {
  unlock_wait *wait = arg;
  // A name of its own in /proc/PID/task/*/comm (ps -L, top -H): a waiting step's blocked waits can be counted, and a
  // wait that never let its thread go would show.
  pthread_setname_np(pthread_self(), "baton-wait");
  struct flock lock = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
  int rc;
  do rc = fcntl(wait->fd, F_OFD_SETLKW, &lock);
  while (rc == -1 && errno == EINTR);
  wait->result = rc == -1 ? errno : 0;
  close(wait->fd);  // our read lock goes with it: a waiter never keeps a writer's file locked
  uv_async_send(&wait->async);  // the last touch of wait: the main thread may free it from here on
  return NULL;
}

// waitUnlocked(fd, callback): takes fd (it is closed by the thread) and returns a handle for forgetWait, or a negative
// errno when no thread can be started (a PID limit): the caller then keeps looking by other means.
static napi_value wait_unlocked(napi_env env, napi_callback_info info) {
  napi_value callback, result;
  int32_t fd = -1;
  if (fd_and_callback(env, info, "waitUnlocked(fd, callback)", &fd, &callback) != 0) return NULL;
  uv_loop_t *loop;
  unlock_wait *wait = calloc(1, sizeof *wait);
  if (wait == NULL || napi_get_uv_event_loop(env, (struct uv_loop_s **)&loop) != napi_ok || uv_async_init(loop, &wait->async, on_unlocked) != 0) {
    free(wait);
    napi_create_int32(env, -ENOMEM, &result);
    return result;
  }
  wait->fd = fd;
  wait->env = env;
  wait->async.data = wait;
  hold_callback(env, callback, "baton:waitUnlocked", &wait->callback, &wait->context);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  // 64 KiB: it only ever sits in flock(). Not below the C library's least (128 KiB on arm64, for 64 KiB pages), which
  // pthread_attr_setstacksize would refuse, leaving the 8 MiB default.
  size_t stack = 64 * 1024;
  if (stack < (size_t)PTHREAD_STACK_MIN) stack = PTHREAD_STACK_MIN;
  pthread_attr_setstacksize(&attributes, stack);
  pthread_t thread;
  int failed = pthread_create(&thread, &attributes, unlock_thread, wait);
  pthread_attr_destroy(&attributes);
  if (failed != 0) {
    wait->forgotten = 1;
    napi_delete_reference(env, wait->callback);
    napi_async_destroy(env, wait->context);
    uv_close((uv_handle_t *)&wait->async, on_wait_closed);
    napi_create_int32(env, -failed, &result);
    return result;
  }
  napi_create_external(env, wait, NULL, NULL, &result);
  return result;
}

// forgetWait(handle): the wait is over for other reasons; the thread no longer keeps the event loop alive, and its
// wake-up, if it comes, calls nothing. Call it only before the callback ran (the handle is gone after).
static napi_value forget_wait(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *wait = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 1 && napi_get_value_external(env, argv[0], &wait) == napi_ok) {
    ((unlock_wait *)wait)->forgotten = 1;
    uv_unref((uv_handle_t *)&((unlock_wait *)wait)->async);
  }
  return NULL;
}

// ---- the wake FIFO -----------------------------------------------------------------------------------------------

// makeFifo(path): 0 or an errno. mode 0600: the caller opens it (O_NOFOLLOW), checks it and fchmods the descriptor.
static napi_value make_fifo(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  char path[4097];
  size_t length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_string_utf8(env, argv[0], path, sizeof path, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "makeFifo(path)");
    return NULL;
  }
  int failed = length >= sizeof path - 1 ? ENAMETOOLONG : mkfifo(path, 0600) == -1 ? errno : 0;
  napi_create_int32(env, failed, &result);
  return result;
}

// A descriptor the event loop polls (the wake FIFO, an inotify instance) and the JS function it calls back.
typedef struct {
  uv_poll_t poll;
  int fd;
  napi_env env;
  napi_ref callback;
  napi_async_context context;
} polled_fd;

static void on_polled_closed(uv_handle_t *handle) {
  free(handle->data);
}

// The descriptor is closed at once, not in uv_close's callback: that runs at the loop's next turn, which a baton on
// its way out never takes, and a wake FIFO kept open would keep its writer waiting (awaitNoReaders). uv_close has
// already taken the descriptor out of the loop's epoll set.
static void close_polled(polled_fd *wait) {
  uv_poll_stop(&wait->poll);
  napi_delete_reference(wait->env, wait->callback);
  if (wait->context != NULL) napi_async_destroy(wait->env, wait->context);
  uv_close((uv_handle_t *)&wait->poll, on_polled_closed);
  close(wait->fd);
}

// One call, then the poll stops: the byte stays in the FIFO, so a level-triggered poll would go on calling back. The
// handle and its descriptor stay until pollClose. The callback gets the bytes waiting in the FIFO (FIONREAD, which
// reads none: every waiter must see the byte): 0 is a hang-up, the FIFO's last writer gone without a byte.
static void on_fd_readable(uv_poll_t *poll, int status, int flags) {
  (void)status;
  (void)flags;
  polled_fd *wait = poll->data;
  napi_env env = wait->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, global, bytes;
  int pending = 0;
  if (ioctl(wait->fd, FIONREAD, &pending) != 0) pending = 1;  // cannot tell: take it for a byte, as before
  napi_create_int32(env, pending, &bytes);
  napi_get_reference_value(env, wait->callback, &callback);
  napi_get_global(env, &global);
  napi_async_context context = wait->context;
  wait->context = NULL;
  uv_poll_stop(&wait->poll);
  napi_make_callback(env, context, global, callback, 1, &bytes, NULL);
  napi_async_destroy(env, context);
  napi_close_handle_scope(env, scope);
}

// pollWake(fd, callback): takes fd and returns a handle for pollClose, or a negative errno (fd is then still the
// caller's). Calls back once; the handle and fd stay until pollClose, which the caller calls once, before or after
// the callback. The poll does not keep the event loop alive: the wait it speeds up does.
static napi_value poll_wake(napi_env env, napi_callback_info info) {
  napi_value callback, result;
  int32_t fd = -1;
  uv_loop_t *loop;
  if (fd_and_callback(env, info, "pollWake(fd, callback)", &fd, &callback) != 0) return NULL;
  polled_fd *wait = calloc(1, sizeof *wait);
  if (wait == NULL || napi_get_uv_event_loop(env, (struct uv_loop_s **)&loop) != napi_ok || uv_poll_init(loop, &wait->poll, fd) != 0) {
    free(wait);
    napi_create_int32(env, -ENOMEM, &result);
    return result;
  }
  wait->fd = fd;
  wait->env = env;
  wait->poll.data = wait;
  hold_callback(env, callback, "baton:pollWake", &wait->callback, &wait->context);
  uv_unref((uv_handle_t *)&wait->poll);
  uv_poll_start(&wait->poll, UV_READABLE, on_fd_readable);
  napi_create_external(env, wait, NULL, NULL, &result);
  return result;
}

// awaitNoReaders(fd, timeoutMs): fd is a wake FIFO this process holds read-write (so it is one of its readers). Opens
// it again write-only (through /proc/self/fd: never by its name in a shared folder), closes fd, and waits until no
// reader is left: a FIFO's write end polls POLLERR then, and the kernel wakes it as the last reader closes. At most
// timeoutMs: a reader that never lets go (a stopped waiter, a neighbour holding the FIFO) delays an exit, never stops
// it. 0 when no reader is left, ETIMEDOUT, or the errno that kept it from waiting. fd is closed in every case.
static napi_value await_no_readers(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  int32_t fd = -1, timeout = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 || napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      napi_get_value_int32(env, argv[1], &timeout) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "awaitNoReaders(fd, timeoutMs)");
    return NULL;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int end = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  int failed = end == -1 ? errno : 0;
  struct stat stats;
  if (end != -1 && (fstat(end, &stats) == -1 || !S_ISFIFO(stats.st_mode))) failed = EINVAL;
  close(fd);
  if (failed == 0) {
    struct timespec now, deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout / 1000;
    deadline.tv_nsec += (long)(timeout % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) deadline.tv_sec++, deadline.tv_nsec -= 1000000000L;
    failed = ETIMEDOUT;
    for (;;) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      long left = (deadline.tv_sec - now.tv_sec) * 1000L + (deadline.tv_nsec - now.tv_nsec) / 1000000L;
      if (left < 0) break;
      struct pollfd end_poll = {.fd = end, .events = 0};
      int ready = poll(&end_poll, 1, (int)left);
      if (ready == -1 && errno != EINTR) {
        failed = errno;
        break;
      }
      if (ready == 1) {
        failed = end_poll.revents & POLLERR ? 0 : EIO;
        break;
      }
      if (ready == 0) break;
    }
  }
  if (end != -1) close(end);
  napi_create_int32(env, failed, &result);
  return result;
}

// pollClose(handle): once, before or after the callback.
static napi_value poll_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *wait = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 1 && napi_get_value_external(env, argv[0], &wait) == napi_ok) {
    close_polled(wait);
  }
  return NULL;
}

// ---- inotify ----------------------------------------------------------------------------------------------------

// Reads the pending events, READS_PER_TURN buffers at most, and calls back once with the watch descriptors whose watch
// ended (the folder removed or moved away: IN_IGNORED follows), so the caller re-arms; names do not matter, the caller
// looks at its file again. At most: a writer in the watched folder as fast as the reads (strace -o into that folder
// writes a line for each read) would otherwise keep this loop from ever calling back, and the waiter from ever looking.
// What is left is read at the loop's next turn (the poll is level-triggered).
#define READS_PER_TURN 8
static void on_readable(uv_poll_t *poll, int status, int flags) {
  (void)flags;
  polled_fd *events = poll->data;
  char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
  int32_t ended[64];
  uint32_t count = 0;
  int any = status < 0;
  for (int reads = 0; reads < READS_PER_TURN; reads++) {
    ssize_t length = read(events->fd, buffer, sizeof buffer);
    if (length <= 0) break;  // EAGAIN: all read
    any = 1;
    for (char *at = buffer; at < buffer + length;) {
      const struct inotify_event *event = (const struct inotify_event *)at;
      if ((event->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) && count < sizeof ended / sizeof ended[0]) ended[count++] = event->wd;
      at += sizeof *event + event->len;
    }
  }
  if (!any) return;
  napi_env env = events->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value callback, list, global, item;
  napi_get_reference_value(env, events->callback, &callback);
  napi_create_array_with_length(env, count, &list);
  for (uint32_t i = 0; i < count; i++) {
    napi_create_int32(env, ended[i], &item);
    napi_set_element(env, list, i, item);
  }
  napi_get_global(env, &global);
  napi_make_callback(env, events->context, global, callback, 1, &list, NULL);
  napi_close_handle_scope(env, scope);
}

// inotifyOpen(callback): a handle, or a negative errno (EMFILE: the user's inotify instances are all taken).
static napi_value inotify_open(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) {
    napi_throw_type_error(env, NULL, "inotifyOpen(callback)");
    return NULL;
  }
  uv_loop_t *loop;
  if (napi_get_uv_event_loop(env, (struct uv_loop_s **)&loop) != napi_ok) {
    napi_create_int32(env, -EINVAL, &result);
    return result;
  }
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd == -1) {
    napi_create_int32(env, -errno, &result);
    return result;
  }
  polled_fd *events = calloc(1, sizeof *events);
  if (events == NULL || uv_poll_init(loop, &events->poll, fd) != 0) {
    free(events);
    close(fd);
    napi_create_int32(env, -ENOMEM, &result);
    return result;
  }
  events->fd = fd;
  events->env = env;
  events->poll.data = events;
  hold_callback(env, argv[0], "baton:inotify", &events->callback, &events->context);
  uv_poll_start(&events->poll, UV_READABLE, on_readable);
  napi_create_external(env, events, NULL, NULL, &result);
  return result;
}

static polled_fd *events_of(napi_env env, napi_callback_info info, size_t wanted, napi_value *argv) {
  size_t argc = wanted;
  void *events = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < wanted || napi_get_value_external(env, argv[0], &events) != napi_ok) {
    napi_throw_type_error(env, NULL, "an inotify handle");
    return NULL;
  }
  return events;
}

// inotifyAdd(handle, path): the watch descriptor, or a negative errno (ENOENT, EACCES, ENOSPC for the watch limit).
static napi_value inotify_add(napi_env env, napi_callback_info info) {
  napi_value argv[2], result;
  polled_fd *events = events_of(env, info, 2, argv);
  if (events == NULL) return NULL;
  char path[4097];
  size_t length;
  if (napi_get_value_string_utf8(env, argv[1], path, sizeof path, &length) != napi_ok || length >= sizeof path - 1) {
    napi_create_int32(env, -ENAMETOOLONG, &result);
    return result;
  }
  uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF |
                  IN_ONLYDIR;
  int wd = inotify_add_watch(events->fd, path, mask);
  napi_create_int32(env, wd == -1 ? -errno : wd, &result);
  return result;
}

// inotifyRemove(handle, wd)
static napi_value inotify_remove(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  polled_fd *events = events_of(env, info, 2, argv);
  int32_t wd;
  if (events != NULL && napi_get_value_int32(env, argv[1], &wd) == napi_ok) inotify_rm_watch(events->fd, wd);
  return NULL;
}

// inotifyClose(handle): the instance goes back to the node's budget. The handle must not be used after.
static napi_value inotify_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  polled_fd *events = events_of(env, info, 1, argv);
  if (events == NULL) return NULL;
  close_polled(events);
  return NULL;
}

void define_wait_functions(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"waitUnlocked", NULL, wait_unlocked, NULL, NULL, NULL, napi_enumerable, NULL},
      {"forgetWait", NULL, forget_wait, NULL, NULL, NULL, napi_enumerable, NULL},
      {"makeFifo", NULL, make_fifo, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pollWake", NULL, poll_wake, NULL, NULL, NULL, napi_enumerable, NULL},
      {"awaitNoReaders", NULL, await_no_readers, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pollClose", NULL, poll_close, NULL, NULL, NULL, napi_enumerable, NULL},
      {"inotifyOpen", NULL, inotify_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"inotifyAdd", NULL, inotify_add, NULL, NULL, NULL, napi_enumerable, NULL},
      {"inotifyRemove", NULL, inotify_remove, NULL, NULL, NULL, napi_enumerable, NULL},
      {"inotifyClose", NULL, inotify_close, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
