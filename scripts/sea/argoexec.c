/* argoexec: what an Argo executor image built by docs/argo.md's recipe has at /bin/argoexec, in place of Argo's own
 * binary. Argo's init container copies the one file it finds as `argoexec` on PATH to /var/run/argo/argoexec, and
 * every container of the pod then runs that copy: this file. It hands each subcommand on:
 *
 *   DIR/argoexec emissary|kill ARGS...  ->  exec DIR/baton/baton emissary|kill ARGS...
 *   DIR/argoexec init ARGS...           ->  copy DIR/baton/ to /var/run/argo/baton/, then exec Argo's own `init`
 *   DIR/argoexec ANYTHING ELSE...       ->  exec DIR/baton/argo/argoexec ANYTHING ELSE... (Argo's own: wait, the
 *                                           artifact plugins' subcommands, version...)
 *
 * DIR is this file's folder: /bin in the executor image (and /argo-bin/bin where Argo mounts that image as a volume,
 * its init-less layout), /var/run/argo in the pod's other containers once the init container copied it there.
 * DIR/baton/ is baton's standalone folder (launcher, lib/) with Argo's own argoexec at DIR/baton/argo/argoexec; the
 * copy takes all of it, so that a container of any image (no Node, no glibc, no shell) finds both under
 * /var/run/argo/baton/. /var/run/argo is $BATON_ARGO_ROOT when that is set (the tests).
 *
 * Linked statically, like the launcher: it runs in images that have no libc. It execs (never forks): whatever it
 * starts keeps its PID (PID 1 in a container). When it cannot do its part it exits 64, Argo's code for an executor
 * failure, with one line on stderr and in /dev/termination-log; for `emissary` it also writes 64 to the container's
 * exitcode file, so that what waits for that file (the next container of a container set, the wait container) is
 * told rather than left waiting. */
#define _GNU_SOURCE /* copy_file_range, O_PATH */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_EXECUTOR 64

static char dir[PATH_MAX];      /* this file's folder */
static char kit[PATH_MAX + 8];  /* DIR/baton */
static const char *argo_root;   /* /var/run/argo, or $BATON_ARGO_ROOT */

static int emissary_mode;       /* argv[1] is "emissary" */
static void write_exitcode(void);

/* One line on stderr and in the termination message, then, for emissary, 64 in ctr/<name>/exitcode; exit 64. */
static void fail(const char *format, ...) {
  char message[PATH_MAX + 256];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  fprintf(stderr, "baton: argoexec: %s\n", message);
  /* What Argo's argoexec does with an error (cmd/argoexec/main.go): the kubelet reads it as the container's message.
   * Only into a file the kubelet made (as baton emissary does): a run outside a pod leaves nothing in /dev. */
  int fd = open("/dev/termination-log", O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd >= 0) {
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) dprintf(fd, "baton: argoexec: %s", message);
    close(fd);
  }
  if (emissary_mode) write_exitcode();
  exit(EXIT_EXECUTOR);
}

/* An unpredictable name for a file or folder this program makes in a shared folder: PREFIX-<64 random bits>. */
static void unpredictable(char *out, size_t size, const char *prefix) {
  unsigned long long bits = 0;
  if (getrandom(&bits, sizeof bits, GRND_NONBLOCK) != (ssize_t)sizeof bits) /* no entropy yet: pid and ASLR */
    bits ^= (unsigned long long)getpid() << 32 ^ (unsigned long long)(uintptr_t)&bits;
  snprintf(out, size, "%s-%016llx", prefix, bits);
}

/* ROOT/ctr/NAME/exitcode = "64", written as baton writes it (a temporary file renamed into place: never seen empty).
 * The folders are Argo's (0777, as its emissary makes them); nothing is followed that another container could have
 * made a symlink. */
