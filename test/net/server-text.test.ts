// How messages about an answer are built (runner/net/server-text.ts): the template's words and
// plain values as they are, only the pieces marked as the server's redacted, with the request's
// real redaction (runner/net/redaction.ts) and a secret that is one of the template's words.

import { describe, expect, it } from "vitest";
import { redact, REDACTED } from "../../runner/net/redaction.js";
import { chosen, firstChars, type Parts, quoting, sayer } from "../../runner/net/server-text.js";

/** Parts as plain data: the server's pieces as { server: text }. */
const plain = (parts: Parts): unknown[] => parts.map((part) => (typeof part === "string" ? part : { server: part.text }));

/** A request whose secret header was the word "among", as an attacking script makes it. */
const say = sayer((text) => redact(text, ["among"], [], false));

describe("sayer", () => {
  it("redacts a server's piece and never the template's words, whatever the secret is", () => {
    expect(say`x is not among the hosts (${chosen("http://among.example/")})`).toBe(`x is not among the hosts (http://${REDACTED}.example/)`);
    expect(say`${"among"} and ${3} stay: they are not the server's`).toBe("among and 3 stay: they are not the server's");
  });

  it("formats a piece after redacting it, so a cut never falls inside an echoed secret", () => {
    const location = `${"x".repeat(8)}among${"y".repeat(20)}`;
    expect(say`(${chosen(location, (redacted) => JSON.stringify(firstChars(redacted, 10)))})`).toBe(`("xxxxxxxx${REDACTED}")`);
  });

  it("takes a text in parts: Node's words as they are, the pieces quoting finds redacted", () => {
    const nodeMessage = "getaddrinfo ENOTFOUND among.invalid among";
    expect(say`${quoting(nodeMessage, ["among.invalid"])}`).toBe(`getaddrinfo ENOTFOUND ${REDACTED}.invalid among`);
  });
});

describe("quoting", () => {
  it("splits a text at each occurrence of a piece, the longest piece first where two start at once", () => {
    expect(plain(quoting("a host.example b host c", ["host", "host.example"]))).toEqual(["a ", { server: "host.example" }, " b ", { server: "host" }, " c"]);
    expect(plain(quoting("no pieces here", []))).toEqual(["no pieces here"]);
    expect(plain(quoting("", ["x"]))).toEqual([]);
  });
});

describe("firstChars", () => {
  it("cuts a redacted text at a length, or past it to the end of a mask the cut falls in", () => {
    expect(firstChars("short", 10)).toBe("short");
    expect(firstChars("abcdefghij-more", 10)).toBe("abcdefghij");
    expect(firstChars(`ab${REDACTED}cd`, 5)).toBe(`ab${REDACTED}`);
    expect(firstChars(`${REDACTED}abcdef`, 12)).toBe(`${REDACTED}ab`);
  });
});
