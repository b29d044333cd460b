package dev.infersim.server.engine;

import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.FinishReason;
import dev.infersim.server.output.OutputPlan;
import dev.infersim.server.output.StopMatch;
import dev.infersim.server.output.StopStrings;
import dev.infersim.server.output.TokenText;

import java.util.Arrays;
import java.util.function.LongFunction;

/**
 * One generated sequence (an OpenAI choice) and the engine request that times it. The engine thread writes token
 * times and the finish, then publishes the token count and the finished flag together in one volatile int, so the
 * exchange's event loop never sees the last token without knowing it is the last (which would cost the stream a
 * separate finish chunk); reads after that volatile read see everything written before it (happens-before). The event
 * loop owns the {@code written} side.
 */
public final class Choice {
    private static final long[] NO_TIMES = new long[0];

    final ChoiceSink exchange;
    public final int index;
    private final LongFunction<EngineRequest> requestArrivingAt;
    /** Set by {@link #arrive}, before the engine thread or a response sees this choice. */
    public EngineRequest request;
    public final TokenText text;
    /** The request's stop strings, or null. */
    public final StopStrings stops;
    final EventLoopBatch batch;
    /** How the output's tokens reach the client when the reply is more than plain text; null for plain text. */
    public final OutputPlan plan;
    /** Where the output comes from with --dataset-responses ({@code dataset} or {@code synthetic}); null without. */
    public String reply;
    /** The prefill this choice pulls its KV from ({@code do_remote_prefill}); null otherwise. Set before it arrives. */
    public KvTransferParams remotePrefill;
    /** A prefill's id for the decode side ({@code remote_request_id}); null unless {@code do_remote_decode}. */
    public String kvRequestId;
    /** Engine thread: the blocks this prefill holds for a decode side, published by the finish; null otherwise. */
    private HeldKv heldKv;

    // engine thread writes, published by the volatile writes below
    private long[] tokenTimes;
    long lastTokenNanos = -1;
    private long[] preemptedAt = NO_TIMES;
    private int preemptionCount;
    /** The stop string found in the text the engine is generating, or null. */
    private StopMatch stopMatch;
    private int stopState = StopStrings.start();
    private int tokensScanned;
    private int charsScanned;
    /** Tokens emitted, shifted left by one, with the finished flag in the low bit. */
    private volatile int published;
    /** Why the engine failed this choice, or null; written before the finish is published. */
    private String failure;

    // event loop only
    public int written;
    /** Streams with stop strings: output characters sent, and those generated but held back (vLLM's stop buffer). */
    int charsWritten;
    final StringBuilder heldText;
    /** Completions logprobs: characters (code points) streamed so far, where the next chunk's text_offset starts. */
    public int logprobOffset;
    public boolean roleSent;
    /**
     * Model time at which each token's chunk was handed to the connection (kept beside {@code tokenTimes}, null without
     * them), and the first's and the last's (always): the truth at the wire, beside the planned instants.
     */
    private long[] writtenTimes;
    private long firstWrittenNanos = -1;
    private long lastWrittenNanos = -1;
    /** More tokens were published than one turn writes: a task of its own writes on (see CompletionExchange). */
    public boolean catchingUp;
    public boolean finishHandled;
    public boolean finalChunkSent;

    public Choice(ChoiceSink exchange, int index, LongFunction<EngineRequest> requestArrivingAt, TokenText text, StopStrings stops,
           EventLoopBatch batch, boolean recordTokenTimes, OutputPlan plan) {
        this.plan = plan;
        this.exchange = exchange;
        this.index = index;
        this.requestArrivingAt = requestArrivingAt;
        this.text = text;
        this.stops = stops;
        this.heldText = stops == null ? null : new StringBuilder();
        this.batch = batch;
        this.tokenTimes = recordTokenTimes ? new long[16] : null;
    }

    /** The choice's engine request, arriving at model time {@code arrivalNanos}. */
    void arrive(long arrivalNanos) {
        request = requestArrivingAt.apply(arrivalNanos);
        request.attach(this);
    }

