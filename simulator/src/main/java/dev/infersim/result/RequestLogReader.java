package dev.infersim.result;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Reads a per-request JSONL file of {@link RequestLogWriter} back into its types, in request order. The file holds
 * the rows in the order the requests ended; one pass notes where each row lies by its request index (12 bytes a
 * request, the only per-request memory), then every walk parses the rows one at a time in index order. Times come
 * back as the exact nanoseconds they were written from, on a clock whose zero is the schedule's start.
 */
public final class RequestLogReader {
    private static final JsonFactory JSON = new JsonFactory();

    /**
     * One request as the file holds it.
     *
     * @param record        the request's measurements
     * @param warmup        outside the measured window
     * @param client        what a client saw beside the record; null in the simulator's rows
     * @param chunkGapNanos gaps between content chunks; empty unless read with the stream and the file kept them
     */
    public record Row(RequestRecord record, boolean warmup, ClientObservation client, long[] chunkGapNanos) {
    }

    private final Path file;
    private long[] offsets = new long[1024]; // by request index; -1 where the file has no row
    private int[] lengths = new int[1024];
    private int longest;

    /** Indexes the file; fails naming the file when it is not one of per-request rows. */
    public RequestLogReader(Path file) {
        this.file = file;
        Arrays.fill(offsets, -1);
        try (JsonParser p = JSON.createParser(file.toFile())) {
            while (p.nextToken() == JsonToken.START_OBJECT) {
                long offset = p.currentTokenLocation().getByteOffset();
                long index = -1;
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    p.nextToken();
                    if (name.equals("index")) {
                        index = p.getLongValue();
                    } else {
                        p.skipChildren();
                    }
                }
                put(index, offset, Math.toIntExact(p.currentLocation().getByteOffset() - offset));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read request detail " + file + ": " + e.getMessage(), e);
        }
    }

    private void put(long index, long offset, int length) throws IOException {
        if (index < 0) {
            throw new IOException("not a per-request JSONL file: the row at byte " + offset + " has no request index");
        }
        int i = Math.toIntExact(index);
        if (i >= offsets.length) {
            int n = offsets.length;
            offsets = Arrays.copyOf(offsets, Math.max(i + 1, 2 * n));
            lengths = Arrays.copyOf(lengths, offsets.length);
            Arrays.fill(offsets, n, offsets.length, -1);
        }
        offsets[i] = offset;
        lengths[i] = length;
        longest = Math.max(longest, length);
    }

    /**
     * Calls {@code action} on every row, lowest request index first.
     *
     * @param withStream also read the long fields, chunk gaps and generated text
     */
    public void forEach(boolean withStream, Consumer<Row> action) {
        ByteBuffer buffer = ByteBuffer.allocate(longest);
        try (FileChannel channel = FileChannel.open(file)) {
            for (int i = 0; i < offsets.length; i++) {
                if (offsets[i] < 0) {
                    continue;
                }
                buffer.clear().limit(lengths[i]);
                while (buffer.hasRemaining()) {
                    if (channel.read(buffer, offsets[i] + buffer.position()) < 0) {
                        throw new IOException(file + " is shorter than when it was indexed");
                    }
                }
                try (JsonParser row = JSON.createParser(buffer.array(), 0, lengths[i])) {
                    row.nextToken();
                    action.accept(parse(row, withStream));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read request detail " + file + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException e) { // a record that cannot be, such as a first token before the start
            throw new UncheckedIOException("cannot read request detail " + file + ": " + e.getMessage(),
                    new IOException(e));
        }
    }

    /** Parses one row; the parser stands on its START_OBJECT. */
    private static Row parse(JsonParser p, boolean withStream) throws IOException {
        long index = -1;
        String requestClass = null;
        boolean warmup = false;
        long scheduled = 0;
        long clientQueue = 0;
        int inputLen = 0;
        int outputLen = 0;
        long ttft = -1;
        long e2el = -1;
        long queue = -1;
        long prefill = -1;
        int cached = -1;
        int preemptions = -1;
        String finishReason = null;
        String error = null;
        boolean client = false;
        long sendLag = -1;
        int chunks = -1;
        int serverPrompt = -1;
        long serverTtft = -1;
        long serverE2el = -1;
        String requestId = null;
        String errorType = null;
        String text = null;
        long[] gaps = new long[0];
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            switch (name) {
                case "index" -> index = p.getLongValue();
                case "request_class" -> requestClass = p.getText();
                case "warmup" -> warmup = p.getBooleanValue();
                case "scheduled_time_s" -> scheduled = nanos(p, 9);
                case "client_queue_ms" -> clientQueue = nanos(p, 6);
                case "input_len" -> inputLen = p.getIntValue();
                case "output_len" -> outputLen = p.getIntValue();
                case "ttft_ms" -> ttft = nanos(p, 6);
                case "e2el_ms" -> e2el = nanos(p, 6);
                case "queue_ms" -> queue = nanos(p, 6);
                case "prefill_ms" -> prefill = nanos(p, 6);
                case "cached_tokens" -> cached = p.getIntValue();
                case "preemptions" -> preemptions = p.getIntValue();
                case "finish_reason" -> finishReason = p.getText();
                case "error" -> error = p.getValueAsString("");
                case "send_lag_ms" -> {
                    client = true;
                    sendLag = nanos(p, 6);
                }
                case "chunks" -> {
                    client = true;
                    chunks = p.getIntValue();
                }
                case "server_prompt_tokens" -> serverPrompt = p.getIntValue();
                case "server_ttft_ms" -> serverTtft = nanos(p, 6);
                case "server_e2el_ms" -> serverE2el = nanos(p, 6);
                case "request_id" -> requestId = p.getText();
                case "error_type" -> {
                    client = true;
                    errorType = p.getText();
                }
                case "chunk_gaps_ms" -> gaps = withStream ? readGaps(p) : skip(p);
                case "generated_text" -> text = withStream ? p.getText() : null;
                default -> p.skipChildren();
            }
        }
        long start = scheduled + clientQueue;
        boolean failed = error != null || errorType != null;
        RequestRecord record = new RequestRecord(index, requestClass, scheduled, start, failed ? -1 : start + ttft,
                failed ? -1 : start + e2el, inputLen, outputLen, cached, queue, prefill, preemptions, finishReason,
                failed && error == null ? "" : error);
        ClientObservation observed = client ? new ClientObservation(sendLag, chunks, serverPrompt, serverTtft,
                serverE2el, requestId, errorType, text) : null;
        return new Row(record, warmup, observed, gaps);
    }

    /** A decimal written from nanoseconds at {@code scale} back to its exact nanoseconds. */
    private static long nanos(JsonParser p, int scale) throws IOException {
        return p.getDecimalValue().movePointRight(scale).setScale(0, RoundingMode.HALF_EVEN).longValueExact();
    }

    private static long[] readGaps(JsonParser p) throws IOException {
        long[] gaps = new long[64];
        int n = 0;
        while (p.nextToken() != JsonToken.END_ARRAY) {
            if (n == gaps.length) {
                gaps = Arrays.copyOf(gaps, 2 * n);
            }
            gaps[n++] = nanos(p, 6);
        }
        return Arrays.copyOf(gaps, n);
    }

    private static long[] skip(JsonParser p) throws IOException {
        p.skipChildren();
        return new long[0];
    }
}