static void write_exitcode(void) {
  const char *name = getenv("ARGO_CONTAINER_NAME");
  if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return;
  mode_t old = umask(0);
  int root = open(argo_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int ctr = -1, own = -1, fd = -1;
  char tmp[64];
  if (root < 0) goto out;
  if (mkdirat(root, "ctr", 0777) != 0 && errno != EEXIST) goto out;
  if ((ctr = openat(root, "ctr", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) goto out;
  if (mkdirat(ctr, name, 0777) != 0 && errno != EEXIST) goto out;
  if ((own = openat(ctr, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) goto out;
  unpredictable(tmp, sizeof tmp, ".exitcode");
  if ((fd = openat(own, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) goto out;
  if (write(fd, "64", 2) != 2 || close(fd) != 0 || renameat(own, tmp, own, "exitcode") != 0) unlinkat(own, tmp, 0);
  fd = -1;
out:
  if (fd >= 0) close(fd);
  if (own >= 0) close(own);
  if (ctr >= 0) close(ctr);
  if (root >= 0) close(root);
  umask(old);
}

/* This file's folder: /proc/self/exe where /proc is mounted, else argv[0] (a path, or a name on PATH). */
static void find_dir(const char *argv0) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
  } else if (strchr(argv0, '/')) {
    if (!realpath(argv0, self)) fail("cannot find my own folder (no /proc, %s: %s)", argv0, strerror(errno));
  } else {
    const char *path = getenv("PATH");
    int found = 0;
    for (path = path ? path : "/usr/local/bin:/usr/bin:/bin"; *path && !found;) {
      size_t len = strcspn(path, ":");
      char candidate[PATH_MAX];
      if (len > 0 && len + strlen(argv0) + 2 <= sizeof candidate) {
        snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, path, argv0);
        found = access(candidate, X_OK) == 0 && realpath(candidate, self);
      }
      path += len + (path[len] == ':');
    }
    if (!found) fail("cannot find my own folder (no /proc, %s not on PATH)", argv0);
  }
  strcpy(dir, self);
  *strrchr(dir, '/') = '\0';
  if (!*dir) strcpy(dir, "/");
  snprintf(kit, sizeof kit, "%s/baton", strcmp(dir, "/") == 0 ? "" : dir);
}

static void run(const char *program, char **argv) {
  execv(program, argv);
  fail("cannot run %s: %s", program, strerror(errno));
}

/* --- init: DIR/baton/ copied to ROOT/baton/ --- */

/* SIZE bytes from IN to OUT: copy_file_range(2) where the kernel does it (both files on one filesystem type; across
 * types, as from an image's overlayfs to an emptyDir, it refuses with EXDEV), else read and write, every short write
 * resumed, so that a full volume is told as ENOSPC. 0, or -1 with errno (0: the file shrank). */
static int copy_bytes(int in, int out, off_t size) {
  static char buffer[1 << 20];
  static int by_hand;
  for (off_t left = size; left > 0;) {
    ssize_t n = by_hand ? -1 : copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
    if (n < 0 && (by_hand || errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      by_hand = 1;
      n = read(in, buffer, (size_t)(left < (off_t)sizeof buffer ? left : (off_t)sizeof buffer));
      for (ssize_t done = 0; n > 0 && done < n;) {
        ssize_t written = write(out, buffer + done, (size_t)(n - done));
        if (written < 0) return -1;
        done += written;
      }
    }
    if (n < 0) return -1;
    if (n == 0) {
      errno = 0;
      return -1;
    }
    left -= n;
  }
  return 0;
}

static void copy_file(int from_dir, int to_dir, const char *name, const struct stat *st) {
  int in = openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0) fail("cannot read %s/.../%s: %s", kit, name, strerror(errno));
  /* r-x or r-- for everyone: the pod's containers may run as any user, and none of them should change it. */
  mode_t mode = st->st_mode & 0111 ? 0555 : 0444;
  int out = openat(to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0) fail("cannot create %s in %s: %s", name, argo_root, strerror(errno));
  if (copy_bytes(in, out, st->st_size) != 0) {
    fail("cannot copy %s to %s: %s", name, argo_root, errno ? strerror(errno) : "it shrank while being copied");
  }
  if (fchmod(out, mode) != 0 || close(out) != 0) fail("cannot write %s in %s: %s", name, argo_root, strerror(errno));
  close(in);
}

static void copy_tree(int from_dir, int to_dir) {
  DIR *entries = fdopendir(dup(from_dir));
  if (!entries) fail("cannot list %s: %s", kit, strerror(errno));
  for (struct dirent *e; (e = readdir(entries));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    struct stat st;
    if (fstatat(from_dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) fail("cannot read %s: %s", e->d_name, strerror(errno));
    if (S_ISREG(st.st_mode)) {
      copy_file(from_dir, to_dir, e->d_name, &st);
    } else if (S_ISDIR(st.st_mode)) {
      if (mkdirat(to_dir, e->d_name, 0700) != 0) fail("cannot create %s in %s: %s", e->d_name, argo_root, strerror(errno));
      int from = openat(from_dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      int to = openat(to_dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (from < 0 || to < 0) fail("cannot open %s: %s", e->d_name, strerror(errno));
      copy_tree(from, to);
      if (fchmod(to, 0755) != 0) fail("cannot set the mode of %s: %s", e->d_name, strerror(errno));
      close(from);
      close(to);
    } else {
      fail("%s holds %s, which is neither a file nor a folder", kit, e->d_name);
    }
  }
  closedir(entries);
}

/* Into a folder of an unpredictable name, renamed into place once complete: a container that finds ROOT/baton finds
 * all of it. A ROOT/baton already there is such a complete copy (an init container run again in the same pod). */
static void install(void) {
  char program[PATH_MAX + 32];
  snprintf(program, sizeof program, "%s/baton", kit);
  if (access(program, X_OK) != 0) fail("%s: %s (the executor image is not built by docs/argo.md's recipe)", program, strerror(errno));
  snprintf(program, sizeof program, "%s/argo/argoexec", kit);
  if (access(program, X_OK) != 0) fail("%s: %s (the executor image is not built by docs/argo.md's recipe)", program, strerror(errno));

  int root = open(argo_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) fail("cannot open %s: %s", argo_root, strerror(errno));
  struct stat st;
  if (fstatat(root, "baton", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISDIR(st.st_mode)) fail("%s/baton is there and is not a folder", argo_root);
    close(root);
    return;
  }
  char tmp[64];
  int made = 0;
  for (int attempt = 0; attempt < 100 && !made; attempt++) {
    unpredictable(tmp, sizeof tmp, ".baton");
    made = mkdirat(root, tmp, 0700) == 0;
    if (!made && errno != EEXIST) fail("cannot create a folder in %s: %s", argo_root, strerror(errno));
  }
  if (!made) fail("cannot create a folder in %s: every name was taken", argo_root);
  int from = open(kit, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int to = openat(root, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (from < 0 || to < 0) fail("cannot open %s: %s", from < 0 ? kit : tmp, strerror(errno));
  copy_tree(from, to);
  if (fchmod(to, 0755) != 0) fail("cannot set the mode of %s/%s: %s", argo_root, tmp, strerror(errno));
  if (renameat(root, tmp, root, "baton") != 0) fail("cannot rename %s/%s to baton: %s", argo_root, tmp, strerror(errno));
  close(from);
  close(to);
  close(root);
}

int main(int argc, char **argv) {
  const char *argv0 = argc > 0 && argv[0] ? argv[0] : "argoexec";
  const char *command = argc > 1 ? argv[1] : "";
  const char *root = getenv("BATON_ARGO_ROOT");
  argo_root = root && *root ? root : "/var/run/argo";
  emissary_mode = strcmp(command, "emissary") == 0;
  find_dir(argv0);

  char program[PATH_MAX + 32];
  if (emissary_mode || strcmp(command, "kill") == 0) {
    snprintf(program, sizeof program, "%s/baton", kit);
    argv[0] = program;
    run(program, argv);
  }
  if (strcmp(command, "init") == 0) install();
  snprintf(program, sizeof program, "%s/argo/argoexec", kit);
  run(program, argv);
  return EXIT_EXECUTOR;
}
