// A beyondAllowlist rule on exec or net makes a command or a host the allowlists refuse askable,
// "extend exec X" / "extend net H", and `tacit approvals grant` pre-approves either. Where the
// extension was not granted (nobody could be asked, or a person said no), the script got only the
// allowlists' refusal ("no command may run …", "no host is reachable …"): it named the flag, but
// not the extension nor how to pre-approve it, which a refused root's says (grant-root-extension).
// The scopes' openings are no action a person is asked about, so the advice added before asking
// never reached them. Expected: the same advice, and following it lets a later unattended run through.

import { expect, it } from "vitest";
import { approvals, lit, onTerminal, storedApprovals, type TestServer, touchScript, unattended, withServer, worlds } from "./fixtures.js";

const world = worlds("tacit-grant-exec-net-");

/** Runs `body`, printing its refusal (and whether it is a SecurityError) instead of ending the run with it. */
const caught = (label: string, body: string): string =>
  `try { ${body} } catch (e) { println(${lit(`${label} refused: `)} + (e instanceof SecurityError ? "SecurityError" : "other") + ": " + (e as Error).message); }\n`;

const netScript = (server: TestServer): string =>
  caught("net", `println("got", requestNetwork([${lit(`127.0.0.1:${server.port}`)}], (n) => n.httpGet(${lit(`http://127.0.0.1:${server.port}/hello`)})));`);

it("exec, unattended: the refusal says how to pre-approve the extension; the grant is accepted and answers it in a later run", async () => {
  const w = world();
  const config = w.config([{ action: "exec", command: "touch", tier: "approve-once", beyondAllowlist: true }]);
  const script = w.script(caught("exec", touchScript("touch", "marker")));
  const refused = await unattended(w, ["run", "--config", config, script]);
  expect(refused.code, refused.all).toBe(0);
  expect(refused.stdout).toContain("exec refused: SecurityError: requestExecPermission: no command may run");
  expect(refused.stdout).toContain("--command-permissions");
  expect(refused.stdout).toContain("(config libraryConfig.strictMode). A beyondAllowlist rule lets a person extend the allowlists (`extend exec touch`, approve-once), and no one could answer:");
  expect(refused.stdout).toContain("tacit approvals grant 'extend exec touch'");
  expect(w.exists("marker")).toBe(false);

  const granted = await approvals(w, ["grant", "extend exec touch"]);
  expect(granted.code, granted.all).toBe(0);
  expect(storedApprovals(w)!.map((a) => a.pattern)).toEqual(["extend exec touch"]);

  const later = await unattended(w, ["run", "--config", config, script]);
  expect(later.code, later.all).toBe(0);
  expect(later.stdout).not.toContain("refused");
  expect(later.stdout).toContain("ran");
  expect(w.exists("marker")).toBe(true);
});

it("net, unattended: the refusal says how to pre-approve the extension; the grant is accepted and answers it in a later run", () =>
  withServer(async (server) => {
    const w = world();
    const host = `127.0.0.1:${server.port}`;
    const config = w.config([{ action: "net", host, tier: "approve-once", beyondAllowlist: true }]);
    const script = w.script(netScript(server));
    const refused = await unattended(w, ["run", "--config", config, script]);
    expect(refused.code, refused.all).toBe(0);
    expect(refused.stdout).toContain("net refused: SecurityError: no host is reachable");
    expect(refused.stdout).toContain("--network-permissions");
    expect(refused.stdout).toContain(`(config libraryConfig.networkPermissions). A beyondAllowlist rule lets a person extend the allowlists (\`extend net ${host}\`, approve-once), and no one could answer:`);
    expect(refused.stdout).toContain(`tacit approvals grant 'extend net ${host}'`);
    expect(server.received).toEqual([]);

    const granted = await approvals(w, ["grant", `extend net ${host}`]);
    expect(granted.code, granted.all).toBe(0);
    expect(storedApprovals(w)!.map((a) => a.pattern)).toEqual([`extend net ${host}`]);

    const later = await unattended(w, ["run", "--config", config, script]);
    expect(later.code, later.all).toBe(0);
    expect(later.stdout).not.toContain("refused");
    expect(later.stdout).toContain("got");
    expect(server.received.map((r) => r.url)).toEqual(["/hello"]);
  }));

it("always-ask extensions are never pre-approved: the refusals say so, and name no grant", () =>
  withServer(async (server) => {
    const w = world();
    const host = `127.0.0.1:${server.port}`;
    const config = w.config([
      { action: "exec", command: "touch", tier: "always-ask", beyondAllowlist: true },
      { action: "net", host, tier: "always-ask", beyondAllowlist: true },
    ]);
    const refused = await unattended(w, ["run", "--config", config, w.script(caught("exec", touchScript("touch", "marker")) + netScript(server))]);
    expect(refused.code, refused.all).toBe(0);
    expect(refused.stdout).toMatch(/^exec refused: SecurityError: .*no command may run.*`extend exec touch`, always-ask.*It is asked every time \(always-ask\)/m);
    expect(refused.stdout).toMatch(new RegExp(`^net refused: SecurityError: no host is reachable.*\`extend net ${host}\`, always-ask.*It is asked every time \\(always-ask\\)`, "m"));
    expect(refused.stdout).not.toContain("tacit approvals grant");
    expect(w.exists("marker")).toBe(false);
    expect(server.received).toEqual([]);
  }));

it("exec, terminal, n: the refusal says a person was asked and did not approve the extension", async () => {
  const w = world();
  const config = w.config([{ action: "exec", command: "touch", tier: "approve-once", beyondAllowlist: true }]);
  const run = await onTerminal(w, ["run", "--config", config, w.script(caught("exec", touchScript("touch", "marker")))], { answers: ["n"] });
  expect(run.code, run.all).toBe(0);
  expect(run.prompts).toBe(1);
  expect(run.stdout).toContain("exec refused: SecurityError: requestExecPermission: no command may run");
  expect(run.stdout).toContain("(`extend exec touch`, approve-once), and a person was asked (");
  expect(storedApprovals(w)).toBeNull();
  expect(w.exists("marker")).toBe(false);
});
