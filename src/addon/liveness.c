// The liveness file's two ends (src/handoff/liveness-lock.ts, docs/design.md "A step that dies"):
// - makeLiveness(temporary, mark) and placeLiveness(temporary, path, mark): the writer's. The file is made with no name (O_TMPFILE), locked, marked and
//   made 0644, and only then given a name (linkat) and renamed into place: nobody can open it before its lock is held,
//   so nobody can take a lock on it first (a reader woken by inotify did, 8 times in 10, when the file was named
//   first and locked after). Where the file system refuses O_TMPFILE, it is made under a temporary name with mode 0
//   and locked in the next system call, and made again under a new name if someone was quicker.
// - lockHeld(fd): a waiter's look, without taking anything.
// The lock is an open file description's write lock (fcntl F_OFD_SETLK, F_WRLCK): fcntl grants a write lock only
// through a descriptor open for writing, so a neighbour that may only read the file (another uid: it is 0644; any uid
// on a read-only mount: EROFS) can never hold one, and a read lock of its own never stops a waiter's read lock. flock
// has no such rule: any reader could take LOCK_EX on a dead writer's file and keep every later waiter waiting. The
// writer takes flock(LOCK_EX) as well, for the waiters of older batons, which wait on that.
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include "wait-events.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

// What placeLiveness returns (negated) when a living baton already holds the liveness file at that path: two steps
// given one post file. No system call on its way returns it.
#define LIVENESS_TAKEN EADDRINUSE
// How many names the fallback tries before it gives up: each one lost means a process opened a file of mode 0 and
// locked it within microseconds of its creation, which only a process with CAP_DAC_OVERRIDE can.
#define NAMED_TRIES 8
// The mark of an older baton's liveness file (a flock alone): still believed when it is the one displaced.
static const char OLD_MARK[] = "baton liveness lock\n";

static int write_lock(int fd) {
  struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
  int rc;
  do rc = fcntl(fd, F_OFD_SETLK, &lock);
  while (rc == -1 && errno == EINTR);
  if (rc == -1) return errno;
  // For older waiters only. Not fatal: on a network file system that emulates flock with fcntl locks it conflicts with
  // the write lock just taken, and that is the lock that counts.
  do rc = flock(fd, LOCK_EX | LOCK_NB);
  while (rc == -1 && errno == EINTR);
  return 0;
}

// 1 when another open file description holds a write lock on fd's file, 0 when none does, -errno when fcntl cannot
// tell (a file system without locks).
static int write_locked(int fd) {
  struct flock lock = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
  if (fcntl(fd, F_OFD_GETLK, &lock) == -1) return -errno;
  return lock.l_type != F_UNLCK;
}

static int write_all(int fd, const char *data, size_t length) {
  size_t done = 0;
  while (done < length) {
    ssize_t written = pwrite(fd, data + done, length - done, (off_t)done);
    if (written == -1 && errno == EINTR) continue;
    if (written <= 0) return written == -1 ? errno : EIO;
    done += (size_t)written;
  }
  return 0;
}

// A new random name in place of the 16 hex digits of `.NAME.<16 hex>.tmp` (the caller's first one is used as given).
static void rename_randomly(char *temporary) {
  size_t length = strlen(temporary);
  if (length < 21) return;
  unsigned char bytes[8] = {0};
  if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] ^= (unsigned char)(rand() & 0xff);
  }
  static const char hex[] = "0123456789abcdef";
  char *at = temporary + length - 20;
  for (size_t i = 0; i < sizeof bytes; i++) {
    at[2 * i] = hex[bytes[i] >> 4];
    at[2 * i + 1] = hex[bytes[i] & 15];
  }
}

// Locks, marks and opens to all a new file: 0, or the errno, with *step the system call that failed.
static int lock_and_mark(int fd, const char *mark, size_t mark_length, const char **step) {
  int failed = write_lock(fd);
  *step = "fcntl";
  if (failed == 0) failed = write_all(fd, mark, mark_length), *step = "write";
  if (failed == 0 && fchmod(fd, 0644) == -1) failed = errno, *step = "fchmod";
  return failed;
}

