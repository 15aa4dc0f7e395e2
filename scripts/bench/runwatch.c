// Watches the run folders of a chain (make bench, row 8) with one inotify instance and prints "K NAME NS" (K: the
// folder's place in the argument list, NS: CLOCK_MONOTONIC read as each batch of events is read) for every post file
// ("out") or failure file ("out.err") moved or created in them. Ends once the last folder has either. Prints "ready"
// once every watch is armed. It runs outside the steps' user namespace: its instance is not one of theirs.
//   runwatch DIR...
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int count = argc - 1;
  int fd = inotify_init1(IN_CLOEXEC);
  if (fd < 0) return 1;
  int *wds = calloc(count, sizeof *wds);
  for (int k = 0; k < count; k++) {
    wds[k] = inotify_add_watch(fd, argv[k + 1], IN_MOVED_TO | IN_CREATE);
    if (wds[k] < 0) {
      perror(argv[k + 1]);
      return 1;
    }
  }
  printf("ready\n");
  fflush(stdout);
  char buf[256 * (sizeof(struct inotify_event) + NAME_MAX + 1)] __attribute__((aligned(8)));
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return 1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    int last = 0;
    for (char *p = buf; p < buf + n;) {
      struct inotify_event *e = (struct inotify_event *)p;
      p += sizeof *e + e->len;
      if (e->len == 0 || (strcmp(e->name, "out") != 0 && strcmp(e->name, "out.err") != 0)) continue;
      int k = 0;
      while (k < count && wds[k] != e->wd) k++; // wds are 1, 2, ... in order: this is short in practice
      if (k == count) continue;
      printf("%d %s %lld\n", k, e->name, ns);
      if (k == count - 1) last = 1;
    }
    fflush(stdout);
    if (last) return 0;
  }
}
