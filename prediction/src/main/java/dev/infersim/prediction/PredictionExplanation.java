package dev.infersim.prediction;

import dev.infersim.engine.Deployment;
import dev.infersim.queueing.BatchingServer;
import dev.infersim.queueing.ContinuousBatchingModel;
import dev.infersim.queueing.DiscreteDistribution;
import dev.infersim.queueing.IterationTimes;
import dev.infersim.queueing.LatencyModel;
import dev.infersim.queueing.SequentialServiceModel;
import dev.infersim.queueing.UnstableQueueException;

import java.io.PrintStream;
import java.util.Locale;

/** {@code predict --explain}: how the numbers were derived, in plain words and the numbers themselves. */
public final class PredictionExplanation {
    private final Deployment d;
    private final EnginePrediction p;
    private final double rate;
    private final double arrivalScv;
    private PrintStream out;

    public PredictionExplanation(Deployment d, EnginePrediction p, double rate, double arrivalScv) {
        this.d = d;
        this.p = p;
        this.rate = rate;
        this.arrivalScv = arrivalScv;
    }

    /** The verdict above capacity, in the words predict and --explain print. */
    public static String unstable(double rate, double saturation) {
        return String.format(Locale.ROOT, "unstable: queue grows without bound (request rate %.3f req/s is at or above "
                + "the saturation rate %.3f req/s, by %.1f%%)", rate, saturation, 100 * (rate / saturation - 1));
    }

    public void print(PrintStream out) {
        this.out = out;
        WorkloadMoments m = p.moments();
        line("=============== How this prediction was derived ===============");
        line("Deployment: %s on %s x%d; --max-num-seqs %d, --max-num-batched-tokens %d, chunked prefill %s, prefix caching %s.",
                d.model().name(), d.gpu().name(), d.tensorParallelSize(), d.maxNumSeqs(), d.maxNumBatchedTokens(),
                d.enableChunkedPrefill() ? "on" : "off", d.enablePrefixCaching() ? "on" : "off");
        DiscreteDistribution lengths = p.outputTokens();
        line("Workload (%,d requests measured): mean prompt %.1f tokens, mean output E[L] = %.1f tokens (squared coefficient "
                        + "of variation %.3f); a decoding sequence holds %.0f tokens of context on average (long outputs weigh more).",
                m.samples(), m.meanPromptTokens(), lengths.mean(), lengths.squaredCoefficientOfVariation(), p.decodeContextTokens());
        line("Arrivals: %.3f req/s, %s.", rate, arrivalScv == 1 ? "Poisson"
                : String.format(Locale.ROOT, "gamma gaps with squared coefficient of variation ca^2 = 1/burstiness = %.3f", arrivalScv));
        EnginePrediction.Service s = serviceOrSaturation();
        if (p.cachesPrefixes()) {
            line("Prefix caching: %d shared prefixes, %,d tokens in all; %.1f%% of requests come after their prefix was first "
                            + "sent. Beside the running sequences the cache keeps %.1f%% of the prefixes, so a request reads %.1f "
                            + "prompt tokens from the cache and computes %.1f.",
                    m.prefixGroups(), m.distinctPrefixTokens(), 100 * warmShare(m), 100 * s.prefixRetention(),
                    s.cachedTokensPerRequest(), m.meanPromptTokens() - s.cachedTokensPerRequest());
        } else if (m.distinctPrefixTokens() > 0) {
            line("Prefix caching is off: every prompt is computed in full, its shared prefix included.");
        }
        line("KV cache: %,d tokens (%,d blocks of %d). A running sequence holds %.1f tokens of its own on average (its "
                        + "context plus half a block). At the limit the engine has admitted prompts until the next one did not "
                        + "fit, so %.0f tokens stay free on average (half a prompt, in whole blocks): the cache holds N = %.1f "
                        + "sequences decoding; min(--max-num-seqs, ceil(N)) = %d.", p.kv().tokens(),
                p.kv().numBlocks(), p.kv().blockSize(), s.footprintTokens(), s.leftoverTokens(), s.sustainedSeqs(),
                Math.min(d.maxNumSeqs(), (int) Math.ceil(s.sustainedSeqs())));
        if (s.peakBound()) {
            line("Requests complete fastest with n = %d running: past it an iteration's prefill and attention grow faster "
                            + "than the batch (beside n decodes only --max-num-batched-tokens %d - n tokens are left for prompts), "
                            + "so more running requests complete no faster. Batch limit B = %d; the requests beyond it wait.",
                    s.batchLimit(), d.maxNumBatchedTokens(), s.batchLimit());
        } else {
            line("Batch limit B = %d.", s.batchLimit());
        }
        if (s.kvBound()) {
            line("The chain's state space is truncated at B = %d by the KV cache, not by --max-num-seqs %d: above it requests "
                            + "wait for memory, which a finishing request frees, so admissions come at departures (N / E[L] an "
                            + "iteration). The engine admits a prompt once its blocks are free; the running sequences then grow "
                            + "about E[L] tokens until the next departure against a leftover below one prompt, and when they "
                            + "outgrow it the newest request is preempted: %.2f times per request, recomputing %.0f tokens per "
                            + "request (the overflow, E[L] by memorylessness, plus half a prompt the victim frees beyond it) with "
                            + "the next departure's prompt. The mean iteration at B carries that prefill and is stretched by B / N.",
                    s.batchLimit(), d.maxNumSeqs(), s.recomputeShare(), s.recomputeTokens());
        }
        if (p.oneAtATime()) {
            sequential(s);
        } else {
            batching(s.batching());
        }
        line("===============================================================");
    }

