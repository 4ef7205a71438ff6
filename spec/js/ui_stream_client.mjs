// The AI SDK's own client side of POST .../agent/chat, for spec/test_ai_sdk_client.py.
//
// Reads {api, cookie, chatId, messages, message?} as JSON on stdin, sends the
// messages with DefaultChatTransport (the transport useChat uses: it parses
// the SSE and validates every chunk against the SDK's strict chunk schema)
// and assembles the reply with readUIMessageStream (continuing `message`,
// the assistant message of a turn being continued, as useChat does).
// Prints {"message": <the final UIMessage>}; exits 1 on any error.
import { DefaultChatTransport, readUIMessageStream } from 'ai';

let input = '';
for await (const piece of process.stdin) input += piece;
const { api, cookie, chatId, messages, message } = JSON.parse(input);

const transport = new DefaultChatTransport({ api, headers: { cookie } });
const stream = await transport.sendMessages({
  chatId, messages, trigger: 'submit-message', messageId: message?.id, abortSignal: undefined,
});
let last;
for await (const snapshot of readUIMessageStream({ message, stream, terminateOnError: true })) last = snapshot;
console.log(JSON.stringify({ message: last }));
