// What --strict refuses: programs that would hand a script authority it was not given — run
// any code, read or write any file, reach any host, or act as someone else. A denylist is
// for convenience, not a confinement: any program left off it still runs with the user's
// full authority. So names are matched loosely, erring towards refusal: a program is known by
// its family, whatever version or variant suffix its name carries (`python3.11`,
// `perl5.36.0`, `tclsh8.6`, `vim.basic`, `gcc-12`, `x86_64-linux-gnu-gcc`, `git-upload-pack`),
// anything named like a shell is one (`rbash`, `yash`, `elvish`), and the check also judges
// the file a name really runs (`editor` → `vim.basic`), see command-policy.ts.

/** A family of denied programs and why --strict refuses them, in words for the refusal. */
export interface DeniedGroup {
  /** What they are, as in "it is <kind>". */
  kind: string;
  /** What they would let a script do. */
  why: string;
  /** Family names, lower case: each also stands for its versioned and suffixed names. */
  names: readonly string[];
  /** They run another program named in their arguments (see runsOtherPrograms). */
  runsNamedPrograms?: true;
  /** Their arguments or input are code or a command line, which can name a program any way it likes (see runsCodeText). */
  runsCodeText?: true;
  /** Their standard input may be a build file whose recipes run any command (`make -f -`, `docker build -`: see runsItsInput). */
  runsItsInput?: true;
}

