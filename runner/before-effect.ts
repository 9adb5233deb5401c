// The moment between deciding an action and carrying it out. The checks of an action with an
// effect and the effect itself are one executor call (a path is resolved and opened without
// following links, a command's directory pinned, a request's address checked at connect time,
// so that nothing can change between them): the executor says when the checks are over, and the
// approval gate logs the policy's decision there, before the effect (issue 6: an effect is on
// file, decided, before it happens; a crash loses at most an unsigned tail).

/**
 * Called by an executor once an action has passed every check it makes before acting, right
 * before the first thing it does that changes the world: creates, changes or removes a file,
 * starts a command, sends a request or a question to the model. The approval gate logs the
 * policy's "allow" there and writes the log to the OS. An action may reach it more than once (a
 * mkdir of several levels, a command set up again, a request's redirect hops, each given as `redirect`
 * and logged before it is sent); its decision is logged at the first call, and the log's file checked
 * at each (see AuditLog.flush). When it throws
 * (the log cannot be written), the effect must not happen: call it where its exception ends
 * the action, and where nothing is undone by it.
 */
export type BeforeEffect = (redirect?: RedirectHop) => void;

/** A request's redirect hop about to be sent: "METHOD URL" as the audit log records it (a secret the server echoed into it redacted). */
export interface RedirectHop {
  hop: string;
}

/** For an action no gate watches (no audit log), and for what an action does once it was logged (a classified write's filling). */
export const NOTHING_TO_LOG: BeforeEffect = () => undefined;
