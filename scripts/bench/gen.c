// gen MIB: writes MIB mebibytes of text to stdout in 64 KiB writes (the output-capture workload).
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  static char buf[65536];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (i % 64 == 63) ? '\n' : 'a' + i % 26;
  long chunks = (argc > 1 ? atol(argv[1]) : 200) * 16;
  for (long c = 0; c < chunks; c++) {
    size_t off = 0;
    while (off < sizeof buf) {
      ssize_t n = write(1, buf + off, sizeof buf - off);
      if (n <= 0) return 1;
      off += n;
    }
  }
  return 0;
}