export const STRICT_DENIED_GROUPS: readonly DeniedGroup[] = [
  {
    kind: "a shell, or a program that hosts one",
    runsNamedPrograms: true,
    runsCodeText: true,
    why: "it runs any command line it is given",
    names: [
      "sh", "bash", "rbash", "dash", "ash", "hush", "zsh", "rzsh", "ksh", "rksh", "mksh", "pdksh", "oksh", "loksh", "csh", "tcsh",
      "fish", "yash", "posh", "elvish", "xonsh", "nu", "nushell", "rc", "es", "scsh", "busybox", "toybox", "coreutils", "pwsh",
      "powershell", "cmd", "script", "tmux", "screen", "dtach", "abduco",
    ],
  },
  {
    kind: "an interpreter",
    runsCodeText: true,
    why: "it runs any code its arguments or input give it",
    names: [
      "python", "pypy", "jython", "ipython", "bpython", "ptpython", "pydoc", "jupyter", "perl", "perldoc", "cpan", "ruby", "jruby",
      "irb", "erb", "ri", "pry", "node", "nodejs", "deno", "bun", "bunx", "ts-node", "tsx", "qjs", "d8", "jsc", "rhino", "php",
      "lua", "luajit", "tclsh", "wish", "expect", "expectk", "java", "jshell", "jrunscript", "jjs", "groovy", "scala", "kotlin",
      "clojure", "clj", "osascript", "r", "rscript", "julia", "octave", "ghc", "ghci", "runghc", "runhaskell", "guile", "racket",
      "sbcl", "clisp", "ecl", "gosh", "erl", "escript", "elixir", "iex", "ocaml", "utop", "swift", "dotnet", "mono",
      // A sixth review: SymPy's isympy reads Python on its input, IDLE runs it (-c, -r), py.test
      // runs the conftest.py of the directory it is given, flask imports the app module it is given.
      "isympy", "idle", "py.test", "flask",
      // A seventh review: `hypothesis write MODULE.f` imports the module, from the working directory.
      "hypothesis",
      // And py.test-benchmark, which runs the conftest.py of its working directory as pytest does,
      // and ANTLR's pygrun, which imports the grammar's lexer and parser modules from there.
      "py.test-benchmark", "pytest-benchmark", "pygrun",
      // An eighth review: every JDK tool is a JVM launcher whose -J options reach the JVM, and
      // `-J-XX:OnOutOfMemoryError=CMD` (with -J-Xmx4m) gave a command to /bin/sh through javap and
      // keytool; -J-javaagent: runs a jar's code, javadoc's doclets and jlink's plugins are code,
      // and jcmd, jmap, jinfo and jhsdb attach to the user's other JVMs. java, javac, jar, jdb and
      // jshell were refused already; these are the rest of a JDK's bin directory.
      "jarsigner", "javadoc", "javap", "jcmd", "jconsole", "jdeprscan", "jdeps", "jfr", "jhsdb", "jimage", "jinfo", "jlink", "jmap",
      "jmod", "jnativescan", "jpackage", "jps", "jstack", "jstat", "jstatd", "jwebserver", "keytool", "rmiregistry", "serialver",
      // An eleventh review: Perl's json_pp evaluates its input as Perl with `-f eval` (`system("CMD")` ran CMD).
      "json_pp",
    ],
  },
  {
    kind: "a tool with a language that reaches the system",
    runsCodeText: true,
    why: "its own language runs commands or opens files (awk's system(), GNU sed's e command, sqlite3's .shell, m4's syscmd, TeX's \\write18, …)",
    names: [
      "awk", "gawk", "mawk", "nawk", "sed", "sqlite", "mysql", "mariadb", "psql", "gdb", "lldb", "m4", "dc", "gnuplot", "gs",
      "ghostscript", "tex", "latex", "pdflatex", "xelatex", "lualatex", "luatex", "pdftex", "xetex", "latexmk", "pandoc", "groff",
      "troff", "nroff", "r2", "radare2",
      // A sixth review: terraform console's file() prints any file, and its local-exec and
      // external data sources run commands.
      "terraform",
      // A ninth review: catman formats the man pages of any directory it is given with man and
      // groff (both refused), and a page's `.so FILE` put a file outside the roots into the cat page
      // it wrote in them.
      "catman",
    ],
  },
  {
    kind: "an editor or pager",
    runsCodeText: true,
    why: "it runs commands through its escapes (vi's :!cmd, ex -c '!cmd', less's !cmd, man -P) and reads or writes any file",
    names: [
      "vi", "vim", "view", "rview", "rvim", "vimdiff", "ex", "gvim", "evim", "nvim", "nano", "pico", "emacs", "emacsclient", "ed", "red",
      "mg", "jed", "joe", "micro", "kak", "hx", "helix", "less", "more", "most", "man", "info", "editor", "pager",
      "sensible-editor", "sensible-pager", "sensible-browser", "xdg-open", "open", "see", "run-mailcap",
      // xz's and lzma's pager scripts run less or more (a fifth review).
      "xzless", "xzmore", "lzless", "lzmore",
      // moreutils' vipe and vidir open the user's editor (a ninth review).
      "vipe", "vidir",
      // A tenth review: bash's bashbug opens the editor (editor, vim here) on its report, which reads
      // its keys from the command's input: `:!CMD` there ran CMD.
      "bashbug",
    ],
  },
  {
    kind: "a command-line builder",
    runsNamedPrograms: true,
    runsCodeText: true,
    why: "it runs command lines it builds from its input, the program's name included (`xargs -I% %`, parallel's input lines)",
    names: ["xargs", "parallel"],
  },
  {
    kind: "a job scheduler",
    runsNamedPrograms: true,
    runsCodeText: true,
    why: "it runs the command lines of its input or a file later, as the user, past the script's end (at, batch, crontab)",
    names: ["at", "batch", "crontab"],
  },
  {
    kind: "a command runner",
    runsNamedPrograms: true,
    why: "it runs another program named in its arguments or configuration (env CMD, find -exec, git's aliases and hooks, sort --compress-program, …)",
    names: [
      "env", "find", "fd", "fdfind", "nohup", "timeout", "watch", "nice", "ionice", "stdbuf", "taskset", "chrt",
      "numactl", "prlimit", "setsid", "setarch", "linux32", "linux64", "i386", "x86_64", "flock", "unbuffer", "faketime", "fakeroot",
      "proot", "chroot", "unshare", "nsenter", "firejail", "bwrap", "runcon", "sg", "newgrp", "strace", "ltrace", "valgrind", "perf",
      "time", "entr", "run-parts", "start-stop-daemon", "daemonize", "systemd-run", "systemd-nspawn", "dbus-run-session", "xvfb-run",
      "catchsegv", "ldd", "eval", "exec", "command", "builtin", "source", "fzf", "ip", "sort", "split",
      "sdiff", "diff3", "rg", "mail", "mailx", "mutt", "neomutt", "git", "hg", "svn",
      // Found running other programs by a second review: logsave, choom and uclampset run a
      // command; msgexec and msgfilter run one per message; scalar is git; systemd-run & co.
      "logsave", "choom", "uclampset", "msgexec", "msgfilter", "scalar", "systemd-run", "systemd-socket-activate",
      "systemd-inhibit", "systemd-cat", "pg_virtualenv", "sotruss", "memusage", "heaptrack", "gprofng", "gp-collect-app",
      "scriptlive", "scriptreplay", "vimtutor", "jexec", "pygmentize",
      // A fifth review: LLVM's not runs its arguments as a command (`not-14 sh -c …`); luit,
      // debconf and vgdb run a command they are given.
      "not", "luit", "debconf", "vgdb",
      // A sixth review: direnv exec, rustup run and python-dotenv's run run the command they are
      // given; gio launch runs a desktop file's Exec line (and gio cat prints any file).
      "direnv", "rustup", "dotenv", "gio",
      // Left by the same review: gapplication launch runs a desktop application; PostgreSQL's
      // server (postgres, pg_ctl start and Debian's wrappers, initdb's template) runs the
      // commands its settings name (archive_command, -c on the command line or in a data
      // directory the script writes).
      "gapplication", "postgres", "postmaster", "pg_ctl", "pg_ctlcluster", "pg_createcluster", "initdb",
      // A seventh review: llvm-reduce runs the program its --test names, with the --test-arg
      // words (`--test=/bin/sh --test-arg=-c --test-arg=CMD`); kpt fn eval --exec runs a command
      // line; pyenv exec runs a program of the Python it selects (python3 -c CODE).
      "llvm-reduce", "kpt", "pyenv",
      // An eighth review: Debian's update-ca-certificates runs the hooks of the directory its
      // --hooksdir names, and gives that name to eval (`--hooksdir 'DIR;CMD;#'`, a directory the
      // script made, ran CMD); it also writes the CA store its --etccertsdir names.
      "update-ca-certificates",
      // A ninth review: supervisors and wrappers that run the program their arguments name (`chpst
      // sh -c …`), off the list: runit's and daemontools' (also BusyBox applets, which are judged by
      // their name alone), ucspi's and BusyBox's servers that run a program per connection, s6's and
      // execline's, moreutils' (pee runs its words in a shell), and rlwrap, tini, gosu, ccache,
      // torsocks, eatmydata, qemu's user-mode emulators (qemu-x86_64 /bin/sh), dbus-launch, xinit, …
      "chpst", "runsv", "runsvdir", "svlogd", "setuidgid", "envdir", "envuidgid", "softlimit", "setlock", "pgrphack", "tcpserver",
      "tcpclient", "tcpsvd", "udpsvd", "cttyhack", "inotifyd", "s6", "execlineb", "chronic", "ifne", "lckdo", "mispipe", "pee",
      "zrun", "rlwrap", "tini", "dumb-init", "gosu", "cgexec", "trickle", "torsocks", "proxychains", "tsocks", "ccache", "distcc",
      "sccache", "hyperfine", "watchexec", "eatmydata", "qemu", "dbus-launch", "xinit", "startx", "bpftrace", "uftrace", "reformime",
      // An eleventh review: fstab-decode runs the command its arguments name (`fstab-decode /bin/sh
      // -c CMD`), and glibc's mtrace gives its first argument to a shell (`mtrace '/bin/true;CMD;#' LOG`).
      "fstab-decode", "mtrace",
      // And libgpg-error's gpgrt-config, which reads the variable its --variable names with `eval
      // echo \$VAR_<name>`: `--variable='x;CMD'` ran CMD in a shell.
      "gpgrt-config",
    ],
  },
  {
    kind: "a compiler, build tool, package manager or test runner",
    // Their arguments name programs too (`npm exec -- git push`, `npx -c …`, `make SHELL=…`,
    // `docker run img git push`): rules read them as a runner's (approval/policy.ts). And what
    // they read on their input may be a build file (`make -f -` ran its recipe's command).
    runsNamedPrograms: true,
    runsItsInput: true,
    why: "it runs code from the project, its configuration or a registry (Makefiles, hooks, plugins, install scripts, gcc -wrapper), and the dynamic loader (ld.so) runs any program",
    names: [
      "make", "gmake", "bmake", "cmake", "ninja", "meson", "scons", "ant", "mvn", "gradle", "bazel", "just", "task", "gcc", "cc", "g++",
      "c++", "cpp", "clang", "clang++", "tcc", "gfortran", "ld", "as", "javac", "rustc", "cargo", "go", "npx", "npm", "pnpm", "yarn",
      "corepack", "pip", "pipx", "uv", "uvx", "poetry", "pdm", "conda", "gem", "bundle", "rake", "luarocks", "dpkg", "apt", "yum",
      "dnf", "rpm", "apk", "pacman", "brew", "snap", "flatpak", "nix", "pytest", "tox", "nox", "jest", "vitest", "mocha", "eslint",
      "prettier", "webpack", "vite", "rollup", "babel", "pre-commit", "docker", "podman", "kubectl", "nerdctl", "buildah", "lxc",
      // A second review: ctest/cpack run CMake scripts, prove runs Perl tests, pdb and jdb are
      // debuggers, lli/opt/bugpoint run LLVM code, nvcc a compiler, gcore/gdbtui are gdb.
      "ctest", "cpack", "prove", "pdb", "jdb", "lli", "opt", "bugpoint", "nvcc", "gcore", "gdbtui", "mvndebug",
      // A seventh review: cfn-lint --append-rules DIR imports the Python files there as rules.
      "cfn-lint",
      // An eighth review: LLVM's JIT linkers run the object code they are given (llvm-jitlink
      // OBJ, llvm-rtdyld -execute OBJ; llvm-jitlink-executor runs what it is sent, llvm-exegesis
      // the assembly of a snippet file), and the script makes that object from IR text it writes:
      // llvm-extract assembles the text into bitcode, llvm-lto compiles bitcode into an object.
      "jitlink", "rtdyld", "exegesis", "lto", "llvm-extract",
      // The same review: the environment makers write a tree of programs into any directory and
      // fetch what they install. `nodeenv --node=system DIR` wrote DIR/bin/shim, a wrapper that
      // runs node with its arguments, which --strict ran by its name from a PATH directory
      // outside the roots (shim -e CODE); `virtualenv --clear DIR` emptied a directory there.
      "virtualenv", "nodeenv",
      // An eleventh review: pyvenv, the venv maker of Python 3.3 to 3.7 (a pyenv shim runs it where a
      // .python-version the script writes selects such a Python), whose --clear emptied a directory
      // outside the roots; and numpy's f2py, which evaluates the .f2py_f2cmap of its working
      // directory as Python (it ran a command from one the script wrote) and runs compilers.
      "pyvenv", "f2py",
      // A ninth review: ICU's pkgdata runs the command lines of the options file its -O names
      // (`pkgdata -O FLAGS -m files -I DIR LIST` ran its INSTALL_CMD through sh), a file the script writes.
      "pkgdata",
      // A tenth review: Debian's pg_buildext runs make over the Makefile of its working directory
      // (`pg_buildext clean` ran the clean recipe of a Makefile the script wrote, with make refused).
      "pg_buildext",
    ],
  },
  {
    kind: "a file tool",
    why: "it reads or writes any file the user can, past --allowed-roots and --classified-paths",
    names: [
      "cat", "tac", "head", "tail", "cp", "mv", "rm", "rmdir", "dd", "tee", "ln", "chmod", "chown", "chgrp", "locate", "touch",
      "truncate", "shred", "install", "mkfifo", "mknod", "base64", "base32", "xxd", "od", "hexdump", "strings", "tar", "zip", "unzip",
      "gzip", "gunzip", "zcat", "bzip2", "xz", "7z", "rsync", "cpio", "patch", "bat", "batcat",
      // A third review: each prints any file it is given (`diff ~/.ssh/id_rsa /dev/null`).
      "diff", "cmp", "sdiff", "diff3", "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "nl", "rev", "uniq", "cut", "paste",
      "fold", "fmt", "pr", "expand", "unexpand", "comm", "join", "shuf", "iconv", "look", "csplit", "zless", "zmore",
      // A fourth review: more that print any file (`basenc --base64 ~/.ssh/id_rsa`, `ptx`,
      // `column`, `ul`, `jq -R .`), and decompressors that pass a file that is not compressed
      // through unchanged (`bzcat -f`, `zstdcat -f`), with their grep, diff and pager wrappers.
      "basenc", "ptx", "tsort", "column", "ul", "pv", "jq", "gojq", "jaq", "yq", "xq", "tomlq", "mlr", "miller", "xsv", "qsv",
      "bzcat", "bunzip", "bzip2recover", "bzgrep", "bzegrep", "bzfgrep", "bzdiff", "bzcmp", "bzless", "bzmore", "zstd", "zstdcat",
      "unzstd", "zstdmt", "pzstd", "zstdgrep", "zstdless", "lz4", "lz4cat", "unlz4", "lzop", "lzip", "plzip", "lunzip", "brotli",
      "pigz", "unpigz", "zdiff", "zcmp", "zegrep", "zfgrep", "zipgrep", "combine",
      // A fifth review: roff preprocessors pass any file through (soelim, preconv, tbl, eqn,
      // pic, …), terminfo compilers and gettext's catalog tools quote each line or word they
      // cannot parse (tic: terminal '<line>'; msgcat: keyword "<word>" unknown); unlink deletes
      // any file and link gives any file a second name inside the roots.
      "soelim", "zsoelim", "preconv", "tbl", "gtbl", "eqn", "geqn", "neqn", "gneqn", "pic", "gpic", "grn", "refer", "grefer",
      "grap", "chem", "ideal", "lookbib", "tic", "captoinfo", "infotocap", "msgcat", "msgattrib", "msgconv", "msgen", "msggrep",
      "msguniq", "msgfmt", "msgmerge", "msgcomm", "msgcmp", "msgunfmt", "msginit", "xgettext", "unlink", "link",
      // The same review: xz's and lzma's grep and diff scripts (xz -cdf passes a plain file
      // through), rgrep, ICU's and Perl's iconv, tarcat, splain, rpcgen, GnuPG's gpgparsemail
      // and dumpsexp, and LLVM's assembler (llvm-mc), TableGen and yaml2obj, which quote the
      // line they cannot parse.
      "xzgrep", "xzegrep", "xzfgrep", "xzdiff", "xzcmp", "lzgrep", "lzegrep", "lzfgrep", "lzdiff", "lzcmp", "rgrep", "uconv",
      "piconv", "tarcat", "splain", "rpcgen", "gpgparsemail", "dumpsexp", "mc", "tblgen", "yaml2obj",
      // And tools that copy any file into one a script can read or print (`ar q x.a FILE` then
      // `ar p x.a`; objcopy -I binary, ptar, jar, gpgtar), pass it through (uncompress -cf, as
      // gzip -dcf) or rewrite it in place (enc2xs empties the file it is given; gzexe, znew, zforce).
      "ar", "objcopy", "ptar", "ptardiff", "ptargrep", "jar", "gpgtar", "uncompress", "enc2xs", "gzexe", "znew", "zforce",
      // An eighth review: bzexe, gzexe's bzip2 twin, rewrote a program outside the roots in place.
      "bzexe",
      // A sixth review: universal-ctags prints every line of any file (`ctags -x --regex-…`; etags is the same program).
      "ctags",
      // And objdump (`-b binary -s` dumps any file), LLVM's FileCheck (`--dump-input=always`) and docutils
      // (docutils, rst2html.py and the other rst2* front ends print the file they convert).
      "objdump", "filecheck", "docutils", "rst",
      // And tools that change any file: fallocate (-p zeroes a range of it), savelog (renames it
      // and compresses its rotations), mkswap (overwrites it with a swap header).
      "fallocate", "savelog", "mkswap",
      // The same review: mke2fs and mkfs.* write a file system over any file they are given,
      // badblocks -w overwrites it with test patterns, and hardlink replaces files in the
      // directories it is given with hard links to one another.
      "mke2fs", "mkfs", "badblocks", "hardlink",
      // An eighth review: mke2fs's siblings. debugfs -f FILE echoes each line of any file as a
      // command it does not know; e2label, tune2fs and wipefs -a rewrote a file system image
      // outside the allowed roots in place, as e2fsck, resize2fs, e2undo, e2image and e4defrag do.
      "debugfs", "e2label", "tune2fs", "wipefs", "e2fsck", "fsck", "resize2fs", "e2undo", "e2image", "e4defrag",
      // And ldconfig: -f FILE reads any file as its configuration and quotes each line it cannot
      // use ("Can't stat <line>"), and -C FILE writes its cache to any file.
      "ldconfig",
      // A seventh review: bin2c prints any file as a C array of hex bytes (tacit's --config, LLM
      // key and all: the key is masked as text and in base64, not in hex), colcrt passes it
      // through, escapesrc copies it to any name, and the JSON tools print it (jp.py -f FILE @,
      // jsonpatch FILE PATCH, jsonpath_ng '$' FILE, jsondiff, jsonpointer).
      "bin2c", "colcrt", "escapesrc", "jp", "jsonpatch", "jsonpath", "jsondiff", "jsonpointer",
      // The same review: systemd-tmpfiles writes, appends to and removes the files its
      // configuration names (f+, w+, r lines), and update-alternatives (alternatives elsewhere)
      // makes a link anywhere (--install LINK NAME TARGET), as ln does.
      "tmpfiles", "alternatives",
      // And more that print any file: utmpdump and last -f read it as login records and print
      // their text fields (hundreds of its bytes a record), cscope -L -6 PATTERN prints each line
      // of the files it is given, and LLVM's llc and llvm-mca and CUDA's cudafe++ quote the line
      // they cannot parse (as llvm-mc, refused already).
      "utmpdump", "last", "lastb", "cscope", "llc", "llvm-mca", "cudafe++",
      // And Perl's POD formatters, which write their output to any file they are given:
      // `pod2text x.pod ~/.bashrc` replaced the shell's startup file with lines of the script's
      // choosing (a verbatim paragraph comes out as it is), which the next shell runs; pod2man,
      // pod2html --outfile and pod2usage do the same. "pod" is the family of every pod2… name.
      "pod", "podselect",
      // And 2to3, whose -W -o DIR writes the Python files it is given into any directory, content
      // and all (a sitecustomize.py in site-packages runs in every later Python).
      "2to3",
      // And systemd-analyze, whose cat-config prints any file below /etc, /run or /usr/lib
      // (`systemd-analyze cat-config /etc/shadow`, the host's SSH keys).
      "systemd-analyze",
      // And Debian's ucf, which installs the file it is given at any path where none is yet
      // (`ucf NEW /etc/cron.d/job`: the script's content, run by cron as root), and ucfr.
      "ucf", "ucfr",
      // And binutils' in-place rewriters, objcopy's siblings: `strip -o DIR/name PROGRAM` copies
      // any program (a shell) under any name into any directory, one on PATH included, where the
      // name passes --strict and runs it; strip, ranlib and elfedit rewrite the file they are
      // given in place (a program, a library or an archive outside the allowed roots).
      "strip", "ranlib", "elfedit",
      // And Python-RSA's command-line tools (pyrsa-encrypt, pyrsa-decrypt, pyrsa-sign, …), whose
      // -i and -o read and write any file: `pyrsa-encrypt -i FILE` with a key the script made
      // (pyrsa-keygen) and then pyrsa-decrypt printed a file outside the roots, and `pyrsa-decrypt
      // -o FILE` wrote a text of the script's over one there.
      "pyrsa",
      // And more that print any file they are given: LLVM's yaml-bench --canonical prints it
      // whole as a YAML string, llvm-ifs and ICU's makeconv quote the line they cannot parse, and
      // Perl's xsubpp passes its lines through into the C it writes.
      "yaml-bench", "ifs", "makeconv", "xsubpp",
      // And Debian's installkernel, which copies the image and map files it is given into any
      // directory (`installkernel x FILE FILE .` put a file outside the roots in the root as vmlinuz-x).
      "installkernel",
      // And moreutils' sponge, which writes its input to any file it is given (a ninth review), and
      // getent, which printed /etc/shadow's password hashes (`getent shadow`, tacit run as root).
      "sponge", "getent",
      // And LLVM's tools that write their output to any path: `llvm-profdata merge --text -o FILE
      // IN` replaced a .bashrc outside the roots with a profile whose function name was a command
      // line of the script's (bash runs it; the other lines are comments, `:ir` and errors), and
      // `llvm-stress -o FILE` overwrote a file there with generated IR.
      "profdata", "llvm-stress",
      // A ninth review: more that print any file (`xauth source FILE` quotes each line's first
      // word, a shadow line or a key's base64 line whole; perlbug and perlthanks -f FILE display
      // it as the report; rstpep2html.py, a docutils front end the "rst" family missed, through
      // `.. include::`), and more that write any file: pygettext's -o catalog holds `msgid
      // "$(CMD)"`, which a shell sourcing it as a startup file runs, lesskey's -o (~/.less by
      // default) a LESSOPEN command the user's next less runs, h2ph's -d the Perl (.ph) of a
      // header the script wrote into any directory, and streamzip -zipfile, libnetcfg -o and
      // tempfile -n a file at any path.
      "xauth", "perlbug", "perlthanks", "rstpep2html", "pygettext", "lesskey", "h2ph", "streamzip", "libnetcfg", "tempfile",
      // The same review: pwck and grpck ask to delete each line of any file they are given,
      // quoting it (and delete it, answered yes); LLVM's IR readers verify-uselistorder and
      // llvm-sim, ICU's genrb and gennorm2, LLVM's YAML readers llvm-pdbutil and llvm-xray, and
      // appstreamcli's XML reader quote the line they cannot parse; ICU's genccode copies any
      // file into the roots as a C array of its bytes, as bin2c does.
      "pwck", "grpck", "verify-uselistorder", "llvm-sim", "genrb", "gennorm", "pdbutil", "xray", "appstreamcli", "genccode",
      // A tenth review: GnuPG's gpgcompose --copy FILE prints any file (and makes ~/.gnupg); ICU's gencmn
      // packs the files its list names, from the directory -s names (`-s /`), into a .dat in the roots,
      // content and all, as genccode does; Valgrind's callgrind_annotate quotes each line of any file
      // it is given as a malformed header, and cg_annotate prints every line of the source files a
      // profile the script wrote names.
      "gpgcompose", "gencmn", "callgrind", "cg_annotate",
      // And glibc's gencat, which copies each line of any file that reads as a message (a word, a
      // space, the rest: `aws_secret_access_key = …`, a .netrc's line) into the catalog it writes
      // at any path, the roots included; and iconvconfig, whose -o writes its cache to any file
      // (and, run as root without it, rewrites the system's gconv cache), as ldconfig -C does.
      "gencat", "iconvconfig",
      // An eleventh review: xdg-user-dirs-update writes the path --set gives it into
      // ~/.config/user-dirs.dirs, which xdg-user-dir and session scripts source with a shell,
      // escaping neither a quote nor a line break (`/x"` NEWLINE CMD ran CMD at the user's next
      // xdg-user-dir), and --dummy-output writes the same to any file (a .bashrc).
      "xdg-user-dirs-update",
      // And gprofng's gp-display-text, whose -script FILE quotes the first word of each line of any
      // file as an invalid command (every base64 line of a private key whole).
      "gp-display-text",
    ],
  },
  {
    kind: "a network tool",
    why: "it reaches hosts past --network-permissions",
    names: [
      "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp", "lftp", "tftp", "ping", "dig",
      "nslookup", "host", "openssl", "aria2c", "http", "httpie", "xh", "lynx", "links", "w3m", "elinks", "nmap", "whois", "traceroute",
      // A sixth review: the cloud CLIs reach any endpoint they are given (`aws --endpoint-url URL
      // --no-sign-request s3 ls`), and upload any file (`aws s3 cp`, `gsutil cp`).
      "aws", "gcloud", "gsutil", "bq",
      // A seventh review: PostgreSQL's clients connect to any host and port they are given and
      // send it the user and database names a script chose (`pg_isready -d "host=… user=…"`),
      // psql's siblings; on Debian each is a link to pg_wrapper, judged by that name too.
      "pg_wrapper", "pg_isready", "pg_dump", "pg_dumpall", "pg_restore", "pg_basebackup", "pg_receivewal", "pg_receivexlog",
      "pg_recvlogical", "pgbench", "createdb", "dropdb", "createuser", "dropuser", "createlang", "droplang", "clusterdb",
      "reindexdb", "vacuumdb", "vacuumlo",
      // And the JSON Schema and OpenAPI validators, which fetch every remote $ref of the file they
      // check (`{"$ref": "http://host/?data=…"}`, written by the script in its root).
      "jsonschema", "check-jsonschema", "openapi-spec-validator",
      // An eighth review: GnuPG's network daemon fetches any URL it is asked to (`dirmngr
      // --server`, KS_FETCH URL on its input; dirmngr-client), and gpgsm asks it the same
      // (`gpgsm --call-dirmngr KS_FETCH URL`), besides acting with the user's X.509 keys.
      "dirmngr", "gpgsm",
      // An eleventh review: util-linux logger sends each line of the file its -f names to any host
      // (-n HOST -P PORT, over UDP or --tcp), and with -s prints each on stderr too: `logger
      // --socket-errors=off -s -f FILE` printed a file outside the roots to the script.
      "logger",
    ],
  },
  {
    kind: "a tool that changes the settings of the system or of any file",
    why:
      "it changes kernel settings, the network's configuration, devices, file systems and the clock, the host's name, or the capabilities, " +
      "attributes and access lists of any file, past --allowed-roots (setcap, chattr, setfacl: chmod's kin)",
    names: [
      // An eighth review, under --strict: `setcap cap_setuid+ep FILE` gave a program outside the
      // allowed roots the power to become root (tacit ran as root), and `chattr +A FILE` changed
      // a file's attributes there (+i makes one immutable, -i undoes it); sysctl -w sets kernel
      // parameters and `hostname NAME` (or -F FILE, any file's first line) renames the host, shown
      // only with sysctl --dry-run and hostname --help. setfacl, chacl and setfattr (not installed
      // there) change any file's access list or attributes as chmod, refused already, does.
      "setcap", "chattr", "setfacl", "chacl", "setfattr", "sysctl", "hostname",
      // A ninth review, under --strict as root: `ifconfig lo up` and `route add` changed the
      // network's configuration (tried in a network namespace of the test's own). So do the rest of
      // net-tools and iproute2's tools (ip is refused already, as a runner); and the tools that change
      // devices, swap, loop devices, partitions and file systems (fsfreeze stops every write to one),
      // the clock (hwclock, rtcwake, which suspends the machine), restart the machine (ctrlaltdel),
      // print the kernel's log with its command line (dmesg, which -C clears), and ask systemd's
      // managers to change the host (hostnamectl, timedatectl, loginctl, …, and Debian's
      // deb-systemd-invoke, which runs systemctl, refused already) or its locale. "bridge" also
      // refuses systemd-stdio-bridge, which speaks to the system's bus as busctl does. Not
      // killall5: pidof is the same program, and in the command's PID namespace it reaches no other.
      "ifconfig", "route", "arp", "rarp", "arpd", "tc", "bridge", "devlink", "rdma", "tipc", "vdpa", "dcb", "nameif", "slattach",
      "plipconfig", "mii-tool", "ipmaddr", "iptunnel", "rtmon", "hwclock", "rtcwake", "swapon", "swapoff", "losetup", "blkdiscard",
      "blockdev", "fsfreeze", "fstrim", "chcpu", "chmem", "addpart", "delpart", "resizepart", "partx", "blkzone", "zramctl", "pivot_root",
      "switch_root", "ctrlaltdel", "dmsetup", "dmstats", "blkdeactivate", "ldattach", "dmesg", "hostnamectl", "timedatectl",
      "localectl", "networkctl", "loginctl", "systemd-sysext", "systemd-repart", "systemd-cryptenroll", "systemd-machine-id-setup",
      "deb-systemd-invoke", "deb-systemd-helper", "update-locale", "locale-gen",
    ],
  },
  {
    kind: "a privilege or credential tool",
    runsNamedPrograms: true,
    why: "it runs commands as someone else, or acts with the user's keys and services",
    names: [
      "sudo", "su", "doas", "pkexec", "runuser", "setpriv", "capsh", "sudoedit", "gpg", "systemctl", "busctl", "gdbus", "dbus-send", "mount", "umount",
      // service and the rc tools run init scripts; the account tools change who can log in and
      // with which password (chpasswd and newusers read it on the input), which under a tacit
      // run as root is the system's (the sixth review found them passing --strict).
      "service", "invoke-rc.d", "update-rc.d", "useradd", "usermod", "userdel", "adduser", "deluser", "addgroup", "delgroup",
      "groupadd", "groupmod", "groupdel", "gpasswd", "chpasswd", "chgpasswd", "newusers", "passwd", "chsh", "chfn", "chage",
      "vipw", "vigr", "visudo",
      // A seventh review: cppw and cpgr copy any file over /etc/passwd, /etc/shadow, /etc/group or
      // /etc/gshadow (vipw's and vigr's siblings), and systemd-sysusers creates the users and
      // groups its configuration names.
      "cppw", "cpgr", "sysusers",
      // A ninth review: the shadow tools that rewrite the password and group files (pwconv -R DIR
      // wrote shadow files into a system tree outside the roots; pwunconv and grpunconv put the
      // hashes back where everyone reads them) and change group members (groupmems), the tools
      // that change which shells and PAM setup a login gets (add-shell added a line to the host's
      // /etc/shells), and PAM's helpers that make a home or change a password.
      "pwconv", "pwunconv", "grpconv", "grpunconv", "groupmems", "shadowconfig", "add-shell", "remove-shell", "update-shells",
      "pam-auth-update", "mkhomedir_helper", "unix_update",
      // And systemd-firstboot, whose --root-password (with --force) sets root's password.
      "systemd-firstboot",
      // A ninth review: keyctl printed a key of the session keyring tacit was started with (a
      // Kerberos ticket, an encrypted home's passphrase); request-key and e4crypt act on the
      // user's keyrings too, and systemd-creds decrypts credentials with the host's key.
      "keyctl", "request-key", "e4crypt", "systemd-creds",
    ],
  },
];

