// What a call of the exec and network APIs is given, checked in one place: the text it sends (a
// command's arguments and input, a request's body), and the names of its options.

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

/**
 * `options` (undefined for none) when every key in it is one of `known`. An option the call does
 * not take was ignored, silently: httpGet(url, { method: "POST", body }) sent a GET with a body,
 * exec(cmd, args, { env }) ran with tacit's environment, a misspelt "header" sent no headers.
 * `what` names the call ("httpGet(url, options)"); `hint`, for a key, what to do instead.
 */
export function knownOptions<T extends object>(options: unknown, known: readonly string[], what: string, hint: (key: string) => string = () => ""): Partial<T> {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`${what}: options must be an object (of ${known.join(", ")}), not ${Array.isArray(options) ? "an array" : `a ${typeof options}`}; nothing was done`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      const instead = hint(key);
      throw new TypeError(`${what}: options.${key} is not an option here (it takes ${known.join(", ")}); nothing was done.${instead === "" ? "" : ` ${instead}`}`);
    }
  }
  return options as Partial<T>;
}
