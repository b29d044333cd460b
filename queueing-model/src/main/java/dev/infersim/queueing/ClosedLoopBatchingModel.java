package dev.infersim.queueing;

/**
 * N clients in a closed loop with no think time in front of one continuous-batching server: each client sends its next
 * request the moment its last one ends ({@code vllm bench serve --max-concurrency N --request-rate inf}). It is the
 * interactive system of mean-value analysis with think time Z = 0 and one load-dependent server (Lazowska, Zahorjan,
 * Graham and Sevcik, "Quantitative System Performance", 1984, sections 6.4 and 8.2): with Z = 0 the population in the
 * server is N at every instant, so the load-dependent MVA recursion collapses to its last step, Little's law at
 * population N, X(N) = N / R(N), with the server's state fixed at n = min(N, B) running and N - n waiting.
 *
 * <p>A request arrives when its client's last one ends, at the end of an iteration, so it waits for no iteration
 * boundary; what its first token waits for is the prompts that arrive with it. The clients start together (the run's
 * first requests all at once), so their arrivals come as a cohort, and which {@link Regime} applies is how long the
 * cohort lasts:
 * <ul>
 *   <li>{@link Regime#LOCK_STEP}: equal output lengths (squared coefficient of variation 0, as {@code --ignore-eos}
 *       gives) keep the cohort for ever. Its requests finish in the iteration their prompts were prefilled in, L
 *       iterations on, and their next prompts are prefilled together in the next one. Where one iteration's token
 *       budget beside the others' decodes takes s &lt; N of the prompts, the cohort splits into m = ceil(N / s) groups
 *       that take their turns, and stays so: each group's prompts in one iteration beside N - s decodes, every client's
 *       cycle L iterations long, of which m carry a group's prefill. A request's TTFT is its group's prefill iteration;
 *       the cycle C = sum of the m prefill episodes + (L - m) decode iterations of N; X = N / C; a request's TPOT is
 *       (C - its prefill) / (L - 1). The first round, all N prompts at once, takes them in turn (chunked prefill).</li>
 *   <li>{@link Regime#COHORT} and {@link Regime#DISSOLVED}: lengths that vary spread the cohort. After j - 1 requests a
 *       client's arrival is off the cohort's by the sum of its j - 1 lengths' deviations (one iteration a token), so
 *       the arrivals of round j spread over sigma_j^2 = sigma_0^2 + (j - 1) Var(L) iterations (sigma_0^2 the first
 *       round's spread by its prefill turns), wrapped on the cycle of E[L] iterations. A request arriving in
 *       iteration x (probability p_x of that wrapped normal) shares its prefill with J ~ Binomial(N - 1, p_x) others,
 *       the clients' phases taken as independent, and gets its first token at its turn among the 1 + J
 *       ({@link IterationTimes#firstTokenSeconds}). As sigma_j grows past the cycle the phases become uniform, p_x =
 *       1 / E[L]: the Poisson-like stream of a dissolved cohort. The cohort counts as dissolved at the round where the
 *       wrapped normal's first harmonic, exp(-2 pi^2 sigma^2 / E[L]^2), falls below 5% ({@link #roundsToDissolve});
 *       the regime is {@code COHORT} where measured rounds come before it, {@code DISSOLVED} where none does. TTFT is
 *       averaged over the measured rounds (request i in round i / N + 1); TPOT is the mean iteration tau(N), the
 *       steady admissions' prefill share included; R = TTFT + (E[L] - 1) tau(N); X = N / R.</li>
 *   <li>N &gt; B (whatever the lengths): the server is always full, so X = mu_B = B / (E[L] tau(B)) (equal lengths: B
 *       over the cycle of B clients), R = N / X, TPOT = tau(B), and the first token comes after the queue:
 *       TTFT = R - (E[L] - 1) tau(B).</li>
 * </ul>
 * Means only: the distribution of each metric over requests is not modelled.
 */