/** Multi-call binaries act as the name they are run by: judging the file they are would refuse `ls` on BusyBox systems. */
export const MULTI_CALL_PROGRAMS: ReadonlySet<string> = new Set(["busybox", "toybox", "coreutils"]);

const GROUP_OF: ReadonlyMap<string, DeniedGroup> = new Map(
  STRICT_DENIED_GROUPS.flatMap((group) => group.names.map((name) => [name, group] as const)),
);

const SHELL_LIKE: DeniedGroup = STRICT_DENIED_GROUPS[0]!;
/** Anything named like a shell (`rbash`, `yash`, `elvish`, a shell yet to be written): a short word ending in "sh". */
const SHELL_SHAPED = /^[a-z]{0,5}sh$/;

/** Why --strict refuses a program name: the group, and the family that matched. */
export interface StrictMatch {
  group: DeniedGroup;
  family: string;
}

/** The longest family name: runs of a name's parts longer than this cannot name one. */
const LONGEST_FAMILY = Math.max(...[...GROUP_OF.keys()].map((family) => family.length));
/** The longest name a file can have (NAME_MAX): a longer word names no program on PATH. */
const LONGEST_PROGRAM_NAME = 255;
/**
 * Families known by their whole name only, not as a run of a longer one: setarch's alias x86_64
 * begins the name of every x86-64 cross tool (`x86_64-linux-gnu-readelf`), which it does not run.
 */
