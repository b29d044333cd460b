package dev.infersim.queueing;

/**
 * The time to first token of the continuous-batching chain. An engine admits requests between iterations only. An
 * arrival that finds n in 1..B-1 running lands in an iteration, which carries K prompts (tau_K(n); K = 0 only decodes),
 * waits for its end, then shares its own prefill with the J prompts that arrived during the iteration it landed in
 * (Poisson(lambda tau_K) for Poisson arrivals). Iterations are landed in as often as arrivals fall in them: by length
 * for Poisson arrivals, and for bursty ones more often after a full iteration (the clump before); see
 * {@link IterationEpisodes}. An arrival to an idle engine starts at once; one that queues adds the admission wait of
 * {@link StationaryBatchChain} and is prefilled at B - 1.
 */
final class FirstTokenTime {

    /** The number of bins of the tabulated TTFT distribution below the admission wait's exponential tail. */
    private static final int TTFT_BINS = 8192;
    /** Ranks of an arrival among the prompts prefilled in turn with it that the TTFT follows one by one; beyond, bins. */
    private static final int POSITION_PIECES = 8;

    private final IterationTimes times;
    private final int maxBatch;
    private final StationaryBatchChain chain;
    private final IterationEpisodes episodes;
    /** [boundary wait, own prefill, shared prefill] means; built on first use. */
    private double[] ttftParts;
    /** P(TTFT <= i h, no admission wait) on a grid of step h; built on first use. */
    private double[] ttftGrid;
    private double ttftGridStep;

    FirstTokenTime(BatchingServer server, StationaryBatchChain chain, IterationEpisodes episodes) {
        this.times = server.iterationTimes();
        this.maxBatch = server.maxNumSeqs();
        this.chain = chain;
        this.episodes = episodes;
    }

    /** Receives the pieces of the TTFT distribution of arrivals that find a free slot. */
    interface PieceSink {
        /**
         * TTFT uniform on [start, start + width] with this probability: width is the iteration landed in (its half is
         * the mean boundary wait), start the arrival's prefill with its co-admitted prompts, {@code own} that prefill
         * alone.
         */
        void piece(double probability, double start, double width, double own);
    }

    /**
     * Walks the TTFT of every arrival that finds n in 0..B-1 running. At n = 0 it starts at once: its prefill alone.
     * Otherwise it lands in an iteration that carries K prompts ({@link IterationEpisodes#promptsPerIteration}), of
     * length tau_K(n), chosen as often as arrivals fall in it ({@link IterationEpisodes#landedIterations}; by its length
     * for Poisson arrivals), waits U tau_K for it to end, then is prefilled with the J prompts that arrived during it
     * ({@link IterationEpisodes#coAdmitted}): TTFT = U tau_K + prefill(n, 1 + J), uniform on [prefill(n, 1 + J),
     * prefill(n, 1 + J) + tau_K]. Where chunked prefill takes those prompts in turn, its first token comes when its own
     * turn ends: it is equally likely to be any of the 1 + J (those that arrived before it go first),
     * {@link IterationTimes#firstTokenSeconds}.
     */
    void walkPieces(PieceSink sink) {
        double alone = times.prefillSeconds(0, 1);
        double seen = chain.belowLimitScale();
        sink.piece(seen * chain.probabilityOfState(0), alone, 0, alone);
        for (int n = 1; n < maxBatch; n++) {
            double p = seen * chain.probabilityOfState(n);
            if (p < 1e-15) {
                continue;
            }
            double own = times.prefillSeconds(n, 1);
            double[] weights = episodes.landedIterations(n);
            for (int k = 0; k < weights.length; k++) {
                double landed = p * weights[k];
                if (landed < 1e-15) {
                    continue;
                }
                double[] others = episodes.coAdmitted(n, k);
                double length = episodes.iterationWithPrompts(n, k);
                for (int j = 0; j < others.length; j++) {
                    double mass = landed * others[j];
                    if (mass < 1e-15) {
                        continue;
                    }
                    double together = times.prefillSeconds(n, 1 + j);
                    if (j == 0 || times.firstTokenSeconds(n, 1 + j, 0) == together) {
                        sink.piece(mass, together, length, own);
                        continue;
                    }
                    // its rank among the 1 + J, uniform: every rank up to POSITION_PIECES of them, else equal bins' midpoints
                    int pieces = Math.min(j + 1, POSITION_PIECES);
                    for (int i = 0; i < pieces; i++) {
                        int position = (int) ((i + 0.5) * (j + 1) / pieces);
                        sink.piece(mass / pieces, times.firstTokenSeconds(n, 1 + j, position), length, own);
                    }
                }
            }
        }
    }

