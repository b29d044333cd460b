package dev.infersim.queueing;

/**
 * The per-request latencies a serving model predicts at one arrival rate, with vLLM's metric names: time to first
 * token (TTFT), time per output token after the first (TPOT, one value per request), inter-token latency (ITL, one
 * value per token gap) and end-to-end latency (E2EL). Percentiles take p in (0, 1).
 */
public interface LatencyModel {

    double arrivalRatePerS();

    /** The load relative to the server's capacity, in [0, 1). */
    double utilization();

    /** The probability that an arrival waits for admission. */
    double probabilityOfWait();

    double meanQueueingDelaySeconds();

    double queueingDelayPercentileSeconds(double p);

    double meanTtftSeconds();

    double ttftPercentileSeconds(double p);

    double meanTpotSeconds();

    double tpotPercentileSeconds(double p);

    double meanItlSeconds();

    double itlPercentileSeconds(double p);

    double meanE2elSeconds();

    double e2elPercentileSeconds(double p);

    /** The mean number of requests running together. */
    double meanBatchSize();

    /** The mean number of requests waiting for admission. */
    double meanNumberWaiting();

    /** The mean number of requests in the system, waiting or running. */
    double meanNumberInSystem();
}
