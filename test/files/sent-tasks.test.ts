// A recursive search hands its helper thread each batch of files as one text and where each
// path in it ends (shared-search.ts): the helper must open exactly the paths the walker chose,
// whatever characters they hold.

import { describe, expect, it } from "vitest";
import type { SearchTask } from "../../runner/fs/grep-core.js";
import { receivedTasks, sentTasks } from "../../runner/fs/shared-search.js";

describe("a batch of search tasks as sent to the helper", () => {
  it("comes back as the same tasks, in order, whatever their paths hold", () => {
    const tasks: SearchTask[] = [
      { kind: "opened", named: "/p/a.ts", path: "/proc/1/fd/9/a.ts" },
      // A name may hold anything but "/" and NUL; a named path a script gave may hold a NUL
      // (refused later by the file system): neither may move a path into the next field.
      { kind: "opened", named: "/p/x\u0000/etc/shadow", path: "/proc/1/fd/9/x" },
      { kind: "linked", named: "/p/link\nname", real: "/p/target é 日本 👍" },
      { kind: "opened", named: "", path: "" },
      { kind: "linked", named: "/p/l", real: "/p/\u0000" },
    ];
    expect(receivedTasks(structuredClone(sentTasks(tasks)))).toEqual(tasks);
  });

  it("of no files is no task", () => {
    expect(receivedTasks(structuredClone(sentTasks([])))).toEqual([]);
  });
});
