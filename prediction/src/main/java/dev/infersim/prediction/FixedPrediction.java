package dev.infersim.prediction;

import dev.infersim.common.ConfigException;
import dev.infersim.engine.FixedTiming;
import dev.infersim.engine.TruncatedNormal;
import dev.infersim.queueing.AllenCunneenGGc;
import dev.infersim.queueing.UnstableQueueException;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;

import java.util.Map;

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

    /** The prediction's fields, in the result schema's keys, into {@code f}. */
    public void put(Map<String, Object> f, double rate, double arrivalScv, double meanPromptTokens) {
        f.put("infersim_timing", "fixed");
        try {
            AllenCunneenGGc q = at(rate, arrivalScv);
            double waitS = q.meanWaitSeconds();
            double pWait = q.probabilityOfWait();
            f.put("request_throughput", rate);
            f.put("output_throughput", rate * meanOutputTokens);
            f.put("total_token_throughput", rate * (meanOutputTokens + meanPromptTokens));
            f.put("mean_ttft_ms", 1e3 * (waitS + meanTtftS));
            f.put("mean_tpot_ms", 1e3 * meanItlS);
            f.put("mean_itl_ms", 1e3 * meanItlS);
            f.put("mean_e2el_ms", 1e3 * q.meanSojournSeconds());
            f.put("infersim_saturated", false);
            f.put("infersim_utilization", q.utilization());
            f.put("infersim_probability_of_wait", pWait);
            f.put("infersim_mean_queue_time_ms", 1e3 * waitS);
            f.put("infersim_p99_queue_time_ms", 1e3 * waitPercentileSeconds(q, 0.99));
            f.put("infersim_mean_requests_in_system", q.metrics().meanNumberInSystem());
        } catch (UnstableQueueException e) {
            f.put("infersim_saturated", true);
            f.put("infersim_saturation_reason", String.format(java.util.Locale.ROOT,
                    "request rate %.3f req/s is at or above the saturation rate %.3f req/s (%d slots / %.1f ms per request)",
                    rate, saturationRatePerS(), servers, meanServiceS * 1e3));
        }
        f.put("infersim_saturation_rate_per_s", saturationRatePerS());
        f.put("infersim_saturation_output_tokens_per_s", saturationRatePerS() * meanOutputTokens);
        f.put("infersim_batch_limit", servers);
        f.put("infersim_mean_prompt_tokens", meanPromptTokens);
        f.put("infersim_mean_output_tokens", meanOutputTokens);
        f.put("infersim_service_time_mean_ms", meanServiceS * 1e3);
        f.put("infersim_service_time_scv", serviceScv);
        f.put("infersim_time_to_first_token_ms", timing.timeToFirstTokenMs());
        f.put("infersim_inter_token_latency_ms", timing.interTokenLatencyMs());
    }
}
