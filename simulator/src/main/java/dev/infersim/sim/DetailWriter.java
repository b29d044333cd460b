package dev.infersim.sim;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Streams one JSON line per request ({@code --save-detailed}), so a run of any length keeps no per-request data in
 * memory. Keys: index, request_class, warmup, send_time_s, client_queue_ms, input_len, output_len, ttft_ms, tpot_ms,
 * e2el_ms, queue_ms, prefill_ms, cached_tokens, preemptions, finish_reason, error. Times are relative to the run start;
 * server-side fields are omitted when unknown.
 */
public final class DetailWriter implements Closeable {
    private final JsonGenerator json;

    public DetailWriter(Path file) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
            json = new JsonFactory().createGenerator(out);
            json.setPrettyPrinter(new MinimalPrettyPrinter("\n"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** Appends one request; {@code warmup} marks requests outside the measured window. */
    public void write(RequestRecord r, boolean warmup) {
        try {
            json.writeStartObject();
            json.writeNumberField("index", r.index());
            json.writeStringField("request_class", r.requestClass());
            json.writeBooleanField("warmup", warmup);
            json.writeNumberField("send_time_s", r.sendNanos() / 1e9);
            json.writeNumberField("client_queue_ms", r.clientQueueNanos() / 1e6);
            json.writeNumberField("input_len", r.promptTokens());
            json.writeNumberField("output_len", r.outputTokens());
            if (r.succeeded()) {
                json.writeNumberField("ttft_ms", r.ttftNanos() / 1e6);
                json.writeNumberField("tpot_ms", r.tpotNanos() / 1e6);
                json.writeNumberField("e2el_ms", r.e2elNanos() / 1e6);
            }
            if (r.queueNanos() >= 0) {
                json.writeNumberField("queue_ms", r.queueNanos() / 1e6);
            }
            if (r.prefillNanos() >= 0) {
                json.writeNumberField("prefill_ms", r.prefillNanos() / 1e6);
            }
            if (r.cachedPromptTokens() >= 0) {
                json.writeNumberField("cached_tokens", r.cachedPromptTokens());
            }
            if (r.preemptions() >= 0) {
                json.writeNumberField("preemptions", r.preemptions());
            }
            if (r.finishReason() != null) {
                json.writeStringField("finish_reason", r.finishReason());
            }
            if (r.error() != null) {
                json.writeStringField("error", r.error());
            }
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write request detail: " + e.getMessage(), e);
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
