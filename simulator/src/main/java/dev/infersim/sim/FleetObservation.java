package dev.infersim.sim;

/**
 * What an autoscaler sees of a fleet at one sync.
 *
 * @param currentReplicas   the replica count the fleet is set to now (a Deployment's {@code spec.replicas}): those
 *                          serving plus those still starting, not those draining away
 * @param metricValues      the metric of every replica that reported one (a ready replica that has been scraped)
 * @param withoutMetrics    replicas counted in {@code currentReplicas} that reported none: starting, or ready
 *                          since the last scrape
 */
public record FleetObservation(int currentReplicas, double[] metricValues, int withoutMetrics) {

    public FleetObservation {
        if (currentReplicas < 0 || withoutMetrics < 0) {
            throw new IllegalArgumentException("replica counts must be >= 0, got " + currentReplicas + ", "
                    + withoutMetrics);
        }
    }
}
