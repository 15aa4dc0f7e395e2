// Watches one folder with inotify and prints "NAME NS" (CLOCK_MONOTONIC, read as each event batch is read) for every
// file moved or created in it, until NAME equals argv[2]. A watcher that does nothing else: the bench's own event loop
// would add its latency. Prints "ready" once the watch is armed.
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int fd = inotify_init1(IN_CLOEXEC);
  if (fd < 0 || inotify_add_watch(fd, argv[1], IN_MOVED_TO | IN_CREATE) < 0) return 1;
  printf("ready\n");
  fflush(stdout);
  char buf[64 * (sizeof(struct inotify_event) + NAME_MAX + 1)] __attribute__((aligned(8)));
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return 1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    for (char *p = buf; p < buf + n;) {
      struct inotify_event *e = (struct inotify_event *)p;
      if (e->len > 0) {
        printf("%s %lld\n", e->name, ns);
        if (strcmp(e->name, argv[2]) == 0) return fflush(stdout) == 0 ? 0 : 1;
      }
      p += sizeof *e + e->len;
    }
    fflush(stdout);
  }
}
