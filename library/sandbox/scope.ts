// The shape every request…() function shares: ask the host for a capability, run the block
// with it, and give it back when the block returns — or, for an async block, when its
// promise settles. The host revokes the token then; the object the block got stops working.

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}

export function withScope<C, T>(name: string, open: () => C, close: () => void, op: (capability: C) => T): T {
  if (typeof op !== "function") throw new TypeError(`${name}(…, op): op must be a function that receives the capability`);
  const capability = open();
  let result: T;
  try {
    result = op(capability);
  } catch (error) {
    close();
    throw error;
  }
  // Looking at the result runs the block's code (a `then` getter): one that threw left the scope
  // open after the call had ended, and the capability the block kept went on working.
  let thenable: boolean;
  try {
    thenable = isThenable(result);
  } catch (error) {
    close();
    throw error;
  }
  if (!thenable) {
    close();
    return result;
  }
  return Promise.resolve(result).then(
    (value) => {
      close();
      return value;
    },
    (error: unknown) => {
      close();
      throw error;
    },
  ) as T;
}
