package dev.infersim.prediction;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.TruncatedNormal;
import dev.infersim.queueing.AllenCunneenGGc;
import dev.infersim.queueing.UnstableQueueException;
import dev.infersim.result.MetricSummaries;
import dev.infersim.result.MetricSummary;
import dev.infersim.result.PredictionResult;
import dev.infersim.result.RunHeader;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;

import java.util.List;

/**
 * {@code predict --timing fixed}: each request holds one of c = max-num-seqs slots for its service time
 * S = TTFT + (L - 1) ITL, whatever else runs, so the deployment is an M/G/c queue. E[S] and Var[S] are averaged over the
 * workload's requests (TTFT and each ITL are truncated normals, independent of each other and of L); the mean wait is
 * Allen and Cunneen's, E[Wq] = C(c, a) / (c mu - lambda) (ca^2 + cs^2) / 2, exact for M/M/c, with ca^2 = 1 / burstiness
 * for gamma inter-arrival times (1 for Poisson, where the queue is M/G/c). The p99 wait reads the
 * wait as waiting with probability C and then exponential with that mean (exact for M/M/c, an approximation otherwise).
 * Prompts are assumed not found in the prefix cache.
 */
public final class FixedPrediction {
    private final FixedTiming timing;
    private final int servers;
    private final double meanServiceS;
    private final double serviceScv;
    private final double meanTtftS;
    private final double meanItlS;
    private final double meanOutputTokens;

    public FixedPrediction(FixedTiming timing, int maxNumSeqs, Workload workload, long limit) {
        ConfigException.check(timing.timeFactorUnderLoad() == 1, "--time-factor-under-load: predict's M/G/c queue has "
                + "latencies independent of load; simulate --timing fixed models the factor");
        this.timing = timing;
        this.servers = maxNumSeqs;
        double itlMs = TruncatedNormal.mean(timing.interTokenLatencyMs(), timing.interTokenLatencyStdDevMs());
        double itlVar = TruncatedNormal.variance(timing.interTokenLatencyMs(), timing.interTokenLatencyStdDevMs());
        double sum = 0;
        double sumSquares = 0;
        double jitterVar = 0;
        double ttft = 0;
        double output = 0;
        long n = 0;
        for (WorkloadRequest r : workload) {
            double mu = timing.firstTokenMs(r.promptTokens(), 1);
            double sigma = timing.timeToFirstTokenStdDevMs();
            double firstMs = TruncatedNormal.mean(mu, sigma);
            double s = firstMs + (r.outputTokens() - 1) * itlMs;
            sum += s;
            sumSquares += s * s;
            jitterVar += TruncatedNormal.variance(mu, sigma) + (r.outputTokens() - 1) * itlVar;
            ttft += firstMs;
            output += r.outputTokens();
            if (++n == limit) {
                break;
            }
        }
        double mean = sum / n;
        ConfigException.check(mean > 0, "--timing fixed: every request takes no time (TTFT and ITL are 0), so there is no queue to predict");
        double variance = sumSquares / n - mean * mean + jitterVar / n;
        this.meanServiceS = mean / 1e3;
        this.serviceScv = Math.max(0, variance) / (mean * mean);
        this.meanTtftS = ttft / n / 1e3;
        this.meanItlS = itlMs / 1e3;
        this.meanOutputTokens = output / n;
    }

    /** Requests per second the slots complete when always full: c / E[S]. */
    public double saturationRatePerS() {
        return servers / meanServiceS;
    }

    /** The queue at {@code rate}; throws {@link UnstableQueueException} at or above saturation. */
    public AllenCunneenGGc at(double rate, double arrivalScv) {
        return new AllenCunneenGGc(rate, 1 / meanServiceS, servers, arrivalScv, serviceScv);
    }

    /**
     * The wait's {@code p} quantile, reading the wait as zero with probability 1 - C and else exponential with mean
     * E[Wq] / C (exact for M/M/c, an approximation otherwise).
     */
    public static double waitPercentileSeconds(AllenCunneenGGc q, double p) {
        double pWait = q.probabilityOfWait();
        return pWait <= 1 - p ? 0 : Math.log(pWait / (1 - p)) * q.meanWaitSeconds() / pWait;
    }

    public double meanTtftSeconds() {
        return meanTtftS;
    }

    public double meanItlSeconds() {
        return meanItlS;
    }

    public double meanOutputTokens() {
        return meanOutputTokens;
    }

    int servers() {
        return servers;
    }

    double meanServiceSeconds() {
        return meanServiceS;
    }

    /**
     * The prediction at {@code rate} in the result schema: vLLM's throughput keys and mean latencies below saturation,
     * the queue's own keys either way.
     */
    public PredictionResult<FixedPredictionKeys> result(RunHeader run, double rate, double arrivalScv,
                                                        double meanPromptTokens) {
        PredictionResult.Throughput throughput = null;
        MetricSummaries latencies = MetricSummaries.NONE;
        String reason = null;
        Double utilization = null;
        Double pWait = null;
        Double waitMs = null;
        Double p99WaitMs = null;
        Double inSystem = null;
        try {
            AllenCunneenGGc q = at(rate, arrivalScv);
            double waitS = q.meanWaitSeconds();
            throughput = PredictionResult.Throughput.of(rate, meanPromptTokens, meanOutputTokens);
            latencies = new MetricSummaries(List.of(mean("ttft", 1e3 * (waitS + meanTtftS)), mean("tpot", 1e3 * meanItlS),
                    mean("itl", 1e3 * meanItlS), mean("e2el", 1e3 * q.meanSojournSeconds())));
            utilization = q.utilization();
            pWait = q.probabilityOfWait();
            waitMs = 1e3 * waitS;
            p99WaitMs = 1e3 * waitPercentileSeconds(q, 0.99);
            inSystem = q.metrics().meanNumberInSystem();
        } catch (UnstableQueueException e) {
            reason = String.format(java.util.Locale.ROOT,
                    "request rate %.3f req/s is at or above the saturation rate %.3f req/s (%d slots / %.1f ms per request)",
                    rate, saturationRatePerS(), servers, meanServiceS * 1e3);
        }
        FixedPredictionKeys keys = new FixedPredictionKeys(reason != null, reason, utilization, pWait, waitMs, p99WaitMs,
                inSystem, saturationRatePerS(), saturationRatePerS() * meanOutputTokens, servers, meanPromptTokens,
                meanOutputTokens, meanServiceS * 1e3, serviceScv, timing.timeToFirstTokenMs(),
                timing.interTokenLatencyMs());
        return new PredictionResult<>(run, "fixed", throughput, latencies, keys);
    }

    private static MetricSummary mean(String metric, double ms) {
        return new MetricSummary(metric, ms, null, null, List.of());
    }
}