const WHOLE_NAME_ONLY: ReadonlySet<string> = new Set(["x86_64"]);

/**
 * The words a name is known by: the whole name, its parts between "-", "_" and ".", and each
 * part without a version tail (`python3.11` → python; `tclsh8.6` → tclsh; `python3m` → python;
 * `x86_64-linux-gnu-gcc-12` → gcc; `nc.openbsd` → nc); and each run of whole parts as the name
 * spells it, so that a family of several parts is known with a prefix or a tail too
 * (`x86_64-linux-gnu-gp-collect-app` → gp-collect-app; `llvm-mca-14` → llvm-mca). Runs are only
 * sought up to a family's length, and only in a name a file could have, so a long argument read
 * for a program's name costs no more than its length.
 */
function wordsOf(name: string): string[] {
  const words = new Set<string>([name]);
  for (const part of name.split(/[-_.]/)) {
    words.add(part);
    words.add(withoutVersionTail(part));
  }
  if (name.length <= LONGEST_PROGRAM_NAME) {
    const separators = [...name.matchAll(/[-_.]/g)].map((found) => found.index);
    const starts = [0, ...separators.map((at) => at + 1)];
    const ends = [...separators, name.length];
    for (const start of starts) {
      for (const end of ends) {
        if (end - start > LONGEST_FAMILY) break;
        const run = name.slice(start, end);
        if (end > start && !WHOLE_NAME_ONLY.has(run)) words.add(run);
      }
    }
  }
  words.delete("");
  return [...words];
}