    private static double warmShare(WorkloadMoments m) {
        int warm = 0;
        for (int i = 0; i < m.samples(); i++) {
            warm += m.warmPrefixTokens(i) > 0 ? 1 : 0;
        }
        return (double) warm / m.samples();
    }

    private EnginePrediction.Service serviceOrSaturation() {
        try {
            return p.serviceAt(rate, arrivalScv);
        } catch (UnstableQueueException e) {
            return p.serviceAt(0.999 * p.saturationRatePerS(), arrivalScv);
        }
    }

    private void sequential(EnginePrediction.Service s) {
        DiscreteDistribution service = s.sequential()[0];
        double mean = service.mean();
        double scv = service.squaredCoefficientOfVariation();
        line("Service: --max-num-seqs 1 runs one request at a time, so the engine is a single-server FCFS queue. A request's "
                + "service S is its prefill (%.3f ms on average) plus one decode step per further token at its growing context, "
                + "each step priced by the cost model: E[S] = %.3f ms, squared coefficient of variation cs^2 = %.4f.",
                1e3 * s.sequential()[1].mean(), 1e3 * mean, scv);
        double saturation = 1 / mean;
        line("Capacity: one request per E[S], %.3f req/s; utilisation rho = lambda E[S] = %.3f.", saturation, rate * mean);
        if (rate >= saturation) {
            line("Verdict: %s.", unstable(rate, saturation));
            return;
        }
        SequentialServiceModel q = (SequentialServiceModel) p.at(rate, arrivalScv);
        String form = arrivalScv != 1 ? "GI/M/1 with the gamma gaps, exact: sigma = A*(mu(1-sigma)) for the gaps' transform "
                + "A*(s) = (1 + s burstiness/lambda)^(-burstiness), mu = 1/E[S]; then scaled to the service's variability by "
                + "Kingman's ratio, E[Wq] = sigma/(mu(1-sigma)) (ca^2+cs^2)/(ca^2+1) (exact for M/G/1 and GI/M/1 and in heavy "
                + "traffic; the shape of the gaps matters, not only their variance)"
                : scv < 1e-6 ? "M/D/1 (constant service): Pollaczek-Khinchine, E[Wq] = rho E[S] / (2(1-rho))"
                : "M/G/1: Pollaczek-Khinchine, E[Wq] = lambda E[S^2] / (2(1-rho))";
        line("Formula: %s = %.3f ms.", form, 1e3 * q.meanQueueingDelaySeconds());
        line("Tail: P(Wq > t) = C e^{-theta t} with theta = %.3f /s, the Cramer-Lundberg root of E[e^{theta S}] E[e^{-theta A}] = 1, "
                        + "and C = %.3f so the mean is kept; TTFT = Wq + prefill and E2EL = Wq + S, the wait independent of the "
                        + "request's own service.", q.waitDecayRatePerS(), q.probabilityOfWait());
        summary(q);
    }

