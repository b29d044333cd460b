package dev.infersim.bench.run;

import dev.infersim.bench.measure.RequestOutcome;
import dev.infersim.bench.measure.SendSchedule;
import dev.infersim.bench.measure.ServerReply;
import dev.infersim.bench.measure.ServerTruth;
import dev.infersim.bench.measure.TokenArrivals;
import dev.infersim.workload.WorkloadRequest;

import java.util.Arrays;

/** Outcomes of streamed requests as a lane hands them over, made directly for tests of what a window records. */
final class TestOutcomes {
    private TestOutcomes() {
    }

    /**
     * A request sent on schedule at {@code sendNanos} whose {@code chunks} chunks of text arrived evenly from
     * {@code firstNanos} to {@code lastNanos}, one counted token each (read lateness unknown), with the server's
     * {@code usage.completion_tokens} of {@code outputTokens} and its {@code truth} (or null).
     */
    static RequestOutcome streamed(WorkloadRequest r, long sendNanos, long firstNanos, long lastNanos, int chunks,
                                   int outputTokens, int reorderedChunks, ServerTruth truth) {
        long[] at = new long[chunks];
        for (int k = 0; k < chunks; k++) {
            at[k] = chunks == 1 ? firstNanos : firstNanos + (lastNanos - firstNanos) * k / (chunks - 1);
        }
        int[] tokens = new int[chunks];
        Arrays.fill(tokens, 1);
        long[] lateness = new long[chunks];
        Arrays.fill(lateness, -1);
        TokenArrivals arrivals = new TokenArrivals(at, tokens, lateness, chunks, new long[0], new int[0], 0, chunks,
                reorderedChunks, lastNanos, null, null);
        ServerReply reply = new ServerReply(-1, -1, -1, outputTokens, null, null, truth);
        return new RequestOutcome(r, new SendSchedule(sendNanos, SendSchedule.NO_GAP, sendNanos), sendNanos, sendNanos,
                -1, arrivals, reply, null, null, lastNanos);
    }
}