public final class ClosedLoopBatchingModel {
    /** The first harmonic of the arrivals' phases below which the cohort counts as dissolved. */
    static final double DISSOLVED_HARMONIC = 0.05;
    /** Past this first harmonic the phases are uniform to the rounding of the means: rounds on cost nothing more. */
    private static final double UNIFORM_HARMONIC = 1e-4;

    /** How the clients' arrivals come. */
    public enum Regime {
        /** Equal lengths: the clients move in step, their prompts prefilled together (by groups past the budget). */
        LOCK_STEP,
        /** Lengths vary, and the cohort of the clients' start has not dissolved in some of the measured rounds. */
        COHORT,
        /** Lengths vary, and the cohort dissolved before the measured rounds: arrivals spread over the cycle. */
        DISSOLVED
    }

    private final int clients;
    private final int batch;
    private final Regime regime;
    private final double roundsToDissolve;
    private final int groups;
    private final double throughputPerS;
    private final double meanTtftSeconds;
    private final double meanTpotSeconds;
    private final double meanE2elSeconds;
    private final double meanQueueSeconds;

    /** The steady state of {@code clients} >= 1 clients in front of {@code server}: the rounds after the cohort's start. */
    public ClosedLoopBatchingModel(BatchingServer server, int clients) {
        this(server, clients, Long.MAX_VALUE / 2, Long.MAX_VALUE);
    }

    /**
     * {@code clients} >= 1 clients in front of {@code server}, the means taken over their requests {@code warmups} (the
     * first ones, not measured) to {@code requests} (all of them, in the order they are sent).
     */
    public ClosedLoopBatchingModel(BatchingServer server, int clients, long warmups, long requests) {
        Checks.positive("clients", clients);
        if (warmups < 0 || requests <= warmups) {
            throw new IllegalArgumentException("requests must exceed warmups >= 0, got " + requests + " and " + warmups);
        }
        this.clients = clients;
        int b = server.maxNumSeqs();
        this.batch = Math.min(clients, b);
        double meanOutput = server.meanOutputTokens();
        double lengthScv = server.outputTokens().squaredCoefficientOfVariation();
        double lengthVariance = lengthScv * meanOutput * meanOutput;
        IterationTimes times = server.iterationTimes();
        boolean lockstep = lengthScv < 1e-9; // equal lengths, up to the rounding of their moments
        Cohort cohort = new Cohort(times, batch);
        if (lockstep) {
            this.regime = Regime.LOCK_STEP;
            this.roundsToDissolve = Double.POSITIVE_INFINITY;
            Groups g = cohort.groups(meanOutput);
            this.groups = g.count;
            this.meanTpotSeconds = g.meanTpot;
            double steadyTtft = g.meanFirstToken;
            if (clients <= b) {
                double firstRound = measuredShare(clients, warmups, requests, 1, 1);
                this.meanTtftSeconds = firstRound * cohort.together(batch - 1) + (1 - firstRound) * steadyTtft;
                this.throughputPerS = clients / g.cycle;
                this.meanE2elSeconds = clients / throughputPerS;
                this.meanQueueSeconds = 0;
            } else {
                this.throughputPerS = batch / g.cycle;
                this.meanE2elSeconds = clients / throughputPerS;
                this.meanTtftSeconds = meanE2elSeconds - (g.cycle - steadyTtft);
                this.meanQueueSeconds = meanE2elSeconds - g.cycle;
            }
        } else {
            this.groups = 1;
            double tau = server.iterationSeconds(batch);
            this.meanTpotSeconds = tau;
            double cycle = Math.max(1, meanOutput);
            double startSpread = cohort.firstRoundSpreadVariance();
            this.roundsToDissolve = 1 + Math.max(0, (dissolvedVariance(cycle, DISSOLVED_HARMONIC) - startSpread)
                    / lengthVariance);
            if (clients <= b) {
                this.regime = warmups / clients + 1 >= roundsToDissolve ? Regime.DISSOLVED : Regime.COHORT;
                this.meanTtftSeconds = cohort.meanFirstToken(cycle, startSpread, lengthVariance, warmups, requests);
                this.meanE2elSeconds = meanTtftSeconds + (meanOutput - 1) * tau;
                this.throughputPerS = clients / meanE2elSeconds;
                this.meanQueueSeconds = 0;
            } else {
                this.regime = Regime.DISSOLVED;
                this.throughputPerS = server.departureRatePerS(b);
                this.meanE2elSeconds = clients / throughputPerS;
                this.meanTtftSeconds = meanE2elSeconds - (meanOutput - 1) * tau;
                // in service a request spends B / X (Little at the server), the rest of its response in the queue
                this.meanQueueSeconds = meanE2elSeconds - b / throughputPerS;
            }
        }
    }

