// The text a call sends (a command's arguments and input, a request's body), checked in one place.

/**
 * `value` as the text a call sends: a string, or a number, boolean or bigint written as one.
 * Anything else was sent as what String made of it, silently: bytes as "104,105", an object as
 * "[object Object]", a Classified value as "Classified(***)", a missing one as "undefined".
 * `what` names the argument in the TypeError.
 */
export function textValue(value: unknown, what: string): string {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
    case "boolean":
    case "bigint":
      return String(value);
  }
  const bytes = ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
  const shape =
    value === null || value === undefined ? String(value)
    : bytes ? "bytes (a Uint8Array or ArrayBuffer)"
    : Array.isArray(value) ? "an array"
    : typeof value === "object" ? "an object"
    : `a ${typeof value}`;
  throw new TypeError(
    `${what} must be text (a string), not ${shape}; nothing was done. ` +
      (bytes
        ? "Decode text with new TextDecoder().decode(bytes); calls take text only, so send binary data encoded (base64, hex) to a receiver that decodes it"
        : "Pass a string (String(value) or JSON.stringify(value) if that is what you mean)"),
  );
}
