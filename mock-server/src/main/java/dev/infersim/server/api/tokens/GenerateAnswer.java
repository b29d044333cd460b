package dev.infersim.server.api.tokens;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.infersim.server.engine.Choice;
import dev.infersim.server.engine.KvTransferParams;
import dev.infersim.server.json.Json;
import io.vertx.core.http.HttpServerResponse;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * The answer of {@code POST /inference/v1/generate}, as vLLM's {@code ServingTokens} writes it
 * ({@code vllm/entrypoints/serve/disagg/serving.py}):
 * <ul>
 *   <li>without stream, once every choice has finished, {@code GenerateResponse}: {@code request_id}, {@code model},
 *       {@code created}, {@code choices} ({@code index}, {@code logprobs}, {@code finish_reason}, {@code token_ids},
 *       {@code routed_experts}), {@code usage}, {@code prompt_logprobs}, {@code kv_transfer_params};</li>
 *   <li>with stream, SSE: per choice's new tokens a {@code GenerateStreamResponse} ({@code request_id}, one choice with
 *       its new {@code token_ids} and, on the last, its {@code finish_reason}; {@code usage} null, or the choice's
 *       running count with {@code continuous_usage_stats}); nothing for an update without new tokens, as vLLM skips
 *       one; then with {@code include_usage} a chunk with no choices and the totals, and {@code data: [DONE]}.</li>
 * </ul>
 */
public final class GenerateAnswer implements TokenExchange.Writer {
    private final HttpServerResponse response;
    private final String requestId;
    private final String model;
    private final Choice[] choices;
    private final boolean stream;
    private final boolean includeUsage;
    private final boolean continuousUsage;
    private final long created = System.currentTimeMillis() / 1000;
    private boolean headWritten;

    public GenerateAnswer(HttpServerResponse response, String requestId, String model, Choice[] choices, boolean stream,
                   boolean includeUsage, boolean continuousUsage) {
        this.response = response;
        this.requestId = requestId;
        this.model = model;
        this.choices = choices;
        this.stream = stream;
        this.includeUsage = includeUsage;
        this.continuousUsage = continuousUsage;
    }

    @Override
    public void tokens(Choice c, int from, int to, boolean finished) {
        if (!stream || to == from) {
            return;
        }
        if (!headWritten) {
            headWritten = true;
            response.setChunked(true).putHeader("content-type", "text/event-stream; charset=utf-8");
        }
        response.write("data: " + json(g -> {
            g.writeStartObject();
            g.writeStringField("request_id", requestId);
            g.writeArrayFieldStart("choices");
            g.writeStartObject();
            g.writeNumberField("index", c.index);
            g.writeNullField("logprobs");
            if (finished) {
                g.writeStringField("finish_reason", c.finishName());
            } else {
                g.writeNullField("finish_reason");
            }
            tokenIds(g, c, from, to);
            g.writeNullField("routed_experts");
            g.writeEndObject();
            g.writeEndArray();
            if (continuousUsage) {
                g.writeFieldName("usage");
                usage(g, c.request.promptTokens(), to, false);
            } else {
                g.writeNullField("usage");
            }
            g.writeEndObject();
        }) + "\n\n");
    }

    @Override
    public void done() {
        int prompt = choices[0].request.promptTokens();
        int completion = 0;
        for (Choice c : choices) {
            completion += c.request.outputTokens();
        }
        int completionTokens = completion;
        if (!stream) {
            response.putHeader("content-type", "application/json").end(json(g -> {
                g.writeStartObject();
                g.writeStringField("request_id", requestId);
                g.writeStringField("model", model);
                g.writeNumberField("created", created);
                g.writeArrayFieldStart("choices");
                for (Choice c : choices) {
                    g.writeStartObject();
                    g.writeNumberField("index", c.index);
                    g.writeNullField("logprobs");
                    g.writeStringField("finish_reason", c.finishName());
                    tokenIds(g, c, 0, c.request.outputTokens());
                    g.writeNullField("routed_experts");
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeFieldName("usage");
                usage(g, prompt, completionTokens, true);
                g.writeNullField("prompt_logprobs");
                KvTransferParams.writeResponse(g, choices);
                g.writeEndObject();
            }));
            return;
        }
        if (!headWritten) {
            headWritten = true;
            response.setChunked(true).putHeader("content-type", "text/event-stream; charset=utf-8");
        }
        if (includeUsage) {
            response.write("data: " + json(g -> {
                g.writeStartObject();
                g.writeStringField("request_id", requestId);
                g.writeArrayFieldStart("choices");
                g.writeEndArray();
                g.writeFieldName("usage");
                usage(g, prompt, completionTokens, false);
                g.writeEndObject();
            }) + "\n\n");
        }
        response.end("data: [DONE]\n\n");
    }

    private static void tokenIds(JsonGenerator g, Choice c, int from, int to) throws IOException {
        g.writeArrayFieldStart("token_ids");
        for (int i = from; i < to; i++) {
            g.writeNumber(c.text.id(i));
        }
        g.writeEndArray();
    }

    /** vLLM's UsageInfo; {@code details}: its null prompt_tokens_details too (a stream's last chunk leaves nulls out). */
    private static void usage(JsonGenerator g, int prompt, int completion, boolean details) throws IOException {
        g.writeStartObject();
        g.writeNumberField("prompt_tokens", prompt);
        g.writeNumberField("total_tokens", prompt + completion);
        g.writeNumberField("completion_tokens", completion);
        if (details) {
            g.writeNullField("prompt_tokens_details");
        }
        g.writeEndObject();
    }

    /** What writes one JSON value. */
    public interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    /** The JSON text {@code body} writes. */
    public static String json(Body body) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(out)) {
            body.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    @Override
    public io.vertx.core.streams.WriteStream<?> out() {
        return response;
    }
}