    /**
     * Engine thread, before a step: reads the output text through token {@code token} (the one this step may produce)
     * for the stop strings, as vLLM's detokenizer does after each token, and ends the request at the token that
     * completes the first match. As in vLLM, a match counts only once more than {@code min_tokens} tokens exist and
     * only if it ends in the new token's text; the text is cut where the stop string begins. Each token is read once,
     * so the cost is linear in the output, whatever the number of stop strings.
     */
    void scanForStop(int token) {
        if (stops == null || stopMatch != null) {
            return;
        }
        while (tokensScanned <= token) {
            int t = tokensScanned++;
            String piece = text.piece(t);
            boolean counts = t + 1 > request.minTokens();
            int found = -1;
            int end = -1;
            for (int j = 0; j < piece.length(); j++) {
                stopState = stops.step(stopState, piece.charAt(j));
                int k = counts ? stops.firstEnding(stopState) : -1;
                if (k >= 0 && (found < 0 || k < found)) {
                    found = k;
                    end = charsScanned + j + 1;
                }
            }
            charsScanned += piece.length();
            if (found >= 0) {
                stopMatch = new StopMatch(t + 1, end - stops.get(found).length(), stops.get(found));
                request.stopAt(t + 1);
                return;
            }
        }
    }

    /** Event loop: the text token {@code i} adds to a stream, its piece as released by {@link #release} with stop strings. */
    public String streamedPiece(int i, boolean last) {
        return stops == null ? text.piece(i) : release(text.piece(i), last);
    }

    /** Where token {@code i} goes: its {@link OutputPlan}'s channel, or content for plain text. */
    public OutputPlan.Channel channel(int i) {
        return plan == null ? OutputPlan.Channel.CONTENT : plan.channel(i);
    }

    /**
     * Event loop: the text a stream still owes at the finish, when its last token went out before the finish was
     * known: what {@link #release} held back with stop strings, else nothing.
     */
    public String releaseHeld() {
        return stops == null ? "" : release("", true);
    }

    /**
     * Event loop: the text a stream with stop strings may send once {@code piece} is generated, as vLLM's detokenizer
     * releases it ({@code get_next_output_text}): until the choice finishes, the last {@code longest stop - 1}
     * characters are held back, since they could be the start of a stop string that a later token completes; at the
     * finish everything up to the matched stop string goes.
     */
    String release(String piece, boolean finished) {
        heldText.append(piece);
        int release = finished ? Math.min(heldText.length(), stopTextLength() - charsWritten)
                : heldText.length() - (stops.longest() - 1);
        if (release <= 0) {
            if (finished) {
                heldText.setLength(0);
            }
            return "";
        }
        String released = heldText.substring(0, release);
        heldText.delete(0, finished ? heldText.length() : release);
        charsWritten += release;
        return released;
    }

    /** Engine thread: the stop string found so far, or null. */
    StopMatch stopMatch() {
        return stopMatch;
    }

    /** Output characters kept when a stop string ended the choice, else {@link Integer#MAX_VALUE} (read once finished). */
    public int stopTextLength() {
        return stopMatch != null && request.finishReason() == FinishReason.STOP ? stopMatch.textLength() : Integer.MAX_VALUE;
    }

    /** The stop string that ended the choice, or null (read once finished). */
    public String stopReason() {
        return stopMatch != null && request.finishReason() == FinishReason.STOP ? stopMatch.stop() : null;
    }

    /** Engine thread: a token of this choice was produced at {@code endNanos}. */
    void recordToken(long endNanos) {
        int n = request.outputTokens();
        if (tokenTimes != null) {
            if (n > tokenTimes.length) {
                tokenTimes = Arrays.copyOf(tokenTimes, Math.max(n, tokenTimes.length * 2));
            }
            tokenTimes[n - 1] = endNanos;
        }
        lastTokenNanos = endNanos;
        published = n << 1 | (request.isFinished() ? 1 : 0);
    }

