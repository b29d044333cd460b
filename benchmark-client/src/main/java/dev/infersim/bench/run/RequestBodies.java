package dev.infersim.bench.run;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.buffer.Buffer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The JSON body of one streamed request, as {@code vllm bench serve} sends it: {@code /v1/completions} with a prompt
 * string, or {@code /v1/chat/completions} with one user message; {@code max_tokens} (chat: {@code max_completion_tokens})
 * is the workload's output length, {@code model} the request's LoRA adapter if it has one, {@code ignore_eos} as
 * configured, greedy sampling, with {@code --validate} {@code infersim.token_times}, and
 * {@code stream_options.include_usage} plus {@code continuous_usage_stats} so the server reports token counts per chunk.
 * Prompts without text are rendered from the workload's token ids by {@link PromptRenderer}.
 */
final class RequestBodies {
    private static final JsonFactory JSON = new JsonFactory();

    private final String model;
    private final boolean chat;
    private final boolean ignoreEos;
    private final PromptRenderer renderer;
    /** Ask an infersim server for every token's times ({@code infersim.token_times}). */
    private final boolean tokenTimes;
    private int[] ids = new int[4096];
    private final StringBuilder prompt = new StringBuilder(16_384);

    RequestBodies(String model, boolean chat, boolean ignoreEos, PromptRenderer renderer) {
        this(model, chat, ignoreEos, renderer, false);
    }

    RequestBodies(String model, boolean chat, boolean ignoreEos, PromptRenderer renderer, boolean tokenTimes) {
        this.tokenTimes = tokenTimes;
        this.model = model;
        this.chat = chat;
        this.ignoreEos = ignoreEos;
        this.renderer = renderer;
    }

    /** The prompt text of {@code r}: its own text, or its token ids rendered to exactly that many tokens. */
    String promptText(WorkloadRequest r) {
        if (r.promptText() != null) {
            return r.promptText();
        }
        if (ids.length < r.promptTokens()) {
            ids = new int[Math.max(r.promptTokens(), ids.length * 2)];
        }
        r.fillPromptTokenIds(ids, renderer.vocabularySize());
        prompt.setLength(0);
        renderer.render(ids, r.promptTokens(), prompt);
        return prompt.toString();
    }

    Buffer body(WorkloadRequest r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(r.promptTokens() * 8 + 256);
        try (JsonGenerator g = JSON.createGenerator(bytes)) {
            g.writeStartObject();
            // a request on a LoRA adapter names it as its model, as a client of vLLM does
            g.writeStringField("model", r.lora() != null ? r.lora() : model);
            if (chat) {
                g.writeArrayFieldStart("messages");
                g.writeStartObject();
                g.writeStringField("role", "user");
                g.writeStringField("content", promptText(r));
                g.writeEndObject();
                g.writeEndArray();
                g.writeNumberField("max_completion_tokens", r.outputTokens());
            } else {
                g.writeStringField("prompt", promptText(r));
                g.writeNumberField("max_tokens", r.outputTokens());
            }
            g.writeBooleanField("stream", true);
            g.writeObjectFieldStart("stream_options");
            g.writeBooleanField("include_usage", true);
            g.writeBooleanField("continuous_usage_stats", true);
            g.writeEndObject();
            g.writeNumberField("temperature", 0.0);
            if (ignoreEos) {
                g.writeBooleanField("ignore_eos", true);
            }
            if (tokenTimes) {
                g.writeObjectFieldStart("infersim");
                g.writeBooleanField("token_times", true);
                g.writeEndObject();
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Buffer.buffer(bytes.toByteArray());
    }
}
