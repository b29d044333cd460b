package dev.infersim.workload.arrival;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A request rate that varies over time around a base rate: an optional diurnal swing and optional step bursts.
 * <ul>
 *   <li>Diurnal: r(t) = base (1 + amplitude cos(2 pi (t - peak) / period)), peaking at {@code peak_s} (and every period
 *       after), lowest half a period away; amplitude in [0, 1] keeps the rate non-negative.</li>
 *   <li>A burst steps the rate to its own {@code request_rate} over [start, start + duration), whatever the base or
 *       the diurnal swing says there; bursts may not overlap.</li>
 * </ul>
 * {@link #expectedArrivals(double)} is the integral of r, which {@link ScheduledArrivals} inverts.
 *
 * @param diurnal the daily swing, or null
 * @param bursts  the bursts, possibly empty
 */
public record RateSchedule(Diurnal diurnal, List<Burst> bursts) {

    /**
     * @param amplitude relative swing in [0, 1]
     * @param periodS   period in seconds (86400 for a day)
     * @param peakS     time of the first peak in seconds from the start of the run
     */
    public record Diurnal(@JsonProperty("amplitude") double amplitude, @JsonProperty("period_s") double periodS,
                          @JsonProperty("peak_s") double peakS) {
        @JsonCreator
        static Diurnal of(@JsonProperty("amplitude") Double amplitude, @JsonProperty("period_s") Double periodS,
                          @JsonProperty("peak_s") Double peakS) {
            if (amplitude == null || periodS == null) {
                throw new IllegalArgumentException("diurnal needs amplitude and period_s (peak_s defaults to 0)");
            }
            return new Diurnal(amplitude, periodS, peakS == null ? 0 : peakS);
        }

        public Diurnal {
            if (!(amplitude >= 0 && amplitude <= 1)) {
                throw new IllegalArgumentException("diurnal amplitude must be in [0, 1], got " + amplitude);
            }
            if (!(periodS > 0) || Double.isInfinite(periodS)) {
                throw new IllegalArgumentException("diurnal period_s must be > 0, got " + periodS);
            }
            if (!Double.isFinite(peakS)) {
                throw new IllegalArgumentException("diurnal peak_s must be a number of seconds, got " + peakS);
            }
        }
    }

    /**
     * @param startS      burst start, seconds from the start of the run, >= 0
     * @param durationS   burst length in seconds, > 0
     * @param requestRate the rate during the burst, req/s, >= 0
     */
    public record Burst(@JsonProperty("start_s") double startS, @JsonProperty("duration_s") double durationS,
                        @JsonProperty("request_rate") double requestRate) {
        @JsonCreator
        static Burst of(@JsonProperty("start_s") Double startS, @JsonProperty("duration_s") Double durationS,
                        @JsonProperty("request_rate") Double requestRate) {
            if (startS == null || durationS == null || requestRate == null) {
                throw new IllegalArgumentException("a burst needs start_s, duration_s and request_rate");
            }
            return new Burst(startS, durationS, requestRate);
        }

        public Burst {
            if (!(startS >= 0) || Double.isInfinite(startS)) {
                throw new IllegalArgumentException("burst start_s must be >= 0, got " + startS);
            }
            if (!(durationS > 0) || Double.isInfinite(durationS)) {
                throw new IllegalArgumentException("burst duration_s must be > 0, got " + durationS);
            }
            if (!(requestRate >= 0) || Double.isInfinite(requestRate)) {
                throw new IllegalArgumentException("burst request_rate must be >= 0 req/s, got " + requestRate);
            }
        }

        double endS() {
            return startS + durationS;
        }
    }

    public RateSchedule {
        List<Burst> sorted = new ArrayList<>(bursts == null ? List.of() : bursts);
        sorted.sort(Comparator.comparingDouble(Burst::startS));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).startS() < sorted.get(i - 1).endS()) {
                throw new IllegalArgumentException("bursts overlap: the one at " + sorted.get(i - 1).startS()
                        + " s lasts past the one at " + sorted.get(i).startS() + " s");
            }
        }
        if (diurnal == null && sorted.isEmpty()) {
            throw new IllegalArgumentException("a rate schedule needs a diurnal swing or at least one burst");
        }
        bursts = List.copyOf(sorted);
    }

    /** The rate at {@code t} seconds for base rate {@code base} req/s. */
    public double rateAt(double base, double t) {
        for (Burst b : bursts) {
            if (t >= b.startS() && t < b.endS()) {
                return b.requestRate();
            }
        }
        return baseRateAt(base, t);
    }

    private double baseRateAt(double base, double t) {
        return diurnal == null ? base
                : base * (1 + diurnal.amplitude() * Math.cos(2 * Math.PI * (t - diurnal.peakS()) / diurnal.periodS()));
    }

    /** Expected arrivals in [0, t] seconds: the integral of {@link #rateAt} (closed form per piece). */
    public double expectedArrivals(double base, double t) {
        double total = baseIntegral(base, t);
        for (Burst b : bursts) {
            if (t <= b.startS()) {
                break;
            }
            double end = Math.min(t, b.endS());
            total += b.requestRate() * (end - b.startS()) - (baseIntegral(base, end) - baseIntegral(base, b.startS()));
        }
        return total;
    }

    private double baseIntegral(double base, double t) {
        if (diurnal == null) {
            return base * t;
        }
        double w = 2 * Math.PI / diurnal.periodS();
        return base * (t + diurnal.amplitude() / w * (Math.sin(w * (t - diurnal.peakS())) + Math.sin(w * diurnal.peakS())));
    }
}
