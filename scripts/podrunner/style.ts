// ANSI colours when writing to a terminal, nothing otherwise.
export interface Palette {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  blue(s: string): string;
  magenta(s: string): string;
  cyan(s: string): string;
  grey(s: string): string;
}

export function paint(color: boolean): Palette {
  const sgr = (code: string) => (s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  return {
    bold: sgr("1"),
    dim: sgr("2"),
    red: sgr("31"),
    green: sgr("32"),
    yellow: sgr("33"),
    blue: sgr("34"),
    magenta: sgr("35"),
    cyan: sgr("36"),
    grey: sgr("90"),
  };
}