const VERSION_TAIL_CHARACTER = /[0-9a-z]/;

/**
 * `part` without its version tail: the shortest end of it that starts with a digit and holds
 * only digits and lower-case letters (what `part.replace(/[0-9][0-9a-z]*$/, "")` removes), found
 * in one pass from the end. That expression tried each digit of a run as a start, each time to
 * the run's end: rules on a command are tried through every word of a command line that runs
 * others (see approval/policy.ts), and a security review held the host's main thread, every
 * session of a tacit serve with it, with one argument of digits ending in "!".
 */
function withoutVersionTail(part: string): string {
  let start = part.length;
  while (start > 0 && VERSION_TAIL_CHARACTER.test(part[start - 1]!)) start--;
  for (let at = start; at < part.length; at++) if (part[at]! >= "0" && part[at]! <= "9") return part.slice(0, at);
  return part;
}

/** The denied family a lower-case name belongs to by its words alone (not by its shape), or null. */
function familyMatch(lower: string): StrictMatch | null {
  for (const word of wordsOf(lower)) {
    const group = GROUP_OF.get(word);
    if (group) return { group, family: word };
  }
  return null;
}

/**
 * tacit itself, by its whole name only (its bin, and bin/tacit.js, the node script that bin links to,
 * which the check of the real program did not see as node): a nested `tacit run --yes -` takes the
 * flags and the TypeScript a script hands it (--allowed-roots /, any --command-permissions), outside
 * this run's policy. A security review deleted, under --strict, a file an always-ask rule guarded,
 * with no one asked; `tacit approvals grant` would have pre-approved anything. Not a family: the
 * names of other programs may hold the word.
 */
