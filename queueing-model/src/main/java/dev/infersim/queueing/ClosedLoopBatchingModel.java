package dev.infersim.queueing;

/**
 * N clients in a closed loop with no think time in front of one continuous-batching server: each client sends its next
 * request the moment its last one ends ({@code vllm bench serve --max-concurrency N --request-rate inf}). It is the
 * interactive system of mean-value analysis with think time Z = 0 and one load-dependent server (Lazowska, Zahorjan,
 * Graham and Sevcik, "Quantitative System Performance", 1984, sections 6.4 and 8.2): with Z = 0 the population in the
 * server is N at every instant, so the load-dependent MVA recursion collapses to its last step, Little's law at
 * population N, X(N) = N / R(N), with the server's state fixed at n = min(N, B) running and N - n waiting.
 * <ul>
 *   <li>N &lt;= B: nobody waits. A request's slot frees at the end of an iteration and its client's next request is
 *       prefilled in the next one, beside the others that finished with it: the tagged prompt is one of
 *       K = 1 + Poisson(N / E[L]) admitted together (Palm: an arrival sees the group it is in size-biased), at a
 *       uniformly random place among them, with N - K decoding. TTFT = E[first token of that prompt]; TPOT is the mean
 *       iteration tau(N) (prefill share of the steady admissions included); R = TTFT + (E[L] - 1) tau(N); X = N / R.</li>
 *   <li>N &gt; B: the server is always full, so X = mu_B = B / (E[L] tau(B)), R = N / X, TPOT = tau(B), and the first
 *       token comes after the queue: TTFT = R - (E[L] - 1) tau(B).</li>
 * </ul>
 * Fixed output lengths (squared coefficient of variation 0), as {@code --random-output-len} with
 * {@code --ignore-eos} gives, keep the clients in step: they start together, finish together and their next requests
 * are prefilled together, in waves of k = min(N, B), as long as one iteration's token budget takes a wave's prompts
 * (past it chunked prefill staggers the first tokens and the waves break up into the Poisson case above). Then a wave is the prefill of k prompts with nothing decoding
 * beside them, then E[L] - 1 iterations of k decodes: TTFT = E[first token of one of k prompts prefilled together],
 * TPOT = the decode iteration of k, and with N &gt; B, X = k / (the wave's time). Means only: the distribution of each
 * metric over requests is not modelled.
 */
public final class ClosedLoopBatchingModel {
    private static final int MAX_GROUP = 64;

    private final int clients;
    private final int batch;
    private final double throughputPerS;
    private final double meanTtftSeconds;
    private final double meanTpotSeconds;
    private final double meanE2elSeconds;
    private final double meanQueueSeconds;

    /** The model of {@code clients} >= 1 clients in front of {@code server}. */
    public ClosedLoopBatchingModel(BatchingServer server, int clients) {
        Checks.positive("clients", clients);
        this.clients = clients;
        int b = server.maxNumSeqs();
        this.batch = Math.min(clients, b);
        double meanOutput = server.meanOutputTokens();
        IterationTimes times = server.iterationTimes();
        boolean lockstep = server.outputTokens().squaredCoefficientOfVariation() < 1e-12
                && times.prefillIterations(0, batch) <= 1;
        double tau = lockstep ? times.decodeSeconds(batch) : server.iterationSeconds(batch);
        this.meanTpotSeconds = tau;
        if (lockstep) {
            double firstToken = 0;
            for (int j = 0; j < batch; j++) {
                firstToken += times.firstTokenSeconds(0, batch, j);
            }
            firstToken /= batch;
            double wave = times.prefillSeconds(0, batch) + (meanOutput - 1) * tau;
            this.throughputPerS = clients <= b ? clients / (firstToken + (meanOutput - 1) * tau) : batch / wave;
            this.meanE2elSeconds = clients / throughputPerS;
            this.meanTtftSeconds = meanE2elSeconds - (meanOutput - 1) * tau;
            this.meanQueueSeconds = Math.max(0, meanTtftSeconds - firstToken);
        } else if (clients <= b) {
            this.meanTtftSeconds = firstTokenSeconds(times, clients, clients / meanOutput);
            this.meanE2elSeconds = meanTtftSeconds + (meanOutput - 1) * tau;
            this.throughputPerS = clients / meanE2elSeconds;
            this.meanQueueSeconds = 0;
        } else {
            this.throughputPerS = server.departureRatePerS(b);
            this.meanE2elSeconds = clients / throughputPerS;
            this.meanTtftSeconds = meanE2elSeconds - (meanOutput - 1) * tau;
            // in service a request spends B / X (Little at the server), the rest of its response in the queue
            this.meanQueueSeconds = meanE2elSeconds - b / throughputPerS;
        }
    }

    /** E[first token] of a prompt admitted with K - 1 others, K = 1 + Poisson(theta), beside N - K decodes. */
    private static double firstTokenSeconds(IterationTimes times, int clients, double theta) {
        double poisson = Math.exp(-theta);
        double weight = 0;
        double sum = 0;
        for (int others = 0; others < MAX_GROUP && others < clients; others++) {
            int k = others + 1;
            double position = 0;
            for (int j = 0; j < k; j++) {
                position += times.firstTokenSeconds(clients - k, k, j);
            }
            sum += poisson * position / k;
            weight += poisson;
            poisson *= theta / (others + 1);
        }
        return sum / weight;
    }

    public int clients() { return clients; }
    /** Requests running at once, min(N, B). */
    public int batchSize() { return batch; }
    /** Completions per second, X(N). */
    public double throughputPerS() { return throughputPerS; }
    public double meanTtftSeconds() { return meanTtftSeconds; }
    public double meanTpotSeconds() { return meanTpotSeconds; }
    /** The mean response R(N) = N / X(N). */
    public double meanE2elSeconds() { return meanE2elSeconds; }
    /** Mean wait for a slot: 0 up to B clients. */
    public double meanQueueingDelaySeconds() { return meanQueueSeconds; }
}
