// The secrets a container is given as files (Docker's /run/secrets, Kubernetes's
// /var/run/secrets/kubernetes.io/serviceaccount/token), and a systemd service's credentials
// (/run/credentials/<unit>), are classified by default: tacit is a container's entrypoint and
// a service, where the allowed roots may well hold them. The test cannot make those directories
// on the machine it runs on, and needs not: a classified path is refused before its file is
// looked for, in the same words whether it exists or not, so a read of a name under them tells
// what the defaults say of them.

import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";

const CLASSIFIED = "read refused: the path is classified (it holds secrets). Use readClassified()";

describe("a container's secret files", () => {
  it.each([
    ["/run", "/run/secrets/db_password"],
    ["/run", "/run/secrets"],
    ["/var/run", "/var/run/secrets/kubernetes.io/serviceaccount/token"],
    ["/run", "/run/credentials/tacit.service/llm-key"],
  ])("under %s: %s is refused as classified by default, to read, readBytes and size alike", async (root, file) => {
    const script =
      `requestFileSystem(${JSON.stringify(root)}, (fs) => {\n` +
      `  const entry = fs.access(${JSON.stringify(file)});\n` +
      `  for (const step of [() => entry.read(), () => entry.readBytes(), () => entry.size()]) {\n` +
      `    try { step(); println("answered"); } catch (error) { println(String(error)); }\n` +
      `  }\n` +
      `});\n`;
    const result = await runScript(script, ["--no-check", "--allowed-roots", root]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain(`SecurityError: ${file}: ${CLASSIFIED}`);
    for (const line of lines) {
      expect(line).toMatch(/^SecurityError: .*classified/);
      expect(line).not.toMatch(/no such file|answered/i);
    }
  });
});
