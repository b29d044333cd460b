package dev.infersim.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The per-request JSONL file of a measured run ({@code --save-detailed}), written as requests finish so a run of any
 * length keeps no per-request data in memory. Keys shared with the simulator's detail file keep its names (index,
 * request_class, send_time_s, client_queue_ms, input_len, output_len, ttft_ms, tpot_ms, e2el_ms, queue_ms, prefill_ms,
 * cached_tokens, preemptions, finish_reason, error); the client adds what only it knows: send_lag_ms, chunks,
 * server_prompt_tokens, request_id, error_type, the server's own server_ttft_ms / server_e2el_ms and, for successful
 * requests, chunk_gaps_ms (the time between consecutive content chunks) and generated_text, from which
 * {@link VllmDetailArrays} builds vLLM's itls and generated_texts.
 */
final class RequestLog implements Closeable {
    private final JsonGenerator json;

    RequestLog(Path file) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            json = new JsonFactory().createGenerator(new BufferedOutputStream(Files.newOutputStream(file), 1 << 16));
            json.setPrettyPrinter(new MinimalPrettyPrinter("\n"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    void write(Exchange x, long windowStartNanos) {
        try {
            json.writeStartObject();
            json.writeNumberField("index", x.request.index());
            json.writeStringField("request_class", x.request.requestClass());
            json.writeNumberField("send_time_s", (x.scheduledNanos - windowStartNanos) / 1e9);
            json.writeNumberField("client_queue_ms", (x.originNanos - x.scheduledNanos) / 1e6);
            if (x.sendNanos >= 0) {
                json.writeNumberField("send_lag_ms", (x.sendNanos - x.originNanos) / 1e6);
            }
            json.writeNumberField("input_len", x.request.promptTokens());
            json.writeNumberField("output_len", x.outputTokens());
            json.writeNumberField("chunks", x.chunks);
            if (x.usagePromptTokens >= 0) {
                json.writeNumberField("server_prompt_tokens", x.usagePromptTokens);
            }
            if (x.succeeded()) {
                long ttft = x.firstTokenNanos - x.originNanos;
                long e2el = x.lastTokenNanos - x.originNanos;
                int out = x.outputTokens();
                json.writeNumberField("ttft_ms", ttft / 1e6);
                json.writeNumberField("tpot_ms", out > 1 ? (e2el - ttft) / 1e6 / (out - 1) : 0.0);
                json.writeNumberField("e2el_ms", e2el / 1e6);
            }
            GroundTruth truth = x.groundTruth;
            if (truth != null) {
                writeMs("server_ttft_ms", truth.ttftNanos());
                writeMs("server_e2el_ms", truth.e2elNanos());
                writeMs("queue_ms", truth.queueNanos());
                writeMs("prefill_ms", truth.prefillNanos());
                if (truth.cachedPromptTokens() >= 0) {
                    json.writeNumberField("cached_tokens", truth.cachedPromptTokens());
                }
                if (truth.preemptions() >= 0) {
                    json.writeNumberField("preemptions", truth.preemptions());
                }
            }
            if (x.finishReason != null) {
                json.writeStringField("finish_reason", x.finishReason);
            }
            if (x.requestId != null) {
                json.writeStringField("request_id", x.requestId);
            }
            if (x.succeeded()) {
                writeStream(x); // last, being the longest: VllmDetailArrays stops reading a row where they begin
            } else {
                json.writeStringField("error_type", x.errorType);
                json.writeStringField("error", x.errorMessage);
            }
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write request detail: " + e.getMessage(), e);
        }
    }

    private void writeStream(Exchange x) throws IOException {
        json.writeArrayFieldStart("chunk_gaps_ms");
        for (int i = 0; i < x.gapCount; i++) {
            json.writeNumber(x.gapNanos[i] / 1e6);
        }
        json.writeEndArray();
        json.writeStringField("generated_text", x.generated.toString());
    }

    private void writeMs(String key, long nanos) throws IOException {
        if (nanos >= 0) {
            json.writeNumberField(key, nanos / 1e6);
        }
    }

    @Override
    public void close() {
        try {
            json.writeRaw('\n');
            json.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close request detail file: " + e.getMessage(), e);
        }
    }
}
