// firsttouch: prints what this machine charges for memory a process touches for the first time, in ms per MiB (the
// least of 5 rounds of 64 MiB, 4 KiB pages, one write per page): page faults, zeroing and, on a virtual machine, the
// hypervisor's share. A figure of the machine, not of baton: every Node process's start and exit is paid at this rate,
// and it differs tenfold between a guest whose page tables the host shadows (~5 ms per MiB) and one with hardware
// paging (~0.5), which moves rows 3 and 8 with it (docs/performance.md, "Reading it").
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void) {
  const size_t mib = 64, size = mib << 20;
  double best = -1;
  for (int round = 0; round < 5; round++) {
    volatile char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    madvise((void *)p, size, MADV_NOHUGEPAGE); // 4 KiB faults, as a process's scattered first touches are
    double start = now_ms();
    for (size_t i = 0; i < size; i += 4096) p[i] = 1;
    double perMiB = (now_ms() - start) / mib;
    munmap((void *)p, size);
    if (best < 0 || perMiB < best) best = perMiB;
  }
  printf("%.3f\n", best);
  return 0;
}
