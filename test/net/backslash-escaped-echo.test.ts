// Echoes that put a backslash before a character that stands for itself, through the real CLI:
// Ruby's inspect writes "#{", "#$" and "#@" as "\#{", "\#$", "\#@" (a Rails error page and
// `request.headers.inspect` show headers so), PHP's var_export and Perl's Data::Dumper write "'"
// as "\'", Python's repr too when the string holds both quotes, a shell's `printf %q` writes "\ ",
// "\'", "\$", and Lucene's query escaping "\+", "\!", "\(". None of these was a form redaction
// looked for: a security review's echo gave "Xk9\#$vQ2\#{mZ7…}" back for the secret header
// "Xk9#$vQ2#{mZ7…}", whole, and "correct\'horse\'battery\'staple" for a passphrase whose words are
// each too short to be masked on their own. JavaScript and Ruby read any such escape as the
// character after the backslash, and so does redaction now, in its pass over JSON's escapes,
// which it makes twice: such an echo kept in a JSON log line has each of its escapes escaped again.

import path from "node:path";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, type Handler, isEnvFile, lit, makeCanary, permit, perTestResources, tacit, writeTree } from "./fixtures.js";

const resources = perTestResources("tacit-net-backslash-echo-");

/** Ruby's String#inspect of a printable ASCII string: in double quotes, with \, " and the # that begins an interpolation escaped. */
const rubyInspect = (value: string): string => `"${value.replace(/[\\"]/g, "\\$&").replace(/#(?=[{$@])/g, "\\#")}"`;
/** PHP's var_export of a string (and Perl's Data::Dumper): in single quotes, with \ and ' escaped. */
const phpVarExport = (value: string): string => `'${value.replace(/[\\']/g, "\\$&")}'`;
/** Python's repr of a str that holds both quotes: in single quotes, with \ and ' escaped. */
const pythonRepr = (value: string): string => (value.includes("'") && !value.includes('"') ? `"${value.replace(/\\/g, "\\\\")}"` : `'${value.replace(/[\\']/g, "\\$&")}'`);
/** Bash's `printf %q`: each character but letters, digits and ,._+:@%/- after a backslash. */
const printfQ = (value: string): string => value.replace(/[^A-Za-z0-9,._+:@%/-]/g, "\\$&");
/** Lucene's QueryParser.escape: its syntax characters after a backslash. */
const luceneEscape = (value: string): string => value.replace(/[\\+\-!():^[\]"{}~*?|&/]/g, "\\$&");

/** Shows the Authorization header as each of those platforms writes a string. */
const showing: Handler = (request, response) => {
  const secret = String(request.headers.authorization ?? "");
  response.setHeader("content-type", "text/plain; charset=utf-8");
  switch (request.url) {
    case "/ruby":
      response.end(`{"HTTP_AUTHORIZATION"=>${rubyInspect(secret)}, "HTTP_HOST"=>"example"}`);
      return;
    case "/php":
      response.end(`array (\n  'Authorization' => ${phpVarExport(secret)},\n)`);
      return;
    case "/python":
      response.end(`{'Authorization': ${pythonRepr(secret)}}`);
      return;
    case "/ruby-in-json":
      // A JSON log line whose message is the inspected headers: each escape escaped again.
      response.end(JSON.stringify({ level: "info", message: `headers: {"HTTP_AUTHORIZATION"=>${rubyInspect(secret)}}` }));
      return;
    case "/php-in-json":
      response.end(JSON.stringify({ level: "info", message: `'Authorization' => ${phpVarExport(secret)}` }));
      return;
    case "/printf-q":
      response.end(`curl -H Authorization:${printfQ(secret)} https://example/`);
      return;
    default:
      response.end(`token:${luceneEscape(secret)}`);
  }
};

/** Five random letters and digits: a word too short to be masked on its own. */
const shortWord = (): string => randomBytes(8).toString("base64").replace(/[^A-Za-z0-9]/g, "").slice(0, 5).padEnd(5, "x");

describe("an echo with a backslash before a character that stands for itself", () => {
  it("is masked whole, as Ruby, PHP, Python, a shell and Lucene escape it", async () => {
    const a = await resources.server(showing);
    const canary = makeCanary();
    // A key with "#{", "#$" and "#@" (one word: no character of it parts words), a passphrase of short
    // words between quotes, and one between Lucene's syntax characters.
    const interpolating = `${canary}#{x}#$y#@z`;
    const quoted = [shortWord(), shortWord(), shortWord(), shortWord()].join("'") + `"${shortWord()}`;
    const lucene = [shortWord(), shortWord(), shortWord(), shortWord()].join("+") + `!(${shortWord()})`;
    const root = path.join(resources.dir(), "work");
    writeTree(root, { ".env": `${interpolating}\n${quoted}\n${lucene}\n` });
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
const line = (n: number) => requestFileSystem(".", (fs) => fs.readClassified(".env").map((env) => env.split("\\n")[n]!));
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  const page = (where: string, n: number): string => net.httpGet(${lit(a.origin)} + where, { secretHeaders: { authorization: line(n) } });
  attempt("ruby", () => page("/ruby", 0));
  attempt("ruby-quoted", () => page("/ruby", 1));
  attempt("php", () => page("/php", 1));
  attempt("ruby-in-json", () => page("/ruby-in-json", 0));
  attempt("php-in-json", () => page("/php-in-json", 1));
  attempt("python", () => page("/python", 1));
  attempt("printf-q", () => page("/printf-q", 1));
  attempt("printf-q-interpolating", () => page("/printf-q", 0));
  attempt("lucene", () => page("/lucene", 2));
});
`,
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "ruby")).toEqual({ status: "ok", value: '{"HTTP_AUTHORIZATION"=>"[redacted]", "HTTP_HOST"=>"example"}' });
    expect(attemptOf(found, "ruby-quoted")).toEqual({ status: "ok", value: '{"HTTP_AUTHORIZATION"=>"[redacted]", "HTTP_HOST"=>"example"}' });
    expect(attemptOf(found, "php")).toEqual({ status: "ok", value: "array (\n  'Authorization' => '[redacted]',\n)" });
    expect(attemptOf(found, "ruby-in-json")).toEqual({ status: "ok", value: '{"level":"info","message":"headers: {\\"HTTP_AUTHORIZATION\\"=>\\"[redacted]\\"}"}' });
    expect(attemptOf(found, "php-in-json")).toEqual({ status: "ok", value: `{"level":"info","message":"'Authorization' => '[redacted]'"}` });
    expect(attemptOf(found, "python")).toEqual({ status: "ok", value: "{'Authorization': '[redacted]'}" });
    expect(attemptOf(found, "printf-q")).toEqual({ status: "ok", value: "curl -H Authorization:[redacted] https://example/" });
    expect(attemptOf(found, "printf-q-interpolating")).toEqual({ status: "ok", value: "curl -H Authorization:[redacted] https://example/" });
    expect(attemptOf(found, "lucene")).toEqual({ status: "ok", value: "token:[redacted]" });
    // The server had each secret as it is.
    expect(a.received.map((r) => r.headers.authorization)).toEqual([interpolating, quoted, quoted, interpolating, quoted, quoted, quoted, interpolating, lucene]);
    // Nothing of them in what the script printed, its backslashes taken out or not.
    const unescaped = result.stdout.replace(/\\/g, "");
    for (const secret of [interpolating, quoted, lucene]) expect(unescaped).not.toContain(secret);
    expectNoLeak(canary, result, root, isEnvFile);
  });

  it("is masked whole for the operator's LLM key too, in a page that shows it so", async () => {
    const random = randomBytes(18).toString("hex");
    const apiKey = `sk-test-${random}#{k}#$`;
    const a = await resources.server((request, response) => {
      response.setHeader("content-type", "text/plain; charset=utf-8");
      response.end(request.url === "/php" ? `'key' => ${phpVarExport(`it's-${apiKey}`)},` : `{"OPENAI_API_KEY"=>${rubyInspect(apiKey)}}`);
    });
    const result = await tacit(
      resources.dir(),
      `requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  println(net.httpGet(${lit(`${a.origin}/ruby`)}));
  println(net.httpGet(${lit(`${a.origin}/php`)}));
});
`,
      [...permit(`127.0.0.1:${a.port}`), "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m"],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`{"OPENAI_API_KEY"=>"[redacted]"}\n'key' => 'it\\'s-[redacted]',\n`);
    expect(result.stdout.replace(/\\/g, "")).not.toContain(random);
  });
});
