// Starts one step of the scale row (make bench, row 8) as a Tekton step sees its run folders: in the user namespace of
// HOLDER_PID (where the bench lowered max_inotify_instances: the limit is per user namespace, and every step of a node
// shares one), in a mount namespace of its own where VIEW shows REAL read-only but VIEW/STEP writable, as Tekton mounts
// /tekton/run/<i> for step i and the others' folders read-only. Then execs the command.
//   nsstep HOLDER_PID REAL VIEW STEP -- COMMAND ARGS...
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int fail(const char *what) {
  fprintf(stderr, "nsstep: %s: %m\n", what);
  return 126;
}

int main(int argc, char **argv) {
  if (argc < 7 || strcmp(argv[5], "--") != 0) {
    fprintf(stderr, "usage: nsstep HOLDER_PID REAL VIEW STEP -- COMMAND ARGS...\n");
    return 2;
  }
  const char *real = argv[2], *view = argv[3], *step = argv[4];
  char path[4096];
  snprintf(path, sizeof path, "/proc/%s/ns/user", argv[1]);
  int ns = open(path, O_RDONLY | O_CLOEXEC);
  if (ns < 0 || setns(ns, CLONE_NEWUSER) != 0) return fail("setns (user)");
  close(ns);
  if (unshare(CLONE_NEWNS) != 0) return fail("unshare (mount)");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return fail("mount --make-rprivate /");
  if (mount(real, view, NULL, MS_BIND, NULL) != 0) return fail("mount --bind REAL VIEW");
  // A remount in a user namespace must keep the flags the mount below is locked with (nosuid, nodev, ...).
  struct statvfs below;
  if (statvfs(view, &below) != 0) return fail("statvfs VIEW");
  unsigned long keep = 0;
  if (below.f_flag & ST_NOSUID) keep |= MS_NOSUID;
  if (below.f_flag & ST_NODEV) keep |= MS_NODEV;
  if (below.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
  if (below.f_flag & ST_NOATIME) keep |= MS_NOATIME;
  if (below.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
  if (below.f_flag & ST_RELATIME) keep |= MS_RELATIME;
  if (mount(NULL, view, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL) != 0) return fail("remount VIEW read-only");
  char own[4096], ownView[4096];
  snprintf(own, sizeof own, "%s/%s", real, step);
  snprintf(ownView, sizeof ownView, "%s/%s", view, step);
  if (mount(own, ownView, NULL, MS_BIND, NULL) != 0) return fail("mount --bind REAL/STEP VIEW/STEP");
  execv(argv[6], argv + 6);
  return fail(argv[6]);
}
