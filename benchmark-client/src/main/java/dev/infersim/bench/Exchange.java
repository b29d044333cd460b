package dev.infersim.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.RequestOptions;

import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * One streamed completion request on the event loop: sends the body, parses the SSE stream as it arrives and records
 * when each token came. Token counts per chunk come from the server's continuous usage stats when it sends them,
 * else from the tokenizer. Instances are pooled by the caller and reused: the line buffer and gap arrays grow once and
 * then stay, so parsing a chunk allocates nothing (except the tokenizer fallback, the final chunk's JSON tree and,
 * with per-request detail, the generated text).
 */
final class Exchange implements Handler<Buffer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Vertx vertx;
    private final LaneConnections connections;
    private final RequestOptions options;
    private final PromptRenderer tokenizer;
    private final Consumer<Exchange> onFinish;
    private final Handler<Long> onTimeout = id -> fail("timeout", "no complete response within the request timeout");

    WorkloadRequest request;
    MeasuredWindow window;
    long scheduledNanos;
    /** Scheduled time since the previous request's, to tell a burst's send lag from the rest. */
    long scheduleGapNanos;
    long originNanos;
    /** When the event loop took the request up (before waiting for a connection), and when it was written. */
    long startNanos;
    long sendNanos;
    long firstTokenNanos;
    long lastTokenNanos;
    int chunks;
    int countedTokens;
    long usageCompletionTokens;
    long usagePromptTokens;
    String finishReason;
    String requestId;
    GroundTruth groundTruth;
    String errorType;
    String errorMessage;
    long[] gapNanos = new long[256];
    int[] gapTokens = new int[256];
    int gapCount;
    /** The streamed text, kept only when the window writes per-request detail. */
    final StringBuilder generated = new StringBuilder();

    private Buffer body;
    private long timeoutMillis;
    /** The connection this request went out on, and whether the whole HTTP response was read from it. */
    LaneConnections.Connection connection;
    boolean httpCompleted;
    private HttpClientRequest httpRequest;
    private HttpClientResponse response;
    private int generation;
    private long timerId;
    private boolean finished;
    private boolean sawDone;
    private byte[] line = new byte[1024];
    private int lineLength;
    private final StringBuilder text = new StringBuilder();

    Exchange(Vertx vertx, LaneConnections connections, RequestOptions options, PromptRenderer tokenizer,
             Consumer<Exchange> onFinish) {
        this.vertx = vertx;
        this.connections = connections;
        this.options = options;
        this.tokenizer = tokenizer;
        this.onFinish = onFinish;
    }

    /** Sends {@code body} now; latencies count from {@code originNanos}. Must run on the event loop. */
    void start(WorkloadRequest request, Buffer body, long scheduledNanos, long originNanos, long timeoutMillis) {
        this.request = request;
        this.body = body;
        this.scheduledNanos = scheduledNanos;
        this.originNanos = originNanos;
        this.timeoutMillis = timeoutMillis;
        reset();
        startNanos = System.nanoTime();
        timerId = vertx.setTimer(timeoutMillis, onTimeout);
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
                connection.http.request(options).onComplete(req -> {
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

    private void reset() {
        sendNanos = -1;
        firstTokenNanos = -1;
        lastTokenNanos = -1;
        chunks = 0;
        countedTokens = 0;
        usageCompletionTokens = -1;
        usagePromptTokens = -1;
        finishReason = null;
        requestId = null;
        groundTruth = null;
        errorType = null;
        errorMessage = null;
        gapCount = 0;
        connection = null;
        httpCompleted = false;
        httpRequest = null;
        response = null;
        finished = false;
        sawDone = false;
        lineLength = 0;
        text.setLength(0);
        generated.setLength(0);
    }

    /** Callbacks check {@code use}: this exchange may already serve another request when a stale one fires. */
    private void send(HttpClientRequest req, int use) {
        httpRequest = req;
        req.exceptionHandler(t -> {
            if (use == generation) {
                failWith(t);
            }
        });
        sendNanos = System.nanoTime();
        req.send(body).onComplete(ar -> {
            if (use != generation) {
                return;
            }
            if (ar.failed()) {
                failWith(ar.cause());
                return;
            }
            HttpClientResponse resp = ar.result();
            requestId = resp.getHeader("x-request-id");
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
                    httpCompleted = true;
                    end();
                }
            });
        });
    }

    /** One network read: split into lines, handle each complete {@code data:} line with the read's timestamp. */
    @Override
    public void handle(Buffer chunk) {
        if (finished) {
            return;
        }
        long now = System.nanoTime();
        int n = chunk.length();
        for (int i = 0; i < n; i++) {
            byte b = chunk.getByte(i);
            if (b == '\n') {
                handleLine(now);
                lineLength = 0;
            } else {
                if (lineLength == line.length) {
                    line = Arrays.copyOf(line, line.length * 2);
                }
                line[lineLength++] = b;
            }
        }
    }

    private void handleLine(long now) {
        int to = lineLength;
        if (to < 5 || line[0] != 'd' || line[1] != 'a' || line[2] != 't' || line[3] != 'a' || line[4] != ':') {
            return;
        }
        int from = 5;
        if (SseScan.equalsTrimmed(line, from, to, SseScan.DONE)) {
            sawDone = true;
            return;
        }
        if (isErrorEvent(from, to)) {
            fail("stream_error", errorMessageOf(new String(line, from, to - from, StandardCharsets.UTF_8)));
            return;
        }
        long completion = SseScan.longAfter(line, from, to, SseScan.COMPLETION_TOKENS);
        long prompt = SseScan.longAfter(line, from, to, SseScan.PROMPT_TOKENS);
        int contentAt = SseScan.nonEmptyStringAfter(line, from, to, SseScan.CONTENT);
        if (contentAt < 0) {
            contentAt = SseScan.nonEmptyStringAfter(line, from, to, SseScan.TEXT);
        }
        if (contentAt >= 0) {
            if (window.keepsDetail()) {
                SseScan.appendString(line, contentAt, to, generated);
            }
            int tokens;
            if (completion >= 0) {
                tokens = (int) Math.max(1, completion - Math.max(0, usageCompletionTokens));
            } else {
                text.setLength(0);
                SseScan.appendString(line, contentAt, to, text);
                tokens = Math.max(1, tokenizer.countTokens(text.toString()));
            }
            recordChunk(now, tokens);
        }
        if (completion >= 0) {
            usageCompletionTokens = completion;
        }
        if (prompt >= 0) {
            usagePromptTokens = prompt;
        }
        int reasonAt = SseScan.indexOf(line, from, to, SseScan.FINISH_REASON);
        if (reasonAt >= 0) {
            finishReason = readFinishReason(reasonAt + SseScan.FINISH_REASON.length, to);
        }
        if (SseScan.indexOf(line, from, to, SseScan.INFERSIM) >= 0) {
            readGroundTruth(from, to);
        }
    }

    /** vLLM and OpenAI report a failure mid-stream as {@code {"error": ...}} or {@code {"object":"error", ...}}. */
    private boolean isErrorEvent(int from, int to) {
        int i = from;
        while (i < to && line[i] == ' ') {
            i++;
        }
        return i + 1 < to && line[i] == '{'
                && (SseScan.indexOf(line, i + 1, Math.min(to, i + 12), SseScan.ERROR) == i + 1
                || SseScan.indexOf(line, i + 1, to, SseScan.OBJECT_ERROR) >= 0);
    }

    private void recordChunk(long now, int tokens) {
        chunks++;
        countedTokens += tokens;
        if (firstTokenNanos < 0) {
            firstTokenNanos = now;
        } else {
            if (gapCount == gapNanos.length) {
                gapNanos = Arrays.copyOf(gapNanos, gapCount * 2);
                gapTokens = Arrays.copyOf(gapTokens, gapCount * 2);
            }
            gapNanos[gapCount] = now - lastTokenNanos;
            gapTokens[gapCount] = tokens;
            gapCount++;
        }
        lastTokenNanos = now;
    }

    private String readFinishReason(int start, int to) {
        int end = start;
        while (end < to && line[end] != '"') {
            end++;
        }
        return switch (end - start) {
            case 4 -> "stop";
            case 6 -> "length";
            case 5 -> "abort";
            default -> new String(line, start, end - start, StandardCharsets.US_ASCII);
        };
    }

    private void readGroundTruth(int from, int to) {
        try {
            JsonNode node = JSON.readTree(line, from, to - from).get("infersim");
            if (node != null && node.isObject()) {
                groundTruth = GroundTruth.from(node);
            }
        } catch (java.io.IOException malformed) {
            fail("malformed_chunk", malformed.getMessage());
        }
    }

    private void end() {
        if (finished) {
            return;
        }
        if (lineLength > 0) {
            handleLine(System.nanoTime());
            if (finished) {
                return;
            }
        }
        if (firstTokenNanos < 0) {
            fail("no_tokens", "the stream ended without any content token" + (sawDone ? "" : " and without [DONE]"));
        } else if (!sawDone) {
            fail("incomplete_stream", "the stream ended without data: [DONE] after " + countedTokens + " tokens");
        } else {
            finish();
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
        vertx.cancelTimer(timerId);
        body = null;
        onFinish.accept(this);
    }

    /** Whether the request succeeded: a 200 stream with at least one token and a [DONE] marker. */
    boolean succeeded() {
        return errorType == null;
    }

    /** Output tokens: the server's usage.completion_tokens when sent, else what the tokenizer counted. */
    int outputTokens() {
        return usageCompletionTokens >= 0 ? (int) usageCompletionTokens : countedTokens;
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
