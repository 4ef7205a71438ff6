// Folds AI SDK UI message stream chunks into a UIMessage
// ({id, role: "assistant", parts}), the way useChat does: text and reasoning
// deltas, tool input/approval/output states, files, sources and data parts.
// See /work/shared/reference/api-facts.md part C for the chunk types.

export function newAssistantMessage(id) {
  return { id: id || localId("msg"), role: "assistant", parts: [] };
}

export function localId(prefix = "id") {
  const rnd = crypto.getRandomValues(new Uint32Array(2));
  return `${prefix}_${Date.now().toString(36)}${rnd[0].toString(36)}${rnd[1].toString(36)}`;
}

export function toolNameOf(part) {
  if (part.type === "dynamic-tool") return part.toolName;
  return part.type.startsWith("tool-") ? part.type.slice(5) : part.type;
}

export const isToolPart = (part) => part && (part.type === "dynamic-tool" || part.type.startsWith("tool-"));

// Applies one chunk; returns what the caller should know about it:
// {error} for an error chunk, {finished} at finish/abort, {trip} when a tool
// output carries a trip echo ({ok, summary, trip}).
export function applyChunk(msg, chunk) {
  const parts = msg.parts;
  const findTool = (id) => parts.find((p) => isToolPart(p) && p.toolCallId === id);
  const findStreaming = (type, id) => {
    for (let i = parts.length - 1; i >= 0; i--) if (parts[i].type === type && parts[i]._streamId === id) return parts[i];
    return null;
  };
  switch (chunk.type) {
    case "start":
      if (chunk.messageId) msg.id = chunk.messageId;
      if (chunk.messageMetadata) msg.metadata = chunk.messageMetadata;
      return {};
    case "start-step":
      parts.push({ type: "step-start" });
      return {};
    case "finish-step":
      return {};
    case "text-start":
      parts.push({ type: "text", text: "", state: "streaming", _streamId: chunk.id });
      return {};
    case "text-delta": {
      let part = findStreaming("text", chunk.id);
      if (!part) parts.push((part = { type: "text", text: "", state: "streaming", _streamId: chunk.id }));
      part.text += chunk.delta || "";
      return { text: true };
    }
    case "text-end": {
      const part = findStreaming("text", chunk.id);
      if (part) part.state = "done";
      return {};
    }
    case "reasoning-start":
      parts.push({ type: "reasoning", text: "", state: "streaming", _streamId: chunk.id });
      return {};
    case "reasoning-delta": {
      let part = findStreaming("reasoning", chunk.id);
      if (!part) parts.push((part = { type: "reasoning", text: "", state: "streaming", _streamId: chunk.id }));
      part.text += chunk.delta || "";
      return {};
    }
    case "reasoning-end": {
      const part = findStreaming("reasoning", chunk.id);
      if (part) part.state = "done";
      return {};
    }
    case "tool-input-start": {
      if (!findTool(chunk.toolCallId)) {
        parts.push({
          type: chunk.dynamic ? "dynamic-tool" : `tool-${chunk.toolName}`, toolName: chunk.toolName,
          toolCallId: chunk.toolCallId, state: "input-streaming", input: undefined, _inputText: "", title: chunk.title,
        });
      }
      return {};
    }
    case "tool-input-delta": {
      const part = findTool(chunk.toolCallId);
      if (part) part._inputText = (part._inputText || "") + (chunk.inputTextDelta || "");
      return {};
    }
    case "tool-input-available": {
      let part = findTool(chunk.toolCallId);
      if (!part) {
        part = { type: chunk.dynamic ? "dynamic-tool" : `tool-${chunk.toolName}`, toolName: chunk.toolName, toolCallId: chunk.toolCallId };
        parts.push(part);
      }
      part.input = chunk.input;
      part.state = "input-available";
      return {};
    }
    case "tool-input-error": {
      let part = findTool(chunk.toolCallId);
      if (!part) parts.push((part = { type: `tool-${chunk.toolName}`, toolName: chunk.toolName, toolCallId: chunk.toolCallId }));
      part.input = chunk.input;
      part.state = "output-error";
      part.errorText = chunk.errorText;
      return {};
    }
    case "tool-approval-request": {
      const part = findTool(chunk.toolCallId);
      if (part) {
        part.state = "approval-requested";
        part.approval = { id: chunk.approvalId };
      }
      return { approval: true };
    }
    case "tool-output-available": {
      const part = findTool(chunk.toolCallId);
      if (part) {
        part.output = chunk.output;
        part.state = "output-available";
        if (chunk.preliminary) part.preliminary = true;
      }
      const out = chunk.output;
      return out && typeof out === "object" && out.trip && out.trip.id ? { trip: out.trip } : {};
    }
    case "tool-output-error": {
      const part = findTool(chunk.toolCallId);
      if (part) {
        part.state = "output-error";
        part.errorText = chunk.errorText;
      }
      return {};
    }
    case "tool-output-denied": {
      const part = findTool(chunk.toolCallId);
      if (part) part.state = "output-denied";
      return {};
    }
    case "file":
      parts.push({ type: "file", url: chunk.url, mediaType: chunk.mediaType });
      return {};
    case "source-url":
      parts.push({ type: "source-url", sourceId: chunk.sourceId, url: chunk.url, title: chunk.title });
      return {};
    case "message-metadata":
      msg.metadata = { ...(msg.metadata || {}), ...(chunk.messageMetadata || {}) };
      return {};
    case "error":
      return { error: chunk.errorText || "The agent ran into a problem." };
    case "finish":
      return { finished: true, finishReason: chunk.finishReason };
    case "abort":
      return { finished: true, aborted: true };
    default:
      if (typeof chunk.type === "string" && chunk.type.startsWith("data-")) {
        if (chunk.transient) return { data: chunk };
        const existing = chunk.id ? parts.find((p) => p.type === chunk.type && p.id === chunk.id) : null;
        if (existing) existing.data = chunk.data;
        else parts.push({ type: chunk.type, id: chunk.id, data: chunk.data });
        const d = chunk.data;
        return d && typeof d === "object" && d.trip && d.trip.id ? { trip: d.trip } : {};
      }
      return {};
  }
}

// The message as the server should see it again (private fields dropped).
export function forServer(msg) {
  return {
    id: msg.id,
    role: msg.role,
    ...(msg.metadata ? { metadata: msg.metadata } : {}),
    parts: msg.parts.map((p) => {
      const out = {};
      for (const [k, v] of Object.entries(p)) if (!k.startsWith("_") && v !== undefined) out[k] = v;
      if (p.type.startsWith("tool-")) delete out.toolName; // static tool parts carry the name in `type`
      return out;
    }),
  };
}
