package dev.infersim.bench.run;

import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.bench.measure.TokenCountMethod;
import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The metric definitions applied to one stream read in virtual time: each read of the network carries its own time,
 * so the figures are exact. (How close the client's clock gets to a real server's is measured by
 * {@code bench/benchmark-client/precision.sh} against the mock's ground truth.)
 */
class StreamExchangeTimingTest {
    private static final long MS = 1_000_000;
    private static final long ORIGIN = 5_000 * MS;

    /**
     * First token 200 ms after the scheduled send, then 2 tokens every 60 ms (9 in all): TTFT runs to the read that
     * completes the first content chunk, per-token ITL splits each 60 ms chunk gap into two 30 ms gaps, ICL keeps the
     * chunk gap (vLLM's ITL), TPOT = 240 ms / 8 tokens, and the TTFT error is against the server's own 195 ms.
     */
    @Test
    void ttftItlIclAndTpotFollowTheMetricDefinitions() {
        MeasuredWindow window = new MeasuredWindow(ORIGIN, ORIGIN, GoodputSlo.NONE, null, true);
        List<RequestOutcome> finished = new ArrayList<>();
        StreamExchange x = new StreamExchange(new VirtualClientClock(ORIGIN + 441 * MS), null, null, WORDS, null, null,
                (e, outcome) -> {
                    finished.add(outcome);
                    window.record(outcome);
                });
        x.prepare(new WorkloadRequest(0, 0, 16, 0, -1, 9, 9, 1, 0, false, "random", null), Buffer.buffer("{}"),
                SendSchedule.unscheduled(ORIGIN), false, 60_000);
        x.sentAt(ORIGIN, -1);

        String first = chunk(2, 2, false);
        x.read(Buffer.buffer(first.substring(0, 20)), ORIGIN + 199 * MS); // an event split over two reads
        x.read(Buffer.buffer(first.substring(20)), ORIGIN + 200 * MS);
        x.read(Buffer.buffer(chunk(2, 4, false)), ORIGIN + 260 * MS);
        x.read(Buffer.buffer(chunk(2, 6, false)), ORIGIN + 320 * MS);
        x.read(Buffer.buffer(chunk(2, 8, false)), ORIGIN + 380 * MS);
        x.read(Buffer.buffer(chunk(1, 9, true)), ORIGIN + 440 * MS);
        x.read(Buffer.buffer("data: {\"choices\":[],\"usage\":" + usage(9) + ",\"infersim\":{\"choices\":[{\"wall\":"
                + "{\"arrival_ms\":1000.0,\"first_token_ms\":1195.0,\"e2e_ms\":436.0}}]}}\n\ndata: [DONE]\n\n"), ORIGIN + 441 * MS);
        x.ended(ORIGIN + 441 * MS);

        assertEquals(1, finished.size());
        RequestOutcome o = finished.get(0);
        assertTrue(o.succeeded(), o.errorMessage());
        assertEquals(TokenCountMethod.SERVER_USAGE_PER_CHUNK, o.tokens().countMethod());
        assertEquals(9, o.outputTokens());
        assertEquals(200, window.stats().ttft().medianMs(), 0.2, "TTFT");
        assertEquals(30, window.stats().itl().medianMs(), 0.05, "per-token ITL");
        assertEquals(60, window.stats().itl().maxMs(), 0.1, "the last chunk's one token keeps its whole gap");
        assertEquals(60, window.stats().icl().medianMs(), 0.1, "chunk ICL");
        assertEquals(30, window.stats().tpot().medianMs(), 0.05, "TPOT");
        assertEquals(440, window.stats().e2el().medianMs(), 0.5, "E2EL to the last token");
        assertEquals(5, window.truthError().ttftAbsErrorMs().p50(), 0.01, "TTFT error against the server's truth");
        assertEquals(4, window.truthError().e2elAbsErrorMs().p50(), 0.01, "E2EL error against the server's truth");
        assertEquals(0, window.sendLag().maxMs(), "sent on time");
    }

    private static String chunk(int tokens, int total, boolean last) {
        return "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\""
                + " tok".repeat(tokens) + "\",\"finish_reason\":" + (last ? "\"length\"" : "null") + "}],\"usage\":"
                + usage(total) + "}\n\n";
    }

    private static String usage(int completion) {
        return "{\"prompt_tokens\":16,\"completion_tokens\":" + completion + ",\"total_tokens\":" + (16 + completion)
                + "}";
    }

    /** Never asked: every chunk carries the server's usage. */
    private static final TokenCounter WORDS = new TokenCounter() {
        @Override
        public int countTokens(String text) {
            throw new AssertionError("the tokenizer was asked although the server counted every chunk");
        }

        @Override
        public String name() {
            return "none";
        }
    };
}
