package dev.infersim.server.engine;

import dev.infersim.common.NanoClock;

/**
 * Maps the engine's model time to the wall clock. Model time is what the modelled GPU would take, in nanoseconds since
 * the server started; at time scale k the server runs k times faster, so {@code wall = start + model / k}. Every
 * engine timestamp (arrival, step ends, token times) is model time; the {@code infersim} ground truth reports both.
 */
public final class ModelClock {
    private final NanoClock wall;
    private final long startWallNanos;
    private final double timeScale;
    private final double startEpochMillis;

    public ModelClock(double timeScale) {
        this(timeScale, NanoClock.SYSTEM);
    }

    public ModelClock(double timeScale, NanoClock wall) {
        this.wall = wall;
        this.timeScale = timeScale;
        this.startWallNanos = wall.nanoTime();
        // to the microsecond (Linux), not currentTimeMillis's millisecond: the truth's epoch instants are compared with
        // packet captures and other hosts' clocks, and a whole millisecond of rounding would shift every one of them
        java.time.Instant now = java.time.Instant.now();
        this.startEpochMillis = now.getEpochSecond() * 1e3 + now.getNano() / 1e6;
    }

    /** Model nanoseconds now. */
    public long modelNow() {
        return toModel(wall.nanoTime());
    }

    /** Model time of a wall clock reading. */
    public long toModel(long wallNanos) {
        return (long) ((wallNanos - startWallNanos) * timeScale);
    }

    /** The wall clock reading at which a model instant happens. */
    public long toWall(long modelNanos) {
        return startWallNanos + (long) (modelNanos / timeScale);
    }

    /** Unix epoch milliseconds (fractional) of a model instant, for clients on other hosts. */
    public double toEpochMillis(long modelNanos) {
        return startEpochMillis + modelNanos / timeScale / 1e6;
    }

    public double timeScale() {
        return timeScale;
    }

    /** The wall clock this model clock runs on. */
    public NanoClock wall() {
        return wall;
    }

    /** Returns once model time has passed {@code modelNanos} (not merely reached it: the wall clock rounds). */
    void awaitPast(long modelNanos) {
        while (modelNow() <= modelNanos) {
            wall.sleepUntil(Math.max(toWall(modelNanos), wall.nanoTime() + 1), 0);
        }
    }
}