// A descriptor of a new, locked, marked, 0644 file at `temporary`, or -errno with *step the system call that failed
// ("write": no room for the mark, a disk out of data blocks).
static int make_locked(const char *folder, char *temporary, const char *mark, size_t mark_length, const char **step) {
  *step = "open";
  int fd = open(folder, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd != -1) {
    int failed = lock_and_mark(fd, mark, mark_length, step);
    if (failed != 0) {
      close(fd);
      return -failed;
    }
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    for (int tries = 0; tries < NAMED_TRIES; tries++) {
      if (tries > 0) rename_randomly(temporary);
      // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc/self/fd needs /proc. Either names the same locked file.
      if (linkat(fd, "", AT_FDCWD, temporary, AT_EMPTY_PATH) == 0) return fd;
      if (errno != EEXIST && linkat(AT_FDCWD, self, AT_FDCWD, temporary, AT_SYMLINK_FOLLOW) == 0) return fd;
      if (errno != EEXIST) break;
    }
    failed = errno;
    close(fd);
    *step = "linkat";
    // Neither way could name it: the named way below, unless the folder itself refused.
    if (failed == EROFS || failed == ENOSPC || failed == EDQUOT || failed == EACCES || failed == EMLINK) return -failed;
  } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) {
    // EISDIR and ENOENT: a kernel older than O_TMPFILE (3.11) reads it as O_DIRECTORY or O_CREAT on a folder.
    return -errno;
  }
  for (int tries = 0; tries < NAMED_TRIES; tries++) {
    if (tries > 0) rename_randomly(temporary);
    // Mode 0: no uid but one with CAP_DAC_OVERRIDE can open it before its mode is set below.
    *step = "open";
    fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0);
    if (fd == -1) {
      if (errno == EEXIST) continue;
      return -errno;
    }
    int failed = lock_and_mark(fd, mark, mark_length, step);
    if (failed == 0) return fd;
    unlink(temporary);
    close(fd);
    if (failed != EAGAIN && failed != EACCES) return -failed;  // EAGAIN, EACCES: someone locked it first
  }
  *step = "fcntl";
  return -EAGAIN;
}

// Whether `file` is the liveness file of a living baton: a regular file with baton's mark, and locked.
static int holds_living_writer(const char *file, const char *mark, size_t mark_length) {
  int fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd == -1) return 0;
  struct stat stats;
  char seen[256];
  int living = 0;
  if (fstat(fd, &stats) == 0 && S_ISREG(stats.st_mode) && mark_length < sizeof seen) {
    ssize_t length = pread(fd, seen, mark_length, 0);
    if (length == (ssize_t)mark_length && memcmp(seen, mark, mark_length) == 0) {
      living = write_locked(fd) == 1;
    } else if (length == (ssize_t)(sizeof OLD_MARK - 1) && memcmp(seen, OLD_MARK, sizeof OLD_MARK - 1) == 0) {
      living = flock(fd, LOCK_SH | LOCK_NB) == -1 && errno == EWOULDBLOCK;  // an older baton's: a flock is all it has
    }
  }
  close(fd);
  return living;
}