const TACIT_ITSELF: DeniedGroup = {
  kind: "tacit itself",
  runsCodeText: true,
  why: "a nested tacit runs the code its arguments or input give it, with the flags they give it (--yes, --allowed-roots, --command-permissions), outside this run's policy",
  names: ["tacit", "tacit.js"],
};

/** The denied family a program name belongs to (any letter case), or null. */
export function strictMatch(name: string): StrictMatch | null {
  const lower = name.toLowerCase();
  if (TACIT_ITSELF.names.includes(lower)) return { group: TACIT_ITSELF, family: "tacit" };
  const byFamily = familyMatch(lower);
  if (byFamily) return byFamily;
  for (const word of wordsOf(lower)) {
    if (SHELL_SHAPED.test(word)) return { group: SHELL_LIKE, family: word };
  }
  return null;
}

/**
 * Whether a program name is a shell, a command runner or a privilege tool: one that runs
 * another program named in its arguments (`env VAR=x git`, `nice git`, `sudo git`, `sh -c "git …"`).
 */
export function runsOtherPrograms(name: string): boolean {
  const match = strictMatch(name);
  return match !== null && (match.group.runsNamedPrograms === true || RUN_BY_OPTION.has(match.family));
}

/**
 * File and network tools that run a program an option names (`tar --to-command=CMD`, `tar -I
 * PROG`, `rsync -e CMD`, `scp -S PROG`, `ssh -o ProxyCommand=CMD`, `cpio --rsh-command`, `zip
 * -TT CMD`): their words are read for a program too.
 */
