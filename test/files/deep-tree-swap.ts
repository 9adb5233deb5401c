// A tree deeper than PATH_MAX under a classified directory, and a process that swaps a directory
// for a link into it: for the tests of what tacit does when /proc cannot name where a descriptor
// leads (test/files/deep-swapped-directory.test.ts, test/exec/deep-swapped-cwd.test.ts).

/**
 * Makes root/.ssh/K1/…/K24/f.txt (a path of about 4,800 bytes, past PATH_MAX), a link root/hop to
 * .ssh/K1/…/K12, a link root/.link-d to hop/K13/…/K24 (each link's text within PATH_MAX), and an
 * ordinary root/d/f.txt. Made from inside each directory in turn: no path given is too long.
 */
export const BUILD = `
import os, sys
root, canary = sys.argv[1], sys.argv[2]
names = [("k%02d" % i) + "k" * 197 for i in range(24)]
os.chdir(root)
os.mkdir(".ssh")
os.chdir(".ssh")
for name in names:
    os.mkdir(name)
    os.chdir(name)
with open("f.txt", "w") as f:
    f.write("secret " + canary + "\\n")
os.mkdir("sub")
with open("sub/g.txt", "w") as f:
    f.write("secret " + canary + "\\n")
os.chdir(root)
os.symlink(".ssh/" + "/".join(names[:12]), "hop")
os.symlink("hop/" + "/".join(names[12:]), ".link-d")
os.mkdir("d")
with open("d/f.txt", "w") as f:
    f.write("ordinary\\n")
os.mkdir("d/sub")
with open("d/sub/g.txt", "w") as f:
    f.write("ordinary\\n")
`;

/** Exchanges root/d and root/.link-d at once, again and again, until killed; says "swapping" after 100. */
export const SWAPPER = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
root = sys.argv[1]
swaps = 0
while True:
    if libc.renameat2(AT_FDCWD, f"{root}/d".encode(), AT_FDCWD, f"{root}/.link-d".encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
    swaps += 1
    if swaps == 100:
        print("swapping", flush=True)
`;

