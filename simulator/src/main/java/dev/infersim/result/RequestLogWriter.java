package dev.infersim.result;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The per-request JSONL file ({@code --save-detailed}) of {@code simulate} and {@code bench}: one JSON line per request,
 * streamed as requests end, so a run of any length keeps no per-request data in memory. {@link RequestLogReader} reads
 * it back into the same types. The file is written beside its name and put in place once whole ({@link OutputFile}); a
 * write that fails (a full disk) stops the writing, not the run, and {@link #failure} says so once.
 *
 * <p>Keys: index, request_class, warmup, scheduled_time_s (when the arrival process scheduled the request, from the
 * schedule's start), client_queue_ms (the wait for a concurrency slot: the latency origin is scheduled time plus this),
 * input_len, output_len, ttft_ms, tpot_ms, e2el_ms (successful requests), the server's queue_ms, prefill_ms,
 * cached_tokens, preemptions and finish_reason when known, error (failed requests). A client adds what only it sees
 * ({@link ClientObservation}): send_lag_ms, chunks, server_prompt_tokens, server_ttft_ms, server_e2el_ms, request_id,
 * error_type. Last, being the longest, come chunk_gaps_ms (the gaps between content chunks; in the simulator every
 * token is a chunk) and generated_text. Times are exact decimals of their nanoseconds (24.768721 ms), formatted by
 * hand: general double formatting would cost more than simulating the request.
 */
public final class RequestLogWriter implements Closeable {
    private final Path file;
    private final OutputFile.Pending pending;
    private final JsonGenerator json;
    private final char[] digits = new char[32];
    private final boolean chunkGaps;
    /** The first write that failed (a full disk): later rows are not written, and the file is not put in place. */
    private IOException failure;

    /**
     * Writes into a temporary file beside {@code file}, put in place by {@link #close} if every row was written.
     *
     * @param chunkGaps also write each request's gaps between content chunks ({@code chunk_gaps_ms}, from which vLLM's
     *                  {@code itls} are built): one number per output token in the simulator, so a file ten times as
     *                  large
     * @throws dev.infersim.common.ConfigException when the file cannot be created, naming it and why
     */
    public RequestLogWriter(Path file, boolean chunkGaps) {
        this.file = file;
        this.chunkGaps = chunkGaps;
        this.pending = OutputFile.Pending.open(file);
        try {
            json = new JsonFactory().createGenerator(new BufferedOutputStream(pending.stream(), 1 << 16));
            json.setPrettyPrinter(new MinimalPrettyPrinter("\n"));
        } catch (IOException e) {
            pending.close();
            throw OutputFile.failure(file, e);
        }
    }

    /** Why the file could not be written, as one line naming it ("cannot write X: No space left on device"), or null. */
    public String failure() {
        return failure == null ? null : OutputFile.failure(file, failure).getMessage();
    }

    /** Whether rows carry chunk gaps: the producer then keeps every request's gaps until it ends. */
    public boolean chunkGaps() {
        return chunkGaps;
    }

    /**
     * Appends one request.
     *
     * @param scheduleStartNanos the schedule's start on the record's clock: times in the file are relative to it
     * @param warmup             the request lies outside the measured window
     * @param client             what the client saw beside the record, or null (the simulator)
     * @param gapNanos           the gaps between the request's content chunks (null: not kept); written only when this
     *                           writer keeps chunk gaps
     * @param gapCount           how many of {@code gapNanos} are the request's
     */
    public void write(RequestRecord r, long scheduleStartNanos, boolean warmup, ClientObservation client,
                      long[] gapNanos, int gapCount) {
        if (failure != null) {
            return;
        }
        try {
            json.writeStartObject();
            json.writeNumberField("index", r.index());
            json.writeStringField("request_class", r.requestClass());
            json.writeBooleanField("warmup", warmup);
            writeDecimal("scheduled_time_s", r.scheduledNanos() - scheduleStartNanos, 9);
            writeDecimal("client_queue_ms", r.clientQueueNanos(), 6);
            json.writeNumberField("input_len", r.promptTokens());
            json.writeNumberField("output_len", r.outputTokens());
            if (r.succeeded()) {
                writeDecimal("ttft_ms", r.ttftNanos(), 6);
                writeDecimal("tpot_ms", r.tpotNanos(), 6);
                writeDecimal("e2el_ms", r.e2elNanos(), 6);
            }
            writeKnownMs("queue_ms", r.queueNanos());
            writeKnownMs("prefill_ms", r.prefillNanos());
            writeKnownCount("cached_tokens", r.cachedPromptTokens());
            writeKnownCount("preemptions", r.preemptions());
            if (r.finishReason() != null) {
                json.writeStringField("finish_reason", r.finishReason());
            }
            if (client != null) {
                writeClient(client);
            }
            if (r.error() != null) {
                json.writeStringField("error", r.error());
            }
            if (chunkGaps && gapNanos != null && r.succeeded()) {
                json.writeArrayFieldStart("chunk_gaps_ms");
                for (int i = 0; i < gapCount; i++) {
                    writeDecimal(null, gapNanos[i], 6);
                }
                json.writeEndArray();
            }
            if (client != null && client.generatedText() != null) {
                json.writeStringField("generated_text", client.generatedText());
            }
            json.writeEndObject();
        } catch (IOException e) {
            failure = e; // once: a full disk fails every later row too, and the run goes on without them
        }
    }

    private void writeClient(ClientObservation c) throws IOException {
        writeKnownMs("send_lag_ms", c.sendLagNanos());
        writeKnownCount("chunks", c.chunks());
        writeKnownCount("server_prompt_tokens", c.serverPromptTokens());
        writeKnownMs("server_ttft_ms", c.serverTtftNanos());
        writeKnownMs("server_e2el_ms", c.serverE2elNanos());
        if (c.requestId() != null) {
            json.writeStringField("request_id", c.requestId());
        }
        if (c.errorType() != null) {
            json.writeStringField("error_type", c.errorType());
        }
    }

    private void writeKnownMs(String field, long nanos) throws IOException {
        if (nanos >= 0) {
            writeDecimal(field, nanos, 6);
        }
    }

    private void writeKnownCount(String field, long count) throws IOException {
        if (count >= 0) {
            json.writeNumberField(field, count);
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

    /** Finishes the file and puts it in place, or, after a failed write, removes it ({@link #failure} says why). */
    @Override
    public void close() {
        try {
            if (failure == null) {
                json.writeRaw('\n');
                json.close();
                pending.commit();
            }
        } catch (IOException e) {
            failure = e;
        } finally {
            pending.close();
        }
    }
}