const RUN_BY_OPTION: ReadonlySet<string> = new Set(["tar", "rsync", "scp", "sftp", "ssh", "cpio", "zip"]);

/**
 * Runners that give their whole command line to a shell (`watch CMD`, `sg GROUP CMD`, `su -c`,
 * `runuser -c`, `firejail CMD`, `entr -s`, fzf's --preview and execute(), mtrace's first word, gpgrt-config's --variable): their words are code
 * text like a shell's (`watch "g''it push"`).
 */
const RUNS_SHELL_TEXT: ReadonlySet<string> = new Set(["watch", "sg", "su", "runuser", "firejail", "entr", "fzf", "scriptlive", "mtrace", "gpgrt-config"]);

/**
 * Options whose value a runner gives to a shell (split --filter, flock -c, tar --to-command and
 * -I, zip -TT, ssh -o ProxyCommand=…) or reads as a command line with its own quoting (rsync
 * -e), or that name a file of such commands (ssh -F, tar -F): the value is code text, which can
 * name a program any way it likes (`--filter="g''it push"`, `-c "true;git push"`, `. ./file`);
 * or that run a program they name, which may be any (install --strip-program, wget --use-askpass).
 * Long options also by a beginning of them (GNU getopt takes `--filt`); short ones also bundled
 * or with the value joined (`-xIgit`); tar's first word is its options without a dash.
 */
const SHELL_TEXT_OPTIONS: ReadonlyMap<string, { long: readonly string[]; short: string; exact?: readonly string[]; firstWordBundle?: true; addresses?: RegExp }> = new Map([
  ["split", { long: ["--filter"], short: "" }],
  ["flock", { long: ["--command"], short: "c" }],
  ["tar", {
    long: ["--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--checkpoint-action", "--rsh-command", "--rmt-command"],
    short: "IF",
    firstWordBundle: true,
  }],
  ["zip", { long: ["--unzip-command"], short: "", exact: ["-TT"] }],
  ["cpio", { long: ["--rsh-command"], short: "" }],
  ["rsync", { long: ["--rsh", "--rsync-path"], short: "e" }],
  ["ssh", { long: [], short: "oF" }],
  ["scp", { long: [], short: "oFS" }],
  ["sftp", { long: [], short: "oFSD" }],
  // Network tools that run a program for a connection: socat's EXEC:/SYSTEM: addresses, ncat's
  // and netcat's -e/-c/--sh-exec.
  ["socat", { long: [], short: "", addresses: /(?:^|[!,])\s*(?:exec|system)\s*:/i }],
  ["ncat", { long: ["--exec", "--sh-exec", "--lua-exec"], short: "ec" }],
  ["nc", { long: [], short: "ec" }],
  ["netcat", { long: [], short: "ec" }],
  // npm exec's and npx's -c/--call run their text in a shell; install's --strip-program and
  // wget's --use-askpass run the program they name (a review ran touch past a rule on it through
  // each, with npm, npx, install and wget permitted).
  ["npm", { long: ["--call"], short: "c" }],
  ["npx", { long: ["--call"], short: "c" }],
  ["install", { long: ["--strip-program"], short: "" }],
  ["wget", { long: ["--use-askpass"], short: "" }],
]);

/**
 * git's options whose value git gives to a shell (`git fetch --upload-pack='git pu?h …' .` runs
 * it through sh for a local repository, the glob and all), long options also by a beginning.
 */
const GIT_SHELL_OPTIONS = [
  "--upload-pack", "--receive-pack", "--exec", "--extcmd", "--tree-filter", "--index-filter", "--msg-filter", "--env-filter",
  "--commit-filter", "--parent-filter", "--tag-name-filter", "--subdirectory-filter", "--open-files-in-pager", "--to-cmd",
  "--cc-cmd", "--header-cmd", "--sendmail-cmd", "--smtp-server",
];
/** git's subcommands that run a command they are given (through a shell), and the short option that gives it, if any. */
const GIT_SHELL_SUBCOMMANDS: ReadonlyMap<string, string | null> = new Map([
  ["rebase", "x"], ["difftool", "x"], ["clone", "u"], ["grep", "O"], ["ls-remote", "u"], ["foreach", null], ["bisect", null],
]);

