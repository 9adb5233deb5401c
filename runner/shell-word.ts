// Text as one word for a POSIX shell (sh, bash): single-quoted, a quote inside as '\''.

export function singleQuoted(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}
