package dev.infersim.queueing;

import java.util.Arrays;
import java.util.Random;

/**
 * Test oracle: continuous batching simulated iteration by iteration, as an engine runs it,
 * to measure how far the continuous-time chain is from discrete iterations. Requests arrive
 * as a Poisson stream, join the batch FCFS only at iteration boundaries, each iteration takes
 * {@link BatchingServer#iterationSeconds(int)} and gives every running request one token, and
 * a request leaves after its geometric number of tokens.
 */
final class DiscreteIterationSimulation {

    /** Means and the wait quantile over the requests after the warm-up. */
    record Result(double meanWaitSeconds, double p99WaitSeconds, double meanSojournSeconds, double meanTpotSeconds) {}

    private DiscreteIterationSimulation() {}

    static Result run(BatchingServer server, double arrivalRatePerS, int requests, long seed) {
        Random random = new Random(seed);
        double[] arrivals = new double[requests];
        double clock = 0;
        for (int i = 0; i < requests; i++) {
            clock += -Math.log(1 - random.nextDouble()) / arrivalRatePerS;
            arrivals[i] = clock;
        }
        int warmup = requests / 10;
        double[] waits = new double[requests - warmup];
        double sojournSum = 0;
        double tokenSeconds = 0;
        long tokens = 0;
        int capacity = server.maxNumSeqs();
        int[] running = new int[capacity];
        int[] remaining = new int[capacity];
        int batch = 0;
        int nextToAdmit = 0;
        int finished = 0;
        double now = 0;
        double finishProbability = 1 / server.meanOutputTokens();
        while (finished < requests) {
            if (batch == 0 && arrivals[nextToAdmit] > now) {
                now = arrivals[nextToAdmit];
            }
            while (batch < capacity && nextToAdmit < requests && arrivals[nextToAdmit] <= now) {
                if (nextToAdmit >= warmup) {
                    waits[nextToAdmit - warmup] = now - arrivals[nextToAdmit];
                }
                running[batch] = nextToAdmit++;
                remaining[batch++] = geometricLength(random, finishProbability);
            }
            double step = server.iterationSeconds(batch);
            now += step;
            tokenSeconds += step * batch;
            tokens += batch;
            for (int slot = batch - 1; slot >= 0; slot--) {
                if (--remaining[slot] == 0) {
                    if (running[slot] >= warmup) {
                        sojournSum += now - arrivals[running[slot]];
                    }
                    finished++;
                    batch--;
                    running[slot] = running[batch];
                    remaining[slot] = remaining[batch];
                }
            }
        }
        Arrays.sort(waits);
        double meanWait = Arrays.stream(waits).average().orElseThrow();
        double p99Wait = waits[(int) Math.ceil(0.99 * waits.length) - 1];
        return new Result(meanWait, p99Wait, sojournSum / waits.length, tokenSeconds / tokens);
    }

    /** L on {1, 2, ...} with P(L = k) = q (1 - q)^{k-1}, by inversion. */
    private static int geometricLength(Random random, double finishProbability) {
        if (finishProbability >= 1) {
            return 1;
        }
        return 1 + (int) Math.floor(Math.log(1 - random.nextDouble()) / Math.log(1 - finishProbability));
    }
}