    /**
     * Event loop: token {@code i}'s chunk is handed to the connection at model time {@code modelNanos} (the turn that
     * writes it began then; Netty writes to the socket within the same task unless the client is behind on reading).
     */
    public void recordWritten(int i, long modelNanos) {
        if (i == 0) {
            firstWrittenNanos = modelNanos;
        }
        lastWrittenNanos = modelNanos;
        if (tokenTimes != null) {
            if (writtenTimes == null || i >= writtenTimes.length) {
                writtenTimes = writtenTimes == null ? new long[Math.max(16, i + 1)]
                        : Arrays.copyOf(writtenTimes, Math.max(i + 1, writtenTimes.length * 2));
            }
            writtenTimes[i] = modelNanos;
        }
    }

    /** Model time the first token's chunk was handed to the connection; -1 before (and for a non-stream answer). */
    public long firstWrittenNanos() {
        return firstWrittenNanos;
    }

    /** Model time the last written token's chunk was handed to the connection; -1 before. */
    public long lastWrittenNanos() {
        return lastWrittenNanos;
    }

    /**
     * Model times at which each written token's chunk was handed to the connection, or null when token times are not
     * kept or nothing was written (a non-stream answer); event loop, or after the row was handed to the truth log.
     */
    public long[] writtenTimes() {
        return writtenTimes == null ? null : Arrays.copyOf(writtenTimes, written);
    }

    /** Engine thread: the request was preempted (recompute) in the step starting at {@code nowNanos}. */
    void recordPreemption(long nowNanos) {
        if (preemptionCount == preemptedAt.length) {
            preemptedAt = Arrays.copyOf(preemptedAt, Math.max(4, preemptionCount * 2));
        }
        preemptedAt[preemptionCount++] = nowNanos;
    }

    /**
     * What a finished prefill ({@code do_remote_decode}) holds for the decode side, as its response's
     * {@code kv_transfer_params} tells it: the block ids (vLLM's are these plus 1), the engine and request to name, the
     * side channel to notify, the tensor-parallel size and the tokens computed.
     */
    public record HeldKv(int[] blockIds, String engineId, String requestId, String host, int port, int tpSize, int computedTokens) {
    }

    /** Engine thread: this choice finished holding its KV blocks; call before the finish is published. */
    void holdKv(HeldKv held) {
        heldKv = held;
    }

    /** The blocks this prefill held when it finished (read after a finished snapshot); null when it held none. */
    public HeldKv heldKv() {
        return heldKv;
    }

    /**
     * Engine thread: the engine failed this choice ({@code why}, in our words); it then finishes as an error. Ignored
     * once the finish is published: the client may already have its answer.
     */
    void fail(String why) {
        if (failure == null && !finished(published)) {
            failure = why;
        }
    }

    /** Why the engine failed this choice, or null (read after a finished snapshot). */
    public String failure() {
        return failure;
    }

    /** Engine thread: the engine finished (or aborted) this request; publishes everything written before. */
    void markFinished() {
        published = published | 1;
    }

    /** A consistent snapshot of what the engine has published: {@code emitted(p)} tokens, {@code finished(p)}. */
    public int published() {
        return published;
    }

    public static int emitted(int published) {
        return published >>> 1;
    }

    public static boolean finished(int published) {
        return (published & 1) != 0;
    }

    /** Model times of this choice's preemptions (read after a finished snapshot). */
    public long[] preemptionTimes() {
        return Arrays.copyOf(preemptedAt, preemptionCount);
    }

    /** Model times of each token, or null if not recorded (read after a finished snapshot). */
    public long[] tokenTimes() {
        return tokenTimes == null ? null : Arrays.copyOf(tokenTimes, request.outputTokens());
    }

    /**
     * The OpenAI finish_reason ({@code tool_calls} where a tool was called), {@code abort} when the engine gave none,
     * {@code error} when it failed the choice.
     */
    public String finishName() {
        if (failure != null) {
            return "error"; // vLLM's FinishReason.ERROR
        }
        FinishReason r = request.finishReason();
        String name = r == null ? "abort" : r.openAiName();
        return plan == null ? name : plan.finishName(name, r, request.outputTokens(), exchange.streams());
    }

    /** The choice's whole text once finished: its tokens, cut at a matched stop string. */
    public String finalText() {
        String t = text.text(request.outputTokens());
        int keep = stopTextLength();
        return t.length() > keep ? t.substring(0, keep) : t;
    }
}
