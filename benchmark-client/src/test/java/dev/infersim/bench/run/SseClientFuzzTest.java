package dev.infersim.bench.run;

import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.infersim.bench.measure.MeasuredWindow;
import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.WorkloadRequest;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.AfterAll;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coverage-guided fuzzing (Jazzer) of the client's whole handling of one streamed response, past the reader that
 * {@link SseReaderFuzzTest} fuzzes: whatever a server streams, in whatever reads at whatever times, the request ends
 * exactly once, as a success with a non-negative token count or as a failure with a type and a message, its ground
 * truth read or ignored, and the measured window takes it without throwing.
 *
 * <p>{@code JAZZER_FUZZ=1} fuzzes for {@code maxDuration} from the seeds under
 * {@code src/test/resources/dev/infersim/bench/SseClientFuzzTestInputs} (CI: {@code .ci/run}).
 */
class SseClientFuzzTest {
    private static final long MS = 1_000_000;
    private static final Vertx VERTX = Vertx.vertx();
    /** Counts whitespace-separated words: a tokenizer that never throws, as the real ones. */
    private static final TokenCounter WORDS = new TokenCounter() {
        @Override
        public int countTokens(String text) {
            return text.isBlank() ? 0 : text.trim().split("\\s+").length;
        }

        @Override
        public String name() {
            return "words";
        }
    };

    @AfterAll
    static void stop() {
        VERTX.close().await();
    }

    @FuzzTest(maxDuration = "10s")
    void everyStreamEndsOnceAsASuccessOrATypedFailure(FuzzedDataProvider data) {
        int reads = data.consumeInt(1, 16);
        int[] cuts = new int[reads - 1];
        long[] gapsMs = new long[reads];
        for (int i = 0; i < cuts.length; i++) {
            cuts[i] = data.consumeInt(0, 1 << 12);
        }
        for (int i = 0; i < reads; i++) {
            gapsMs[i] = data.consumeInt(0, 1000);
        }
        byte[] stream = data.consumeRemainingAsBytes();

        MeasuredWindow window = new MeasuredWindow(0, 0, GoodputSlo.NONE, null, false);
        List<RequestOutcome> finished = new ArrayList<>();
        StreamExchange x = new StreamExchange(ClientClock.system(VERTX), null, null, WORDS, null, null, (e, outcome) -> {
            finished.add(outcome);
            window.record(outcome);
        });
        x.prepare(new WorkloadRequest(0, 0, 16, 0, -1, 8, 8, 1, 0, false, "random", null), Buffer.buffer("{}"),
                SendSchedule.unscheduled(0), true, 60_000);
        long now = 0;
        int from = 0;
        for (int i = 0; i < reads; i++) {
            int to = i < cuts.length ? Math.min(stream.length, from + cuts[i]) : stream.length;
            now += gapsMs[i] * MS;
            x.read(Buffer.buffer().appendBytes(stream, from, to - from), now);
            from = to;
        }
        x.ended(now);

        assertEquals(1, finished.size(), "the request ends exactly once");
        RequestOutcome o = finished.get(0);
        if (o.succeeded()) {
            assertNull(o.errorType(), o.errorMessage());
            assertTrue(o.outputTokens() >= 0, "tokens " + o.outputTokens());
        } else {
            assertNotNull(o.errorType(), "a failure has a type");
            assertNotNull(o.errorMessage(), "a failure says why");
        }
    }
}
