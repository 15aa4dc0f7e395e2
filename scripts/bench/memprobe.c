// Memory probe: run as the wrapper's command, it copies the VmHWM, VmRSS, RssAnon and RssFile lines of its parent
// (the wrapper, while its command runs) from /proc/<ppid>/status to argv[1].
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)getppid());
  FILE *in = fopen(path, "r"), *out = fopen(argv[1], "w");
  if (!in || !out) return 1;
  while (fgets(line, sizeof line, in))
    if (!strncmp(line, "VmHWM:", 6) || !strncmp(line, "VmRSS:", 6) || !strncmp(line, "RssAnon:", 8) || !strncmp(line, "RssFile:", 8))
      fputs(line, out);
  return fclose(out) == 0 ? 0 : 1;
}
