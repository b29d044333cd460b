package dev.infersim.bench.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.bench.measure.ServerReply;
import dev.infersim.bench.measure.ServerTruth;
import dev.infersim.bench.measure.TokenArrivals;
import dev.infersim.bench.measure.TokenCountMethod;
import dev.infersim.common.ReadLateness;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.RequestOptions;

import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

/**
 * One streamed completion request on the event loop: sends the body, decodes the SSE stream as it arrives
 * ({@link SseDecoder}, each event read by {@link StreamChunk}) and records when each chunk of generated text came.
 * When the stream ends, each chunk's token count is taken from the most trusted source the server gave
 * ({@link TokenCountMethod}). A stream succeeds when it carried generated text and ended with {@code data: [DONE]} or,
 * for servers that send none, with a finish reason. Each request that ends is handed on as an immutable
 * {@link RequestOutcome}, copied out of this exchange's buffers: instances are pooled by the caller and reused, and
 * their buffers and per-chunk arrays grow once and then stay.
 */
final class StreamExchange implements Handler<Buffer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);

    private final ClientClock clock;
    private final LaneConnections connections;
    private final RequestOptions options;
    private final TokenCounter tokenizer;
    private final BiConsumer<StreamExchange, RequestOutcome> onFinish;
    private final Handler<Long> onTimeout = id -> fail("timeout", "no complete response within the request timeout");

    private WorkloadRequest request;
    private SendSchedule schedule;
    /** Whether the outcome keeps the streamed text (for the per-request file). */
    private boolean keepText;
    /** When the event loop took the request up (before waiting for a connection), and when it was written. */
    private long startNanos;
    private long sendNanos;
    /** When the request's last byte had been handed to the socket (its write completed); -1 until then. */
    private long writtenNanos = -1;
    /** Which attempt of this request the server that answered counted ({@code x-infersim-attempt}); -1 when not said. */
    private int attempt = -1;
    private long lastTokenNanos;
    private int chunks;
    private int countedTokens;
    private long usageCompletionTokens;
    /** Chunks whose running completion_tokens fell below an earlier chunk's: tokens that arrived out of order. */
    private int reorderedChunks;
    private long usagePromptTokens;
    private long usageCachedPromptTokens;
    private TokenCountMethod tokenCountMethod;
    private String finishReason;
    private String requestId;
    private ServerTruth truth;
    private String errorType;
    private String errorMessage;
    private long[] gapNanos = new long[256];
    private int[] gapTokens = new int[256];
    private int gapCount;
    /** The streamed text (for the tokenizer when the server's usage cannot count tokens, and the detail file). */
    private final StringBuilder generated = new StringBuilder();

    private Buffer body;
    private long timeoutMillis;
    /** This loop's read lateness ({@link ReadLateness}); null where reads are not timed against it (tests). */
    private final ReadLateness reads;
    /** Makes each request's {@code x-request-id}, which lets the server count its attempts; null: send none. */
    private final RequestIds ids;
    /** The current network read's lateness bound, ns; -1 when unknown. */
    private long readLateness = ReadLateness.UNKNOWN;
    /** The connection this request went out on, and whether the whole HTTP response was read from it. */
    private LaneConnections.Connection connection;
    private boolean httpCompleted;
    private HttpClientRequest httpRequest;
    private HttpClientResponse response;
    private int generation;
    private long timerId;
    private boolean finished;
    private boolean sawDone;
    private final SseDecoder sse = new SseDecoder(this::event);
    private final StreamChunk chunk = new StreamChunk();
    /** Per chunk with generated text: arrival, token count (-1 until counted), end of its text in {@link #generated}. */
    private long[] chunkNanos = new long[256];
    private int[] chunkTokens = new int[256];
    private int[] chunkTextEnds = new int[256];
    /** Per chunk with generated text: the lateness bound of the read that brought it ({@link ReadLateness}), ns. */
    private long[] chunkLateness = new long[256];

    /**
     * @param reads    the loop's read lateness, or null where reads are not timed against it
     * @param ids      makes each request's {@code x-request-id}, or null to send none
     * @param onFinish called on the loop with this exchange and its request's outcome when a request of it ends
     */
    StreamExchange(ClientClock clock, LaneConnections connections, RequestOptions options, TokenCounter tokenizer,
                   ReadLateness reads, RequestIds ids, BiConsumer<StreamExchange, RequestOutcome> onFinish) {
        this.clock = clock;
        this.connections = connections;
        this.options = options;
        this.tokenizer = tokenizer;
        this.reads = reads;
        this.ids = ids;
        this.onFinish = onFinish;
    }

    /** Sends {@code body} now; latencies count from the schedule's origin. Must run on the event loop. */
    void start(WorkloadRequest request, Buffer body, SendSchedule schedule, boolean keepText, long timeoutMillis) {
        begin(request, body, schedule, keepText, timeoutMillis);
        int use = ++generation;
        connections.acquire().onComplete(ar -> {
            if (use != generation || finished) {
                if (ar.succeeded()) {
                    connections.release(ar.result(), true); // never used: still clean
                }
            } else if (ar.failed()) {
                failWith(ar.cause());
            } else {
                connection = ar.result();
                connection.http().request(options).onComplete(req -> {
                    if (use != generation || finished) {
                        if (req.succeeded()) {
                            req.result().reset();
                        }
                    } else if (req.failed()) {
                        failWith(req.cause());
                    } else {
                        send(req.result(), use);
                    }
                });
            }
        });
    }

    /**
     * Takes the request up now and starts its timeout, sending nothing: {@link #start} then sends it over a connection;
     * a test's server answers through {@link #read} and {@link #ended} instead.
     */
    void begin(WorkloadRequest request, Buffer body, SendSchedule schedule, boolean keepText, long timeoutMillis) {
        prepare(request, body, schedule, keepText, timeoutMillis);
        startNanos = clock.nanoTime();
        timerId = clock.setTimer(timeoutMillis, onTimeout);
    }

    /** Takes on a new request and forgets the last one, sending nothing; {@link #start} sends it. */
    void prepare(WorkloadRequest request, Buffer body, SendSchedule schedule, boolean keepText, long timeoutMillis) {
        this.request = request;
        this.body = body;
        this.schedule = schedule;
        this.keepText = keepText;
        this.timeoutMillis = timeoutMillis;
        reset();
    }

    private void reset() {
        sendNanos = -1;
        writtenNanos = -1;
        attempt = -1;
        readLateness = ReadLateness.UNKNOWN;
        lastTokenNanos = -1;
        chunks = 0;
        countedTokens = 0;
        usageCompletionTokens = -1;
        reorderedChunks = 0;
        usagePromptTokens = -1;
        usageCachedPromptTokens = -1;
        tokenCountMethod = null;
        finishReason = null;
        requestId = null;
        truth = null;
        errorType = null;
        errorMessage = null;
        gapCount = 0;
        connection = null;
        httpCompleted = false;
        httpRequest = null;
        response = null;
        finished = false;
        sawDone = false;
        sse.reset();
        generated.setLength(0);
    }

    /**
     * For a server that answers through {@link #read} and {@link #ended} (tests): the request went out at
     * {@code sendNanos} and its bytes were in the socket at {@code writtenNanos} (-1: not known).
     */
    void sentAt(long sendNanos, long writtenNanos) {
        this.startNanos = sendNanos;
        this.sendNanos = sendNanos;
        this.writtenNanos = writtenNanos;
    }

    /** Whether this exchange is still on {@code r}, which has not ended yet. */
    boolean awaits(WorkloadRequest r) {
        return request == r && !finished;
    }

    /** Callbacks check {@code use}: this exchange may already serve another request when a stale one fires. */
    private void send(HttpClientRequest req, int use) {
        httpRequest = req;
        req.exceptionHandler(t -> {
            if (use == generation) {
                failWith(t);
            }
        });
        if (ids != null) {
            ids.name(req);
        }
        req.response().onComplete(ar -> {
            if (use != generation) {
                return;
            }
            if (ar.failed()) {
                failWith(ar.cause());
                return;
            }
            HttpClientResponse resp = ar.result();
            requestId = resp.getHeader("x-request-id");
            attempt = attemptOf(resp.getHeader(RequestIds.ATTEMPT_HEADER));
            if (resp.statusCode() != 200) {
                int status = resp.statusCode();
                resp.body().onComplete(b -> {
                    if (use == generation) {
                        httpCompleted = b.succeeded();
                        fail("http_" + status, b.succeeded()
                                ? errorMessageOf(b.result().toString(StandardCharsets.UTF_8)) : resp.statusMessage());
                    }
                });
                return;
            }
            response = resp;
            resp.exceptionHandler(t -> {
                if (use == generation) {
                    failWith(t);
                }
            });
            resp.handler(this);
            resp.endHandler(v -> {
                if (use == generation) {
                    ended(clock.nanoTime());
                }
            });
        });
        sendNanos = clock.nanoTime();
        req.end(body).onComplete(written -> {
            if (use == generation && written.succeeded()) {
                writtenNanos = clock.nanoTime(); // the bytes are in the socket: what the client's send lag ends at
            }
        });
    }

    private static int attemptOf(String header) {
        if (header == null) {
            return -1;
        }
        try {
            return Integer.parseInt(header.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    @Override
    public void handle(Buffer chunk) {
        long now = clock.nanoTime();
        readLateness = reads == null ? ReadLateness.UNKNOWN : reads.at(now);
        read(chunk, now);
    }

    /** One network read at {@code nowNanos} whose lateness bound is {@code latenessNanos} (-1: unknown). */
    void read(Buffer chunk, long nowNanos, long latenessNanos) {
        readLateness = latenessNanos;
        read(chunk, nowNanos);
    }

    /** One network read at {@code nowNanos}: the SSE decoder hands every event it completes to {@link #event}. */
    void read(Buffer chunk, long nowNanos) {
        if (!finished) {
            sse.feed(chunk, nowNanos);
        }
    }

    /** The whole HTTP response was read at {@code nowNanos}. */
    void ended(long nowNanos) {
        httpCompleted = true;
        end(nowNanos);
    }

    /** One SSE event: {@code [DONE]}, an error, or a chunk of the stream. */
    private void event(boolean errorEvent, byte[] data, int length, long now) {
        if (finished) {
            return;
        }
        if (isDone(data, length)) {
            sawDone = true;
            return;
        }
        if (!chunk.parse(data, length)) {
            fail(errorEvent ? "stream_error" : "malformed_chunk", errorEvent
                    ? new String(data, 0, Math.min(length, 300), StandardCharsets.UTF_8) : chunk.errorMessage());
            return;
        }
        if (errorEvent || chunk.errorMessage() != null) {
            fail("stream_error", chunk.errorMessage() != null ? chunk.errorMessage() : "error event");
            return;
        }
        if (chunk.choicesWithContent() > 0) {
            // with continuous usage stats, the growth of completion_tokens is this chunk's token count
            int usageTokens = chunk.completionTokens() >= 0
                    ? (int) (chunk.completionTokens() - Math.max(0, usageCompletionTokens)) : -1;
            recordChunk(now, usageTokens);
        }
        if (chunk.completionTokens() >= 0) {
            if (chunk.completionTokens() < usageCompletionTokens) {
                reorderedChunks++;
            }
            usageCompletionTokens = chunk.completionTokens();
        }
        if (chunk.promptTokens() >= 0) {
            usagePromptTokens = chunk.promptTokens();
        }
        if (chunk.cachedPromptTokens() >= 0) {
            usageCachedPromptTokens = chunk.cachedPromptTokens();
        }
        if (chunk.finishReason() != null) {
            finishReason = chunk.finishReason();
        }
        if (chunk.infersim() != null) {
            truth = ServerTruth.from(chunk.infersim());
        }
    }

    private static boolean isDone(byte[] data, int length) {
        int from = 0;
        int to = length;
        while (from < to && data[from] == ' ') {
            from++;
        }
        while (to > from && data[to - 1] == ' ') {
            to--;
        }
        return to - from == DONE.length && Arrays.equals(data, from, to, DONE, 0, DONE.length);
    }

    /** A chunk with generated text arrived at {@code now}; {@code usageTokens} is -1 without per-chunk usage. */
    private void recordChunk(long now, int usageTokens) {
        if (chunks == chunkNanos.length) {
            chunkNanos = Arrays.copyOf(chunkNanos, chunks * 2);
            chunkTokens = Arrays.copyOf(chunkTokens, chunks * 2);
            chunkTextEnds = Arrays.copyOf(chunkTextEnds, chunks * 2);
            chunkLateness = Arrays.copyOf(chunkLateness, chunks * 2);
        }
        generated.append(chunk.text());
        chunkNanos[chunks] = now;
        chunkLateness[chunks] = readLateness;
        chunkTokens[chunks] = usageTokens;
        chunkTextEnds[chunks] = generated.length();
        chunks++;
    }

    private void end(long nowNanos) {
        if (finished) {
            return;
        }
        sse.end(nowNanos);
        if (finished) {
            return;
        }
        if (chunks == 0) {
            fail("no_tokens", "the stream ended without any content token" + (sawDone ? "" : " and without [DONE]"));
        } else if (!sawDone && finishReason == null) {
            fail("incomplete_stream", "the stream ended without a finish_reason or data: [DONE] after " + chunks
                    + " chunks");
        } else {
            countTokens();
            int outputTokens = usageCompletionTokens >= 0 ? (int) usageCompletionTokens : countedTokens;
            if (outputTokens < 1) {
                // content arrived, yet the server's counts (usage, or per-chunk usage) say no token was generated:
                // no latency per token can be drawn from that, and a success needs at least one output token
                fail("no_tokens", "the stream carried " + chunks + " content chunks but the server counts "
                        + outputTokens + " completion tokens");
            } else {
                finish();
            }
        }
    }

    /**
     * Each chunk's token count, by the most trusted source the server allows ({@link TokenCountMethod}), then the
     * gaps between token-bearing chunks. A chunk the counts give no token adds its time to the next one's gap.
     */
    private void countTokens() {
        long usage = usageCompletionTokens;
        boolean perChunk = true;
        for (int i = 0; i < chunks && perChunk; i++) {
            perChunk = chunkTokens[i] >= 0;
        }
        if (perChunk) {
            tokenCountMethod = TokenCountMethod.SERVER_USAGE_PER_CHUNK;
        } else if (usage == chunks) {
            tokenCountMethod = TokenCountMethod.ONE_PER_CHUNK;
            Arrays.fill(chunkTokens, 0, chunks, 1);
        } else {
            int total = 0;
            int from = 0;
            for (int i = 0; i < chunks; i++) {
                chunkTokens[i] = tokenizer.countTokens(generated.substring(from, chunkTextEnds[i]));
                from = chunkTextEnds[i];
                total += chunkTokens[i];
            }
            if (usage >= 0 && total > 0) {
                tokenCountMethod = TokenCountMethod.TOKENIZER_SCALED_TO_USAGE;
                scale(total, usage);
            } else {
                tokenCountMethod = TokenCountMethod.TOKENIZER;
                for (int i = 0; i < chunks; i++) {
                    chunkTokens[i] = Math.max(1, chunkTokens[i]);
                }
            }
        }
        countedTokens = 0;
        gapCount = 0;
        long last = chunkNanos[0];
        for (int i = 0; i < chunks; i++) {
            countedTokens += chunkTokens[i];
            if (i > 0 && chunkTokens[i] > 0) {
                if (gapCount == gapNanos.length) {
                    gapNanos = Arrays.copyOf(gapNanos, gapCount * 2);
                    gapTokens = Arrays.copyOf(gapTokens, gapCount * 2);
                }
                gapNanos[gapCount] = chunkNanos[i] - last;
                gapTokens[gapCount] = chunkTokens[i];
                gapCount++;
                last = chunkNanos[i];
            }
        }
        lastTokenNanos = chunkNanos[chunks - 1];
    }

    /** Scales tokenizer counts summing to {@code total} so they sum to the server's {@code usage}, rounding cumulatively. */
    private void scale(int total, long usage) {
        long cumulative = 0;
        long assigned = 0;
        for (int i = 0; i < chunks; i++) {
            cumulative += chunkTokens[i];
            long upTo = Math.round((double) cumulative * usage / total);
            chunkTokens[i] = (int) (upTo - assigned);
            assigned = upTo;
        }
    }

    private void failWith(Throwable t) {
        fail(classify(t), t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
    }

    private void fail(String type, String message) {
        if (finished) {
            return;
        }
        errorType = type;
        errorMessage = message;
        finished = true;
        if (httpRequest != null && !httpCompleted) {
            httpRequest.reset();
        }
        complete();
    }

    private void finish() {
        if (finished) {
            return;
        }
        finished = true;
        complete();
    }

    /** Detaches from the HTTP objects (so nothing stale reaches the next request) and reports the outcome. */
    private void complete() {
        if (response != null) {
            response.handler(null);
        }
        clock.cancelTimer(timerId);
        body = null;
        onFinish.accept(this, outcome(clock.nanoTime()));
    }

    /** What the request came to, copied out of this exchange's buffers, which its next request reuses. */
    private RequestOutcome outcome(long endedNanos) {
        TokenArrivals tokens = chunks == 0 && reorderedChunks == 0 ? TokenArrivals.NONE
                : new TokenArrivals(chunkNanos, chunkTokens, chunkLateness, chunks, gapNanos, gapTokens, gapCount,
                countedTokens, reorderedChunks, lastTokenNanos, tokenCountMethod,
                keepText && errorType == null ? generated.toString() : null);
        ServerReply reply = new ServerReply(attempt, usagePromptTokens, usageCachedPromptTokens, usageCompletionTokens,
                finishReason, requestId, truth);
        return new RequestOutcome(request, schedule, startNanos, sendNanos, writtenNanos, tokens, reply, errorType,
                errorMessage, endedNanos);
    }

    /** The connection this request went out on, or null; and whether its whole response was read from it. */
    LaneConnections.Connection connection() {
        return connection;
    }

    boolean httpCompleted() {
        return httpCompleted;
    }

    /** Aborts the request as the run's deadline passed (or the run was interrupted). */
    void abort(String type, String message) {
        fail(type, message);
    }

    static String classify(Throwable t) {
        if (t instanceof TimeoutException) {
            return "timeout";
        }
        if (t instanceof ConnectException) {
            return "connect_failed";
        }
        String name = t.getClass().getSimpleName();
        String message = String.valueOf(t.getMessage()).toLowerCase(java.util.Locale.ROOT);
        if (name.equals("HttpClosedException") || message.contains("connection reset") || message.contains("closed")) {
            return "connection_reset";
        }
        return "exception_" + name;
    }

    private static String errorMessageOf(String body) {
        try {
            JsonNode node = JSON.readTree(body.trim());
            JsonNode message = node.path("error").path("message");
            if (message.isTextual()) {
                return message.asText();
            }
            JsonNode error = node.path("error");
            if (error.isTextual()) {
                return error.asText();
            }
        } catch (java.io.IOException | RuntimeException notJson) {
            // fall through to the raw body
        }
        return body.length() > 300 ? body.substring(0, 300) : body;
    }
}