    /** The variance of the wrapped normal on a cycle of {@code cycle} iterations whose first harmonic is {@code harmonic}. */
    private static double dissolvedVariance(double cycle, double harmonic) {
        return -Math.log(harmonic) * cycle * cycle / (2 * Math.PI * Math.PI);
    }

    /** The share of the measured requests (indices warmups..requests - 1) in rounds first..last (request i in i / N + 1). */
    private static double measuredShare(int clients, long warmups, long requests, long first, long last) {
        long from = Math.max(warmups, (first - 1) * clients);
        long to = Math.min(requests, saturatingMultiply(last, clients));
        return Math.max(0, to - from) / (double) (requests - warmups);
    }

    private static long saturatingMultiply(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        return high != 0 || a * b < 0 ? Long.MAX_VALUE : a * b;
    }

    /** The first tokens of a cohort of N clients running together, priced by the server's iteration times. */
    private static final class Cohort {
        private final IterationTimes times;
        private final int clients;
        /** ln k! for k = 0..N - 1. */
        private final double[] logFactorial;

        Cohort(IterationTimes times, int clients) {
            this.times = times;
            this.clients = clients;
            this.logFactorial = new double[clients];
            for (int k = 2; k < clients; k++) {
                logFactorial[k] = logFactorial[k - 1] + Math.log(k);
            }
        }

        /**
         * The mean first token of 1 + others prompts arriving together while the rest of the N decode: each at its turn
         * among them (FCFS; one iteration for all where the budget takes them).
         */
        double together(int others) {
            int k = others + 1;
            int decoding = clients - k;
            double sum = 0;
            for (int j = 0; j < k; j++) {
                sum += times.firstTokenSeconds(decoding, k, j);
            }
            return sum / k;
        }

        /** Prompts that one iteration takes in whole beside the rest of the N decoding: at least 1. */
        int groupSize() {
            int s = clients;
            while (s > 1 && times.prefillIterations(clients - s, s) > 1 + 1e-9) {
                s--;
            }
            return s;
        }

        /** The variance of the first round's first tokens, in iterations: its N prompts taken in turn over m iterations. */
        double firstRoundSpreadVariance() {
            double m = Math.max(1, Math.round(times.prefillIterations(0, clients)));
            return (m * m - 1) / 12;
        }

        /**
         * The lock step's groups: s prompts each (the last the rest), each prefilled in its own iteration beside the
         * others' decodes, and the cycle of L iterations they share.
         */
        Groups groups(double meanOutput) {
            int s = groupSize();
            int m = (clients + s - 1) / s;
            double prefills = 0;
            double firstTokens = 0;
            double prefillIterations = 0;
            double weightedPrefill = 0;
            for (int i = 0; i < m; i++) {
                int size = Math.min(s, clients - i * s);
                double episode = times.prefillSeconds(clients - size, size);
                prefills += episode;
                prefillIterations += times.prefillIterations(clients - size, size);
                weightedPrefill += size * episode;
                firstTokens += size * together(size - 1);
            }
            if (s == 1 && clients > 1 && times.prefillIterations(clients - 1, 1) > 1 + 1e-9) {
                firstTokens = clients * spilledFirstToken(m);
            }
            // each client's L tokens: its own prefill's last iteration, the others' prefill iterations, the rest decodes
            double decodes = Math.max(0, meanOutput - 1 - (prefillIterations - prefillIterations / m));
            double cycle = prefills + decodes * times.decodeSeconds(clients);
            double meanTpot = meanOutput > 1 ? (cycle - weightedPrefill / clients) / (meanOutput - 1) : 0;
            return new Groups(m, cycle, firstTokens / clients, meanTpot);
        }