    /** [boundary wait, own prefill, shared prefill], each a mean over all arrivals (queued ones: prefill at B - 1). */
    private double[] parts() {
        if (ttftParts == null) {
            double[] parts = new double[3];
            walkPieces((probability, start, width, own) -> {
                parts[0] += probability * width / 2;
                parts[1] += probability * own;
                parts[2] += probability * (start - own);
            });
            parts[1] += chain.probabilityOfWait() * times.prefillSeconds(maxBatch - 1, 1);
            ttftParts = parts;
        }
        return ttftParts;
    }

    /** Mean wait of an arrival for the iteration it lands in to end: half its (length-biased) length. */
    double meanIterationBoundaryWaitSeconds() {
        return parts()[0];
    }

    /** Mean length of an arrival's own prefill as if it were alone in it, at the batch it finds (B - 1 if it queued). */
    double meanPrefillIterationSeconds() {
        return parts()[1];
    }

    /** Mean time the prompts admitted with an arrival add to its prefill: those that arrived during the iteration it landed in. */
    double meanSharedPrefillSeconds() {
        return parts()[2];
    }

    /** Mean time to first token: admission wait, iteration boundary, own prefill and the prompts sharing it. */
    double meanSeconds() {
        double[] parts = parts();
        return chain.meanQueueingDelaySeconds() + parts[0] + parts[1] + parts[2];
    }

    /**
     * P(TTFT <= t): the pieces of {@link #walkPieces} summed on a fine grid, plus the arrivals that queue, whose
     * TTFT is the admission wait (exponential tail) and the prefill at B - 1.
     */
    double probabilityAtMost(double tSeconds) {
        Checks.nonNegative("tSeconds", tSeconds);
        double[] grid = grid();
        double x = tSeconds / ttftGridStep;
        double p;
        if (x >= grid.length - 1) {
            p = grid[grid.length - 1];
        } else {
            int i = (int) x;
            p = grid[i] + (x - i) * (grid[i + 1] - grid[i]);
        }
        double queued = tSeconds - times.prefillSeconds(maxBatch - 1, 1);
        return queued < 0 ? p : p + chain.probabilityOfWait() - chain.probabilityQueueingDelayExceeds(queued);
    }

    private double[] grid() {
        if (ttftGrid != null) {
            return ttftGrid;
        }
        double[] end = {0};
        walkPieces((probability, start, width, own) -> end[0] = Math.max(end[0], start + width));
        double h = end[0] * 1.0001 / TTFT_BINS;
        // grid[i] = P(TTFT <= i h); bin i covers ((i - 1) h, i h]. Whole bins inside a piece get its mass per bin
        // through a difference array, so each piece costs O(1) however wide it is.
        double[] mass = new double[TTFT_BINS + 3];
        double[] perBinChange = new double[TTFT_BINS + 3];
        walkPieces((probability, start, width, own) -> {
            double from = start / h;
            double to = (start + width) / h;
            int a = (int) from;
            int b = (int) to;
            if (a == b) {
                mass[a + 1] += probability;
                return;
            }
            double perBin = probability / (to - from);
            mass[a + 1] += (a + 1 - from) * perBin;
            mass[b + 1] += (to - b) * perBin;
            perBinChange[a + 2] += perBin;
            perBinChange[b + 1] -= perBin;
        });
        double[] grid = new double[TTFT_BINS + 3];
        double perBin = 0;
        for (int i = 1; i < grid.length; i++) {
            perBin += perBinChange[i];
            grid[i] = grid[i - 1] + mass[i] + perBin;
        }
        ttftGridStep = h;
        ttftGrid = grid;
        return grid;
    }
}