/** Whether git run with `args` gives text of the script's to a shell (see GIT_SHELL_OPTIONS). */
function gitRunsShellText(args: readonly string[]): boolean {
  const subcommands = args.filter((arg) => GIT_SHELL_SUBCOMMANDS.has(arg));
  // submodule foreach and bisect run take the command as their words.
  if (subcommands.includes("foreach") || (subcommands.includes("bisect") && args.includes("run"))) return true;
  const shorts = subcommands.map((sub) => GIT_SHELL_SUBCOMMANDS.get(sub)).filter((letter): letter is string => typeof letter === "string").join("");
  for (const arg of args) {
    if (arg.startsWith("--")) {
      if (isLongOption(arg, GIT_SHELL_OPTIONS)) return true;
    } else if (shorts !== "" && arg.startsWith("-") && [...arg.slice(1)].some((letter) => shorts.includes(letter))) {
      return true;
    }
  }
  return false;
}

/** Whether `arg` (`--name` or `--name=value`) is one of `long`, or a beginning of one (GNU getopt takes `--filt`). */
function isLongOption(arg: string, long: readonly string[]): boolean {
  const name = arg.split("=", 1)[0]!;
  return name.length > 2 && long.some((option) => option.startsWith(name));
}

/** The family by which `name` may give text to a shell (see handsShellText), or null. */
export function shellTextFamily(name: string): string | null {
  const match = strictMatch(name);
  return match !== null && (RUNS_SHELL_TEXT.has(match.family) || SHELL_TEXT_OPTIONS.has(match.family) || ["git", "strace", "ltrace"].includes(match.family))
    ? match.family
    : null;
}

/**
 * Whether `program` run with `args` gives text to a shell: a runner that always does, or one of
 * its options that does (see SHELL_TEXT_OPTIONS). Only ever adds questions.
 */
export function handsShellText(program: string, args: readonly string[]): boolean {
  const match = strictMatch(program);
  if (match === null) return false;
  if (RUNS_SHELL_TEXT.has(match.family)) return true;
  if (match.family === "git") return gitRunsShellText(args);
  // strace's and ltrace's -o '|cmd' (or '!cmd') pipe the trace to a shell command.
  if (match.family === "strace" || match.family === "ltrace") return args.some((arg) => /^(?:-o|--output=?)?\s*[|!]/.test(arg));
  const options = SHELL_TEXT_OPTIONS.get(match.family);
  if (options === undefined) return false;
  for (const [at, arg] of args.entries()) {
    if (options.exact?.some((option) => arg.startsWith(option))) return true;
    if (options.addresses?.test(arg)) return true;
    if (arg.startsWith("--")) {
      if (isLongOption(arg, options.long)) return true;
    } else if ((arg.startsWith("-") || (at === 0 && options.firstWordBundle)) && [...arg.replace(/^-/, "")].some((letter) => options.short.includes(letter))) {
      return true;
    }
  }
  return false;
}

/**
 * Whether a program name is a shell, an interpreter, a tool with a language that runs commands
 * or an editor: its arguments are code or a command line (`sh -c "'git' push"`,
 * `awk 'BEGIN{system("git push")}'`), so no reading of its words can tell which programs it runs.
 */
/** Whether a program name is one whose standard input may be a build file that runs commands (`make -f -`). */
export function runsItsInput(name: string): boolean {
  return strictMatch(name)?.group.runsItsInput === true;
}

export function runsCodeText(name: string, options: { byShape?: boolean } = {}): boolean {
  const match = options.byShape === false ? familyMatch(name.toLowerCase()) : strictMatch(name);
  return match?.group.runsCodeText === true || (match !== null && RUNS_SHELL_TEXT.has(match.family));
}

/**
 * Options under which a program --strict lets run reads a file it is given and echoes its
 * lines in its messages: `date -f FILE` says "invalid date '<line>'" for each line, and
 * `wc --files0-from=FILE` names the whole file as one missing file. Found by a fourth review.
 */
export const STRICT_DENIED_OPTIONS: ReadonlyArray<{ programs: readonly string[]; long: readonly string[]; short: string }> = [
  { programs: ["wc", "du"], long: ["--files0-from"], short: "" },
  { programs: ["date"], long: ["--file"], short: "f" },
  { programs: ["file"], long: ["--files-from", "--magic-file"], short: "fm" },
  // An eleventh review: iproute2's ss reads its filter from the file -F names and quotes the first
  // word it cannot parse (`an inet prefix is expected rather than "<word>"`): a token file whole.
  { programs: ["ss"], long: ["--filter"], short: "F" },
  // And man-db's manpath, whatis, apropos and mandb, whose -C reads any file as their configuration
  // and quotes its first line whole (`can't parse directory list \`<line>'`); man is refused already.
  { programs: ["manpath", "whatis", "apropos", "mandb"], long: ["--config-file"], short: "C" },
];

/**
 * The option of `args` that makes `program` print a file's lines under --strict, or null.
 * GNU programs take a long option by any unambiguous beginning (`--files0`) and short ones
 * bundled (`-bf`); both are refused, as is anything after `--`, which cannot be an option.
 */
export function strictDeniedOption(program: string, args: readonly string[]): string | null {
  const rule = STRICT_DENIED_OPTIONS.find(({ programs }) => programs.includes(program.toLowerCase()));
  if (rule === undefined) return null;
  for (const arg of args) {
    if (arg === "--") return null;
    if (arg.startsWith("--")) {
      const name = arg.split("=", 1)[0]!;
      if (name.length > 2 && rule.long.some((option) => option.startsWith(name))) return arg;
    } else if (arg.startsWith("-") && [...arg.slice(1)].some((letter) => rule.short.includes(letter))) return arg;
  }
  return null;
}

/**
 * The argument of `args` that begins with "@" (but for a lone "@"), or null. Programs built on
 * libiberty's command line (binutils, GCC's tools) or LLVM's read `@FILE` as a file of more
 * arguments, anywhere on the line ("--" included), and echo its words: `c++filt @FILE` printed
 * every word of a file outside the allowed roots, `nm @FILE` quoted each in an error. Found by a
 * ninth review in some thirty programs --strict lets run; judged for every program, whatever its
 * name, since any program on those libraries does it.
 */
export function strictResponseFileArgument(args: readonly string[]): string | null {
  return args.find((arg) => arg.startsWith("@") && arg !== "@") ?? null;
}
