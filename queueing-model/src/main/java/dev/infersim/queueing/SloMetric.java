package dev.infersim.queueing;

/** The constraint that limits the request rate a replica can accept under a service-level objective. */
public enum SloMetric {
    /** The p-quantile of the admission queueing delay. */
    QUEUEING_DELAY_PERCENTILE,
    /** The mean time per output token. */
    MEAN_TPOT,
    /** The mean time to first token. */
    MEAN_TTFT,
    /** No latency bound binds: the rate is limited only by the saturation rate. */
    SATURATION
}
