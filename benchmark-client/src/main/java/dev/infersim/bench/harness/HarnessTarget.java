package dev.infersim.bench.harness;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.infersim.result.NonFiniteAsNull;

import java.util.Locale;

/**
 * What a harness was asked to do, as its result file records it: the request rate and arrival process, a cap on
 * requests in flight, and how many warm-up requests it was to leave out of its numbers. {@code check-harness} holds
 * what reached the server against this.
 *
 * @param rateReqPerS    requested arrival rate (req/s); NaN when unknown or unbounded
 * @param process        the requested arrival process
 * @param burstiness     gamma shape of the gaps (1 = Poisson), as vLLM's {@code --burstiness}; NaN unless gamma
 * @param maxConcurrency cap on requests in flight; 0 when none
 * @param warmupRequests warm-up requests the harness was to send first and not count; 0 when none or unknown
 */
@JsonPropertyOrder({"process", "request_rate_per_s"})
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record HarnessTarget(@JsonProperty("request_rate_per_s") @NonFiniteAsNull double rateReqPerS,
                            Process process, @NonFiniteAsNull double burstiness, int maxConcurrency,
                            int warmupRequests) {

    /** The arrival processes harnesses offer, named in JSON in lower case. */
    public enum Process {
        /** Exponential gaps at the rate (vLLM's default, GuideLLM's {@code poisson}). */
        @JsonProperty("poisson") POISSON,
        /** Gamma gaps of shape {@code burstiness} at the rate (vLLM's {@code --burstiness}). */
        @JsonProperty("gamma") GAMMA,
        /** Equal gaps at the rate (GuideLLM's {@code constant}). */
        @JsonProperty("constant") CONSTANT,
        /** Everything at once, or as fast as a concurrency cap lets requests through. */
        @JsonProperty("unbounded") UNBOUNDED,
        /** Not recorded in the result file. */
        @JsonProperty("unknown") UNKNOWN
    }

    public static final HarnessTarget UNKNOWN = new HarnessTarget(Double.NaN, Process.UNKNOWN, Double.NaN, 0, 0);

    /** A rate with vLLM's meaning of burstiness: 1 is Poisson, anything else gamma; an infinite rate is unbounded. */
    public static HarnessTarget vllm(double rate, double burstiness, int maxConcurrency, int warmups) {
        if (Double.isNaN(rate)) {
            return new HarnessTarget(Double.NaN, Process.UNKNOWN, Double.NaN, maxConcurrency, warmups);
        }
        if (Double.isInfinite(rate)) {
            return new HarnessTarget(Double.NaN, Process.UNBOUNDED, Double.NaN, maxConcurrency, warmups);
        }
        return burstiness == 1 ? new HarnessTarget(rate, Process.POISSON, 1, maxConcurrency, warmups)
                : new HarnessTarget(rate, Process.GAMMA, burstiness, maxConcurrency, warmups);
    }

    /** The same target at another rate ({@code check-harness --request-rate}); an unknown process becomes Poisson. */
    public HarnessTarget withRate(double rate) {
        Process p = process == Process.UNKNOWN || process == Process.UNBOUNDED ? Process.POISSON : process;
        return new HarnessTarget(rate, p, p == Process.POISSON ? 1 : burstiness, maxConcurrency, warmupRequests);
    }

    /** Coefficient of variation of the requested gaps: 1 for Poisson, 1/sqrt(shape) for gamma, 0 for constant. */
    public double gapCv() {
        return switch (process) {
            case POISSON -> 1;
            case GAMMA -> 1 / Math.sqrt(burstiness);
            case CONSTANT -> 0;
            default -> Double.NaN;
        };
    }

    /** Short words for the console: "Poisson at 10.00 req/s". */
    public String describe() {
        String rate = Double.isNaN(rateReqPerS) ? "" : String.format(Locale.ROOT, " at %.2f req/s", rateReqPerS);
        String cap = maxConcurrency > 0 ? ", at most " + maxConcurrency + " in flight" : "";
        return switch (process) {
            case POISSON -> "Poisson" + rate + cap;
            case GAMMA -> String.format(Locale.ROOT, "gamma (burstiness %.2f)", burstiness) + rate + cap;
            case CONSTANT -> "constant" + rate + cap;
            case UNBOUNDED -> "all at once" + cap;
            case UNKNOWN -> "unknown" + cap;
        };
    }
}