// Puts the locked file at `temporary` in place at `path`: 0, -LIVENESS_TAKEN (a living baton's liveness file is
// there: it stays, and ours is removed), or -errno (ours is removed). The file a writer replaces is seen atomically
// (RENAME_EXCHANGE hands it back under the temporary name), so of two writers starting at once exactly one wins.
static int put_in_place(const char *temporary, const char *path, const char *mark, size_t mark_length) {
  for (int tries = 0; tries < NAMED_TRIES; tries++) {
    if (renameat2(AT_FDCWD, temporary, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
    if (errno == EEXIST) {
      if (renameat2(AT_FDCWD, temporary, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
        // `temporary` now names what was at `path`.
        if (holds_living_writer(temporary, mark, mark_length)) {
          // Give it its name back. Between the two renames a waiter that opened ours follows the living writer again
          // once our lock goes (the file at the name is then another one: src/handoff/watch-hand-off.ts).
          renameat2(AT_FDCWD, temporary, AT_FDCWD, path, RENAME_EXCHANGE);
          unlink(temporary);
          return -LIVENESS_TAKEN;
        }
        unlink(temporary);  // a dead baton's (a container restarted), or not baton's at all
        return 0;
      }
      if (errno == ENOENT) continue;  // gone meanwhile: try to take the free name again
    }
    if (errno != EINVAL && errno != ENOSYS) break;
    // No renameat2 flags here (an old kernel or file system): look, then replace. Two writers starting within the same
    // few microseconds could both go on.
    if (holds_living_writer(path, mark, mark_length)) {
      unlink(temporary);
      return -LIVENESS_TAKEN;
    }
    if (rename(temporary, path) == 0) return 0;
    break;
  }
  int failed = errno;
  unlink(temporary);
  return -failed;
}

static int string_argument(napi_env env, napi_value value, char *buffer, size_t size, size_t *length) {
  return napi_get_value_string_utf8(env, value, buffer, size, length) == napi_ok && *length < size - 1 ? 0 : -1;
}

// makeLiveness(temporary, mark): [fd, name]: a descriptor holding the lock of a new liveness file, marked and 0644,
// now at `name` (`temporary`, or another random name beside it when that one was taken); or [-errno, the system call
// that failed].
// `temporary`: `.NAME.<16 hex>.tmp`, beside where the file is to go.
static napi_value make_liveness(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  char temporary[PATH_MAX + 1], mark[256], folder[PATH_MAX + 1];
  size_t temporary_length, mark_length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 ||
      string_argument(env, argv[0], temporary, sizeof temporary, &temporary_length) != 0 ||
      string_argument(env, argv[1], mark, sizeof mark, &mark_length) != 0) {
    napi_throw_type_error(env, NULL, "makeLiveness(temporary, mark)");
    return NULL;
  }
  memcpy(folder, temporary, temporary_length + 1);
  char *slash = strrchr(folder, '/');
  if (slash == NULL) strcpy(folder, ".");
  else if (slash == folder) folder[1] = '\0';
  else *slash = '\0';
  const char *step = "open";
  int fd = make_locked(folder, temporary, mark, mark_length, &step);
  napi_value descriptor, name;
  napi_create_array_with_length(env, 2, &result);
  napi_create_int32(env, fd, &descriptor);
  napi_create_string_utf8(env, fd < 0 ? step : temporary, NAPI_AUTO_LENGTH, &name);
  napi_set_element(env, result, 0, descriptor);
  napi_set_element(env, result, 1, name);
  return result;
}

// placeLiveness(temporary, path, mark): 0 once the liveness file at `temporary` is at `path`; -EADDRINUSE when a living
// baton holds the one there (ours is removed, theirs stays); else -errno (ours is removed).
static napi_value place_liveness(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], result;
  char temporary[PATH_MAX + 1], path[PATH_MAX + 1], mark[256];
  size_t temporary_length, path_length, mark_length;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 ||
      string_argument(env, argv[0], temporary, sizeof temporary, &temporary_length) != 0 ||
      string_argument(env, argv[1], path, sizeof path, &path_length) != 0 ||
      string_argument(env, argv[2], mark, sizeof mark, &mark_length) != 0) {
    napi_throw_type_error(env, NULL, "placeLiveness(temporary, path, mark)");
    return NULL;
  }
  napi_create_int32(env, put_in_place(temporary, path, mark, mark_length), &result);
  return result;
}

// lockHeld(fd): 1 while a writer holds the lock of fd's file, 0 once nobody does, -errno when it cannot be told.
static napi_value lock_held(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  int32_t fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "lockHeld(fd)");
    return NULL;
  }
  napi_create_int32(env, write_locked(fd), &result);
  return result;
}

void define_liveness_functions(napi_env env, napi_value exports) {
  napi_property_descriptor functions[] = {
      {"makeLiveness", NULL, make_liveness, NULL, NULL, NULL, napi_enumerable, NULL},
      {"placeLiveness", NULL, place_liveness, NULL, NULL, NULL, napi_enumerable, NULL},
      {"lockHeld", NULL, lock_held, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof functions / sizeof functions[0], functions);
}
