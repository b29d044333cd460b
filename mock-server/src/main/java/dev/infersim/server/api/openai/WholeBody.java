package dev.infersim.server.api.openai;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.engine.KvTransferParams;
import dev.infersim.server.json.Json;
import dev.infersim.server.request.CompletionRequest;
import dev.infersim.server.request.ReturnedPrompt;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.io.OutputStream;

/**
 * The non-stream response body with every key vLLM's response models dump, unset ones as null (vLLM serializes its
 * pydantic models whole): ChatCompletionResponse / ChatMessage and CompletionResponse / CompletionResponseChoice as of
 * vLLM 0.10, so a client that reads the key set (or a schema-strict one) sees what vLLM sends; the message's reasoning
 * field is {@code reasoning}, as vLLM names it since (main at 9aaf83ef502fc37bc647f6e474314d48ba36cd1c), no longer
 * {@code reasoning_content}.
 */
final class WholeBody implements Wire.Body {
    private final ResponseContext response;
    /** The request, whose flags shape the body. */
    private final CompletionRequest request;

    WholeBody(ResponseContext response) {
        this.response = response;
        this.request = response.request();
    }

    /** About the bytes of JSON this body takes, from what it holds: decides whether an event loop may write it. */
    @Override
    public long estimatedBytes() {
        long bytes = 1024;
        for (Choice c : response.choices()) {
            int tokens = request.promptOnly() ? 0 : c.request.outputTokens();
            bytes += 256 + 8L * tokens; // a choice's keys (index, message, finish_reason, ...) and its text
            if (request.chat()) {
                bytes += request.echoMessage() == null ? 0 : 2L * request.echoMessage().length();
                bytes += request.logprobs() ? 80L * tokens * Math.max(1, request.topLogprobs()) : 0;
                continue;
            }
            ReturnedPrompt p = request.returnedPrompts() == null ? null : response.logprobs().promptOf(c);
            int promptTokens = p == null ? 0 : p.ids().length;
            bytes += request.echo() ? 2L * p.text().length() : 0;
            bytes += request.logprobs() ? 24L * (tokens + (request.echo() ? promptTokens : 0)) * Math.max(1, request.topLogprobs()) : 0;
            bytes += request.promptLogprobs() != null ? 64L * promptTokens * Math.max(1, request.promptLogprobs()) : 0;
        }
        if (request.chat() && request.promptLogprobs() != null) {
            bytes += 64L * request.returnedPrompts().get(0).ids().length * Math.max(1, request.promptLogprobs());
        }
        return bytes;
    }

    /** Writes the body into {@code out} (a worker thread's stream to the client, for a large body). */
    @Override
    public void write(OutputStream out) throws IOException {
        Json.write(out, this::writeBody);
    }

    @Override
    public void write(ByteBuf out) {
        Json.write(out, this::writeBody);
    }

    private void writeBody(JsonGenerator g) throws IOException {
        g.writeStartObject();
        response.writeIdentity(g, request.chat() ? "chat.completion" : "text_completion");
        g.writeArrayFieldStart("choices");
        for (Choice c : response.choices()) {
            g.writeStartObject();
            writeChoice(g, c);
            g.writeEndObject();
        }
        g.writeEndArray();
        if (request.chat()) {
            g.writeNullField("service_tier");
            g.writeNullField("system_fingerprint");
        }
        Usage.writeRequest(g, request, response.choices());
        if (request.chat()) {
            // vLLM's chat response scores its one prompt once, at the top level.
            writePromptLogprobs(g, request.promptLogprobs() == null ? null : request.returnedPrompts().get(0));
            g.writeNullField("prompt_token_ids");
        }
        KvTransferParams.writeResponse(g, response.choices());
        response.truth().writeField(g);
        g.writeEndObject();
    }

    private void writeChoice(JsonGenerator g, Choice c) throws IOException {
        g.writeNumberField("index", c.index);
        String text = c.finalText();
        if (request.echo()) {
            text = response.logprobs().promptOf(c).text() + (request.promptOnly() ? "" : text);
        }
        if (request.chat()) {
            if (request.echoMessage() != null) {
                text = request.echoMessage() + text;
            }
            g.writeObjectFieldStart("message");
            g.writeStringField("role", "assistant");
            if (c.plan != null) {
                c.plan.writeMessage(g, c.request.outputTokens(), c.stopTextLength());
                g.writeEndObject();
            } else {
                g.writeStringField("content", text);
                g.writeNullField("refusal");
                g.writeNullField("annotations");
                g.writeNullField("audio");
                g.writeNullField("function_call");
                g.writeArrayFieldStart("tool_calls");
                g.writeEndArray();
                g.writeNullField("reasoning");
                g.writeEndObject();
            }
        } else {
            g.writeStringField("text", text);
        }
        g.writeFieldName("logprobs");
        if (!request.logprobs()) {
            g.writeNull();
        } else if (request.chat()) {
            response.logprobs().writeChat(g, c, 0, c.request.outputTokens());
        } else {
            response.logprobs().writeCompletion(g, c, request.echo(), 0, request.promptOnly() ? 0 : c.request.outputTokens(), 0);
        }
        g.writeStringField("finish_reason", c.finishName());
        g.writeStringField("stop_reason", c.stopReason());
        if (!request.chat()) {
            writePromptLogprobs(g, request.promptLogprobs() == null ? null : response.logprobs().promptOf(c));
        }
    }

    private void writePromptLogprobs(JsonGenerator g, ReturnedPrompt prompt) throws IOException {
        g.writeFieldName("prompt_logprobs");
        if (prompt == null) {
            g.writeNull();
        } else {
            response.logprobs().writePrompt(g, prompt);
        }
    }
}