        /**
         * The mean first token of a lock step whose single prompt overflows what an iteration's budget leaves beside the
         * decodes (q = P / c > 1 iterations of it). The first round takes the m = N prompts in turn, each one's last
         * chunk sharing an iteration with the next one's first, so their first tokens come about q iterations apart;
         * each client sends its next prompt L iterations after its first token, so the next round's prompts arrive as
         * far apart as they were served, in a pipeline that never empties: prompt i starts when its predecessor's
         * remainder is still in the budget and ends ceil(q) full iterations later (its start ceil(q) - 1 iterations
         * before the one that completes it). The round's first prompt finds no predecessor's remainder and its last
         * ends in the short iteration of the round's remainder: those two are priced as a prompt alone (fitted to the
         * simulator at N = 2 to 32, bench/queueing/README.md, where the m - 1 of the first derivation came out 10-16%
         * long at N = 4 and 8). Before this, predict priced every prompt as alone: 235 ms against
         * 417 simulated for 8,192-token prompts in a budget of 8,192 at N = 16 (bench/queueing/README.md).
         */
        double spilledFirstToken(int m) {
            int decoding = clients - 1;
            double alone = times.prefillSeconds(decoding, 1);
            double aloneIterations = times.prefillIterations(decoding, 1);
            double moreIterations = times.prefillIterations(decoding, 2) - aloneIterations;
            // a full iteration of prefill beside the decodes: what a second prompt adds, per iteration it adds
            double full = moreIterations >= 1 - 1e-9
                    ? (times.prefillSeconds(decoding, 2) - alone) / moreIterations
                    : alone / aloneIterations;
            double spanned = Math.ceil(aloneIterations - 1e-9);
            return ((m - 2) * spanned * full + 2 * alone) / m;
        }

        /**
         * The mean first token over the measured rounds when lengths vary: round 1 all together; round j a wrapped
         * normal of variance startSpread + (j - 1) Var(L) on the cycle, J ~ Binomial(N - 1, p_x) arriving with a
         * request in iteration x; from the round the phases are uniform on, each round's mean is the uniform one.
         */
        double meanFirstToken(double cycle, double startSpread, double lengthVariance, long warmups, long requests) {
            double[] withOthers = new double[clients];
            for (int j = 0; j < clients; j++) {
                withOthers[j] = together(j);
            }
            if (clients == 1) {
                return withOthers[0]; // nobody to share a prefill with, whatever the round
            }
            int iterations = (int) Math.max(1, Math.round(cycle));
            double uniform = binomialMean(withOthers, 1.0 / iterations);
            long uniformFrom = 1 + (long) Math.ceil(Math.max(0,
                    (dissolvedVariance(cycle, UNIFORM_HARMONIC) - startSpread) / lengthVariance));
            long firstRound = warmups / clients + 1;
            long lastRound = (requests - 1) / clients + 1;
            double sum = 0;
            for (long round = firstRound; round <= Math.min(lastRound, uniformFrom - 1); round++) {
                double mean = round == 1 ? withOthers[clients - 1]
                        : roundMean(withOthers, iterations, startSpread + (round - 1) * lengthVariance);
                sum += measuredShare(clients, warmups, requests, round, round) * mean;
            }
            if (lastRound >= uniformFrom) {
                sum += measuredShare(clients, warmups, requests, Math.max(firstRound, uniformFrom), lastRound) * uniform;
            }
            return sum;
        }

