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
 * memory. Keys: index, request_class, warmup, start_time_s, client_queue_ms, input_len, output_len, ttft_ms, tpot_ms,
 * e2el_ms, queue_ms, prefill_ms, cached_tokens, preemptions, finish_reason, error. Times are relative to the run start;
 * server-side fields are omitted when unknown. Times are written as exact decimals of their nanoseconds (24.768721 ms),
 * formatted by hand: general double formatting would cost more than simulating the request.
 */
public final class DetailWriter implements Closeable {
    private final JsonGenerator json;
    private final char[] digits = new char[32];
    private final boolean tokenGaps;

    /** A writer of per-request rows without token gaps. */
    public DetailWriter(Path file) {
        this(file, false);
    }

    /**
     * @param tokenGaps also write each request's gaps between tokens ({@code chunk_gaps_ms}, from which vLLM's
     *                  {@code itls} are built): one number per output token, so a file ten times as large
     */
    public DetailWriter(Path file, boolean tokenGaps) {
        this.tokenGaps = tokenGaps;
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

    /** Whether rows carry token gaps: the simulation then keeps every request's token times until it ends. */
    public boolean tokenGaps() {
        return tokenGaps;
    }

    /**
     * Appends one request; {@code warmup} marks requests outside the measured window. {@code tokenNanos} holds the
     * times of its first {@code tokens} tokens (null: not kept); their gaps are written last, as the longest field, under
     * the benchmark client's name: in the simulator every token is a chunk of its own.
     */
    public void write(RequestRecord r, boolean warmup, long[] tokenNanos, int tokens) {
        try {
            json.writeStartObject();
            json.writeNumberField("index", r.index());
            json.writeStringField("request_class", r.requestClass());
            json.writeBooleanField("warmup", warmup);
            writeDecimal("start_time_s", r.startNanos(), 9);
            writeDecimal("client_queue_ms", r.clientQueueNanos(), 6);
            json.writeNumberField("input_len", r.promptTokens());
            json.writeNumberField("output_len", r.outputTokens());
            if (r.succeeded()) {
                writeDecimal("ttft_ms", r.ttftNanos(), 6);
                writeDecimal("tpot_ms", r.tpotNanos(), 6);
                writeDecimal("e2el_ms", r.e2elNanos(), 6);
            }
            if (r.queueNanos() >= 0) {
                writeDecimal("queue_ms", r.queueNanos(), 6);
            }
            if (r.prefillNanos() >= 0) {
                writeDecimal("prefill_ms", r.prefillNanos(), 6);
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
            if (tokenGaps && tokenNanos != null) {
                json.writeArrayFieldStart("chunk_gaps_ms");
                for (int i = 1; i < tokens; i++) {
                    writeDecimal(null, tokenNanos[i] - tokenNanos[i - 1], 6);
                }
                json.writeEndArray();
            }
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write request detail: " + e.getMessage(), e);
        }
    }

    /**
     * Writes {@code nanos / 10^scale} exactly, without trailing zeros after the first decimal (1.5, 0.0, 24.768721), as
     * the value of {@code field}, or as an array element when {@code field} is null.
     */
    private void writeDecimal(String field, long nanos, int scale) throws IOException {
        long value = Math.abs(nanos);
        int end = digits.length;
        int pos = end;
        for (int i = 0; i < scale; i++) {
            digits[--pos] = (char) ('0' + value % 10);
            value /= 10;
        }
        while (end > pos + 1 && digits[end - 1] == '0') {
            end--;
        }
        digits[--pos] = '.';
        do {
            digits[--pos] = (char) ('0' + value % 10);
            value /= 10;
        } while (value > 0);
        if (nanos < 0) {
            digits[--pos] = '-';
        }
        if (field != null) {
            json.writeFieldName(field);
        }
        json.writeRawValue(digits, pos, end - pos);
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