    private void batching(BatchingServer server) {
        IterationTimes t = server.iterationTimes();
        int b = server.maxNumSeqs();
        line("Service (from the cost model, no fitted line): an iteration of 1 decoding sequence takes %.3f ms (what "
                        + "`profile` reports at this context), of %d sequences %.3f ms. A mean prompt's prefill takes %.3f ms alone "
                        + "and %.3f ms beside %d decodes; a finished request is replaced by an admission, n/E[L] prompts per "
                        + "iteration, so the mean iteration at the batch limit is %.3f ms.",
                1e3 * t.decodeSeconds(1), b, 1e3 * t.decodeSeconds(b), 1e3 * t.prefillSeconds(0, 1), 1e3 * t.prefillSeconds(b, 1), b,
                1e3 * t.meanSeconds(b));
        double saturation = p.saturationRatePerS();
        line("Capacity: with n running, requests finish at n/(E[L] tau(n)); at the limit B = %d that is lambda_max = "
                + "B/(E[L] tau(B)) = %.3f req/s (%.0f output tok/s).", b, saturation, saturation * server.meanOutputTokens());
        if (rate >= saturation) {
            line("Verdict: %s.", unstable(rate, saturation));
            return;
        }
        ContinuousBatchingModel chain = (ContinuousBatchingModel) p.at(rate, arrivalScv);
        line("Formula: continuous batching as a birth-death chain (state-dependent processor sharing, insensitive to the "
                        + "length distribution below B): utilisation lambda/lambda_max = %.3f, mean batch %.2f, P(an arrival "
                        + "finds the batch full) = %.4f.", chain.utilization(), chain.meanBatchSize(), chain.probabilityOfWait());
        line("Batch spread: the engine prefills the prompts that arrived during an iteration all at once in the next, "
                        + "slowing every running request together, where the chain spreads that work over the batch; a "
                        + "linear-noise approximation of both gives the engine's batch %.2f times the chain's variance, so the "
                        + "chain's weights are raised to kappa = %.3f.", 1 / chain.dispersionExponent(), chain.dispersionExponent());
        double lengthScv = server.outputTokens().squaredCoefficientOfVariation();
        line("Admission wait: above B requests leave at lambda_max, so the queue there is GI/M/1: its tail ratio is sigma = "
                + "%.4f (the root of sigma = A*(lambda_max (1 - sigma)) for the arrivals' gaps; lambda/lambda_max for Poisson "
                + "arrivals), an arrival finds the batch full sigma/rho = %.3f times as often as a random moment does, and "
                + "waits exponentially at rate lambda_max (1 - sigma), its time scaled by Kingman's (ca^2 + cs^2)/(ca^2 + 1) = "
                + "%.3f (ca^2 = %.3f of the arrivals' gaps, cs^2 = %.3f of the output lengths, as a request's service at B is "
                + "L iterations).", chain.queueRatio(), chain.queueRatio() / chain.utilization(),
                (arrivalScv + lengthScv) / (arrivalScv + 1), arrivalScv, lengthScv);
        if (arrivalScv != 1) {
            line("Bursty arrivals: the prompts "
                    + "arriving during an iteration are counted for gamma gaps (renewal counts, not Poisson): %s.",
                    arrivalScv > 1 ? "they come in clumps that share long prefills, which lengthen the iterations and so enlarge the batch, and "
                            + "an arrival tends to land in the long iteration that prefills the clump before its own"
                            : "they seldom share an iteration, and an arrival tends to land in a short one");
        }
        line("TTFT = admission wait %.3f ms + wait for the running iteration to end %.3f ms + own prefill iteration %.3f ms "
                        + "+ prompts arriving in the same iteration %.3f ms = %.3f ms.", 1e3 * chain.meanQueueingDelaySeconds(),
                1e3 * chain.meanIterationBoundaryWaitSeconds(), 1e3 * chain.meanPrefillIterationSeconds(),
                1e3 * chain.meanSharedPrefillSeconds(), 1e3 * chain.meanTtftSeconds());
        line("TPOT: a decoding request gets a token each iteration, %.3f ms apart on average (ITL, per token). Its first gaps "
                        + "are longer: the iteration after its own prefill carries the prompts that arrived during that prefill, "
                        + "and the runs of long iterations settle after a few. TPOT counts each request once, (its decode "
                        + "time)/(L - 1), so short requests weigh those gaps more: mean TPOT %.3f ms.",
                1e3 * chain.meanItlSeconds(), 1e3 * chain.meanTpotSeconds());
        summary(chain);
    }

    private void summary(LatencyModel q) {
        line("Result: mean TTFT %.3f ms (p99 %.3f), mean TPOT %.3f ms (p99 %.3f), mean E2EL %.3f ms (p99 %.3f): E2EL is "
                        + "TTFT plus L - 1 tokens, over the measured distribution of L.", 1e3 * q.meanTtftSeconds(),
                1e3 * q.ttftPercentileSeconds(0.99), 1e3 * q.meanTpotSeconds(), 1e3 * q.tpotPercentileSeconds(0.99),
                1e3 * q.meanE2elSeconds(), 1e3 * q.e2elPercentileSeconds(0.99));
    }

    private void line(String format, Object... args) {
        out.println(String.format(Locale.ROOT, format, args));
    }
}
