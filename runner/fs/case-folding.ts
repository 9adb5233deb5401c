// Names in any case. A case-insensitive file system whose paths keep the case they were named in
// (Linux's casefold directories on ext4, f2fs or tmpfs, FAT and exFAT drives, SMB shares, WSL's
// /mnt/c) opens `.env` for `.ENV`, and both the path as named and its real path (realpath there
// keeps the case given) read `.ENV`: a check that compares names by their letters as written
// must compare them in lower case too, or a script walks around it by spelling a name otherwise.

const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * `text` in lower case, to compare names in any case: past ASCII, upper case first, so that a
 * letter whose lower case is not its case folding is folded too (the long s "ſ" is "s", as a
 * case-insensitive file system folds it; the Kelvin sign "K" lowers to "k" either way). Only
 * letters change: no "/" or "." is made or removed, and an ASCII text keeps its length.
 */
export function caseFolded(text: string): string {
  const lower = text.toLowerCase();
  return NOT_ASCII.test(lower) ? text.toUpperCase().toLowerCase() : lower;
}
