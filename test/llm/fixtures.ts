// What the tests of `chat` share: the question a model server was asked. The servers themselves
// are test/net/fixtures.ts's startServer (127.0.0.1, a free port, the request's body read whole).

/** The first message's text in a chat completion request's body, as tacit's chat client sends it. */
export function questionOf(body: string): string {
  return (JSON.parse(body) as { messages: Array<{ content: string }> }).messages[0]!.content;
}