        /** Sum over iterations x of p_x E[f(J)], J ~ Binomial(N - 1, p_x), p the wrapped normal of this variance. */
        private double roundMean(double[] withOthers, int iterations, double variance) {
            double sd = Math.sqrt(variance);
            double[] p = new double[iterations];
            double total = 0;
            int wraps = (int) Math.ceil(8 * sd / iterations) + 1;
            for (int x = 0; x < iterations; x++) {
                for (int w = -wraps; w <= wraps; w++) {
                    double at = x + (double) w * iterations;
                    p[x] += normalMass(at - 0.5, at + 0.5, sd);
                }
                total += p[x];
            }
            double mean = 0;
            for (int x = 0; x < iterations; x++) {
                if (p[x] > 1e-12) {
                    mean += p[x] / total * binomialMean(withOthers, p[x] / total);
                }
            }
            return mean;
        }

        /** E[f(J)] for J ~ Binomial(N - 1, p): from the mode outwards by the ratio of successive masses, to 1e-15 of it. */
        private double binomialMean(double[] f, double p) {
            int n = f.length - 1;
            if (p >= 1 - 1e-12 || n == 0) {
                return f[n];
            }
            double odds = p / (1 - p);
            int mode = (int) Math.min(n, Math.floor((n + 1) * p));
            double modeMass = Math.exp(logFactorial[n] - logFactorial[mode] - logFactorial[n - mode]
                    + mode * Math.log(p) + (n - mode) * Math.log1p(-p));
            double sum = modeMass * f[mode];
            double weight = modeMass;
            double mass = modeMass;
            for (int j = mode; j < n && mass > 1e-15 * modeMass; j++) {
                mass *= (double) (n - j) / (j + 1) * odds;
                sum += mass * f[j + 1];
                weight += mass;
            }
            mass = modeMass;
            for (int j = mode; j > 0 && mass > 1e-15 * modeMass; j--) {
                mass *= (double) j / (n - j + 1) / odds;
                sum += mass * f[j - 1];
                weight += mass;
            }
            return sum / weight;
        }

        /** The mass of N(0, sd^2) on [a, b); all of it at 0 for a degenerate normal. */
        private static double normalMass(double a, double b, double sd) {
            if (sd < 1e-9) {
                return a <= 0 && 0 < b ? 1 : 0;
            }
            return 0.5 * (erfc(-b / (sd * Math.sqrt(2))) - erfc(-a / (sd * Math.sqrt(2))));
        }

        private static double erfc(double x) {
            return org.apache.commons.math3.special.Erf.erfc(x);
        }
    }

    /** The lock step's m groups, the cycle every client runs, a request's mean first token and mean TPOT. */
    private record Groups(int count, double cycle, double meanFirstToken, double meanTpot) {
    }

    public int clients() { return clients; }
    /** Requests running at once, min(N, B). */
    public int batchSize() { return batch; }
    /** Which regime the clients' arrivals are in. */
    public Regime regime() { return regime; }
    /**
     * The round (request of each client) at which a cohort with varying lengths counts as dissolved: its arrivals'
     * first harmonic on the cycle falls below {@value #DISSOLVED_HARMONIC}; infinite in lock step.
     */
    public double roundsToDissolve() { return roundsToDissolve; }
    /** The groups a lock step's cohort takes its prefills in (1 where one iteration takes all); 1 otherwise. */
    public int lockStepGroups() { return groups; }
    /** Completions per second, X(N). */
    public double throughputPerS() { return throughputPerS; }
    public double meanTtftSeconds() { return meanTtftSeconds; }
    public double meanTpotSeconds() { return meanTpotSeconds; }
    /** The mean response R(N) = N / X(N). */
    public double meanE2elSeconds() { return meanE2elSeconds; }
    /** Mean wait for a slot: 0 up to B clients. */
    public double meanQueueingDelaySeconds() { return meanQueueSeconds; }
}
